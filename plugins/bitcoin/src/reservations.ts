import type { CoinReservations } from '@pontis/core/plugin'

/**
 * Outpoints spent by transactions this process signed, kept out of coin selection for a while.
 * The solver passes its store's shared holds instead ({@link CoinReservations}, every worker sees
 * them); this per-process one serves signings outside the solver (the plugin's own callers).
 *
 * Why: the solver stores a signed transaction before it broadcasts it, so two fills (or refunds)
 * signed in a row both see the same coins as unspent on Esplora; without this the second would
 * spend the first one's inputs and only one could ever confirm. Once the first is broadcast,
 * Esplora itself stops listing its inputs, so the reservation only has to bridge the time between
 * signing and broadcasting: it lapses after a TTL (default 10 minutes).
 *
 * Limits, by design (kept simple): reservations live in memory, so they are per process and lost
 * on restart; a transaction signed but never broadcast within the TTL releases its coins, and a
 * later transaction may then spend them too: whichever of the two is broadcast first wins and the
 * other is refused by the network as a double spend.
 */
export class OutpointReservations {
  readonly #until = new Map<string, number>()
  readonly #ttlMs: number
  readonly #now: () => number

  constructor(options: { ttlMs: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs
    this.#now = options.now ?? Date.now
  }

  /** Reserves the outpoints `txid:vout` for the TTL from now. */
  reserve(outpoints: Iterable<{ readonly txid: string; readonly vout: number }>): void {
    const until = this.#now() + this.#ttlMs
    for (const { txid, vout } of outpoints) this.#until.set(`${txid}:${vout}`, until)
    this.#prune()
  }

  /** True while `txid:vout` is reserved. */
  isReserved(txid: string, vout: number): boolean {
    const until = this.#until.get(`${txid}:${vout}`)
    return until !== undefined && until > this.#now()
  }

  /** The same holds through the {@link CoinReservations} contract (`txid:vout` ids). */
  asCoinReservations(): CoinReservations {
    return {
      held: async (coinIds) => new Set(coinIds.filter((id) => this.#isHeld(id))),
      hold: async (coinIds) => {
        if (coinIds.some((id) => this.#isHeld(id))) return false
        const until = this.#now() + this.#ttlMs
        for (const id of coinIds) this.#until.set(id, until)
        return true
      },
    }
  }

  #isHeld(id: string): boolean {
    const until = this.#until.get(id)
    return until !== undefined && until > this.#now()
  }

  /** Number of live reservations (for tests and diagnostics). */
  get size(): number {
    this.#prune()
    return this.#until.size
  }

  #prune(): void {
    const now = this.#now()
    for (const [key, until] of this.#until) if (until <= now) this.#until.delete(key)
  }
}
