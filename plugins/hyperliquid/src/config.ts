/**
 * Options of a Hyperliquid chain entry's `plugin` member, and their JSON Schema (the registry
 * applies its defaults).
 */

/** Perps USDC (the clearinghouse's withdrawable USDC): the native currency id, 16 zero bytes. */
export const HYPERLIQUID_NATIVE_CURRENCY_ID = `0x${'0'.repeat(32)}`
/** Decimals of perps USDC amounts (`usdSend`). */
export const HYPERLIQUID_NATIVE_DECIMALS = 8

/** Options of a Hyperliquid chain entry's `plugin` member. */
export interface HyperliquidPluginConfig {
  /** The `hyperliquidChain` every signed action names. Default `Mainnet`. */
  readonly hyperliquidChain: 'Mainnet' | 'Testnet'
  /** The EIP-712 domain chain id actions are signed under, hex. Default `0x66eee`. */
  readonly signatureChainId: string
  /** Base URL of the explorer API (`POST /explorer`); default the chain's `rpc.url`. */
  readonly explorerUrl?: string
  /** Seconds balance reads are reused. Default 2. */
  readonly readCacheSeconds: number
  /** Seconds the spot token list (`spotMeta`) is reused. Default 300. */
  readonly metaCacheSeconds: number
  /** Most ledger updates one deposit scan asks for before it reports not caught up. Default 2000. */
  readonly maxScanUpdates: number
}

/** JSON Schema of {@link HyperliquidPluginConfig}. */
export const hyperliquidConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    hyperliquidChain: { enum: ['Mainnet', 'Testnet'], default: 'Mainnet' },
    signatureChainId: { type: 'string', pattern: '^0x[0-9a-fA-F]{1,12}$', default: '0x66eee' },
    explorerUrl: { type: 'string', pattern: '^https?://\\S+$' },
    readCacheSeconds: { type: 'number', minimum: 0, maximum: 60, default: 2 },
    metaCacheSeconds: { type: 'number', minimum: 0, maximum: 86400, default: 300 },
    maxScanUpdates: { type: 'integer', minimum: 1, maximum: 100000, default: 2000 },
  },
} as const
