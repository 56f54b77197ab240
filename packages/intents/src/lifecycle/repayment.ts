import { randomBytes } from 'node:crypto'
import type { Logger, Registry, SolverCredentials } from '@pontis/core'
import { appFeesOf } from '../app-fees/ledger.js'
import type { IntentsMetrics } from '../metrics.js'
import type { SqlClient, StoredRequest } from '../store/index.js'
import { HubRepayments } from './hub-repayment.js'
import type { LifecycleStore, SolverJob } from './lifecycle-store.js'

/** What a `repayment` job carries: the legs it pays and the requests they repay. */
export interface RepaymentPayload {
  readonly repaymentId: string
  readonly recipient: string
  readonly legs: ReadonlyArray<{ currency: string; amount: string }>
  readonly requestIds: readonly string[]
}

export type RepaymentState = 'owed' | 'batched' | 'paid' | 'failed'
export type SweepState = 'owed' | 'queued' | 'swept' | 'failed'

/** One line of the operator's view: how many repayments (or sweeps) of a currency are in a state, and their sum. */
export interface BooksLine<State extends string> {
  readonly chainId: number
  readonly currency: string
  readonly state: State
  readonly count: number
  readonly amount: bigint
  /** Sweeps only: the transfer fees the deposit addresses kept (swept lines). */
  readonly fee?: bigint
}

export interface RepaymentOptions {
  readonly registry: Registry
  readonly lifecycle: LifecycleStore
  readonly logger: Logger
  /** The solver's keys (the repayment is sent to its account on each origin chain); never logged. */
  readonly credentials: (vmType: string) => SolverCredentials
  readonly now?: () => number
  /** Requests repaid by one transaction at most. */
  readonly batchSize?: number
  readonly metrics?: Pick<IntentsMetrics, 'repayment'>
  /** The hub path, where the deployment configures one (`repayment.path: "hub"`). */
  readonly hub?: HubRepayments
}

/** Which way a repayment goes: the allocator's own depository payout, or through the hub. */
export type RepaymentPath = 'depository' | 'hub'

/** Not the request's other deposit-address legs: a sweep waits until none of them is open. */
const OPEN_JOB_STATES = "('queued', 'signed', 'broadcast')"

/**
 * Records what a filled request owes the solver, in `tx` (the transaction that moves it to
 * `success`), once: a repayment out of the depository where the origin family can pay one, or the
 * sweep of its deposit address. Keyed by request id, so a second call records nothing.
 */
export async function recordOwed(
  tx: SqlClient,
  registry: Registry,
  request: StoredRequest,
  now: number,
  path: RepaymentPath = 'depository',
): Promise<void> {
  const appFees = appFeesOf(request).reduce((sum, fee) => sum + BigInt(fee.amount), 0n)
  if (request.depositAddress) {
    await tx.query(
      `INSERT INTO deposit_address_sweeps (request_id, chain_id, deposit_address, currency, amount, app_fees,
         created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (request_id) DO NOTHING`,
      [
        request.id,
        request.originChainId,
        request.depositAddress,
        request.originCurrency,
        request.amountIn.toString(),
        appFees.toString(),
        now,
      ],
    )
    return
  }
  const origin = registry.tryChain(request.originChainId)
  if (!origin?.adapter.filling?.signRepayment) return
  // Through the hub only where the hub chain takes relays; otherwise the depository pays directly.
  const via: RepaymentPath = path === 'hub' && HubRepayments.canRepay(registry, origin) ? 'hub' : 'depository'
  // Only a deposit the depository holds is repaid; an overpayment above amountIn goes back to the user.
  // The request's app fees stay in the depository: their recipients claim them from there later.
  const owed = request.amountIn - appFees
  if (owed <= 0n) return
  await tx.query(
    `INSERT INTO repayments (request_id, chain_id, currency, amount, created_at, updated_at, path, hub_step)
     SELECT $1, $2, $3, $4, $5, $5, $6, $7 WHERE EXISTS (
       SELECT 1 FROM deposits WHERE request_id = $1 AND outcome = 'matched' AND confirmed)
     ON CONFLICT (request_id) DO NOTHING`,
    [
      request.id,
      request.originChainId,
      request.originCurrency,
      owed.toString(),
      now,
      via,
      via === 'hub' ? 'deposit' : null,
    ],
  )
}

/** How a repayment or sweep job ended, as the solver settles it. */
export type JobEnd = 'confirmed' | 'reverted' | 'failed'

/**
 * Settles the repayments or the sweep of a finished `repayment`/`sweep` job. A reverted repayment
 * paid nothing, so its requests are owed again (a new batch); one that gave up after it was signed
 * may still land, so it is never re-batched: it stays `failed` for the operator.
 */
