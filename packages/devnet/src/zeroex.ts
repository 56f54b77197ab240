/**
 * A local stand-in for the 0x Swap API v2 (`GET /swap/allowance-holder/quote`), in the public shape
 * (request parameters, `0x-version: v2` and `0x-api-key` headers, the quote body and the 400 error
 * body), whose answers are priced by the devnet's real Uniswap v3 deployment (QuoterV2) and whose
 * `transaction` is a SwapRouter `multicall` that really executes through the devnet pools. The
 * allowance target is the SwapRouter itself (the AllowanceHolder flow: the contract called is the
 * contract approved).
 *
 * What it checks as the real API does: required parameters, addresses, the chain id, that both tokens
 * exist on the chain, the sell amount and slippage; anything else answers 400 with
 * `{ name: 'INPUT_INVALID' | 'TOKEN_NOT_SUPPORTED', message, data: { zid, details: [{ field, reason }] } }`.
 * A pair with no pool (or not enough liquidity) answers 200 `{ liquidityAvailable: false, zid }`.
 * Only `sellAmount` (exact input) is priced; `buyAmount` is refused as unsupported.
 *
 * Tests can make it misbehave (`fault`): `garbage` answers 200 with a body that is not a quote,
 * `error` answers 500.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import {
  type Address,
  createPublicClient,
  encodeFunctionData,
  encodePacked,
  getAddress,
  type Hex,
  http,
  isAddress,
  type PublicClient,
  parseAbi,
  zeroAddress,
} from 'viem'
import {
  UNISWAP_V3_FACTORY_ADDRESS,
  UNISWAP_V3_QUOTER_ADDRESS,
  UNISWAP_V3_SWAP_ROUTER_ADDRESS,
  WETH_ADDRESS,
} from './dex.js'
import { type ListeningServer, listenOn } from './simulator-http.js'

/** The token address the 0x API uses for a chain's native currency. */
export const ZEROEX_NATIVE_TOKEN: Address = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'

/** The path of the quote endpoint the simulator serves. */
export const ZEROEX_QUOTE_PATH = '/swap/allowance-holder/quote'

/** How the simulator misbehaves, for tests of a source that must survive it. */
export type ZeroExFault = 'none' | 'garbage' | 'error'

/** One EVM chain the simulator quotes on (the devnet DEX is at the same addresses on every chain). */
export interface ZeroExSimulatorChain {
  readonly chainId: number
  readonly rpcUrl: string
}

export interface ZeroExSimulatorOptions {
  readonly chains: readonly ZeroExSimulatorChain[]
  /** When set, requests must carry it in `0x-api-key` (401 otherwise). */
  readonly apiKey?: string
  readonly host?: string
  /** 0 or omitted picks a free port. */
  readonly port?: number
  readonly log?: (message: string) => void
}

/** One request the simulator answered (without the key's value: only whether it matched). */
export interface ZeroExRequestRecord {
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly status: number
  readonly apiKeyPresented: boolean
}

export interface ZeroExSimulator {
  readonly url: string
  readonly port: number
  /** The key it requires, when started with one (a devnet secret, for the services' environment). */
  readonly apiKey?: string
  /** Every request answered so far, in order. */
  readonly requests: readonly ZeroExRequestRecord[]
  /** Makes every following answer misbehave (or behave again with `none`). */
  setFault(fault: ZeroExFault): void
  stop(): Promise<void>
}

const FEE_TIERS = [100, 500, 3000, 10_000] as const
const DEFAULT_SLIPPAGE_BPS = 100
const BPS = 10_000n
/** How long the router call stays valid, seconds (the real API's transactions carry no deadline). */
const DEADLINE_SECONDS = 3600n
const GAS_PER_HOP = 180_000n
const GAS_OVERHEAD = 60_000n

const erc20Abi = parseAbi([
  'function symbol() view returns (string)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
])
const factoryAbi = parseAbi(['function getPool(address, address, uint24) view returns (address)'])
const quoterAbi = parseAbi([
  'function quoteExactInput(bytes path, uint256 amountIn) returns (uint256 amountOut, uint160[] sqrtPriceX96AfterList, uint32[] initializedTicksCrossedList, uint256 gasEstimate)',
])
const routerAbi = parseAbi([
  'struct ExactInputParams { bytes path; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; }',
  'function exactInput(ExactInputParams params) payable returns (uint256 amountOut)',
  'function unwrapWETH9(uint256 amountMinimum, address recipient) payable',
  'function multicall(bytes[] data) payable returns (bytes[] results)',
])

interface Hop {
  readonly tokenIn: Address
  readonly tokenOut: Address
  readonly fee: number
}

interface ValidationDetail {
  readonly field: string
  readonly reason: string
}

