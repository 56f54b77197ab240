/**
 * Options of a Tron chain entry's `plugin` member, and their JSON Schema (the registry applies its
 * defaults).
 */

/** The native currency (TRX) id: base58check of 0x41 followed by 20 zero bytes; a currency id only. */
export const TRON_NATIVE_CURRENCY_ID = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb'

/** Options of a Tron chain entry's `plugin` member. */
export interface TronPluginConfig {
  /** Base URL of the full-node HTTP API; default the chain's `rpc.url`. */
  readonly apiUrl?: string
  /** Seconds chain reads (head block, chain parameters) are reused. Default 2. */
  readonly readCacheSeconds: number
  /** Blocks (1 = included) for fast attestations. Default 1. */
  readonly fastConfirmations: number
  /** Blocks for slow attestations and `final` (Tron's solidity: 19). Default 19. */
  readonly slowConfirmations: number
  /** Most sun a TRC20 transfer may burn for energy (`fee_limit`). Default 100 TRX. */
  readonly feeLimitSun: number
  /** Seconds past the node's timestamp a built deposit, fill or refund stays valid (node maximum 24 h). Default 3600. */
  readonly expirationSeconds: number
  /** Energy assumed for a TRC20 transfer when the node cannot estimate it. Default 65000. */
  readonly defaultTransferEnergy: number
  /** Seconds between blocks, for time estimates. Default 3. */
  readonly blockTimeSeconds: number
  /**
   * Blocks one deposit scan step reads (`getblockbylimitnext`, at most the node's 100). A mainnet
   * block can hold hundreds of transactions, so steps stay small. Default 10.
   */
  readonly scanBlocksPerPage: number
}

/** JSON Schema of {@link TronPluginConfig}. */
export const tronConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apiUrl: { type: 'string', pattern: '^https?://\\S+$' },
    readCacheSeconds: { type: 'number', minimum: 0, maximum: 60, default: 2 },
    fastConfirmations: { type: 'integer', minimum: 1, maximum: 1000, default: 1 },
    slowConfirmations: { type: 'integer', minimum: 1, maximum: 1000, default: 19 },
    feeLimitSun: { type: 'integer', minimum: 1, maximum: 15_000_000_000, default: 100_000_000 },
    expirationSeconds: { type: 'integer', minimum: 60, maximum: 86_000, default: 3600 },
    defaultTransferEnergy: { type: 'integer', minimum: 1, default: 65_000 },
    blockTimeSeconds: { type: 'integer', minimum: 1, default: 3 },
    scanBlocksPerPage: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
  },
} as const
