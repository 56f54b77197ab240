import { createHash, randomUUID } from 'node:crypto'
import {
  type DestinationAuthorization,
  type FillingCapability,
  type IntentsApi,
  type Logger,
  PontisError,
  type RegisteredChain,
  type Registry,
  type SignedTransaction,
  type SigningOptions,
  type SolverCredentials,
  settlementConfirmations,
} from '@pontis/core'
import { AppFeeLedger, accrueAppFees } from '../app-fees/ledger.js'
import type { IntentsMetrics } from '../metrics.js'
import { loadDestinationSwap, type StoredDestinationSwap } from '../quote/destination-swap.js'
import type { SqlClient } from '../store/index.js'
import { refundRecipient } from './indexer.js'
import type { JobState, LifecycleStore, SolverJob } from './lifecycle-store.js'
import { type RepaymentPath, type RepaymentPayload, recordOwed, settleBooksJob } from './repayment.js'

export interface SolverOptions {
  readonly registry: Registry
  readonly lifecycle: LifecycleStore
  readonly logger: Logger
  /** The solver's keys, one set for every family or per family (`vmType`); never logged. */
  readonly credentials: SolverCredentials | ((vmType: string) => SolverCredentials)
  /** This worker's name in job leases. */
  readonly owner?: string
  readonly leaseMs?: number
  /** Delay before re-checking a broadcast transaction. */
  readonly pollMs?: number
  /** Attempts before a job that keeps failing is given up. */
  readonly maxAttempts?: number
  /**
   * How long a broadcast transaction may stay unmined (pending, or dropped and refused again)
   * before it is replaced with higher fees, on chains that can ({@link FillingCapability.replace}).
   * Default 60 s.
   */
  readonly replaceAfterMs?: number
  readonly now?: () => number
  /**
   * Crash-test hook: called at named points of a job of `kind` (`after-sign`: the signed bytes are
   * stored but not broadcast; `after-send`: broadcast, not yet recorded on the job;
   * `broadcast-recorded`: broadcast and recorded on the job, the request not yet moved to
   * `submitted`; `after-broadcast`: broadcast but not yet confirmed; `fill-recorded`: a confirmed
   * fill's success, what it is owed and its app fees written, not yet committed). Tests kill the
   * process there.
   */
  readonly failpoint?: (point: SolverFailpoint, kind: SolverJob['kind']) => void
  /** Counts finished jobs, fill latency and repayments settled. */
  readonly metrics?: Pick<IntentsMetrics, 'jobFinished' | 'repayment'>
  /** How fills are repaid (`repayment.path` of the solver settings). Default `depository`. */
  readonly repaymentPath?: RepaymentPath
}

export type SolverFailpoint =
  | 'after-sign'
  | 'after-send'
  | 'broadcast-recorded'
  | 'after-broadcast'
  | 'fill-recorded'

class LeaseLost extends Error {}

interface FillPayload {
  recipient: string
  currency: string
  amount: string
  calls: Array<{ to: string; value: string; data: string }>
  topupNativeAmount: string
  callsGasLimit?: string
  /** The request's `authorizationList`, passed to the family as the quote took it. */
  authorizations?: DestinationAuthorization[]
  /** The destination swap the fill runs (the quote's record of it). */
  destinationSwap?: StoredDestinationSwap
}
interface RefundPayload {
  recipient: string
  currency: string
  amount: string
  source: { kind: 'depository' } | { kind: 'depositAddress'; requestId: string }
  reason: string
}
/** An app fee payout: a transfer out of the depository, like a refund, settling its claim. */
interface AppFeeClaimPayload extends RefundPayload {
  claimId: string
}
/** An oracle execution to relay to the hub's oracle contract. */
interface HubRelayPayload {
  contract: string
  idempotencyKey: string
  actions: string[]
  signatures: Array<{ signer: string; signature: string }>
}
/** One origin step item of a rebalancing move's quote at another intent API (lifecycle/rebalance.ts). */
export interface RebalanceStepPayload {
  moveId: string
  /** Position among the quote's transaction items, sent one after the other. */
  index: number
  item: Record<string, unknown>
  /** The most the item may spend: the move's currency on its origin and the quote's amount in. */
  spend: { currencyId: string; amount: string }
}
interface PermitPayload {
  depositor: string
  currency: string
  amount: string
  validAfter: string
  validBefore: string
  signature: string
}

