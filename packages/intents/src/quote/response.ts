/** The quote's answer in the API's terms: fee objects, the sponsorship report and the details. */
import {
  depositConfirmations,
  formatUnits,
  type IntentsApi,
  type OriginSwapQuote,
  protocolChainIdOf,
} from '@pontis/core'
import type { ChainCurrency } from './currencies.js'
import { type DestinationSwapLeg, destinationSwapSlippageBps } from './destination-swap.js'
import { type AmountBreakdown, FEE_COMPONENTS, type FeeComponent } from './fees.js'
import type { IssuedOrder } from './order.js'
import type { PricedQuote } from './priced-quote.js'
import { formatUsd, type PricedCurrency, USD_SCALE, usdValue } from './prices.js'
import type { PricedEnd } from './pricing.js'
import type { QuoteRequest } from './route.js'
import type { SolverSettings } from './settings.js'

/**
 * The answer to a quote request, steps still empty: fees, details, the sponsorship report when the
 * request sponsors fees, and the signed order when it asked for protocol data.
 */
export function quoteResponse(
  priced: PricedQuote,
  issued: IssuedOrder,
  settings: SolverSettings,
): IntentsApi.QuoteResponse {
  const { request, sides, costs } = priced
  const { breakdown, sponsoredComponents } = priced.charges
  const protocol = protocolData(priced, issued)
  return {
    steps: [],
    fees: quoteFees(breakdown, sides.origin, costs.originCost.amount, priced.usePermit),
    details: quoteDetails(priced, settings),
    ...(sponsoredComponents
      ? { feeSponsorship: feeSponsorship(breakdown, sides.origin, sponsoredComponents, request) }
      : {}),
    ...(protocol ? { protocol } : {}),
  }
}

/**
 * A fee object of `amount` of `currency` (the end's own by default) on `end`'s chain; `pricedAmount`
 * is what `priced` values when that is not `amount` itself.
 */
export function feeOf(
  end: PricedEnd,
  amount: bigint,
  currency: ChainCurrency = end.currency,
  priced: PricedCurrency = end.priced,
  pricedAmount: bigint = amount,
): IntentsApi.Fee {
  const usd = pricedAmount < 0n ? -usdValue(-pricedAmount, priced) : usdValue(pricedAmount, priced)
  return {
    currency: end.catalog.toApi(currency, end.chain.id),
    amount: amount.toString(),
    amountFormatted: formatUnits(amount, currency.entry.decimals),
    amountUsd: formatUsd(usd),
    minimumAmount: amount.toString(),
  }
}

/** The answer's `fees`: origin gas in the native currency, the rest in the input currency. */
function quoteFees(
  breakdown: AmountBreakdown,
  origin: PricedEnd,
  originGas: bigint,
  usePermit: boolean,
): IntentsApi.Fees {
  const inFee = (amount: bigint) => feeOf(origin, amount)
  return {
    // With a permit the service submits (and charges for) the deposit; the user sends nothing.
    gas: feeOf(origin, usePermit ? 0n : originGas, origin.catalog.native, origin.nativePriced),
    relayer: inFee(breakdown.relayerGas + breakdown.relayerService),
    relayerGas: inFee(breakdown.relayerGas),
    relayerService: inFee(breakdown.relayerService),
    app: inFee(breakdown.app),
    subsidized: inFee(breakdown.subsidized),
  }
}

/** The answer's `feeSponsorship`: each component's total, sponsored and user-paid part. */
function feeSponsorship(
  breakdown: AmountBreakdown,
  origin: PricedEnd,
  selected: ReadonlySet<FeeComponent>,
  request: QuoteRequest,
): IntentsApi.FeeSponsorship {
  const inFee = (amount: bigint) => feeOf(origin, amount)
  const bucket = (component: FeeComponent): IntentsApi.FeeSponsorshipBucket => {
    const { total, sponsored } = breakdown.components[component]
    return {
      selected: selected.has(component),
      total: inFee(total),
      sponsored: inFee(sponsored),
      userPays: inFee(total - sponsored),
    }
  }
  const components = Object.fromEntries(FEE_COMPONENTS.map((component) => [component, bucket(component)]))
  const userPays = FEE_COMPONENTS.reduce((sum, component) => {
    const { total, sponsored } = breakdown.components[component]
    return sum + total - sponsored
  }, 0n)
  return {
    quoted: {
      selectedComponents: FEE_COMPONENTS.filter((component) => selected.has(component)),
      ...(request.maxSubsidizationAmount !== undefined
        ? { maxSubsidizationAmount: request.maxSubsidizationAmount }
        : {}),
      capHit: breakdown.capHit,
      components: components as IntentsApi.FeeSponsorship['quoted']['components'],
      sponsoredTotal: inFee(breakdown.subsidized),
      userPaysTotal: inFee(userPays),
    },
  }
}

