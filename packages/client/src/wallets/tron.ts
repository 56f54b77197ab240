/**
 * Tron: `tron-transaction` items. The small {@link TronWallet} interface,
 * {@link tronWalletAdapter} over any such wallet, and {@link tronNodeWallet} over a txID signer and
 * a Tron full-node HTTP API.
 */
import type { TronTransactionData } from '@pontis/generated/intents'
import {
  adapterName,
  type ChainIdsOption,
  formatAdapter,
  type WalletAdapter,
  type WalletAdapterOptions,
} from './adapter.js'
import { bytesToHex, hexToBytes, hexToText } from './shared.js'

/** Signs `txID` of a `tron-transaction` item and broadcasts it; answers the transaction id ({@link tronNodeWallet}). */
export interface TronWallet {
  signAndSendTransaction(data: TronTransactionData): Promise<string>
}

/** A {@link WalletAdapter} over a {@link TronWallet}: claims `tron-transaction` items on `chainIds` (every chain by default). */
export function tronWalletAdapter(
  wallet: TronWallet,
  options: WalletAdapterOptions = {},
): WalletAdapter<TronTransactionData> {
  return formatAdapter<TronTransactionData>('tron-transaction', 'tron', options, async (data) => ({
    chainId: data.chainId,
    txHash: await wallet.signAndSendTransaction(data),
  }))
}

/** Options of {@link tronNodeWallet}. */
export interface TronNodeWalletOptions extends ChainIdsOption {
  /** Full-node HTTP API origin (e.g. `https://api.trongrid.io`); broadcasts go to `/wallet/broadcasttransaction`. */
  apiUrl: string
  /**
   * Signs the 32-byte `txID` (hex, no 0x) with the user's secp256k1 key and answers the 65-byte
   * signature r‖s‖v as hex (TronWeb's `trx.sign` or any secp256k1 signer).
   */
  signTransactionId(txID: string): Promise<string>
  fetch?: typeof fetch
}

/**
 * A {@link TronWallet} and {@link WalletAdapter}: checks that the item's `txID` is what it claims
 * (sha256 of `raw_data_hex`, WebCrypto), signs it, and broadcasts the node's JSON with the
 * signature. Answers the txID.
 */
export function tronNodeWallet(
  options: TronNodeWalletOptions,
): TronWallet & WalletAdapter<TronTransactionData> {
  const doFetch = options.fetch ?? globalThis.fetch
  const base = options.apiUrl.replace(/\/+$/, '')
  const wallet: TronWallet = {
    async signAndSendTransaction(data) {
      const { txID, raw_data_hex: rawHex } = data.transaction
      const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', hexToBytes(rawHex)))
      if (bytesToHex(digest) !== txID.toLowerCase())
        throw new Error(
          `the transaction's txID ${txID} is not the sha256 of its raw data; refusing to sign it`,
        )
      const signature = (await options.signTransactionId(txID)).replace(/^0x/, '')
      if (!/^[0-9a-fA-F]{130}$/.test(signature)) throw new TypeError('expected a 65-byte hex signature')
      const response = await doFetch(`${base}/wallet/broadcasttransaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...data.transaction, signature: [signature] }),
      })
      const answer = (await response.json()) as { result?: boolean; code?: string; message?: string }
      if (answer.result !== true && answer.code !== 'DUP_TRANSACTION_ERROR') {
        const reason =
          answer.message && /^[0-9a-fA-F]+$/.test(answer.message) ? hexToText(answer.message) : answer.message
        throw new Error(
          `the Tron node refused the transaction: ${answer.code ?? response.status} ${reason ?? ''}`.trim(),
        )
      }
      return txID.toLowerCase()
    },
  }
  return {
    ...wallet,
    ...tronWalletAdapter(wallet, {
      name: adapterName('tron node wallet', options.chainIds),
      chainIds: options.chainIds,
    }),
  }
}
