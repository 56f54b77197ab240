/**
 * The gate that authenticates `x-api-key` and applies the rate limits, for the `gate` option of
 * `createApiApp` (it runs after request ids and error handling, before routing, for Koa routes and
 * direct operations alike).
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers-10 (structured fields, named policies):
 * `RateLimit-Policy: "quote";q=50;w=60` and `RateLimit: "quote";r=49;t=42`, the policy named by the
 * route class. A call over the limit throws `RATE_LIMITED` with `errorData.retryAfterSeconds`,
 * which the HTTP layer answers 429 with `Retry-After`; headers set before throwing are kept.
 */
import { type Logger, PontisError } from '@pontis/core'
import {
  addressBucket,
  clientAddressFrom,
  type GateOutcome,
  normaliseRoutePath,
  type RateLimiter,
  type RequestGate,
  rateLimitHeaders,
} from '@pontis/http'
import { API_KEY_HEADER, type ApiKeyRecord, type ApiKeyStore, unauthorized } from '../keys/api-keys.js'
import {
  DEFAULT_RATE_LIMIT_POLICY,
  type RateLimitPolicy,
  type RateLimitRule,
  type RouteClass,
} from './policy.js'

export interface RateLimitGateOptions {
  readonly limiter: RateLimiter
  readonly keys: ApiKeyStore
  /**
   * Default {@link DEFAULT_RATE_LIMIT_POLICY}. Null turns limiting off (no counting, no headers);
   * `x-api-key` is still authenticated.
   */
  readonly policy?: RateLimitPolicy | null
  readonly logger: Logger
  /** The status stream's path, never limited here. Default `/intents/ws`. */
  readonly websocketPath?: string
  /**
   * With proxy trust on (`createApiApp({ trustProxy: true })`), how many trusted proxies append to
   * `X-Forwarded-For`: the client is the entry that many places from the right (entries further
   * left were written by the client and prove nothing). Default 1.
   */
  readonly proxyHops?: number
}

/** What the gate leaves in `ctx.state`. */
export type RateLimitState = {
  /** The key of an authenticated `x-api-key`; absent for anonymous calls. */
  apiKey?: ApiKeyRecord
}

/** The id of the key that authenticated this request (from `ctx.state`), or undefined when anonymous. */
export function apiKeyIdOf(state: unknown): string | undefined {
  if (typeof state !== 'object' || state === null) return undefined
  const key = (state as RateLimitState).apiKey
  return key === undefined ? undefined : key.id
}

const QUOTE_PATHS = new Set(['/quote', '/quote/v2', '/price'])

/** `quote` for `POST /quote`, `/quote/v2` and `/price`; `other` for the rest. */
export function routeClassOf(method: string, path: string): RouteClass {
  return method.toUpperCase() === 'POST' && QUOTE_PATHS.has(normaliseRoutePath(path)) ? 'quote' : 'other'
}

/** The scraper's and the orchestrator's own routes: never limited, never refused for a bad key. */
const OPERATIONS_PATHS = new Set(['/metrics', '/healthz', '/readyz'])

function isExempt(path: string, websocketPath: string): boolean {
  const normalised = normaliseRoutePath(path)
  return (
    normalised === '/' ||
    normalised === '/documentation' ||
    normalised.startsWith('/documentation/') ||
    // The dashboard's page and bundle; every call the page then makes is limited as usual.
    normalised === '/dashboard' ||
    normalised.startsWith('/dashboard/') ||
    // Static images a token list loads by the dozen; cheap, cached by browsers for a day.
    normalised.startsWith('/icons/') ||
    normalised === websocketPath ||
    OPERATIONS_PATHS.has(normalised)
  )
}

function tooMany(rule: RateLimitRule, retryAfterSeconds: number): PontisError {
  return new PontisError('RATE_LIMITED', `Too many requests, retry in ${retryAfterSeconds} seconds`, {
    retryAfterSeconds,
    limit: rule.limit,
    windowSeconds: rule.windowSeconds,
  })
}

/**
 * Authenticates `x-api-key` (unknown or revoked: 401 `UNAUTHORIZED`, counted against the caller's
 * address first so guessing keys is rate limited too), leaves the key as `apiKey` in the state, and
 * counts the request in `key:<id>:<class>` (tier limits) or `ip:<address>:<class>` (anonymous
 * limits). `/`, `/documentation*`, `/dashboard*`, `/icons/*`, the websocket path, `/metrics`, `/healthz` and `/readyz`
 * are not limited.
 */
export function createRateLimitGate(options: RateLimitGateOptions): RequestGate {
  const { limiter, keys, logger } = options
  const policy = options.policy === undefined ? DEFAULT_RATE_LIMIT_POLICY : options.policy
  const websocketPath = normaliseRoutePath(options.websocketPath ?? '/intents/ws')
  const proxyHops = Math.max(1, options.proxyHops ?? 1)
  const admitted: GateOutcome = {}

  const count = async (
    bucket: string,
    name: RouteClass,
    rule: RateLimitRule | undefined,
    state?: RateLimitState,
  ): Promise<GateOutcome> => {
    if (rule === undefined) return state ? { state } : admitted
    const result = await limiter.hit(bucket, rule.limit, rule.windowSeconds * 1000)
    const { headers, resetSeconds } = rateLimitHeaders({ name, ...rule }, result)
    if (!result.allowed) {
      logger.debug('rate limited', { bucket, limit: rule.limit, windowSeconds: rule.windowSeconds })
      return { headers, refusal: tooMany(rule, resetSeconds) }
    }
    return state ? { headers, state } : { headers }
  }

  return async (request) => {
    if (isExempt(request.path, websocketPath)) return admitted
    const name = routeClassOf(request.method, request.path)
    const header = request.headers[API_KEY_HEADER]
    const presented = Array.isArray(header) ? header.join(', ') : (header ?? '')
    const key = presented === '' ? undefined : await keys.authenticate(presented)
    if (key === undefined) {
      const address = addressBucket(
        clientAddressFrom(request.peerAddress, request.headers, request.trustProxy, proxyHops),
      )
      const outcome = await count(`ip:${address}:${name}`, name, policy?.anonymous[name])
      if (presented !== '' && outcome.refusal === undefined) {
        // Never the presented value, not even a prefix: a typo of a real key is most of that key.
        logger.debug('refused an unknown or revoked API key', { address, path: request.path })
        return { ...outcome, refusal: unauthorized() }
      }
      return outcome
    }
    return count(`key:${key.id}:${name}`, name, policy?.[key.tier][name], { apiKey: key })
  }
}
