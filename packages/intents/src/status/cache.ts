import type { IntentsApi } from '@pontis/core'
import { LRUCache } from 'lru-cache'
import type { StatusEvents } from '../events/index.js'

/**
 * Status records of recently asked requests, so a poll costs no database read (issue 11: the read
 * was most of a status answer's cost). Entries stay until the request's status change is announced
 * on the status channel ({@link follow}), which every change makes in its own transaction; the TTL
 * only bounds the damage should an announcement ever go missing without the connection noticing.
 */
export class StatusCache {
  readonly #records: LRUCache<string, IntentsApi.StatusRecordV3>
  // Bumped by every eviction: a read that started before one must not store what it read.
  #generation = 0

  constructor(options: { readonly max?: number; readonly ttlMs?: number } = {}) {
    this.#records = new LRUCache({ max: options.max ?? 10_000, ttl: options.ttlMs ?? 10_000 })
  }

  /** The record of `id` (lower-case), read through `read` on a miss; not-found is not cached. */
  async get(
    id: string,
    read: () => Promise<IntentsApi.StatusRecordV3 | undefined>,
  ): Promise<IntentsApi.StatusRecordV3 | undefined> {
    const cached = this.#records.get(id)
    if (cached) return cached
    const generation = this.#generation
    const record = await read()
    if (record && generation === this.#generation) this.#records.set(id, record)
    return record
  }

  /** Forgets `id` (any case), or everything when absent. */
  evict(id?: string): void {
    this.#generation++
    if (id === undefined) this.#records.clear()
    else this.#records.delete(id.toLowerCase())
  }

  /** Evicts each request whose change `events` announces, everything after a lost connection. */
  follow(events: StatusEvents): () => void {
    return events.subscribeAll(
      (id) => this.evict(id),
      () => this.evict(),
    )
  }
}
