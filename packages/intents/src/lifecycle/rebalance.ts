/**
 * Rebalancing (issue 22): the solver's balance of each configured chain and currency is kept inside
 * a band (solver settings `inventory[]`: `minAmount <= targetAmount <= maxAmount`). A pass reads the
 * balances from the chains; a band whose balance fell below `minAmount` gets one move planned in,
 * from the chain holding the most of the same currency (by symbol) above its own target, for what
 * brings it back to its target, within the band's budget per period (`rebalanceBudget`,
 * `rebalancePeriodSeconds`). The move is recorded before anything is sent, under a per-destination
 * lock in the transaction that checks the budget, and one move per destination is open at a time,
 * so a crash or a second instance never plans it twice. A band whose budget is spent gets no move,
 * and the pass says so in the log and in `GET /admin/rebalances`.
 */
import { randomBytes } from 'node:crypto'
import type { Logger, Registry, SolverCredentials } from '@pontis/core'
import { CurrencyCatalog } from '../quote/currencies.js'
import type { InventoryTarget } from '../quote/settings.js'
import { lockForTransaction, type SqlClient } from '../store/index.js'

export type RebalanceState = 'planned' | 'requested' | 'done' | 'failed'

/** One move of the solver's funds between chains. */
export interface RebalanceMove {
  readonly id: string
  readonly fromChainId: number
  readonly fromCurrency: string
  readonly toChainId: number
  readonly toCurrency: string
  readonly amount: bigint
  /** The balances that decided the move, as read then. */
  readonly fromBalance: bigint
  readonly toBalance: bigint
  readonly state: RebalanceState
  readonly requestId: string | null
  readonly createdAt: number
}

/**
 * Where a band stands after a pass: `in_band`, `above` its maximum (a donor), or below its minimum
 * with what happened: `move_planned` now, `move_open` (one is already on its way), `budget_exhausted`
 * (no move: the period's budget is spent) or `no_donor` (no chain has that currency above its target).
 */
export type BandStatus = 'in_band' | 'above' | 'move_planned' | 'move_open' | 'budget_exhausted' | 'no_donor'

export interface BandReport {
  readonly chainId: number
  readonly currency: string
  readonly symbol: string
  /** The solver's balance as this pass read it; null when it could not be read. */
  readonly balance: bigint | null
  readonly minAmount: bigint
  readonly targetAmount: bigint
  readonly maxAmount: bigint
  readonly budget: bigint
  /** Moved (or on its way) into this band in the current period. */
  readonly budgetUsed: bigint
  readonly periodSeconds: number
  readonly status: BandStatus
  readonly checkedAt: number
}

export interface RebalancerOptions {
  readonly registry: Registry
  readonly client: SqlClient
  readonly logger: Logger
  readonly inventory: readonly InventoryTarget[]
  /** The solver's keys per family (its account on each chain); never logged. */
  readonly credentials: (vmType: string) => SolverCredentials
  readonly now?: () => number
}

interface Band {
  readonly chainId: number
  /** As the chain's identity writes it. */
  readonly currency: string
  readonly symbol: string
  readonly min: bigint
  readonly target: bigint
  readonly max: bigint
  readonly budget: bigint
  readonly periodSeconds: number
}

const DEFAULT_PERIOD_SECONDS = 86_400
// Serialises planning for one destination across instances; the second key is the band's.
const LOCK_CLASS = 0x52626c6e

interface MoveRow {
  id: string
  from_chain_id: string | number
  from_currency: string
  to_chain_id: string | number
  to_currency: string
  amount: string
  from_balance: string
  to_balance: string
  state: RebalanceState
  request_id: string | null
  created_at: string | number
}

function moveFromRow(row: MoveRow): RebalanceMove {
  return {
    id: row.id,
    fromChainId: Number(row.from_chain_id),
    fromCurrency: row.from_currency,
    toChainId: Number(row.to_chain_id),
    toCurrency: row.to_currency,
    amount: BigInt(row.amount),
    fromBalance: BigInt(row.from_balance),
    toBalance: BigInt(row.to_balance),
    state: row.state,
    requestId: row.request_id,
    createdAt: Number(row.created_at),
  }
}

export class Rebalancer {
  readonly #options: RebalancerOptions
  readonly #now: () => number
  readonly #bands: readonly Band[]
  #last: readonly BandReport[] = []

  constructor(options: RebalancerOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    const bands: Band[] = []
    for (const target of options.inventory) {
      if (target.minAmount === undefined || target.maxAmount === undefined) continue
      const chain = options.registry.tryChain(target.chainId)
      if (!chain) continue
      const currency = chain.adapter.identity.normalizeCurrency(target.currency, 'currency')
      const found = new CurrencyCatalog(chain).find(currency)
      bands.push({
        chainId: chain.id,
        currency,
        symbol: found?.entry.symbol ?? currency,
        min: BigInt(target.minAmount),
        target: BigInt(target.targetAmount),
        max: BigInt(target.maxAmount),
        budget: BigInt(target.rebalanceBudget ?? '0'),
        periodSeconds: target.rebalancePeriodSeconds ?? DEFAULT_PERIOD_SECONDS,
      })
    }
    this.#bands = bands
  }

  /** True when at least one band is configured (the service runs the pass only then). */
  get configured(): boolean {
    return this.#bands.length > 0
  }

