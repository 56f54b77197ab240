/** Retry schedule: exact values with a fixed random source, the cap, Retry-After and misuse. */
import t from 'tap'
import {
  hasAttemptsLeft,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextAttemptDelayMs,
} from '../src/webhooks/backoff.js'

const middle = { random: () => 0.5 } // jitter factor exactly 1
const lowest = { random: () => 0 } // factor 1 - jitter
const highest = { random: () => 0.999_999 } // factor just under 1 + jitter

t.test('1 + 10 retries', async (t) => {
  t.equal(MAX_ATTEMPTS, 11)
  t.equal(hasAttemptsLeft(10), true)
  t.equal(hasAttemptsLeft(11), false)
})

t.test('exponential without jitter spread', async (t) => {
  const delays = Array.from({ length: 10 }, (_, i) => nextAttemptDelayMs(i + 1, middle))
  t.same(delays, [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000])
})

t.test('jitter stays within ±20% by default', async (t) => {
  t.equal(nextAttemptDelayMs(1, lowest), 800)
  t.equal(nextAttemptDelayMs(1, highest), 1200)
  t.equal(nextAttemptDelayMs(3, lowest), 3200)
  t.equal(nextAttemptDelayMs(3, { random: () => 0.75 }), 4400)
  t.equal(nextAttemptDelayMs(3, { random: () => 0.25, jitter: 0.5 }), 3000)
  t.equal(nextAttemptDelayMs(3, { random: () => 0, jitter: 0 }), 4000)
  for (let i = 0; i < 200; i++) {
    const delay = nextAttemptDelayMs(4)
    t.ok(delay >= 6400 && delay <= 9600, `random delay ${delay}`)
  }
})

t.test('the cap holds after jitter and for huge attempt numbers', async (t) => {
  const cap = 15 * 60_000
  t.equal(nextAttemptDelayMs(11, middle), cap, '1000 * 2^10 > 15 min')
  t.equal(nextAttemptDelayMs(11, highest), cap, 'jitter never lifts above the cap')
  t.equal(nextAttemptDelayMs(11, lowest), cap * 0.8, 'jitter still spreads capped delays downwards')
  t.equal(nextAttemptDelayMs(10_000, middle), cap, 'no overflow')
  t.equal(nextAttemptDelayMs(3, { baseMs: 500, factor: 3, capMs: 10_000, random: () => 0.5 }), 4500)
  t.equal(nextAttemptDelayMs(4, { baseMs: 500, factor: 3, capMs: 10_000, random: () => 0.5 }), 10_000)
  t.equal(nextAttemptDelayMs(10_000, { baseMs: 0, random: () => 0.5 }), 0)
})

t.test('Retry-After is a floor, itself capped at one hour', async (t) => {
  t.equal(nextAttemptDelayMs(1, middle, 7000), 7000, 'longer than the backoff')
  t.equal(nextAttemptDelayMs(5, middle, 7000), 16_000, 'shorter than the backoff: backoff wins')
  t.equal(nextAttemptDelayMs(11, middle, 30 * 60_000), 30 * 60_000, 'may exceed the backoff cap')
  t.equal(nextAttemptDelayMs(1, middle, 5 * 3_600_000), MAX_RETRY_AFTER_MS)
  t.equal(nextAttemptDelayMs(1, middle, 0), 1000)
  t.equal(nextAttemptDelayMs(1, middle, -5), 1000)
  t.equal(nextAttemptDelayMs(1, middle, Number.POSITIVE_INFINITY), 1000, 'non-finite is ignored')
  t.equal(nextAttemptDelayMs(1, middle, Number.NaN), 1000)
})

t.test('misuse', async (t) => {
  for (const attempt of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => nextAttemptDelayMs(attempt), RangeError, String(attempt))
  }
  t.throws(() => nextAttemptDelayMs(1, { jitter: 2 }), RangeError)
  t.throws(() => nextAttemptDelayMs(1, { factor: 0.5 }), RangeError)
  t.throws(() => nextAttemptDelayMs(1, { baseMs: -1 }), RangeError)
})
