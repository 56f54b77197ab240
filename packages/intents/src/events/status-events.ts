import type { Logger } from '@pontis/core'
import type { SqlClient } from '../store/index.js'

/** The PostgreSQL NOTIFY channel announcing request status changes; the payload is the request id. */
export const STATUS_CHANNEL = 'pontis_request_status'

const REQUEST_ID = /^0x[0-9a-fA-F]{64}$/

/** Receives the (lower-case) id of a request whose status may have changed. */
export type StatusCallback = (requestId: string) => void | Promise<void>

/** Options of {@link StatusEvents.open}. */
export interface StatusEventsOptions {
  /** Receives errors of subscriber callbacks. */
  readonly logger?: Logger
}

function checkRequestId(requestId: string): string {
  if (!REQUEST_ID.test(requestId)) throw new RangeError(`request id ${requestId} is not 0x + 64 hex digits`)
  return requestId.toLowerCase()
}

/**
 * Announces a status change of `requestId` on {@link STATUS_CHANNEL}. Call it with the client of
 * the transaction that makes the change: PostgreSQL (and PGlite) deliver the notification when that
 * transaction commits, and drop it when it rolls back, in every process listening on the database.
 * @throws {RangeError} when `requestId` is not 0x + 64 hex digits.
 */
export async function notifyStatus(tx: SqlClient, requestId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [STATUS_CHANNEL, checkRequestId(requestId)])
}

/**
 * Process-local fan-out of {@link STATUS_CHANNEL}: one LISTEN per instance (open one per process),
 * however many subscribers. A subscriber is told the request id only; it reads the state itself,
 * so a burst of notifications costs it at most one read per delivery and never a stale payload.
 * When the LISTEN connection was lost and came back, every subscriber is called once, since
 * notifications sent meanwhile are gone.
 */
export class StatusEvents {
  readonly #subscribers = new Map<string, Set<StatusCallback>>()
  readonly #everything = new Set<{ readonly change: StatusCallback; readonly gap: () => void }>()
  readonly #logger: Logger | undefined
  #unlisten: (() => Promise<void>) | undefined
  #closed = false

  private constructor(logger: Logger | undefined) {
    this.#logger = logger
  }

  /**
   * Starts listening on `client` and resolves once the LISTEN is active, so a subscriber added
   * afterwards misses no change committed after it subscribed.
   */
  static async open(client: SqlClient, options: StatusEventsOptions = {}): Promise<StatusEvents> {
    const events = new StatusEvents(options.logger)
    events.#unlisten = await client.listen(STATUS_CHANNEL, (payload) => events.#deliver(payload), {
      onReconnect: () => events.#deliverAll(),
    })
    return events
  }

  /**
   * Calls `callback` with the request id (lower-case) whenever a status change of `requestId` (any
   * case) is announced, until the returned function is called (idempotent). Callback errors and
   * rejections are logged and do not affect other subscribers.
   * @throws {RangeError} when `requestId` is not 0x + 64 hex digits.
   */
  subscribe(requestId: string, callback: StatusCallback): () => void {
    if (this.#closed) throw new Error('status events are closed')
    const id = checkRequestId(requestId)
    // Wrapped, so the same function subscribed twice is two subscriptions.
    const entry: StatusCallback = (changed) => callback(changed)
    let callbacks = this.#subscribers.get(id)
    if (callbacks === undefined) {
      callbacks = new Set()
      this.#subscribers.set(id, callbacks)
    }
    callbacks.add(entry)
    return () => {
      const current = this.#subscribers.get(id)
      if (current?.delete(entry) && current.size === 0) this.#subscribers.delete(id)
    }
  }

  /**
   * Calls `change` with the id of every request whose status change is announced, and `gap` when
   * the LISTEN connection came back after a loss (announcements made meanwhile are gone), until the
   * returned function is called. For caches of request state; errors are logged like subscribers'.
   */
  subscribeAll(change: StatusCallback, gap: () => void): () => void {
    if (this.#closed) throw new Error('status events are closed')
    const entry = { change, gap }
    this.#everything.add(entry)
    return () => {
      this.#everything.delete(entry)
    }
  }

  /** Subscriptions to `requestId`, or to any request when absent. */
  subscriberCount(requestId?: string): number {
    if (requestId !== undefined) return this.#subscribers.get(requestId.toLowerCase())?.size ?? 0
    let count = 0
    for (const callbacks of this.#subscribers.values()) count += callbacks.size
    return count
  }

  /** Stops listening and drops every subscriber. Idempotent. Does not close the client. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#subscribers.clear()
    this.#everything.clear()
    const unlisten = this.#unlisten
    this.#unlisten = undefined
    await unlisten?.()
  }

  #deliver(payload: string): void {
    if (!REQUEST_ID.test(payload)) {
      this.#logger?.debug('ignored a status notification without a request id', {
        payload: payload.slice(0, 80),
      })
      return
    }
    this.#call(payload.toLowerCase())
  }

  #deliverAll(): void {
    for (const { gap } of [...this.#everything]) this.#guard('*', gap)
    for (const id of [...this.#subscribers.keys()]) this.#callSubscribers(id)
  }

  #call(id: string): void {
    for (const { change } of [...this.#everything]) this.#guard(id, () => change(id))
    this.#callSubscribers(id)
  }

  #callSubscribers(id: string): void {
    const callbacks = this.#subscribers.get(id)
    if (callbacks === undefined) return
    // A copy: a callback may unsubscribe while we iterate.
    for (const callback of [...callbacks]) this.#guard(id, () => callback(id))
  }

  #guard(id: string, call: () => void | Promise<void>): void {
    try {
      const result = call()
      if (result instanceof Promise) result.catch((error: unknown) => this.#failed(id, error))
    } catch (error) {
      this.#failed(id, error)
    }
  }

  #failed(requestId: string, error: unknown): void {
    this.#logger?.warn('status event subscriber failed', {
      requestId,
      error: error instanceof Error ? error.message : String(error),
    })
  }
}
