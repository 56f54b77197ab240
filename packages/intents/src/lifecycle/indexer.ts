import {
  canonicalId,
  type DepositFact,
  depositConfirmations,
  type Logger,
  PontisError,
  type RegisteredChain,
  type Registry,
  type SwapFact,
  settlementConfirmations,
  type TransactionFacts,
} from '@pontis/core'
import type { DepositReorgStage, IntentsMetrics } from '../metrics.js'
import { loadDestinationSwap } from '../quote/destination-swap.js'
import { destinationAuthorizations } from '../quote/options.js'
import type { StoredQuote } from '../quote/persist.js'
import { isSelfSwap } from '../quote/self-swap.js'
import type { SqlClient, StoredRequest } from '../store/index.js'
import type { LifecycleStore, NewJob, RecordedDeposit } from './lifecycle-store.js'
import { watchSettledJobs } from './settled-jobs.js'

/** Confirmations before a transaction's deposits are acted on: the most any of them needs. */
function requiredConfirmations(chain: RegisteredChain, deposits: readonly DepositFact[]): number {
  const needed = deposits.map((deposit) => depositConfirmations(chain, deposit.currencyId, deposit.amount))
  return Math.max(settlementConfirmations(chain), ...needed)
}

/** A deposit as the indexer handles it, whichever way it was found (scan or reindex). */
interface SeenDeposit extends DepositFact {
  readonly chainId: number
  readonly transactionId: string
  readonly blockNumber?: bigint
  readonly confirmations: number
}

export interface IndexResult {
  readonly indexed: boolean
  readonly message: string
  readonly requestId?: string
}

type Outcome = RecordedDeposit['outcome']
type RefundKind = 'refund' | 'orphan_refund' | 'excess_refund'

/** A deposit whose transaction reached its confirmations, as {@link Indexer} acts on it. */
interface ConfirmedDeposit {
  readonly chainId: number
  readonly transactionId: string
  readonly index: number
  readonly amount: bigint
  readonly currency: string
  readonly depositor: string
}

/** The fill a request's quote asked for: payment, calls, top-up and delegations. */
function fillOf(request: StoredRequest) {
  // The record the quote stored; rows stored before a member existed lack it.
  const quote = request.quote as Partial<StoredQuote>
  const storedCalls = quote.calls ?? []
  const calls = storedCalls.map((call) => ({ to: call.to, value: BigInt(call.value), data: call.data }))
  // The calls' native value comes out of the output: the recipient is paid the rest.
  const callValue = calls.reduce((sum, call) => sum + call.value, 0n)
  // A destination swap: the solver pays its inventory currency, which the fill swaps for the recipient.
  const swap = quote.destinationSwap
  return {
    recipient: request.recipient,
    currencyId: swap ? swap.currency : request.destinationCurrency,
    amount: swap ? BigInt(swap.amount) : request.amountOut - callValue,
    storedSwap: swap,
    destinationSwap: swap ? loadDestinationSwap(swap) : undefined,
    calls,
    storedCalls,
    topupNativeAmount: BigInt(quote.topupNativeAmount ?? '0'),
    callsGasLimit: quote.request?.txsGasLimit !== undefined ? BigInt(quote.request.txsGasLimit) : undefined,
    authorizations: quote.request?.authorizationList?.length
      ? destinationAuthorizations(quote.request)
      : undefined,
  }
}

/**
 * Who a refund of `request` goes to: funds paid out of its deposit address go to its
 * `recoveryAddress` when the quote gave one (the address the user named for recovering what was
 * sent there), every other refund to `refundTo`.
 */
export function refundRecipient(request: StoredRequest): string {
  const recovery = (request.quote as Partial<StoredQuote>).request?.recoveryAddress
  return request.depositAddress && recovery !== undefined ? recovery : request.refundTo
}

/** How long after a deposit was first seen it is still read again for reorganisations (1 hour). */
const SETTLED_WATCH_MS = 60 * 60 * 1000

/** A deposit row a reorganisation removed. */
interface GoneDepositRow {
  readonly log_index: number
  readonly request_id: string | null
  readonly outcome: Outcome
  readonly amount: string
  readonly currency: string
  readonly depositor: string
}

/** What a request's record says of a deposit a reorganisation removed. */
function goneFacts(transactionId: string, row: GoneDepositRow) {
  return { transactionId, amount: String(row.amount), currency: row.currency, depositor: row.depositor }
}

/**
 * How long after its deadline a self-executed swap nobody saw fails (`TTL_EXPIRED`): the router
 * refuses it once a block is past the deadline, and the margin covers the block clock and the scan.
 */
const SELF_SWAP_EXPIRY_MARGIN_MS = 30_000

