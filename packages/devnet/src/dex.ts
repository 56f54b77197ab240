/**
 * The devnet's market: one Chainlink price feed per priced asset and a real Uniswap v3 deployment,
 * from the released artifacts of the pinned npm packages (no hand-written AMM):
 * - `@uniswap/v3-core` 1.0.1: UniswapV3Factory (its pool init code hash is the one the periphery's
 *   PoolAddress library hard-codes, so periphery contracts find the pools);
 * - `@uniswap/v3-periphery` 1.4.4: SwapRouter, QuoterV2, NonfungiblePositionManager (deployed with the
 *   zero address as token descriptor: it is only read by `tokenURI`, never by minting or swapping);
 * - `@uniswap/v2-periphery` 1.1.0-beta.0: WETH9 (`build/WETH9.json`, the canonical WETH9);
 * - MockV3Aggregator of `@chainlink/contracts` 0.4.2 (compiled here, see contracts/DevnetPriceFeed.sol).
 *
 * Pools, seeded at {@link DEVNET_USD_PRICES} with full-range positions minted through the position
 * manager: WETH/USDC 0.05 % (deep: 1000 WETH + 3,000,000 USDC) and THIN/WETH 0.3 % (thin: 1 WETH +
 * 1500 THIN, so a 0.1 WETH trade moves the price by about 20 %).
 *
 * Address plan (identical on every chain): everything is sent by {@link DEX_DEPLOYER} (#10) from nonce
 * 0, so every address is its CREATE address at a fixed nonce ({@link DEX_NONCES}). The transactions go
 * out one at a time (each mined before the next) with explicit nonces, gas and fees, and only the liquidity waits for the deployer's
 * USDC (minted by the stablecoin's minter in the devnet's funding batch).
 */
import { createRequire } from 'node:module'
import {
  type Abi,
  type Address,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hash,
  type Hex,
  keccak256,
  maxUint256,
  numberToHex,
  type PublicClient,
  parseAbi,
} from 'viem'
import {
  devnetTokenAbi,
  devnetTokenBytecode,
  mockV3AggregatorAbi,
  mockV3AggregatorBytecode,
} from './abis.gen.js'
import { DEX_DEPLOYER } from './accounts.js'
import { minedReceipt } from './receipts.js'

/** The feeds' ABI (Chainlink's MockV3Aggregator: AggregatorV3Interface plus its open setters). */
export { mockV3AggregatorAbi }

/**
 * USD per whole unit of each priced asset, as `configs/prices.local.json` had them statically (a test
 * keeps the two equal): the feeds answer these and the pools are seeded at them.
 */
export const DEVNET_USD_PRICES = {
  eth: '3000',
  usdc: '1',
  sol: '150',
  btc: '60000',
  trx: '0.25',
  usdt: '1',
} as const

/** A priced asset of the devnet, by its currency id in the configs. */
export type DevnetPricedAsset = keyof typeof DEVNET_USD_PRICES

/** The assets with a feed, in deployment order (the order fixes their addresses). */
export const DEVNET_FEED_ASSETS: readonly DevnetPricedAsset[] = ['eth', 'usdc', 'sol', 'btc', 'trx', 'usdt']

/** Decimals of every devnet feed answer (as Chainlink's USD feeds). */
export const DEVNET_FEED_DECIMALS = 8

/** The thin token's USD price (it has no feed; only its pool prices it). */
export const THIN_TOKEN_USD_PRICE = '2'

/** Nonces of {@link DEX_DEPLOYER}: the deployment's address plan. */
export const DEX_NONCES = {
  /** Feeds take nonces 0..5 in {@link DEVNET_FEED_ASSETS} order. */
  firstFeed: 0,
  weth: 6,
  factory: 7,
  swapRouter: 8,
  quoter: 9,
  positionManager: 10,
  thinToken: 11,
} as const

const createAt = (nonce: number): Address =>
  getContractAddress({ from: DEX_DEPLOYER.address, nonce: BigInt(nonce) })

