/**
 * Client of the swap-route source: the aggregator's `GET /quote` and `POST /swap-instructions`
 * (the public v1 swap API shapes). Origin swaps run inside the deposit transaction.
 */
import {
  type OriginSwapQuote,
  PontisError,
  type SwapQuoteRequest,
  type SwapSource,
  type TimedResponse,
  timedFetch,
} from '@pontis/core/plugin'
import type { TransactionInstruction } from '@solana/web3.js'
import { isNative, mintInfo, type SvmChainContext, WRAPPED_NATIVE_MINT } from './context.js'
import { instructionFromRoute } from './transactions.js'

/** The aggregator's quote answer, kept whole: `/swap-instructions` wants it back unchanged. */
export interface RouteQuote {
  readonly inputMint: string
  readonly inAmount: string
  readonly outputMint: string
  readonly outAmount: string
  readonly otherAmountThreshold: string
  readonly swapMode: 'ExactIn' | 'ExactOut'
  readonly slippageBps: number
  readonly routePlan: ReadonlyArray<{ readonly swapInfo: { readonly label: string } }>
  readonly [member: string]: unknown
}

interface RouteInstructionJson {
  programId: string
  accounts: Array<{ pubkey: string; isSigner: boolean; isWritable: boolean }>
  data: string
}

/** Instructions of a route, in the order a transaction runs them. */
export interface RouteInstructions {
  readonly instructions: readonly TransactionInstruction[]
  readonly addressLookupTableAddresses: readonly string[]
}

const mintOf = (currency: string): string => (isNative(currency) ? WRAPPED_NATIVE_MINT.toBase58() : currency)

function swapApi(context: SvmChainContext): string {
  if (!context.swapApiUrl) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `${context.label.displayName} (${context.label.id}) has no swap route source configured: only its listed currencies can be deposited.`,
    )
  }
  return context.swapApiUrl.replace(/\/+$/, '')
}

async function call(context: SvmChainContext, url: string, init: RequestInit = {}): Promise<unknown> {
  let response: TimedResponse
  try {
    response = await timedFetch(url, init, { timeoutMs: context.swapApiTimeoutMs })
  } catch (error) {
    throw new PontisError(
      'SWAP_QUOTE_FAILED',
      `The swap route source of ${context.label.displayName} did not answer; retry shortly.`,
      undefined,
      { cause: error },
    )
  }
  let body: Record<string, unknown> | undefined
  try {
    body = JSON.parse(response.text) as Record<string, unknown>
  } catch {
    // Reported below by status.
  }
  if (response.ok && body !== undefined) return body
  const code = typeof body?.errorCode === 'string' ? body.errorCode : ''
  const reason = typeof body?.error === 'string' ? body.error : `HTTP ${response.status}`
  if (response.status === 400 && /TOKEN_NOT_TRADABLE/.test(code)) {
    throw new PontisError(
      'UNSUPPORTED_CURRENCY',
      `The token is not tradeable on ${context.label.displayName}: ${reason}`,
    )
  }
  if (response.status === 400 && /ROUTE|NO_ROUTES|CANNOT_COMPUTE/.test(code)) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `No swap route on ${context.label.displayName} within the request's limits (${reason}); allow more sources or hops, or change the amount.`,
    )
  }
  throw new PontisError(
    'SWAP_QUOTE_FAILED',
    `The swap route source of ${context.label.displayName} failed: ${reason}`,
  )
}

/** The name the route source goes by in swap source filters. */
export const SVM_ROUTE_SOURCE = 'svm-aggregator'

/**
 * The route aggregator as a swap source: its venues (the route's hop labels) are filtered by the
 * same names, passed on as its `dexes` / `excludeDexes`. Its routes run inside the deposit.
 */
export function routeSource(context: SvmChainContext): SwapSource {
  return { name: SVM_ROUTE_SOURCE, quote: (request) => quoteRoute(context, request) }
}

