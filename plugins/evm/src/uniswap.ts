/**
 * A Uniswap v3 deployment as a swap source: routes over the factory's pools (direct, or through
 * WETH), priced by QuoterV2, executed by SwapRouter `multicall` with `amountOutMinimum` (or
 * `amountInMaximum`) enforced on chain. Native ETH goes in as the call's value (the router wraps
 * it) and comes out through `unwrapWETH9`. Contracts come from the chain record's `contracts`.
 */
import {
  type CostEstimate,
  type DestinationSwap,
  type PayoutFact,
  PontisError,
  type PreparedStep,
  type SwapQuote,
  type SwapQuoteRequest,
  type SwapSource,
  type SwapStepsRequest,
  swapSourceAllowed,
} from '@pontis/core/plugin'
import {
  type Address,
  concat,
  decodeEventLog,
  decodeFunctionData,
  encodeFunctionData,
  encodePacked,
  getAddress,
  type Hex,
  isAddress,
  isAddressEqual,
  type Log,
  parseAbi,
  size,
  zeroAddress,
} from 'viem'
import { erc20Abi, multicallerAbi } from './abi.js'
import {
  type EvmChainContext,
  type FeeTerms,
  feeTerms,
  GAS,
  isNativeCurrency,
  readAllowance,
  simulateGas,
  transactionData,
  withDepositoryWrite,
} from './quoting.js'
import { rpc } from './rpc.js'

/** The name requests filter this source by, and the label of each of its hops. */
export const UNISWAP_V3_SOURCE = 'uniswap-v3'

/** The deployment's contracts, from the chain record's `contracts`. */
export interface UniswapV3Contracts {
  readonly factory: Address
  readonly router: Address
  readonly quoter: Address
  readonly weth: Address
}

const FEE_TIERS = [100, 500, 3000, 10_000] as const
/**
 * Gas limits of a swap that cannot be simulated yet (its approval is not mined): a hop that crosses
 * ticks takes up to about 150k, the router's multicall and unwrap of native output up to 50k more.
 * Unused gas is not charged, so these err high.
 */
const GAS_PER_HOP = 180_000n
const GAS_SWAP_OVERHEAD = 60_000n
const Q192 = 2n ** 192n
const BPS = 10_000n
const ZERO_ID: Hex = `0x${'00'.repeat(32)}`

const decimalsAbi = parseAbi(['function decimals() view returns (uint8)'])
const factoryAbi = parseAbi(['function getPool(address, address, uint24) view returns (address)'])
const poolAbi = parseAbi([
  'function slot0() view returns (uint160 sqrtPriceX96, int24, uint16, uint16, uint16, uint8, bool)',
])
// QuoterV2 answers by reverting inside and returning; an eth_call reads it like a view.
const quoterAbi = parseAbi([
  'function quoteExactInput(bytes path, uint256 amountIn) view returns (uint256 amountOut, uint160[] sqrtPriceX96AfterList, uint32[] initializedTicksCrossedList, uint256 gasEstimate)',
  'function quoteExactOutput(bytes path, uint256 amountOut) view returns (uint256 amountIn, uint160[] sqrtPriceX96AfterList, uint32[] initializedTicksCrossedList, uint256 gasEstimate)',
])
/** The SwapRouter calls the swaps use (reads decode tagged swaps with it). */
export const routerAbi = parseAbi([
  'struct ExactInputParams { bytes path; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; }',
  'struct ExactOutputParams { bytes path; address recipient; uint256 deadline; uint256 amountOut; uint256 amountInMaximum; }',
  'function exactInput(ExactInputParams params) payable returns (uint256 amountOut)',
  'function exactOutput(ExactOutputParams params) payable returns (uint256 amountIn)',
  'function unwrapWETH9(uint256 amountMinimum, address recipient) payable',
  'function refundETH() payable',
  'function multicall(bytes[] data) payable returns (bytes[] results)',
])
const wethAbi = parseAbi(['event Withdrawal(address indexed src, uint256 wad)'])

/** One pool of a path: its tokens in trade order and its fee tier. */
interface Hop {
  readonly tokenIn: Address
  readonly tokenOut: Address
  readonly fee: number
  readonly pool: Address
}