/** The feed contract of each priced asset (same on every devnet chain). */
export const DEVNET_FEEDS: Readonly<Record<DevnetPricedAsset, Address>> = Object.freeze(
  Object.fromEntries(
    DEVNET_FEED_ASSETS.map((asset, index) => [asset, createAt(DEX_NONCES.firstFeed + index)]),
  ) as Record<DevnetPricedAsset, Address>,
)

/** WETH9. */
export const WETH_ADDRESS: Address = createAt(DEX_NONCES.weth)
/** UniswapV3Factory. */
export const UNISWAP_V3_FACTORY_ADDRESS: Address = createAt(DEX_NONCES.factory)
/** SwapRouter (v3 periphery). */
export const UNISWAP_V3_SWAP_ROUTER_ADDRESS: Address = createAt(DEX_NONCES.swapRouter)
/** QuoterV2. */
export const UNISWAP_V3_QUOTER_ADDRESS: Address = createAt(DEX_NONCES.quoter)
/** NonfungiblePositionManager. */
export const UNISWAP_V3_POSITION_MANAGER_ADDRESS: Address = createAt(DEX_NONCES.positionManager)
/** THIN, the thinly traded 18-decimals token. */
export const THIN_TOKEN_ADDRESS: Address = createAt(DEX_NONCES.thinToken)

/** The init code hash of UniswapV3Pool 1.0.1, as the periphery's PoolAddress library has it. */
export const UNISWAP_V3_POOL_INIT_CODE_HASH: Hex =
  '0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54'

/** A pool the devnet seeds. */
export interface DevnetPoolPlan {
  readonly name: string
  readonly tokenA: { address: Address; decimals: number; usd: string }
  readonly tokenB: { address: Address; decimals: number; usd: string }
  readonly fee: number
  readonly tickSpacing: number
  /** Liquidity in whole-unit-free smallest units of A and B. */
  readonly amountA: bigint
  readonly amountB: bigint
}

/** The deployment on one chain, as `startDevnet` reports it. */
export interface DevnetDex {
  readonly weth: Address
  readonly factory: Address
  readonly swapRouter: Address
  readonly quoter: Address
  readonly positionManager: Address
  /** THIN, the thin pool's token (18 decimals, USD 2 at the seeded price). */
  readonly thinToken: Address
  readonly pools: { readonly wethUsdc: Address; readonly thinWeth: Address }
  /** The feed of each priced asset. */
  readonly feeds: Readonly<Record<DevnetPricedAsset, Address>>
}

/** WETH/USDC 0.05 % (deep) and THIN/WETH 0.3 % (thin), given the chain's stablecoin. */
export function devnetPoolPlans(stablecoin: Address): { wethUsdc: DevnetPoolPlan; thinWeth: DevnetPoolPlan } {
  const weth = { address: WETH_ADDRESS, decimals: 18, usd: DEVNET_USD_PRICES.eth }
  return {
    wethUsdc: {
      name: 'WETH/USDC 0.05%',
      tokenA: weth,
      tokenB: { address: stablecoin, decimals: 6, usd: DEVNET_USD_PRICES.usdc },
      fee: 500,
      tickSpacing: 10,
      amountA: 1000n * 10n ** 18n,
      amountB: 3_000_000n * 10n ** 6n,
    },
    thinWeth: {
      name: 'THIN/WETH 0.3%',
      tokenA: { address: THIN_TOKEN_ADDRESS, decimals: 18, usd: THIN_TOKEN_USD_PRICE },
      tokenB: weth,
      fee: 3000,
      tickSpacing: 60,
      amountA: 1500n * 10n ** 18n,
      amountB: 1n * 10n ** 18n,
    },
  }
}

/** USDC the DEX deployer needs for the deep pool (minted in the devnet's funding batch). */
export const DEX_STABLECOIN_FUNDING = 3_000_000n * 10n ** 6n

/** The pool address of a token pair and fee (the factory's CREATE2 rule). */
export function uniswapV3PoolAddress(tokenA: Address, tokenB: Address, fee: number): Address {
  const [token0, token1] = sortTokens(tokenA, tokenB)
  return getContractAddress({
    opcode: 'CREATE2',
    from: UNISWAP_V3_FACTORY_ADDRESS,
    salt: keccak256(
      encodeAbiParameters(
        [{ type: 'address' }, { type: 'address' }, { type: 'uint24' }],
        [token0, token1, fee],
      ),
    ),
    bytecodeHash: UNISWAP_V3_POOL_INIT_CODE_HASH,
  })
}

