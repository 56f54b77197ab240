/**
 * A DEX aggregator speaking the 0x Swap API v2 as a swap source (`zeroex`): exact-input quotes from
 * `GET {apiUrl}/swap/allowance-holder/quote` (headers `0x-version: v2` and, when configured,
 * `0x-api-key`), executed as the transaction the API answers. The API is not trusted with the user's
 * funds beyond what the answer can be checked for:
 * - the transaction must go to the chain record's `contracts.zeroExAllowanceHolder`, which is also the
 *   only allowance target accepted (the AllowanceHolder flow approves the contract it calls);
 * - tokens, sell amount and native value must be what was asked, and `minBuyAmount` must be at most
 *   the asked slippage below `buyAmount` (the transaction enforces `minBuyAmount` on chain);
 * - anything else (no answer, a timeout, an error status, a body that is not a quote) is treated as
 *   "no route from this source", so quoting goes on with the chain's other sources.
 * The API key is a secret: it is only ever sent in its header, never logged or put in an error.
 * Exact-output swaps and origin swaps inside a deposit are not offered (the API prices sell amounts,
 * and its transaction pays the taker or a recipient, not a tagged deposit).
 */
import {
  type CostEstimate,
  PontisError,
  type PreparedStep,
  type SwapSource,
  type SwapStepsRequest,
  swapSourceAllowed,
} from '@pontis/core/plugin'
import { type Address, getAddress, type Hex, isAddress, isHex } from 'viem'
import {
  type EvmChainContext,
  feeTerms,
  GAS,
  isNativeCurrency,
  simulateGas,
  transactionData,
} from './quoting.js'
import { swapApproveStep, swapNeedsApproval } from './uniswap.js'

/** The name requests filter this source by, and the label of each of its hops. */
export const ZEROEX_SOURCE = 'zeroex'

/** The token address the 0x API uses for the native currency. */
export const ZEROEX_NATIVE_TOKEN = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'

/** The quote endpoint, under the configured base URL. */
export const ZEROEX_QUOTE_PATH = '/swap/allowance-holder/quote'

/** Options of the plugin's `zeroEx` member (see the README, "Swap sources"). */
export interface ZeroExConfig {
  /** Base URL of the API (`https://api.0x.org`); empty: the source is off. */
  readonly apiUrl: string
  /** Sent as `0x-api-key`; a secret. Empty or absent: no key header. */
  readonly apiKey?: string
  /** How long one quote request may take, ms. Default 3000. */
  readonly timeoutMs?: number
}

/** JSON Schema of {@link ZeroExConfig}. */
export const zeroExConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['apiUrl'],
  properties: {
    apiUrl: { type: 'string', pattern: '^(https?://[^\\s]+)?$' },
    apiKey: { type: 'string', maxLength: 512 },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000, default: 3000 },
  },
} as const

/** What a failed answer is reported with (never the key, never the full URL). */
export type ZeroExWarn = (message: string, fields: Record<string, string>) => void

interface ZeroExTransaction {
  readonly to: Address
  readonly data: Hex
  readonly value: string
  readonly gas: string
}

/** The route data this source hands back to itself to build the swap. */
interface ZeroExRoute {
  readonly transaction: ZeroExTransaction
  /** The account the API quoted for (`taker`), and who receives the output in `transaction`. */
  readonly taker: Address
  readonly recipient: Address
  readonly slippageBps: number
  /** The venues the API named per fill (`route.fills[].source`). */
  readonly venues: readonly string[]
}

/** The checked parts of a quote answer. */
interface ZeroExAnswer {
  readonly buyAmount: bigint
  readonly minBuyAmount: bigint
  readonly transaction: ZeroExTransaction
  readonly venues: readonly string[]
}

/** An exact-input quote's loss against reference mid prices, bps (0 when none is known). */
export type ReferenceImpact = (quote: {
  fromCurrency: string
  toCurrency: string
  amountIn: bigint
  amountOut: bigint
}) => Promise<number>

const BPS = 10_000n
const HOLDER_APPROVAL = `Allow the ${ZEROEX_SOURCE} allowance target to take the swap input`
const UINT = /^[0-9]{1,78}$/
const GAS_FALLBACK = 400_000n