/** The answer's `details`: what goes in and out, at what rate, impact, slippage, time and route. */
function quoteDetails(priced: PricedQuote, settings: SolverSettings): IntentsApi.Details {
  const { route, payout, originSwap, destinationSwap } = priced
  const { breakdown } = priced.charges
  const { origin, destination } = priced.sides
  const currencyIn = feeOf(origin, breakdown.amountIn)
  const paidOut = {
    ...feeOf(destination, payout.paidOut),
    minimumAmount: payout.minimumAmountOut.toString(),
  }
  // A destination swap's output is priced at what went into it, less what the swap loses.
  const destinationLoss = destinationSwapLoss(destination, destinationSwap)
  const currencyOut = destinationSwap
    ? {
        ...feeOf(
          destination,
          destinationSwap.amountOut,
          destinationSwap.currency,
          destination.priced,
          destinationSwap.amountIn,
        ),
        amountUsd: formatUsd(usdValue(destinationSwap.amountIn, destination.priced) - destinationLoss),
        minimumAmount: destinationSwap.minimumAmountOut.toString(),
      }
    : paidOut
  const out = destinationSwap
    ? {
        amount: destinationSwap.amountOut,
        minimum: destinationSwap.minimumAmountOut,
        decimals: destinationSwap.quote.toDecimals,
      }
    : { amount: payout.paidOut, minimum: payout.minimumAmountOut, decimals: destination.priced.decimals }
  const slipValue = out.amount - out.minimum
  const { userBalance } = priced.costs
  const operation = priced.calls.length > 0 ? 'call' : route.sameAsset ? 'bridge' : 'swap'
  const rate =
    breakdown.amountIn === 0n
      ? '0'
      : formatUnits(
          (out.amount * 10n ** BigInt(origin.priced.decimals) * USD_SCALE) /
            (breakdown.amountIn * 10n ** BigInt(out.decimals)),
          18,
        )
  // The slippage of a destination swap is worth its share of the swap's input.
  const slipUsd = destinationSwap
    ? out.amount === 0n
      ? 0n
      : (usdValue(destinationSwap.amountIn, destination.priced) * slipValue) / out.amount
    : usdValue(slipValue, destination.priced)
  const slippageBps = destinationSwap
    ? destinationSwapSlippageBps(destinationSwap.request, settings)
    : priced.costs.slippageBps
  return {
    operation,
    sender: route.user,
    recipient: route.recipient,
    currencyIn,
    currencyOut,
    refundCurrency: currencyIn,
    ...impacts(
      breakdown,
      origin,
      destination,
      payout.paidOut,
      originSwapLoss(origin, originSwap),
      destinationLoss,
    ),
    rate,
    slippageTolerance: {
      origin: { usd: '0', value: '0', percent: '0' },
      destination: {
        usd: formatUsd(slipUsd),
        value: slipValue.toString(),
        percent: formatUnits(BigInt(slippageBps), 2),
      },
    },
    timeEstimate: timeEstimate(origin, breakdown.amountIn, settings),
    ...(userBalance !== undefined ? { userBalance: userBalance.toString() } : {}),
    isFixedRate: priced.request.fixedRate !== undefined,
    route: {
      origin: originRouteDetails(origin, currencyIn, originSwap),
      destination: destinationSwap
        ? {
            inputCurrency: paidOut,
            outputCurrency: currencyOut,
            router: destinationSwap.quote.sources.join(' > '),
            includedSwapSources: [...destinationSwap.quote.sources],
          }
        : { inputCurrency: currencyOut, outputCurrency: currencyOut, router: 'pontis-solver' },
    },
  }
}

/** The value lost between what goes in and what comes out, overall and by cause, in USD. */
/**
 * What the origin swap loses against its venues' mid prices, USD (×10^18): its output is worth
 * (1 - impact) of what the input was worth there.
 */
function originSwapLoss(origin: PricedEnd, originSwap: OriginSwapQuote | undefined): bigint {
  if (!originSwap || originSwap.priceImpactBps <= 0) return 0n
  const keep = BigInt(10_000 - Math.min(originSwap.priceImpactBps, 9_999))
  return (usdValue(originSwap.amountOut, origin.priced) * BigInt(originSwap.priceImpactBps)) / keep
}

/**
 * What the destination swap loses against its venues' mid prices, USD (×10^18): the impact's share of
 * its input (the fill's payout, in the destination's priced currency).
 */
