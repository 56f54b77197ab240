/**
 * Swap sources, family-neutral: the request's source filters, the best route of a chain's sources,
 * and the price impact limit every swap leg (origin or same-chain) is held to.
 */
import {
  isPontisError,
  PontisError,
  type SwapQuote,
  type SwapQuoteRequest,
  type SwapSource,
  type SwapSourceFilter,
} from '@pontis/core'
import type { QuoteRequest } from './route.js'
import type { SolverSettings } from './settings.js'

/** The deployment's impact limit when its settings name none, bps. */
export const DEFAULT_MAX_SWAP_IMPACT_BPS = 300

/**
 * The sources a swap on the request's origin (or same) chain may use: `includedOriginSwapSources`
 * wins over `includedSwapSources`; `excludedSwapSources` applies to every leg.
 */
export function originSwapFilter(request: QuoteRequest): SwapSourceFilter {
  const included = request.includedOriginSwapSources ?? request.includedSwapSources
  return {
    ...(included ? { included } : {}),
    ...(request.excludedSwapSources ? { excluded: request.excludedSwapSources } : {}),
  }
}

const FILTER_MEMBERS = [
  'includedSwapSources',
  'includedOriginSwapSources',
  'includedDestinationSwapSources',
  'excludedSwapSources',
] as const

/** "includedSwapSources [a, b], excludedSwapSources [c]": the request members that filtered, for messages. */
export function describeSourceFilter(request: QuoteRequest): string {
  const parts = FILTER_MEMBERS.flatMap((member) => {
    const names = request[member]
    return names?.length ? [`${member} [${names.join(', ')}]`] : []
  })
  return parts.length > 0 ? parts.join(', ') : 'no source filter'
}

/** True when `a` gives the user more than `b`: more output for exact input, less input for exact output. */
const better = (a: SwapQuote, b: SwapQuote, tradeType: SwapQuoteRequest['tradeType']): boolean =>
  tradeType === 'EXACT_OUTPUT' ? a.amountIn < b.amountIn : a.minimumAmountOut > b.minimumAmountOut

/**
 * The best route of `sources` that the request's filter allows. Sources the filter names out are
 * not asked; a source that finds no route is passed over.
 * @throws PontisError NO_SWAP_ROUTES_FOUND when none has a route (naming the sources and `where.filterText`,
 *   the request members that filtered),
 *   or the error of the only source asked (UNSUPPORTED_CURRENCY, SWAP_QUOTE_FAILED…).
 */
export async function bestSwap(
  sources: readonly SwapSource[],
  request: SwapQuoteRequest,
  where: { readonly chainName: string; readonly filterText: string },
): Promise<SwapQuote> {
  const answers = await Promise.allSettled(sources.map((source) => source.quote(request)))
  let best: SwapQuote | undefined
  const failures: unknown[] = []
  for (const answer of answers) {
    if (answer.status === 'rejected') failures.push(answer.reason)
    else if (!best || better(answer.value, best, request.tradeType)) best = answer.value
  }
  if (best) return best
  // One source that failed for its own reason (an untradeable token, an outage) says it best.
  const [only] = failures
  if (failures.length === 1 && isPontisError(only) && only.code !== 'NO_SWAP_ROUTES_FOUND') throw only
  const unexpected = failures.find((failure) => !isPontisError(failure))
  if (unexpected !== undefined) throw unexpected
  const reasons = failures.map((failure) => (failure as PontisError).message).join(' ')
  throw new PontisError(
    'NO_SWAP_ROUTES_FOUND',
    `No swap route on ${where.chainName} with ${where.filterText} (sources here: ${sources.map((source) => source.name).join(', ')}). ${reasons}`.trim(),
  )
}

/**
 * Refuses a swap leg that loses more than the deployment allows against the venues' mid prices,
 * unless the request takes it knowingly (`overridePriceImpact`).
 */
export function checkSwapImpact(quote: SwapQuote, request: QuoteRequest, settings: SolverSettings): void {
  const limit = settings.quote.maxSwapImpactBps ?? DEFAULT_MAX_SWAP_IMPACT_BPS
  if (quote.priceImpactBps <= limit || request.overridePriceImpact) return
  throw new PontisError(
    'SWAP_IMPACT_TOO_HIGH',
    `The swap through ${quote.sources.join(' > ')} moves the price ${formatBps(quote.priceImpactBps)} %, above the ${formatBps(limit)} % this service allows; trade a smaller amount, or set overridePriceImpact to accept it.`,
    { priceImpactBps: quote.priceImpactBps, maxPriceImpactBps: limit },
  )
}

const formatBps = (bps: number): string => (bps / 100).toFixed(2)