/** The aggregator as a {@link SwapSource}; `allowanceHolder` is the chain record's `contracts.zeroExAllowanceHolder`. */
export function zeroExSource(
  context: EvmChainContext,
  config: ZeroExConfig,
  allowanceHolder: Address,
  options: {
    warn?: ZeroExWarn
    referenceImpact?: ReferenceImpact
    decimals: (currency: string) => Promise<number>
  },
): SwapSource {
  const api = { ...config, apiUrl: config.apiUrl.replace(/\/+$/, '') }
  const ask = (request: AskRequest) => askQuote(context, api, allowanceHolder, request, options.warn)
  return {
    name: ZEROEX_SOURCE,
    async quote(request) {
      if (!swapSourceAllowed(request.filter, ZEROEX_SOURCE)) throw noRoute(context, 'the request excludes it')
      if (request.tradeType !== 'EXACT_INPUT') {
        throw noRoute(context, 'the 0x Swap API prices exact-input swaps only')
      }
      const taker = getAddress(request.user)
      const answer = await ask({ ...request, taker, recipient: taker })
      const [fromDecimals, toDecimals, impact] = await Promise.all([
        options.decimals(request.fromCurrency),
        options.decimals(request.toCurrency),
        options.referenceImpact?.({
          fromCurrency: request.fromCurrency,
          toCurrency: request.toCurrency,
          amountIn: request.amount,
          amountOut: answer.buyAmount,
        }) ?? 0,
      ])
      const route: ZeroExRoute = {
        transaction: answer.transaction,
        taker,
        recipient: taker,
        slippageBps: request.slippageBps,
        venues: answer.venues,
      }
      const hops = Math.max(1, answer.venues.length)
      return {
        source: ZEROEX_SOURCE,
        fromCurrency: request.fromCurrency,
        fromDecimals,
        toCurrency: request.toCurrency,
        toDecimals,
        amountIn: request.amount,
        amountOut: answer.buyAmount,
        minimumAmountOut: answer.minBuyAmount,
        hops,
        sources: Array.from({ length: hops }, () => ZEROEX_SOURCE),
        priceImpactBps: impact,
        route,
      }
    },
    buildSwapSteps: (request) => swapSteps(context, allowanceHolder, request, ask),
    estimateSwapCost: (request) => swapCost(context, allowanceHolder, request),
    // Its transaction pays the taker or a recipient; a deposit needs a tagged, exact payment.
    usableInDeposits: false,
  }
}

function noRoute(context: EvmChainContext, why: string): PontisError {
  return new PontisError(
    'NO_SWAP_ROUTES_FOUND',
    `No ${ZEROEX_SOURCE} route on ${context.label.displayName}: ${why}.`,
  )
}

const apiToken = (context: EvmChainContext, currency: string): string =>
  isNativeCurrency(context, currency) ? ZEROEX_NATIVE_TOKEN : getAddress(currency)

interface AskRequest {
  readonly fromCurrency: string
  readonly toCurrency: string
  readonly amount: bigint
  readonly slippageBps: number
  readonly taker: Address
  readonly recipient: Address
}

/** Asks the API for a firm quote and checks the answer; any failure is a {@link noRoute}. */
async function askQuote(
  context: EvmChainContext,
  config: ZeroExConfig,
  allowanceHolder: Address,
  request: AskRequest,
  warn: ZeroExWarn | undefined,
): Promise<ZeroExAnswer> {
  const query = new URLSearchParams({
    chainId: String(context.chainId),
    sellToken: apiToken(context, request.fromCurrency),
    buyToken: apiToken(context, request.toCurrency),
    sellAmount: request.amount.toString(),
    taker: request.taker,
    slippageBps: String(request.slippageBps),
  })
  if (request.recipient !== request.taker) query.set('recipient', request.recipient)
  // Answers are reused for the chain's read-cache period (failures are not kept): a warm repeat quote
  // asks the API nothing.
  return context.cache.read(`zeroex:${query}`, () =>
    fetchQuote(context, config, allowanceHolder, request, query, warn),
  )
}

