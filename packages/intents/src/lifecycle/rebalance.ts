/**
 * Rebalancing (issue 22): the solver's balance of each configured chain and currency is kept inside
 * a band (solver settings `inventory[]`: `minAmount <= targetAmount <= maxAmount`). A pass reads the
 * balances from the chains; a band whose balance fell below `minAmount` gets one move planned in,
 * from the chain holding the most of the same currency (by symbol) above its own target, for what
 * brings it back to its target; a band above `maxAmount` gets its excess over its target moved out
 * to the chain with the most room below its own target, up to that target. Either way within the
 * receiving band's budget per period (`rebalanceBudget`, `rebalancePeriodSeconds`). The move is
 * recorded before anything is sent, under a per-destination lock in the transaction that checks the
 * budget, and one move per destination is open at a time, so a crash or a second instance never
 * plans it twice. A band whose budget is spent gets no move,
 * and the pass says so in the log and in `GET /admin/rebalances`.
 *
 * Execution (solver settings `rebalance.apiUrl`): each pass then moves open moves one step on. A
 * `planned` move is quoted at that intent API, whose solvers are others, as a user of it (the
 * solver's account on the origin is the user, its account on the destination the recipient); the
 * move becomes `requested` with the answered request id, and the quote's origin items are sent one
 * after the other as solver jobs (`rebalance_step`: signed and stored before the broadcast, the
 * nonce allocated in the store like a fill's, replaced when stuck). Once the last one is mined the
 * request is followed on the other API's status until `success` (`done`, what arrived recorded) or
 * `refund`/`failure` (`failed`, with the reason). A failed move gives its budget back only when
 * nothing left the origin for good. Without `apiUrl`, or on a chain whose plugin cannot send a
 * quote's step with the solver's key (`FillingCapability.signStep`), moves stay `planned` with the
 * reason.
 */
import { randomBytes } from 'node:crypto'
import { createPontisClient, PontisApiError, type PontisClient, type QuoteResponse } from '@pontis/client'
import type { Logger, Registry, SolverCredentials } from '@pontis/core'
import { CurrencyCatalog } from '../quote/currencies.js'
import type { InventoryTarget, RebalanceExecutionSettings } from '../quote/settings.js'
import { lockForTransaction, type SqlClient } from '../store/index.js'
import type { LifecycleStore } from './lifecycle-store.js'
import type { RebalanceStepPayload } from './solver.js'

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
  /** Why it is still `planned` (not executed) or why it `failed`; null otherwise. */
  readonly reason: string | null
  /** What arrived on the destination (`done` only). */
  readonly received: bigint | null
  /** The transactions it sent on the origin, in order. */
  readonly inTxHashes: readonly string[]
  /** The other API's fills on the destination (`done` only). */
  readonly outTxHashes: readonly string[]
  readonly createdAt: number
}

/** Whether moves are executed, and why not when they are not. */
export interface RebalanceExecution {
  readonly enabled: boolean
  readonly reason: string | null
}

/**
 * Where a band stands after a pass: `in_band`; `above` its maximum with no chain of that currency
 * below its target to take the excess; or outside with what happened to the move that brings it
 * back (into it when below, into the receiver when above): `move_planned` now, `move_open` (one is
 * already on its way), `retry_later` (a move into it failed less than
 * {@link RETRY_AFTER_FAILURE_MS} ago: its reason may still hold), `budget_exhausted` (no move: the
 * receiving band's budget for the period is spent) or `no_donor` (below, and no chain has that
 * currency above its target).
 */
export type BandStatus =
  | 'in_band'
  | 'above'
  | 'move_planned'
  | 'move_open'
  | 'retry_later'
  | 'budget_exhausted'
  | 'no_donor'

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
  /** Where the moves' steps are queued as solver jobs. */
  readonly lifecycle: LifecycleStore
  /** The other intent API moves are quoted at; absent or an empty `apiUrl`: moves are not executed. */
  readonly execution?: RebalanceExecutionSettings
  /** Fetch for the other API (tests); default `globalThis.fetch`. */
  readonly fetch?: typeof fetch
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

/** One end of a move: a band, its balance, and what it can give or take (above or below its target). */
interface Side {
  readonly band: Band
  readonly balance: bigint
  readonly room: bigint
}

const DEFAULT_PERIOD_SECONDS = 86_400
const DEFAULT_MAX_FEE_BPS = 100
const NOT_CONFIGURED = 'not executed: the solver settings name no rebalance.apiUrl'
const MOVE_COLUMNS = `id, from_chain_id, from_currency, to_chain_id, to_currency, amount, from_balance, to_balance,
  state, request_id, reason, received, in_tx_hashes, out_tx_hashes, quote, created_at`