export async function settleBooksJob(
  client: SqlClient,
  job: SolverJob,
  end: JobEnd,
  now: number,
  metrics?: Pick<IntentsMetrics, 'repayment'>,
): Promise<void> {
  if (job.kind === 'repayment') {
    const reverted = end === 'reverted'
    const state: RepaymentState = end === 'confirmed' ? 'paid' : reverted ? 'owed' : 'failed'
    // A reverted hub withdrawal paid nothing: its requests stay in it (the hub holds their amount at
    // the withdrawal's address) and its payout is queued again with the same replay key.
    const { rows } = await client.query<{ request_id: string }>(
      `UPDATE repayments SET state = CASE WHEN $3 AND withdrawal_id IS NOT NULL THEN 'batched' ELSE $2 END,
         job_id = CASE WHEN $3 THEN NULL ELSE job_id END,
         transaction_id = CASE WHEN $2 = 'paid' THEN $4 ELSE transaction_id END, updated_at = $5
       WHERE job_id = $1 AND state = 'batched' RETURNING request_id`,
      [job.id, state, reverted, job.transactionId, now],
    )
    await client.query(
      `UPDATE hub_withdrawals SET state = CASE WHEN $2 = 'paid' THEN 'paid' WHEN $3 THEN 'initiated' ELSE 'failed' END,
         attempts = attempts + CASE WHEN $3 THEN 1 ELSE 0 END, job_id = CASE WHEN $3 THEN NULL ELSE job_id END,
         updated_at = $4
       WHERE job_id = $1 AND state = 'withdrawing'`,
      [job.id, state, reverted, now],
    )
    metrics?.repayment('repayment', state, rows.length)
    return
  }
  if (job.kind !== 'sweep') return
  const swept = end === 'confirmed'
  const { rows } = await client.query<{
    request_id: string
    chain_id: string | number
    currency: string
    app_fees: string
    destination: SweepDestination
  }>(
    `UPDATE deposit_address_sweeps SET state = $2, transaction_id = $3,
       swept_amount = CASE WHEN $2 = 'swept' THEN $4::numeric ELSE NULL END,
       fee = CASE WHEN $2 = 'swept' THEN amount - $4::numeric ELSE NULL END, updated_at = $5
     WHERE job_id = $1 AND state = 'queued'
     RETURNING request_id, chain_id, currency, app_fees::text AS app_fees, destination`,
    [job.id, swept ? 'swept' : 'failed', job.transactionId, (job.amount ?? 0n).toString(), now],
  )
  metrics?.repayment('sweep', swept ? 'swept' : 'failed', rows.length)
  if (!swept) return
  for (const row of rows) {
    if (row.destination !== 'depository') continue
    // Swept to the depository (the request had app fees): the solver is repaid what arrived there
    // less the app fees, which stay for their claims, in the transaction that records the sweep.
    const owed = (job.amount ?? 0n) - BigInt(row.app_fees)
    if (owed <= 0n) continue
    await client.query(
      `INSERT INTO repayments (request_id, chain_id, currency, amount, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (request_id) DO NOTHING`,
      [row.request_id, Number(row.chain_id), row.currency, owed.toString(), now],
    )
  }
}

/**
 * Where a deposit address is swept: to the solver (its repayment), or, for a request with app fees
 * on a chain whose depository can repay, to the depository, which pays the fees' claims and repays
 * the solver the rest.
 */
export type SweepDestination = 'solver' | 'depository'

/**
 * Closes the solver's books: batches what filled requests owe it into repayment jobs (one
 * transaction per origin chain and batch, paid out of the depository to the solver), and queues the
 * sweep of each filled request's deposit address to the solver. The solver works those jobs like
 * any other: signed once and stored before broadcast, so a crash at any step pays nothing twice.
 */
export class Repayments {
  readonly #options: RepaymentOptions
  readonly #now: () => number

