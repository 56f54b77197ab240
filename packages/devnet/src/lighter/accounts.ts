/**
 * The Lighter devnet's fixed cast: users with an L1 wallet address, account indexes (one of them a
 * sub-account) and a registered API key each; the solver (the venue depository); a known-empty
 * account. API key seeds are derived from fixed labels, so every run has the same keys.
 */
import { sha256 } from '@noble/hashes/sha2'
import { LIGHTER_ROUTE_PERPS, LIGHTER_ROUTE_SPOT, lighterApiPublicKey } from './protocol.js'

/** One exchange account of the cast. */
export interface LighterDevAccount {
  /** A label for logs and tests. */
  readonly name: string
  /** The exchange account index. */
  readonly index: number
  /** The L1 wallet address that owns it (lower-case 0x-hex, 20 bytes). */
  readonly l1Address: `0x${string}`
  /** 0 = main account, 1 = sub-account. */
  readonly accountType: 0 | 1
  /** The registered API key's index. */
  readonly apiKeyIndex: number
  /** The API key's ed25519 seed, 0x-hex (32 bytes): what signs the account's transfers. */
  readonly apiKeySeed: `0x${string}`
  /** The API key's ed25519 public key, 0x-hex. */
  readonly apiPublicKey: `0x${string}`
  /** USDC at start, smallest unit (6 decimals), by route type. */
  readonly startBalances: Readonly<Record<number, bigint>>
}

/** The API key seed of a label: sha256 of `pontis-lighter-devnet-api-key:<label>`, 0x-hex. */
export function lighterDevnetApiKeySeed(label: string): `0x${string}` {
  const digest = sha256(new TextEncoder().encode(`pontis-lighter-devnet-api-key:${label}`))
  return `0x${Buffer.from(digest).toString('hex')}`
}

const USDC = 1_000_000n

function account(
  name: string,
  index: number,
  l1Address: `0x${string}`,
  accountType: 0 | 1,
  apiKeyIndex: number,
  startBalances: Readonly<Record<number, bigint>>,
): LighterDevAccount {
  const apiKeySeed = lighterDevnetApiKeySeed(`${name}:${index}:${apiKeyIndex}`)
  return Object.freeze({
    name,
    index,
    l1Address,
    accountType,
    apiKeyIndex,
    apiKeySeed,
    apiPublicKey: lighterApiPublicKey(apiKeySeed),
    startBalances: Object.freeze({ ...startBalances }),
  })
}

const ALICE_L1 = '0xa11ce00000000000000000000000000000000a11' as const
const BOB_L1 = '0xb0b0000000000000000000000000000000000b0b' as const

/**
 * The users: alice has a main account (10,000 USDC perps, 500 USDC spot) and a sub-account
 * (2,500 USDC perps, its own API key); bob has one account (5,000 USDC perps).
 */
export const LIGHTER_USERS = Object.freeze({
  alice: account('alice', 1001, ALICE_L1, 0, 2, {
    [LIGHTER_ROUTE_PERPS]: 10_000n * USDC,
    [LIGHTER_ROUTE_SPOT]: 500n * USDC,
  }),
  aliceSub: account('alice-sub', 281_474_976_710_001, ALICE_L1, 1, 3, {
    [LIGHTER_ROUTE_PERPS]: 2_500n * USDC,
  }),
  bob: account('bob', 1002, BOB_L1, 0, 2, { [LIGHTER_ROUTE_PERPS]: 5_000n * USDC }),
})

/** The solver's account: the venue depository (deposits are transfers to it; it pays fills and refunds). 1,000,000 USDC perps. */
export const LIGHTER_SOLVER = account('solver', 1000, '0x5017e00000000000000000000000000000005017', 0, 2, {
  [LIGHTER_ROUTE_PERPS]: 1_000_000n * USDC,
})

/** An account that exists and holds nothing (its API key is registered). */
export const LIGHTER_EMPTY = account('empty', 1003, '0xe3e3000000000000000000000000000000000e3e', 0, 2, {})

/** An account index no account has. */
export const LIGHTER_UNKNOWN_ACCOUNT_INDEX = 999_999

/** An L1 wallet address that owns no account. */
export const LIGHTER_UNKNOWN_L1_ADDRESS = '0x0000000000000000000000000000000000c0ffee' as const

/** Every account of the cast, in index order of creation. */
export const LIGHTER_ACCOUNTS: readonly LighterDevAccount[] = Object.freeze([
  LIGHTER_SOLVER,
  LIGHTER_USERS.alice,
  LIGHTER_USERS.aliceSub,
  LIGHTER_USERS.bob,
  LIGHTER_EMPTY,
])
