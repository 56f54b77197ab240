/**
 * A small client of the Esplora HTTP API (https://github.com/Blockstream/esplora/blob/master/API.md),
 * the read and broadcast interface of Blockstream's and mempool.space's explorers, of electrs, and
 * of the devnet's regtest simulator. Only the calls this plugin needs.
 *
 * Several base URLs may be given: a transport failure (network error, timeout, 429, 5xx) moves on
 * to the next one; when all fail the call throws the transient RPC_HTTP_ERROR naming the chain.
 */
import {
  type ChainLabel,
  type FailoverRequest,
  type FailoverTarget,
  fetchWithFailover,
  PontisError,
  type TimedResponse,
  unexpectedAnswer,
} from '@pontis/core/plugin'

/** Where a transaction stands (`/tx/:txid/status`). */
export interface EsploraTxStatus {
  readonly confirmed: boolean
  readonly block_height?: number
  readonly block_hash?: string
  readonly block_time?: number
}

/** An output as Esplora shows it (also the `prevout` of an input). */
export interface EsploraOutput {
  /** Output script, hex. */
  readonly scriptpubkey: string
  readonly scriptpubkey_type?: string
  readonly scriptpubkey_address?: string
  /** Satoshi. */
  readonly value: number
}

export interface EsploraInput {
  readonly txid: string
  readonly vout: number
  readonly prevout: EsploraOutput | null
  readonly is_coinbase?: boolean
  readonly sequence?: number
}

/** A transaction (`/tx/:txid`, and the items of `/address/:address/txs`). */
export interface EsploraTransaction {
  readonly txid: string
  readonly version?: number
  readonly locktime?: number
  readonly vin: readonly EsploraInput[]
  readonly vout: readonly EsploraOutput[]
  readonly size?: number
  readonly weight?: number
  readonly fee?: number
  readonly status: EsploraTxStatus
}

/** An unspent output of an address (`/address/:address/utxo`), confirmed or in the mempool. */
export interface EsploraUtxo {
  readonly txid: string
  readonly vout: number
  readonly value: number
  readonly status: EsploraTxStatus
}

export interface EsploraStats {
  readonly funded_txo_count: number
  readonly funded_txo_sum: number
  readonly spent_txo_count: number
  readonly spent_txo_sum: number
  readonly tx_count: number
}

/** `/address/:address`: confirmed and mempool totals. */
export interface EsploraAddressStats {
  readonly address: string
  readonly chain_stats: EsploraStats
  readonly mempool_stats: EsploraStats
}

/** What `POST /tx` answered when it refused a transaction. */
export class EsploraBroadcastError extends Error {
  readonly status: number
  constructor(status: number, body: string) {
    super(`broadcast refused (${status}): ${body.slice(0, 500)}`)
    this.name = 'EsploraBroadcastError'
    this.status = status
  }
}

/** How to reach one chain's Esplora API. */
export interface EsploraOptions {
  /** Base URLs, tried in order on transport failures (no trailing slash needed). */
  readonly urls: readonly string[]
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
  readonly label: ChainLabel
}

/** The Esplora calls this plugin makes. */
export class EsploraClient {
  readonly #urls: readonly string[]
  readonly #target: FailoverTarget
  readonly #label: ChainLabel

