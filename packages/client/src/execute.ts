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
  StatusRecord,
  Step,
  StepItem,
} from '../../../generated/intents/index.js'
import { PontisExecutionError } from './errors.js'
import type { Wallets } from './wallets.js'

/** Chain ids of Bitcoin (mainnet and testnet): for a Bitcoin destination `submitted` ends the check. */
const BITCOIN_CHAIN_IDS: ReadonlySet<number> = new Set([8253038, 9092725])
const DEFAULT_TIMEOUT_MS = 10 * 60_000

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
  /** The final status record (`success`, or `submitted` for a Bitcoin destination). */
  status: StatusRecord
  /** Hashes of the transactions sent, in order (origin transactions, including approvals). */
  txHashes: string[]
  /** The steps as executed (including steps added by signature answers), every item `complete`. */
  steps: Step[]
}

/** Sends one JSON request to a path of the service; answers the 2xx body or throws. */
export type HttpCaller = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<unknown>

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
  /** Races `work` against the deadline and the signal; `onTimeout` makes the rejection. */
  race<T>(work: Promise<T>, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(onTimeout()), Math.max(0, this.at - Date.now()))
      const onAbort = (): void => reject(this.signal?.reason)
      this.signal?.addEventListener('abort', onAbort, { once: true })
      work.then(resolve, reject).finally(() => {
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

function missingWallet(family: string, format: string): TypeError {
  return new TypeError(`the quote has a ${format} item but no ${family} wallet was given`)
}

/**
 * Runs the steps of `quote` with `wallets` and follows the request to its end. Implementation of
 * `PontisClient.executeQuote`; the quote is not modified (its steps are copied).
 */
export async function executeSteps(
  quote: QuoteResponse,
  wallets: Wallets,
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

  /** Polls `endpoint` until the status is final; answers the `success` (or Bitcoin `submitted`) record. */
  async function follow(method: 'GET' | 'POST', endpoint: string): Promise<StatusRecord> {
    for (;;) {
      if (deadline.expired) throw timeout()
      try {
        const answer = await deadline.race(transport.call(method, endpoint), timeout)
        if (isStatusRecord(answer)) {
          lastStatus = answer
          report({ type: 'status', status: answer })
          const { status } = answer
          if (status === 'success') return answer
          if (status === 'submitted' && BITCOIN_CHAIN_IDS.has(answer.destinationChainId)) return answer
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

  /** Submits a transaction item; answers its chain id and hash. */
  async function submitTransaction(item: StepItem): Promise<{ chainId: number; txHash: string }> {
    const data = item.data
    switch (data.format) {
      case 'evm-transaction': {
        if (!wallets.evm) throw missingWallet('evm', data.format)
        const txHash = await wallets.evm.sendTransaction({
          to: data.to as `0x${string}`,
          data: data.data as `0x${string}`,
          value: BigInt(data.value),
          chainId: data.chainId,
          ...(data.from ? { from: data.from as `0x${string}` } : {}),
          ...(data.gas ? { gas: BigInt(data.gas) } : {}),
          ...(data.maxFeePerGas ? { maxFeePerGas: BigInt(data.maxFeePerGas) } : {}),
          ...(data.maxPriorityFeePerGas ? { maxPriorityFeePerGas: BigInt(data.maxPriorityFeePerGas) } : {}),
        })
        await wallets.evm.waitForTransaction?.(txHash, data.chainId)
        return { chainId: data.chainId, txHash }
      }
      case 'svm-transaction': {
        if (!wallets.svm) throw missingWallet('svm', data.format)
        const signed = await wallets.svm.signTransaction(data.transaction, data)
        return { chainId: data.chainId, txHash: await wallets.svm.sendTransaction(signed, data) }
      }
      case 'bitcoin-psbt': {
        if (!wallets.bitcoin) throw missingWallet('bitcoin', data.format)
        const signed = await wallets.bitcoin.signPsbt(data.psbt, data)
        return { chainId: data.chainId, txHash: await wallets.bitcoin.broadcast(signed, data) }
      }
      case 'lighter-transfer':
      case 'hyperliquid-action': {
        if (!wallets.venue) throw missingWallet('venue', data.format)
        return { chainId: data.chainId, txHash: (await wallets.venue.submit(data)) ?? '' }
      }
      case 'tron-transaction': {
        if (!wallets.tron) throw missingWallet('tron', data.format)
        return { chainId: data.chainId, txHash: await wallets.tron.signAndSendTransaction(data) }
      }
      case 'signature':
        throw new TypeError('a signature item in a transaction step')
    }
  }

  async function runItem(stepIndex: number, itemIndex: number): Promise<void> {
    const step = steps[stepIndex] as Step
    const item = step.items[itemIndex] as StepItem
    report({ type: 'item', stepIndex, itemIndex, item, state: 'started' })
    if (item.data.format === 'signature') {
      const { sign, post } = item.data
      if (!wallets.evm) throw missingWallet('evm', 'signature')
      const sign712 = sign.signatureKind === 'eip712' ? wallets.evm.signTypedData : undefined
      const sign191 = sign.signatureKind === 'eip191' ? wallets.evm.signMessage : undefined
      if (!sign712 && !sign191)
        throw new TypeError(`the evm wallet cannot sign ${sign.signatureKind} payloads`)
      const signature =
        sign.signatureKind === 'eip712'
          ? await sign712?.call(wallets.evm, sign)
          : await sign191?.call(wallets.evm, sign as Extract<typeof sign, { signatureKind: 'eip191' }>)
      const answer = (await transport.call(
        post.method,
        withQueryParameter(post.endpoint, 'signature', signature as string),
        post.body,
      )) as ExecutePermitResponse
      report({ type: 'signature', stepIndex, itemIndex, answer })
      // Steps the answer adds run right after this one, before the steps the quote already had.
      if (answer.steps?.length) steps.splice(stepIndex + 1, 0, ...answer.steps)
    } else {
      const { chainId, txHash } = await submitTransaction(item)
      if (txHash) txHashes.push(txHash)
      report({ type: 'transaction', stepIndex, itemIndex, chainId, txHash })
      if (step.id === 'deposit' && txHash) indexDeposit(chainId, txHash)
    }
    if (item.check) finalStatus = await follow(item.check.method, item.check.endpoint)
    item.status = 'complete'
    report({ type: 'item', stepIndex, itemIndex, item, state: 'complete' })
  }

  // `steps` may grow while walking (signature answers), so its length is read on every turn.
  for (let stepIndex = 0; stepIndex < steps.length; stepIndex++) {
    const step = steps[stepIndex] as Step
    const pending = step.items.flatMap((item, itemIndex) => (item.status === 'incomplete' ? [itemIndex] : []))
    if (pending.length === 0) continue
    report({ type: 'step', stepIndex, step })
    await deadline.race(Promise.all(pending.map((itemIndex) => runItem(stepIndex, itemIndex))), timeout)
  }

  // A request whose items carry no check (a permit the service deposits for) is still followed to its end.
  if (!finalStatus && requestId) {
    finalStatus = await follow('GET', withQueryParameter('/intents/status/v3', 'requestId', requestId))
  }
  if (!finalStatus) throw new TypeError('the quote has no request to follow (no requestId and no check)')
  return { requestId, status: finalStatus, txHashes, steps }
}
