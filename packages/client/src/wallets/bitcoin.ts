/**
 * Bitcoin: `bitcoin-psbt` items. The small {@link BitcoinWallet} interface,
 * {@link bitcoinWalletAdapter} over any such wallet, and {@link esploraBitcoinWallet} over your
 * PSBT signer and an Esplora API.
 */
import type { BitcoinPsbtData } from '@pontis/generated/intents'
import {
  adapterName,
  type ChainIdsOption,
  formatAdapter,
  type WalletAdapter,
  type WalletAdapterOptions,
} from './adapter.js'

/** What a Bitcoin wallet must do; {@link bitcoinWalletAdapter} turns one into a {@link WalletAdapter}. */
export interface BitcoinWallet {
  /**
   * Signs and finalizes the quoted PSBT (hex without 0x, as Relay serves it; `hexToBytes`
   * decodes it); answers the raw signed transaction, hex.
   */
  signPsbt(psbt: string, data: BitcoinPsbtData): Promise<string>
  /** Broadcasts a raw transaction (hex); answers its txid. */
  broadcast(transactionHex: string, data: BitcoinPsbtData): Promise<string>
}

/** A {@link WalletAdapter} over a {@link BitcoinWallet}: claims `bitcoin-psbt` items on `chainIds` (every chain by default). */
export function bitcoinWalletAdapter(
  wallet: BitcoinWallet,
  options: WalletAdapterOptions = {},
): WalletAdapter<BitcoinPsbtData> {
  return formatAdapter<BitcoinPsbtData>('bitcoin-psbt', 'bitcoin', options, async (data) => {
    const signed = await wallet.signPsbt(data.psbt, data)
    return { chainId: data.chainId, txHash: await wallet.broadcast(signed, data) }
  })
}

/** Options of {@link esploraBitcoinWallet}. */
export interface EsploraBitcoinWalletOptions extends ChainIdsOption {
  /** Esplora API origin and path prefix, for example `http://127.0.0.1:3002` or `https://blockstream.info/api`. */
  esploraUrl: string
  /** Signs and finalizes the PSBT (hex); answers the raw transaction hex (your signer, e.g. `@scure/btc-signer`). */
  signPsbt: BitcoinWallet['signPsbt']
  fetch?: typeof fetch
}

/**
 * A {@link BitcoinWallet} and {@link WalletAdapter} that signs with your PSBT signer and broadcasts
 * with Esplora's `POST /tx`. Serves every Bitcoin chain unless `chainIds` says which.
 */
export function esploraBitcoinWallet(
  options: EsploraBitcoinWalletOptions,
): BitcoinWallet & WalletAdapter<BitcoinPsbtData> {
  const doFetch = options.fetch ?? globalThis.fetch
  const base = options.esploraUrl.replace(/\/+$/, '')
  const wallet: BitcoinWallet = {
    signPsbt: options.signPsbt,
    async broadcast(transactionHex) {
      const response = await doFetch(`${base}/tx`, { method: 'POST', body: transactionHex })
      const text = (await response.text()).trim()
      if (!response.ok) throw new Error(`Esplora refused the transaction (${response.status}): ${text}`)
      return text
    },
  }
  return {
    ...wallet,
    ...bitcoinWalletAdapter(wallet, {
      name: adapterName('esplora bitcoin wallet', options.chainIds),
      chainIds: options.chainIds,
    }),
  }
}