async function fetchQuote(
  context: EvmChainContext,
  config: ZeroExConfig,
  allowanceHolder: Address,
  request: AskRequest,
  query: URLSearchParams,
  warn: ZeroExWarn | undefined,
): Promise<ZeroExAnswer> {
  const headers: Record<string, string> = { '0x-version': 'v2', accept: 'application/json' }
  if (config.apiKey) headers['0x-api-key'] = config.apiKey
  const host = hostOf(config.apiUrl)
  const failed = (why: string): PontisError => {
    warn?.('the 0x API gave no usable quote; other sources are used', { host, reason: why })
    return noRoute(context, `the 0x API at ${host} ${why}`)
  }
  let response: Response
  try {
    response = await fetch(`${config.apiUrl}${ZEROEX_QUOTE_PATH}?${query}`, {
      headers,
      signal: AbortSignal.timeout(config.timeoutMs ?? 3000),
    })
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError'
    throw failed(timedOut ? 'did not answer in time' : 'could not be reached')
  }
  let body: unknown
  try {
    body = await response.json()
  } catch {
    throw failed(`answered ${response.status} with a body that is not JSON`)
  }
  if (!response.ok) {
    const error = body as { name?: unknown; message?: unknown }
    const name = typeof error?.name === 'string' ? error.name.slice(0, 40) : 'an error'
    if (response.status === 400) {
      // The API refused the pair or the amount (e.g. TOKEN_NOT_SUPPORTED): no route, quietly.
      throw noRoute(context, `the 0x API refused the request (${name})`)
    }
    throw failed(`answered ${response.status} (${name})`)
  }
  const answer = checkAnswer(context, allowanceHolder, request, body)
  if (typeof answer === 'string') {
    if (answer === 'no liquidity')
      throw noRoute(context, 'the 0x API has no liquidity for this pair and size')
    throw failed(`answered a quote that does not hold up: ${answer}`)
  }
  return answer
}

function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return 'an unparsable URL'
  }
}

const sameAddress = (a: unknown, b: string): boolean =>
  typeof a === 'string' && isAddress(a, { strict: false }) && a.toLowerCase() === b.toLowerCase()

/** The answer's checked terms, or why it cannot be used. */
function checkAnswer(
  context: EvmChainContext,
  allowanceHolder: Address,
  request: AskRequest,
  body: unknown,
): ZeroExAnswer | string {
  if (typeof body !== 'object' || body === null) return 'not an object'
  const quote = body as Record<string, unknown>
  if (quote.liquidityAvailable === false) return 'no liquidity'
  if (quote.liquidityAvailable !== true) return 'liquidityAvailable is missing'
  if (!sameAddress(quote.sellToken, apiToken(context, request.fromCurrency))) return 'another sellToken'
  if (!sameAddress(quote.buyToken, apiToken(context, request.toCurrency))) return 'another buyToken'
  const amount = (field: string): bigint | undefined => {
    const value = quote[field]
    return typeof value === 'string' && UINT.test(value) ? BigInt(value) : undefined
  }
  const sellAmount = amount('sellAmount')
  const buyAmount = amount('buyAmount')
  const minBuyAmount = amount('minBuyAmount')
  if (sellAmount !== request.amount) return 'another sellAmount'
  if (buyAmount === undefined || minBuyAmount === undefined || minBuyAmount === 0n) return 'no buy amounts'
  if (minBuyAmount > buyAmount) return 'minBuyAmount above buyAmount'
  if (minBuyAmount < (buyAmount * (BPS - BigInt(request.slippageBps))) / BPS) {
    return 'minBuyAmount below the asked slippage'
  }
  const tx = quote.transaction as Record<string, unknown> | null | undefined
  if (typeof tx !== 'object' || tx === null) return 'no transaction'
  if (!sameAddress(tx.to, allowanceHolder))
    return 'a transaction to another contract than contracts.zeroExAllowanceHolder'
  if (typeof tx.data !== 'string' || !isHex(tx.data) || tx.data.length < 10) return 'no calldata'
  const nativeIn = isNativeCurrency(context, request.fromCurrency)
  if (typeof tx.value !== 'string' || !UINT.test(tx.value)) return 'no transaction value'
  if (BigInt(tx.value) !== (nativeIn ? request.amount : 0n)) return 'another transaction value'
  const gas = typeof tx.gas === 'string' && UINT.test(tx.gas) ? tx.gas : GAS_FALLBACK.toString()
  if (
    !nativeIn &&
    quote.allowanceTarget !== undefined &&
    !sameAddress(quote.allowanceTarget, allowanceHolder)
  ) {
    return 'another allowance target'
  }
  const issues = quote.issues as { allowance?: { spender?: unknown } | null } | undefined
  const spender = issues?.allowance?.spender
  if (spender !== undefined && spender !== null && !sameAddress(spender, allowanceHolder)) {
    return 'another allowance spender'
  }
  const fills = (quote.route as { fills?: unknown } | undefined)?.fills
  const venues = Array.isArray(fills)
    ? fills.flatMap((fill) => {
        const source = (fill as { source?: unknown } | null)?.source
        return typeof source === 'string' ? [source.slice(0, 40)] : []
      })
    : []
  return {
    buyAmount,
    minBuyAmount,
    transaction: { to: getAddress(tx.to as string), data: tx.data, value: tx.value, gas },
    venues,
  }
}

