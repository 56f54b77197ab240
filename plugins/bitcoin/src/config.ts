/**
 * Options of a Bitcoin chain entry's `plugin` member, and their JSON Schema (the registry applies
 * its defaults).
 */

/** The networks a Bitcoin chain can be: they differ in address prefixes only, for this plugin. */
export type BitcoinNetworkName = 'bitcoin' | 'testnet' | 'regtest'

/** The native currency's identifier: a fixed string, valid as a currency id only, never as an address. */
export const BITCOIN_NATIVE_CURRENCY_ID = 'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8'

/** Options of a Bitcoin chain entry's `plugin` member. */
export interface BitcoinPluginConfig {
  /** Which address prefixes are valid. Default `bitcoin` (mainnet). */
  readonly network: BitcoinNetworkName
  /** Base URL of the Esplora HTTP API; default the chain's `rpc.url` (with its `fallbackUrls`). */
  readonly esploraUrl?: string
  /** Seconds chain reads (fee estimates, tip height, balances) are reused. Default 2. */
  readonly readCacheSeconds: number
  /** Blocks (1 = included) before a deposit counts as final. Default 1. */
  readonly confirmations: number
  /** Blocks before a deposit above its currency's `highValueThreshold` counts as final. Default 2. */
  readonly highValueConfirmations: number
  /**
   * Per currency id, the amount (satoshi, decimal string) above which a deposit waits for
   * `highValueConfirmations`. A currency without an entry never counts as high value.
   * Default: 0.1 BTC for the native currency.
   */
  readonly highValueThreshold: Readonly<Record<string, string>>
  /** Confirmation target (blocks) the fee rate is taken for from `/fee-estimates`. Default 2. */
  readonly feeTargetBlocks: number
  /** Lowest fee rate used, sat/vB (regtest and quiet mempools estimate nothing). Default 1. */
  readonly minFeeRate: number
  /** Highest fee rate used, sat/vB: a cap against a faulty estimate source. Default 500. */
  readonly maxFeeRate: number
  /** Secret (32-byte hex) per-request deposit addresses are derived from; none: no deposit addresses. */
  readonly depositAddressSeed?: string
  /** Smallest output created, satoshi; smaller change is left to the fee. Default 546. */
  readonly dustLimit: number
  /**
   * Seconds an outpoint spent by a signed (maybe not yet broadcast) fill or refund stays reserved,
   * so the next transaction signed (by any worker of the service) does not spend it again. Default 600.
   */
  readonly reservationSeconds: number
  /**
   * Highest fee rate, sat/vB, a stuck fill, refund or repayment is replaced at (RBF: the same coins
   * re-signed paying more, so at most one of them is mined). Default 200.
   */
  readonly maxReplacementFeeRate: number
  /** Seconds between blocks, for time estimates. Default 600. */
  readonly blockTimeSeconds: number
  /** Most pages (25 transactions each) of the vault's history one deposit scan step reads. Default 8. */
  readonly maxScanPages: number
}

/** JSON Schema of {@link BitcoinPluginConfig}. */
export const bitcoinConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    network: { enum: ['bitcoin', 'testnet', 'regtest'], default: 'bitcoin' },
    esploraUrl: { type: 'string', pattern: '^https?://\\S+$' },
    readCacheSeconds: { type: 'number', minimum: 0, maximum: 60, default: 2 },
    confirmations: { type: 'integer', minimum: 1, maximum: 100, default: 1 },
    highValueConfirmations: { type: 'integer', minimum: 1, maximum: 100, default: 2 },
    highValueThreshold: {
      type: 'object',
      additionalProperties: { type: 'string', pattern: '^[0-9]{1,16}$' },
      default: { [BITCOIN_NATIVE_CURRENCY_ID]: '10000000' },
    },
    feeTargetBlocks: { type: 'integer', minimum: 1, maximum: 1008, default: 2 },
    minFeeRate: { type: 'number', minimum: 0, default: 1 },
    maxFeeRate: { type: 'number', exclusiveMinimum: 0, default: 500 },
    depositAddressSeed: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
    dustLimit: { type: 'integer', minimum: 0, default: 546 },
    reservationSeconds: { type: 'integer', minimum: 1, default: 600 },
    maxReplacementFeeRate: { type: 'integer', minimum: 1, default: 200 },
    blockTimeSeconds: { type: 'integer', minimum: 1, default: 600 },
    maxScanPages: { type: 'integer', minimum: 1, maximum: 100, default: 8 },
  },
} as const
