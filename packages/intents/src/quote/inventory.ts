import { formatUnits, PontisError, type Registry } from '@pontis/core'
import { lockForTransaction, type SqlClient } from '../store/index.js'
import type { InventoryTarget } from './settings.js'

/** Finds the solver's inventory target for a currency on a chain. */
export type InventoryLookup = (chainId: number, currencyId: string) => InventoryTarget | undefined

/**
 * The inventory targets by chain and canonical currency id: each target's currency is normalized by
 * its chain's identity, so ids compare the way the family compares them (case-sensitive on SVM,
 * checksummed on EVM) rather than by lower-casing. Targets on chains not served are left out.
 * @throws PontisError the identity's error for a currency id the chain does not accept.
 */
export function inventoryLookup(registry: Registry, inventory: readonly InventoryTarget[]): InventoryLookup {
  const targets = new Map<string, InventoryTarget>()
  const key = (chainId: number, currencyId: string) => `${chainId}:${currencyId}`
  for (const target of inventory) {
    const chain = registry.tryChain(target.chainId)
    if (!chain) continue
    targets.set(key(chain.id, chain.adapter.identity.normalizeCurrency(target.currency, 'currency')), target)
  }
  return (chainId, currencyId) => targets.get(key(chainId, currencyId))
}

/** The solver's standing in one currency on one chain, smallest units. */
export interface LiquidityPosition {
  readonly chainId: number
  readonly currency: string
  /** The solver's balance as last read by a quote. */
  readonly balance: bigint
  /** Promised to live quotes and to requests on their way to a fill. */
  readonly committed: bigint
  /** `balance - committed`, never below zero. */
  readonly available: bigint
  /** When the balance was read (Unix ms). */
  readonly readAt: number
}

/** What a quote asks of the solver's liquidity on its destination. */
export interface LiquidityClaim {
  readonly chainId: number
  readonly currency: string
  /** The solver's balance, as the quote just read it from the chain. */
  readonly balance: bigint
  /** What the fill pays out of it (output plus any native top-up). */
  readonly needed: bigint
}

/** A reservation: a quote's claim under its request id, held until the quote expires. */
export interface LiquidityReservation extends LiquidityClaim {
  readonly requestId: string
  /** The quote's expiry (Unix ms): the reservation lapses with it unless a deposit arrived. */
  readonly expiresAt: number
}

// Serialises reservations of one chain and currency across instances; the second key is the pair's hash.
const LOCK_CLASS = 0x4c697164

/**
 * A reservation counts while its quote is live (request not stored yet or still `waiting`) or its
 * request is on its way to a fill; filled, refunded, failed or expired ones no longer do.
 */
function live(now: string): string {
  return `(CASE WHEN r.status IS NULL OR r.status = 'waiting' THEN c.expires_at > ${now}
    ELSE r.status IN ('depositing', 'pending', 'submitted') END)`
}

/**
 * The solver's liquidity book, shared by every instance through the store: a quote reserves what its
 * fill will pay under a per-currency advisory lock, in one transaction with the check, so two
 * instances can never both take the last of a balance. Reservations are released by the request's
 * own progress (fill, refund, failure) or by the quote's expiry, so there is nothing to forget.
 */
export class LiquidityBook {
  readonly #client: SqlClient
  readonly #now: () => number

  constructor(client: SqlClient, now: () => number = Date.now) {
    this.#client = client
    this.#now = now
  }

  /**
   * Checks a price against what is available now, without reserving.
   * @throws PontisError INSUFFICIENT_LIQUIDITY when `needed` exceeds balance less commitments.
   */
  async check(claim: LiquidityClaim, describe: LiquidityDescriber): Promise<void> {
    const committed = await this.#committed(this.#client, claim, this.#now())
    refuseUnlessAvailable(claim, committed, describe)
  }

