/**
 * Pricing and route search over the fixed pool graph: exact bigint math, ExactIn and ExactOut,
 * every simple route up to four hops, the best one chosen deterministically.
 */
import { type QuoteResponse, type QuoteRoutePlanStep, RouteError, type SwapMode } from './api.js'
import {
  type PoolInfo,
  type RouteToken,
  SVM_ROUTE_GRAPH_TOKENS,
  SVM_ROUTE_LABELS,
  SVM_ROUTE_POOLS,
} from './pools.js'

const BPS = 10_000n
const U64_MAX = (1n << 64n) - 1n

/** The longest route the simulator builds (and the default of `maxRouteLength`). */
export const MAX_ROUTE_LENGTH = 4
/** The aggregator's default `maxAccounts`. */
export const DEFAULT_MAX_ACCOUNTS = 64

/** One priced hop of a route. */
export interface RouteHop {
  readonly pool: PoolInfo
  /** Position of the pool in `SVM_ROUTE_POOLS` (breaks ties). */
  readonly poolIndex: number
  readonly input: RouteToken
  readonly output: RouteToken
  readonly inAmount: bigint
  readonly outAmount: bigint
  /** Fee kept by the pool, in the input token. */
  readonly feeAmount: bigint
}

/** A priced route. */
export interface Route {
  readonly swapMode: SwapMode
  readonly hops: readonly RouteHop[]
  readonly inAmount: bigint
  readonly outAmount: bigint
  /** Distinct accounts of the route's swap instructions without shared accounts (what `maxAccounts` limits). */
  readonly accountCount: number
}

/** What to route, and the filters of `/quote`. */
export interface RouteRequest {
  inputMint: string
  outputMint: string
  /** The exact input (ExactIn) or the exact output (ExactOut), in base units. */
  amount: bigint
  swapMode: SwapMode
  /** Labels allowed (all when absent). */
  dexes?: readonly string[]
  /** Labels excluded. */
  excludeDexes?: readonly string[]
  /** Maximum hops (1 to 4; `onlyDirectRoutes` is 1). */
  maxRouteLength?: number
  maxAccounts?: number
}

function parseNano(decimal: string): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.')
  return BigInt(whole) * 10n ** 9n + BigInt(fraction.padEnd(9, '0').slice(0, 9))
}

const tokensByMint = new Map(SVM_ROUTE_GRAPH_TOKENS.map((token) => [token.mint, token]))
const nanoUsdByMint = new Map(
  SVM_ROUTE_GRAPH_TOKENS.map((token) => [token.mint, parseNano(token.referenceUsd)]),
)
const labelPoolAccounts = new Map(SVM_ROUTE_LABELS.map((label) => [label.label, label.poolAccounts]))

/** The graph token with this mint, if the simulator trades it. */
export function routeTokenByMint(mint: string): RouteToken | undefined {
  return tokensByMint.get(mint)
}

function nanoUsd(token: RouteToken): bigint {
  const price = nanoUsdByMint.get(token.mint)
  if (price === undefined) throw new Error(`no price for ${token.symbol}`)
  return price
}

/** Output per input, in base units, at the pool's price (before the fee). */
function rate(
  pool: PoolInfo,
  input: RouteToken,
  output: RouteToken,
): { numerator: bigint; denominator: bigint } {
  return {
    numerator: nanoUsd(input) * 10n ** BigInt(output.decimals) * (BPS + BigInt(pool.priceOffsetBps)),
    denominator: nanoUsd(output) * 10n ** BigInt(input.decimals) * BPS,
  }
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator
}

/** What a hop pays for `inAmount`: the fee is rounded up, the output down. */
export function swapExactIn(
  pool: PoolInfo,
  input: RouteToken,
  output: RouteToken,
  inAmount: bigint,
): { outAmount: bigint; feeAmount: bigint } {
  const feeAmount = ceilDiv(inAmount * BigInt(pool.feeBps), BPS)
  const { numerator, denominator } = rate(pool, input, output)
  return { outAmount: ((inAmount - feeAmount) * numerator) / denominator, feeAmount }
}

