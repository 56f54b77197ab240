/**
 * Fixed-window request counters shared through the database: {@link SqlRateLimiter} counts in the
 * `rate_limit_windows` table, so every service instance on one PostgreSQL database shares the same
 * counts. The windows, the in-process `MemoryRateLimiter` and the result arithmetic come from
 * `@pontis/http`, which the oracle uses too.
 */
import type { Logger } from '@pontis/core'
import {
  checkRateLimitArguments,
  fixedWindowOf,
  MemoryRateLimiter,
  type RateLimiter,
  type RateLimitResult,
  rateLimitResultOf,
} from '@pontis/http'
import type { SqlClient } from '../store/index.js'

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
    checkRateLimitArguments(limit, windowMs)
    const now = this.#now()
    const { start, end } = fixedWindowOf(now, windowMs)
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
    return rateLimitResultOf(count, limit, end, now)
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
