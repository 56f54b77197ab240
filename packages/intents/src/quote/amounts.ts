/**
 * Quote stage 3, compute the fees: fee terms from the route's costs and the deployment's settings,
 * then the amounts in and out (the exact arithmetic is fees.ts) and the limits they must meet.
 */
import { type DestinationCall, formatUnits, PontisError, parseUnits } from '@pontis/core'
import {
  type AmountBreakdown,
  breakdownForInput,
  breakdownForOutput,
  type Conversion,
  DEFAULT_SPONSORED_COMPONENTS,
  type FeeComponent,
  type FeeTerms,
  parseBps,
  withSlippage,
} from './fees.js'
import type { InventoryLookup } from './inventory.js'
import { convert, fromUsd, USD_SCALE, usdValue } from './prices.js'
import type { Costs, PricedRoute } from './pricing.js'
import type { QuoteRequest, Route } from './route.js'
import type { SolverSettings } from './settings.js'

/** The fee breakdown of a quote and the sponsorship it was computed under. */
export interface Charges {
  readonly breakdown: AmountBreakdown
  /** The fee components a sponsor pays; undefined when the request sponsors nothing. */
  readonly sponsoredComponents: ReadonlySet<FeeComponent> | undefined
}

/** What the recipient is paid and the least they accept. */
export interface Payout {
  readonly paidOut: bigint
  readonly minimumAmountOut: bigint
  /** What the fill takes out of the solver's balance: the output, plus the native top-up on a native output. */
  readonly neededLiquidity: bigint
}

/**
 * The fees and amounts of a priced route.
 * @throws PontisError INSUFFICIENT_FUNDS for a deposit-address quote of an unfunded user,
 * AMOUNT_TOO_LOW when fees eat the amount or it is worth less than the minimum.
 */
export function computeCharges(
  request: QuoteRequest,
  route: Route,
  sides: PricedRoute,
  costs: Costs,
  settings: SolverSettings,
  inventory: InventoryLookup,
): Charges {
  const sponsoredComponents = sponsoredComponentsOf(request)
  const terms = feeTerms(request, route, sides, costs, settings, inventory, sponsoredComponents)
  const conversion = conversionOf(request, sides)
  const breakdown =
    request.tradeType === 'EXACT_INPUT'
      ? breakdownForInput(costs.amount, terms, conversion)
      : breakdownForOutput(costs.amount, terms, conversion)
  const { origin } = route
  const { userBalance } = costs
  if (
    request.useDepositAddress &&
    origin.quoting.depositAddressNeedsFundedUser &&
    (userBalance ?? 0n) <= breakdown.amountIn
  ) {
    const { decimals, symbol } = origin.currency.entry
    throw new PontisError(
      'INSUFFICIENT_FUNDS',
      `user ${route.user} holds ${formatUnits(userBalance ?? 0n, decimals)} ${symbol} on ${origin.chain.record.displayName}; a deposit-address quote needs a user whose balance exceeds the ${formatUnits(breakdown.amountIn, decimals)} ${symbol} quoted (any funded address will do for an indicative quote).`,
      { balance: (userBalance ?? 0n).toString(), required: breakdown.amountIn.toString() },
    )
  }
  const minimumUsd = parseUnits(settings.quote.minimumAmountUsd, 18)
  if (usdValue(breakdown.amountIn, sides.origin.priced) < minimumUsd) {
    throw new PontisError(
      'AMOUNT_TOO_LOW',
      `The input is worth less than the $${settings.quote.minimumAmountUsd} minimum.`,
    )
  }
  return { breakdown, sponsoredComponents }
}