/** The smallest input for which the hop pays at least `outAmount` (ExactOut rounds the input up). */
export function swapExactOut(
  pool: PoolInfo,
  input: RouteToken,
  output: RouteToken,
  outAmount: bigint,
): { inAmount: bigint; feeAmount: bigint } {
  const { numerator, denominator } = rate(pool, input, output)
  const net = ceilDiv(outAmount * denominator, numerator)
  let inAmount = ceilDiv(net * BPS, BPS - BigInt(pool.feeBps))
  // The closed form can be one unit off either way (two roundings); settle on the exact minimum.
  while (swapExactIn(pool, input, output, inAmount).outAmount < outAmount) inAmount += 1n
  while (inAmount > 1n && swapExactIn(pool, input, output, inAmount - 1n).outAmount >= outAmount)
    inAmount -= 1n
  return { inAmount, feeAmount: ceilDiv(inAmount * BigInt(pool.feeBps), BPS) }
}

/**
 * Distinct accounts of a route's swap instructions without shared accounts: the user, the token
 * program, a mint and a user token account per token, an input and an output vault per hop, each
 * label's program id once, and each hop's pool accounts.
 */
export function routeAccountCount(pools: readonly PoolInfo[]): number {
  const tokens = pools.length + 1
  const programs = new Set(pools.map((pool) => pool.programId)).size
  const poolAccounts = pools.reduce((sum, pool) => sum + (labelPoolAccounts.get(pool.label) ?? 0), 0)
  return 2 + 2 * tokens + 2 * pools.length + programs + poolAccounts
}

interface Leg {
  pool: PoolInfo
  poolIndex: number
  input: RouteToken
  output: RouteToken
}

/** Prices a sequence of legs; undefined when an amount is zero or does not fit a u64. */
function priceLegs(legs: readonly Leg[], swapMode: SwapMode, amount: bigint): Route | undefined {
  const hops: RouteHop[] = []
  if (swapMode === 'ExactIn') {
    let inAmount = amount
    for (const leg of legs) {
      const { outAmount, feeAmount } = swapExactIn(leg.pool, leg.input, leg.output, inAmount)
      if (outAmount === 0n || outAmount > U64_MAX) return undefined
      hops.push({ ...leg, inAmount, outAmount, feeAmount })
      inAmount = outAmount
    }
  } else {
    let outAmount = amount
    for (const leg of [...legs].reverse()) {
      const { inAmount, feeAmount } = swapExactOut(leg.pool, leg.input, leg.output, outAmount)
      if (inAmount > U64_MAX) return undefined
      hops.unshift({ ...leg, inAmount, outAmount, feeAmount })
      outAmount = inAmount
    }
  }
  const first = hops[0]
  const last = hops.at(-1)
  if (!first || !last) return undefined
  return {
    swapMode,
    hops,
    inAmount: first.inAmount,
    outAmount: last.outAmount,
    accountCount: routeAccountCount(hops.map((hop) => hop.pool)),
  }
}

/** Whether `candidate` beats `best`: better price, then fewer hops, fewer accounts, earlier pools. */
function isBetter(candidate: Route, best: Route | undefined): boolean {
  if (!best) return true
  if (candidate.swapMode === 'ExactIn' && candidate.outAmount !== best.outAmount)
    return candidate.outAmount > best.outAmount
  if (candidate.swapMode === 'ExactOut' && candidate.inAmount !== best.inAmount)
    return candidate.inAmount < best.inAmount
  if (candidate.hops.length !== best.hops.length) return candidate.hops.length < best.hops.length
  if (candidate.accountCount !== best.accountCount) return candidate.accountCount < best.accountCount
  for (const [index, hop] of candidate.hops.entries()) {
    const other = best.hops[index]
    if (other && hop.poolIndex !== other.poolIndex) return hop.poolIndex < other.poolIndex
  }
  return false
}

