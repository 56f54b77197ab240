/**
 * The step loop of openapi/intents.yaml ("Executing a quote"): walk the steps in order, run the
 * incomplete items of one step together, index the deposit, follow `check` endpoints until the
 * request is final.
 */
import type {
  ExecutePermitResponse,
  IndexTransactionRequest,
  IndexTransactionResponse,
  QuoteResponse,
  SignaturePost,
  StatusRecord,
  Step,
  StepCheck,
  StepItem,
} from '@pontis/generated/intents'
import { PontisExecutionError } from './errors.js'
import type { ItemData, WalletAdapter } from './wallets/adapter.js'

const DEFAULT_TIMEOUT_MS = 10 * 60_000
/** Where to stop polling when the service does not say (`check.finalStatuses` is absent on older services). */
const DEFAULT_FINAL_STATUSES: readonly string[] = ['success']

/** A `check` of a step item, or the status endpoint followed when no item had one. */
type FollowedCheck = Omit<StepCheck, 'finalStatuses'> & { finalStatuses?: readonly string[] | undefined }

/** One thing that happened during {@link ExecuteQuoteOptions.onProgress}. Indexes point into `steps`. */
export type ExecutionProgress =
  | { type: 'step'; stepIndex: number; step: Step }
  | { type: 'item'; stepIndex: number; itemIndex: number; item: StepItem; state: 'started' | 'complete' }
  | { type: 'transaction'; stepIndex: number; itemIndex: number; chainId: number; txHash: string }
  | { type: 'signature'; stepIndex: number; itemIndex: number; answer: ExecutePermitResponse }
  | { type: 'indexed'; chainId: number; txHash: string; answer: IndexTransactionResponse }
  | { type: 'index-failed'; chainId: number; txHash: string; error: unknown }
  | { type: 'status'; status: StatusRecord }
  | { type: 'poll-failed'; error: unknown }

/** Options of `executeQuote`. */
export interface ExecuteQuoteOptions {
  /** Called for each step, item, transaction, signature and status read. Exceptions it throws are ignored. */
  onProgress?: (progress: ExecutionProgress) => void
  /** Interval between reads of a `check` endpoint. Default 1000 ms, the rate the document recommends. */
  pollIntervalMs?: number
  /** Longest wall time of the whole execution, wallets included. Default 10 minutes. */
  timeoutMs?: number
  /** Aborts the execution; the returned promise rejects with the signal's reason. */
  signal?: AbortSignal
}

/** What `executeQuote` resolves with. */
export interface ExecutionResult {
  requestId: string | undefined
  /** The final status record: `success`, or another status the check's `finalStatuses` allows (`submitted`). */
  status: StatusRecord
  /** Hashes of the transactions sent, in order (origin transactions, including approvals). */
  txHashes: string[]
  /** The steps as executed (including steps added by signature answers), every item `complete`. */
  steps: Step[]
}

/** Sends one JSON request to a path of the service; answers the 2xx body or throws. */
export type HttpCaller = (
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  signal?: AbortSignal,
) => Promise<unknown>

/** The parts of the client the step loop uses. */
export interface ExecutionTransport {
  call: HttpCaller
  indexTransaction(request: IndexTransactionRequest): Promise<IndexTransactionResponse>
}

class Deadline {
  readonly at: number
  constructor(
    timeoutMs: number,
    readonly signal: AbortSignal | undefined,
  ) {
    this.at = Date.now() + timeoutMs
  }
  get expired(): boolean {
    return Date.now() >= this.at
  }
  /** Waits `ms`, or less when the deadline comes first; rejects when aborted. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.signal?.throwIfAborted()
      const onAbort = (): void => {
        clearTimeout(timer)
        reject(this.signal?.reason)
      }
      const timer = setTimeout(
        () => {
          this.signal?.removeEventListener('abort', onAbort)
          resolve()
        },
        Math.max(0, Math.min(ms, this.at - Date.now())),
      )
      this.signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
  /**
   * Runs `work` until the deadline or the signal, whichever comes first; `onTimeout` makes the
   * rejection. `work` gets a signal aborted at that moment, so an HTTP call it makes is closed
   * rather than left running (adapters get it as `context.signal`; one that cannot stop ignores it).
   */
  race<T>(work: (signal: AbortSignal) => Promise<T>, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const controller = new AbortController()
      const stop = (reason: unknown): void => {
        controller.abort(reason)
        reject(reason)
      }
      const timer = setTimeout(() => stop(onTimeout()), Math.max(0, this.at - Date.now()))
      const onAbort = (): void => stop(this.signal?.reason)
      if (this.signal?.aborted) onAbort()
      else this.signal?.addEventListener('abort', onAbort, { once: true })
      work(controller.signal)
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer)
          this.signal?.removeEventListener('abort', onAbort)
        })
    })
  }
}