/** The pair in Uniswap's order (token0 has the lower address). */
export function sortTokens(tokenA: Address, tokenB: Address): [Address, Address] {
  return BigInt(tokenA) < BigInt(tokenB) ? [tokenA, tokenB] : [tokenB, tokenA]
}

/** A decimal string as an integer scaled by 10^18. */
function scaled18(decimal: string): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.')
  return BigInt(whole) * 10n ** 18n + BigInt(fraction.padEnd(18, '0').slice(0, 18))
}

/** Integer square root (floor). */
export function sqrtBigint(value: bigint): bigint {
  if (value < 0n) throw new Error('square root of a negative number')
  if (value < 2n) return value
  let x = BigInt(Math.floor(Math.sqrt(Number(value))))
  // Newton steps from the float estimate, then settle on the floor.
  for (;;) {
    const next = (x + value / x) >> 1n
    if (next >= x - 1n && next <= x + 1n) {
      x = next
      break
    }
    x = next
  }
  while (x * x > value) x -= 1n
  while ((x + 1n) * (x + 1n) <= value) x += 1n
  return x
}

/**
 * `sqrtPriceX96` of a pool between A and B at their USD prices: sqrt(token1 smallest units per token0
 * smallest unit) × 2^96, floored, with token0 the lower address.
 */
export function sqrtPriceX96At(
  tokenA: { address: Address; decimals: number; usd: string },
  tokenB: { address: Address; decimals: number; usd: string },
): bigint {
  const [token0, token1] =
    BigInt(tokenA.address) < BigInt(tokenB.address) ? [tokenA, tokenB] : [tokenB, tokenA]
  // token1 per token0 in smallest units = (usd0 / 10^d0) / (usd1 / 10^d1).
  const numerator = scaled18(token0.usd) * 10n ** BigInt(token1.decimals)
  const denominator = scaled18(token1.usd) * 10n ** BigInt(token0.decimals)
  return sqrtBigint((numerator << 192n) / denominator)
}

/** The widest range a tick spacing allows (TickMath's ±887272 rounded inwards). */
export function fullRangeTicks(tickSpacing: number): { tickLower: number; tickUpper: number } {
  const max = Math.floor(887272 / tickSpacing) * tickSpacing
  return { tickLower: -max, tickUpper: max }
}

interface ReleasedArtifact {
  abi: Abi
  bytecode: Hex
}

const requireArtifact = createRequire(import.meta.url)

/** A compiled contract from its npm package (hardhat artifacts carry `bytecode`, waffle's `evm.bytecode.object`). */
function released(path: string): ReleasedArtifact {
  const file = requireArtifact(path) as {
    abi: Abi
    bytecode?: string
    evm?: { bytecode: { object: string } }
  }
  const raw = file.bytecode ?? file.evm?.bytecode.object ?? ''
  if (raw === '' || raw === '0x') throw new Error(`${path} has no bytecode`)
  return { abi: file.abi, bytecode: (raw.startsWith('0x') ? raw : `0x${raw}`) as Hex }
}

/** The released artifacts, loaded once. */
let releasedArtifacts:
  | {
      weth: ReleasedArtifact
      factory: ReleasedArtifact
      router: ReleasedArtifact
      quoter: ReleasedArtifact
      manager: ReleasedArtifact
    }
  | undefined

function loadReleasedArtifacts() {
  releasedArtifacts ??= {
    weth: released('@uniswap/v2-periphery/build/WETH9.json'),
    factory: released('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json'),
    router: released('@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json'),
    quoter: released('@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json'),
    manager: released(
      '@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json',
    ),
  }
  return releasedArtifacts
}

