import { LRUCache } from 'lru-cache'

/**
 * Short-lived memo of chain reads, keyed by call. It keeps the promise, so concurrent quotes
 * asking the same thing share one RPC round trip; failures are not kept.
 */
export class ReadCache {
  readonly #cache: LRUCache<string, Promise<unknown>>
  readonly #ttlMs: number

  constructor(options: { max?: number; ttlMs: number }) {
    this.#ttlMs = options.ttlMs
    // lru-cache reads a TTL of 0 as "never expires"; 0 here means "do not cache" (see `read`).
    this.#cache = new LRUCache<string, Promise<unknown>>({
      max: options.max ?? 5000,
      ...(options.ttlMs > 0 ? { ttl: options.ttlMs } : {}),
    })
  }

  read<T>(key: string, load: () => Promise<T>, ttlMs?: number): Promise<T> {
    if ((ttlMs ?? this.#ttlMs) <= 0) return load()
    const hit = this.#cache.get(key)
    if (hit) return hit as Promise<T>
    const pending = load()
    this.#cache.set(key, pending, ttlMs === undefined ? undefined : { ttl: ttlMs })
    pending.catch(() => {
      if (this.#cache.get(key) === pending) this.#cache.delete(key)
    })
    return pending
  }
}