/** Why a confirmed deposit its request cannot take is refunded. */
const REFUND_REASONS: Partial<Record<Outcome, string>> = {
  too_low: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL',
  wrong_currency: 'INCORRECT_DEPOSIT_CURRENCY',
  late: 'TTL_EXPIRED',
  double_spend: 'DOUBLE_SPEND',
}

/** What the request's record says of a deposit. */
function depositFacts(deposit: ConfirmedDeposit) {
  return {
    transactionId: deposit.transactionId,
    amount: deposit.amount.toString(),
    currency: deposit.currency,
    depositor: deposit.depositor,
  }
}

/** A refund job: `amount` of `currency` back to `recipient` from `source`, queued once per `kind:key`. */
function refundJob(
  kind: RefundKind,
  key: string,
  requestId: string | null,
  chainId: number,
  refund: { recipient: string; currency: string; amount: bigint; source: object; reason: string },
): NewJob {
  return {
    jobKey: `${kind}:${key}`,
    requestId,
    kind,
    chainId,
    payload: { ...refund, amount: refund.amount.toString() },
  }
}

/**
 * Watches each chain's depository through its plugin, matches deposits to requests by id and acts
 * once the chain's confirmation policy is met: `pending` plus a fill job, or a refund job with the
 * catalogued reason (too low, wrong currency, late, a second deposit, an unknown id). Also watches
 * deposit addresses. Every step is idempotent: the same deposit seen twice is handled once.
 */
export class Indexer {
  readonly #registry: Registry
  readonly #lifecycle: LifecycleStore
  readonly #logger: Logger
  readonly #now: () => number
  readonly #metrics: Pick<IntentsMetrics, 'depositReorged' | 'settledReorged'> | undefined
  readonly #reorgCheckMs: number
  #lastReorgCheck = 0

  constructor(options: {
    registry: Registry
    lifecycle: LifecycleStore
    logger: Logger
    now?: () => number
    /** Counts deposits and confirmed solver transactions removed by reorganisations. */
    metrics?: Pick<IntentsMetrics, 'depositReorged' | 'settledReorged'>
    /**
     * How often deposits already acted on, and solver transactions already confirmed, are read again
     * for reorganisations. Default 15 s.
     */
    reorgCheckMs?: number
  }) {
    this.#registry = options.registry
    this.#lifecycle = options.lifecycle
    this.#logger = options.logger
    this.#now = options.now ?? Date.now
    this.#metrics = options.metrics
    this.#reorgCheckMs = options.reorgCheckMs ?? 15_000
  }

  /** One pass: scan every chain, act on deposits that reached their confirmations, check deposit addresses. */
  async tick(): Promise<void> {
    for (const chain of this.#registry.chains()) {
      try {
        await this.#scan(chain)
      } catch (error) {
        this.#logger.warn('deposit scan failed', { chainId: chain.id, error: String(error) })
      }
    }
    await this.#confirmPending()
    await this.#settleSelfSwaps()
    await this.#watchDepositAddresses()
    if (this.#now() - this.#lastReorgCheck >= this.#reorgCheckMs) {
      this.#lastReorgCheck = this.#now()
      await this.#watchSettledDeposits()
      await watchSettledJobs({
        registry: this.#registry,
        lifecycle: this.#lifecycle,
        logger: this.#logger,
        now: this.#now,
        metrics: this.#metrics,
      })
    }
    await this.#expireReorgedRequests()
  }

  async #scan(chain: RegisteredChain): Promise<void> {
    const scanDeposits = chain.adapter.reading?.scanDeposits
    if (!scanDeposits) return
    for (let steps = 0; steps < 20; steps++) {
      const cursor = (await this.#lifecycle.cursor(chain.id)) ?? this.#firstCursor(chain)
      const scan = await scanDeposits.call(chain.adapter.reading, cursor)
      for (const deposit of scan.deposits) await this.#see(chain, { ...deposit, chainId: chain.id })
      for (const swap of scan.swaps ?? []) await this.#seeSwap(chain, swap.transactionId, swap)
      await this.#lifecycle.saveCursor(chain.id, scan.cursor)
      if (scan.caughtUp) return
    }
  }

