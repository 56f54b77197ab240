/**
 * The admin API of openapi/intents.yaml (tag `Admin`): API keys and their webhooks, behind the
 * operator's bearer token (`ADMIN_TOKEN`). Secrets appear only in the answers of create and rotate,
 * never in logs.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { ConfigError, type IntentsApi, type Logger, PontisError, silentLogger } from '@pontis/core'
import { createBearerCheck, type OperationHandler, type RequestOf, type ResponseOf } from '@pontis/http'
import { DEFAULT_RATE_LIMIT_POLICY, type RateLimitPolicy } from '../ratelimit/policy.js'
import { ApiKeyError, type ApiKeyRecord, type ApiKeyStore, type WebhookConfig } from './api-keys.js'

type Handler<Data, Responses> = OperationHandler<RequestOf<Data>, ResponseOf<Responses>>

/** A type, not an interface, so it fits `createApiApp`'s handler map (interfaces have no index signature). */
export type AdminHandlers = {
  createApiKey: Handler<IntentsApi.CreateApiKeyData, IntentsApi.CreateApiKeyResponses>
  listApiKeys: Handler<IntentsApi.ListApiKeysData, IntentsApi.ListApiKeysResponses>
  getApiKey: Handler<IntentsApi.GetApiKeyData, IntentsApi.GetApiKeyResponses>
  rotateApiKey: Handler<IntentsApi.RotateApiKeyData, IntentsApi.RotateApiKeyResponses>
  revokeApiKey: Handler<IntentsApi.RevokeApiKeyData, IntentsApi.RevokeApiKeyResponses>
  setApiKeyWebhook: Handler<IntentsApi.SetApiKeyWebhookData, IntentsApi.SetApiKeyWebhookResponses>
  deleteApiKeyWebhook: Handler<IntentsApi.DeleteApiKeyWebhookData, IntentsApi.DeleteApiKeyWebhookResponses>
  getRateLimitPolicy: Handler<IntentsApi.GetRateLimitPolicyData, IntentsApi.GetRateLimitPolicyResponses>
}

export interface AdminHandlerOptions {
  readonly keys: ApiKeyStore
  /** The bearer token of the admin API; unset or empty disables the API (403). */
  readonly adminToken: string | undefined
  /** Receives one line per change (key id, tier; never a secret). */
  readonly logger?: Logger
  /** The limits the gate applies, for `getRateLimitPolicy`; null when limiting is off. Default: the built-in policy. */
  readonly rateLimitPolicy?: RateLimitPolicy | null
}

/** Shortest `ADMIN_TOKEN` accepted: it guards every key, so it must not be guessable. */
export const MIN_ADMIN_TOKEN_LENGTH = 24

/**
 * `ADMIN_TOKEN` of an environment: undefined when unset or empty (admin API disabled); a start-up
 * error when shorter than {@link MIN_ADMIN_TOKEN_LENGTH} characters.
 */
export function resolveAdminToken(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const token = env.ADMIN_TOKEN
  if (token === undefined || token === '') return undefined
  if (token.length < MIN_ADMIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new ConfigError(
      `ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters without spaces (for example: openssl rand -base64 32)`,
    )
  }
  return token
}