/** The parts of the Uniswap v3 ABIs the devnet and its tests call. */
export const uniswapV3Abis = {
  positionManager: parseAbi([
    'function createAndInitializePoolIfNecessary(address token0, address token1, uint24 fee, uint160 sqrtPriceX96) payable returns (address pool)',
    'struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper; uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient; uint256 deadline; }',
    'function mint(MintParams params) payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)',
  ]),
  swapRouter: parseAbi([
    'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
    'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
  ]),
  quoterV2: parseAbi([
    'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
    'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
    'struct QuoteExactOutputSingleParams { address tokenIn; address tokenOut; uint256 amount; uint24 fee; uint160 sqrtPriceLimitX96; }',
    'function quoteExactOutputSingle(QuoteExactOutputSingleParams params) returns (uint256 amountIn, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
  ]),
  pool: parseAbi([
    'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)',
    'function token0() view returns (address)',
    'function token1() view returns (address)',
    'function liquidity() view returns (uint128)',
    'function observe(uint32[] secondsAgos) view returns (int56[] tickCumulatives, uint160[] secondsPerLiquidityCumulativeX128s)',
  ]),
  factory: parseAbi([
    'function getPool(address tokenA, address tokenB, uint24 fee) view returns (address pool)',
  ]),
  weth: parseAbi([
    'function deposit() payable',
    'function withdraw(uint256 wad)',
    'function balanceOf(address) view returns (uint256)',
    'function approve(address guy, uint256 wad) returns (bool)',
  ]),
  erc20: parseAbi([
    'function approve(address spender, uint256 value) returns (bool)',
    'function balanceOf(address) view returns (uint256)',
  ]),
} as const

/** Gas limits per transaction: explicit, so nothing is estimated against a state still pending. */
const GAS = {
  feed: 1_500_000n,
  weth: 1_500_000n,
  factory: 7_000_000n,
  router: 4_000_000n,
  quoter: 3_000_000n,
  manager: 7_000_000n,
  token: 1_500_000n,
  call: 200_000n,
  createPool: 6_000_000n,
  mintPosition: 1_000_000n,
} as const

// Fixed fee terms: no fee-history round trip per transaction. The devnet's base fee starts at 1 gwei
// and falls while blocks stay below their gas target.
const MAX_FEE_PER_GAS = 100_000_000_000n

/** What {@link deployDex} needs from the devnet's set-up of a chain. */
export interface DeployDexOptions {
  readonly chainId: number
  readonly client: PublicClient
  readonly stablecoin: Address
  /** Resolves once the deployer holds {@link DEX_STABLECOIN_FUNDING} USDC. */
  readonly stablecoinFunded: Promise<void>
}

/**
 * Deploys the feeds and the Uniswap v3 deployment on one fresh chain and seeds the pools. Sends every
 * transaction without waiting except the liquidity (after `stablecoinFunded`), then checks every receipt
 * and that each contract landed at its planned address.
 *
 * @throws Error naming the transaction that reverted or the contract that landed elsewhere.
 */
