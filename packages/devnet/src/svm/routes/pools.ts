/**
 * The route simulator's fixed market: tokens with reference prices, liquidity sources (labels) with
 * their program ids and per-hop account counts, and the pool graph. Everything is derived from
 * public seeds, so every run and every test sees the same addresses, rates and routes.
 */
import { createHash } from 'node:crypto'
import { PublicKey } from '@solana/web3.js'
import {
  SVM_NATIVE_DECIMALS,
  SVM_ROUTE_TOKENS,
  SVM_STABLECOIN,
  SVM_WRAPPED_NATIVE_MINT,
} from '../accounts.js'

/** A token the simulator routes, with its reference price (what a consistent market would pay). */
export interface RouteToken {
  readonly symbol: string
  /** Base58 mint address. */
  readonly mint: string
  readonly decimals: number
  /** Reference price in USD per whole token, as a decimal string. */
  readonly referenceUsd: string
}

/** A liquidity source: one fake program id, and how many pool accounts each hop through it carries. */
export interface RouteLabel {
  readonly label: string
  /** Deterministic, non-executable address listed by `/program-id-to-label` and carried by every hop. */
  readonly programId: string
  /** Pool accounts per hop (pool state, oracles, tick/bin arrays...), besides vaults, mints and the program id. */
  readonly poolAccounts: number
  readonly description: string
}

/** A pool: two tokens at a fixed rate, a fee, and the deterministic accounts a hop through it carries. */
export interface PoolInfo {
  /** The pool's address (`swapInfo.ammKey`). */
  readonly ammKey: string
  readonly label: string
  readonly programId: string
  /** The two mints (base58), in table order; pools trade both ways. */
  readonly mints: readonly [string, string]
  readonly symbols: readonly [string, string]
  /** Fee on the input, in basis points (rounded up, kept by the pool). */
  readonly feeBps: number
  /** How much better than the reference price the pool pays, in basis points, both ways. */
  readonly priceOffsetBps: number
  /** Extra read-only accounts of each hop (base58), in order. */
  readonly accounts: readonly string[]
}

/** Reference USD prices of the simulator's tokens (decimal strings, per whole token). */
export const SVM_ROUTE_REFERENCE_USD: Readonly<Record<string, string>> = Object.freeze({
  PBONK: '0.00002',
  PJUP: '0.8',
  PRAY: '2.5',
  PORCA: '3.2',
  USDC: '1',
  SOL: '150',
})

function referenceUsd(symbol: string): string {
  const price = SVM_ROUTE_REFERENCE_USD[symbol]
  if (price === undefined) throw new Error(`no reference price for ${symbol}`)
  return price
}

/** Every token in the pool graph: the route tokens, the stablecoin and wrapped SOL. */
export const SVM_ROUTE_GRAPH_TOKENS: readonly RouteToken[] = Object.freeze(
  [
    ...SVM_ROUTE_TOKENS.map((token) => ({
      symbol: token.symbol,
      mint: token.address,
      decimals: token.decimals,
    })),
    { symbol: SVM_STABLECOIN.symbol, mint: SVM_STABLECOIN.address, decimals: SVM_STABLECOIN.decimals },
    { symbol: 'SOL', mint: SVM_WRAPPED_NATIVE_MINT, decimals: SVM_NATIVE_DECIMALS },
  ].map((token) => Object.freeze({ ...token, referenceUsd: referenceUsd(token.symbol) })),
)

/** A deterministic address that nobody holds a key for (sha256 of a public seed). */
export function routeSeedAddress(name: string): PublicKey {
  return new PublicKey(createHash('sha256').update(`pontis-devnet-svm/route/${name}`).digest())
}

const LABEL_TABLE: readonly (readonly [label: string, poolAccounts: number, description: string])[] = [
  ['SimSwap', 1, 'size-conservative swap: one pool-state account per hop, wide fee'],
  ['SimCPMM', 3, 'constant product: pool state, authority, observation'],
  ['SimOracle', 5, 'oracle-priced: pool state, two price oracles, config, fee account'],
  ['SimCLMM', 7, 'concentrated liquidity: pool state, three tick arrays, oracle, bitmap, config'],
  ['SimDLMM', 8, 'liquidity bins: pair state, three bin arrays, bitmap, oracle, event authority, host fee'],
  ['SimBook', 10, 'order book: market, bids, asks, event queue, base/quote vaults, seat, signer, log'],
]

/** The liquidity sources, from the lightest (size-conservative) to the heaviest per hop. */
export const SVM_ROUTE_LABELS: readonly RouteLabel[] = Object.freeze(
  LABEL_TABLE.map(([label, poolAccounts, description]) =>
    Object.freeze({
      label,
      programId: routeSeedAddress(`program/${label}`).toBase58(),
      poolAccounts,
      description,
    }),
  ),
)

/** The size-conservative source: one pool account per hop; it has a direct pool from every route token. */
export const SVM_CONSERVATIVE_LABEL = 'SimSwap'