  /** Where a chain's first scan starts: the configured start block, else (undefined) the head. */
  #firstCursor(chain: RegisteredChain): string | undefined {
    const startBlock = chain.entry.indexer?.startBlock
    const startCursor = chain.adapter.reading?.startCursor
    // The registry refuses a start block on a family without startCursor.
    return startBlock === undefined || !startCursor ? undefined : startCursor(BigInt(startBlock))
  }

  /**
   * `POST /transactions/index`: reads one transaction now. Not found is 404; in the mempool is
   * "keep watching" (the scan will see it once mined); mined without a deposit is 400.
   */
  async indexTransaction(chainId: number, transactionId: string): Promise<IndexResult> {
    const chain = this.#registry.chain(chainId)
    const reading = chain.adapter.reading
    if (!reading) throw new PontisError('UNSUPPORTED_CHAIN', `${chain.record.displayName} cannot be indexed.`)
    const facts: TransactionFacts<DepositFact> = await reading.readDeposits(transactionId)
    if (facts.state === 'not_found') {
      throw new PontisError(
        'TRANSACTION_NOT_FOUND',
        `Transaction ${transactionId} was not found on ${chain.record.displayName} (${chain.id}).`,
      )
    }
    if (facts.state === 'pending' && chain.adapter.finality.showsUnconfirmedDeposits) {
      // Such chains show unconfirmed deposits to the watcher, which already moves the request to
      // `pending`; the reindex itself only takes transactions that are in a block.
      throw new PontisError(
        'TRANSACTION_NOT_FOUND',
        `Transaction ${transactionId} is not in a block on ${chain.record.displayName} (${chain.id}) yet; the watcher picks it up from the mempool. Retry after the next block.`,
      )
    }
    if (facts.state === 'pending') {
      return {
        indexed: false,
        message: `Transaction ${transactionId} is not mined yet; it will be indexed once it is.`,
      }
    }
    if (facts.facts.length === 0) {
      const swap = await this.#indexSwap(chain, transactionId)
      if (swap) return swap
      throw new PontisError(
        'NOT_A_DEPOSIT',
        `Transaction ${transactionId} on ${chain.record.displayName} (${chain.id}) ${facts.state === 'reverted' ? 'reverted' : 'made no deposit into the depository'}; nothing to index.`,
      )
    }
    let requestId: string | undefined
    for (const fact of facts.facts) {
      const request = await this.#see(chain, {
        ...fact,
        chainId,
        transactionId,
        confirmations: facts.confirmations ?? 0,
        ...(facts.blockNumber !== undefined ? { blockNumber: facts.blockNumber } : {}),
      })
      if (request) requestId = request.id
    }
    await this.#confirmPending()
    return {
      indexed: true,
      message: requestId
        ? `Indexed the deposit of request ${requestId}.`
        : 'Indexed; the deposit matches no request and will be refunded.',
      ...(requestId ? { requestId } : {}),
    }
  }

  /** `POST /transactions/index` of a self-executed swap's transaction: undefined when it is none. */
  async #indexSwap(chain: RegisteredChain, transactionId: string): Promise<IndexResult | undefined> {
    const facts = await chain.adapter.reading?.readSwaps?.(transactionId)
    const fact = facts?.facts[0]
    if (!facts || !fact) return undefined
    const request = await this.#seeSwap(chain, transactionId, fact)
    if (!request) return undefined
    await this.#settleSelfSwaps()
    return { indexed: true, message: `Indexed the swap of request ${request.id}.`, requestId: request.id }
  }

  /**
   * A tagged same-chain swap was mined: when it is the swap its self-executed request quoted (same
   * chain, sender, recipient and output currency), the request goes `pending` with it.
   * {@link #settleSelfSwaps} settles it once confirmed.
   */
  async #seeSwap(
    chain: RegisteredChain,
    transactionId: string,
    fact: SwapFact,
  ): Promise<StoredRequest | undefined> {
    const request = await this.#lifecycle.requests.getRequest(fact.swapId)
    if (!request || !isSelfSwap(request.quote) || request.originChainId !== chain.id) return undefined
    const same = (a: string, b: string) => canonicalId(a) === canonicalId(b)
    if (
      !same(fact.sender, request.userAddress) ||
      !same(fact.recipient, request.recipient) ||
      !same(fact.currencyId, request.destinationCurrency)
    ) {
      this.#logger.warn('a swap carries the id of a request it does not match', {
        chainId: chain.id,
        transactionId,
        requestId: request.id,
      })
      return undefined
    }
    if (request.status === 'waiting') {
      await this.#lifecycle.transition(request.id, { to: 'pending', inTxHash: transactionId })
      this.#logger.info('swap seen', { chainId: chain.id, transactionId, requestId: request.id })
    }
    return request
  }

  /**
   * Self-executed swaps not settled yet: a seen swap confirmed by the chain's settlement policy is
   * `success` (the swap transaction is both the request's in and out transaction), or `failure`
   * when it reverted or paid less than the minimum; one never seen fails once past its deadline.
   */
  async #settleSelfSwaps(): Promise<void> {
    const open = await this.#lifecycle.openSelfSwaps(200)
    for (const request of open) {
      try {
        if (request.status === 'waiting') {
          if (this.#now() > request.expiresAt + SELF_SWAP_EXPIRY_MARGIN_MS)
            await this.#lifecycle.transition(request.id, { to: 'failure', failReason: 'TTL_EXPIRED' })
          continue
        }
        const transactionId = request.inTxHashes.at(-1)
        const chain = this.#registry.tryChain(request.originChainId)
        const readSwaps = chain?.adapter.reading?.readSwaps
        if (!chain || !readSwaps || !transactionId) continue
        const facts = await readSwaps.call(chain.adapter.reading, transactionId, { fresh: true })
        if (facts.state === 'reverted') {
          await this.#lifecycle.transition(request.id, {
            to: 'failure',
            txHash: transactionId,
            failReason: 'TRANSACTION_REVERTED',
          })
          continue
        }
        if (facts.state !== 'success' || (facts.confirmations ?? 0) < settlementConfirmations(chain)) continue
        const fact = facts.facts.find((seen) => canonicalId(seen.swapId) === canonicalId(request.id))
        if (!fact) continue
        const paid = { swapOutput: { amount: fact.amount.toString(), currency: fact.currencyId } }
        await this.#lifecycle.transaction(async (tx) => {
          if (fact.amount < request.minimumAmountOut) {
            await this.#lifecycle.transition(
              request.id,
              { to: 'failure', txHash: transactionId, failReason: 'TOO_LITTLE_RECEIVED', details: paid },
              tx,
            )
            return
          }
          await this.#lifecycle.transition(request.id, { to: 'submitted', txHash: transactionId }, tx)
          await this.#lifecycle.transition(request.id, { to: 'success', details: paid }, tx)
        })
      } catch (error) {
        this.#logger.warn('swap settlement failed', { requestId: request.id, error: String(error) })
      }
    }
  }

  /** Records a deposit with what it means for its request (returned, when there is one); acts on it once confirmed. */
  async #see(chain: RegisteredChain, deposit: SeenDeposit): Promise<StoredRequest | undefined> {
    const request =
      (await this.#lifecycle.requests.getRequest(deposit.depositId)) ??
      (await this.#lifecycle.requests.findByDepositTag(chain.id, deposit.depositId))
    const outcome = await this.#classify(chain, deposit, request)
    const recorded = await this.#lifecycle.recordDeposit({
      chainId: chain.id,
      transactionId: deposit.transactionId,
      index: deposit.index,
      depositId: deposit.depositId,
      depositor: deposit.depositor,
      currency: deposit.currencyId,
      amount: deposit.amount,
      ...(deposit.blockNumber !== undefined ? { blockNumber: deposit.blockNumber } : {}),
      requestId: request?.id ?? null,
      outcome,
    })
    if (recorded)
      this.#logger.info('deposit seen', { chainId: chain.id, transactionId: deposit.transactionId, outcome })
    // Chains with a mempool: a matching deposit moves its request to `pending` when first seen; the
    // fill waits for the confirmations (#act).
    if (
      recorded &&
      request &&
      outcome === 'matched' &&
      deposit.confirmations === 0 &&
      chain.adapter.finality.showsUnconfirmedDeposits &&
      // Read again: classifying may have sent it back to `waiting` (the deposit this one replaced).
      (await this.#lifecycle.requests.getRequest(request.id))?.status === 'waiting'
    ) {
      await this.#lifecycle.transition(request.id, {
        to: 'pending',
        inTxHash: deposit.transactionId,
        deposit: {
          transactionId: deposit.transactionId,
          amount: deposit.amount.toString(),
          currency: deposit.currencyId,
          depositor: deposit.depositor,
        },
      })
    }
    return request
  }

  async #classify(
    chain: RegisteredChain,
    deposit: SeenDeposit,
    request: StoredRequest | undefined,
  ): Promise<Outcome> {
    if (!request || request.originChainId !== chain.id) return 'orphaned'
    let earlier = await this.#lifecycle.depositsFor(deposit.depositId)
    const isThis = (seen: (typeof earlier)[number]) =>
      seen.transactionId === canonicalId(deposit.transactionId) && seen.index === deposit.index
    if (earlier.length > 0 && !earlier.some(isThis) && (await this.#forgetVanished(chain, earlier)))
      earlier = await this.#lifecycle.depositsFor(deposit.depositId)
    const same = earlier.some(isThis)
    if (earlier.length > 0 && !same) return 'double_spend'
    if (canonicalId(deposit.currencyId) !== canonicalId(request.originCurrency)) return 'wrong_currency'
    if (deposit.amount < request.amountIn) return 'too_low'
    return 'matched'
  }

  /** Deposits not acted on yet: re-read each; act when the confirmation policy is met. */
  async #confirmPending(): Promise<void> {
    const { rows } = await this.#lifecycle.requests.client.query<{
      chain_id: number
      transaction_id: string
      log_index: number
    }>(
      'SELECT chain_id, transaction_id, log_index FROM deposits WHERE NOT confirmed ORDER BY seen_at LIMIT 200',
    )
    const byTransaction = new Map<string, { chainId: number; transactionId: string }>()
    for (const row of rows)
      byTransaction.set(`${row.chain_id}:${row.transaction_id}`, {
        chainId: row.chain_id,
        transactionId: row.transaction_id,
      })
    for (const { chainId, transactionId } of byTransaction.values()) {
      const chain = this.#registry.tryChain(chainId)
      const reading = chain?.adapter.reading
      if (!chain || !reading) continue
      try {
        // Fresh: facts the family kept as final may still be shallower than the chain entry's
        // `finality` asks, and a reorganisation may yet remove them.
        const facts = await reading.readDeposits(transactionId, { fresh: true })
        if (facts.state !== 'success') {
          if (facts.state === 'not_found' || facts.state === 'reverted')
            await this.#forget(chainId, transactionId)
          continue
        }
        if ((facts.confirmations ?? 0) < requiredConfirmations(chain, facts.facts)) continue
        if (!facts.final && chain.adapter.finality.slowRequiresFinalized) continue
        await this.#act(chain, transactionId)
      } catch (error) {
        this.#logger.warn('deposit confirmation failed', { chainId, transactionId, error: String(error) })
      }
    }
  }

  /**
   * Another deposit for a request that already has one: the earlier ones not acted on yet are read
   * again, and those the chain no longer has (a mempool transaction replaced by fee or dropped, or
   * reorganised away) are forgotten first, so a replacement paying the same request is its deposit,
   * not a second one. True when one was forgotten.
   */
  async #forgetVanished(
    chain: RegisteredChain,
    earlier: ReadonlyArray<{ transactionId: string; chainId: number }>,
  ): Promise<boolean> {
    const reading = chain.adapter.reading
    if (!reading) return false
    let forgot = false
    for (const { transactionId, chainId } of earlier) {
      if (chainId !== chain.id || (await this.#lifecycle.isConfirmedDeposit(chainId, transactionId))) continue
      const facts = await reading.readDeposits(transactionId, { fresh: true })
      if (facts.state !== 'not_found' && facts.state !== 'reverted') continue
      await this.#forget(chainId, transactionId)
      forgot = true
    }
    return forgot
  }

  /**
   * A deposit that vanished (reorg, or a mempool transaction dropped or replaced) or reverted before
   * it was acted on was never real: dropped, no fill. Its request waits (again, when the mempool
   * deposit had moved it to `pending`; another deposit may still come) and its record says what went.
   */
  async #forget(chainId: number, transactionId: string): Promise<void> {
    const { rows } = await this.#lifecycle.requests.client.query<GoneDepositRow>(
      `DELETE FROM deposits WHERE chain_id = $1 AND transaction_id = $2 AND NOT confirmed
       RETURNING log_index, request_id, outcome, amount, currency, depositor`,
      [chainId, transactionId],
    )
    for (const row of rows) {
      if (row.request_id === null || row.outcome !== 'matched') continue
      const request = await this.#lifecycle.requests.getRequest(row.request_id)
      // Only its mempool sighting moved it to `pending` (an unconfirmed deposit is never acted on).
      if (request?.status === 'pending') {
        await this.#lifecycle.transition(row.request_id, {
          to: 'waiting',
          details: { depositReorged: { ...goneFacts(transactionId, row), stage: 'before_fill' } },
        })
        this.#metrics?.depositReorged(chainId, 'before_fill')
        this.#logger.warn('unconfirmed deposit gone; the request waits again', {
          chainId,
          transactionId,
          requestId: row.request_id,
        })
        continue
      }
      await this.#recordReorg(row.request_id, chainId, transactionId, row, 'before_fill')
    }
  }

  /**
   * Deposits acted on in the last {@link SETTLED_WATCH_MS}, read again: one a reorganisation removed
   * is marked. Its fill, when still queued and unclaimed, is cancelled and the request fails with
   * `DEPOSIT_REORGED`; a fill already sent cannot be taken back, so the request's record says so,
   * the operator is told (error log) and the metric counts it.
   */
  async #watchSettledDeposits(): Promise<void> {
    const { client } = this.#lifecycle.requests
    const { rows } = await client.query<{ chain_id: number; transaction_id: string }>(
      `SELECT chain_id, transaction_id FROM deposits WHERE confirmed AND reorged_at IS NULL AND seen_at > $1
       GROUP BY chain_id, transaction_id ORDER BY max(seen_at) DESC LIMIT 100`,
      [this.#now() - SETTLED_WATCH_MS],
    )
    for (const { chain_id: chainId, transaction_id: transactionId } of rows) {
      const reading = this.#registry.tryChain(chainId)?.adapter.reading
      if (!reading) continue
      try {
        const facts = await reading.readDeposits(transactionId, { fresh: true })
        if (facts.state !== 'not_found' && facts.state !== 'reverted') continue
        await this.#settledDepositGone(Number(chainId), transactionId)
      } catch (error) {
        this.#logger.warn('deposit reorg check failed', { chainId, transactionId, error: String(error) })
      }
    }
  }

  async #settledDepositGone(chainId: number, transactionId: string): Promise<void> {
    const { rows } = await this.#lifecycle.requests.client.query<GoneDepositRow>(
      `UPDATE deposits SET reorged_at = $3 WHERE chain_id = $1 AND transaction_id = $2 AND confirmed AND reorged_at IS NULL
       RETURNING log_index, request_id, outcome, amount, currency, depositor`,
      [chainId, transactionId, this.#now()],
    )
    for (const row of rows) {
      if (row.request_id === null || row.outcome !== 'matched') continue
      const requestId = row.request_id
      // Only a fill no solver holds is cancelled; one being signed or sent goes ahead.
      const cancelled = await this.#lifecycle.requests.client.query<{ id: string }>(
        `UPDATE solver_jobs SET state = 'failed', reason = 'the deposit was removed by a reorganisation', updated_at = $2
         WHERE job_key = $1 AND state = 'queued' AND (lease_until IS NULL OR lease_until < $2) RETURNING id`,
        [`fill:${requestId}`, this.#now()],
      )
      if (cancelled.rows.length > 0) {
        await this.#lifecycle.transition(requestId, {
          to: 'failure',
          failReason: 'DEPOSIT_REORGED',
          details: { depositReorged: { ...goneFacts(transactionId, row), stage: 'before_fill' } },
        })
        this.#metrics?.depositReorged(chainId, 'before_fill')
        this.#logger.warn('deposit reorganised away; its fill was cancelled', {
          chainId,
          transactionId,
          requestId,
        })
        continue
      }
      await this.#recordReorg(requestId, chainId, transactionId, row, 'after_fill')
      this.#logger.error('deposit reorganised away after its fill was sent', {
        chainId,
        transactionId,
        requestId,
      })
    }
  }

  /** Notes on the request (its status unchanged) that its deposit is gone, and counts it. */
  async #recordReorg(
    requestId: string,
    chainId: number,
    transactionId: string,
    row: GoneDepositRow,
    stage: DepositReorgStage,
  ): Promise<void> {
    const request = await this.#lifecycle.requests.getRequest(requestId)
    if (!request) return
    await this.#lifecycle.transition(requestId, {
      to: request.status,
      details: { depositReorged: { ...goneFacts(transactionId, row), stage } },
    })
    this.#metrics?.depositReorged(chainId, stage)
  }

  /** Waiting requests whose deposit was reorganised away and whose TTL has passed: `DEPOSIT_REORGED`. */
  async #expireReorgedRequests(): Promise<void> {
    const expired = await this.#lifecycle.expiredWithReorgedDeposit(this.#now(), 100)
    for (const request of expired) {
      await this.#lifecycle.transition(request.id, { to: 'failure', failReason: 'DEPOSIT_REORGED' })
    }
  }

  async #act(chain: RegisteredChain, transactionId: string): Promise<void> {
    await this.#lifecycle.transaction(async (tx) => {
      const { rows } = await tx.query<{
        log_index: number
        deposit_id: string
        depositor: string
        currency: string
        amount: string
        request_id: string | null
        outcome: Outcome
      }>(
        `SELECT log_index, deposit_id, depositor, currency, amount, request_id, outcome FROM deposits
         WHERE chain_id = $1 AND transaction_id = $2 AND NOT confirmed ORDER BY log_index FOR UPDATE`,
        [chain.id, transactionId],
      )
      for (const row of rows) {
        const deposit: ConfirmedDeposit = {
          chainId: chain.id,
          transactionId,
          index: row.log_index,
          amount: BigInt(row.amount),
          currency: row.currency,
          depositor: row.depositor,
        }
        await this.#apply(tx, row.request_id, row.outcome, deposit)
        await tx.query(
          'UPDATE deposits SET confirmed = true WHERE chain_id = $1 AND transaction_id = $2 AND log_index = $3',
          [chain.id, transactionId, row.log_index],
        )
      }
    })
  }

  /** Acts on one confirmed deposit: refunds it, or moves its request to `pending` and queues the fill. */
  async #apply(
    tx: SqlClient,
    requestId: string | null,
    outcome: Outcome,
    deposit: ConfirmedDeposit,
  ): Promise<void> {
    if (outcome === 'orphaned' || requestId === null) {
      const refund = {
        recipient: deposit.depositor,
        amount: deposit.amount,
        reason: 'ORPHANED_DEPOSIT_REFUND',
      }
      await this.#refundDeposit(tx, 'orphan_refund', requestId, deposit, refund)
      return
    }
    const request = await this.#lifecycle.requests.getRequestWith(tx, requestId)
    if (!request) return
    const effective = await this.#recordOutcome(tx, request, outcome, deposit)
    const reason = REFUND_REASONS[effective]
    if (effective === 'double_spend') await this.#refundSecondDeposit(tx, request, deposit)
    else if (reason) await this.#refundRefusedDeposit(tx, request, deposit, reason)
    else await this.#fillDeposit(tx, request, deposit)
  }

  /** The deposit's outcome once confirmed (a match after the request expired is late), recorded on it. */
  async #recordOutcome(
    tx: SqlClient,
    request: StoredRequest,
    outcome: Outcome,
    deposit: ConfirmedDeposit,
  ): Promise<Outcome> {
    const late =
      this.#now() > request.expiresAt &&
      (request.status === 'waiting' || request.status === 'depositing') &&
      !(outcome === 'matched' && (await this.#lateFillWithinTolerance(request)))
    const effective: Outcome = outcome === 'matched' && late ? 'late' : outcome
    await tx.query(
      'UPDATE deposits SET outcome = $4 WHERE chain_id = $1 AND transaction_id = $2 AND log_index = $3',
      [deposit.chainId, deposit.transactionId, deposit.index, effective],
    )
    return effective
  }

  /** The request keeps its first deposit; the second one goes back, and the record says so. */
  async #refundSecondDeposit(
    tx: SqlClient,
    request: StoredRequest,
    deposit: ConfirmedDeposit,
  ): Promise<void> {
    const refund = { recipient: request.refundTo, amount: deposit.amount, reason: 'DOUBLE_SPEND' }
    await this.#refundDeposit(tx, 'excess_refund', request.id, deposit, refund)
    await this.#lifecycle.transition(
      request.id,
      {
        to: request.status,
        inTxHash: deposit.transactionId,
        details: { doubleSpend: depositFacts(deposit) },
      },
      tx,
    )
  }

  /** A deposit its request cannot take (too low, wrong currency, late) is recorded and goes back. */
  async #refundRefusedDeposit(
    tx: SqlClient,
    request: StoredRequest,
    deposit: ConfirmedDeposit,
    reason: string,
  ): Promise<void> {
    const moved = await this.#lifecycle.transition(
      request.id,
      { to: request.status, inTxHash: deposit.transactionId, deposit: depositFacts(deposit) },
      tx,
    )
    if (moved.refused) return
    const refund = { recipient: request.refundTo, amount: deposit.amount, reason, key: request.id }
    await this.#refundDeposit(tx, 'refund', request.id, deposit, refund)
  }

  /** A matching deposit: the request goes `pending`, its fill is queued, and any overpayment goes back. */
  async #fillDeposit(tx: SqlClient, request: StoredRequest, deposit: ConfirmedDeposit): Promise<void> {
    const moved = await this.#lifecycle.transition(
      request.id,
      { to: 'pending', inTxHash: deposit.transactionId, deposit: depositFacts(deposit) },
      tx,
    )
    if (moved.refused) return
    await this.#enqueueFill(tx, request)
    if (deposit.amount > request.amountIn) {
      const excess = deposit.amount - request.amountIn
      const refund = { recipient: request.refundTo, amount: excess, reason: 'OVERPAYMENT', key: request.id }
      await this.#refundDeposit(tx, 'excess_refund', request.id, deposit, refund)
    }
  }

  /** Queues a refund from the depository of (part of) `deposit`, once per kind and key (the deposit's by default). */
  #refundDeposit(
    tx: SqlClient,
    kind: RefundKind,
    requestId: string | null,
    deposit: ConfirmedDeposit,
    refund: { recipient: string; amount: bigint; reason: string; key?: string },
  ): Promise<boolean> {
    const key = refund.key ?? `${deposit.chainId}:${deposit.transactionId}:${deposit.index}`
    const source = { kind: 'depository' }
    const payload = { recipient: refund.recipient, currency: deposit.currency, amount: refund.amount, source }
    return this.#lifecycle.enqueue(
      refundJob(kind, key, requestId, deposit.chainId, { ...payload, reason: refund.reason }),
      tx,
    )
  }

  /**
   * `latePaymentSlippageTolerance`: a deposit after the deadline is still filled when the fill,
   * priced again now, costs at most that many basis points more than the quote priced it.
   */
  async #lateFillWithinTolerance(request: StoredRequest): Promise<boolean> {
    const quote = request.quote as Partial<StoredQuote>
    const tolerance = quote.request?.latePaymentSlippageTolerance
    const quoting = this.#registry.tryChain(request.destinationChainId)?.adapter.quoting
    if (tolerance === undefined || !quote.quotedFill || !quoting) return false
    const fill = fillOf(request)
    try {
      const now = await quoting.estimateFillCost({
        orderId: request.id,
        payer: quote.quotedFill.payer,
        recipient: fill.recipient,
        currencyId: fill.currencyId,
        amount: fill.amount,
        calls: fill.calls,
        ...(fill.callsGasLimit !== undefined ? { callsGasLimit: fill.callsGasLimit } : {}),
        topupNativeAmount: fill.topupNativeAmount,
        ...(fill.authorizations ? { authorizations: fill.authorizations } : {}),
        ...(fill.destinationSwap ? { destinationSwap: fill.destinationSwap } : {}),
      })
      const limit = (BigInt(quote.quotedFill.cost) * (10_000n + BigInt(tolerance))) / 10_000n
      this.#logger.info('late deposit priced again', {
        requestId: request.id,
        quoted: quote.quotedFill.cost,
        now: now.amount.toString(),
        limit: limit.toString(),
      })
      return now.amount <= limit
    } catch (error) {
      // A fill that cannot be priced now is not filled late: the deposit goes back.
      this.#logger.warn('late deposit could not be priced again', {
        requestId: request.id,
        error: String(error),
      })
      return false
    }
  }

  async #enqueueFill(tx: SqlClient, request: StoredRequest): Promise<void> {
    const fill = fillOf(request)
    await this.#lifecycle.enqueue(
      {
        jobKey: `fill:${request.id}`,
        requestId: request.id,
        kind: 'fill',
        chainId: request.destinationChainId,
        payload: {
          recipient: fill.recipient,
          currency: fill.currencyId,
          amount: fill.amount.toString(),
          calls: fill.storedCalls,
          topupNativeAmount: fill.topupNativeAmount.toString(),
          ...(fill.callsGasLimit !== undefined ? { callsGasLimit: fill.callsGasLimit.toString() } : {}),
          ...(fill.authorizations ? { authorizations: fill.authorizations } : {}),
          ...(fill.storedSwap ? { destinationSwap: fill.storedSwap } : {}),
        },
      },
      tx,
    )
  }

  /** Native payments to per-request deposit addresses, read as balances. */
  async #watchDepositAddresses(): Promise<void> {
    const waiting = await this.#lifecycle.waitingWithDepositAddress(200)
    for (const request of waiting) {
      const chain = this.#registry.tryChain(request.originChainId)
      const reading = chain?.adapter.reading
      if (!chain || !reading || !request.depositAddress) continue
      try {
        // As deep as the chain's policy wants for this amount (Bitcoin: 2 blocks above a threshold).
        const minConfirmations = depositConfirmations(chain, request.originCurrency, request.amountIn)
        const balance = await reading.readBalance(request.depositAddress, request.originCurrency, {
          minConfirmations,
        })
        if (balance === 0n) continue
        await this.#lifecycle.transaction(async (tx) => {
          const current = await this.#lifecycle.requests.getRequestWith(tx, request.id)
          if (current?.status !== 'waiting') return
          const source = { kind: 'depositAddress', requestId: request.id }
          const refund = (kind: 'refund' | 'excess_refund', amount: bigint, reason: string) => {
            const payload = {
              recipient: refundRecipient(request),
              currency: request.originCurrency,
              amount,
              source,
              reason,
            }
            return this.#lifecycle.enqueue(refundJob(kind, request.id, request.id, chain.id, payload), tx)
          }
          const facts = {
            depositAddress: request.depositAddress,
            amount: balance.toString(),
            currency: request.originCurrency,
          }
          const late =
            this.#now() > request.expiresAt &&
            !(balance >= request.amountIn && (await this.#lateFillWithinTolerance(current)))
          if (balance < request.amountIn || late) {
            await this.#lifecycle.transition(request.id, { to: 'waiting', deposit: facts }, tx)
            await refund('refund', balance, late ? 'TTL_EXPIRED' : 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL')
            // Queued once (by job key): the refund leg moves the request to `refund` when it confirms.
            return
          }
          await this.#lifecycle.transition(request.id, { to: 'pending', deposit: facts }, tx)
          await this.#enqueueFill(tx, current)
          if (balance > request.amountIn)
            await refund('excess_refund', balance - request.amountIn, 'OVERPAYMENT')
        })
      } catch (error) {
        this.#logger.warn('deposit address check failed', { requestId: request.id, error: String(error) })
      }
    }
  }
}