/**
 * The reference solver: works the job queue (fills, refunds, permit deposits) under leases, signs
 * each transaction once and stores it before broadcasting (re-broadcasting the same bytes after a
 * crash), follows it to a final outcome and moves the request. Keys stay in memory, never in logs.
 */
export class Solver {
  readonly #options: SolverOptions
  readonly #owner: string
  readonly #now: () => number
  readonly #appFees: AppFeeLedger
  #stopping = false

  constructor(options: SolverOptions) {
    this.#options = options
    this.#owner = options.owner ?? `solver-${randomUUID()}`
    this.#now = options.now ?? Date.now
    this.#appFees = new AppFeeLedger(options.lifecycle.requests.client, this.#now)
  }

  get owner(): string {
    return this.#owner
  }

  /** One pass: claim open jobs and move each one step forward. */
  async tick(limit = 20): Promise<number> {
    if (this.#stopping) return 0
    const jobs = await this.#options.lifecycle.claimJobs(this.#owner, this.#options.leaseMs ?? 30_000, limit)
    for (const job of jobs) {
      // A shutdown lets the step in progress finish; the jobs not started are released.
      if (this.#stopping) break
      await this.#step(job)
    }
    return jobs.length
  }

  /** Claims nothing more, and ends the pass in progress after its current job (shutdown). */
  stop(): void {
    this.#stopping = true
  }

  /**
   * Gives back every lease this solver holds, so another instance takes the jobs at once instead
   * of after the lease expires. Only once no step runs (after {@link stop} and the pass ended): a
   * job released mid-step could be worked by two instances.
   * @returns how many jobs were released.
   */
  async releaseLeases(): Promise<number> {
    const { rows } = await this.#options.lifecycle.requests.client.query<{ id: string }>(
      'UPDATE solver_jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 RETURNING id',
      [this.#owner],
    )
    return rows.length
  }

  /** Runs one job now (the execute API submits a permit deposit this way), up to its broadcast. */
  async runNow(jobKey: string): Promise<SolverJob | undefined> {
    const { rows } = await this.#options.lifecycle.requests.client.query<{ id: string }>(
      `UPDATE solver_jobs SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
       WHERE job_key = $3 AND state IN ('queued', 'signed') AND (lease_until IS NULL OR lease_until < $4) RETURNING id`,
      [this.#owner, this.#now() + (this.#options.leaseMs ?? 30_000), jobKey, this.#now()],
    )
    if (!rows[0]) return undefined
    const id = Number(rows[0].id)
    const claimed = await this.#options.lifecycle.jobById(id)
    if (claimed) await this.#step(claimed, { throwSigningErrors: true })
    return this.#options.lifecycle.jobById(id)
  }

  #filling(chain: RegisteredChain): FillingCapability {
    const filling = chain.adapter.filling
    if (!filling)
      throw new PontisError(
        'UNSUPPORTED_CHAIN',
        `${chain.record.displayName} has no solver (filling) capability.`,
      )
    return filling
  }

  async #step(job: SolverJob, options: { throwSigningErrors?: boolean } = {}): Promise<void> {
    const { lifecycle, logger } = this.#options
    try {
      if (job.state === 'queued') {
        const signed = await this.#sign(job)
        if (!signed) return
        this.#options.failpoint?.('after-sign', job.kind)
        job = {
          ...job,
          state: 'signed',
          transactionId: signed.transactionId,
          raw: signed.raw,
          amount: signed.amount,
        }
      }
      if (job.state === 'signed') {
        await this.#broadcast(job)
        this.#options.failpoint?.('after-broadcast', job.kind)
        return
      }
      if (job.state === 'broadcast') await this.#follow(job)
    } catch (error) {
      if (error instanceof LeaseLost) return
      const signing = job.state === 'queued'
      if (options.throwSigningErrors && signing) {
        await lifecycle.deleteJob(job.id)
        throw error
      }
      const attempts = job.attempts
      // A client-side problem (bad signature, too little to refund) will not get better by retrying.
      const final = error instanceof PontisError && !error.retryable && error.status < 500
      // A broadcast job is never given up: its bytes (or ones it replaced) may still be mined, and
      // giving up refunds the deposit, so the user would be paid twice. `attempts` counts every pass
      // (a followed job passes every `pollMs`), so one failed step of a long-followed job would do it.
      const giveUp = job.state !== 'broadcast' && (final || attempts >= (this.#options.maxAttempts ?? 10))
      logger.warn('solver job step failed', { jobId: job.id, kind: job.kind, attempts, error: String(error) })
      if (giveUp) {
        await this.#finish(job, 'failed', { reason: String(error), releaseLease: true })
        this.#options.metrics?.jobFinished(job.kind, 'failed')
        await this.#onGiveUp(job, error)
      } else {
        await lifecycle.setJobState(job.id, job.state, {
          releaseLease: true,
          notBefore: this.#now() + Math.min(30_000, 500 * 2 ** attempts),
        })
      }
    }
  }

  /** Signs with a nonce and coins reserved in the same transaction that stores the bytes. */
  async #sign(job: SolverJob): Promise<SignedTransaction | undefined> {
    const { lifecycle, registry } = this.#options
    const chain = registry.chain(job.chainId)
    const filling = this.#filling(chain)
    const credentials = this.#credentials(chain)
    const usesSolverNonce = !(
      job.kind !== 'fill' &&
      job.kind !== 'submit_deposit' &&
      (job.payload as unknown as RefundPayload).source?.kind === 'depositAddress'
    )
    const solver = filling.solverAddress(credentials)
    const chainNext = usesSolverNonce ? await filling.nextNonce(solver) : 0n
    try {
      return await lifecycle.transaction(async (tx: SqlClient) => {
        const nonce = usesSolverNonce
          ? await lifecycle.allocateNonce(tx, chain.id, solver, chainNext)
          : undefined
        const coins = lifecycle.coinReservations(tx, chain.id, job.id)
        const signed = await this.#signJob(job, filling, credentials, {
          ...(nonce === undefined ? {} : { nonce }),
          coins,
        })
        if (!(await lifecycle.storeSigned(job.id, this.#owner, signed, tx))) throw new LeaseLost()
        return signed
      })
    } catch (error) {
      if (error instanceof LeaseLost) return undefined
      throw error
    }
  }

  #credentials(chain: RegisteredChain): SolverCredentials {
    const { credentials } = this.#options
    return typeof credentials === 'function' ? credentials(chain.record.vmType) : credentials
  }

  #signJob(
    job: SolverJob,
    filling: FillingCapability,
    credentials: SolverCredentials,
    options: SigningOptions,
  ): Promise<SignedTransaction> {
    if (job.kind === 'fill') {
      const payload = job.payload as unknown as FillPayload
      return filling.signFill(
        {
          orderId: job.requestId as string,
          recipient: payload.recipient,
          currencyId: payload.currency,
          amount: BigInt(payload.amount),
          calls: payload.calls.map((call) => ({ to: call.to, value: BigInt(call.value), data: call.data })),
          ...(payload.callsGasLimit !== undefined ? { callsGasLimit: BigInt(payload.callsGasLimit) } : {}),
          topupNativeAmount: BigInt(payload.topupNativeAmount),
          ...(payload.authorizations ? { authorizations: payload.authorizations } : {}),
          ...(payload.destinationSwap
            ? { destinationSwap: loadDestinationSwap(payload.destinationSwap) }
            : {}),
        },
        credentials,
        options,
      )
    }
    if (job.kind === 'repayment') {
      const payload = job.payload as unknown as RepaymentPayload
      if (!filling.signRepayment)
        throw new PontisError('UNSUPPORTED_EXECUTION_TYPE', 'This chain pays no repayments.')
      return filling.signRepayment(
        {
          repaymentId: payload.repaymentId,
          recipient: payload.recipient,
          legs: payload.legs.map((leg) => ({ currencyId: leg.currency, amount: BigInt(leg.amount) })),
        },
        credentials,
        options,
      )
    }
    if (job.kind === 'hub_relay') {
      const payload = job.payload as unknown as HubRelayPayload
      if (!filling.hubRelay)
        throw new PontisError('UNSUPPORTED_EXECUTION_TYPE', 'This chain hosts no settlement hub.')
      return filling.hubRelay.signExecution(payload.contract, payload, credentials, options)
    }
    if (job.kind === 'rebalance_step') {
      const payload = job.payload as unknown as RebalanceStepPayload
      if (!filling.signStep)
        throw new PontisError('UNSUPPORTED_EXECUTION_TYPE', "This chain's plugin sends no quote steps.")
      const spend = { currencyId: payload.spend.currencyId, amount: BigInt(payload.spend.amount) }
      return filling.signStep(payload.item, spend, credentials, options)
    }
    if (job.kind === 'submit_deposit') {
      const payload = job.payload as unknown as PermitPayload
      if (!filling.signPermitDeposit)
        throw new PontisError('UNSUPPORTED_EXECUTION_TYPE', 'This chain takes no permit deposits.')
      return filling.signPermitDeposit(
        {
          requestId: job.requestId as string,
          depositor: payload.depositor,
          currencyId: payload.currency,
          amount: BigInt(payload.amount),
          validAfter: BigInt(payload.validAfter),
          validBefore: BigInt(payload.validBefore),
        },
        payload.signature,
        credentials,
        options,
      )
    }
    const payload = job.payload as unknown as RefundPayload
    return filling.signRefund(
      {
        refundId: refundIdOf(job),
        source: payload.source,
        recipient: payload.recipient,
        currencyId: payload.currency,
        amount: BigInt(payload.amount),
      },
      credentials,
      options,
    )
  }