  /** One pass: read every band's balance, plan a move into each band below its minimum. Answers the moves planned. */
  async tick(): Promise<number> {
    const now = this.#now()
    const balances = await Promise.all(this.#bands.map((band) => this.#balance(band)))
    const reports: BandReport[] = []
    let planned = 0
    for (const [index, band] of this.#bands.entries()) {
      const balance = balances[index] ?? null
      const status = await this.#plan(band, balance, balances, now)
      if (status === 'move_planned') planned++
      reports.push({
        chainId: band.chainId,
        currency: band.currency,
        symbol: band.symbol,
        balance,
        minAmount: band.min,
        targetAmount: band.target,
        maxAmount: band.max,
        budget: band.budget,
        budgetUsed: await this.#used(this.#options.client, band, now),
        periodSeconds: band.periodSeconds,
        status,
        checkedAt: now,
      })
    }
    this.#last = reports
    return planned
  }

  /** The bands as the last pass found them (empty before the first pass). */
  bands(): readonly BandReport[] {
    return this.#last
  }

  /** The moves, newest first. */
  async moves(limit = 100): Promise<RebalanceMove[]> {
    const { rows } = await this.#options.client.query<MoveRow>(
      `SELECT id, from_chain_id, from_currency, to_chain_id, to_currency, amount, from_balance, to_balance,
         state, request_id, created_at FROM rebalances ORDER BY created_at DESC, id DESC LIMIT $1`,
      [limit],
    )
    return rows.map(moveFromRow)
  }

  async #balance(band: Band): Promise<bigint | null> {
    const chain = this.#options.registry.tryChain(band.chainId)
    const reading = chain?.adapter.reading
    const filling = chain?.adapter.filling
    if (!chain || !reading || !filling) return null
    try {
      const solver = filling.solverAddress(this.#options.credentials(chain.record.vmType))
      // Fresh: a cached balance may be from before the fill that drove the band out.
      return await reading.readBalance(solver, band.currency, { fresh: true })
    } catch (error) {
      this.#options.logger.warn('rebalance: balance not read', {
        chainId: band.chainId,
        currency: band.currency,
        error: String(error),
      })
      return null
    }
  }

  /** Moved into `band` (or on its way) in its current period; failed moves give their amount back. */
  async #used(client: SqlClient, band: Band, now: number): Promise<bigint> {
    const { rows } = await client.query<{ used: string | null }>(
      `SELECT sum(amount)::text AS used FROM rebalances
       WHERE to_chain_id = $1 AND to_currency = $2 AND created_at > $3 AND state <> 'failed'`,
      [band.chainId, band.currency, now - band.periodSeconds * 1000],
    )
    return BigInt(rows[0]?.used ?? '0')
  }

  async #plan(
    band: Band,
    balance: bigint | null,
    balances: ReadonlyArray<bigint | null>,
    now: number,
  ): Promise<BandStatus> {
    if (balance === null || balance >= band.min)
      return balance !== null && balance > band.max ? 'above' : 'in_band'
    const { logger } = this.#options
    // The donor: the band of the same symbol on another chain with the most above its own target.
    let donor: { band: Band; balance: bigint; spare: bigint } | undefined
    for (const [index, other] of this.#bands.entries()) {
      const otherBalance = balances[index]
      if (other.chainId === band.chainId || other.symbol !== band.symbol || otherBalance == null) continue
      const spare = otherBalance - other.target
      if (spare > 0n && (!donor || spare > donor.spare)) donor = { band: other, balance: otherBalance, spare }
    }
    const fields = { chainId: band.chainId, currency: band.currency, balance: balance.toString() }
    return this.#options.client.transaction(async (tx) => {
      await lockForTransaction(tx, LOCK_CLASS, `${band.chainId}:${band.currency}`)
      const used = await this.#used(tx, band, now)
      const left = band.budget - used
      if (left <= 0n) {
        logger.warn('rebalance: budget exhausted, no move', {
          ...fields,
          budget: band.budget.toString(),
          used: used.toString(),
          periodSeconds: band.periodSeconds,
        })
        return 'budget_exhausted'
      }
      const open = await tx.query<{ id: string }>(
        `SELECT id FROM rebalances WHERE to_chain_id = $1 AND to_currency = $2 AND state IN ('planned', 'requested')`,
        [band.chainId, band.currency],
      )
      if (open.rows.length > 0) return 'move_open'
      if (!donor) {
        logger.warn('rebalance: below its band, but no chain has spare of that currency', fields)
        return 'no_donor'
      }
      let amount = band.target - balance
      if (amount > donor.spare) amount = donor.spare
      if (amount > left) amount = left
      const id = `rbl_${randomBytes(16).toString('hex')}`
      await tx.query(
        `INSERT INTO rebalances (id, from_chain_id, from_currency, to_chain_id, to_currency, amount,
           from_balance, to_balance, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
        [
          id,
          donor.band.chainId,
          donor.band.currency,
          band.chainId,
          band.currency,
          amount.toString(),
          donor.balance.toString(),
          balance.toString(),
          now,
        ],
      )
      logger.info('rebalance: move planned', {
        ...fields,
        id,
        fromChainId: donor.band.chainId,
        fromCurrency: donor.band.currency,
        amount: amount.toString(),
        budgetLeft: (left - amount).toString(),
      })
      return 'move_planned'
    })
  }
}
