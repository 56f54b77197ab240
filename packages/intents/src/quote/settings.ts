import {
  type EnvironmentVariables,
  loadEnvironmentFile,
  type Registry,
  type SolverCredentials,
} from '@pontis/core'

/** A solver inventory target: paying out of a balance above it earns the user a rebalance reward. */
export interface InventoryTarget {
  readonly chainId: number
  readonly currency: string
  /** Smallest unit. */
  readonly targetAmount: string
  /**
   * The band the rebalancer keeps the solver's balance in (smallest units, `minAmount <=
   * targetAmount <= maxAmount`): below `minAmount` it plans a move in from a chain whose balance of
   * the same currency (by symbol) is above its own target, up to `targetAmount`. Both or neither.
   */
  readonly minAmount?: string
  readonly maxAmount?: string
  /** Most the rebalancer moves into this chain and currency per period (smallest units); 0 when absent. */
  readonly rebalanceBudget?: string
  /** The budget's period, seconds (default 86 400). */
  readonly rebalancePeriodSeconds?: number
}

/** `rebalance` of the solver settings. */
export interface RebalanceExecutionSettings {
  /** Base URL of the intent API moves are quoted at (`POST /quote/v2`, `GET /intents/status/v3`). */
  readonly apiUrl: string
  /** Sent as `x-api-key`, when set. Never logged. */
  readonly apiKey?: string
  /**
   * `EXACT_INPUT` (default): the move's amount leaves the donor, the destination gets it less the
   * other API's fees. `EXACT_OUTPUT`: the destination gets the amount, the donor pays the fees on top.
   */
  readonly tradeType?: 'EXACT_INPUT' | 'EXACT_OUTPUT'
  /** Most the other API may take out of a move, basis points of its amount (default 100); a dearer quote fails the move. */
  readonly maxFeeBps?: number
}

/** `configs/solver.<ENVIRONMENT>.json`: who solves and how quotes are priced. */
export interface SolverSettings {
  readonly solver: {
    /**
     * The solver's hub identity (secp256k1): it signs orders under the hub's EIP-712 domain, whichever
     * families are served, so it is required even without an EVM chain; EVM chains fill with it too.
     */
    readonly privateKey: `0x${string}`
    /** Signs payouts out of the depository (refunds); the depository's allocator. */
    readonly allocatorPrivateKey: `0x${string}`
    /**
     * Keys of families that do not use the EVM keys above, by `vmType` (SVM: base58 secret keys;
     * `allocatorPrivateKey` is the vault owner's). A family not listed signs with the EVM keys.
     */
    readonly familyKeys?: Readonly<
      Record<string, { readonly privateKey: string; readonly allocatorPrivateKey?: string }>
    >
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
    /** Most price impact a swap leg may have, bps, unless the request sets `overridePriceImpact` (SWAP_IMPACT_TOO_HIGH). */
    readonly maxSwapImpactBps?: number
  }
  readonly inventory: readonly InventoryTarget[]
  /**
   * How rebalancing moves are executed: quoted at another intent API with Relay's interface (the
   * public Relay API, or another Pontis deployment), whose solvers are others, and its origin steps
   * sent from the solver's own account. Absent, or an empty `apiUrl`: moves are planned, not sent.
   * The quote's items are sent as that API wrote them (chain and sender checked): it is trusted with
   * the moves' amounts.
   */
  readonly rebalance?: RebalanceExecutionSettings
  /**
   * How the solver is repaid for its fills. `depository` (default): the allocator signs the payout
   * out of the origin depository itself. `hub`: the oracles attest each deposit and fill, the
   * attestations are relayed to the hub (which credits the solver), and the solver withdraws its hub
   * balance through the withdrawal flow, paid out of the depository. The same words for every family.
   */
  readonly repayment?: {
    readonly path: 'depository' | 'hub'
    /** Base URLs of the oracles asked in turn (the first that answers; it gathers its peers' signatures). */
    readonly oracles?: readonly string[]
    /** Sent as `x-api-key` to the oracles, when set. Never logged. */
    readonly oracleApiKey?: string
  }
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
        familyKeys: {
          type: 'object',
          propertyNames: { pattern: '^[a-z][a-z0-9-]*$' },
          additionalProperties: {
            type: 'object',
            required: ['privateKey'],
            additionalProperties: false,
            properties: {
              privateKey: { type: 'string', minLength: 1 },
              allocatorPrivateKey: { type: 'string', minLength: 1 },
            },
          },
        },
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
        maxSwapImpactBps: bps,
      },
    },
    repayment: {
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { enum: ['depository', 'hub'] },
        oracles: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^https?://' } },
        oracleApiKey: { type: 'string', minLength: 1 },
      },
    },
    rebalance: {
      type: 'object',
      required: ['apiUrl'],
      additionalProperties: false,
      properties: {
        // Empty: off (a `${VAR:-}` placeholder left unset).
        apiUrl: { type: 'string', pattern: '^(https?://.+)?$' },
        apiKey: { type: 'string' },
        tradeType: { enum: ['EXACT_INPUT', 'EXACT_OUTPUT'] },
        maxFeeBps: bps,
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
          minAmount: { type: 'string', pattern: '^[0-9]+$' },
          maxAmount: { type: 'string', pattern: '^[0-9]+$' },
          rebalanceBudget: { type: 'string', pattern: '^[0-9]+$' },
          rebalancePeriodSeconds: { type: 'integer', minimum: 1 },
        },
        dependentRequired: {
          minAmount: ['maxAmount'],
          maxAmount: ['minAmount'],
          rebalanceBudget: ['minAmount'],
          rebalancePeriodSeconds: ['rebalanceBudget'],
        },
      },
    },
  },
} as const

