/**
 * Waiting in tests: for an event (a status change, a delivery, a log line, a process exit), never
 * for a guessed duration. A wait has a bound only so that a hang fails with a message naming what
 * never came and the last state seen, instead of the test file's timeout. The bound is generous:
 * CI runs on shared, busy machines, and a test that is slow there is not broken. Speed targets
 * belong in benchmarks (`npm run bench`), not in tests.
 */
import { inspect } from 'node:util'

/**
 * The default bound of one wait. A step of a test that takes this long on a loaded 2-core machine
 * is stuck, not slow; it stays below tap's per-file timeout (package.json `tap.timeout`, 120 s) so
 * that the wait, not the runner, reports it.
 */
export const WAIT_BOUND_MS = 60_000

/**
 * The bound of a service starting as its own process: TypeScript compiled on the fly and every
 * plugin loaded, the slowest step of a test on a loaded machine, and several may start at once. A
 * file that starts several in a row sets its own tap timeout (`t.setTimeout`) to match.
 */
export const PROCESS_START_BOUND_MS = 120_000

/** Pause between two reads of a state that can only be polled (an HTTP status, a balance, a table). */
export const POLL_INTERVAL_MS = 50

/** A wait that ran out; its message names what was awaited and the last state seen. */
export class WaitTimeout extends Error {
  override readonly name = 'WaitTimeout'
}

export interface WaitOptions<T> {
  /** The bound, milliseconds. Default {@link WAIT_BOUND_MS}. */
  readonly timeoutMs?: number
  /** Pause between reads, milliseconds. Default {@link POLL_INTERVAL_MS}. */
  readonly intervalMs?: number
  /** The awaited state: default, any truthy value. */
  readonly until?: (value: T) => boolean
  /** The state for the failure message; default, the last value read. */
  readonly describe?: (last: T | undefined) => unknown
}

function describeState(state: unknown): string {
  return typeof state === 'string' ? state : inspect(state, { depth: 4, breakLength: Infinity })
}

function timeoutMessage(what: string, timeoutMs: number, lastSeen: unknown): string {
  return `timed out after ${timeoutMs / 1000} s waiting for ${what}; last seen: ${describeState(lastSeen)}`
}

/**
 * Reads `read()` until the value is the awaited one (`options.until`, default truthy) and answers
 * it. For states only seen by asking; prefer {@link within} on a promise when the event has one.
 * A read that throws ends the wait with that error.
 *
 * @throws WaitTimeout after `options.timeoutMs`, naming `what` and the last value read.
 */
export async function waitFor<T>(
  what: string,
  read: () => T | Promise<T>,
  options: WaitOptions<T> = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? WAIT_BOUND_MS
  const until = options.until ?? Boolean
  const deadline = performance.now() + timeoutMs
  let last: T | undefined
  for (;;) {
    last = await read()
    if (until(last)) return last
    if (performance.now() >= deadline) {
      const seen = options.describe ? options.describe(last) : last
      throw new WaitTimeout(timeoutMessage(what, timeoutMs, seen))
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? POLL_INTERVAL_MS))
  }
}

/**
 * Answers `event` once it settles; if it has not within the bound, fails naming `what` and
 * `options.lastSeen()` (the state observed so far; it may ask, e.g. a status endpoint).
 *
 * @throws WaitTimeout after `options.timeoutMs`; `event`'s own rejection otherwise.
 */
export async function within<T>(
  what: string,
  event: Promise<T>,
  options: { readonly timeoutMs?: number; readonly lastSeen?: () => unknown } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? WAIT_BOUND_MS
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      Promise.resolve()
        .then(() => (options.lastSeen ? options.lastSeen() : '(nothing recorded)'))
        .catch((error: unknown) => `(could not be described: ${String(error)})`)
        .then((seen) => reject(new WaitTimeout(timeoutMessage(what, timeoutMs, seen))))
    }, timeoutMs)
  })
  try {
    return await Promise.race([event, bound])
  } finally {
    clearTimeout(timer)
  }
}

/** A promise and the function that resolves it: an event a callback reports and a test awaits. */
export function deferred<T = void>(): { readonly promise: Promise<T>; resolve(value: T): void } {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((settle) => {
    resolve = settle
  })
  return { promise, resolve }
}
