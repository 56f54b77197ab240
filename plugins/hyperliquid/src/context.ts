/**
 * What every Hyperliquid capability shares for one chain: the API client, read caches, the
 * depository (the account deposits are sent to; also the account that pays fills and refunds), the
 * signing settings and the nonce clock; with the asset lookup several capabilities need.
 */
import { type ChainLabel, PontisError, type ReadCache } from '@pontis/core/plugin'
import type { HyperliquidApi, HyperliquidTokenInfo } from './api.js'
import { HYPERLIQUID_NATIVE_CURRENCY_ID, HYPERLIQUID_NATIVE_DECIMALS } from './config.js'

/** Hands out millisecond nonces: at least the time asked for, strictly above the last handed out. */
export class NonceClock {
  #last = 0n

  /** max(nowMs, last + 1), remembered as the new last. */
  next(nowMs: number | bigint): bigint {
    const now = BigInt(nowMs)
    this.#last = now > this.#last ? now : this.#last + 1n
    return this.#last
  }

  /** Remembers `nonce` as used, so later nonces exceed it. */
  use(nonce: bigint): void {
    if (nonce > this.#last) this.#last = nonce
  }

  /** The last nonce handed out or used (0 when none). */
  get last(): bigint {
    return this.#last
  }
}

export interface HyperliquidChainContext {
  readonly label: ChainLabel
  readonly api: HyperliquidApi
  /** Balance reads. */
  readonly cache: ReadCache
  /** The spot token list. */
  readonly metaCache: ReadCache
  /** The depository (lower case); undefined when the chain has none configured. */
  readonly depository: `0x${string}` | undefined
  readonly hyperliquidChain: 'Mainnet' | 'Testnet'
  readonly signatureChainId: string
  /** Deposit nonces handed out by `depositNonceTag`. */
  readonly depositNonces: NonceClock
  /** Per signer (lower case): nonces this adapter signed sends with. */
  readonly signerNonces: Map<string, NonceClock>
  readonly maxScanUpdates: number
}

/** What a currency id stands for on the venue. */
export type HyperliquidAsset =
  | { readonly kind: 'perps'; readonly currencyId: string; readonly decimals: number; readonly name: 'USDC' }
  | {
      readonly kind: 'spot'
      readonly currencyId: string
      readonly decimals: number
      readonly name: string
      readonly index: number
      /** `NAME:0xtokenid`, as `spotSend` names it. */
      readonly token: string
    }

/** The spot tokens, from `spotMeta` (cached). */
export function spotTokens(context: HyperliquidChainContext): Promise<HyperliquidTokenInfo[]> {
  return context.metaCache.read('spot-meta', () => context.api.spotTokens())
}

/**
 * The asset of a canonical currency id: perps USDC, or a listed spot token.
 * @throws PontisError UNSUPPORTED_CURRENCY for a token the venue does not list
 */
export async function assetOf(
  context: HyperliquidChainContext,
  currencyId: string,
): Promise<HyperliquidAsset> {
  if (currencyId === HYPERLIQUID_NATIVE_CURRENCY_ID) {
    return { kind: 'perps', currencyId, decimals: HYPERLIQUID_NATIVE_DECIMALS, name: 'USDC' }
  }
  const token = (await spotTokens(context)).find((candidate) => candidate.tokenId === currencyId)
  if (!token) {
    throw new PontisError(
      'UNSUPPORTED_CURRENCY',
      `${currencyId} is not a spot token listed on ${context.label.displayName} (${context.label.id}).`,
      { chainId: context.label.id, currency: currencyId },
    )
  }
  return {
    kind: 'spot',
    currencyId,
    decimals: token.weiDecimals,
    name: token.name,
    index: token.index,
    token: `${token.name}:${token.tokenId}`,
  }
}

/** The depository, or a clear error when the chain has none configured. */
export function depositoryOf(context: HyperliquidChainContext): `0x${string}` {
  if (!context.depository) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${context.label.displayName} (${context.label.id}) has no depository configured (protocol.v2.depository).`,
      { chainId: context.label.id },
    )
  }
  return context.depository
}

/** The nonce clock of `signer` (lower case). */
export function signerClock(context: HyperliquidChainContext, signer: string): NonceClock {
  let clock = context.signerNonces.get(signer)
  if (!clock) {
    clock = new NonceClock()
    context.signerNonces.set(signer, clock)
  }
  return clock
}
