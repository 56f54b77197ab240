/**
 * A same-chain swap the user executes (the default for same-chain requests): the chain's swap
 * sources price it, the best route's source builds its steps (approve, then swap), and the output
 * goes straight to the recipient; no deposit, no solver. The answer has the quote's usual shape.
 * A quote with steps is stored as a request (`quote.kind` = `self-swap`) whose swap transaction the
 * indexer recognises by the id it carries, so status, history and webhooks follow it like any other.
 */
import {
  formatUnits,
  type IntentsApi,
  ORIGIN_REQUEST_OPTIONS,
  type OriginRequestOption,
  PontisError,
  type SwapQuote,
  type SwapSource,
  type SwapSourceFilter,
  type SwapStepsRequest,
} from '@pontis/core'
import { encodeAbiParameters, type Hex, keccak256, toHex } from 'viem'
import type { NewRequest } from '../store/index.js'
import type { ChainCurrency } from './currencies.js'
import { familyOptions, optionValue } from './options.js'
import { formatUsd, type PriceSource, USD_SCALE, usdValue } from './prices.js'
import type { PricedEnd } from './pricing.js'
import { feeOf } from './response.js'
import type { QuoteRequest, SelfSwapRoute } from './route.js'
import type { SolverSettings } from './settings.js'
import { apiSteps } from './steps.js'
import { bestSwap, checkSwapImpact, describeSourceFilter, originSwapFilter } from './swap-sources.js'

export interface SelfSwapContext {
  readonly prices: PriceSource
  readonly settings: SolverSettings
  readonly nowMs: number
  /** Build the steps (`/quote`) or only price the swap (`/price`). */
  readonly withSteps: boolean
}

/** What the store keeps of a same-chain swap the user executes; `kind` tells it from solver requests. */
// A type, not an interface, so it is a JSON object to the store.
export type StoredSelfSwap = {
  readonly kind: 'self-swap'
  readonly request: QuoteRequest
  readonly fees: IntentsApi.Fees
  readonly slippageBps: number
  /** The swap's sources, in hop order. */
  readonly sources: readonly string[]
  readonly currencyIn: IntentsApi.Fee
  readonly currencyOut: IntentsApi.Fee
}

/** A self-executed swap's request record, as the store takes it. */
export type SelfSwapRequest = NewRequest<StoredSelfSwap>

/** The quote of a self-executed swap, and the request to store when it has steps. */
export interface SelfSwapQuote {
  readonly response: IntentsApi.QuoteResponse
  readonly request: SelfSwapRequest | undefined
}

/** True when a stored request's quote is a self-executed swap's. */
export function isSelfSwap(quote: Record<string, unknown>): boolean {
  return quote.kind === 'self-swap'
}

/**
 * What a user-executed swap cannot do (no deposit, no solver, no order), refused rather than
 * ignored; each is honoured on the solver route (`forceSolverExecution`).
 */
const NOT_FOR_SELF_SWAPS = [
  'usePermit',
  'useDepositAddress',
  'strict',
  'topupGas',
  'txs',
  'authorizationList',
  'appFees',
  'subsidizeFees',
  'fixedRate',
  'includeProtocolData',
  'originGasOverhead',
  'useExternalLiquidity',
  'useFallbacks',
  'gasLimitForDepositSpecifiedTxs',
] as const

function checkSelfSwapOptions(request: QuoteRequest, route: SelfSwapRoute): void {
  for (const member of NOT_FOR_SELF_SWAPS) {
    const value = request[member]
    if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) continue
    throw new PontisError(
      'UNSUPPORTED_EXECUTION_TYPE',
      `${member} does not apply to a same-chain swap the user executes; remove it, or set forceSolverExecution to have the solver fill it.`,
    )
  }
  // Family options of another family are refused as on any route from this origin.
  const honoured = new Set(route.quoting.originRequestOptions ?? [])
  for (const option of Object.keys(ORIGIN_REQUEST_OPTIONS) as OriginRequestOption[]) {
    if (optionValue(request, option) === undefined || honoured.has(option)) continue
    throw new PontisError(
      'UNSUPPORTED_ROUTE',
      `${option} does not apply to ${route.chain.record.vmType} chains such as ${route.chain.record.displayName} (${route.chain.id}); remove it.`,
    )
  }
}

/** The sources a same-chain swap may use: its one leg is both the origin's and the destination's. */
function selfSwapFilter(request: QuoteRequest): SwapSourceFilter {
  const filter = originSwapFilter(request)
  const included = filter.included ?? request.includedDestinationSwapSources
  return { ...filter, ...(included ? { included } : {}) }
}