/** The fee terms in the input currency: the chains' costs, the service's fees, the app fees, sponsorship. */
function feeTerms(
  request: QuoteRequest,
  route: Route,
  { origin, destination }: PricedRoute,
  costs: Costs,
  settings: SolverSettings,
  inventory: InventoryLookup,
  sponsoredComponents: ReadonlySet<FeeComponent> | undefined,
): FeeTerms {
  const fillRent = costs.fillCost.rent ?? 0n
  const executionCost =
    convert(
      costs.fillCost.amount - fillRent + costs.topupNativeAmount,
      destination.nativePriced,
      origin.priced,
      'ceil',
    ) + convert(costs.solverPaidOrigin, origin.nativePriced, origin.priced, 'ceil')
  const target = inventory(destination.chain.id, destination.currency.address)
  const { solverBalance } = costs
  const rebalances =
    target !== undefined && solverBalance !== undefined && solverBalance > BigInt(target.targetAmount)
  return {
    executionCost,
    rentCost: fillRent > 0n ? convert(fillRent, destination.nativePriced, origin.priced, 'ceil') : 0n,
    serviceBps: BigInt(settings.fees.serviceBps),
    minimumServiceFee: fromUsd(parseUnits(settings.fees.minimumServiceFeeUsd, 18), origin.priced, 'ceil'),
    rebalanceRewardBps: rebalances ? BigInt(settings.fees.rebalanceRewardBps) : 0n,
    appFees: (request.appFees ?? []).map((fee) => parseBps(fee.fee)),
    swapSpreadBps:
      route.sameAsset || request.fixedRate !== undefined ? 0n : BigInt(settings.fees.swapSpreadBps),
    ...(sponsoredComponents
      ? {
          sponsorship: {
            components: sponsoredComponents,
            ...(request.maxSubsidizationAmount !== undefined
              ? {
                  cap: fromUsd(BigInt(request.maxSubsidizationAmount) * 10n ** 12n, origin.priced, 'floor'),
                }
              : {}),
          },
        }
      : {}),
  }
}

function sponsoredComponentsOf(request: QuoteRequest): ReadonlySet<FeeComponent> | undefined {
  if (!request.subsidizeFees && !request.subsidizeRent) return undefined
  const requested = request.sponsoredFeeComponents ?? DEFAULT_SPONSORED_COMPONENTS
  // `service` is the specs' name for the `relay` bucket.
  const components = new Set<FeeComponent>(
    request.subsidizeFees
      ? requested.map((component) => (component === 'service' ? 'relay' : component))
      : [],
  )
  if (request.subsidizeRent) components.add('rent')
  return components
}

/** Input to output at the request's fixed rate, else at the two currencies' USD prices. */
function conversionOf(request: QuoteRequest, { origin, destination }: PricedRoute): Conversion {
  const inScale = 10n ** BigInt(origin.priced.decimals)
  const outScale = 10n ** BigInt(destination.priced.decimals)
  if (request.fixedRate !== undefined) {
    const rate = parseUnits(request.fixedRate, 18, 'fixedRate')
    if (rate <= 0n) throw new PontisError('INVALID_REQUEST', 'fixedRate must be greater than zero.')
    return { numerator: rate * outScale, denominator: USD_SCALE * inScale }
  }
  return {
    numerator: origin.priced.usdPrice * outScale,
    denominator: destination.priced.usdPrice * inScale,
  }
}

/**
 * What the recipient gets, the least they accept, and what the fill needs of the solver's balance
 * (checked against the liquidity book by the engine).
 * @throws PontisError INVALID_EXTRA_TXS when the calls send more than the fill guarantees.
 */
export function computePayout(
  request: QuoteRequest,
  route: Route,
  { breakdown }: Charges,
  costs: Costs,
  calls: readonly DestinationCall[],
): Payout {
  const exactOutput = request.tradeType === 'EXACT_OUTPUT'
  const { amount } = costs
  const paidOut = exactOutput && request.enableTrueExactOutput ? amount : breakdown.amountOut
  const minimumAmountOut = exactOutput ? amount : withSlippage(paidOut, BigInt(costs.slippageBps))
  const callValue = calls.reduce((sum, call) => sum + call.value, 0n)
  if (callValue > minimumAmountOut) {
    throw new PontisError(
      'INVALID_EXTRA_TXS',
      `The txs send ${callValue} in value, more than the ${minimumAmountOut} the fill guarantees.`,
    )
  }
  // What the fill takes out of the solver's balance; the engine reserves it (inventory.ts).
  const neededLiquidity = paidOut + (route.destination.currency.isNative ? costs.topupNativeAmount : 0n)
  return { paidOut, minimumAmountOut, neededLiquidity }
}