/** The route of `request`, asked again when the output must go to another account than the taker. */
async function routeFor(
  request: SwapStepsRequest,
  ask: (request: AskRequest) => Promise<ZeroExAnswer>,
): Promise<ZeroExRoute> {
  const route = request.quote.route as ZeroExRoute
  const recipient = getAddress(request.recipient)
  if (recipient === route.recipient && getAddress(request.user) === route.taker) return route
  const { quote } = request
  const answer = await ask({
    fromCurrency: quote.fromCurrency,
    toCurrency: quote.toCurrency,
    amount: quote.amountIn,
    slippageBps: route.slippageBps,
    taker: getAddress(request.user),
    recipient,
  })
  if (answer.minBuyAmount < quote.minimumAmountOut) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `The ${ZEROEX_SOURCE} price moved while the swap was prepared (at least ${answer.minBuyAmount} instead of ${quote.minimumAmountOut}); quote again.`,
    )
  }
  return { ...route, transaction: answer.transaction, taker: getAddress(request.user), recipient }
}

function swapGas(context: EvmChainContext, request: SwapStepsRequest, transaction: ZeroExTransaction) {
  const fallback = BigInt(transaction.gas)
  const call = { to: transaction.to, data: transaction.data, value: BigInt(transaction.value) }
  return simulateGas(context, { account: request.user as Address, ...call }, fallback)
}

async function swapCost(
  context: EvmChainContext,
  allowanceHolder: Address,
  request: SwapStepsRequest,
): Promise<CostEstimate> {
  const { transaction } = request.quote.route as ZeroExRoute
  const [approval, fees] = await Promise.all([
    swapNeedsApproval(context, allowanceHolder, request),
    feeTerms(context),
  ])
  const swap = approval ? BigInt(transaction.gas) : await swapGas(context, request, transaction)
  const units = swap + (approval ? GAS.erc20Approve : 0n)
  return {
    currencyId: context.nativeCurrencyId,
    amount: units * fees.maxFeePerGas,
    units,
    unitPrice: fees.maxFeePerGas,
  }
}

async function swapSteps(
  context: EvmChainContext,
  allowanceHolder: Address,
  request: SwapStepsRequest,
  ask: (request: AskRequest) => Promise<ZeroExAnswer>,
): Promise<readonly PreparedStep[]> {
  const [route, fees, approval] = await Promise.all([
    routeFor(request, ask),
    feeTerms(context),
    swapNeedsApproval(context, allowanceHolder, request),
  ])
  const { transaction } = route
  const steps: PreparedStep[] = approval
    ? [swapApproveStep(context, allowanceHolder, request, fees, HOLDER_APPROVAL)]
    : []
  const gas = approval ? BigInt(transaction.gas) : await swapGas(context, request, transaction)
  const call = { to: transaction.to, data: transaction.data, value: BigInt(transaction.value) }
  const venues = route.venues.length > 0 ? ` (${[...new Set(route.venues)].join(', ')})` : ''
  steps.push({
    id: 'swap',
    kind: 'transaction',
    action: 'Confirm transaction in your wallet',
    description: `Swap through ${ZEROEX_SOURCE}${venues}; the output goes to the recipient`,
    items: [{ data: transactionData(context, request.user, call, gas, fees) }],
  })
  return steps
}
