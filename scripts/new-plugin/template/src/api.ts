/**
 * The __TITLE__ node's HTTP API: send a raw transaction, look a transaction up, read a balance,
 * ask for the newest block.
 * Replace it with the family's real node API.
 */
import { PontisError, type TimedResponse, timedFetch } from '@pontis/core/plugin'

/** A deposit as the node reports it in a transaction. */
export interface NodeDeposit {
  readonly index: number
  readonly depository: string
  readonly depositId: string
  readonly depositor: string
  readonly currencyId: string
  readonly amount: string
}

/** A transaction the node has: in a block (`success`) or refused when executed (`reverted`). */
export interface NodeTransaction {
  readonly state: 'success' | 'reverted'
  readonly blockNumber: number
  readonly confirmations: number
  readonly deposits: readonly NodeDeposit[]
}

/** Bound of one call to the node. */
const TIMEOUT_MS = 10_000

/** A client of one node. */
export class __PASCAL__ApiClient {
  readonly #url: string

  constructor(url: string) {
    this.#url = url.replace(/\/+$/, '')
  }

  // Through core's timedFetch: bounded, and counted as this chain's RPC calls in the metrics.
  async #call(path: string, init: Omit<RequestInit, 'signal'> = {}): Promise<TimedResponse> {
    try {
      return await timedFetch(`${this.#url}${path}`, init, { timeoutMs: TIMEOUT_MS })
    } catch (error) {
      throw new PontisError('SERVICE_UNAVAILABLE', `The __TITLE__ node cannot be reached: ${String(error)}`)
    }
  }

  /** Sends `raw`; sending one the node already has is not an error. */
  async send(raw: string): Promise<void> {
    const response = await this.#call('/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ raw }),
    })
    if (!response.ok) {
      const { error } = JSON.parse(response.text) as { error?: string }
      throw new PontisError('RPC_HTTP_ERROR', `The __TITLE__ node refused it: ${error}`)
    }
  }

  /** The transaction `id`, or undefined when the node has never seen it. */
  async transaction(id: string): Promise<NodeTransaction | undefined> {
    const response = await this.#call(`/transactions/${encodeURIComponent(id)}`)
    if (response.status === 404) return undefined
    return JSON.parse(response.text) as NodeTransaction
  }

  /** The newest block's number (readiness probes). */
  async head(): Promise<number> {
    const response = await this.#call('/head')
    const number = response.ok ? (JSON.parse(response.text) as { number?: unknown }).number : undefined
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) {
      throw new PontisError('RPC_HTTP_ERROR', 'The __TITLE__ node answered /head without a block number')
    }
    return number
  }

  /** The balance of `address` in `currencyId`, smallest unit. */
  async balance(address: string, currencyId: string): Promise<bigint> {
    const response = await this.#call(
      `/balances/${encodeURIComponent(address)}/${encodeURIComponent(currencyId)}`,
    )
    return BigInt((JSON.parse(response.text) as { amount: string }).amount)
  }
}