/** How long a band whose move failed waits before another move is planned into it. */
export const RETRY_AFTER_FAILURE_MS = 5 * 60_000
// How long a request that failed at the other API may take to be refunded before the move fails
// keeping its budget (its deposit may be gone for good).
const REFUND_GRACE_MS = 30 * 60_000
// Answers worth asking again later: the other API was busy, not refusing.
const RETRYABLE_STATUSES = new Set([0, 408, 425, 429])

/** The other API's quote as a move sends it (the `quote` column). */
interface StoredQuote {
  /** The origin transaction items, in the order they are sent. */
  items: Array<Record<string, unknown>>
  amountIn: string
  amountOut: string
}
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
  reason: string | null
  received: string | null
  in_tx_hashes: string[] | null
  out_tx_hashes: string[] | null
  quote: StoredQuote | null
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
    reason: row.reason,
    received: row.received === null ? null : BigInt(row.received),
    inTxHashes: row.in_tx_hashes ?? [],
    outTxHashes: row.out_tx_hashes ?? [],
    createdAt: Number(row.created_at),
  }
}

export class Rebalancer {
  readonly #options: RebalancerOptions
  readonly #now: () => number
  readonly #bands: readonly Band[]
  /** The other intent API; undefined when moves are not executed. */
  readonly #market: PontisClient | undefined
  #last: readonly BandReport[] = []

  constructor(options: RebalancerOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    const apiUrl = options.execution?.apiUrl
    this.#market = apiUrl
      ? createPontisClient({
          baseUrl: apiUrl,
          ...(options.execution?.apiKey ? { apiKey: options.execution.apiKey } : {}),
          ...(options.fetch ? { fetch: options.fetch } : {}),
        })
      : undefined
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

  /** Whether moves are executed (`rebalance.apiUrl`), and why not. */
  get execution(): RebalanceExecution {
    return this.#market ? { enabled: true, reason: null } : { enabled: false, reason: NOT_CONFIGURED }
  }

  /**
   * One pass: read every band's balance, plan a move into each band below its minimum, then move
   * every open move one step on (when moves are executed). Answers the moves planned.
   */
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
    await this.#advance()
    return planned
  }

  /** The bands as the last pass found them (empty before the first pass). */
  bands(): readonly BandReport[] {
    return this.#last
  }

  /** The moves, newest first. */
  async moves(limit = 100): Promise<RebalanceMove[]> {
    const { rows } = await this.#options.client.query<MoveRow>(
      `SELECT ${MOVE_COLUMNS} FROM rebalances ORDER BY created_at DESC, id DESC LIMIT $1`,
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

  /**
   * Moved into `band` (or on its way) in its current period; a failed move gives its amount back
   * unless its deposit left the origin and did not come back (`keeps_budget`).
   */
  async #used(client: SqlClient, band: Band, now: number): Promise<bigint> {
    const { rows } = await client.query<{ used: string | null }>(
      `SELECT sum(amount)::text AS used FROM rebalances
       WHERE to_chain_id = $1 AND to_currency = $2 AND created_at > $3 AND (state <> 'failed' OR keeps_budget)`,
      [band.chainId, band.currency, now - band.periodSeconds * 1000],
    )
    return BigInt(rows[0]?.used ?? '0')
  }

