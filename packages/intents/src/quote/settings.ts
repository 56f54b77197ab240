import { type EnvironmentVariables, loadEnvironmentFile } from '@pontis/core'

/** A solver inventory target: paying out of a balance above it earns the user a rebalance reward. */
export interface InventoryTarget {
  readonly chainId: number
  readonly currency: string
  /** Smallest unit. */
  readonly targetAmount: string
}

/** `configs/solver.<ENVIRONMENT>.json`: who solves and how quotes are priced. */
export interface SolverSettings {
  readonly solver: {
    readonly privateKey: `0x${string}`
    /** Signs payouts out of the depository (refunds); the depository's allocator. */
    readonly allocatorPrivateKey: `0x${string}`
  }
  readonly fees: {
    /** Solver service fee on the input amount, basis points. */
    readonly serviceBps: number
    /** Floor of the service fee, USD decimal. */
    readonly minimumServiceFeeUsd: string
    /** Spread charged on cross-currency conversions, basis points (the `swap` fee component). */
    readonly swapSpreadBps: number
    /** Basis points given back when a fill moves solver inventory toward its target. */
    readonly rebalanceRewardBps: number
  }
  readonly slippage: {
    /** Automatic slippage when input and output are the same asset. */
    readonly sameAssetBps: number
    /** Automatic slippage for cross-currency routes. */
    readonly crossAssetBps: number
  }
  readonly quote: {
    /** Lifetime of a quote when the request gives no `ttl`. */
    readonly ttlSeconds: number
    /** Smallest input worth quoting, USD decimal (AMOUNT_TOO_LOW below). */
    readonly minimumAmountUsd: string
    readonly fillTimeEstimateSeconds: number
  }
  readonly inventory: readonly InventoryTarget[]
}

const usd = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' } as const
const bps = { type: 'integer', minimum: 0, maximum: 10000 } as const

export const solverSettingsSchema = {
  type: 'object',
  required: ['solver', 'fees', 'slippage', 'quote'],
  additionalProperties: false,
  properties: {
    $comment: { type: 'string' },
    solver: {
      type: 'object',
      required: ['privateKey', 'allocatorPrivateKey'],
      additionalProperties: false,
      properties: {
        privateKey: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
        allocatorPrivateKey: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
      },
    },
    fees: {
      type: 'object',
      required: ['serviceBps', 'minimumServiceFeeUsd', 'swapSpreadBps', 'rebalanceRewardBps'],
      additionalProperties: false,
      properties: {
        serviceBps: bps,
        minimumServiceFeeUsd: usd,
        swapSpreadBps: bps,
        rebalanceRewardBps: bps,
      },
    },
    slippage: {
      type: 'object',
      required: ['sameAssetBps', 'crossAssetBps'],
      additionalProperties: false,
      properties: { sameAssetBps: bps, crossAssetBps: bps },
    },
    quote: {
      type: 'object',
      required: ['ttlSeconds', 'minimumAmountUsd', 'fillTimeEstimateSeconds'],
      additionalProperties: false,
      properties: {
        ttlSeconds: { type: 'integer', minimum: 10, maximum: 86400 },
        minimumAmountUsd: usd,
        fillTimeEstimateSeconds: { type: 'integer', minimum: 0 },
      },
    },
    inventory: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        required: ['chainId', 'currency', 'targetAmount'],
        additionalProperties: false,
        properties: {
          chainId: { type: 'integer', minimum: 1 },
          currency: { type: 'string' },
          targetAmount: { type: 'string', pattern: '^[0-9]+$' },
        },
      },
    },
  },
} as const

export function loadSolverSettings(options: {
  environment?: string
  configDir?: string
  env?: EnvironmentVariables
}): Promise<SolverSettings> {
  return loadEnvironmentFile<SolverSettings>({ ...options, name: 'solver', schema: solverSettingsSchema })
}
