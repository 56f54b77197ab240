/**
 * The oracle's unauthenticated rate limit, for the `gate` option of `createApiApp`: a fixed
 * window per client IP (IPv6 per /64), `UNAUTHENTICATED_RATE_LIMIT_MAX` requests per
 * `UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS`, counted per process. A valid `x-api-key` bypasses it; an
 * unknown key is treated exactly like no key (the spec serves keyless callers, so it is not a 401).
 * `/`, `/documentation` (and sub-paths), `/lives` (and sub-paths), `/metrics` and `/readyz` are never counted.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { type Logger, PontisError } from '@pontis/core'
import {
  addressBucket,
  checkRateLimitArguments,
  clientAddressFrom,
  type GateOutcome,
  MemoryRateLimiter,
  normaliseRoutePath,
  type RateLimiter,
  type RateLimitHeaderPolicy,
  type RequestGate,
  rateLimitHeaders,
} from '@pontis/http'

export const DEFAULT_UNAUTHENTICATED_RATE_LIMIT_MAX = 2
export const DEFAULT_UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS = 1000
/** The policy name in the `RateLimit` and `RateLimit-Policy` headers. */
export const UNAUTHENTICATED_POLICY_NAME = 'unauthenticated'

const API_KEY_HEADER = 'x-api-key'

export interface OracleRateLimitOptions {
  /** Requests per window per client IP without a valid key (`UNAUTHENTICATED_RATE_LIMIT_MAX`, default 2). */
  readonly max: number
  /** Window length (`UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS`, default 1000). */
  readonly windowMs: number
  /** API key -> label, from `API_KEYS`. */
  readonly apiKeys: ReadonlyMap<string, string>
  readonly logger: Logger
  /** Default a {@link MemoryRateLimiter}: the spec counts per process. */
  readonly limiter?: RateLimiter
  /**
   * Trusted proxies appending to `X-Forwarded-For`, default 1. Only used when proxy trust is on
   * (`createApiApp({ trustProxy: true })`); otherwise the socket peer is the client.
   */
  readonly proxyHops?: number
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

/**
 * Constant-time check of an `x-api-key` value; returns the key's label or undefined. Digests have
 * one length whatever the key's, and every configured key is compared (no early exit), so the
 * answer time says nothing about how close a guess was or which key matched.
 */
export function createApiKeyVerifier(
  apiKeys: ReadonlyMap<string, string>,
): (presented: string | undefined) => string | undefined {
  // An empty configured key would let an empty header in; it is never a key.
  const configured = [...apiKeys]
    .filter(([key]) => key !== '')
    .map(([key, label]) => ({ digest: sha256(key), label }))
  return (presented) => {
    if (presented === undefined || presented === '') return undefined
    const digest = sha256(presented)
    let label: string | undefined
    for (const entry of configured) {
      const matches = timingSafeEqual(entry.digest, digest)
      if (matches && label === undefined) label = entry.label
    }
    return label
  }
}

/** `/`, `/documentation` and `/lives`, each with every sub-path, `/metrics` (the scraper's own) and `/readyz`. */
function isExempt(path: string): boolean {
  const normalised = normaliseRoutePath(path)
  return (
    normalised === '/' ||
    normalised === '/documentation' ||
    normalised.startsWith('/documentation/') ||
    normalised === '/lives' ||
    normalised.startsWith('/lives/') ||
    normalised === '/metrics' ||
    normalised === '/readyz'
  )
}

/**
 * Counts every request without a valid `x-api-key` outside the exempt paths in `ip:<address>`,
 * sets `RateLimit-Policy` and `RateLimit` on it, and over the limit refuses it with `RATE_LIMITED`
 * and `errorData.retryAfterSeconds` (which `createApiApp` answers 429 with `Retry-After`).
 */
export function createOracleRateLimit(options: OracleRateLimitOptions): RequestGate {
  const { max, windowMs, logger } = options
  // A bad limit must stop start-up, not fail every request.
  checkRateLimitArguments(max, windowMs)
  const limiter = options.limiter ?? new MemoryRateLimiter()
  const proxyHops = Math.max(1, options.proxyHops ?? 1)
  const labelOf = createApiKeyVerifier(options.apiKeys)
  const policy: RateLimitHeaderPolicy = {
    name: UNAUTHENTICATED_POLICY_NAME,
    limit: max,
    windowSeconds: Math.max(1, Math.ceil(windowMs / 1000)),
  }

  const admitted: GateOutcome = {}
  return async (request) => {
    if (isExempt(request.path)) return admitted
    const presented = request.headers[API_KEY_HEADER]
    if (labelOf(Array.isArray(presented) ? presented.join(', ') : presented) !== undefined) return admitted
    const address = addressBucket(
      clientAddressFrom(request.peerAddress, request.headers, request.trustProxy, proxyHops),
    )
    const result = await limiter.hit(`ip:${address}`, max, windowMs)
    const { headers, resetSeconds } = rateLimitHeaders(policy, result)
    if (result.allowed) return { headers }
    logger.debug('rate limited', { address, path: request.path, max, windowMs })
    const seconds = resetSeconds === 1 ? '1 second' : `${resetSeconds} seconds`
    return {
      headers,
      refusal: new PontisError('RATE_LIMITED', `Too many requests, retry in ${seconds} or use an API key.`, {
        retryAfterSeconds: resetSeconds,
        limit: max,
        windowMs,
      }),
    }
  }
}