/** A 4xx answer in the API's error shape. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorName: string,
    message: string,
    readonly details: readonly ValidationDetail[] = [],
  ) {
    super(message)
  }
}

const isNative = (token: string) => token.toLowerCase() === ZEROEX_NATIVE_TOKEN.toLowerCase()

/** Starts the simulator; stop it with {@link ZeroExSimulator.stop}. */
export async function startZeroExSimulator(options: ZeroExSimulatorOptions): Promise<ZeroExSimulator> {
  const clients = new Map<number, PublicClient>(
    options.chains.map((chain) => [
      chain.chainId,
      createPublicClient({ transport: http(chain.rpcUrl) }) as PublicClient,
    ]),
  )
  const requests: ZeroExRequestRecord[] = []
  let fault: ZeroExFault = 'none'

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://simulator')
    const query = Object.fromEntries(url.searchParams.entries())
    const presented = request.headers['0x-api-key']
    const apiKeyPresented = typeof presented === 'string' && presented.length > 0
    const zid = `0x${randomBytes(12).toString('hex')}`
    const send = (status: number, body: unknown, raw?: string) => {
      requests.push({ path: url.pathname, query, status, apiKeyPresented })
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(raw ?? JSON.stringify(body))
    }
    try {
      if (request.method !== 'GET' || url.pathname !== ZEROEX_QUOTE_PATH) {
        throw new ApiError(404, 'NOT_FOUND', `No route ${request.method} ${url.pathname}`)
      }
      if (options.apiKey !== undefined && presented !== options.apiKey) {
        throw new ApiError(401, 'UNAUTHORIZED', 'Invalid or missing 0x-api-key header')
      }
      if (fault === 'error') return send(500, { name: 'INTERNAL_SERVER_ERROR', message: 'Simulated outage' })
      if (fault === 'garbage') return send(200, undefined, '{"liquidityAvailable":true,"buyAmount":')
      const body = await quote(clients, request, url.searchParams, zid)
      send(200, body)
    } catch (error) {
      if (error instanceof ApiError) {
        const data = error.status === 400 ? { zid, details: error.details } : { zid }
        send(error.status, { name: error.errorName, message: error.message, data })
      } else {
        options.log?.(`0x simulator: ${error instanceof Error ? error.message : String(error)}`)
        send(500, { name: 'INTERNAL_SERVER_ERROR', message: 'An unexpected error occurred', data: { zid } })
      }
    }
  }
  const server = createServer((request, response) => {
    void handle(request, response)
  })
  const listening: ListeningServer = await listenOn(server, options.host ?? '127.0.0.1', options.port ?? 0)
  const url = `http://${options.host ?? '127.0.0.1'}:${listening.port}`
  options.log?.(
    `0x Swap API v2 simulator on ${url} (chains ${options.chains.map((c) => c.chainId).join(', ')})`,
  )
  return {
    url,
    port: listening.port,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    requests,
    setFault(next) {
      fault = next
    },
    stop: () => listening.close(),
  }
}

/** The query's parameters, checked as the API checks them (every problem listed in one 400). */
function readParameters(headers: IncomingMessage['headers'], query: URLSearchParams) {
  const details: ValidationDetail[] = []
  if (headers['0x-version'] !== 'v2') details.push({ field: '0x-version', reason: "Header must be 'v2'" })
  const required = (field: string): string | undefined => {
    const value = query.get(field)
    if (value === null || value === '') details.push({ field, reason: `${field} is required` })
    return value ?? undefined
  }
  const address = (field: string, value: string | undefined): Address | undefined => {
    if (value === undefined) return undefined
    if (!isAddress(value, { strict: false })) {
      details.push({ field, reason: 'Invalid ethereum address' })
      return undefined
    }
    return getAddress(value)
  }
  const chainText = required('chainId')
  const chainId =
    chainText !== undefined && /^[1-9][0-9]{0,9}$/.test(chainText) ? Number(chainText) : undefined
  if (chainText !== undefined && chainId === undefined)
    details.push({ field: 'chainId', reason: 'Must be a positive integer' })
  const sellToken = address('sellToken', required('sellToken'))
  const buyToken = address('buyToken', required('buyToken'))
  const taker = address('taker', required('taker'))
  const recipientText = query.get('recipient')
  const recipient = recipientText ? address('recipient', recipientText) : undefined
  if (query.get('buyAmount') !== null) {
    details.push({ field: 'buyAmount', reason: 'Not supported by this endpoint; quote with sellAmount' })
  }
  const sellText = required('sellAmount')
  let sellAmount: bigint | undefined
  if (sellText !== undefined) {
    if (/^[0-9]{1,78}$/.test(sellText) && BigInt(sellText) > 0n) sellAmount = BigInt(sellText)
    else details.push({ field: 'sellAmount', reason: 'Must be a positive integer in base units' })
  }
  const slippageText = query.get('slippageBps')
  let slippageBps = DEFAULT_SLIPPAGE_BPS
  if (slippageText !== null) {
    if (/^[0-9]{1,5}$/.test(slippageText) && Number(slippageText) <= 10_000)
      slippageBps = Number(slippageText)
    else details.push({ field: 'slippageBps', reason: 'Must be an integer between 0 and 10000' })
  }
  if (sellToken && buyToken && sellToken === buyToken)
    details.push({ field: 'buyToken', reason: 'buyToken must differ from sellToken' })
  if (details.length > 0 || chainId === undefined || !sellToken || !buyToken || !taker || !sellAmount) {
    throw new ApiError(400, 'INPUT_INVALID', 'The input is invalid', details)
  }
  return { chainId, sellToken, buyToken, taker, recipient: recipient ?? taker, sellAmount, slippageBps }
}

