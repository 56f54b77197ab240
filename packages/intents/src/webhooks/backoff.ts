/**
 * Retry schedule of webhook deliveries: exponential backoff with jitter and a cap, never sooner
 * than the receiver's `Retry-After`.
 */

/** Delivery attempts per event: the first one plus up to 10 retries (the contract's "up to 10 retries"). */
export const MAX_ATTEMPTS = 11

/**
 * Attempts per event while its host name does not exist (NXDOMAIN): a DNS change in flight gets a
 * few seconds of backoff, a name that is gone is dead-lettered with the reason instead of being
 * tried for a quarter of an hour.
 */
export const UNRESOLVABLE_MAX_ATTEMPTS = 4

/** Largest `Retry-After` honoured; a receiver cannot park an event for longer than this per retry. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000

/** Tuning of {@link nextAttemptDelayMs}; every field has a default. */
export interface BackoffOptions {
  /** Delay after the first failed attempt, before jitter. Default 1000. */
  baseMs?: number
  /** Growth per further failed attempt. Default 2. */
  factor?: number
  /** Largest delay from the exponential schedule, after jitter. Default 15 minutes. */
  capMs?: number
  /** Relative spread: the delay is scaled by a factor in [1 - jitter, 1 + jitter). Default 0.2. */
  jitter?: number
  /** Uniform random number in [0, 1). Default `Math.random`; tests pass a fixed one. */
  random?: () => number
}

/**
 * Delay before the next delivery attempt of an event.
 *
 * `min(capMs, baseMs * factor^(attempt - 1))`, scaled by a random factor within ±`jitter` (spreads
 * retries of many events failing together), capped again at `capMs`, and never less than
 * `retryAfterMs` (itself capped at {@link MAX_RETRY_AFTER_MS}) when the receiver sent `Retry-After`.
 *
 * @param attempt - How many attempts of this event have failed so far (1 after the first failure).
 * @param options - Schedule tuning; see {@link BackoffOptions}.
 * @param retryAfterMs - The receiver's `Retry-After`, in milliseconds, if it sent one.
 * @returns Whole milliseconds to wait. Whether another attempt is allowed at all is the caller's
 *   check against {@link MAX_ATTEMPTS}.
 * @throws RangeError when `attempt` is not a positive integer or an option is out of range.
 */
export function nextAttemptDelayMs(
  attempt: number,
  options: BackoffOptions = {},
  retryAfterMs?: number,
): number {
  const { baseMs = 1000, factor = 2, capMs = 15 * 60_000, jitter = 0.2, random = Math.random } = options
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempt must be a positive integer')
  if (!(baseMs >= 0) || !(factor >= 1) || !(capMs >= 0) || !(jitter >= 0 && jitter <= 1)) {
    throw new RangeError('backoff options out of range')
  }
  // Capping before jitter keeps the exponent from overflowing to Infinity on large attempts.
  const exponential = baseMs === 0 ? 0 : Math.min(capMs, baseMs * factor ** (attempt - 1))
  const jittered = Math.min(capMs, exponential * (1 + jitter * (2 * random() - 1)))
  const floor =
    retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs > 0
      ? Math.min(retryAfterMs, MAX_RETRY_AFTER_MS)
      : 0
  return Math.round(Math.max(jittered, floor))
}

/**
 * Whether an event whose `failedAttempts` attempts all failed may be tried again.
 *
 * @param failedAttempts - Attempts made and failed so far.
 */
export function hasAttemptsLeft(failedAttempts: number): boolean {
  return failedAttempts < MAX_ATTEMPTS
}