/** The route data this source hands back to itself to build the swap. */
interface UniswapRoute {
  readonly hops: readonly Hop[]
  readonly tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT'
  /** The exact side: input for EXACT_INPUT, output for EXACT_OUTPUT. */
  readonly exactAmount: string
  /** The bound enforced on chain: amountOutMinimum or amountInMaximum. */
  readonly limitAmount: string
  readonly gasEstimate: string
}

/** The Uniswap v3 contracts named in `contracts`, or undefined when the record lacks one. */
export function uniswapV3Contracts(contracts: Readonly<Record<string, unknown>> | undefined) {
  const named = (key: string): Address | undefined => {
    const value = contracts?.[key]
    return typeof value === 'string' && isAddress(value, { strict: false }) ? getAddress(value) : undefined
  }
  const factory = named('uniswapV3Factory')
  const router = named('uniswapV3SwapRouter')
  const quoter = named('uniswapV3QuoterV2')
  const weth = named('weth')
  if (!factory || !router || !quoter || !weth) return undefined
  return { factory, router, quoter, weth } satisfies UniswapV3Contracts
}

/** The deployment as a {@link SwapSource}. */
export function uniswapV3Source(context: EvmChainContext, contracts: UniswapV3Contracts): SwapSource {
  return {
    name: UNISWAP_V3_SOURCE,
    quote: (request) => quoteSwap(context, contracts, request),
    buildSwapSteps: (request) => swapSteps(context, contracts, request),
    estimateSwapCost: (request) => swapCost(context, contracts, request),
  }
}

function noRoute(context: EvmChainContext, why: string): PontisError {
  return new PontisError(
    'NO_SWAP_ROUTES_FOUND',
    `No ${UNISWAP_V3_SOURCE} route on ${context.label.displayName}: ${why}.`,
  )
}

const tokenOf = (context: EvmChainContext, contracts: UniswapV3Contracts, currency: string): Address =>
  isNativeCurrency(context, currency) ? contracts.weth : getAddress(currency)

/** The pool of a pair at a fee tier, or undefined; the factory's answers are cached. */
async function poolOf(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  a: Address,
  b: Address,
  fee: number,
) {
  const pool = await context.cache.read(`uniswap-pool:${a}:${b}:${fee}`, () =>
    rpc(context.label, () =>
      context.client.readContract({
        address: contracts.factory,
        abi: factoryAbi,
        functionName: 'getPool',
        args: [a, b, fee],
      }),
    ),
  )
  return pool === zeroAddress ? undefined : pool
}

/** Every pool between `a` and `b`, one hop each. */
async function hopsBetween(context: EvmChainContext, contracts: UniswapV3Contracts, a: Address, b: Address) {
  const pools = await Promise.all(FEE_TIERS.map((fee) => poolOf(context, contracts, a, b, fee)))
  return FEE_TIERS.flatMap((fee, index): Hop[] => {
    const pool = pools[index]
    return pool ? [{ tokenIn: a, tokenOut: b, fee, pool }] : []
  })
}

/** The candidate paths: every direct pool, and every pair of pools through WETH. */
async function candidatePaths(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  tokenIn: Address,
  tokenOut: Address,
): Promise<Hop[][]> {
  const direct = (await hopsBetween(context, contracts, tokenIn, tokenOut)).map((hop) => [hop])
  if (tokenIn === contracts.weth || tokenOut === contracts.weth) return direct
  const [first, second] = await Promise.all([
    hopsBetween(context, contracts, tokenIn, contracts.weth),
    hopsBetween(context, contracts, contracts.weth, tokenOut),
  ])
  return [...direct, ...first.flatMap((a) => second.map((b) => [a, b]))]
}

/** The path bytes of `hops` (reversed for exact output, as the quoter and router want them). */
function encodePath(hops: readonly Hop[], reverse: boolean): Hex {
  const ordered = reverse
    ? [...hops].reverse().map((hop) => ({ ...hop, tokenIn: hop.tokenOut, tokenOut: hop.tokenIn }))
    : hops
  const types: ('address' | 'uint24')[] = ['address']
  const values: (Address | number)[] = [ordered[0]?.tokenIn as Address]
  for (const hop of ordered) {
    types.push('uint24', 'address')
    values.push(hop.fee, hop.tokenOut)
  }
  return encodePacked(types, values)
}

