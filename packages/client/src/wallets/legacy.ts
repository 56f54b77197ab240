/**
 * The wallets object `executeQuote` took before wallet adapters (one key per chain family),
 * deprecated: it is turned into the equivalent adapter list where the call enters the client.
 */
import type { HyperliquidActionData, LighterTransferData } from '@pontis/generated/intents'
import type { WalletAdapter } from './adapter.js'
import { type BitcoinWallet, bitcoinWalletAdapter } from './bitcoin.js'
import { type EvmWallet, evmWalletAdapter } from './evm.js'
import { type SvmWallet, svmWalletAdapter } from './svm.js'
import { type TronWallet, tronWalletAdapter } from './tron.js'

/**
 * Signs and submits actions on a trading venue (the perpetuals exchange's `lighter-transfer`,
 * Hyperliquid's `hyperliquid-action`): the `venue` member of {@link Wallets}. With adapters, write
 * a {@link WalletAdapter} that claims `lighter-transfer` instead; {@link hyperliquidWallet} is both.
 */
export interface VenueSigner {
  /** Signs and submits the action; answers the venue's transaction id when it has one. */
  submit(data: LighterTransferData | HyperliquidActionData): Promise<string | undefined>
}

/**
 * The wallets of one execution, by chain family.
 * @deprecated Pass a list of wallet adapters instead: `[viemWalletAdapter(walletClient),
 * svmKeypairWallet(keypair, rpcUrl)]`; a custom wallet goes through `evmWalletAdapter(wallet)`,
 * `svmWalletAdapter`, `bitcoinWalletAdapter` or `tronWalletAdapter`.
 */
export interface Wallets {
  evm?: EvmWallet
  svm?: SvmWallet
  bitcoin?: BitcoinWallet
  venue?: VenueSigner
  tron?: TronWallet
}

const VENUE_FORMATS: ReadonlySet<string> = new Set(['lighter-transfer', 'hyperliquid-action'])

/** The adapter list equivalent to a {@link Wallets} object: each wallet serves its family on every chain, as before. */
export function adaptersOfWallets(wallets: Wallets): WalletAdapter[] {
  const { evm, svm, bitcoin, venue, tron } = wallets
  const adapters: WalletAdapter[] = []
  if (evm) adapters.push(evmWalletAdapter(evm))
  if (svm) adapters.push(svmWalletAdapter(svm))
  if (bitcoin) adapters.push(bitcoinWalletAdapter(bitcoin))
  if (venue)
    adapters.push({
      name: 'venue signer',
      claims: (data): data is LighterTransferData | HyperliquidActionData => VENUE_FORMATS.has(data.format),
      async execute(data: LighterTransferData | HyperliquidActionData) {
        const txHash = await venue.submit(data)
        return txHash ? { chainId: data.chainId, txHash } : { chainId: data.chainId }
      },
    })
  if (tron) adapters.push(tronWalletAdapter(tron))
  return adapters
}