  constructor(options: EsploraOptions) {
    if (options.urls.length === 0) throw new TypeError('EsploraClient needs at least one base URL')
    this.#urls = options.urls.map((url) => url.replace(/\/+$/, ''))
    this.#label = options.label
    this.#target = {
      apiName: 'Esplora API',
      label: options.label,
      timeoutMs: options.timeoutMs,
      ...(options.headers ? { headers: options.headers } : {}),
    }
  }

  /** Runs one request against each base URL in turn until one answers (any status but 429/5xx). */
  #request(path: string, init: FailoverRequest = {}): Promise<TimedResponse> {
    return fetchWithFailover(this.#urls, path, { ...init, contentType: 'text/plain' }, this.#target)
  }

  #unexpected(path: string, response: TimedResponse): never {
    throw unexpectedAnswer(
      this.#target,
      path.split('/').slice(0, 3).join('/'),
      response.status,
      response.text,
    )
  }

  /** GET `path` as JSON; undefined on 404 (and on 400 when `missingOn400`: Esplora's answer to an unknown id). */
  async #json<T>(path: string, options: { missingOn400?: boolean } = {}): Promise<T | undefined> {
    const response = await this.#request(path)
    if (response.status === 404 || (options.missingOn400 && response.status === 400)) return undefined
    if (!response.ok) return this.#unexpected(path, response)
    try {
      return JSON.parse(response.text) as T
    } catch {
      return this.#unexpected(path, response)
    }
  }

  async #text(path: string): Promise<string | undefined> {
    const response = await this.#request(path)
    if (response.status === 404) return undefined
    if (!response.ok) return this.#unexpected(path, response)
    return response.text.trim()
  }

  async #required<T>(path: string, value: Promise<T | undefined>): Promise<T> {
    const result = await value
    if (result === undefined) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The Esplora API of ${this.#label.displayName} (${this.#label.id}) has no ${path}.`,
        { chainId: this.#label.id },
      )
    }
    return result
  }

  /** Height of the newest block. */
  async tipHeight(): Promise<number> {
    const text = await this.#required('/blocks/tip/height', this.#text('/blocks/tip/height'))
    const height = Number(text)
    if (!Number.isSafeInteger(height) || height < 0) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The Esplora API of ${this.#label.displayName} gave a bad tip height.`,
      )
    }
    return height
  }

  /** The hash of the block at `height` on this API's chain, or undefined when it has none there. */
  async blockHashAt(height: number): Promise<string | undefined> {
    const hash = await this.#text(`/block-height/${height}`)
    return hash === undefined ? undefined : hash.toLowerCase()
  }

  /** Fee rates (sat/vB) by confirmation target in blocks; may be empty (regtest, quiet mempool). */
  async feeEstimates(): Promise<Readonly<Record<string, number>>> {
    return (await this.#json<Record<string, number>>('/fee-estimates')) ?? {}
  }

  async addressStats(address: string): Promise<EsploraAddressStats> {
    const path = `/address/${encodeURIComponent(address)}`
    return this.#required(path, this.#json<EsploraAddressStats>(path))
  }

  async addressUtxos(address: string): Promise<readonly EsploraUtxo[]> {
    return (await this.#json<EsploraUtxo[]>(`/address/${encodeURIComponent(address)}/utxo`)) ?? []
  }

  /** Confirmed transactions of `address`, newest first, 25 per page, older than `lastSeenTxid`. */
  async addressChainTxs(address: string, lastSeenTxid?: string): Promise<readonly EsploraTransaction[]> {
    const after = lastSeenTxid === undefined ? '' : `/${lastSeenTxid}`
    return (
      (await this.#json<EsploraTransaction[]>(`/address/${encodeURIComponent(address)}/txs/chain${after}`)) ??
      []
    )
  }

  /** Mempool transactions of `address` (Esplora serves up to 50). */
  async addressMempoolTxs(address: string): Promise<readonly EsploraTransaction[]> {
    return (
      (await this.#json<EsploraTransaction[]>(`/address/${encodeURIComponent(address)}/txs/mempool`)) ?? []
    )
  }

  /** The transaction, or undefined when neither the chain nor the mempool has it. */
  transaction(txid: string): Promise<EsploraTransaction | undefined> {
    return this.#json<EsploraTransaction>(`/tx/${txid}`, { missingOn400: true })
  }

  /** The raw transaction, hex, or undefined when unknown. */
  transactionHex(txid: string): Promise<string | undefined> {
    return this.#text(`/tx/${txid}/hex`)
  }

  /**
   * Hands a raw transaction (hex) to the network; resolves to the txid the API answered.
   * @throws EsploraBroadcastError when the node refuses it (the message carries the node's reason).
   */
  async broadcast(hex: string): Promise<string> {
    const response = await this.#request('/tx', { method: 'POST', body: hex })
    const body = response.text.trim()
    if (!response.ok) throw new EsploraBroadcastError(response.status, body)
    return body
  }
}