/**
 * The block pool state is read at: the chain's head, asked again after at most
 * {@link POOL_STATE_BLOCK_MS} (or the chain's read-cache period when shorter). Quotes and prices
 * pinned to it are the same for every read of one quote, and a swap mined since is seen within that
 * time, where a read cached for the whole period would price a pool that has moved.
 */
const POOL_STATE_BLOCK_MS = 250

function poolStateBlock(context: EvmChainContext): Promise<bigint> {
  return context.cache.read(
    'uniswap-block',
    () => rpc(context.label, () => context.client.getBlockNumber({ cacheTime: 0 })),
    POOL_STATE_BLOCK_MS,
  )
}

/** The quoter's answer for one path, or undefined when the path cannot fill the amount. */
async function quotePath(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  hops: readonly Hop[],
  request: SwapQuoteRequest,
): Promise<{ hops: readonly Hop[]; amount: bigint; gas: bigint } | undefined> {
  const exactOut = request.tradeType === 'EXACT_OUTPUT'
  const path = encodePath(hops, exactOut)
  const blockNumber = await poolStateBlock(context)
  // Cached per block: a warm repeat quote asks the quoter nothing, and a swap that moved the pool
  // (a new block) is never quoted from before it.
  const key = `uniswap-quote:${blockNumber}:${exactOut}:${path}:${request.amount}`
  const quoted = await context.cache.read(key, async () => {
    try {
      const [amount, , , gas] = await rpc(context.label, () =>
        context.client.readContract({
          address: contracts.quoter,
          abi: quoterAbi,
          functionName: exactOut ? 'quoteExactOutput' : 'quoteExactInput',
          args: [path, request.amount],
          blockNumber,
        }),
      )
      return { amount, gas }
    } catch (error) {
      if (error instanceof PontisError) throw error
      return null // Not enough liquidity on this path for the amount.
    }
  })
  return quoted ? { hops, ...quoted } : undefined
}

/** `x * 10^decimals`-free mid price of a path: output per input as a ratio, from each pool's slot0. */
async function midPrice(context: EvmChainContext, hops: readonly Hop[]) {
  let numerator = 1n
  let denominator = 1n
  const blockNumber = await poolStateBlock(context)
  for (const hop of hops) {
    const [sqrtPriceX96] = await context.cache.read(`uniswap-slot0:${blockNumber}:${hop.pool}`, () =>
      rpc(context.label, () =>
        context.client.readContract({ address: hop.pool, abi: poolAbi, functionName: 'slot0', blockNumber }),
      ),
    )
    // slot0 prices token1 in token0; token0 is the lower address.
    const price = sqrtPriceX96 * sqrtPriceX96
    const zeroForOne = BigInt(hop.tokenIn) < BigInt(hop.tokenOut)
    numerator *= zeroForOne ? price : Q192
    denominator *= zeroForOne ? Q192 : price
  }
  return { numerator, denominator }
}

/** What the trade loses against the mid prices, bps (fees included), never below 0. */
function impactBps(amountIn: bigint, amountOut: bigint, mid: { numerator: bigint; denominator: bigint }) {
  const atMid = (amountIn * mid.numerator) / mid.denominator
  if (atMid <= 0n || amountOut >= atMid) return 0
  return Number(((atMid - amountOut) * BPS + atMid - 1n) / atMid)
}

async function quoteSwap(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  request: SwapQuoteRequest,
): Promise<SwapQuote> {
  if (!swapSourceAllowed(request.filter, UNISWAP_V3_SOURCE)) throw noRoute(context, 'the request excludes it')
  const tokenIn = tokenOf(context, contracts, request.fromCurrency)
  const tokenOut = tokenOf(context, contracts, request.toCurrency)
  if (tokenIn === tokenOut) throw noRoute(context, 'input and output are the same token')
  const paths = await candidatePaths(context, contracts, tokenIn, tokenOut)
  const quoted = (
    await Promise.all(paths.map((hops) => quotePath(context, contracts, hops, request)))
  ).filter((path) => path !== undefined)
  const exactOut = request.tradeType === 'EXACT_OUTPUT'
  // Exact input: the most output; exact output: the least input.
  const best = quoted.reduce<(typeof quoted)[number] | undefined>(
    (kept, path) =>
      !kept || (exactOut ? path.amount < kept.amount : path.amount > kept.amount) ? path : kept,
    undefined,
  )
  if (!best)
    throw noRoute(context, `no pool trades ${request.fromCurrency} for ${request.toCurrency} at this size`)
  return swapQuote(context, request, best, await tokenDecimals(context, request))
}

