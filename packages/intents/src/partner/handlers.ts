/**
 * The partner's self-service of openapi/intents.yaml (tag `Partner`): its key, its webhook, its
 * webhook deliveries and dead letters, its rate limits. Every operation acts on the key that
 * authenticated the call (`x-api-key`, checked and counted by the rate-limit gate first) and on
 * nothing else; changes are logged as the admin API logs them (key id, never a secret).
 */
import type { IncomingHttpHeaders } from 'node:http'
import { type IntentsApi, type Logger, PontisError, silentLogger } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { type ApiKeyRecord, type ApiKeyStore, toPontisError, updateWebhook } from '../keys/index.js'
import { DEFAULT_RATE_LIMIT_POLICY, type RateLimitPolicy } from '../ratelimit/index.js'
import type { WebhookDispatcher } from '../webhooks/index.js'

type Handler<Data, Responses> = OperationHandler<RequestOf<Data>, ResponseOf<Responses>>

/** A type, not an interface, so it fits `createApiApp`'s handler map. */
export type PartnerHandlers = {
  getPartnerKey: Handler<IntentsApi.GetPartnerKeyData, IntentsApi.GetPartnerKeyResponses>
  setPartnerWebhook: Handler<IntentsApi.SetPartnerWebhookData, IntentsApi.SetPartnerWebhookResponses>
  sendPartnerTestWebhook: Handler<
    IntentsApi.SendPartnerTestWebhookData,
    IntentsApi.SendPartnerTestWebhookResponses
  >
  listPartnerWebhookEvents: Handler<
    IntentsApi.ListPartnerWebhookEventsData,
    IntentsApi.ListPartnerWebhookEventsResponses
  >
  redeliverPartnerWebhookEvent: Handler<
    IntentsApi.RedeliverPartnerWebhookEventData,
    IntentsApi.RedeliverPartnerWebhookEventResponses
  >
  getPartnerUsage: Handler<IntentsApi.GetPartnerUsageData, IntentsApi.GetPartnerUsageResponses>
}

export interface PartnerHandlerOptions {
  readonly keys: ApiKeyStore
  readonly dispatcher: WebhookDispatcher
  /** The limits the gate applies; null when limiting is off. Default: the built-in policy. */
  readonly rateLimitPolicy?: RateLimitPolicy | null
  /** Receives one line per change (key id; never a secret). */
  readonly logger?: Logger
}

/** The handlers of every `Partner` operation. */
export function createPartnerHandlers(options: PartnerHandlerOptions): PartnerHandlers {
  const { keys, dispatcher } = options
  const logger = options.logger ?? silentLogger
  const policy = options.rateLimitPolicy === undefined ? DEFAULT_RATE_LIMIT_POLICY : options.rateLimitPolicy

  /** The calling key; 401 without one (an unknown or revoked one is refused by the store). */
  const callerKey = async (headers: IncomingHttpHeaders): Promise<ApiKeyRecord> => {
    const key = await keys.authenticateHeader(headers)
    if (key === undefined) {
      throw new PontisError('UNAUTHORIZED', 'The partner API needs your API key in the x-api-key header')
    }
    return key
  }

  return {
    getPartnerKey: async ({ headers }) => ({ status: 200, body: await callerKey(headers) }),

    setPartnerWebhook: async ({ headers, body }) => {
      const caller = await callerKey(headers)
      try {
        const key = await updateWebhook(keys, caller.id, body)
        logger.info('API key webhook set by its partner', {
          keyId: key.id,
          enabled: key.webhook?.enabled ?? false,
        })
        return { status: 200, body: key }
      } catch (error) {
        throw toPontisError(error, caller.id)
      }
    },

    sendPartnerTestWebhook: async ({ headers }) => {
      const key = await callerKey(headers)
      const event = await dispatcher.enqueueTest(key.id)
      if (event === undefined) {
        throw new PontisError(
          'INVALID_REQUEST',
          'This API key has no enabled webhook: set one (PUT /partner/webhook) before sending a test event',
          { keyId: key.id },
        )
      }
      logger.info('webhook test event queued by its partner', { keyId: key.id, eventId: event.eventId })
      return { status: 202, body: event }
    },

    listPartnerWebhookEvents: async ({ headers, query }) => {
      const key = await callerKey(headers)
      const events = await dispatcher.eventsOfKey(key.id, {
        ...(query.state === undefined ? {} : { state: query.state }),
        ...(query.limit === undefined ? {} : { limit: query.limit }),
      })
      return { status: 200, body: { events } }
    },

    redeliverPartnerWebhookEvent: async ({ headers, path }) => {
      const key = await callerKey(headers)
      const event = (await dispatcher.redeliver(path.eventId, key.id))
        ? await dispatcher.event(path.eventId)
        : undefined
      if (event === undefined) {
        throw new PontisError(
          'ROUTE_NOT_FOUND',
          `No dead-lettered webhook event ${path.eventId} of this API key; GET /partner/webhook/events?state=dead lists them`,
        )
      }
      logger.info('webhook event redelivered by its partner', { keyId: key.id, eventId: event.eventId })
      return { status: 200, body: event }
    },

    getPartnerUsage: async ({ headers }) => {
      const key = await callerKey(headers)
      return {
        status: 200,
        body: { keyId: key.id, tier: key.tier, limits: policy === null ? null : policy[key.tier] },
      }
    },
  }
}