  async #broadcast(job: SolverJob): Promise<void> {
    const { lifecycle, registry } = this.#options
    const filling = this.#filling(registry.chain(job.chainId))
    try {
      await filling.broadcast(job.raw as string)
    } catch (error) {
      // Refused the first time (a fee spike, or bytes signed before a crash that expired before
      // they were sent): followed as a broadcast one, where the refusal leads to a replacement.
      if (!filling.replace) throw error
      this.#options.logger.warn('signed transaction refused at its first broadcast; following it', {
        jobId: job.id,
        chainId: job.chainId,
        transactionId: job.transactionId,
        error: String(error),
      })
      await lifecycle.setJobState(job.id, 'broadcast', { releaseLease: true, notBefore: this.#now() })
      return
    }
    this.#options.failpoint?.('after-send', job.kind)
    await lifecycle.markBroadcast(job.id)
    await lifecycle.setJobState(job.id, 'broadcast', {
      releaseLease: true,
      notBefore: this.#now() + (this.#options.pollMs ?? 500),
    })
    this.#options.failpoint?.('broadcast-recorded', job.kind)
    if (job.requestId === null) return
    if (job.kind === 'fill')
      await lifecycle.transition(job.requestId, { to: 'submitted', txHash: job.transactionId as string })
    if (job.kind === 'submit_deposit')
      await lifecycle.transition(job.requestId, { to: 'depositing', inTxHash: job.transactionId as string })
  }

  async #follow(job: SolverJob): Promise<void> {
    const { lifecycle, registry } = this.#options
    const chain = registry.chain(job.chainId)
    const filling = this.#filling(chain)
    let outcome = await filling.outcome(job.transactionId as string)
    if (outcome.state === 'pending' || outcome.state === 'not_found') {
      // A transaction this one replaced may have been mined instead (same nonce): follow that one.
      for (const earlier of job.replaced) {
        const mined = await filling.outcome(earlier.transactionId)
        if (mined.state !== 'success' && mined.state !== 'reverted') continue
        await lifecycle.adoptReplaced(job.id, earlier)
        job = { ...job, transactionId: earlier.transactionId, raw: earlier.raw }
        outcome = mined
        break
      }
    }
    const later = () =>
      lifecycle.setJobState(job.id, 'broadcast', {
        releaseLease: true,
        notBefore: this.#now() + (this.#options.pollMs ?? 500),
      })
    if (outcome.state === 'not_found' || outcome.state === 'pending') {
      await this.#keepMoving(job, chain, filling, outcome.state)
      await later()
      return
    }
    // Final by the family's rule and as deep as the chain entry's `finality` asks.
    const deepEnough =
      outcome.final && (outcome.confirmations ?? Number.POSITIVE_INFINITY) >= settlementConfirmations(chain)
    if (outcome.state === 'success' && !deepEnough) {
      await later()
      return
    }
    if (outcome.state === 'success') {
      // The job, what it settles (repayments, sweeps), the request it moves and the app fees it earns
      // commit together: a crash in between leaves the job `broadcast`, to be followed again.
      await lifecycle.transaction(async (tx) => {
        await lifecycle.setJobState(job.id, 'confirmed', { releaseLease: true }, tx)
        await settleBooksJob(tx, job, 'confirmed', this.#now(), this.#options.metrics)
        await this.#onConfirmed(job, tx)
      })
      this.#options.metrics?.jobFinished(
        job.kind,
        'confirmed',
        job.kind === 'fill' ? (this.#now() - job.createdAt) / 1000 : undefined,
      )
      return
    }
    await this.#finish(job, 'reverted', {
      releaseLease: true,
      ...(outcome.revert ? { details: outcome.revert } : {}),
    })
    this.#options.metrics?.jobFinished(job.kind, 'reverted')
    await this.#onReverted(job, outcome.revert)
  }

  /** Ends a job, and in the same transaction settles what it paid back (repayments, sweeps). */
  #finish(
    job: SolverJob,
    state: Extract<JobState, 'confirmed' | 'reverted' | 'failed'>,
    extra: Parameters<LifecycleStore['setJobState']>[2],
  ): Promise<void> {
    const { lifecycle, metrics } = this.#options
    return lifecycle.transaction(async (tx) => {
      await lifecycle.setJobState(job.id, state, extra, tx)
      await settleBooksJob(tx, job, state, this.#now(), metrics)
    })
  }

  /**
   * A transaction not mined yet. Dropped (or never received, after a crash before the broadcast
   * completed): the same bytes again. Unmined for longer than `replaceAfterMs`, or refused when sent
   * again (underpriced after a fee spike): replaced by the same nonce with higher fees, stored before
   * it is broadcast, so the chain mines one of them only and nobody is paid twice.
   */
  async #keepMoving(
    job: SolverJob,
    chain: RegisteredChain,
    filling: FillingCapability,
    state: 'pending' | 'not_found',
  ): Promise<void> {
    const { lifecycle, logger } = this.#options
    let refused: unknown
    if (state === 'not_found') {
      try {
        await filling.broadcast(job.raw as string)
      } catch (error) {
        if (!filling.replace) throw error
        refused = error
      }
    }
    if (refused === undefined) await lifecycle.markBroadcast(job.id)
    const stuckFor = this.#now() - (job.broadcastAt ?? this.#now())
    if (!filling.replace || (refused === undefined && stuckFor < (this.#options.replaceAfterMs ?? 60_000)))
      return
    const replacement = await filling.replace(
      job.raw as string,
      this.#credentials(chain),
      job.validThrough === null ? {} : { validThrough: job.validThrough },
    )
    if (!replacement) {
      logger.warn(
        "stuck transaction not replaced (the fee cap is reached, or it is not the solver's to re-sign)",
        {
          jobId: job.id,
          chainId: chain.id,
          transactionId: job.transactionId,
        },
      )
      if (refused !== undefined) throw refused
      return
    }
    if (!(await lifecycle.storeReplacement(job.id, this.#owner, job.transactionId as string, replacement)))
      return
    logger.info('stuck transaction replaced with higher fees', {
      jobId: job.id,
      chainId: chain.id,
      replaced: job.transactionId,
      transactionId: replacement.transactionId,
    })
    await filling.broadcast(replacement.raw)
    await lifecycle.markBroadcast(job.id)
    if (job.kind === 'fill' && job.requestId !== null)
      await lifecycle.transition(job.requestId, { to: 'submitted', txHash: replacement.transactionId })
  }

  async #onConfirmed(job: SolverJob, tx: SqlClient): Promise<void> {
    const { lifecycle } = this.#options
    const txHash = job.transactionId as string
    if (job.kind === 'app_fee_claim') {
      await this.#appFees.settle((job.payload as unknown as AppFeeClaimPayload).claimId, 'paid', txHash, tx)
      return
    }
    if (job.requestId === null) return
    if (job.kind === 'fill') {
      const { requestId } = job
      // A crash after the broadcast was recorded but before the request moved leaves it `pending`,
      // from where `success` is refused: it catches up with `submitted` first (a no-op otherwise).
      // What the fill is owed and the app fees it earned are recorded with the success itself, in the
      // same transaction: a crash cannot lose them or count them twice.
      await lifecycle.transition(requestId, { to: 'submitted', txHash }, tx)
      const { request, refused } = await lifecycle.transition(requestId, { to: 'success', txHash }, tx)
      if (!refused && request.status === 'success') {
        await recordOwed(tx, this.#options.registry, request, this.#now(), this.#options.repaymentPath)
        await accrueAppFees(tx, request, this.#now())
      }
      this.#options.failpoint?.('fill-recorded', job.kind)
    } else if (job.kind === 'refund') {
      const payload = job.payload as unknown as RefundPayload
      await lifecycle.transition(
        job.requestId,
        {
          to: 'refund',
          txHash,
          failReason: payload.reason as IntentsApi.FailReason,
          details: {
            refund: {
              transactionId: txHash,
              amount: (job.amount ?? 0n).toString(),
              currency: payload.currency,
            },
          },
        },
        tx,
      )
    } else if (job.kind === 'excess_refund') {
      const payload = job.payload as unknown as RefundPayload
      const request = await lifecycle.requests.getRequestWith(tx, job.requestId)
      if (request) {
        await lifecycle.transition(
          job.requestId,
          {
            to: request.status,
            txHash,
            details: {
              excessRefund: {
                transactionId: txHash,
                amount: (job.amount ?? 0n).toString(),
                reason: payload.reason,
              },
            },
          },
          tx,
        )
      }
    }
  }

  async #onReverted(job: SolverJob, revert: Readonly<Record<string, unknown>> | undefined): Promise<void> {
    const { lifecycle } = this.#options
    if (job.kind === 'app_fee_claim') {
      await this.#appFees.settle(
        (job.payload as unknown as AppFeeClaimPayload).claimId,
        'failed',
        job.transactionId,
      )
      return
    }
    if (job.requestId === null || isBooksJob(job)) return
    const details = { revert: revert ?? null, transactionId: job.transactionId }
    if (job.kind === 'fill') {
      const moved = await lifecycle.transition(job.requestId, {
        to: 'failure',
        failReason: 'EXECUTION_REVERTED',
        details: { fill: details },
      })
      if (!moved.refused) await this.#refundDeposit(job.requestId, 'EXECUTION_REVERTED')
    } else if (job.kind === 'submit_deposit') {
      await lifecycle.transition(job.requestId, {
        to: 'failure',
        failReason: 'TRANSACTION_REVERTED',
        details: { deposit: details },
      })
    } else {
      const request = await lifecycle.requests.getRequest(job.requestId)
      if (request)
        await lifecycle.transition(job.requestId, { to: request.status, details: { refundFailure: details } })
    }
  }

  async #onGiveUp(job: SolverJob, error: unknown): Promise<void> {
    const { lifecycle } = this.#options
    if (job.kind === 'app_fee_claim') {
      // Only a payout that never signed gives its amount back: signed bytes may still land.
      if (job.raw === null)
        await this.#appFees.settle((job.payload as unknown as AppFeeClaimPayload).claimId, 'failed', null)
      return
    }
    if (job.requestId === null || isBooksJob(job)) return
    const code = error instanceof PontisError ? error.code : undefined
    if (job.kind === 'submit_deposit') {
      const failReason =
        code === 'INVALID_SIGNATURE' || code === 'SIGNATURE_EXPIRED' ? code : 'TRANSACTION_SUBMISSION_FAILED'
      await lifecycle.transition(job.requestId, { to: 'failure', failReason })
      return
    }
    if (job.kind === 'refund') {
      const payload = job.payload as unknown as RefundPayload
      const tooSmall = code === 'INSUFFICIENT_FUNDS' || code === 'AMOUNT_TOO_LOW'
      await lifecycle.transition(job.requestId, {
        to: 'failure',
        failReason: payload.reason as IntentsApi.FailReason,
        refundFailReason: tooSmall ? 'AMOUNT_TOO_LOW_TO_REFUND' : 'N/A',
        details: {
          refundFailure: {
            error: error instanceof PontisError ? error.message : 'the refund could not be submitted',
          },
        },
      })
      return
    }
    if (job.kind !== 'fill') return
    const moved = await lifecycle.transition(job.requestId, {
      to: 'failure',
      failReason: 'TRANSACTION_SUBMISSION_FAILED',
      details: {
        fill: { error: error instanceof PontisError ? error.message : 'the fill could not be submitted' },
      },
    })
    if (!moved.refused) await this.#refundDeposit(job.requestId, 'TRANSACTION_SUBMISSION_FAILED')
  }

  /** Queues the refund of a request's matched deposit (after a failed fill). */
  async #refundDeposit(requestId: string, reason: string): Promise<void> {
    const { lifecycle } = this.#options
    const request = await lifecycle.requests.getRequest(requestId)
    if (!request) return
    const deposit = (await lifecycle.depositOf(requestId)) as { amount?: string } | null
    const amount = deposit?.amount ?? request.amountIn.toString()
    await lifecycle.enqueue({
      jobKey: `refund:${requestId}`,
      requestId,
      kind: 'refund',
      chainId: request.originChainId,
      payload: {
        recipient: refundRecipient(request),
        currency: request.originCurrency,
        amount,
        source: request.depositAddress ? { kind: 'depositAddress', requestId } : { kind: 'depository' },
        reason,
      },
    })
  }
}

/** Repayments and sweeps move the solver's own money: no request status follows them. */
function isBooksJob(job: SolverJob): boolean {
  return job.kind === 'repayment' || job.kind === 'sweep' || job.kind === 'hub_relay'
}

/** A 32-byte id per refund leg, derived from its job key: replay-protected on chain, stable across restarts. */
function refundIdOf(job: SolverJob): string {
  return `0x${createHash('sha256').update(job.jobKey).digest('hex')}`
}