async function swapQuote(
  context: EvmChainContext,
  request: SwapQuoteRequest,
  best: { hops: readonly Hop[]; amount: bigint; gas: bigint },
  decimals: { from: number; to: number },
): Promise<SwapQuote> {
  const exactOut = request.tradeType === 'EXACT_OUTPUT'
  const amountIn = exactOut ? best.amount : request.amount
  const amountOut = exactOut ? request.amount : best.amount
  const slippage = BigInt(request.slippageBps)
  // Exact output: the input may grow by the slippage; exact input: the output may shrink by it.
  const limit = exactOut
    ? (amountIn * (BPS + slippage) + BPS - 1n) / BPS
    : (request.minimumAmountOut ?? (amountOut * (BPS - slippage)) / BPS)
  const route: UniswapRoute = {
    hops: best.hops,
    tradeType: request.tradeType,
    exactAmount: request.amount.toString(),
    limitAmount: limit.toString(),
    gasEstimate: best.gas.toString(),
  }
  return {
    source: UNISWAP_V3_SOURCE,
    fromCurrency: request.fromCurrency,
    fromDecimals: decimals.from,
    toCurrency: request.toCurrency,
    toDecimals: decimals.to,
    amountIn: exactOut ? limit : amountIn,
    amountOut,
    minimumAmountOut: exactOut ? amountOut : limit,
    hops: best.hops.length,
    sources: best.hops.map(() => UNISWAP_V3_SOURCE),
    priceImpactBps: impactBps(amountIn, amountOut, await midPrice(context, best.hops)),
    route,
  }
}

/** A currency's decimals (18 for the native currency), read once per cache period. */
export function currencyDecimals(context: EvmChainContext, currency: string): Promise<number> {
  return isNativeCurrency(context, currency)
    ? Promise.resolve(18)
    : context.cache.read(`decimals:${currency}`, () =>
        rpc(context.label, () =>
          context.client.readContract({
            address: currency as Address,
            abi: decimalsAbi,
            functionName: 'decimals',
          }),
        ),
      )
}

async function tokenDecimals(context: EvmChainContext, request: SwapQuoteRequest) {
  const [from, to] = await Promise.all([
    currencyDecimals(context, request.fromCurrency),
    currencyDecimals(context, request.toCurrency),
  ])
  return { from, to }
}

/**
 * What an exact-input trade of another source loses against this deployment's mid prices, bps:
 * measured against the best mid price of every path the deployment has between the two currencies
 * (so the figure errs high), 0 when it has none. Lets another source's quote face the same impact limit.
 */
export async function uniswapReferenceImpact(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  trade: { fromCurrency: string; toCurrency: string; amountIn: bigint; amountOut: bigint },
): Promise<number> {
  const tokenIn = tokenOf(context, contracts, trade.fromCurrency)
  const tokenOut = tokenOf(context, contracts, trade.toCurrency)
  if (tokenIn === tokenOut) return 0
  const paths = await candidatePaths(context, contracts, tokenIn, tokenOut)
  const mids = await Promise.all(paths.map((hops) => midPrice(context, hops)))
  const best = mids.reduce<(typeof mids)[number] | undefined>(
    (kept, mid) =>
      !kept || mid.numerator * kept.denominator > kept.numerator * mid.denominator ? mid : kept,
    undefined,
  )
  return best ? impactBps(trade.amountIn, trade.amountOut, best) : 0
}