/** The quote of a same-chain swap the user executes. */
export async function quoteSelfSwap(
  request: QuoteRequest,
  route: SelfSwapRoute,
  context: SelfSwapContext & { readonly apiKeyId?: string | undefined },
): Promise<SelfSwapQuote> {
  checkSelfSwapOptions(request, route)
  const { settings } = context
  const slippageBps =
    request.slippageTolerance !== undefined
      ? Number(request.slippageTolerance)
      : settings.slippage.crossAssetBps
  const swapRequest = {
    user: route.user,
    fromCurrency: route.fromCurrency,
    toCurrency: route.toCurrency,
    tradeType: request.tradeType === 'EXACT_INPUT' ? 'EXACT_INPUT' : 'EXACT_OUTPUT',
    amount: BigInt(request.amount),
    slippageBps,
    filter: selfSwapFilter(request),
    options: familyOptions(request, route.quoting),
  } as const
  const described = { chainName: route.chain.record.displayName, filterText: describeSourceFilter(request) }
  const exact = await bestSwap(route.sources, swapRequest, described)
  const quote =
    swapRequest.tradeType === 'EXACT_OUTPUT' && request.enableTrueExactOutput !== true
      ? await surplusToRecipient(route, swapRequest, exact, described)
      : exact
  checkSwapImpact(quote, request, settings)
  const source = route.sources.find((candidate) => candidate.name === quote.source) as SwapSource
  const ttlSeconds = request.ttl ?? settings.quote.ttlSeconds
  const stepsRequest: SwapStepsRequest = {
    quote,
    user: route.user,
    recipient: route.recipient,
    requestId: selfSwapId(route, quote, context.nowMs),
    deadline: Math.floor(context.nowMs / 1000) + ttlSeconds,
  }
  const [cost, prepared, ends, userBalance] = await Promise.all([
    source.estimateSwapCost?.(stepsRequest),
    context.withSteps ? source.buildSwapSteps?.(stepsRequest) : undefined,
    pricedEnds(route, quote, context.prices),
    route.chain.adapter.reading?.readBalance(route.user, route.fromCurrency),
  ])
  const details = swapDetails(route, quote, ends, { slippageBps, userBalance, settings })
  const fees = swapFees(ends, cost?.amount ?? 0n)
  const response: IntentsApi.QuoteResponse = {
    steps: prepared ? apiSteps(prepared, stepsRequest.requestId as Hex, undefined, undefined) : [],
    fees,
    details,
  }
  // Stored only where the family can follow the swap (its reads recognise it); else done when mined.
  if (!prepared || !route.chain.adapter.reading?.readSwaps) return { response, request: undefined }
  const stored: StoredSelfSwap = {
    kind: 'self-swap',
    request,
    fees,
    slippageBps,
    sources: [...quote.sources],
    currencyIn: details.currencyIn,
    currencyOut: details.currencyOut,
  }
  return {
    response,
    request: {
      id: stepsRequest.requestId,
      originChainId: route.chain.id,
      destinationChainId: route.chain.id,
      userAddress: route.user,
      recipient: route.recipient,
      refundTo: route.user,
      originCurrency: quote.fromCurrency,
      destinationCurrency: quote.toCurrency,
      tradeType: request.tradeType,
      amountIn: quote.amountIn,
      amountOut: quote.amountOut,
      minimumAmountOut: quote.minimumAmountOut,
      ...(context.apiKeyId ? { apiKeyId: context.apiKeyId } : {}),
      ...(request.referrer ? { referrer: request.referrer } : {}),
      // The router refuses the swap after its deadline: the request cannot succeed after it.
      expiresAt: stepsRequest.deadline * 1000,
      quote: stored,
    },
  }
}

/**
 * An exact output without `enableTrueExactOutput`: the swap surplus is swept to the recipient. The
 * swap spends the exact-output quote's most input as an exact input, with the amount asked for as the
 * floor enforced on chain, so the recipient gets that amount plus whatever the slippage buffer buys.
 * A source that cannot enforce that floor keeps the exact output (the recipient then gets exactly
 * the amount and the unspent input stays with the user).
 */
async function surplusToRecipient(
  route: SelfSwapRoute,
  swapRequest: Parameters<typeof bestSwap>[1],
  exact: SwapQuote,
  described: Parameters<typeof bestSwap>[2],
): Promise<SwapQuote> {
  const asked = swapRequest.amount
  const spent = await bestSwap(
    route.sources.filter((source) => source.name === exact.source),
    { ...swapRequest, tradeType: 'EXACT_INPUT', amount: exact.amountIn, minimumAmountOut: asked },
    described,
  ).catch(() => undefined)
  return spent && spent.minimumAmountOut >= asked && spent.amountOut >= asked ? spent : exact
}

/** A fresh id for the swap: its terms and a random salt, hashed (the swap transaction carries it). */
function selfSwapId(route: SelfSwapRoute, quote: SwapQuote, nowMs: number): Hex {
  const salt = toHex(crypto.getRandomValues(new Uint8Array(16)))
  const terms = `${route.chain.id}:${route.user}:${route.recipient}:${quote.fromCurrency}:${quote.toCurrency}:${quote.amountIn}:${quote.minimumAmountOut}:${nowMs}`
  return keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'bytes16' }], [terms, salt]))
}