async function quote(
  clients: ReadonlyMap<number, PublicClient>,
  request: IncomingMessage,
  query: URLSearchParams,
  zid: string,
) {
  const params = readParameters(request.headers, query)
  const client = clients.get(params.chainId)
  if (!client) {
    throw new ApiError(400, 'INPUT_INVALID', 'The input is invalid', [
      { field: 'chainId', reason: `Chain ${params.chainId} is not supported` },
    ])
  }
  const tokenIn = isNative(params.sellToken) ? WETH_ADDRESS : params.sellToken
  const tokenOut = isNative(params.buyToken) ? WETH_ADDRESS : params.buyToken
  const [symbolIn, symbolOut] = await Promise.all([
    tokenSymbol(client, params.sellToken, 'sellToken'),
    tokenSymbol(client, params.buyToken, 'buyToken'),
  ])
  if (tokenIn === tokenOut) {
    // ETH <-> WETH is a wrap, which this simulator does not route.
    return { liquidityAvailable: false, zid }
  }
  const best = await bestPath(client, tokenIn, tokenOut, params.sellAmount)
  if (!best) return { liquidityAvailable: false, zid }
  const minBuyAmount = (best.amountOut * (BPS - BigInt(params.slippageBps))) / BPS
  const [block, gasPrice] = await Promise.all([client.getBlock(), client.getGasPrice()])
  const nativeOut = isNative(params.buyToken)
  const path = encodePacked(
    ['address', ...best.hops.flatMap(() => ['uint24', 'address'] as const)],
    [tokenIn, ...best.hops.flatMap((hop) => [hop.fee, hop.tokenOut] as const)],
  )
  const calls: Hex[] = [
    encodeFunctionData({
      abi: routerAbi,
      functionName: 'exactInput',
      args: [
        {
          path,
          recipient: nativeOut ? UNISWAP_V3_SWAP_ROUTER_ADDRESS : params.recipient,
          deadline: block.timestamp + DEADLINE_SECONDS,
          amountIn: params.sellAmount,
          amountOutMinimum: minBuyAmount,
        },
      ],
    }),
  ]
  if (nativeOut) {
    calls.push(
      encodeFunctionData({
        abi: routerAbi,
        functionName: 'unwrapWETH9',
        args: [minBuyAmount, params.recipient],
      }),
    )
  }
  const data = encodeFunctionData({ abi: routerAbi, functionName: 'multicall', args: [calls] })
  const value = isNative(params.sellToken) ? params.sellAmount : 0n
  const [allowance, balance] = await Promise.all([
    isNative(params.sellToken)
      ? undefined
      : client.readContract({
          address: params.sellToken,
          abi: erc20Abi,
          functionName: 'allowance',
          args: [params.taker, UNISWAP_V3_SWAP_ROUTER_ADDRESS],
        }),
    isNative(params.sellToken)
      ? client.getBalance({ address: params.taker })
      : client.readContract({
          address: params.sellToken,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [params.taker],
        }),
  ])
  const ready = (allowance === undefined || allowance >= params.sellAmount) && balance >= params.sellAmount
  const fallbackGas = GAS_PER_HOP * BigInt(best.hops.length) + GAS_OVERHEAD
  let gas = fallbackGas
  if (ready) {
    try {
      const estimated = await client.estimateGas({
        account: params.taker,
        to: UNISWAP_V3_SWAP_ROUTER_ADDRESS,
        data,
        value,
      })
      gas = (estimated * 12n) / 10n
    } catch {
      // Not simulatable from the taker right now: keep the per-hop figure.
    }
  }
  const fills = best.hops.map((hop) => ({
    from: hop.tokenIn === WETH_ADDRESS && isNative(params.sellToken) ? ZEROEX_NATIVE_TOKEN : hop.tokenIn,
    to: hop.tokenOut === WETH_ADDRESS && nativeOut ? ZEROEX_NATIVE_TOKEN : hop.tokenOut,
    source: 'Uniswap_V3',
    proportionBps: '10000',
  }))
  const tokens = [
    { address: params.sellToken, symbol: symbolIn },
    ...best.hops.slice(0, -1).map((hop) => ({ address: hop.tokenOut, symbol: 'WETH' })),
    { address: params.buyToken, symbol: symbolOut },
  ]
  return {
    allowanceTarget: isNative(params.sellToken) ? null : UNISWAP_V3_SWAP_ROUTER_ADDRESS,
    blockNumber: block.number.toString(),
    buyAmount: best.amountOut.toString(),
    buyToken: params.buyToken,
    fees: { integratorFee: null, zeroExFee: null, gasFee: null },
    issues: {
      allowance:
        allowance !== undefined && allowance < params.sellAmount
          ? { actual: allowance.toString(), spender: UNISWAP_V3_SWAP_ROUTER_ADDRESS }
          : null,
      balance:
        balance < params.sellAmount
          ? { token: params.sellToken, actual: balance.toString(), expected: params.sellAmount.toString() }
          : null,
      simulationIncomplete: !ready,
      invalidSourcesPassed: [],
    },
    liquidityAvailable: true,
    minBuyAmount: minBuyAmount.toString(),
    route: { fills, tokens },
    sellAmount: params.sellAmount.toString(),
    sellToken: params.sellToken,
    tokenMetadata: {
      buyToken: { buyTaxBps: '0', sellTaxBps: '0' },
      sellToken: { buyTaxBps: '0', sellTaxBps: '0' },
    },
    totalNetworkFee: (gas * gasPrice).toString(),
    transaction: {
      to: UNISWAP_V3_SWAP_ROUTER_ADDRESS,
      data,
      gas: gas.toString(),
      gasPrice: gasPrice.toString(),
      value: value.toString(),
    },
    zid,
  }
}

