/**
 * A small client of the venue's public REST API (`/api/v1`): the calls this plugin makes. Answers
 * are `{code: 200, ...}`; a refusal is HTTP 400 `{code, message}`, answered here as a
 * {@link LighterRefusal} value rather than thrown, since several callers read it as "not found".
 * Transport failures (network error, timeout, 429, 5xx) move on to the next base URL; when all fail
 * the call throws the transient RPC_HTTP_ERROR naming the chain.
 */
import {
  type ChainLabel,
  type FailoverTarget,
  fetchWithFailover,
  PontisError,
  unexpectedAnswer,
} from '@pontis/core/plugin'

/** What the venue answered to a refused request (HTTP 400). */
export interface LighterRefusal {
  readonly refused: true
  readonly code: number
  readonly message: string
}

/** An account as `/account` shows it (the members this plugin reads). */
export interface LighterApiAccount {
  readonly index: number
  readonly l1_address: string
  /** Perpetuals USDC collateral, decimal string. */
  readonly collateral: string
  readonly assets?: readonly {
    readonly asset_id: number
    readonly symbol?: string
    readonly balance: string
  }[]
}

/** A transaction as `/tx` shows it. */
export interface LighterApiTransaction {
  readonly hash: string
  readonly type: number
  /** The `tx_info` JSON string. */
  readonly info: string
  /** 2 = executed; 1 = pending; others failed. */
  readonly status: number
  readonly block_height?: number
  readonly executed_at?: number
}

/** Largest `limit` the venue takes on `/accountTxs`. */
export const LIGHTER_ACCOUNT_TXS_MAX_LIMIT = 100

/** How to reach one chain's venue API. */
export interface LighterApiOptions {
  /** Base URLs (without `/api/v1`), tried in order on transport failures. */
  readonly urls: readonly string[]
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
  readonly label: ChainLabel
}

/** True when `value` has the members of a transaction this plugin reads. */
function isTransaction(value: unknown): value is LighterApiTransaction {
  if (typeof value !== 'object' || value === null) return false
  const tx = value as Record<string, unknown>
  return (
    typeof tx.hash === 'string' &&
    typeof tx.type === 'number' &&
    typeof tx.info === 'string' &&
    typeof tx.status === 'number' &&
    typeof tx.block_height === 'number' &&
    Number.isSafeInteger(tx.block_height)
  )
}

/** True when `value` is a refusal rather than an answer. */
export function isRefusal(value: unknown): value is LighterRefusal {
  return typeof value === 'object' && value !== null && (value as { refused?: unknown }).refused === true
}

/** The venue API calls this plugin makes. */
export class LighterApiClient {
  readonly #urls: readonly string[]
  readonly #target: FailoverTarget
  readonly #label: ChainLabel

