/**
 * The Tron devnet's fixed cast: secp256k1 keys derived from fixed seeds (sha256 of a label), so
 * every run has the same addresses. Test keys only: never fund them anywhere real.
 */
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex } from '@noble/hashes/utils'
import { tronAddressOfKey, tronBase58 } from './codec.js'

/** Tron mainnet's chain id in Pontis (the devnet simulates mainnet's formats). */
export const TRON_DEVNET_CHAIN_ID = 728126428

/** The native currency (TRX) id: base58check of 0x41 followed by 20 zero bytes. */
export const TRON_NATIVE_CURRENCY_ID = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb'

/** TRX has 6 decimals (1 TRX = 1,000,000 sun). */
export const TRON_NATIVE_DECIMALS = 6

/** The simulated USDT-like TRC20 token: mainnet USDT's address, 6 decimals. */
export const TRON_USDT_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

/** Decimals of {@link TRON_USDT_ADDRESS}. */
export const TRON_USDT_DECIMALS = 6

/** One member of the cast. */
export interface TronDevAccount {
  readonly name: string
  /** 0x-hex secp256k1 private key. */
  readonly privateKey: `0x${string}`
  /** Base58check address (`T…`). */
  readonly address: string
  /** 41-prefixed hex address. */
  readonly hexAddress: string
}

function account(name: string): TronDevAccount {
  const key = sha256(new TextEncoder().encode(`pontis tron devnet ${name}`))
  const address = tronAddressOfKey(key)
  return {
    name,
    privateKey: `0x${bytesToHex(key)}`,
    address: tronBase58(address),
    hexAddress: bytesToHex(address),
  }
}

/** Users: funded with TRX and USDT at start. */
export const TRON_USERS = Object.freeze({ alice: account('alice'), bob: account('bob') })
/** The reference solver (pays fills). */
export const TRON_SOLVER = account('solver')
/** The depository vault: deposits pay it; its key is the solver's `allocatorKey` (refunds). */
export const TRON_VAULT = account('vault')
/** An account that is never funded (the node answers `{}` for it). */
export const TRON_EMPTY = account('empty')

/** Start-up balances, smallest units (sun / USDT micro-units). */
export const TRON_FUNDING = Object.freeze({
  userTrx: 10_000_000_000n,
  userUsdt: 10_000_000_000n,
  solverTrx: 100_000_000_000n,
  solverUsdt: 1_000_000_000_000n,
  vaultTrx: 10_000_000_000n,
  vaultUsdt: 100_000_000_000n,
})
