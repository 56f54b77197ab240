/**
 * Destination swaps: the solver fills in its inventory currency and the fill transaction swaps it
 * into the token the recipient asked for, through the destination chain's swap sources (a plugin
 * capability, `fillsCanSwap`). The bridge leg is priced as any bridge into the inventory currency; the
 * swap leg takes the whole payout as an exact input, and its guaranteed output is what the order
 * promises the recipient, enforced on chain.
 */
import {
  type DestinationSwap,
  isPontisError,
  PontisError,
  type SwapQuote,
  type SwapSourceFilter,
} from '@pontis/core'
import type { ChainCurrency } from './currencies.js'
import type { QuoteRequest, Route } from './route.js'
import type { SolverSettings } from './settings.js'
import { bestSwap, checkSwapImpact, describeSourceFilter } from './swap-sources.js'

/** A quote's destination swap, as the order, the answer and the stored request need it. */
export interface DestinationSwapLeg {
  /** The route the fill runs (exact input of `amountIn`, whatever the request's trade type). */
  readonly quote: SwapQuote
  /** The solver's payout in its inventory currency that goes into the swap. */
  readonly amountIn: bigint
  /** What the recipient is expected to get. */
  readonly amountOut: bigint
  /** What the recipient gets at least; the order's output and the swap's on-chain bound. */
  readonly minimumAmountOut: bigint
  /** The requested output currency (an unlisted token known by id and decimals only). */
  readonly currency: ChainCurrency
  /** The request as it was asked (an exact-output one is priced as a bridge of the swap's input). */
  readonly request: QuoteRequest
}

/**
 * The sources a destination swap may use: `includedDestinationSwapSources` wins over
 * `includedSwapSources`; `excludedSwapSources` applies to every leg.
 */
export function destinationSwapFilter(request: QuoteRequest): SwapSourceFilter {
  const included = request.includedDestinationSwapSources ?? request.includedSwapSources
  return {
    ...(included ? { included } : {}),
    ...(request.excludedSwapSources ? { excluded: request.excludedSwapSources } : {}),
  }
}

/** The slippage a destination swap gets: the request's, else the deployment's cross-asset tolerance. */
export function destinationSwapSlippageBps(request: QuoteRequest, settings: SolverSettings): number {
  return request.slippageTolerance !== undefined
    ? Number(request.slippageTolerance)
    : settings.slippage.crossAssetBps
}

/**
 * The best destination swap route of `amount` (inventory in for exact input, the requested token out
 * for exact output), held to the impact limit.
 * @throws PontisError NO_SWAP_ROUTES_FOUND (naming the filter), SWAP_IMPACT_TOO_HIGH, or
 *   UNSUPPORTED_CURRENCY when no source trades the requested token at all and nothing filtered.
 */
export async function quoteDestinationSwap(
  request: QuoteRequest,
  route: Route,
  leg: { readonly tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT'; readonly amount: bigint },
  settings: SolverSettings,
  options: { readonly checkImpact: boolean } = { checkImpact: true },
): Promise<SwapQuote> {
  const swap = route.destinationSwap
  if (!swap) throw new TypeError('the route has no destination swap')
  const { chain, currency } = route.destination
  const filter = destinationSwapFilter(request)
  let quote: SwapQuote
  try {
    quote = await bestSwap(
      swap.sources,
      {
        user: route.recipient,
        fromCurrency: currency.address,
        toCurrency: swap.to,
        tradeType: leg.tradeType,
        amount: leg.amount,
        slippageBps: destinationSwapSlippageBps(request, settings),
        filter,
        options: {},
      },
      { chainName: chain.record.displayName, filterText: describeSourceFilter(request) },
    )
  } catch (error) {
    const filtered = filter.included !== undefined || filter.excluded !== undefined
    const listed = route.destination.catalog.has(swap.to)
    if (isPontisError(error) && error.code === 'NO_SWAP_ROUTES_FOUND' && !filtered && !listed) {
      const supported = route.destination.catalog
        .list()
        .map((each) => `${each.entry.symbol} (${each.address})`)
        .join(', ')
      throw new PontisError(
        'UNSUPPORTED_CURRENCY',
        `destinationCurrency ${swap.to} is not supported on ${chain.record.displayName} (${chain.id}): the solver holds none and no swap source there trades it from ${currency.entry.symbol}; supported: ${supported}.`,
        { chainId: chain.id, currency: swap.to },
      )
    }
    throw error
  }
  if (options.checkImpact) checkSwapImpact(quote, request, settings)
  return quote
}

/** The plugin's form of a leg, for the fill and its cost. */
export function fillSwapOf(leg: Pick<DestinationSwapLeg, 'quote' | 'minimumAmountOut'>): DestinationSwap {
  return { quote: leg.quote, minimumAmountOut: leg.minimumAmountOut }
}

/** A destination swap as the stored request keeps it (JSON): what the fill is signed from. */
export type StoredDestinationSwap = {
  /** The fill's payment: the inventory currency and amount that go into the swap. */
  readonly currency: string
  readonly amount: string
  readonly minimumAmountOut: string
  readonly quote: {
    readonly source: string
    readonly fromCurrency: string
    readonly fromDecimals: number
    readonly toCurrency: string
    readonly toDecimals: number
    readonly amountIn: string
    readonly amountOut: string
    readonly minimumAmountOut: string
    readonly hops: number
    readonly sources: readonly string[]
    readonly priceImpactBps: number
    /** The source's route data (JSON-safe by the plugin contract). */
    readonly route: unknown
  }
}

export function storeDestinationSwap(leg: DestinationSwapLeg, inventory: string): StoredDestinationSwap {
  const { quote } = leg
  return {
    currency: inventory,
    amount: leg.amountIn.toString(),
    minimumAmountOut: leg.minimumAmountOut.toString(),
    quote: {
      source: quote.source,
      fromCurrency: quote.fromCurrency,
      fromDecimals: quote.fromDecimals,
      toCurrency: quote.toCurrency,
      toDecimals: quote.toDecimals,
      amountIn: quote.amountIn.toString(),
      amountOut: quote.amountOut.toString(),
      minimumAmountOut: quote.minimumAmountOut.toString(),
      hops: quote.hops,
      sources: [...quote.sources],
      priceImpactBps: quote.priceImpactBps,
      route: quote.route,
    },
  }
}

/** The plugin's form of a stored destination swap. */
export function loadDestinationSwap(stored: StoredDestinationSwap): DestinationSwap {
  const { quote } = stored
  return {
    quote: {
      ...quote,
      amountIn: BigInt(quote.amountIn),
      amountOut: BigInt(quote.amountOut),
      minimumAmountOut: BigInt(quote.minimumAmountOut),
    },
    minimumAmountOut: BigInt(stored.minimumAmountOut),
  }
}