/** The router call of a swap: the swap, then the native leg (unwrap the output, or refund unused input). */
function swapCall(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  request: SwapStepsRequest,
): { to: Address; value: bigint; data: Hex } {
  const route = request.quote.route as UniswapRoute
  const nativeIn = isNativeCurrency(context, request.quote.fromCurrency)
  const nativeOut = isNativeCurrency(context, request.quote.toCurrency)
  const recipient = nativeOut ? contracts.router : (request.recipient as Address)
  const deadline = BigInt(request.deadline)
  const exactOut = route.tradeType === 'EXACT_OUTPUT'
  const path = encodePath(route.hops, exactOut)
  const swap = exactOut
    ? encodeFunctionData({
        abi: routerAbi,
        functionName: 'exactOutput',
        args: [
          {
            path,
            recipient,
            deadline,
            amountOut: BigInt(route.exactAmount),
            amountInMaximum: BigInt(route.limitAmount),
          },
        ],
      })
    : encodeFunctionData({
        abi: routerAbi,
        functionName: 'exactInput',
        args: [
          {
            path,
            recipient,
            deadline,
            amountIn: BigInt(route.exactAmount),
            amountOutMinimum: BigInt(route.limitAmount),
          },
        ],
      })
  const calls: Hex[] = [swap]
  if (nativeOut) {
    const args = [request.quote.minimumAmountOut, request.recipient as Address] as const
    calls.push(encodeFunctionData({ abi: routerAbi, functionName: 'unwrapWETH9', args }))
  }
  if (nativeIn && exactOut) calls.push(encodeFunctionData({ abi: routerAbi, functionName: 'refundETH' }))
  const multicall = encodeFunctionData({ abi: routerAbi, functionName: 'multicall', args: [calls] })
  // The request id rides after the arguments (the router's decoder ignores it), so the transaction
  // names its request for whoever reads it (the indexer follows the request's status by it).
  const data = concat([multicall, request.requestId as Hex])
  return { to: contracts.router, value: nativeIn ? request.quote.amountIn : 0n, data }
}

const fallbackSwapGas = (request: SwapStepsRequest): bigint =>
  GAS_PER_HOP * BigInt(request.quote.hops) + GAS_SWAP_OVERHEAD + GAS.orderIdTail

/** Simulated gas of the swap, or the per-hop fallback while the allowance or balance is missing. */
function swapGas(context: EvmChainContext, contracts: UniswapV3Contracts, request: SwapStepsRequest) {
  // Simulated with a zero id and a far deadline, so quotes of the same swap share one cached
  // simulation; the id's calldata is added on top.
  const shape = { ...request, requestId: ZERO_ID, deadline: 2 ** 32 - 1 }
  const call = swapCall(context, contracts, shape)
  const fallback = fallbackSwapGas(request)
  return simulateGas(context, { account: request.user as Address, ...call }, fallback).then((gas) =>
    gas === fallback ? gas : gas + GAS.orderIdTail,
  )
}

async function swapCost(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  request: SwapStepsRequest,
): Promise<CostEstimate> {
  const [gas, fees, approval] = await Promise.all([
    swapGas(context, contracts, request),
    feeTerms(context),
    swapNeedsApproval(context, contracts.router, request),
  ])
  const units = gas + (approval ? GAS.erc20Approve : 0n)
  return {
    currencyId: context.nativeCurrencyId,
    amount: units * fees.maxFeePerGas,
    units,
    unitPrice: fees.maxFeePerGas,
  }
}

/** True when the user's allowance to `spender` does not cover the swap's (ERC-20) input. */
export async function swapNeedsApproval(
  context: EvmChainContext,
  spender: Address,
  request: SwapStepsRequest,
) {
  const { quote } = request
  if (isNativeCurrency(context, quote.fromCurrency)) return false
  const allowance = await readAllowance(context, request.user, spender, quote.fromCurrency)
  return allowance < quote.amountIn
}

async function swapSteps(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  request: SwapStepsRequest,
): Promise<readonly PreparedStep[]> {
  const [fees, approval] = await Promise.all([
    feeTerms(context),
    swapNeedsApproval(context, contracts.router, request),
  ])
  const steps: PreparedStep[] = approval
    ? [swapApproveStep(context, contracts.router, request, fees, ROUTER_APPROVAL)]
    : []
  const gas = approval ? fallbackSwapGas(request) : await swapGas(context, contracts, request)
  const call = swapCall(context, contracts, request)
  steps.push({
    id: 'swap',
    kind: 'transaction',
    action: 'Confirm transaction in your wallet',
    description: `Swap through ${request.quote.sources.join(' > ')}; the output goes to the recipient`,
    items: [{ data: transactionData(context, request.user, call, gas, fees) }],
  })
  return steps
}

