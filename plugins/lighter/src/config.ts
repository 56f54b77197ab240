/**
 * Options of a Lighter chain entry's `plugin` member, their JSON Schema (the registry applies its
 * defaults) and the family's constants.
 */

/** The chain id the service assigns the venue. */
export const LIGHTER_CHAIN_ID = 3586256
/** The native currency id: USDC on the perpetuals balance, 6 decimals. */
export const LIGHTER_NATIVE_CURRENCY_ID = '0'
/** `tx_type` of a transfer on the venue's `sendTx`. */
export const LIGHTER_TRANSFER_TX_TYPE = 12
/** Largest account index the venue assigns (48 bits; sub-accounts use the high end). */
export const LIGHTER_MAX_ACCOUNT_INDEX = 2 ** 48 - 1
/** The step item `format` of a venue transfer (`LighterTransferData` of the intents document). */
export const LIGHTER_TRANSFER_FORMAT = 'lighter-transfer'

/** How one service currency id maps onto the venue. */
export interface LighterAssetConfig {
  /** The venue's asset index (USDC: 3). */
  readonly assetIndex: number
  /** Decimals of the smallest unit amounts are counted in. */
  readonly decimals: number
  /** The route type (balance) transfers debit and credit: 0 perps, 1 spot. */
  readonly routeType: number
}

/**
 * Which venue a chain entry is: the devnet's simulator, or Lighter's own testnet or mainnet. Transfers
 * are signed the simulator's way (ed25519); the real venue's signing (ECgFp5 Schnorr over Poseidon2
 * with the API key, plus an Ethereum L1 signature) is not implemented, so only the simulator may be
 * enabled.
 */
export type LighterNetwork = 'simulator' | 'testnet' | 'mainnet'

/** Options of a Lighter chain entry's `plugin` member. */
export interface LighterPluginConfig {
  /** The venue behind `rpc.url`. Default `simulator`. */
  readonly network: LighterNetwork
  /** The solver's API key index on the depository account. Default 2. */
  readonly solverApiKeyIndex: number
  /** Currency id (a decimal string) → venue asset. Must contain the native currency "0". */
  readonly assets: Readonly<Record<string, LighterAssetConfig>>
  /** Confirmations (1 = executed) before facts count as final. Default 1: the venue is final on execution. */
  readonly confirmations: number
  /** Seconds a signed fill or refund stays valid on the venue (`ExpiredAt`). Default 3600. */
  readonly transferExpirySeconds: number
  /** Seconds reads (the transfer fee) are reused. Default 2. */
  readonly readCacheSeconds: number
  /** Per-request timeout of venue API calls, ms, unless the chain's `rpc.timeoutMs` is set. Default 10000. */
  readonly requestTimeoutMs: number
  /** Transactions of the depository's history read per deposit scan step (`accountTxs` limit). Default 100. */
  readonly scanPageSize: number
}

/** JSON Schema of {@link LighterPluginConfig}. */
export const lighterConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    network: { enum: ['simulator', 'testnet', 'mainnet'], default: 'simulator' },
    solverApiKeyIndex: { type: 'integer', minimum: 0, maximum: 254, default: 2 },
    assets: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^(0|[1-9][0-9]{0,9})$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['assetIndex', 'decimals', 'routeType'],
        properties: {
          assetIndex: { type: 'integer', minimum: 0, maximum: 65535 },
          decimals: { type: 'integer', minimum: 0, maximum: 18 },
          routeType: { type: 'integer', minimum: 0, maximum: 255 },
        },
      },
      default: { [LIGHTER_NATIVE_CURRENCY_ID]: { assetIndex: 3, decimals: 6, routeType: 0 } },
    },
    // The venue reports an executed transfer, never a depth: more than one could never be met.
    confirmations: { type: 'integer', minimum: 1, maximum: 1, default: 1 },
    transferExpirySeconds: { type: 'integer', minimum: 60, maximum: 2_592_000, default: 3600 },
    readCacheSeconds: { type: 'number', minimum: 0, maximum: 60, default: 2 },
    requestTimeoutMs: { type: 'integer', minimum: 100, maximum: 120_000, default: 10_000 },
    scanPageSize: { type: 'integer', minimum: 1, maximum: 100, default: 100 },
  },
} as const