  /**
   * Reserves `needed` for a quote, atomically across instances.
   * @throws PontisError INSUFFICIENT_LIQUIDITY when `needed` exceeds balance less commitments.
   */
  async reserve(reservation: LiquidityReservation, describe: LiquidityDescriber): Promise<void> {
    const now = this.#now()
    const committed = await this.#client.transaction(async (tx) => {
      await lockForTransaction(tx, LOCK_CLASS, `${reservation.chainId}:${reservation.currency}`)
      await tx.query(
        `INSERT INTO solver_balances (chain_id, currency, balance, read_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain_id, currency) DO UPDATE SET balance = EXCLUDED.balance, read_at = EXCLUDED.read_at`,
        [reservation.chainId, reservation.currency, reservation.balance.toString(), now],
      )
      // Lapsed reservations are dropped here, under the lock, so the table holds only live ones.
      await tx.query(
        `DELETE FROM liquidity_commitments c WHERE c.chain_id = $1 AND c.currency = $2 AND c.expires_at <= $3
           AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = c.request_id
             AND r.status IN ('depositing', 'pending', 'submitted'))`,
        [reservation.chainId, reservation.currency, now],
      )
      const committed = await this.#committed(tx, reservation, now)
      if (reservation.balance - committed < reservation.needed) return committed
      await tx.query(
        `INSERT INTO liquidity_commitments (request_id, chain_id, currency, amount, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (request_id) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at`,
        [
          reservation.requestId.toLowerCase(),
          reservation.chainId,
          reservation.currency,
          reservation.needed.toString(),
          reservation.expiresAt,
          now,
        ],
      )
      return undefined
    })
    if (committed !== undefined) refuseUnlessAvailable(reservation, committed, describe)
  }

  /** Gives a reservation back at once (its quote failed before it was answered). */
  async release(requestId: string): Promise<void> {
    await this.#client.query('DELETE FROM liquidity_commitments WHERE request_id = $1', [
      requestId.toLowerCase(),
    ])
  }

  /** Every chain and currency a quote has read the solver's balance of, with what is committed of it. */
  async positions(): Promise<LiquidityPosition[]> {
    const { rows } = await this.#client.query<{
      chain_id: number
      currency: string
      balance: string
      read_at: number
      committed: string
    }>(
      `SELECT b.chain_id, b.currency, b.balance, b.read_at,
         (SELECT COALESCE(sum(c.amount), 0) FROM liquidity_commitments c
            LEFT JOIN requests r ON r.id = c.request_id
          WHERE c.chain_id = b.chain_id AND c.currency = b.currency AND ${live('$1')}) AS committed
       FROM solver_balances b ORDER BY b.chain_id, b.currency`,
      [this.#now()],
    )
    return rows.map((row) => {
      const balance = BigInt(row.balance)
      const committed = BigInt(row.committed)
      return {
        chainId: Number(row.chain_id),
        currency: row.currency,
        balance,
        committed,
        available: balance > committed ? balance - committed : 0n,
        readAt: Number(row.read_at),
      }
    })
  }

  async #committed(client: SqlClient, claim: LiquidityClaim, now: number): Promise<bigint> {
    const { rows } = await client.query<{ committed: string }>(
      `SELECT COALESCE(sum(c.amount), 0) AS committed FROM liquidity_commitments c
         LEFT JOIN requests r ON r.id = c.request_id
       WHERE c.chain_id = $1 AND c.currency = $2 AND ${live('$3')}`,
      [claim.chainId, claim.currency, now],
    )
    return BigInt(rows[0]?.committed ?? '0')
  }
}

/** How a refusal names the currency and chain to a person: symbol, decimals, chain name. */
export interface LiquidityDescriber {
  readonly symbol: string
  readonly decimals: number
  readonly chainName: string
}

/**
 * Refuses a claim the balance less `committed` cannot cover.
 * @throws PontisError INSUFFICIENT_LIQUIDITY
 */
export function refuseUnlessAvailable(
  claim: LiquidityClaim,
  committed: bigint,
  describe: LiquidityDescriber,
): void {
  const available = claim.balance > committed ? claim.balance - committed : 0n
  if (available >= claim.needed) return
  const amount = (value: bigint) => `${formatUnits(value, describe.decimals)} ${describe.symbol}`
  const promised =
    committed > 0n ? `, ${amount(committed)} of it promised to quotes and requests in flight` : ''
  throw new PontisError(
    'INSUFFICIENT_LIQUIDITY',
    `The solver holds ${amount(claim.balance)} on ${describe.chainName}${promised}: ${amount(available)} available, less than the ${amount(claim.needed)} this fill needs. Try a smaller amount or quote again later.`,
    { available: available.toString(), required: claim.needed.toString(), committed: committed.toString() },
  )
}