/**
 * Reads `configs/solver.<environment>.json`. With `registry`, each key must also be usable on the
 * families it serves (the family derives its account from it), so a bad key stops start-up naming
 * its field and variable instead of failing the first fill. Messages never contain a key.
 */
export function loadSolverSettings(options: {
  environment?: string
  configDir?: string
  env?: EnvironmentVariables
  registry?: Registry
}): Promise<SolverSettings> {
  const { registry, ...fileOptions } = options
  return loadEnvironmentFile<SolverSettings>({
    ...fileOptions,
    name: 'solver',
    schema: solverSettingsSchema,
    check: (value) => [
      ...badBands(value as SolverSettings),
      ...repaymentProblems(value as SolverSettings),
      ...(registry ? unusableKeys(value as SolverSettings, registry) : []),
    ],
  })
}

/** Rebalancing bands that cannot hold: `minAmount <= targetAmount <= maxAmount`. */
function badBands(settings: SolverSettings): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = []
  for (const [index, target] of (settings.inventory ?? []).entries()) {
    if (target.minAmount === undefined || target.maxAmount === undefined) continue
    if (
      BigInt(target.minAmount) <= BigInt(target.targetAmount) &&
      BigInt(target.targetAmount) <= BigInt(target.maxAmount)
    )
      continue
    problems.push({
      path: `inventory[${index}]`,
      message: `inventory[${index}] needs minAmount <= targetAmount <= maxAmount (chain ${target.chainId}, ${target.currency})`,
    })
  }
  return problems
}

/** The hub path asks oracles: it needs at least one. */
function repaymentProblems(settings: SolverSettings): Array<{ path: string; message: string }> {
  const repayment = settings.repayment
  if (repayment?.path !== 'hub' || (repayment.oracles?.length ?? 0) > 0) return []
  return [
    {
      path: 'repayment.oracles',
      message: 'repayment.path "hub" needs repayment.oracles, the URL of at least one oracle',
    },
  ]
}

function unusableKeys(
  settings: SolverSettings,
  registry: Registry,
): Array<{ path: string; message: string }> {
  const problems = new Map<string, string>()
  for (const chain of registry.chains()) {
    const filling = chain.adapter.filling
    if (!filling) continue
    const vmType = chain.record.vmType
    const base = settings.solver.familyKeys?.[vmType] ? `solver.familyKeys.${vmType}` : 'solver'
    const credentials = solverCredentialsFor(settings, vmType)
    const keys: Array<[string, string | undefined]> = [
      [`${base}.privateKey`, credentials.solverKey],
      [`${base}.allocatorPrivateKey`, credentials.allocatorKey],
    ]
    for (const [path, key] of keys) {
      if (key === undefined || problems.has(path)) continue
      try {
        // An allocator key is a key of the same family: its account derives the same way.
        filling.solverAddress({ solverKey: key })
      } catch {
        // The family's own message may quote the key: name the field only.
        problems.set(path, `${path} is not a usable ${vmType} key (chain ${chain.id} ${chain.record.name})`)
      }
    }
  }
  return [...problems].map(([path, message]) => ({ path, message }))
}

/** The solver's keys for one chain family: its `familyKeys` entry, else the EVM keys. Never logged. */
export function solverCredentialsFor(settings: SolverSettings, vmType: string): SolverCredentials {
  const family = settings.solver.familyKeys?.[vmType]
  if (family) {
    return {
      solverKey: family.privateKey,
      ...(family.allocatorPrivateKey !== undefined ? { allocatorKey: family.allocatorPrivateKey } : {}),
    }
  }
  return { solverKey: settings.solver.privateKey, allocatorKey: settings.solver.allocatorPrivateKey }
}
