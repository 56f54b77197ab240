/**
 * A client of the Tron full-node HTTP API (`/wallet/*`): JSON POSTs, transport failures and non-200
 * answers reported as RPC_HTTP_ERROR (retryable).
 */
import { type ChainLabel, PontisError, type TimedResponse, timedFetch } from '@pontis/core/plugin'

/** Options of {@link TronApiClient}. */
export interface TronApiOptions {
  readonly url: string
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
  readonly label: ChainLabel
}

/** Decodes the node's hex-encoded message texts (plain text is kept). */
export function tronMessageText(message: unknown): string {
  if (typeof message !== 'string') return ''
  if (!/^([0-9a-fA-F]{2})+$/.test(message)) return message
  return Buffer.from(message, 'hex').toString('utf8')
}

/** A client of one node. */
export class TronApiClient {
  readonly #options: TronApiOptions

  constructor(options: TronApiOptions) {
    this.#options = options
  }

  /** POSTs `body` to `/wallet/<method>` (or a full path) and answers the JSON object. */
  async call<T = Record<string, unknown>>(method: string, body: Record<string, unknown> = {}): Promise<T> {
    const { label } = this.#options
    const path = method.startsWith('/') ? method : `/wallet/${method}`
    let response: TimedResponse
    try {
      response = await timedFetch(
        `${this.#options.url.replace(/\/$/, '')}${path}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.#options.headers ?? {}) },
          body: JSON.stringify(body),
        },
        { timeoutMs: this.#options.timeoutMs },
      )
    } catch (error) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The Tron node API of ${label.displayName} (${label.id}) is unreachable; retry shortly.`,
        { chainId: label.id },
        { cause: error },
      )
    }
    const { text } = response
    if (!response.ok) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The Tron node API of ${label.displayName} (${label.id}) answered ${response.status} to ${path}: ${text.slice(0, 200)}`,
        { chainId: label.id, status: response.status },
      )
    }
    try {
      return JSON.parse(text || '{}') as T
    } catch (error) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The Tron node API of ${label.displayName} (${label.id}) answered ${path} with invalid JSON.`,
        { chainId: label.id },
        { cause: error },
      )
    }
  }
}