export async function deployDex(options: DeployDexOptions): Promise<DevnetDex> {
  const { client, chainId } = options
  const artifacts = loadReleasedArtifacts()
  // #10 is not one of anvil's accounts: give it the ETH for gas and for wrapping into liquidity, and
  // let anvil sign for it (no local signing: start-up time is what every devnet test pays).
  await Promise.all([
    client.request({
      method: 'anvil_setBalance' as never,
      params: [DEX_DEPLOYER.address, numberToHex(10n ** 24n)] as never,
    }),
    client.request({ method: 'anvil_impersonateAccount' as never, params: [DEX_DEPLOYER.address] as never }),
  ])
  const startNonce = await client.getTransactionCount({ address: DEX_DEPLOYER.address })
  if (startNonce !== 0)
    throw new Error(
      `chain ${chainId}: the DEX deployer #10 has nonce ${startNonce}, expected a fresh chain (nonce 0)`,
    )

  // One transaction at a time, each mined before the next is sent.
  const sent: Array<{ what: string; hash: Hash }> = []
  const batch: Array<{ what: string; to?: Address; data: Hex; value?: bigint; gas: bigint }> = []
  const deploy = (what: string, abi: Abi, bytecode: Hex, args: readonly unknown[], gas: bigint) => {
    batch.push({ what, data: encodeDeployData({ abi, bytecode, args } as never), gas })
  }
  const call = (
    what: string,
    request: { address: Address; abi: Abi; functionName: string; args?: readonly unknown[]; value?: bigint },
    gas: bigint,
  ) => {
    const data = encodeFunctionData({
      abi: request.abi,
      functionName: request.functionName,
      args: request.args,
    } as never)
    batch.push({ what, to: request.address, data, gas, ...(request.value ? { value: request.value } : {}) })
  }
  let nonce = 0
  const flush = async () => {
    const pending = batch.splice(0)
    const hashes: Hash[] = []
    for (const tx of pending) {
      const hash: Hash = await client.request({
        method: 'eth_sendTransaction' as never,
        params: [
          {
            from: DEX_DEPLOYER.address,
            nonce: numberToHex(nonce++),
            ...(tx.to ? { to: tx.to } : {}),
            data: tx.data,
            value: numberToHex(tx.value ?? 0n),
            gas: numberToHex(tx.gas),
            maxFeePerGas: numberToHex(MAX_FEE_PER_GAS),
            maxPriorityFeePerGas: '0x1',
          },
        ] as never,
      })
      // Mined before the next is sent: with a core kept busy, sends that overtook each other left
      // one transaction of this deployment pending for good (see receipts.ts).
      await minedReceipt(client, hash)
      hashes.push(hash)
    }
    for (const [index, hash] of hashes.entries()) sent.push({ what: pending[index]?.what ?? '?', hash })
  }

  for (const asset of DEVNET_FEED_ASSETS) {
    const answer = (scaled18(DEVNET_USD_PRICES[asset]) * 10n ** BigInt(DEVNET_FEED_DECIMALS)) / 10n ** 18n
    deploy(
      `${asset}/USD feed`,
      mockV3AggregatorAbi,
      mockV3AggregatorBytecode,
      [DEVNET_FEED_DECIMALS, answer],
      GAS.feed,
    )
  }
  deploy('WETH9', artifacts.weth.abi, artifacts.weth.bytecode, [], GAS.weth)
  deploy('UniswapV3Factory', artifacts.factory.abi, artifacts.factory.bytecode, [], GAS.factory)
  deploy(
    'SwapRouter',
    artifacts.router.abi,
    artifacts.router.bytecode,
    [UNISWAP_V3_FACTORY_ADDRESS, WETH_ADDRESS],
    GAS.router,
  )
  deploy(
    'QuoterV2',
    artifacts.quoter.abi,
    artifacts.quoter.bytecode,
    [UNISWAP_V3_FACTORY_ADDRESS, WETH_ADDRESS],
    GAS.quoter,
  )
  deploy(
    'NonfungiblePositionManager',
    artifacts.manager.abi,
    artifacts.manager.bytecode,
    [UNISWAP_V3_FACTORY_ADDRESS, WETH_ADDRESS, '0x0000000000000000000000000000000000000000'],
    GAS.manager,
  )
  deploy(
    'THIN',
    devnetTokenAbi,
    devnetTokenBytecode,
    ['Pontis Thin Token', 'THIN', 1_000_000n * 10n ** 18n],
    GAS.token,
  )

  const plans = devnetPoolPlans(options.stablecoin)
  const weth = plans.wethUsdc.amountA + plans.thinWeth.amountB
  call(
    'WETH deposit',
    { address: WETH_ADDRESS, abi: uniswapV3Abis.weth, functionName: 'deposit', value: weth },
    GAS.call,
  )
  for (const token of [WETH_ADDRESS, THIN_TOKEN_ADDRESS]) {
    call(
      `approve ${token}`,
      {
        address: token,
        abi: uniswapV3Abis.erc20,
        functionName: 'approve',
        args: [UNISWAP_V3_POSITION_MANAGER_ADDRESS, maxUint256],
      },
      GAS.call,
    )
  }
  for (const plan of [plans.wethUsdc, plans.thinWeth]) {
    const [token0, token1] = sortTokens(plan.tokenA.address, plan.tokenB.address)
    call(
      `create ${plan.name}`,
      {
        address: UNISWAP_V3_POSITION_MANAGER_ADDRESS,
        abi: uniswapV3Abis.positionManager,
        functionName: 'createAndInitializePoolIfNecessary',
        args: [token0, token1, plan.fee, sqrtPriceX96At(plan.tokenA, plan.tokenB)],
      },
      GAS.createPool,
    )
  }
  await flush()
  // The stablecoin's approval too waits: sent before PontisUSD exists it would be a call to an empty
  // account, which succeeds and approves nothing (under interval mining the two can share a block).
  await options.stablecoinFunded
  call(
    'approve USDC',
    {
      address: options.stablecoin,
      abi: uniswapV3Abis.erc20,
      functionName: 'approve',
      args: [UNISWAP_V3_POSITION_MANAGER_ADDRESS, maxUint256],
    },
    GAS.call,
  )
  for (const plan of [plans.wethUsdc, plans.thinWeth]) {
    const aIsToken0 = BigInt(plan.tokenA.address) < BigInt(plan.tokenB.address)
    const { tickLower, tickUpper } = fullRangeTicks(plan.tickSpacing)
    call(
      `liquidity ${plan.name}`,
      {
        address: UNISWAP_V3_POSITION_MANAGER_ADDRESS,
        abi: uniswapV3Abis.positionManager,
        functionName: 'mint',
        args: [
          {
            token0: aIsToken0 ? plan.tokenA.address : plan.tokenB.address,
            token1: aIsToken0 ? plan.tokenB.address : plan.tokenA.address,
            fee: plan.fee,
            tickLower,
            tickUpper,
            amount0Desired: aIsToken0 ? plan.amountA : plan.amountB,
            amount1Desired: aIsToken0 ? plan.amountB : plan.amountA,
            amount0Min: 0n,
            amount1Min: 0n,
            recipient: DEX_DEPLOYER.address,
            deadline: maxUint256,
          },
        ],
      },
      GAS.mintPosition,
    )
  }
  await flush()

  const receipts = await Promise.all(sent.map(({ hash }) => minedReceipt(client, hash)))
  for (const [index, receipt] of receipts.entries()) {
    if (receipt.status !== 'success') {
      throw new Error(`chain ${chainId}: ${sent[index]?.what} (${receipt.transactionHash}) reverted`)
    }
  }
  const planned: Array<[string, number, Address]> = [
    ...DEVNET_FEED_ASSETS.map((asset, index): [string, number, Address] => [
      `${asset}/USD feed`,
      index,
      DEVNET_FEEDS[asset],
    ]),
    ['WETH9', DEX_NONCES.weth, WETH_ADDRESS],
    ['UniswapV3Factory', DEX_NONCES.factory, UNISWAP_V3_FACTORY_ADDRESS],
    ['SwapRouter', DEX_NONCES.swapRouter, UNISWAP_V3_SWAP_ROUTER_ADDRESS],
    ['QuoterV2', DEX_NONCES.quoter, UNISWAP_V3_QUOTER_ADDRESS],
    ['NonfungiblePositionManager', DEX_NONCES.positionManager, UNISWAP_V3_POSITION_MANAGER_ADDRESS],
    ['THIN', DEX_NONCES.thinToken, THIN_TOKEN_ADDRESS],
  ]
  for (const [what, index, expected] of planned) {
    const actual = receipts[index]?.contractAddress
    if (!actual || actual.toLowerCase() !== expected.toLowerCase())
      throw new Error(
        `chain ${chainId}: ${what} deployed at ${actual}, expected ${expected} (account #10 nonce ${index})`,
      )
  }
  return {
    weth: WETH_ADDRESS,
    factory: UNISWAP_V3_FACTORY_ADDRESS,
    swapRouter: UNISWAP_V3_SWAP_ROUTER_ADDRESS,
    quoter: UNISWAP_V3_QUOTER_ADDRESS,
    positionManager: UNISWAP_V3_POSITION_MANAGER_ADDRESS,
    thinToken: THIN_TOKEN_ADDRESS,
    pools: {
      wethUsdc: uniswapV3PoolAddress(WETH_ADDRESS, options.stablecoin, plans.wethUsdc.fee),
      thinWeth: uniswapV3PoolAddress(THIN_TOKEN_ADDRESS, WETH_ADDRESS, plans.thinWeth.fee),
    },
    feeds: DEVNET_FEEDS,
  }
}