/** The user's `approve` of `spender` for the swap's input (`description` says who spends it). */
export function swapApproveStep(
  context: EvmChainContext,
  spender: Address,
  request: SwapStepsRequest,
  fees: FeeTerms,
  description: string,
): PreparedStep {
  const call = {
    to: request.quote.fromCurrency as Address,
    value: 0n,
    data: encodeFunctionData({
      abi: erc20Abi,
      functionName: 'approve',
      args: [spender, request.quote.amountIn],
    }),
  }
  return {
    id: 'approve',
    kind: 'transaction',
    action: 'Approve the swap',
    description,
    items: [{ data: transactionData(context, request.user, call, GAS.erc20Approve, fees) }],
  }
}

const ROUTER_APPROVAL = 'Allow the swap router to take the swap input'

/**
 * The origin swap of a deposit, in one transaction: the router's `exactOutput` pays exactly the
 * deposit amount to the depository (output recipient) and takes at most the quoted input from the
 * user, who keeps the rest (native input: `refundETH` returns it). The request id rides after the
 * router call, so reads attribute the depository's incoming transfer to the request (see reading's
 * `swapDeposit`). An exact-input quote becomes an exact output of its guaranteed minimum: the deposit
 * is then exactly the amount priced, with any surplus left as unspent input. A native deposit buys
 * WETH for the router, whose `unwrapWETH9` then sends exactly the deposit to the depository (which
 * takes plain transfers); reads attribute it by the tag and the router's WETH `Withdrawal`.
 */
export interface DepositSwap {
  /** The router, whose tagged transactions carry such deposits. */
  readonly router: Address
  steps(request: DepositSwapRequest): Promise<readonly PreparedStep[]>
  gas(request: DepositSwapRequest): Promise<bigint>
}

/** One request's swap-and-deposit. */
export interface DepositSwapRequest {
  readonly quote: SwapQuote
  readonly depositor: string
  readonly depository: Address
  /** The deposit: exactly this much of the quote's output currency. */
  readonly amount: bigint
  readonly requestId: string
}

/** The deployment as a deposit's origin swap (see {@link DepositSwap}). */
export function uniswapV3DepositSwap(context: EvmChainContext, contracts: UniswapV3Contracts): DepositSwap {
  const asSwap = (request: DepositSwapRequest): SwapStepsRequest => {
    if (request.quote.source !== UNISWAP_V3_SOURCE) {
      throw new PontisError(
        'NO_SWAP_ROUTES_FOUND',
        `An origin swap on ${context.label.displayName} runs through the ${UNISWAP_V3_SOURCE} router only, not ${request.quote.source}.`,
      )
    }
    const route = request.quote.route as UniswapRoute
    const exactOutput: UniswapRoute = {
      ...route,
      tradeType: 'EXACT_OUTPUT',
      exactAmount: request.amount.toString(),
      limitAmount: request.quote.amountIn.toString(),
    }
    return {
      // Native settlement: the router unwraps exactly the deposit to the depository (its `receive`).
      quote: { ...request.quote, minimumAmountOut: request.amount, route: exactOutput },
      user: request.depositor,
      recipient: request.depository,
      requestId: request.requestId,
      // The deposit's own validity is the quote's; the router only needs a bound.
      deadline: 2 ** 32 - 1,
    }
  }
  /** The swap's simulated gas, plus its write of the depository's balance when it deposits a token. */
  const depositSwapGas = async (swap: SwapStepsRequest) => {
    const fallback = fallbackSwapGas(swap)
    const gas = await swapGas(context, contracts, swap)
    return gas === fallback ? gas : withDepositoryWrite(context, swap.quote.toCurrency, gas)
  }
  return {
    router: contracts.router,
    async gas(request) {
      const swap = asSwap(request)
      const [gas, approval] = await Promise.all([
        depositSwapGas(swap),
        swapNeedsApproval(context, contracts.router, swap),
      ])
      return gas + (approval ? GAS.erc20Approve : 0n)
    },
    async steps(request) {
      const swap = asSwap(request)
      const [fees, approval] = await Promise.all([
        feeTerms(context),
        swapNeedsApproval(context, contracts.router, swap),
      ])
      const gas = approval ? fallbackSwapGas(swap) : await depositSwapGas(swap)
      const call = swapCall(context, contracts, swap)
      const { quote } = request
      return [
        ...(approval ? [swapApproveStep(context, contracts.router, swap, fees, ROUTER_APPROVAL)] : []),
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transaction in your wallet',
          description: `Swap and deposit on ${context.label.displayName} (${quote.hops} hop${quote.hops === 1 ? '' : 's'} via ${quote.sources.join(', ')}), tagged with your request id`,
          items: [{ data: transactionData(context, request.depositor, call, gas, fees) }],
        },
      ]
    },
  }
}