function knownToken(mint: string): RouteToken {
  const token = tokensByMint.get(mint)
  if (!token) throw new RouteError('TOKEN_NOT_TRADABLE', `The token ${mint} is not tradable`)
  return token
}

/** The best route for a request, or a RouteError saying why there is none. */
export function findBestRoute(request: RouteRequest): Route {
  const input = knownToken(request.inputMint)
  const output = knownToken(request.outputMint)
  if (input.mint === output.mint)
    throw new RouteError('CIRCULAR_ARBITRAGE_IS_DISABLED', 'Input and output mints must differ')
  const maxLength = Math.min(request.maxRouteLength ?? MAX_ROUTE_LENGTH, MAX_ROUTE_LENGTH)
  const maxAccounts = request.maxAccounts ?? DEFAULT_MAX_ACCOUNTS
  const allowed = SVM_ROUTE_POOLS.map(
    (pool) =>
      (request.dexes === undefined || request.dexes.includes(pool.label)) &&
      !(request.excludeDexes ?? []).includes(pool.label),
  )

  let best: Route | undefined
  const legs: Leg[] = []
  const visited = new Set([input.mint])
  const extend = (from: RouteToken) => {
    for (const [poolIndex, pool] of SVM_ROUTE_POOLS.entries()) {
      if (!allowed[poolIndex]) continue
      const side = pool.mints.indexOf(from.mint)
      if (side === -1) continue
      const next = knownToken(pool.mints[1 - side] as string)
      if (visited.has(next.mint)) continue
      legs.push({ pool, poolIndex, input: from, output: next })
      if (next.mint === output.mint) {
        const route = priceLegs(legs, request.swapMode, request.amount)
        if (route && route.accountCount <= maxAccounts && isBetter(route, best)) best = route
      } else if (legs.length < maxLength) {
        visited.add(next.mint)
        extend(next)
        visited.delete(next.mint)
      }
      legs.pop()
    }
  }
  extend(input)
  if (!best) throw new RouteError('COULD_NOT_FIND_ANY_ROUTE', 'Could not find any route')
  return best
}

/** The slippage bound: ExactIn the minimum output, ExactOut the maximum input. */
export function otherAmountThreshold(route: Route, slippageBps: number): bigint {
  const bps = BigInt(slippageBps)
  if (route.swapMode === 'ExactIn') return (route.outAmount * (BPS - bps)) / BPS
  const threshold = ceilDiv(route.inAmount * (BPS + bps), BPS)
  if (threshold > U64_MAX)
    throw new RouteError('CANNOT_COMPUTE_OTHER_AMOUNT_THRESHOLD', 'The maximum input does not fit a u64')
  return threshold
}

/** A route as a `/quote` answer. */
export function quoteResponse(route: Route, slippageBps: number, timeTaken: number): QuoteResponse {
  const first = route.hops[0]
  const last = route.hops.at(-1)
  if (!first || !last) throw new Error('empty route')
  const routePlan: QuoteRoutePlanStep[] = route.hops.map((hop) => ({
    swapInfo: {
      ammKey: hop.pool.ammKey,
      label: hop.pool.label,
      inputMint: hop.input.mint,
      outputMint: hop.output.mint,
      inAmount: hop.inAmount.toString(),
      outAmount: hop.outAmount.toString(),
      feeAmount: hop.feeAmount.toString(),
      feeMint: hop.input.mint,
    },
    percent: 100,
  }))
  return {
    inputMint: first.input.mint,
    inAmount: route.inAmount.toString(),
    outputMint: last.output.mint,
    outAmount: route.outAmount.toString(),
    otherAmountThreshold: otherAmountThreshold(route, slippageBps).toString(),
    swapMode: route.swapMode,
    slippageBps,
    platformFee: null,
    priceImpactPct: '0',
    routePlan,
    contextSlot: 0,
    timeTaken,
  }
}

