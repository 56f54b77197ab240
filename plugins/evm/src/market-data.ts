/**
 * Price reads from contracts: Chainlink AggregatorV3Interface feeds and Uniswap v3 pools. Reads are
 * not cached here: the service's price layer caches them with its own TTL.
 */
import {
  type MarketDataCapability,
  PontisError,
  type PoolPrice,
  type PriceFeedRound,
} from '@pontis/core/plugin'
import { type Address, getAddress, isAddress, parseAbi } from 'viem'
import type { EvmChainContext } from './quoting.js'
import { rpc } from './rpc.js'

const aggregatorV3Abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
])

const uniswapV3PoolAbi = parseAbi([
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function observe(uint32[] secondsAgos) view returns (int56[] tickCumulatives, uint160[] secondsPerLiquidityCumulativeX128s)',
])

const decimalsAbi = parseAbi(['function decimals() view returns (uint8)'])

const Q192 = 2n ** 192n

function contractAddress(context: EvmChainContext, value: string, what: string): Address {
  if (!isAddress(value, { strict: false }))
    throw new PontisError(
      'PRICE_FETCH_FAILED',
      `${what} ${value} on ${context.label.displayName} is not an address.`,
    )
  return getAddress(value)
}

/** A read that reverts or answers garbage means the address is no feed/pool: a price failure, not an RPC one. */
async function read<T>(context: EvmChainContext, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await rpc(context.label, run)
  } catch (error) {
    if (error instanceof PontisError) throw error
    throw new PontisError(
      'PRICE_FETCH_FAILED',
      `${what} on ${context.label.displayName} did not answer: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      undefined,
      { cause: error },
    )
  }
}

/**
 * 1.0001^tick as an exact ratio of bigints, for a TWAP's mean tick: (numerator, denominator) with
 * 96 bits of fraction, by squaring (the same bit decomposition TickMath uses, computed exactly enough
 * for a price: relative error below 1e-20).
 */
function tickRatio(tick: number): { numerator: bigint; denominator: bigint } {
  const scale = 10n ** 40n
  let result = scale
  let base = (10001n * scale) / 10000n
  let remaining = Math.abs(tick)
  while (remaining > 0) {
    if (remaining & 1) result = (result * base) / scale
    base = (base * base) / scale
    remaining >>= 1
  }
  return tick >= 0 ? { numerator: result, denominator: scale } : { numerator: scale, denominator: result }
}

export function createEvmMarketData(context: EvmChainContext): MarketDataCapability {
  return {
    async readPriceFeed(feedAddress: string): Promise<PriceFeedRound> {
      const feed = contractAddress(context, feedAddress, 'price feed')
      const what = `price feed ${feed}`
      // One block for all three: the age is measured against the block the round was read at.
      const block = await read(context, what, () => context.client.getBlock({ blockTag: 'latest' }))
      const [decimals, round] = await read(context, what, () =>
        Promise.all([
          context.client.readContract({
            address: feed,
            abi: aggregatorV3Abi,
            functionName: 'decimals',
            blockNumber: block.number,
          }),
          context.client.readContract({
            address: feed,
            abi: aggregatorV3Abi,
            functionName: 'latestRoundData',
            blockNumber: block.number,
          }),
        ]),
      )
      const [roundId, answer, , updatedAt, answeredInRound] = round
      return { roundId, answer, decimals, updatedAt, answeredInRound, blockTimestamp: block.timestamp }
    },

    async readPoolPrice(request): Promise<PoolPrice> {
      const pool = contractAddress(context, request.pool, 'pool')
      const base = contractAddress(context, request.base, 'token')
      const what = `pool ${pool}`
      const block = await read(context, what, () => context.client.getBlock({ blockTag: 'latest' }))
      const at = { blockNumber: block.number }
      const [token0, token1, slot0] = await read(context, what, () =>
        Promise.all([
          context.client.readContract({
            address: pool,
            abi: uniswapV3PoolAbi,
            functionName: 'token0',
            ...at,
          }),
          context.client.readContract({
            address: pool,
            abi: uniswapV3PoolAbi,
            functionName: 'token1',
            ...at,
          }),
          context.client.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: 'slot0', ...at }),
        ]),
      )
      const baseIs0 = base === getAddress(token0)
      if (!baseIs0 && base !== getAddress(token1))
        throw new PontisError(
          'PRICE_FETCH_FAILED',
          `${what} on ${context.label.displayName} does not hold ${base}.`,
        )
      const quote = baseIs0 ? getAddress(token1) : getAddress(token0)
      const [baseDecimals, quoteDecimals] = await read(context, what, () =>
        Promise.all([
          context.client.readContract({ address: base, abi: decimalsAbi, functionName: 'decimals' }),
          context.client.readContract({ address: quote, abi: decimalsAbi, functionName: 'decimals' }),
        ]),
      )
      // token1 per token0 in smallest units: sqrtPriceX96² / 2^192, or 1.0001^meanTick over a window.
      let oneForZero: { numerator: bigint; denominator: bigint }
      if (request.twapSeconds !== undefined && request.twapSeconds > 0) {
        const window = request.twapSeconds
        const [tickCumulatives] = await read(context, what, () =>
          context.client.readContract({
            address: pool,
            abi: uniswapV3PoolAbi,
            functionName: 'observe',
            args: [[window, 0]],
            ...at,
          }),
        )
        const [older = 0n, newer = 0n] = tickCumulatives
        const delta = newer - older
        // Round toward negative infinity, as the periphery's OracleLibrary does.
        let meanTick = delta / BigInt(window)
        if (delta < 0n && delta % BigInt(window) !== 0n) meanTick -= 1n
        oneForZero = tickRatio(Number(meanTick))
      } else {
        const sqrtPriceX96 = slot0[0]
        oneForZero = { numerator: sqrtPriceX96 * sqrtPriceX96, denominator: Q192 }
      }
      const ratio = baseIs0
        ? oneForZero
        : { numerator: oneForZero.denominator, denominator: oneForZero.numerator }
      return {
        base,
        quote,
        baseDecimals,
        quoteDecimals,
        numerator: ratio.numerator,
        denominator: ratio.denominator,
        blockTimestamp: block.timestamp,
      }
    },
  }
}