/** One payment of a multicaller fill. */
export interface FillPayment {
  readonly token: Address
  readonly recipient: Address
  readonly amount: bigint
}

/** One call of a multicaller fill (run from its executor). */
export interface FillCall {
  readonly to: Address
  readonly value: bigint
  readonly data: Hex
}

/** A fill's payment turned into a destination swap: what the multicaller pays and calls instead. */
export interface FillSwapPlan {
  readonly payments: readonly FillPayment[]
  readonly calls: readonly FillCall[]
  /** Native value the swap needs from the fill (native inventory goes in as the router call's value). */
  readonly value: bigint
}

/** One fill's destination swap. */
export interface FillSwapRequest {
  readonly swap: DestinationSwap
  /** The solver's payment that goes into the swap: exactly this much of `currencyId`. */
  readonly currencyId: string
  readonly amount: bigint
  readonly recipient: string
  readonly orderId: string
}

/**
 * The deployment as a fill's destination swap, run from the multicaller's executor in the fill
 * transaction: native inventory goes to the router as the call's value; a token is paid to the
 * executor, which approves the router for exactly that amount. The swap is always an exact input of
 * the whole payment (`amountOutMinimum` = the swap's guaranteed output), so nothing stays with the
 * executor or the router; a swap below its minimum reverts the whole fill.
 */
export interface FillSwap {
  readonly router: Address
  plan(request: FillSwapRequest, executor: Address): FillSwapPlan
  /** Gas of the swap part of the fill (the payment to the executor, its approval and the swap). */
  gas(swap: DestinationSwap): bigint
  /**
   * What a successful fill paid its recipient through the swap, read from the receipt's logs: the
   * output token's `Transfer`s to the recipient, or WETH's `Withdrawal` by the router for native output.
   */
  facts(
    calls: readonly { to: Address; data: Hex }[],
    logs: readonly Pick<Log, 'address' | 'data' | 'topics' | 'logIndex'>[],
    orderId: Hex,
  ): PayoutFact[]
}

/** The multicaller's executor, from which fill calls run (immutable, so read once). */
export function multicallerExecutor(context: EvmChainContext, multicaller: Address): Promise<Address> {
  return context.cache.read(
    `multicaller-executor:${multicaller}`,
    () =>
      rpc(context.label, () =>
        context.client.readContract({ address: multicaller, abi: multicallerAbi, functionName: 'executor' }),
      ),
    24 * 60 * 60_000,
  )
}

