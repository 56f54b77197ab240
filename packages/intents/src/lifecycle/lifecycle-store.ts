import { type CoinReservations, canonicalId, type IntentsApi } from '@pontis/core'
import { notifyStatus } from '../events/index.js'
import type { IntentsMetrics } from '../metrics.js'
import type { RequestStore, SqlClient, StoredRequest } from '../store/index.js'
import { enqueueStatusWebhook } from '../webhooks/outbox.js'
import { canTransition, type RequestStatus } from './state-machine.js'

export interface StatusChange {
  readonly to: RequestStatus
  readonly inTxHash?: string
  readonly txHash?: string
  readonly failReason?: IntentsApi.FailReason
  readonly refundFailReason?: IntentsApi.RefundFailReason
  /** Merged into the record's details (decoded revert data, refund amounts…). */
  readonly details?: Readonly<Record<string, unknown>>
  /** The deposit that moved the request (stored with it). */
  readonly deposit?: Readonly<Record<string, unknown>>
}

export interface TransitionResult {
  /** The request after the call (unchanged when refused). */
  readonly request: StoredRequest
  /** Something was written (a new status, or new hashes on the same status). */
  readonly changed: boolean
  /** The move was not allowed from the request's status. */
  readonly refused: boolean
}

export type JobKind =
  | 'fill'
  | 'refund'
  | 'excess_refund'
  | 'orphan_refund'
  | 'submit_deposit'
  /** Pays the solver back out of the depository for several filled requests (repayments table). */
  | 'repayment'
  /** Moves a filled request's deposit to the solver from its deposit address (deposit_address_sweeps). */
  | 'sweep'
  /** Hands an oracle execution to the settlement hub (the hub path of repayment). */
  | 'hub_relay'
  /** Sends one origin step of a rebalancing move's quote from the solver's account (rebalances). */
  | 'rebalance_step'
  | 'app_fee_claim'
export type JobState = 'queued' | 'signed' | 'broadcast' | 'confirmed' | 'reverted' | 'failed'

export interface SolverJob {
  readonly id: number
  readonly jobKey: string
  readonly requestId: string | null
  readonly kind: JobKind
  readonly chainId: number
  readonly payload: Record<string, unknown>
  readonly state: JobState
  readonly transactionId: string | null
  readonly raw: string | null
  readonly amount: bigint | null
  readonly attempts: number
  /** When it was queued (Unix ms). */
  readonly createdAt: number
  /** Earlier transactions of the job, replaced by the current one (same nonce, lower fees), oldest first. */
  readonly replaced: readonly { readonly transactionId: string; readonly raw: string }[]
  /** When the current transaction was first broadcast (Unix ms); null before. */
  readonly broadcastAt: number | null
  /** The last block height the chain may include the current transaction at, where the family bounds it. */
  readonly validThrough: bigint | null
}

export interface NewJob {
  readonly jobKey: string
  readonly requestId: string | null
  readonly kind: JobKind
  readonly chainId: number
  readonly payload: Readonly<Record<string, unknown>>
  /** Do not start before this time (Unix ms). */
  readonly notBefore?: number
}

export interface RecordedDeposit {
  readonly chainId: number
  readonly transactionId: string
  readonly index: number
  readonly depositId: string
  readonly depositor: string
  readonly currency: string
  readonly amount: bigint
  readonly blockNumber?: bigint
  readonly requestId: string | null
  readonly outcome: 'matched' | 'orphaned' | 'double_spend' | 'too_low' | 'wrong_currency' | 'late'
}

interface JobRow {
  id: string | number
  job_key: string
  request_id: string | null
  kind: JobKind
  chain_id: number
  payload: Record<string, unknown>
  state: JobState
  transaction_id: string | null
  raw: string | null
  amount: string | null
  attempts: number
  created_at: string | number
  replaced: Array<{ transactionId: string; raw: string }>
  broadcast_at: string | number | null
  valid_through: string | number | null
}

const JOB_COLUMNS =
  'id, job_key, request_id, kind, chain_id, payload, state, transaction_id, raw, amount, attempts, created_at, replaced, broadcast_at, valid_through'