  constructor(options: LighterApiOptions) {
    if (options.urls.length === 0) throw new TypeError('LighterApiClient needs at least one base URL')
    this.#urls = options.urls.map((url) => url.replace(/\/+$/, '').replace(/\/api\/v1$/, ''))
    this.#label = options.label
    this.#target = {
      apiName: 'venue API',
      label: options.label,
      timeoutMs: options.timeoutMs,
      ...(options.headers ? { headers: options.headers } : {}),
    }
  }

  async #request<T>(path: string, body?: string): Promise<T | LighterRefusal> {
    const response = await fetchWithFailover(
      this.#urls,
      `/api/v1${path}`,
      body === undefined ? {} : { method: 'POST', body },
      this.#target,
    )
    const { text } = response
    let json: Record<string, unknown> | undefined
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        json = parsed as Record<string, unknown>
      }
    } catch {
      // reported below
    }
    if (response.status === 400 && json) {
      return {
        refused: true,
        code: typeof json.code === 'number' ? json.code : 400,
        message: typeof json.message === 'string' ? json.message : text.slice(0, 200),
      }
    }
    if (!response.ok || !json || (json.code !== undefined && json.code !== 200))
      throw unexpectedAnswer(this.#target, path.split('?')[0]!, response.status, text)
    return json as T
  }

  /** The account `index`, or a refusal (unknown account). */
  async account(index: string): Promise<LighterApiAccount | LighterRefusal> {
    const answer = await this.#request<{ accounts?: LighterApiAccount[] }>(
      `/account?by=index&value=${encodeURIComponent(index)}`,
    )
    if (isRefusal(answer)) return answer
    const account = answer.accounts?.find((item) => String(item.index) === index)
    return account ?? { refused: true, code: 404, message: `account not found: ${index}` }
  }

  /** The transfer fee in USDC smallest unit for transfers out of `index`, or a refusal. */
  async transferFee(index: string): Promise<bigint | LighterRefusal> {
    const answer = await this.#request<{ transfer_fee_usdc?: number | string }>(
      `/transferFeeInfo?account_index=${encodeURIComponent(index)}`,
    )
    if (isRefusal(answer)) return answer
    const fee = answer.transfer_fee_usdc
    if (
      (typeof fee === 'number' && Number.isSafeInteger(fee) && fee >= 0) ||
      (typeof fee === 'string' && /^[0-9]+$/.test(fee))
    ) {
      return BigInt(fee)
    }
    throw new PontisError(
      'RPC_HTTP_ERROR',
      `The venue API of ${this.#label.displayName} gave a bad transfer fee.`,
      {
        chainId: this.#label.id,
      },
    )
  }

  /** The next nonce of an account's API key, or a refusal. */
  async nextNonce(index: string, apiKeyIndex: number): Promise<bigint | LighterRefusal> {
    const answer = await this.#request<{ nonce?: number }>(
      `/nextNonce?account_index=${encodeURIComponent(index)}&api_key_index=${apiKeyIndex}`,
    )
    if (isRefusal(answer)) return answer
    if (typeof answer.nonce !== 'number' || !Number.isSafeInteger(answer.nonce) || answer.nonce < 0) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The venue API of ${this.#label.displayName} gave a bad nonce.`,
        {
          chainId: this.#label.id,
        },
      )
    }
    return BigInt(answer.nonce)
  }

  /** The transaction `hash` (0x-hex), or a refusal (the venue's answer to an unknown hash). */
  transaction(hash: string): Promise<LighterApiTransaction | LighterRefusal> {
    return this.#request<LighterApiTransaction>(`/tx?by=hash&value=${encodeURIComponent(hash)}`)
  }

  /**
   * The transactions account `index` sent or received from block height `fromHeight` on, oldest
   * first, at most `limit` (1 to {@link LIGHTER_ACCOUNT_TXS_MAX_LIMIT}), or a refusal (unknown
   * account).
   */
  async accountTxs(
    index: string,
    fromHeight: number,
    limit: number,
  ): Promise<readonly LighterApiTransaction[] | LighterRefusal> {
    const answer = await this.#request<{ txs?: unknown }>(
      `/accountTxs?by=account_index&value=${encodeURIComponent(index)}&index=${fromHeight}&limit=${limit}`,
    )
    if (isRefusal(answer)) return answer
    const txs = answer.txs ?? []
    if (!Array.isArray(txs) || !txs.every(isTransaction)) {
      throw this.#malformed('account history')
    }
    return txs
  }

  /** The venue's current block height (the head). */
  async currentHeight(): Promise<number> {
    const answer = await this.#request<{ height?: unknown }>('/currentHeight')
    const height = isRefusal(answer) ? undefined : answer.height
    if (typeof height !== 'number' || !Number.isSafeInteger(height) || height < 0) {
      throw this.#malformed('current height')
    }
    return height
  }

  #malformed(what: string): PontisError {
    return new PontisError(
      'RPC_HTTP_ERROR',
      `The venue API of ${this.#label.displayName} (${this.#label.id}) gave a bad ${what}.`,
      { chainId: this.#label.id },
    )
  }

  /** Submits a transaction; answers its hash or the refusal. */
  async sendTx(txType: number, txInfo: string): Promise<string | LighterRefusal> {
    const answer = await this.#request<{ tx_hash?: string }>(
      '/sendTx',
      JSON.stringify({ tx_type: txType, tx_info: txInfo }),
    )
    if (isRefusal(answer)) return answer
    return String(answer.tx_hash ?? '')
  }

  /** The account indexes `l1Address` owns (main account first), or a refusal (none). */
  async accountsByL1Address(l1Address: string): Promise<readonly number[] | LighterRefusal> {
    const answer = await this.#request<{ sub_accounts?: { index: number }[] }>(
      `/accountsByL1Address?l1_address=${encodeURIComponent(l1Address)}`,
    )
    if (isRefusal(answer)) return answer
    return (answer.sub_accounts ?? []).map((account) => account.index)
  }
}