/** The deployment as a fill's destination swap (see {@link FillSwap}). */
export function uniswapV3FillSwap(context: EvmChainContext, contracts: UniswapV3Contracts): FillSwap {
  return {
    router: contracts.router,
    plan(request, executor) {
      const { swap } = request
      if (swap.quote.source !== UNISWAP_V3_SOURCE) {
        throw new PontisError(
          'NO_SWAP_ROUTES_FOUND',
          `${context.label.displayName} fills swap through ${UNISWAP_V3_SOURCE} only, not ${swap.quote.source}.`,
        )
      }
      if (swap.quote.fromCurrency.toLowerCase() !== request.currencyId.toLowerCase()) {
        throw new PontisError(
          'INVALID_REQUEST',
          `The destination swap takes ${swap.quote.fromCurrency}, not the fill's ${request.currencyId}.`,
        )
      }
      const route = swap.quote.route as UniswapRoute
      const exactInput: UniswapRoute = {
        ...route,
        tradeType: 'EXACT_INPUT',
        exactAmount: request.amount.toString(),
        limitAmount: swap.minimumAmountOut.toString(),
      }
      const call = swapCall(context, contracts, {
        quote: {
          ...swap.quote,
          amountIn: request.amount,
          minimumAmountOut: swap.minimumAmountOut,
          route: exactInput,
        },
        user: executor,
        recipient: request.recipient,
        requestId: request.orderId,
        // The fill is sent when it is signed; the request's own deadline was checked before.
        deadline: 2 ** 32 - 1,
      })
      if (isNativeCurrency(context, request.currencyId))
        return { payments: [], calls: [call], value: call.value }
      const token = getAddress(request.currencyId)
      const approve = encodeFunctionData({
        abi: erc20Abi,
        functionName: 'approve',
        args: [contracts.router, request.amount],
      })
      return {
        payments: [{ token, recipient: executor, amount: request.amount }],
        calls: [{ to: token, value: 0n, data: approve }, call],
        value: 0n,
      }
    },
    gas(swap) {
      const hops = BigInt(swap.quote.hops)
      return GAS.erc20Transfer + GAS.erc20Approve + GAS_PER_HOP * hops + GAS_SWAP_OVERHEAD
    },
    facts(calls, logs, orderId) {
      const facts: PayoutFact[] = []
      for (const call of calls) {
        if (!isAddressEqual(call.to, contracts.router)) continue
        facts.push(...swapOutputFacts(context, contracts, call.data, logs, orderId))
      }
      return facts
    },
  }
}

/** The recipient's payout of one router `multicall`, from the logs (see {@link FillSwap.facts}). */
function swapOutputFacts(
  context: EvmChainContext,
  contracts: UniswapV3Contracts,
  data: Hex,
  logs: readonly Pick<Log, 'address' | 'data' | 'topics' | 'logIndex'>[],
  orderId: Hex,
): PayoutFact[] {
  let inner: readonly Hex[]
  try {
    const decoded = decodeFunctionData({ abi: routerAbi, data })
    if (decoded.functionName !== 'multicall') return []
    inner = decoded.args[0]
  } catch {
    return []
  }
  let swapRecipient: Address | undefined
  let tokenOut: Address | undefined
  let unwrapTo: Address | undefined
  for (const item of inner) {
    try {
      const decoded = decodeFunctionData({ abi: routerAbi, data: item })
      if (decoded.functionName === 'exactInput' || decoded.functionName === 'exactOutput') {
        const { path, recipient } = decoded.args[0]
        swapRecipient = getAddress(recipient)
        // The path's last token (exact input) or first (exact output, reversed).
        tokenOut = getAddress(
          decoded.functionName === 'exactInput' ? `0x${path.slice(-40)}` : `0x${path.slice(2, 42)}`,
        )
      } else if (decoded.functionName === 'unwrapWETH9') {
        unwrapTo = getAddress(decoded.args[1])
      }
    } catch {
      // Not a call this reader knows.
    }
  }
  if (!swapRecipient || !tokenOut) return []
  const facts: PayoutFact[] = []
  if (
    unwrapTo &&
    isAddressEqual(swapRecipient, contracts.router) &&
    isAddressEqual(tokenOut, contracts.weth)
  ) {
    for (const log of logs) {
      if (!isAddressEqual(log.address, contracts.weth) || log.logIndex === null) continue
      try {
        const event = decodeEventLog({ abi: wethAbi, data: log.data, topics: log.topics })
        if (!isAddressEqual(event.args.src, contracts.router)) continue
        facts.push({
          index: log.logIndex,
          orderId,
          recipient: unwrapTo,
          currencyId: context.nativeCurrencyId,
          amount: event.args.wad,
        })
      } catch {
        // Another WETH event.
      }
    }
    return facts
  }
  for (const log of logs) {
    if (!isAddressEqual(log.address, tokenOut) || log.logIndex === null || size(log.data) !== 32) continue
    try {
      const event = decodeEventLog({
        abi: erc20Abi,
        eventName: 'Transfer',
        data: log.data,
        topics: log.topics,
      })
      if (!isAddressEqual(event.args.to, swapRecipient)) continue
      facts.push({
        index: log.logIndex,
        orderId,
        recipient: swapRecipient,
        currencyId: tokenOut,
        amount: event.args.value,
      })
    } catch {
      // Another event of the token.
    }
  }
  return facts
}