function isStatusRecord(value: unknown): value is StatusRecord {
  return typeof value === 'object' && value !== null && typeof (value as StatusRecord).status === 'string'
}

function withQueryParameter(path: string, name: string, value: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}`
}

/** `<format> item on chain <chainId>`: the item's format, and its chain when it names one. */
function describeItem(data: ItemData): string {
  const chainId = 'chainId' in data ? data.chainId : undefined
  return `${data.format} item${chainId === undefined ? '' : ` on chain ${chainId}`}`
}

/** The first adapter that claims `data`; a TypeError naming the item and the adapters when none does. */
function adapterFor(adapters: readonly WalletAdapter[], data: ItemData, step: Step): WalletAdapter {
  const adapter = adapters.find((candidate) => candidate.claims(data))
  if (adapter) return adapter
  const given = adapters.length ? adapters.map((candidate) => candidate.name).join(', ') : 'none'
  throw new TypeError(
    `no wallet adapter claims the ${describeItem(data)} of step ${step.id} (adapters given: ${given})`,
  )
}

/** Where a signature answered for `data` goes: the `post` of a `signature` item. */
function signaturePost(data: ItemData, adapter: WalletAdapter): SignaturePost {
  const { post } = data as { post?: SignaturePost }
  if (!post)
    throw new TypeError(`${adapter.name} answered a signature for a ${describeItem(data)}, which has no post`)
  return post
}

/** A same-chain swap the user executes: in and out on one chain, and no item to check. */
function isSelfExecutedSwap(quote: QuoteResponse, steps: readonly Step[]): boolean {
  if (!steps.some((step) => step.id === 'swap')) return false
  if (steps.some((step) => step.items.some((item) => item.check))) return false
  // Read defensively: a hand-made quote may carry steps only.
  const details = quote.details as Partial<QuoteResponse['details']> | undefined
  const chainIn = details?.currencyIn?.currency?.chainId
  return chainIn !== undefined && chainIn === details?.currencyOut?.currency?.chainId
}

/** The record of a mined self-executed swap: its transactions are both the request's in and out. */
function minedSwapStatus(quote: QuoteResponse, requestId: string, txHashes: readonly string[]): StatusRecord {
  const chainId = quote.details.currencyIn.currency.chainId
  return {
    requestId,
    status: 'success',
    inTxHashes: [...txHashes],
    txHashes: txHashes.slice(-1),
    updatedAt: Date.now(),
    originChainId: chainId,
    destinationChainId: chainId,
    details: null,
    failReason: 'N/A',
    refundFailReason: 'N/A',
  }
}

/**
 * Runs the steps of `quote` with `adapters` and follows the request to its end. Implementation of
 * `PontisClient.executeQuote`; the quote is not modified (its steps are copied).
 */
export async function executeSteps(
  quote: QuoteResponse,
  adapters: readonly WalletAdapter[],
  options: ExecuteQuoteOptions,
  transport: ExecutionTransport,
): Promise<ExecutionResult> {
  const pollIntervalMs = options.pollIntervalMs ?? 1000
  const deadline = new Deadline(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.signal)
  const steps: Step[] = structuredClone(quote.steps)
  const requestId = steps.find((step) => step.requestId)?.requestId
  const txHashes: string[] = []
  let lastStatus: StatusRecord | undefined
  let finalStatus: StatusRecord | undefined

  const report = (progress: ExecutionProgress): void => {
    try {
      options.onProgress?.(progress)
    } catch {
      // A faulty progress callback must not break an execution that already moved funds.
    }
  }
  const timeout = (): PontisExecutionError => new PontisExecutionError('timeout', requestId, lastStatus)

  /** Polls the check's endpoint until the status is final; answers the record of a status in `finalStatuses`. */
  async function follow({
    method,
    endpoint,
    finalStatuses = DEFAULT_FINAL_STATUSES,
  }: FollowedCheck): Promise<StatusRecord> {
    for (;;) {
      if (deadline.expired) throw timeout()
      try {
        const answer = await deadline.race(
          (signal) => transport.call(method, endpoint, undefined, signal),
          timeout,
        )
        if (isStatusRecord(answer)) {
          lastStatus = answer
          report({ type: 'status', status: answer })
          const { status } = answer
          if (status === 'success' || finalStatuses.includes(status)) return answer
          if (status === 'refund') throw new PontisExecutionError('refund', requestId, answer)
          if (status === 'failure' || status === 'fallback')
            throw new PontisExecutionError('failure', requestId, answer)
        }
      } catch (error) {
        if (error instanceof PontisExecutionError || options.signal?.aborted) throw error
        // A transient error (network, 5xx, a request not visible yet): keep polling until the deadline.
        report({ type: 'poll-failed', error })
      }
      await deadline.sleep(pollIntervalMs)
    }
  }

  /** Fire and forget, as the document asks: the watcher finds the deposit anyway, only later. */
  function indexDeposit(chainId: number, txHash: string): void {
    transport.indexTransaction({ chainId, txHash, ...(requestId ? { requestId } : {}) }).then(
      (answer) => report({ type: 'indexed', chainId, txHash, answer }),
      (error: unknown) => report({ type: 'index-failed', chainId, txHash, error }),
    )
  }

  async function runItem(stepIndex: number, itemIndex: number, signal: AbortSignal): Promise<void> {
    const step = steps[stepIndex] as Step
    const item = step.items[itemIndex] as StepItem
    const data: ItemData = item.data
    const adapter = adapterFor(adapters, data, step)
    report({ type: 'item', stepIndex, itemIndex, item, state: 'started' })
    const result = await adapter.execute(data, { step, requestId, signal })
    if ('signature' in result) {
      const post = signaturePost(data, adapter)
      const answer = (await transport.call(
        post.method,
        withQueryParameter(post.endpoint, 'signature', result.signature),
        post.body,
        signal,
      )) as ExecutePermitResponse
      report({ type: 'signature', stepIndex, itemIndex, answer })
      // Steps the answer adds run right after this one, before the steps the quote already had.
      if (answer.steps?.length) steps.splice(stepIndex + 1, 0, ...answer.steps)
    } else {
      const { chainId, txHash = '' } = result
      if (txHash) txHashes.push(txHash)
      report({ type: 'transaction', stepIndex, itemIndex, chainId, txHash })
      if (step.id === 'deposit' && txHash) indexDeposit(chainId, txHash)
    }
    if (item.check) finalStatus = await follow(item.check)
    item.status = 'complete'
    report({ type: 'item', stepIndex, itemIndex, item, state: 'complete' })
  }

  // Every item the quote has is claimed before anything is sent, so a missing adapter moves no funds.
  for (const step of steps) {
    for (const item of step.items) if (item.status === 'incomplete') adapterFor(adapters, item.data, step)
  }

  // `steps` may grow while walking (signature answers), so its length is read on every turn.
  for (let stepIndex = 0; stepIndex < steps.length; stepIndex++) {
    const step = steps[stepIndex] as Step
    const pending = step.items.flatMap((item, itemIndex) => (item.status === 'incomplete' ? [itemIndex] : []))
    if (pending.length === 0) continue
    report({ type: 'step', stepIndex, step })
    await deadline.race(
      (signal) => Promise.all(pending.map((itemIndex) => runItem(stepIndex, itemIndex, signal))),
      timeout,
    )
  }

  // A same-chain swap the user runs is done once its transaction is mined (as the Relay SDK has it):
  // no solver is involved, so there is no status to follow.
  if (!finalStatus && requestId && isSelfExecutedSwap(quote, steps)) {
    finalStatus = minedSwapStatus(quote, requestId, txHashes)
  }
  // A request whose items carry no check (a permit the service deposits for) is still followed to its
  // end, to the final statuses a check of the quote names (one of an item already complete), if any.
  if (!finalStatus && requestId) {
    const quoted = steps.flatMap((step) => step.items).find((item) => item.check?.finalStatuses)?.check
    finalStatus = await follow({
      method: 'GET',
      endpoint: withQueryParameter('/intents/status/v3', 'requestId', requestId),
      finalStatuses: quoted?.finalStatuses,
    })
  }
  if (!finalStatus) throw new TypeError('the quote has no request to follow (no requestId and no check)')
  return { requestId, status: finalStatus, txHashes, steps }
}