/** Checks `Authorization: Bearer <token>` in constant time (see `createBearerCheck`). */
export function adminAuthorizer(adminToken: string | undefined): (headers: IncomingHttpHeaders) => void {
  const check = adminToken === undefined || adminToken === '' ? undefined : createBearerCheck(adminToken)
  return (headers) => {
    if (check === undefined) throw new PontisError('FORBIDDEN', 'admin API disabled: set ADMIN_TOKEN')
    const verdict = check(headers.authorization)
    if (verdict === 'missing') {
      throw new PontisError('UNAUTHORIZED', 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>')
    }
    if (verdict === 'wrong') throw new PontisError('UNAUTHORIZED', 'The admin token is wrong')
  }
}

/** Turns the store's refusals into answers of the document. */
export function toPontisError(error: unknown, keyId: string | undefined): unknown {
  if (!(error instanceof ApiKeyError)) return error
  const data = keyId === undefined ? undefined : { keyId }
  switch (error.reason) {
    case 'not_found':
      return notFound(keyId ?? '')
    case 'revoked':
      return new PontisError('INVALID_REQUEST', `API key ${keyId} is revoked; create a new key instead`, data)
    case 'webhook_target': {
      const target = { ...data, ...error.target }
      // The resolver could not answer now: the same URL may pass in a moment.
      if (error.target?.reason === 'dns-failure')
        return new PontisError('SERVICE_UNAVAILABLE', `${error.message}; try again shortly`, target)
      return new PontisError('INVALID_WEBHOOK_URL', error.message, target)
    }
    default:
      return new PontisError('INVALID_REQUEST', error.message, data)
  }
}

function notFound(keyId: string): PontisError {
  return new PontisError('ROUTE_NOT_FOUND', `No API key ${keyId}. GET /admin/keys lists them.`, { keyId })
}

/**
 * Applies a `setApiKeyWebhook` body to a key (the admin's and the partner's route alike):
 * `{"enabled": false}` alone pauses what is stored; otherwise the body replaces the webhook.
 */
export async function updateWebhook(
  keys: ApiKeyStore,
  keyId: string,
  body: IntentsApi.ApiKeyWebhookUpdate,
): Promise<ApiKeyRecord> {
  let webhook: WebhookConfig | null
  if (body.url === undefined) {
    // `{"enabled": false}` alone (the document requires `url` otherwise): pause what is stored.
    const current = await keys.get(keyId)
    if (current === undefined) throw notFound(keyId)
    webhook = current.webhook === null ? null : { ...current.webhook, enabled: false }
  } else {
    webhook = {
      enabled: body.enabled,
      url: body.url,
      ...(body.headers === undefined ? {} : { headers: body.headers }),
    }
  }
  return keys.setWebhook(keyId, webhook)
}

/** The handlers of every `Admin` operation. */
export function createAdminHandlers(options: AdminHandlerOptions): AdminHandlers {
  const { keys } = options
  const logger = options.logger ?? silentLogger
  const authorize = adminAuthorizer(options.adminToken)

  /** Runs `fn` after the bearer check, answering store refusals as documented errors. */
  const guarded = async <T>(
    headers: IncomingHttpHeaders,
    keyId: string | undefined,
    fn: () => Promise<T>,
  ) => {
    authorize(headers)
    try {
      return await fn()
    } catch (error) {
      throw toPontisError(error, keyId)
    }
  }

  return {
    createApiKey: ({ headers, body }) =>
      guarded(headers, undefined, async () => {
        const created = await keys.create({
          label: body.label,
          ...(body.tier === undefined ? {} : { tier: body.tier }),
          ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
        })
        logger.info('API key created', { keyId: created.key.id, tier: created.key.tier })
        return { status: 201, body: { key: created.key, secret: created.secret } }
      }),

    listApiKeys: ({ headers }) =>
      guarded(headers, undefined, async () => ({ status: 200, body: { keys: await keys.list() } })),

    getApiKey: ({ headers, path }) =>
      guarded(headers, path.keyId, async () => {
        const key = await keys.get(path.keyId)
        if (key === undefined) throw notFound(path.keyId)
        return { status: 200, body: key }
      }),

    rotateApiKey: ({ headers, path }) =>
      guarded(headers, path.keyId, async () => {
        const rotated = await keys.rotate(path.keyId)
        logger.info('API key rotated', { keyId: rotated.key.id })
        return { status: 200, body: { key: rotated.key, secret: rotated.secret } }
      }),

    revokeApiKey: ({ headers, path }) =>
      guarded(headers, path.keyId, async () => {
        const key = await keys.revoke(path.keyId)
        if (key === undefined) throw notFound(path.keyId)
        logger.info('API key revoked', { keyId: key.id })
        return { status: 200, body: key }
      }),

    setApiKeyWebhook: ({ headers, path, body }) =>
      guarded(headers, path.keyId, async () => {
        const key = await updateWebhook(keys, path.keyId, body)
        logger.info('API key webhook set', { keyId: key.id, enabled: key.webhook?.enabled ?? false })
        return { status: 200, body: key }
      }),

    getRateLimitPolicy: ({ headers }) =>
      guarded(headers, undefined, async () => ({
        status: 200,
        body: {
          policy: options.rateLimitPolicy === undefined ? DEFAULT_RATE_LIMIT_POLICY : options.rateLimitPolicy,
        },
      })),

    deleteApiKeyWebhook: ({ headers, path }) =>
      guarded(headers, path.keyId, async () => {
        const key = await keys.setWebhook(path.keyId, null)
        logger.info('API key webhook removed', { keyId: key.id })
        return { status: 200, body: key }
      }),
  }
}