function jobFromRow(row: JobRow): SolverJob {
  return {
    id: Number(row.id),
    jobKey: row.job_key,
    requestId: row.request_id,
    kind: row.kind,
    chainId: row.chain_id,
    payload: row.payload,
    state: row.state,
    transactionId: row.transaction_id,
    raw: row.raw,
    amount: row.amount === null ? null : BigInt(row.amount),
    attempts: row.attempts,
    createdAt: Number(row.created_at),
    replaced: row.replaced ?? [],
    broadcastAt: row.broadcast_at === null ? null : Number(row.broadcast_at),
    validThrough:
      row.valid_through === null || row.valid_through === undefined ? null : BigInt(row.valid_through),
  }
}

/**
 * The lifecycle's writes on top of the request store: status transitions (row-locked, idempotent,
 * announced with NOTIFY in the same transaction), deposits, scan cursors, solver jobs with leases
 * and write-ahead signed transactions, and nonce allocation.
 */
export class LifecycleStore {
  readonly #store: RequestStore
  readonly #now: () => number
  readonly #metrics: Pick<IntentsMetrics, 'transitioned'> | undefined

  constructor(
    store: RequestStore,
    now: () => number = Date.now,
    metrics?: Pick<IntentsMetrics, 'transitioned'>,
  ) {
    this.#store = store
    this.#now = now
    this.#metrics = metrics
  }

  get requests(): RequestStore {
    return this.#store
  }