/** The request's filter as the aggregator's venue lists; naming the aggregator itself allows all of its venues. */
function venueFilter(request: SwapQuoteRequest): { dexes?: string; excludeDexes?: string } {
  const own = (name: string) => name.toLowerCase() === SVM_ROUTE_SOURCE
  const { included = [], excluded = [] } = request.filter
  if (excluded.some(own)) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `excludedSwapSources excludes ${SVM_ROUTE_SOURCE}, the only swap source here.`,
    )
  }
  const venues = included.filter((name) => !own(name))
  return {
    ...(venues.length > 0 && venues.length === included.length ? { dexes: venues.join(',') } : {}),
    ...(excluded.length > 0 ? { excludeDexes: excluded.join(',') } : {}),
  }
}

/** Prices a swap with the route source, honouring the request's source and hop limits. */
async function quoteRoute(context: SvmChainContext, request: SwapQuoteRequest): Promise<OriginSwapQuote> {
  const base = swapApi(context)
  const params = new URLSearchParams({
    inputMint: mintOf(request.fromCurrency),
    outputMint: mintOf(request.toCurrency),
    amount: request.amount.toString(),
    slippageBps: String(request.slippageBps),
    swapMode: request.tradeType === 'EXACT_OUTPUT' ? 'ExactOut' : 'ExactIn',
  })
  const { options } = request
  for (const [name, value] of Object.entries(venueFilter(request))) params.set(name, value)
  if (options.maxRouteLength !== undefined) params.set('maxRouteLength', String(options.maxRouteLength))
  const decimalsOf = (currency: string) =>
    isNative(currency) ? Promise.resolve(9) : mintInfo(context, currency).then((info) => info.decimals)
  const [route, fromDecimals, toDecimals] = await Promise.all([
    call(context, `${base}/quote?${params}`) as Promise<RouteQuote>,
    decimalsOf(request.fromCurrency),
    decimalsOf(request.toCurrency),
  ])
  const sources = route.routePlan.map((step) => step.swapInfo.label)
  const exactOut = route.swapMode === 'ExactOut'
  return {
    source: SVM_ROUTE_SOURCE,
    fromCurrency: request.fromCurrency,
    fromDecimals,
    toCurrency: request.toCurrency,
    toDecimals,
    // ExactOut: `otherAmountThreshold` is the most input taken; ExactIn: the least output given.
    amountIn: BigInt(exactOut ? route.otherAmountThreshold : route.inAmount),
    amountOut: BigInt(route.outAmount),
    minimumAmountOut: BigInt(exactOut ? route.outAmount : route.otherAmountThreshold),
    hops: sources.length,
    sources,
    priceImpactBps: Math.round(Number(route.priceImpactPct ?? 0) * 10_000),
    route,
  }
}

/** The route's instructions for `user`: setup, the swap legs, cleanup. */
export async function routeInstructions(
  context: SvmChainContext,
  quote: OriginSwapQuote,
  user: string,
  useSharedAccounts: boolean,
): Promise<RouteInstructions> {
  const body = (await call(context, `${swapApi(context)}/swap-instructions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      quoteResponse: quote.route,
      userPublicKey: user,
      // Native SOL in or out is wrapped and unwrapped by the route; a wrapped-SOL deposit stays wrapped.
      wrapAndUnwrapSol: quote.toCurrency !== WRAPPED_NATIVE_MINT.toBase58(),
      useSharedAccounts,
    }),
  })) as {
    setupInstructions?: RouteInstructionJson[]
    swapInstruction: RouteInstructionJson
    otherInstructions?: RouteInstructionJson[]
    cleanupInstruction?: RouteInstructionJson | null
    addressLookupTableAddresses?: string[]
  }
  const ordered = [
    ...(body.setupInstructions ?? []),
    body.swapInstruction,
    // The route's further legs: they run right after the first one, before the cleanup.
    ...(body.otherInstructions ?? []),
    ...(body.cleanupInstruction ? [body.cleanupInstruction] : []),
  ]
  return {
    instructions: ordered.map(instructionFromRoute),
    addressLookupTableAddresses: body.addressLookupTableAddresses ?? [],
  }
}