/**
 * The pool graph as [label, token, token, feeBps, priceOffsetBps]. Heavy sources (CLMM, DLMM, Book)
 * connect every pair of tokens and pay better than the reference price, so the more heavy hops a
 * route takes the more it pays: from each route token to USDC and to SOL the best route has 4 hops,
 * the best 3-hop and 2-hop routes pay a little less, and the conservative SimSwap pools give a
 * direct (and the worst) route. Medium sources (CPMM, Oracle) sit in between. The prices are
 * deliberately not arbitrage-free: this is a route-shape simulator, not a market.
 */
const POOL_TABLE: readonly (readonly [string, string, string, number, number])[] = [
  // Heavy sources between the route tokens.
  ['SimDLMM', 'PBONK', 'PJUP', 3, 13],
  ['SimCLMM', 'PBONK', 'PRAY', 4, 13],
  ['SimBook', 'PBONK', 'PORCA', 2, 11],
  ['SimBook', 'PJUP', 'PRAY', 2, 11],
  ['SimDLMM', 'PJUP', 'PORCA', 3, 13],
  ['SimCLMM', 'PRAY', 'PORCA', 4, 13],
  // Heavy sources into USDC and SOL.
  ['SimCLMM', 'PBONK', 'USDC', 4, 12],
  ['SimDLMM', 'PBONK', 'SOL', 3, 12],
  ['SimBook', 'PJUP', 'USDC', 2, 10],
  ['SimCLMM', 'PJUP', 'SOL', 4, 12],
  ['SimDLMM', 'PRAY', 'USDC', 3, 12],
  ['SimBook', 'PRAY', 'SOL', 2, 10],
  ['SimDLMM', 'PORCA', 'USDC', 3, 12],
  ['SimCLMM', 'PORCA', 'SOL', 4, 12],
  ['SimCLMM', 'SOL', 'USDC', 4, 13],
  // Medium sources.
  ['SimCPMM', 'PBONK', 'PJUP', 25, 25],
  ['SimCPMM', 'PJUP', 'PRAY', 25, 25],
  ['SimCPMM', 'PRAY', 'PORCA', 25, 25],
  ['SimCPMM', 'PORCA', 'PBONK', 25, 25],
  ['SimOracle', 'PBONK', 'USDC', 10, 14],
  ['SimOracle', 'PJUP', 'USDC', 10, 14],
  ['SimOracle', 'PRAY', 'USDC', 10, 14],
  ['SimOracle', 'PORCA', 'USDC', 10, 14],
  ['SimOracle', 'SOL', 'USDC', 10, 14],
  // The size-conservative source: a direct pool from every route token to USDC and to SOL.
  ['SimSwap', 'PBONK', 'USDC', 30, 0],
  ['SimSwap', 'PBONK', 'SOL', 30, 0],
  ['SimSwap', 'PJUP', 'USDC', 30, 0],
  ['SimSwap', 'PJUP', 'SOL', 30, 0],
  ['SimSwap', 'PRAY', 'USDC', 30, 0],
  ['SimSwap', 'PRAY', 'SOL', 30, 0],
  ['SimSwap', 'PORCA', 'USDC', 30, 0],
  ['SimSwap', 'PORCA', 'SOL', 30, 0],
  ['SimSwap', 'SOL', 'USDC', 30, 0],
]

function tokenBySymbol(symbol: string): RouteToken {
  const token = SVM_ROUTE_GRAPH_TOKENS.find((candidate) => candidate.symbol === symbol)
  if (!token) throw new Error(`unknown route token ${symbol}`)
  return token
}

function labelByName(name: string): RouteLabel {
  const label = SVM_ROUTE_LABELS.find((candidate) => candidate.label === name)
  if (!label) throw new Error(`unknown route label ${name}`)
  return label
}

/** Every pool of the simulator, in table order (the order breaks ties between equal routes). */
export const SVM_ROUTE_POOLS: readonly PoolInfo[] = Object.freeze(
  POOL_TABLE.map(([labelName, symbolA, symbolB, feeBps, priceOffsetBps]) => {
    const label = labelByName(labelName)
    const tokenA = tokenBySymbol(symbolA)
    const tokenB = tokenBySymbol(symbolB)
    const seed = `pool/${labelName}/${symbolA}-${symbolB}`
    return Object.freeze({
      ammKey: routeSeedAddress(seed).toBase58(),
      label: labelName,
      programId: label.programId,
      mints: Object.freeze([tokenA.mint, tokenB.mint] as const),
      symbols: Object.freeze([symbolA, symbolB] as const),
      feeBps,
      priceOffsetBps,
      accounts: Object.freeze(
        Array.from({ length: label.poolAccounts }, (_, index) =>
          routeSeedAddress(`${seed}/account/${index}`).toBase58(),
        ),
      ),
    })
  }),
)