const poolIndexByAmmKey = new Map(SVM_ROUTE_POOLS.map((pool, index) => [pool.ammKey, index]))

function parseAmount(value: unknown, field: string): bigint {
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value) || BigInt(value) > U64_MAX)
    throw new RouteError('NOT_SUPPORTED', `quoteResponse.${field} must be a u64 integer string`)
  return BigInt(value)
}

/**
 * Prices a quote's route plan again (the simulator never trusts the amounts it is handed back):
 * from its `inAmount` (ExactIn) or `outAmount` (ExactOut), through the pools its plan names, and
 * checks the result against its `otherAmountThreshold`.
 */
export function repriceQuote(quote: QuoteResponse): Route {
  if (quote.swapMode !== 'ExactIn' && quote.swapMode !== 'ExactOut')
    throw new RouteError('NOT_SUPPORTED', 'quoteResponse.swapMode must be ExactIn or ExactOut')
  if (
    !Array.isArray(quote.routePlan) ||
    quote.routePlan.length === 0 ||
    quote.routePlan.length > MAX_ROUTE_LENGTH
  )
    throw new RouteError('NOT_SUPPORTED', `quoteResponse.routePlan must have 1 to ${MAX_ROUTE_LENGTH} steps`)
  const legs: Leg[] = []
  let from = quote.inputMint
  for (const step of quote.routePlan) {
    const swapInfo = step?.swapInfo
    const poolIndex = poolIndexByAmmKey.get(swapInfo?.ammKey)
    const pool = poolIndex === undefined ? undefined : SVM_ROUTE_POOLS[poolIndex]
    if (poolIndex === undefined || !pool)
      throw new RouteError('MARKET_NOT_FOUND', `Market ${String(swapInfo?.ammKey)} not found`)
    if (step.percent !== 100) throw new RouteError('NOT_SUPPORTED', 'Split routes are not supported')
    if (
      swapInfo.inputMint !== from ||
      !pool.mints.includes(swapInfo.inputMint) ||
      !pool.mints.includes(swapInfo.outputMint) ||
      swapInfo.inputMint === swapInfo.outputMint
    )
      throw new RouteError('NOT_SUPPORTED', 'quoteResponse.routePlan does not chain through its pools')
    legs.push({
      pool,
      poolIndex,
      input: knownToken(swapInfo.inputMint),
      output: knownToken(swapInfo.outputMint),
    })
    from = swapInfo.outputMint
  }
  if (from !== quote.outputMint)
    throw new RouteError('NOT_SUPPORTED', 'quoteResponse.routePlan does not end at outputMint')
  if (new Set([quote.inputMint, ...legs.map((leg) => leg.output.mint)]).size !== legs.length + 1)
    throw new RouteError('NOT_SUPPORTED', 'quoteResponse.routePlan visits a token twice')
  const threshold = parseAmount(quote.otherAmountThreshold, 'otherAmountThreshold')
  const amount =
    quote.swapMode === 'ExactIn'
      ? parseAmount(quote.inAmount, 'inAmount')
      : parseAmount(quote.outAmount, 'outAmount')
  if (amount === 0n) throw new RouteError('NOT_SUPPORTED', 'The swap amount must be positive')
  const route = priceLegs(legs, quote.swapMode, amount)
  if (!route) throw new RouteError('COULD_NOT_FIND_ANY_ROUTE', 'The route plan cannot swap this amount')
  if (quote.swapMode === 'ExactIn' ? route.outAmount < threshold : route.inAmount > threshold)
    throw new RouteError(
      'SLIPPAGE_TOLERANCE_EXCEEDED',
      `The route pays ${route.outAmount} for ${route.inAmount}, beyond the quote's threshold ${threshold}`,
    )
  return route
}
