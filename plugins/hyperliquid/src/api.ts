/**
 * A small client of Hyperliquid's public HTTP API: `POST /info` (reads), `POST /exchange` (signed
 * actions) and `POST /explorer` (`txDetails`). Several base URLs may be given: a transport failure
 * (network error, timeout, 429, 5xx) moves on to the next; when all fail the call throws the
 * transient RPC_HTTP_ERROR naming the chain.
 */
import {
  type ChainLabel,
  type FailoverTarget,
  fetchWithFailover,
  PontisError,
  type TimedResponse,
  unexpectedAnswer,
} from '@pontis/core/plugin'
import type { HyperliquidSend, HyperliquidSignedAction } from './actions.js'

/** A transaction as the explorer's `txDetails` shows it. */
export interface HyperliquidExplorerTx {
  readonly time: number
  readonly user: string
  readonly action: Readonly<Record<string, unknown>> & { readonly type: string }
  readonly block: number
  readonly hash: string
  /** Why the action failed; null when it succeeded. */
  readonly error: string | null
}

/** `/exchange`'s answer. */
export type HyperliquidExchangeAnswer =
  | { readonly status: 'ok'; readonly response: unknown }
  | { readonly status: 'err'; readonly response: string }

/** A spot token of `spotMeta`. */
export interface HyperliquidTokenInfo {
  readonly name: string
  readonly weiDecimals: number
  readonly index: number
  readonly tokenId: string
}

/** One entry of `userNonFundingLedgerUpdates`. */
export interface HyperliquidLedgerEntry {
  readonly time: number
  readonly hash: string
  readonly delta: Readonly<Record<string, unknown>> & { readonly type: string }
}

/** How to reach one chain's API. */
export interface HyperliquidApiOptions {
  readonly urls: readonly string[]
  /** Base URLs of `/explorer`; default `urls`. */
  readonly explorerUrls?: readonly string[]
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
  readonly label: ChainLabel
}

/** The API calls this plugin makes. */
export class HyperliquidApi {
  readonly #urls: readonly string[]
  readonly #explorerUrls: readonly string[]
  readonly #target: FailoverTarget

  constructor(options: HyperliquidApiOptions) {
    if (options.urls.length === 0) throw new TypeError('HyperliquidApi needs at least one base URL')
    const trim = (url: string) => url.replace(/\/+$/, '')
    this.#urls = options.urls.map(trim)
    this.#explorerUrls = (options.explorerUrls ?? options.urls).map(trim)
    this.#target = {
      apiName: 'Hyperliquid API',
      label: options.label,
      timeoutMs: options.timeoutMs,
      ...(options.headers ? { headers: options.headers } : {}),
    }
  }

  #post(bases: readonly string[], path: string, body: unknown): Promise<TimedResponse> {
    return fetchWithFailover(bases, path, { method: 'POST', body: JSON.stringify(body) }, this.#target)
  }

  #unexpected(path: string, response: TimedResponse): never {
    throw unexpectedAnswer(this.#target, path, response.status, response.text)
  }

  /** The answer's JSON; a body that does not parse is the API failing. */
  #json<T>(path: string, response: TimedResponse): T {
    try {
      return JSON.parse(response.text) as T
    } catch {
      return this.#unexpected(path, response)
    }
  }

  /** `POST /info` with `body`; the answer as JSON. */
  async info<T>(body: Readonly<Record<string, unknown>>): Promise<T> {
    const response = await this.#post(this.#urls, '/info', body)
    if (!response.ok) return this.#unexpected(`/info ${String(body.type)}`, response)
    return this.#json<T>(`/info ${String(body.type)}`, response)
  }

  /**
   * Whether the venue answers with sane data (readiness probes): `clearinghouseState` of `user`, a
   * small answer the venue gives for any address (zeros for an unknown one), must carry its clock
   * and a withdrawable amount.
   * @throws PontisError RPC_HTTP_ERROR when the venue is unreachable or the answer lacks them.
   */
  async checkAnswers(user: string): Promise<void> {
    const state = await this.info<{ time?: unknown; withdrawable?: unknown }>({
      type: 'clearinghouseState',
      user,
    })
    if (typeof state.time !== 'number' || typeof state.withdrawable !== 'string') {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The ${this.#target.apiName} of ${this.#target.label.displayName} (${this.#target.label.id}) answered clearinghouseState without its time and withdrawable amount.`,
        { chainId: this.#target.label.id },
      )
    }
  }

  /** The spot tokens (`spotMeta`). */
  async spotTokens(): Promise<HyperliquidTokenInfo[]> {
    const meta = await this.info<{ tokens?: HyperliquidTokenInfo[] }>({ type: 'spotMeta' })
    return (meta.tokens ?? []).map((token) => ({ ...token, tokenId: token.tokenId.toLowerCase() }))
  }

  /** `POST /exchange` with a signed action; the venue's answer. */
  async exchange(signed: HyperliquidSignedAction): Promise<HyperliquidExchangeAnswer> {
    const response = await this.#post(this.#urls, '/exchange', signed)
    // A 4xx is the venue refusing the body (e.g. 422: it does not deserialize): final, not transient.
    if (response.status >= 400 && response.status < 500) {
      return {
        status: 'err',
        response: `${response.status}: ${response.text.slice(0, 300)}`,
      }
    }
    if (!response.ok) return this.#unexpected('/exchange', response)
    return this.#json<HyperliquidExchangeAnswer>('/exchange', response)
  }

  /** The transaction with `hash`, or undefined when the explorer does not know it. */
  async txDetails(hash: string): Promise<HyperliquidExplorerTx | undefined> {
    const response = await this.#post(this.#explorerUrls, '/explorer', { type: 'txDetails', hash })
    if (response.status === 404) return undefined
    if (!response.ok) return this.#unexpected('/explorer txDetails', response)
    const answer = this.#json<{ type?: string; tx?: HyperliquidExplorerTx | null }>(
      '/explorer txDetails',
      response,
    )
    return answer.type === 'txDetails' && answer.tx ? answer.tx : undefined
  }
}

/** True when `action` is a send this plugin reads. */
export function isHyperliquidSend(value: object): value is HyperliquidSend {
  const action = value as Readonly<Record<string, unknown>>
  return (
    (action.type === 'usdSend' || (action.type === 'spotSend' && typeof action.token === 'string')) &&
    typeof action.destination === 'string' &&
    typeof action.amount === 'string' &&
    typeof action.time === 'number'
  )
}
