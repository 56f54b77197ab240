/**
 * Quote stage 2, price the route: USD prices of both ends, then what the chains say the route
 * costs (deposit, fill, origin swap) and the balances that bound it.
 */
import type {
  CostEstimate,
  DestinationAuthorization,
  DestinationCall,
  DestinationSwap,
  OriginRequestOptions,
  OriginSwapQuote,
} from '@pontis/core'
import { familyOptions } from './options.js'
import { fromUsd, type PricedCurrency, type PriceSource } from './prices.js'
import type { QuoteRequest, Route, RouteEnd } from './route.js'
import type { SolverSettings } from './settings.js'
import { bestSwap, checkSwapImpact, describeSourceFilter, originSwapFilter } from './swap-sources.js'

/** An end of the route with its currency's and its native currency's USD prices. */
export interface PricedEnd extends RouteEnd {
  readonly priced: PricedCurrency
  readonly nativePriced: PricedCurrency
}

export interface PricedRoute {
  readonly origin: PricedEnd
  readonly destination: PricedEnd
}

/** What the route costs and holds, as the chains and the price source report it. */
export interface Costs {
  /** Native gas the recipient gets on top (`topupGas`), destination smallest units. */
  readonly topupNativeAmount: bigint
  readonly slippageBps: number
  /** The requested amount; for an exact-input origin swap, what the swap guarantees the deposit. */
  readonly amount: bigint
  /** The origin swap of an exact-input request; an exact-output one is quoted once the input is known. */
  readonly originSwap: OriginSwapQuote | undefined
  readonly originCost: CostEstimate
  readonly fillCost: CostEstimate
  /** The account `fillCost` was simulated for (the solver on the destination). */
  readonly fillPayer: string
  readonly userBalance: bigint | undefined
  readonly solverBalance: bigint | undefined
  /** Origin gas the solver pays for a permit deposit (its submission and `originGasOverhead`), origin native. */
  readonly solverPaidOrigin: bigint
}

/** What {@link estimateCosts} asks the chains about, besides the route. */
export interface CostRequest {
  readonly usePermit: boolean
  readonly calls: readonly DestinationCall[]
  /** The request's `authorizationList`, for destinations that carry it. */
  readonly authorizations: readonly DestinationAuthorization[]
  readonly familyOptions: OriginRequestOptions
  readonly solverOnDestination: string
  /** The fill's destination swap (a first quote of it: the fill's cost depends on its route, not its size). */
  readonly destinationSwap?: DestinationSwap
}

const PLACEHOLDER_ID = `0x${'00'.repeat(32)}` as const
const TOPUP_DEFAULT_USD_MICRO = 2_000_000n

/** Both ends of `route` with their USD prices, read in parallel. */
export async function priceRoute(route: Route, prices: PriceSource): Promise<PricedRoute> {
  const { origin, destination } = route
  const [inPrice, outPrice, originNativePrice, destinationNativePrice] = await Promise.all([
    prices.usdPrice(origin.currency.entry),
    prices.usdPrice(destination.currency.entry),
    prices.usdPrice(origin.catalog.native.entry),
    prices.usdPrice(destination.catalog.native.entry),
  ])
  const priced = (end: RouteEnd, usdPrice: bigint, nativeUsdPrice: bigint): PricedEnd => ({
    ...end,
    priced: { decimals: end.currency.entry.decimals, usdPrice },
    nativePriced: { decimals: end.catalog.native.entry.decimals, usdPrice: nativeUsdPrice },
  })
  return {
    origin: priced(origin, inPrice, originNativePrice),
    destination: priced(destination, outPrice, destinationNativePrice),
  }
}

/** The request's slippage tolerance, else the deployment's for a same- or cross-asset route. */
function slippageBpsFor(request: QuoteRequest, sameAsset: boolean, settings: SolverSettings): number {
  if (request.slippageTolerance !== undefined) return Number(request.slippageTolerance)
  return sameAsset ? settings.slippage.sameAssetBps : settings.slippage.crossAssetBps
}

