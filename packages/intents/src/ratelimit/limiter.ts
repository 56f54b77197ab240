/**
 * Fixed-window request counters. A window of `windowMs` starts at every multiple of `windowMs`
 * since the epoch, so every instance agrees on the windows without talking; a bucket's count in
 * the current window decides. {@link MemoryRateLimiter} counts in this process,
 * {@link SqlRateLimiter} in the `rate_limit_windows` table, so every service instance on one
 * PostgreSQL database shares the same counts.
 */
import type { Logger } from '@pontis/core'
import { LRUCache } from 'lru-cache'
import type { SqlClient } from '../store/index.js'

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

function checkArguments(limit: number, windowMs: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`)
  if (!Number.isInteger(windowMs) || windowMs < 1)
    throw new RangeError(`windowMs must be a positive integer, got ${windowMs}`)
}

function windowOf(now: number, windowMs: number): { start: number; end: number } {
  const start = Math.floor(now / windowMs) * windowMs
  return { start, end: start + windowMs }
}

function resultOf(count: number, limit: number, end: number, now: number): RateLimitResult {
  return { allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs: Math.max(1, end - now) }
}

export interface MemoryRateLimiterOptions {
  /** Clock, Unix milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /** Most buckets tracked; the least recently used are forgotten first. Default 100000. */
  readonly maxBuckets?: number
}

/** Counts in this process only: for a single instance, tests, and as the SQL limiter's fallback. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #now: () => number
  readonly #windows: LRUCache<string, { start: number; count: number }>

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#now = options.now ?? Date.now
    this.#windows = new LRUCache({ max: Math.max(1, options.maxBuckets ?? 100_000) })
  }

  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult> {
    checkArguments(limit, windowMs)
    const now = this.#now()
    const { start, end } = windowOf(now, windowMs)
    const current = this.#windows.get(bucket)
    const count = current !== undefined && current.start === start ? current.count + 1 : 1
    this.#windows.set(bucket, { start, count })
    return resultOf(count, limit, end, now)
  }
}

export interface SqlRateLimiterOptions {
  /** Clock, Unix milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /** How often this instance deletes windows that ended. Default 60000 ms; 0 never. */
  readonly cleanupIntervalMs?: number
  /**
   * Counts while the database fails, so a database hiccup neither blocks every request nor lifts
   * every limit. Default a {@link MemoryRateLimiter} on the same clock; `false` lets errors through.
   */
  readonly fallback?: RateLimiter | false
  /** Receives database failures (at most one line per minute) and cleanup failures. */
  readonly logger?: Logger
}

const UPSERT = `INSERT INTO rate_limit_windows AS w (bucket, window_start, count, expires_at)
  VALUES ($1, $2, 1, $3)
  ON CONFLICT (bucket, window_start) DO UPDATE SET count = w.count + 1
  RETURNING count`

/**
 * Counts in the `rate_limit_windows` table with one atomic upsert per request (PostgreSQL locks the
 * row for the increment, so concurrent instances never lose a count). Works the same on PGlite.
 */
export class SqlRateLimiter implements RateLimiter {
  readonly #client: SqlClient
  readonly #now: () => number
  readonly #cleanupIntervalMs: number
  readonly #fallback: RateLimiter | undefined
  readonly #logger: Logger | undefined
  #lastCleanup: number
  #lastFailureLog = Number.NEGATIVE_INFINITY
  #cleaning: Promise<unknown> | undefined

  constructor(client: SqlClient, options: SqlRateLimiterOptions = {}) {
    this.#client = client
    this.#now = options.now ?? Date.now
    this.#cleanupIntervalMs = Math.max(0, options.cleanupIntervalMs ?? 60_000)
    this.#fallback =
      options.fallback === false ? undefined : (options.fallback ?? new MemoryRateLimiter({ now: this.#now }))
    this.#logger = options.logger
    this.#lastCleanup = this.#now()
  }

  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult> {
    checkArguments(limit, windowMs)
    const now = this.#now()
    const { start, end } = windowOf(now, windowMs)
    let count: number
    try {
      const { rows } = await this.#client.query<{ count: number }>(UPSERT, [bucket, start, end])
      count = rows[0]!.count
    } catch (error) {
      if (this.#fallback === undefined) throw error
      if (now - this.#lastFailureLog >= 60_000) {
        this.#lastFailureLog = now
        this.#logger?.warn('rate-limit counters unavailable; counting in this process meanwhile', {
          error: error instanceof Error ? error.message : String(error),
        })
      }
      return this.#fallback.hit(bucket, limit, windowMs)
    }
    if (this.#cleanupIntervalMs > 0 && now - this.#lastCleanup >= this.#cleanupIntervalMs) {
      this.#lastCleanup = now
      this.#cleaning ??= this.cleanup(now)
        .catch((error: unknown) =>
          this.#logger?.warn('rate-limit window cleanup failed', {
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .finally(() => {
          this.#cleaning = undefined
        })
    }
    return resultOf(count, limit, end, now)
  }

  /** Deletes the windows that ended by `now`; resolves to how many. */
  async cleanup(now: number = this.#now()): Promise<number> {
    const { rows } = await this.#client.query<{ deleted: number }>(
      'WITH gone AS (DELETE FROM rate_limit_windows WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS deleted FROM gone',
      [now],
    )
    return rows[0]?.deleted ?? 0
  }

  /** Resolves once a cleanup started by {@link hit} (if any) has finished; for orderly shutdown. */
  async idle(): Promise<void> {
    await this.#cleaning
  }
}
