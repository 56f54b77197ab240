/**
 * The generic parts of rate limiting that every service shares: fixed-window counters, the client
 * address a request is counted under, and the draft-ietf-httpapi-ratelimit-headers-10 headers.
 *
 * A window of `windowMs` starts at every multiple of `windowMs` since the epoch, so every instance
 * agrees on the windows without talking; a bucket's count in the current window decides.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { isIP } from 'node:net'

/** The outcome of one counted request. */
export interface RateLimitResult {
  /** True while the bucket's count in this window is within the limit. */
  readonly allowed: boolean
  /** Requests left in this window (0 once the limit is reached). */
  readonly remaining: number
  /** Milliseconds until this window ends and the count starts again. */
  readonly resetMs: number
}

/** Counts one request of `bucket` against `limit` per window of `windowMs`. */
export interface RateLimiter {
  hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult>
}

/** Throws a RangeError unless `limit` and `windowMs` are positive integers. */
export function checkRateLimitArguments(limit: number, windowMs: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`)
  if (!Number.isInteger(windowMs) || windowMs < 1)
    throw new RangeError(`windowMs must be a positive integer, got ${windowMs}`)
}

/** The fixed window that `now` falls in: `start` inclusive, `end` exclusive, Unix milliseconds. */
export function fixedWindowOf(now: number, windowMs: number): { start: number; end: number } {
  const start = Math.floor(now / windowMs) * windowMs
  return { start, end: start + windowMs }
}

/** The result of the `count`-th request in a window ending at `end`. */
export function rateLimitResultOf(count: number, limit: number, end: number, now: number): RateLimitResult {
  return { allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs: Math.max(1, end - now) }
}

export interface MemoryRateLimiterOptions {
  /** Clock, Unix milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /** Most buckets tracked; the least recently used are forgotten first. Default 100000. */
  readonly maxBuckets?: number
}

/** Counts in this process only: for a single instance, tests, and as a shared limiter's fallback. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #now: () => number
  readonly #maxBuckets: number
  // A Map iterates in insertion order; re-inserting on every hit keeps the least recently used first.
  readonly #windows = new Map<string, { start: number; count: number }>()

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#now = options.now ?? Date.now
    this.#maxBuckets = Math.max(1, options.maxBuckets ?? 100_000)
  }

  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult> {
    checkRateLimitArguments(limit, windowMs)
    const now = this.#now()
    const { start, end } = fixedWindowOf(now, windowMs)
    const current = this.#windows.get(bucket)
    const count = current !== undefined && current.start === start ? current.count + 1 : 1
    this.#windows.delete(bucket)
    this.#windows.set(bucket, { start, count })
    if (this.#windows.size > this.#maxBuckets) {
      const leastRecent = this.#windows.keys().next().value
      if (leastRecent !== undefined) this.#windows.delete(leastRecent)
    }
    return rateLimitResultOf(count, limit, end, now)
  }
}

/** Path as the router matches it: case-insensitive, trailing slashes ignored. */
export function normaliseRoutePath(path: string): string {
  const trimmed = path.toLowerCase().replace(/\/+$/, '')
  return trimmed === '' ? '/' : trimmed
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
 * The client address of a request: the socket peer, or with proxy trust on the `X-Forwarded-For`
 * entry `proxyHops` from the right (entries further left were written by the client and prove
 * nothing).
 */
export function clientAddressFrom(
  peerAddress: string,
  headers: IncomingHttpHeaders,
  trustProxy: boolean,
  proxyHops = 1,
): string {
  if (!trustProxy) return peerAddress
  const forwarded = headers['x-forwarded-for']
  const entries = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
    .split(',')
    .map((entry) => bareAddress(entry.trim()))
    .filter((entry) => entry !== '')
  if (entries.length === 0) return peerAddress
  const chosen = entries[Math.max(0, entries.length - Math.max(1, proxyHops))]!
  return isIP(chosen) === 0 ? peerAddress : chosen
}

/** A named quota as the `RateLimit-Policy` header states it. */
export interface RateLimitHeaderPolicy {
  /** The policy name, quoted in both headers. */
  readonly name: string
  /** Requests per window (`q`). */
  readonly limit: number
  /** Window length in whole seconds (`w`). */
  readonly windowSeconds: number
}

/**
 * `RateLimit-Policy: "<name>";q=<limit>;w=<seconds>` and `RateLimit: "<name>";r=<remaining>;t=<seconds>`
 * (draft-ietf-httpapi-ratelimit-headers-10, structured fields), and `t`: the whole seconds (at
 * least 1) until the window resets, which is also the `Retry-After` of a refused request.
 */
export function rateLimitHeaders(
  policy: RateLimitHeaderPolicy,
  result: RateLimitResult,
): { headers: Record<string, string>; resetSeconds: number } {
  const resetSeconds = Math.max(1, Math.ceil(result.resetMs / 1000))
  return {
    headers: {
      'RateLimit-Policy': `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`,
      RateLimit: `"${policy.name}";r=${result.remaining};t=${resetSeconds}`,
    },
    resetSeconds,
  }
}