/** The token's symbol; a token with no code on the chain is not supported (400 TOKEN_NOT_SUPPORTED). */
async function tokenSymbol(client: PublicClient, token: Address, field: string): Promise<string> {
  if (isNative(token)) return 'ETH'
  const code = await client.getCode({ address: token })
  if (!code || code === '0x') {
    throw new ApiError(400, 'TOKEN_NOT_SUPPORTED', `Token ${token} is not supported`, [
      { field, reason: 'Token is not supported on this chain' },
    ])
  }
  try {
    return await client.readContract({ address: token, abi: erc20Abi, functionName: 'symbol' })
  } catch {
    return 'UNKNOWN'
  }
}

async function poolsBetween(client: PublicClient, a: Address, b: Address): Promise<Hop[]> {
  const pools = await Promise.all(
    FEE_TIERS.map((fee) =>
      client.readContract({
        address: UNISWAP_V3_FACTORY_ADDRESS,
        abi: factoryAbi,
        functionName: 'getPool',
        args: [a, b, fee],
      }),
    ),
  )
  return FEE_TIERS.flatMap((fee, index) =>
    pools[index] === zeroAddress ? [] : [{ tokenIn: a, tokenOut: b, fee }],
  )
}

/** The path with the most output for `amountIn`: every direct pool, and every two-pool path through WETH. */
async function bestPath(client: PublicClient, tokenIn: Address, tokenOut: Address, amountIn: bigint) {
  const direct = (await poolsBetween(client, tokenIn, tokenOut)).map((hop) => [hop])
  let paths: Hop[][] = direct
  if (tokenIn !== WETH_ADDRESS && tokenOut !== WETH_ADDRESS) {
    const [first, second] = await Promise.all([
      poolsBetween(client, tokenIn, WETH_ADDRESS),
      poolsBetween(client, WETH_ADDRESS, tokenOut),
    ])
    paths = [...direct, ...first.flatMap((a) => second.map((b) => [a, b]))]
  }
  const quoted = await Promise.all(
    paths.map(async (hops) => {
      const path = encodePacked(
        ['address', ...hops.flatMap(() => ['uint24', 'address'] as const)],
        [tokenIn, ...hops.flatMap((hop) => [hop.fee, hop.tokenOut] as const)],
      )
      try {
        const { result } = await client.simulateContract({
          address: UNISWAP_V3_QUOTER_ADDRESS,
          abi: quoterAbi,
          functionName: 'quoteExactInput',
          args: [path, amountIn],
        })
        return { hops, amountOut: result[0] }
      } catch {
        return undefined // not enough liquidity on this path
      }
    }),
  )
  return quoted.reduce<{ hops: Hop[]; amountOut: bigint } | undefined>(
    (best, path) => (path && path.amountOut > 0n && (!best || path.amountOut > best.amountOut) ? path : best),
    undefined,
  )
}
