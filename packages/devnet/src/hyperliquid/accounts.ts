/**
 * The Hyperliquid devnet's fixed cast and currencies. Each private key is
 * keccak256(`pontis-devnet-hyperliquid/<name>`): published test keys, never to be used anywhere else.
 */
import { type Hex, keccak256, stringToBytes } from 'viem'
import { privateKeyToAddress } from 'viem/accounts'

/** The chain id this interface gives Hyperliquid core; the devnet uses it too. */
export const HYPERLIQUID_DEVNET_CHAIN_ID = 1337

/** Perps USDC (the clearinghouse's withdrawable USDC): the native currency, 16 zero bytes. */
export const HYPERLIQUID_PERPS_USDC_ID = `0x${'0'.repeat(32)}`
/** Decimals of perps USDC amounts on the wire (`usdSend`). */
export const HYPERLIQUID_PERPS_USDC_DECIMALS = 8

/** A spot token as `spotMeta` lists it. */
export interface HyperliquidSpotToken {
  readonly name: string
  readonly szDecimals: number
  readonly weiDecimals: number
  readonly index: number
  /** 16-byte token id, 0x + 32 lower-case hex digits. */
  readonly tokenId: string
  readonly isCanonical: boolean
}

/** The spot tokens of the devnet: USDC (mainnet's token id) and a HYPE-like token. */
export const HYPERLIQUID_SPOT_TOKENS: readonly HyperliquidSpotToken[] = Object.freeze([
  Object.freeze({
    name: 'USDC',
    szDecimals: 8,
    weiDecimals: 8,
    index: 0,
    tokenId: '0x6d1e7cde53ba9467b783cb7c530ce054',
    isCanonical: true,
  }),
  Object.freeze({
    name: 'HYPE',
    szDecimals: 2,
    weiDecimals: 8,
    index: 150,
    tokenId: '0x0d01dc56dcaaca66ad901c959b4011ec',
    isCanonical: false,
  }),
])

/** Spot USDC's token id. */
export const HYPERLIQUID_SPOT_USDC_ID = '0x6d1e7cde53ba9467b783cb7c530ce054'
/** The HYPE-like spot token's id. */
export const HYPERLIQUID_HYPE_ID = '0x0d01dc56dcaaca66ad901c959b4011ec'

/** A named devnet account: a secp256k1 key and its (lower-case) address. */
export interface HyperliquidDevAccount {
  readonly name: string
  readonly privateKey: Hex
  /** Lower-case 0x address, as Hyperliquid's API writes users. */
  readonly address: `0x${string}`
}

/** The private key of the cast member `name`: keccak256(`pontis-devnet-hyperliquid/<name>`). */
export function hyperliquidDevnetPrivateKey(name: string): Hex {
  return keccak256(stringToBytes(`pontis-devnet-hyperliquid/${name}`))
}

function account(name: string): HyperliquidDevAccount {
  const privateKey = hyperliquidDevnetPrivateKey(name)
  return Object.freeze({
    name,
    privateKey,
    address: privateKeyToAddress(privateKey).toLowerCase() as `0x${string}`,
  })
}

/** Two funded users. */
export const HYPERLIQUID_USERS = Object.freeze({
  alice: account('alice'),
  bob: account('bob'),
})
/** The solver, also the depository: deposits are sends to it; it pays fills and refunds. */
export const HYPERLIQUID_SOLVER = account('solver')
/** An account that holds nothing and does not exist on the venue until it receives something. */
export const HYPERLIQUID_EMPTY = account('empty')

/** Start-up balances (smallest units, 8 decimals everywhere). */
export const HYPERLIQUID_FUNDING = Object.freeze({
  /** Each user: 10,000 perps USDC, 5,000 spot USDC, 100 HYPE. */
  user: Object.freeze({
    [HYPERLIQUID_PERPS_USDC_ID]: 10_000n * 10n ** 8n,
    [HYPERLIQUID_SPOT_USDC_ID]: 5_000n * 10n ** 8n,
    [HYPERLIQUID_HYPE_ID]: 100n * 10n ** 8n,
  }) as Readonly<Record<string, bigint>>,
  /** The solver: 1,000,000 perps USDC, 1,000,000 spot USDC, 10,000 HYPE. */
  solver: Object.freeze({
    [HYPERLIQUID_PERPS_USDC_ID]: 1_000_000n * 10n ** 8n,
    [HYPERLIQUID_SPOT_USDC_ID]: 1_000_000n * 10n ** 8n,
    [HYPERLIQUID_HYPE_ID]: 10_000n * 10n ** 8n,
  }) as Readonly<Record<string, bigint>>,
})