/** The costs of `route` from its chains, read in parallel (each plugin caches its reads). */
export async function estimateCosts(
  request: QuoteRequest,
  route: Route,
  sides: PricedRoute,
  asked: CostRequest,
  settings: SolverSettings,
): Promise<Costs> {
  const { origin, destination, swap, user } = route
  const topupNativeAmount = request.topupGas
    ? fromUsd(
        BigInt(request.topupGasAmount ?? TOPUP_DEFAULT_USD_MICRO.toString()) * 10n ** 12n,
        sides.destination.nativePriced,
        'floor',
      )
    : 0n
  // An origin swap is a market trade whatever the two ends are: it gets the cross-asset tolerance.
  const slippageBps = slippageBpsFor(request, route.sameAsset && !swap, settings)
  let amount = BigInt(request.amount)
  const originSwap =
    swap && request.tradeType === 'EXACT_INPUT'
      ? await quoteOriginSwap(request, route, { tradeType: 'EXACT_INPUT', amount, slippageBps }, settings)
      : undefined
  // The deposit pays what the route guarantees; that is the input the rest is priced on.
  if (originSwap) amount = originSwap.minimumAmountOut
  const [originCost, fillCost, userBalance, solverBalance] = await Promise.all([
    origin.quoting.estimateOriginCost({
      requestId: PLACEHOLDER_ID,
      depositor: user,
      currencyId: origin.currency.address,
      amount,
      usePermit: asked.usePermit,
      viaDepositAddress: request.useDepositAddress === true,
      options: asked.familyOptions,
      ...(originSwap ? { originSwap } : {}),
    }),
    destination.quoting.estimateFillCost({
      orderId: PLACEHOLDER_ID,
      payer: asked.solverOnDestination,
      recipient: route.recipient,
      currencyId: destination.currency.address,
      amount,
      calls: asked.calls,
      ...(asked.authorizations.length > 0 ? { authorizations: asked.authorizations } : {}),
      ...(request.txsGasLimit !== undefined ? { callsGasLimit: BigInt(request.txsGasLimit) } : {}),
      topupNativeAmount,
      ...(asked.destinationSwap ? { destinationSwap: asked.destinationSwap } : {}),
    }),
    origin.chain.adapter.reading?.readBalance(user, swap?.from ?? origin.currency.address),
    destination.chain.adapter.reading?.readBalance(asked.solverOnDestination, destination.currency.address),
  ])
  const gasOverhead =
    asked.usePermit && request.originGasOverhead
      ? BigInt(request.originGasOverhead) * (originCost.unitPrice ?? 0n)
      : 0n
  const solverPaidOrigin = asked.usePermit ? originCost.amount + gasOverhead : 0n
  return {
    topupNativeAmount,
    slippageBps,
    amount,
    originSwap,
    originCost,
    fillCost,
    fillPayer: asked.solverOnDestination,
    userBalance,
    solverBalance,
    solverPaidOrigin,
  }
}

/**
 * The swap of the requested input into the deposit's currency, when the route has one: quoted for
 * the requested amount (exact input), or once the fees fixed the deposit's input (exact output).
 */
async function quoteOriginSwap(
  request: QuoteRequest,
  route: Route,
  leg: { tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT'; amount: bigint; slippageBps: number },
  settings: SolverSettings,
): Promise<OriginSwapQuote | undefined> {
  if (!route.swap) return undefined
  const quote = await bestSwap(
    route.swap.sources,
    {
      user: route.user,
      fromCurrency: route.swap.from,
      toCurrency: route.origin.currency.address,
      ...leg,
      filter: originSwapFilter(request),
      options: familyOptions(request, route.origin.quoting),
    },
    { chainName: route.origin.chain.record.displayName, filterText: describeSourceFilter(request) },
  )
  checkSwapImpact(quote, request, settings)
  return quote
}

/** The origin swap of an exact-output request, quoted once the fees fixed the deposit's input. */
export function quoteOutputSwap(
  request: QuoteRequest,
  route: Route,
  amountIn: bigint,
  costs: Costs,
  settings: SolverSettings,
): Promise<OriginSwapQuote | undefined> | undefined {
  if (!route.swap || request.tradeType !== 'EXACT_OUTPUT') return undefined
  const leg = { tradeType: 'EXACT_OUTPUT' as const, amount: amountIn, slippageBps: costs.slippageBps }
  return quoteOriginSwap(request, route, leg, settings)
}