/** Both ends as priced route ends; a currency the price source does not list is valued through the swap. */
async function pricedEnds(
  route: SelfSwapRoute,
  quote: SwapQuote,
  prices: PriceSource,
): Promise<{ from: PricedEnd; to: PricedEnd }> {
  const { catalog } = route
  const from = catalog.find(quote.fromCurrency) ?? catalog.unlisted(quote.fromCurrency, quote.fromDecimals)
  const to = catalog.find(quote.toCurrency) ?? catalog.unlisted(quote.toCurrency, quote.toDecimals)
  const listed = (currency: ChainCurrency) =>
    catalog.has(currency.address) ? prices.usdPrice(currency.entry) : Promise.resolve(undefined)
  const [fromUsd, toUsd, nativeUsd] = await Promise.all([
    listed(from),
    listed(to),
    prices.usdPrice(catalog.native.entry),
  ])
  const fromPrice = fromUsd ?? (toUsd === undefined ? 0n : midPrice(quote, toUsd, 'from'))
  const toPrice = toUsd ?? midPrice(quote, fromPrice, 'to')
  const end = (currency: ChainCurrency, usdPrice: bigint): PricedEnd => ({
    chain: route.chain,
    quoting: route.quoting,
    catalog,
    currency,
    priced: { decimals: currency.entry.decimals, usdPrice },
    nativePriced: { decimals: catalog.native.entry.decimals, usdPrice: nativeUsd },
  })
  return { from: end(from, fromPrice), to: end(to, toPrice) }
}

/**
 * The USD price of one end from the other's, at the venues' mid price: there, amountOut / (1 - impact)
 * of the output is worth amountIn of the input.
 */
function midPrice(quote: SwapQuote, otherUsd: bigint, side: 'from' | 'to'): bigint {
  const keep = BigInt(10_000 - Math.min(quote.priceImpactBps, 9_999))
  const inUnits = quote.amountIn * 10n ** BigInt(quote.toDecimals)
  const outUnits = quote.amountOut * 10n ** BigInt(quote.fromDecimals)
  if (inUnits === 0n || outUnits === 0n) return 0n
  return side === 'to'
    ? (otherUsd * inUnits * keep) / (10_000n * outUnits)
    : (otherUsd * outUnits * 10_000n) / (keep * inUnits)
}

/** The user pays the swap's gas and nothing else: every other fee is zero. */
function swapFees(ends: { from: PricedEnd }, gas: bigint): IntentsApi.Fees {
  const { from } = ends
  const none = feeOf(from, 0n)
  return {
    gas: feeOf(from, gas, from.catalog.native, from.nativePriced),
    relayer: none,
    relayerGas: none,
    relayerService: none,
    app: none,
    subsidized: none,
  }
}

function swapDetails(
  route: SelfSwapRoute,
  quote: SwapQuote,
  ends: { from: PricedEnd; to: PricedEnd },
  extra: { slippageBps: number; userBalance: bigint | undefined; settings: SolverSettings },
): IntentsApi.Details {
  const currencyIn = feeOf(ends.from, quote.amountIn)
  const currencyOut = { ...feeOf(ends.to, quote.amountOut), minimumAmount: quote.minimumAmountOut.toString() }
  const usdIn = usdValue(quote.amountIn, ends.from.priced)
  const usdOut = usdValue(quote.amountOut, ends.to.priced)
  const swapUsd = -((usdIn * BigInt(quote.priceImpactBps)) / 10_000n)
  const percent = (part: bigint) => (usdIn === 0n ? '0' : formatUnits((part * 100n * 10n ** 4n) / usdIn, 4))
  const slipValue = quote.amountOut - quote.minimumAmountOut
  const zero = { usd: '0', value: '0', percent: '0' }
  const leg = {
    inputCurrency: currencyIn,
    outputCurrency: currencyOut,
    router: quote.sources.join(' > '),
    includedSwapSources: [...quote.sources],
  }
  const { finality } = route.chain.adapter
  return {
    operation: 'swap',
    sender: route.user,
    recipient: route.recipient,
    currencyIn,
    currencyOut,
    refundCurrency: currencyIn,
    totalImpact: { usd: formatUsd(usdOut - usdIn), percent: percent(usdOut - usdIn) },
    swapImpact: { usd: formatUsd(swapUsd), percent: formatUnits(-BigInt(quote.priceImpactBps), 2) },
    expandedPriceImpact: {
      swap: { usd: formatUsd(swapUsd) },
      execution: { usd: '0' },
      relay: { usd: '0' },
      service: { usd: '0' },
      app: { usd: '0' },
      sponsored: { usd: '0' },
    },
    rate:
      quote.amountIn === 0n
        ? '0'
        : formatUnits(
            (quote.amountOut * 10n ** BigInt(quote.fromDecimals) * USD_SCALE) /
              (quote.amountIn * 10n ** BigInt(quote.toDecimals)),
            18,
          ),
    slippageTolerance: {
      origin: {
        usd: formatUsd(usdValue(slipValue, ends.to.priced)),
        value: slipValue.toString(),
        percent: formatUnits(BigInt(extra.slippageBps), 2),
      },
      destination: zero,
    },
    timeEstimate:
      (finality.blockTimeSeconds ?? extra.settings.quote.fillTimeEstimateSeconds) *
      finality.fastConfirmations,
    ...(extra.userBalance !== undefined ? { userBalance: extra.userBalance.toString() } : {}),
    isFixedRate: false,
    route: { origin: leg, destination: leg },
  }
}
