/**
 * The Hyperliquid devnet: a simulator of Hyperliquid core's public API (`/info`, `/exchange`,
 * `/explorer`; see README.md), its fixed cast and the wallet-side signing helper tests use.
 */
export {
  HYPERLIQUID_DEVNET_CHAIN_ID,
  HYPERLIQUID_EMPTY,
  HYPERLIQUID_FUNDING,
  HYPERLIQUID_HYPE_ID,
  HYPERLIQUID_PERPS_USDC_DECIMALS,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_SPOT_TOKENS,
  HYPERLIQUID_SPOT_USDC_ID,
  HYPERLIQUID_USERS,
  type HyperliquidDevAccount,
  type HyperliquidSpotToken,
  hyperliquidDevnetPrivateKey,
} from './accounts.js'
export {
  type HyperliquidDevnet,
  type HyperliquidDevnetOptions,
  hyperliquidDevnetEnvironment,
  startHyperliquidDevnet,
} from './devnet.js'
export {
  HYPERLIQUID_NONCE_FUTURE_MS,
  HYPERLIQUID_NONCE_PAST_MS,
  HYPERLIQUID_NONCE_SET_SIZE,
  HyperliquidActionError,
  HyperliquidLedger,
  type HyperliquidLedgerUpdate,
  type HyperliquidTxRecord,
  hyperliquidFormatAmount,
  hyperliquidParseAmount,
} from './ledger.js'
export {
  type HyperliquidSendAction,
  type HyperliquidSignature,
  type HyperliquidSpotSendAction,
  type HyperliquidUsdSendAction,
  hyperliquidActionDigest,
  hyperliquidRecoverSigner,
  hyperliquidSignAction,
  hyperliquidTransactionHash,
} from './signing.js'