  constructor(options: RepaymentOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** One pass: batch owed repayments per origin chain, queue owed sweeps. Answers the jobs queued. */
  async tick(): Promise<number> {
    const { rows } = await this.#client.query<{ chain_id: string | number }>(
      `SELECT DISTINCT chain_id FROM repayments WHERE state = 'owed' AND path = 'depository'`,
    )
    let queued = 0
    for (const row of rows) {
      try {
        queued += await this.#batch(Number(row.chain_id))
      } catch (error) {
        this.#options.logger.warn('repayment batch failed', { chainId: row.chain_id, error: String(error) })
      }
    }
    const hub = this.#options.hub ? await this.#options.hub.tick() : 0
    return queued + hub + (await this.#queueSweeps())
  }

  /** The operator's view: repayments and sweeps by chain, currency and state, with sums. */
  async summary(): Promise<{
    repayments: BooksLine<RepaymentState>[]
    sweeps: BooksLine<SweepState>[]
  }> {
    type Row = {
      chain_id: string | number
      currency: string
      state: string
      count: string | number
      amount: string
    }
    const lines = <State extends string>(rows: Row[]) =>
      rows.map((row) => ({
        chainId: Number(row.chain_id),
        currency: row.currency,
        state: row.state as State,
        count: Number(row.count),
        amount: BigInt(row.amount),
      }))
    const repayments = await this.#client.query<Row>(
      `SELECT chain_id, currency, state, count(*) AS count, sum(amount)::text AS amount FROM repayments
       GROUP BY chain_id, currency, state ORDER BY chain_id, currency, state`,
    )
    const sweeps = await this.#client.query<Row & { fee: string | null }>(
      `SELECT chain_id, currency, state, count(*) AS count, sum(amount)::text AS amount, sum(fee)::text AS fee
       FROM deposit_address_sweeps GROUP BY chain_id, currency, state ORDER BY chain_id, currency, state`,
    )
    return {
      repayments: lines<RepaymentState>(repayments.rows),
      sweeps: lines<SweepState>(sweeps.rows).map((line, index) => {
        const fee = sweeps.rows[index]?.fee
        return fee === null || fee === undefined ? line : { ...line, fee: BigInt(fee) }
      }),
    }
  }

  get #client(): SqlClient {
    return this.#options.lifecycle.requests.client
  }

  #filling(chainId: number) {
    const chain = this.#options.registry.tryChain(chainId)
    const filling = chain?.adapter.filling
    return chain && filling ? { chain, filling } : undefined
  }

  /** Takes the oldest owed repayments of a chain (other workers skip them) into one new job. */
  async #batch(chainId: number): Promise<number> {
    const found = this.#filling(chainId)
    if (!found?.filling.signRepayment) return 0
    const { chain, filling } = found
    const recipient = filling.solverAddress(this.#options.credentials(chain.record.vmType))
    const maxLegs = filling.maxRepaymentLegs ?? 1
    const { lifecycle } = this.#options
    return lifecycle.transaction(async (tx) => {
      const { rows } = await tx.query<{ request_id: string; currency: string; amount: string }>(
        `SELECT request_id, currency, amount FROM repayments WHERE state = 'owed' AND path = 'depository'
           AND chain_id = $1 ORDER BY created_at, request_id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [chainId, this.#options.batchSize ?? 50],
      )
      const legs = new Map<string, bigint>()
      const requestIds: string[] = []
      for (const row of rows) {
        if (!legs.has(row.currency) && legs.size >= maxLegs) continue
        legs.set(row.currency, (legs.get(row.currency) ?? 0n) + BigInt(row.amount))
        requestIds.push(row.request_id)
      }
      if (requestIds.length === 0) return 0
      // A fresh id per batch: a batch is created once (in this transaction) and its signed bytes are
      // stored before broadcast, so the id never needs re-deriving.
      const repaymentId = `0x${randomBytes(32).toString('hex')}`
      const jobKey = `repayment:${repaymentId}`
      const payload: RepaymentPayload = {
        repaymentId,
        recipient,
        legs: [...legs].map(([currency, amount]) => ({ currency, amount: amount.toString() })),
        requestIds,
      }
      await lifecycle.enqueue(
        { jobKey, requestId: null, kind: 'repayment', chainId, payload: { ...payload } },
        tx,
      )
      await tx.query(
        `UPDATE repayments SET state = 'batched', job_id = (SELECT id FROM solver_jobs WHERE job_key = $1),
           updated_at = $3 WHERE request_id = ANY($2)`,
        [jobKey, requestIds, this.#now()],
      )
      this.#options.metrics?.repayment('repayment', 'batched', requestIds.length)
      return 1
    })
  }

  /** Queues the sweep of each owed deposit address whose other legs (an excess refund) are done. */
  async #queueSweeps(): Promise<number> {
    const { lifecycle } = this.#options
    return lifecycle.transaction(async (tx) => {
      const { rows } = await tx.query<{
        request_id: string
        chain_id: string | number
        currency: string
        amount: string
        app_fees: string
      }>(
        `SELECT s.request_id, s.chain_id, s.currency, s.amount, s.app_fees::text AS app_fees
         FROM deposit_address_sweeps s
         WHERE s.state = 'owed' AND NOT EXISTS (
           SELECT 1 FROM solver_jobs j WHERE j.request_id = s.request_id AND j.state IN ${OPEN_JOB_STATES})
         ORDER BY s.created_at LIMIT 50 FOR UPDATE OF s SKIP LOCKED`,
      )
      let queued = 0
      for (const row of rows) {
        const chainId = Number(row.chain_id)
        const found = this.#filling(chainId)
        if (!found) continue
        const depository = found.chain.record.protocol?.v2?.depository
        const destination: SweepDestination =
          BigInt(row.app_fees) > 0n && depository && found.filling.signRepayment ? 'depository' : 'solver'
        const recipient =
          destination === 'depository' && depository
            ? depository
            : found.filling.solverAddress(this.#options.credentials(found.chain.record.vmType))
        const jobKey = `sweep:${row.request_id}`
        await lifecycle.enqueue(
          {
            jobKey,
            requestId: row.request_id,
            kind: 'sweep',
            chainId,
            payload: {
              recipient,
              currency: row.currency,
              amount: row.amount,
              source: { kind: 'depositAddress', requestId: row.request_id },
              reason: 'SWEEP',
            },
          },
          tx,
        )
        await tx.query(
          `UPDATE deposit_address_sweeps SET state = 'queued', job_id = (SELECT id FROM solver_jobs WHERE job_key = $1),
             destination = $4, updated_at = $3 WHERE request_id = $2`,
          [jobKey, row.request_id, this.#now(), destination],
        )
        this.#options.metrics?.repayment('sweep', 'queued', 1)
        queued++
      }
      return queued
    })
  }
}