  /**
   * Plans what `band` needs: below its minimum, a move in from the band of the same symbol with the
   * most above its own target; above its maximum, a move of its excess out to the band of the same
   * symbol with the most room below its own target. Answers the band's status.
   */
  async #plan(
    band: Band,
    balance: bigint | null,
    balances: ReadonlyArray<bigint | null>,
    now: number,
  ): Promise<BandStatus> {
    if (balance === null || (balance >= band.min && balance <= band.max)) return 'in_band'
    // Of the other chains' bands of this symbol, the one `measure` finds the most of (above 0).
    const best = (measure: (other: Band, otherBalance: bigint) => bigint): Side | undefined => {
      let found: Side | undefined
      for (const [index, other] of this.#bands.entries()) {
        const otherBalance = balances[index]
        if (other.chainId === band.chainId || other.symbol !== band.symbol || otherBalance == null) continue
        const room = measure(other, otherBalance)
        if (room > 0n && (!found || room > found.room)) found = { band: other, balance: otherBalance, room }
      }
      return found
    }
    if (balance < band.min) {
      const donor = best((other, otherBalance) => otherBalance - other.target)
      return this.#planMove({ band, balance, room: band.target - balance }, donor, now)
    }
    const receiver = best((other, otherBalance) => other.target - otherBalance)
    if (!receiver) return 'above'
    return this.#planMove(receiver, { band, balance, room: balance - band.target }, now)
  }

  /**
   * Plans one move from `from` into `into`, for what brings `into` to its target and no more than
   * `from` has above its own, within `into`'s budget; under a lock on `into`, so one move per
   * destination is open at a time. Answers the status of the band the pass was checking.
   */
  async #planMove(into: Side, from: Side | undefined, now: number): Promise<BandStatus> {
    const { logger } = this.#options
    const band = into.band
    const fields = { chainId: band.chainId, currency: band.currency, balance: into.balance.toString() }
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
      // A failed move's cause (a refusing or dear API) usually outlives one pass: asking again every
      // pass would only pile up quotes there.
      const failed = await tx.query<{ id: string }>(
        `SELECT id FROM rebalances WHERE to_chain_id = $1 AND to_currency = $2 AND state = 'failed'
           AND updated_at > $3 LIMIT 1`,
        [band.chainId, band.currency, now - RETRY_AFTER_FAILURE_MS],
      )
      if (failed.rows.length > 0) return 'retry_later'
      if (!from) {
        logger.warn('rebalance: below its band, but no chain has spare of that currency', fields)
        return 'no_donor'
      }
      let amount = into.room
      if (amount > from.room) amount = from.room
      if (amount > left) amount = left
      const id = `rbl_${randomBytes(16).toString('hex')}`
      await tx.query(
        `INSERT INTO rebalances (id, from_chain_id, from_currency, to_chain_id, to_currency, amount,
           from_balance, to_balance, created_at, updated_at, reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)`,
        [
          id,
          from.band.chainId,
          from.band.currency,
          band.chainId,
          band.currency,
          amount.toString(),
          from.balance.toString(),
          into.balance.toString(),
          now,
          this.#notExecutable(from.band.chainId, band.chainId) ?? null,
        ],
      )
      logger.info('rebalance: move planned', {
        ...fields,
        id,
        fromChainId: from.band.chainId,
        fromCurrency: from.band.currency,
        fromBalance: from.balance.toString(),
        amount: amount.toString(),
        budgetLeft: (left - amount).toString(),
      })
      return 'move_planned'
    })
  }

  /** Why a move from `fromChainId` to `toChainId` cannot be executed; undefined when it can. */
  #notExecutable(fromChainId: number, toChainId: number): string | undefined {
    if (!this.#market) return NOT_CONFIGURED
    const { registry } = this.#options
    const origin = registry.tryChain(fromChainId)
    if (!origin?.adapter.filling?.signStep)
      return `not executed: the ${origin?.record.vmType ?? 'unknown'} plugin of chain ${fromChainId} cannot send a quote's step with the solver's key`
    if (!registry.tryChain(toChainId)?.adapter.filling)
      return `not executed: the solver has no account on chain ${toChainId}`
    return undefined
  }

  /** Moves every open move one step on; one move's trouble never stops the others. */
  async #advance(): Promise<void> {
    const { rows } = await this.#options.client.query<MoveRow>(
      `SELECT ${MOVE_COLUMNS} FROM rebalances WHERE state IN ('planned', 'requested') ORDER BY created_at, id`,
    )
    for (const row of rows) {
      const move = moveFromRow(row)
      try {
        if (move.state === 'planned') await this.#request(move)
        else if (row.quote) await this.#follow(move, row.quote)
      } catch (error) {
        this.#options.logger.warn('rebalance: move not advanced', { id: move.id, error: String(error) })
      }
    }
  }

  /** Records why a planned move waits (once per reason). */
  async #waiting(move: RebalanceMove, reason: string): Promise<void> {
    if (move.reason === reason) return
    const { rows: changed } = await this.#options.client.query(
      `UPDATE rebalances SET reason = $2, updated_at = $3 WHERE id = $1 AND state = 'planned' RETURNING id`,
      [move.id, reason, this.#now()],
    )
    if (changed.length > 0) this.#options.logger.info('rebalance: move waits', { id: move.id, reason })
  }

  /** Records what a requested move waits for (once per reason). */
  async #noteRequested(move: RebalanceMove, reason: string): Promise<void> {
    if (move.reason === reason) return
    await this.#options.client.query(
      `UPDATE rebalances SET reason = $2, updated_at = $3 WHERE id = $1 AND state = 'requested'`,
      [move.id, reason, this.#now()],
    )
  }

  /** Ends a move as `failed`; `keepsBudget` when its deposit left the origin and did not come back. */
  async #fail(move: RebalanceMove, reason: string, keepsBudget: boolean): Promise<void> {
    const { rows: changed } = await this.#options.client.query(
      `UPDATE rebalances SET state = 'failed', reason = $2, keeps_budget = $3, updated_at = $4
       WHERE id = $1 AND state IN ('planned', 'requested') RETURNING id`,
      [move.id, reason, keepsBudget, this.#now()],
    )
    if (changed.length > 0)
      this.#options.logger.warn('rebalance: move failed', {
        id: move.id,
        requestId: move.requestId,
        reason,
        budgetGivenBack: !keepsBudget,
      })
  }

  /** Quotes a planned move at the other API and queues its first origin step: `planned` to `requested`. */
  async #request(move: RebalanceMove): Promise<void> {
    const blocked = this.#notExecutable(move.fromChainId, move.toChainId)
    const market = this.#market
    if (blocked || !market) return this.#waiting(move, blocked ?? NOT_CONFIGURED)
    const { registry, credentials, execution } = this.#options
    const origin = registry.chain(move.fromChainId)
    const destination = registry.chain(move.toChainId)
    const accountOn = (chain: typeof origin): string =>
      (chain.adapter.filling as NonNullable<typeof chain.adapter.filling>).solverAddress(
        credentials(chain.record.vmType),
      )
    const tradeType = execution?.tradeType ?? 'EXACT_INPUT'
    let quote: QuoteResponse
    try {
      quote = await market.getQuote({
        user: accountOn(origin),
        recipient: accountOn(destination),
        originChainId: move.fromChainId,
        destinationChainId: move.toChainId,
        originCurrency: move.fromCurrency,
        destinationCurrency: move.toCurrency,
        amount: move.amount.toString(),
        tradeType,
      })
    } catch (error) {
      if (error instanceof PontisApiError && !RETRYABLE_STATUSES.has(error.status) && error.status < 500) {
        return this.#fail(
          move,
          `quote refused: ${error.status} ${error.errorCode ?? ''} ${error.message}`,
          false,
        )
      }
      return this.#waiting(move, `quote not answered, asked again next pass: ${String(error)}`)
    }
    const checked = this.#checkQuote(move, quote, tradeType)
    if (typeof checked === 'string') return this.#fail(move, `quote not taken: ${checked}`, false)
    const { requestId, stored } = checked
    const { lifecycle } = this.#options
    const requested = await this.#options.client.transaction(async (tx) => {
      const { rows: changed } = await tx.query(
        `UPDATE rebalances SET state = 'requested', request_id = $2, quote = $3::jsonb, reason = NULL, updated_at = $4
         WHERE id = $1 AND state = 'planned' RETURNING id`,
        [move.id, requestId, JSON.stringify(stored), this.#now()],
      )
      // Another instance requested it first: this quote is dropped, nothing was sent for it.
      if (changed.length === 0) return false
      await this.#queueStep(lifecycle, tx, move, stored, 0)
      return true
    })
    if (requested)
      this.#options.logger.info('rebalance: move requested', {
        id: move.id,
        requestId,
        api: new URL(execution?.apiUrl ?? '').host,
        amountIn: stored.amountIn,
        amountOut: stored.amountOut,
        steps: stored.items.length,
      })
  }

  /** The quote's request id and origin items, or why the move does not take it. */
  #checkQuote(
    move: RebalanceMove,
    quote: QuoteResponse,
    tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT',
  ): { requestId: string; stored: StoredQuote } | string {
    const requestId = quote.steps.find((step) => step.requestId)?.requestId
    if (!requestId) return 'it names no request id'
    const items: Array<Record<string, unknown>> = []
    for (const step of quote.steps) {
      if (step.kind !== 'transaction') return `its step '${step.id}' asks for a signature, not a transaction`
      for (const item of step.items) {
        if (item.status !== 'incomplete') continue
        const data = item.data as unknown as Record<string, unknown>
        if (Number(data.chainId) !== move.fromChainId)
          return `its step '${step.id}' is on chain ${String(data.chainId)}, not on the origin ${move.fromChainId}`
        items.push(data)
      }
    }
    if (items.length === 0) return 'it has nothing to send'
    const amountIn = BigInt(quote.details.currencyIn.amount)
    const amountOut = BigInt(quote.details.currencyOut.amount)
    const maxFee = (move.amount * BigInt(this.#options.execution?.maxFeeBps ?? DEFAULT_MAX_FEE_BPS)) / 10_000n
    const dear =
      tradeType === 'EXACT_INPUT'
        ? amountIn > move.amount || amountOut < move.amount - maxFee
        : amountOut < move.amount || amountIn > move.amount + maxFee
    if (dear)
      return `it takes ${amountIn} in for ${amountOut} out of a move of ${move.amount}, more than the fee allowed (rebalance.maxFeeBps)`
    return { requestId, stored: { items, amountIn: amountIn.toString(), amountOut: amountOut.toString() } }
  }

  async #queueStep(
    lifecycle: LifecycleStore,
    tx: SqlClient,
    move: RebalanceMove,
    stored: StoredQuote,
    index: number,
  ): Promise<void> {
    const payload: RebalanceStepPayload = {
      moveId: move.id,
      index,
      item: stored.items[index] ?? {},
      spend: { currencyId: move.fromCurrency, amount: stored.amountIn },
    }
    await lifecycle.enqueue(
      {
        jobKey: `rebalance:${move.id}:${index}`,
        requestId: null,
        kind: 'rebalance_step',
        chainId: move.fromChainId,
        payload: { ...payload },
      },
      tx,
    )
  }

  /**
   * A requested move: the next origin step once the one before is mined, then the other API's
   * status of the request once the last is; `done` on success, `failed` on refund or failure.
   */
  async #follow(move: RebalanceMove, stored: StoredQuote): Promise<void> {
    const { client, lifecycle } = this.#options
    const { rows } = await client.query<{
      job_key: string
      state: string
      transaction_id: string | null
      reason: string | null
    }>(`SELECT job_key, state, transaction_id, reason FROM solver_jobs WHERE job_key LIKE $1`, [
      `rebalance:${move.id}:%`,
    ])
    const jobs = rows
      .map((row) => ({ ...row, index: Number(row.job_key.slice(row.job_key.lastIndexOf(':') + 1)) }))
      .sort((a, b) => a.index - b.index)
    const sent = jobs.flatMap((job) =>
      job.transaction_id && (job.state === 'broadcast' || job.state === 'confirmed')
        ? [job.transaction_id]
        : [],
    )
    if (sent.join() !== move.inTxHashes.join())
      await client.query('UPDATE rebalances SET in_tx_hashes = $2, updated_at = $3 WHERE id = $1', [
        move.id,
        sent,
        this.#now(),
      ])
    const stopped = jobs.find((job) => job.state === 'failed' || job.state === 'reverted')
    // A step that was never mined moved nothing (the deposit is the last step): the budget comes back.
    if (stopped)
      return this.#fail(
        move,
        `step ${stopped.index} ${stopped.state}: ${stopped.reason ?? 'no reason given'}`,
        false,
      )
    const last = jobs.at(-1)
    if (last?.state !== 'confirmed') return
    if (jobs.length < stored.items.length) {
      await client.transaction((tx) => this.#queueStep(lifecycle, tx, move, stored, jobs.length))
      return
    }
    const market = this.#market
    if (!market || !move.requestId) return
    const status = await market.getStatus(move.requestId).catch(() => undefined)
    if (!status || status.status === 'waiting') {
      // Tell the other API about the deposit (its watcher finds it anyway, only later).
      await market
        .indexTransaction({
          chainId: move.fromChainId,
          txHash: last.transaction_id as string,
          requestId: move.requestId,
        })
        .catch(() => undefined)
      return
    }
    if (status.status === 'success') {
      const { rows: changed } = await client.query(
        `UPDATE rebalances SET state = 'done', received = $2, out_tx_hashes = $3, reason = NULL, updated_at = $4
         WHERE id = $1 AND state = 'requested' RETURNING id`,
        [move.id, stored.amountOut, status.txHashes, this.#now()],
      )
      if (changed.length > 0)
        this.#options.logger.info('rebalance: move done', {
          id: move.id,
          requestId: move.requestId,
          sent: stored.amountIn,
          received: stored.amountOut,
          fromChainId: move.fromChainId,
          toChainId: move.toChainId,
        })
      return
    }
    if (status.status === 'refund')
      return this.#fail(move, `the request was refunded: ${status.failReason}`, false)
    if (status.status === 'failure' || status.status === 'fallback') {
      // A failure is final unless a refund follows: give the other API time to send it.
      const reason = `the request failed: ${status.failReason}`
      if (status.status === 'failure' && this.#now() - status.updatedAt < REFUND_GRACE_MS)
        return this.#noteRequested(move, `${reason}; waiting for its refund`)
      return this.#fail(move, reason, true)
    }
  }
}