function destinationSwapLoss(destination: PricedEnd, swap: DestinationSwapLeg | undefined): bigint {
  if (!swap || swap.quote.priceImpactBps <= 0) return 0n
  const bps = BigInt(Math.min(swap.quote.priceImpactBps, 10_000))
  return (usdValue(swap.amountIn, destination.priced) * bps) / 10_000n
}

function impacts(
  breakdown: AmountBreakdown,
  origin: PricedEnd,
  destination: PricedEnd,
  paidOut: bigint,
  originLossUsd: bigint,
  destinationLossUsd: bigint,
): Pick<IntentsApi.Details, 'totalImpact' | 'swapImpact' | 'expandedPriceImpact'> {
  // An origin swap's input was worth its output plus what the swap lost; a destination swap's output
  // is worth its input (the payout) less what it loses.
  const usdIn = usdValue(breakdown.amountIn, origin.priced) + originLossUsd
  const usdOut = usdValue(paidOut, destination.priced) - destinationLossUsd
  const swapLossUsd = originLossUsd + destinationLossUsd
  const inUsd = (amount: bigint) =>
    amount < 0n ? -usdValue(-amount, origin.priced) : usdValue(amount, origin.priced)
  const percent = (part: bigint) => (usdIn === 0n ? '0' : formatUnits((part * 100n * 10n ** 4n) / usdIn, 4))
  const swapNet = inUsd(breakdown.components.swap.total - breakdown.components.swap.sponsored) + swapLossUsd
  return {
    totalImpact: { usd: formatUsd(usdOut - usdIn), percent: percent(usdOut - usdIn) },
    swapImpact: { usd: formatUsd(-swapNet), percent: percent(-swapNet) },
    expandedPriceImpact: {
      swap: { usd: formatUsd(-(inUsd(breakdown.components.swap.total) + swapLossUsd)) },
      execution: { usd: formatUsd(-inUsd(breakdown.relayerGas)) },
      relay: { usd: formatUsd(-inUsd(breakdown.relayerService)) },
      service: { usd: formatUsd(-inUsd(breakdown.relayerService)) },
      app: { usd: formatUsd(-inUsd(breakdown.app)) },
      sponsored: { usd: formatUsd(inUsd(breakdown.subsidized)) },
    },
  }
}

/** The origin leg of `details.route`: the origin swap when there is one, else the depository. */
function originRouteDetails(
  origin: PricedEnd,
  currencyIn: IntentsApi.Fee,
  originSwap: OriginSwapQuote | undefined,
): NonNullable<IntentsApi.Details['route']>['origin'] {
  if (!originSwap) {
    return {
      inputCurrency: currencyIn,
      outputCurrency: currencyIn,
      router: origin.chain.record.protocol?.v2?.depository ?? 'depository',
    }
  }
  return {
    // The swap's input is priced at what it buys: the origin currency it turns into.
    inputCurrency: feeOf(
      origin,
      originSwap.amountIn,
      origin.catalog.unlisted(originSwap.fromCurrency, originSwap.fromDecimals),
      origin.priced,
      originSwap.amountOut,
    ),
    outputCurrency: {
      ...feeOf(origin, originSwap.amountOut),
      minimumAmount: originSwap.minimumAmountOut.toString(),
    },
    router: originSwap.sources.join(' > '),
    includedSwapSources: [...originSwap.sources],
  }
}

/**
 * Seconds until the fill: the origin's confirmations (amount-dependent where the family or the chain
 * entry's `finality` says so) at its block time, then the fill itself.
 */
function timeEstimate(origin: PricedEnd, amountIn: bigint, settings: SolverSettings): number {
  const finality = origin.chain.adapter.finality
  const fill = settings.quote.fillTimeEstimateSeconds
  const family = finality.confirmationsFor?.(origin.currency.address, amountIn) ?? finality.fastConfirmations
  // The chain entry's `finality` (depth, per-currency high-value rules) can ask for more.
  const confirmations = origin.chain.entry.finality
    ? Math.max(family, depositConfirmations(origin.chain, origin.currency.address, amountIn))
    : family
  return fill + (finality.blockTimeSeconds ?? fill) * confirmations
}

/** The answer's `protocol`: the signed order and where to pay it; only for a signed order. */
function protocolData(priced: PricedQuote, issued: IssuedOrder): IntentsApi.QuoteResponse['protocol'] {
  if (!issued.id || !issued.orderSignature) return undefined
  const { origin } = priced.route
  return {
    v2: {
      orderId: issued.id,
      orderData: issued.order,
      orderSignature: issued.orderSignature,
      paymentDetails: {
        chainId: protocolChainIdOf(origin.chain),
        depository: issued.depositAddress ?? origin.chain.record.protocol?.v2?.depository ?? '',
        currency: origin.currency.address,
        amount: priced.charges.breakdown.amountIn.toString(),
      },
    },
  }
}