  get #client(): SqlClient {
    return this.#store.client
  }

  /** Runs `fn` in one database transaction. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return this.#client.transaction(fn)
  }

  /**
   * Moves a request, or records new hashes on its current status. Locks the row, checks the
   * transition table, writes, and NOTIFYs in the same transaction (delivered on commit).
   */
  async transition(requestId: string, change: StatusChange, tx?: SqlClient): Promise<TransitionResult> {
    const run = async (client: SqlClient): Promise<TransitionResult> => {
      const id = requestId.toLowerCase()
      const { rows } = await client.query<{
        status: RequestStatus
        in_tx_hashes: string[]
        tx_hashes: string[]
        updated_at: string | number
      }>('SELECT status, in_tx_hashes, tx_hashes, updated_at FROM requests WHERE id = $1 FOR UPDATE', [id])
      const row = rows[0]
      if (!row) throw new Error(`request ${id} does not exist`)
      const same = row.status === change.to
      if (!same && !canTransition(row.status, change.to)) {
        return { request: (await this.#getWith(client, id)) as StoredRequest, changed: false, refused: true }
      }
      const inTxHashes =
        change.inTxHash && !row.in_tx_hashes.includes(change.inTxHash)
          ? [...row.in_tx_hashes, change.inTxHash]
          : row.in_tx_hashes
      const txHashes =
        change.txHash && !row.tx_hashes.includes(change.txHash)
          ? [...row.tx_hashes, change.txHash]
          : row.tx_hashes
      const newHashes = inTxHashes !== row.in_tx_hashes || txHashes !== row.tx_hashes
      if (same && !newHashes && change.details === undefined) {
        return { request: (await this.#getWith(client, id)) as StoredRequest, changed: false, refused: false }
      }
      await client.query(
        `UPDATE requests SET status = $2, in_tx_hashes = $3, tx_hashes = $4,
           fail_reason = COALESCE($5, fail_reason), refund_fail_reason = COALESCE($6, refund_fail_reason),
           details = CASE WHEN $7::jsonb IS NULL THEN details ELSE COALESCE(details, '{}'::jsonb) || $7::jsonb END,
           deposit = COALESCE($8::jsonb, deposit), updated_at = $9
         WHERE id = $1`,
        [
          id,
          change.to,
          inTxHashes,
          txHashes,
          change.failReason ?? null,
          change.refundFailReason ?? null,
          change.details === undefined ? null : JSON.stringify(change.details),
          change.deposit === undefined ? null : JSON.stringify(change.deposit),
          this.#now(),
        ],
      )
      await notifyStatus(client, id)
      const request = (await this.#getWith(client, id)) as StoredRequest
      // Same transaction as the change: the event and the status commit together, or neither does.
      if (!same) {
        await enqueueStatusWebhook(client, request, this.#now())
        this.#metrics?.transitioned(
          row.status,
          change.to,
          (this.#now() - Number(row.updated_at)) / 1000,
          change.failReason,
        )
      }
      return { request, changed: true, refused: false }
    }
    return tx ? run(tx) : this.#client.transaction(run)
  }

  // Inside a transaction the committed view would miss our own write: read through the same client.
  #getWith(client: SqlClient, id: string): Promise<StoredRequest | undefined> {
    return this.#store.getRequestWith(client, id)
  }

  /** The matched deposit of a request, as stored with its transition to `pending`. */
  async depositOf(requestId: string): Promise<Record<string, unknown> | null> {
    const { rows } = await this.#client.query<{ deposit: Record<string, unknown> | null }>(
      'SELECT deposit FROM requests WHERE id = $1',
      [requestId.toLowerCase()],
    )
    return rows[0]?.deposit ?? null
  }

  /** Records a deposit once; returns false when it was already recorded. */
  async recordDeposit(deposit: RecordedDeposit, tx?: SqlClient): Promise<boolean> {
    const { rows } = await (tx ?? this.#client).query<{ chain_id: number }>(
      `INSERT INTO deposits (chain_id, transaction_id, log_index, deposit_id, depositor, currency, amount, block_number,
         request_id, outcome, seen_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (chain_id, transaction_id, log_index) DO NOTHING RETURNING chain_id`,
      [
        deposit.chainId,
        canonicalId(deposit.transactionId),
        deposit.index,
        deposit.depositId.toLowerCase(),
        deposit.depositor,
        deposit.currency,
        deposit.amount.toString(),
        deposit.blockNumber === undefined ? null : deposit.blockNumber.toString(),
        deposit.requestId,
        deposit.outcome,
        this.#now(),
      ],
    )
    return rows.length > 0
  }

  /** Deposits already recorded for a deposit id (to spot a second deposit on the same id). */
  async depositsFor(
    depositId: string,
    tx?: SqlClient,
  ): Promise<Array<{ transactionId: string; index: number; chainId: number }>> {
    const { rows } = await (tx ?? this.#client).query<{
      transaction_id: string
      log_index: number
      chain_id: number
    }>(
      `SELECT transaction_id, log_index, chain_id FROM deposits WHERE deposit_id = $1 AND outcome = 'matched'`,
      [depositId.toLowerCase()],
    )
    return rows.map((row) => ({
      transactionId: row.transaction_id,
      index: row.log_index,
      chainId: row.chain_id,
    }))
  }

  /** True when the deposit transaction was acted on (its confirmations reached). */
  async isConfirmedDeposit(chainId: number, transactionId: string): Promise<boolean> {
    const { rows } = await this.#client.query<{ confirmed: boolean }>(
      'SELECT bool_or(confirmed) AS confirmed FROM deposits WHERE chain_id = $1 AND transaction_id = $2',
      [chainId, transactionId],
    )
    return rows[0]?.confirmed === true
  }

  async cursor(chainId: number): Promise<string | undefined> {
    const { rows } = await this.#client.query<{ cursor: string }>(
      'SELECT cursor FROM chain_cursors WHERE chain_id = $1',
      [chainId],
    )
    return rows[0]?.cursor
  }

  async saveCursor(chainId: number, cursor: string): Promise<void> {
    await this.#client.query(
      `INSERT INTO chain_cursors (chain_id, cursor, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (chain_id) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = EXCLUDED.updated_at`,
      [chainId, cursor, this.#now()],
    )
  }

  /** Queues a job once (by `jobKey`); returns false when it already existed. */
  async enqueue(job: NewJob, tx?: SqlClient): Promise<boolean> {
    const now = this.#now()
    const { rows } = await (tx ?? this.#client).query<{ id: string }>(
      `INSERT INTO solver_jobs (job_key, request_id, kind, chain_id, payload, not_before, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $7) ON CONFLICT (job_key) DO NOTHING RETURNING id`,
      [
        job.jobKey,
        job.requestId,
        job.kind,
        job.chainId,
        JSON.stringify(job.payload),
        job.notBefore ?? 0,
        now,
      ],
    )
    return rows.length > 0
  }

  /**
   * Takes up to `limit` open jobs whose lease is free or expired, leasing them to `owner`.
   * `SKIP LOCKED` lets several workers claim concurrently without waiting on each other.
   */
  async claimJobs(owner: string, leaseMs: number, limit: number): Promise<SolverJob[]> {
    const now = this.#now()
    const { rows } = await this.#client.query<JobRow>(
      `UPDATE solver_jobs SET lease_owner = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3
       WHERE id IN (
         SELECT id FROM solver_jobs
         WHERE state IN ('queued', 'signed', 'broadcast') AND not_before <= $3
           AND (lease_until IS NULL OR lease_until < $3)
         ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING ${JOB_COLUMNS}`,
      [owner, now + leaseMs, now, limit],
    )
    return rows.map(jobFromRow).sort((a, b) => a.id - b.id)
  }

  /**
   * Stores a job's signed transaction, only if `owner` still holds the lease and nothing was stored
   * before. The caller broadcasts only after this returns true.
   */
  async storeSigned(
    jobId: number,
    owner: string,
    signed: { transactionId: string; raw: string; amount: bigint; validThrough?: bigint },
    tx?: SqlClient,
  ): Promise<boolean> {
    const { rows } = await (tx ?? this.#client).query<{ id: string }>(
      `UPDATE solver_jobs SET state = 'signed', transaction_id = $3, raw = $4, amount = $5, updated_at = $6, valid_through = $7
       WHERE id = $1 AND lease_owner = $2 AND lease_until >= $6 AND raw IS NULL RETURNING id`,
      [
        jobId,
        owner,
        canonicalId(signed.transactionId),
        signed.raw,
        signed.amount.toString(),
        this.#now(),
        signed.validThrough?.toString() ?? null,
      ],
    )
    return rows.length > 0
  }

  /** Notes the first broadcast of the job's current transaction (kept by later re-broadcasts). */
  async markBroadcast(jobId: number): Promise<void> {
    await this.#client.query(
      'UPDATE solver_jobs SET broadcast_at = COALESCE(broadcast_at, $2) WHERE id = $1',
      [jobId, this.#now()],
    )
  }

  /**
   * Makes `replacement` the job's current transaction, the current one joining `replaced`, before
   * the replacement is broadcast (write-ahead, as {@link storeSigned}). Only while `owner` holds the
   * lease and the job still follows `current`.
   */
  async storeReplacement(
    jobId: number,
    owner: string,
    current: string,
    replacement: { transactionId: string; raw: string; validThrough?: bigint },
  ): Promise<boolean> {
    const { rows } = await this.#client.query<{ id: string }>(
      `UPDATE solver_jobs SET replaced = replaced || jsonb_build_array(jsonb_build_object('transactionId', transaction_id, 'raw', raw)),
         transaction_id = $4, raw = $5, broadcast_at = NULL, updated_at = $6, valid_through = $7
       WHERE id = $1 AND lease_owner = $2 AND lease_until >= $6 AND transaction_id = $3 RETURNING id`,
      [
        jobId,
        owner,
        canonicalId(current),
        canonicalId(replacement.transactionId),
        replacement.raw,
        this.#now(),
        replacement.validThrough?.toString() ?? null,
      ],
    )
    return rows.length > 0
  }

  /** The job follows `earlier` again: an earlier transaction of it was mined after all. */
  async adoptReplaced(jobId: number, earlier: { transactionId: string; raw: string }): Promise<void> {
    await this.#client.query(
      'UPDATE solver_jobs SET transaction_id = $2, raw = $3, updated_at = $4, valid_through = NULL WHERE id = $1',
      [jobId, canonicalId(earlier.transactionId), earlier.raw, this.#now()],
    )
  }

  async setJobState(
    jobId: number,
    state: JobState,
    extra: {
      reason?: string
      details?: Readonly<Record<string, unknown>>
      releaseLease?: boolean
      notBefore?: number
    } = {},
    tx?: SqlClient,
  ): Promise<void> {
    await (tx ?? this.#client).query(
      `UPDATE solver_jobs SET state = $2, reason = COALESCE($3, reason), details = COALESCE($4::jsonb, details),
         lease_owner = CASE WHEN $5 THEN NULL ELSE lease_owner END,
         lease_until = CASE WHEN $5 THEN NULL ELSE lease_until END,
         not_before = COALESCE($6, not_before), updated_at = $7
       WHERE id = $1`,
      [
        jobId,
        state,
        extra.reason ?? null,
        extra.details === undefined ? null : JSON.stringify(extra.details),
        extra.releaseLease ?? false,
        extra.notBefore ?? null,
        this.#now(),
      ],
    )
  }

  async jobById(id: number): Promise<SolverJob | undefined> {
    const { rows } = await this.#client.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM solver_jobs WHERE id = $1`,
      [id],
    )
    return rows[0] ? jobFromRow(rows[0]) : undefined
  }

  /** Removes a job that never signed anything (a permit that failed its checks), so it can be resubmitted. */
  async deleteJob(id: number): Promise<void> {
    await this.#client.query('DELETE FROM solver_jobs WHERE id = $1 AND raw IS NULL', [id])
  }

  /** Jobs of a request (tests and status details). */
  async jobsOf(requestId: string): Promise<SolverJob[]> {
    const { rows } = await this.#client.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM solver_jobs WHERE request_id = $1 ORDER BY id`,
      [requestId.toLowerCase()],
    )
    return rows.map(jobFromRow)
  }

  /**
   * The nonce to sign with: the larger of the chain's next nonce and ours, reserved in `tx` (the
   * transaction that also stores the signed bytes), so concurrent solvers never share one.
   */
  async allocateNonce(tx: SqlClient, chainId: number, address: string, chainNext: bigint): Promise<bigint> {
    await tx.query(
      `INSERT INTO solver_nonces (chain_id, address, next_nonce) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [chainId, canonicalId(address), chainNext.toString()],
    )
    const { rows } = await tx.query<{ next_nonce: string }>(
      'SELECT next_nonce FROM solver_nonces WHERE chain_id = $1 AND address = $2 FOR UPDATE',
      [chainId, canonicalId(address)],
    )
    const stored = BigInt(rows[0]?.next_nonce ?? '0')
    const nonce = stored > chainNext ? stored : chainNext
    await tx.query('UPDATE solver_nonces SET next_nonce = $3 WHERE chain_id = $1 AND address = $2', [
      chainId,
      canonicalId(address),
      (nonce + 1n).toString(),
    ])
    return nonce
  }

  /**
   * The coin holds of chain `chainId` as a family sees them while signing job `jobId` in `tx` (the
   * transaction that also stores the signed bytes): shared by every worker on the database. Two
   * signings racing for a coin serialise on its row; the later one finds it held and chooses again.
   */
  coinReservations(tx: SqlClient, chainId: number, jobId: number): CoinReservations {
    const now = this.#now
    return {
      async held(coinIds) {
        if (coinIds.length === 0) return new Set()
        const { rows } = await tx.query<{ coin_id: string }>(
          `SELECT coin_id FROM solver_coin_reservations
           WHERE chain_id = $1 AND held_until >= $2 AND coin_id = ANY($3::text[])`,
          [chainId, now(), [...coinIds]],
        )
        return new Set(rows.map((row) => row.coin_id))
      },
      async hold(coinIds, ttlMs) {
        if (coinIds.length === 0) return true
        const at = now()
        await tx.query('DELETE FROM solver_coin_reservations WHERE chain_id = $1 AND held_until < $2', [
          chainId,
          at,
        ])
        const { rows } = await tx.query<{ coin_id: string }>(
          `INSERT INTO solver_coin_reservations (chain_id, coin_id, held_until, job_id)
           SELECT $1, coin, $2, $3 FROM unnest($4::text[]) AS coin
           ON CONFLICT (chain_id, coin_id) DO UPDATE
             SET held_until = EXCLUDED.held_until, job_id = EXCLUDED.job_id
             WHERE solver_coin_reservations.held_until < $5 OR solver_coin_reservations.job_id = EXCLUDED.job_id
           RETURNING coin_id`,
          [chainId, at + ttlMs, jobId, [...coinIds], at],
        )
        if (rows.length === coinIds.length) return true
        await tx.query(
          'DELETE FROM solver_coin_reservations WHERE chain_id = $1 AND job_id = $2 AND coin_id = ANY($3::text[])',
          [chainId, jobId, rows.map((row) => row.coin_id)],
        )
        return false
      },
    }
  }

  /** Waiting requests with a deposit address, for the deposit-address watcher. */
  async waitingWithDepositAddress(limit: number): Promise<StoredRequest[]> {
    return this.#store.listRequests(`status = 'waiting' AND deposit_address IS NOT NULL`, [], limit)
  }

  /** Requests past their TTL still waiting, whose deposit a reorganisation removed. */
  async expiredWithReorgedDeposit(now: number, limit: number): Promise<StoredRequest[]> {
    return this.#store.listRequests(
      `status = 'waiting' AND expires_at < $1 AND details -> 'depositReorged' IS NOT NULL`,
      [now],
      limit,
    )
  }

  /** Same-chain swaps the user executes (`quote.kind` = `self-swap`) not settled yet. */
  async openSelfSwaps(limit: number): Promise<StoredRequest[]> {
    return this.#store.listRequests(
      `status IN ('waiting', 'pending') AND quote ->> 'kind' = 'self-swap'`,
      [],
      limit,
    )
  }

  /** Requests past their TTL still waiting for a deposit. */
  async expiredWaiting(now: number, limit: number): Promise<StoredRequest[]> {
    return this.#store.listRequests(`status = 'waiting' AND expires_at < $1`, [now], limit)
  }
}
