/**
 * The Koa middleware that authenticates `x-api-key` and applies the rate limits, for the
 * `middleware` option of `createApiApp` (it runs after request ids and error handling, before
 * routing).
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers-10 (structured fields, named policies):
 * `RateLimit-Policy: "quote";q=50;w=60` and `RateLimit: "quote";r=49;t=42`, the policy named by the
 * route class. A call over the limit throws `RATE_LIMITED` with `errorData.retryAfterSeconds`,
 * which the HTTP layer answers 429 with `Retry-After`; headers set before throwing are kept.
 */
import { isIP } from 'node:net'
import { type Logger, PontisError } from '@pontis/core'
import type Koa from 'koa'
import { API_KEY_HEADER, type ApiKeyRecord, type ApiKeyStore, unauthorized } from '../keys/api-keys.js'
import type { RateLimiter, RateLimitResult } from './limiter.js'
import {
  DEFAULT_RATE_LIMIT_POLICY,
  type RateLimitPolicy,
  type RateLimitRule,
  type RouteClass,
} from './policy.js'

export interface RateLimitMiddlewareOptions {
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

/** What the middleware leaves in `ctx.state`. */
export interface RateLimitState {
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

/** Path as the router matches it: case-insensitive, trailing slashes ignored. */
function normalisePath(path: string): string {
  const lower = path.toLowerCase()
  const trimmed = lower.replace(/\/+$/, '')
  return trimmed === '' ? '/' : trimmed
}

/** `quote` for `POST /quote`, `/quote/v2` and `/price`; `other` for the rest. */
export function routeClassOf(method: string, path: string): RouteClass {
  return method.toUpperCase() === 'POST' && QUOTE_PATHS.has(normalisePath(path)) ? 'quote' : 'other'
}

function isExempt(path: string, websocketPath: string): boolean {
  const normalised = normalisePath(path)
  return (
    normalised === '/' ||
    normalised === '/documentation' ||
    normalised.startsWith('/documentation/') ||
    normalised === websocketPath
  )
}

/** Expands an IPv6 address to its 8 groups, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined
  const bare = address.split('%', 1)[0]!
  const [head = '', tail] = bare.split('::') as [string, string | undefined]
  const parts = (text: string): number[] => {
    if (text === '') return []
    const groups: number[] = []
    for (const part of text.split(':')) {
      if (part.includes('.')) {
        const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number]
        groups.push((a << 8) | b, (c << 8) | d)
      } else groups.push(Number.parseInt(part, 16))
    }
    return groups
  }
  const front = parts(head)
  const back = tail === undefined ? [] : parts(tail)
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back]
}

/**
 * The bucket identity of a client address: IPv4 as is (also when IPv4-mapped), IPv6 by its /64
 * (one subscriber usually holds a whole /64, so per-address limits would be trivially evaded).
 */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  const groups = ipv6Groups(address)
  if (groups === undefined) return address
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}

/** Strips `[...]` and a port from an `X-Forwarded-For` entry. */
function bareAddress(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry)
  if (bracketed) return bracketed[1]!
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(entry)
  return withPort ? withPort[1]! : entry
}

/**
 * The client address of a request: the socket peer, or with proxy trust on (Koa's `app.proxy`,
 * set by `createApiApp({ trustProxy })`) the `X-Forwarded-For` entry `proxyHops` from the right.
 */
export function clientAddressOf(ctx: Koa.Context, proxyHops = 1): string {
  const peer = ctx.req.socket.remoteAddress ?? ''
  if (!ctx.app.proxy) return peer
  const entries = ctx
    .get(ctx.app.proxyIpHeader)
    .split(',')
    .map((entry) => bareAddress(entry.trim()))
    .filter((entry) => entry !== '')
  if (entries.length === 0) return peer
  const chosen = entries[Math.max(0, entries.length - Math.max(1, proxyHops))]!
  return isIP(chosen) === 0 ? peer : chosen
}

function setHeaders(
  ctx: Koa.Context,
  name: RouteClass,
  rule: RateLimitRule,
  result: RateLimitResult,
): number {
  const resetSeconds = Math.max(1, Math.ceil(result.resetMs / 1000))
  ctx.set('RateLimit-Policy', `"${name}";q=${rule.limit};w=${rule.windowSeconds}`)
  ctx.set('RateLimit', `"${name}";r=${result.remaining};t=${resetSeconds}`)
  return resetSeconds
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
 * address first so guessing keys is rate limited too), stores the key on `ctx.state.apiKey`, and
 * counts the request in `key:<id>:<class>` (tier limits) or `ip:<address>:<class>` (anonymous
 * limits). `/`, `/documentation*` and the websocket path are not limited.
 */
export function createRateLimitMiddleware(options: RateLimitMiddlewareOptions): Koa.Middleware {
  const { limiter, keys, logger } = options
  const policy = options.policy === undefined ? DEFAULT_RATE_LIMIT_POLICY : options.policy
  const websocketPath = normalisePath(options.websocketPath ?? '/intents/ws')
  const proxyHops = Math.max(1, options.proxyHops ?? 1)

  const count = async (
    ctx: Koa.Context,
    bucket: string,
    name: RouteClass,
    rule: RateLimitRule | undefined,
  ) => {
    if (rule === undefined) return
    const result = await limiter.hit(bucket, rule.limit, rule.windowSeconds * 1000)
    const retryAfterSeconds = setHeaders(ctx, name, rule, result)
    if (!result.allowed) {
      logger.debug('rate limited', { bucket, limit: rule.limit, windowSeconds: rule.windowSeconds })
      throw tooMany(rule, retryAfterSeconds)
    }
  }

  return async (ctx, next) => {
    if (isExempt(ctx.path, websocketPath)) return next()
    const name = routeClassOf(ctx.method, ctx.path)
    const presented = ctx.get(API_KEY_HEADER)
    const key = presented === '' ? undefined : await keys.authenticate(presented)
    if (key === undefined) {
      const address = addressBucket(clientAddressOf(ctx, proxyHops))
      await count(ctx, `ip:${address}:${name}`, name, policy?.anonymous[name])
      if (presented !== '') {
        // Never the presented value, not even a prefix: a typo of a real key is most of that key.
        logger.debug('refused an unknown or revoked API key', { address, path: ctx.path })
        throw unauthorized()
      }
    } else {
      ;(ctx.state as RateLimitState).apiKey = key
      await count(ctx, `key:${key.id}:${name}`, name, policy?.[key.tier][name])
    }
    await next()
  }
}
