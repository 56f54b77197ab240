/**
 * Tron identity: base58check addresses with version byte 0x41 (`T…`, 34 characters) are canonical;
 * 41-prefixed hex (42 characters) is accepted and normalised to base58. Base58 is case-sensitive
 * (another case is another checksum, so it is refused). The zero address is the native currency's
 * id (TRX), never an address. Currency ids: that id or a TRC20 contract's address.
 *
 * Encodings (signed protocol messages): an address is its 20 bytes without the 0x41 prefix, as
 * the TVM sees it; TRX is 20 zero bytes. A transaction id is its 32-byte txID.
 */
import {
  type AddressRole,
  type ChainLabel,
  type CurrencyRole,
  type IdentityCapability,
  invalidAddressError,
  invalidCurrencyError,
  isCurrencyRole,
  PontisError,
} from '@pontis/core/plugin'
import { tronAddressBytes, tronBase58, tronHex } from './codec.js'
import { TRON_NATIVE_CURRENCY_ID } from './config.js'

const EXPECTED = 'expected a Tron base58check address (T…, 34 characters) or 41-prefixed hex (42 characters)'

/** Why `address` is no Tron address (a sentence naming the Tron form), or undefined when it is one. */
export function tronAddressProblem(address: unknown): string | undefined {
  if (typeof address !== 'string') return `not a string: ${EXPECTED}`
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return `an EVM 0x address is not a Tron address: ${EXPECTED}`
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address) && !tronAddressBytes(address)) {
    return `bad base58check checksum: ${EXPECTED}`
  }
  const bytes = tronAddressBytes(address)
  if (!bytes) return EXPECTED
  if (bytes.subarray(1).every((byte) => byte === 0)) {
    return `the zero address is the native currency id, not an account: ${EXPECTED}`
  }
  return undefined
}

/** The canonical (base58) form of a valid address, or undefined. */
export function canonicalTronAddress(address: unknown): string | undefined {
  if (tronAddressProblem(address) !== undefined) return undefined
  return tronBase58(tronAddressBytes(address as string) as Uint8Array)
}

/** A txID in canonical form (64 lower-case hex, no 0x), or undefined when it is none. */
export function canonicalTxId(transactionId: unknown): string | undefined {
  if (typeof transactionId !== 'string' || !/^(0x)?[0-9a-fA-F]{64}$/.test(transactionId)) return undefined
  return transactionId.replace(/^0x/, '').toLowerCase()
}

/** The 20 bytes (without 0x41) of a valid address, 0x-hex. */
export function tronAddress20(address: string): `0x${string}` {
  return `0x${tronHex((tronAddressBytes(address) as Uint8Array).subarray(1))}`
}

/** Identity of a Tron chain. */
export function createTronIdentity(chain?: ChainLabel): IdentityCapability {
  const normalizeAddress = (address: string, role: AddressRole): string => {
    const problem = tronAddressProblem(address)
    if (problem !== undefined) throw invalidAddressError(role, address, problem, chain)
    return canonicalTronAddress(address) as string
  }
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    if (currencyId === TRON_NATIVE_CURRENCY_ID) return currencyId
    const problem = tronAddressProblem(currencyId)
    if (problem !== undefined) {
      throw invalidCurrencyError(
        role,
        currencyId,
        `expected TRX (${TRON_NATIVE_CURRENCY_ID}) or a TRC20 contract address (T…): ${problem}`,
        chain,
      )
    }
    return canonicalTronAddress(currencyId) as string
  }
  return {
    nativeCurrencyId: TRON_NATIVE_CURRENCY_ID,
    normalizeAddress,
    isValidAddress: (address: string) => tronAddressProblem(address) === undefined,
    normalizeCurrency,
    encodeAddress(address: string, role: AddressRole | CurrencyRole): `0x${string}` {
      if (isCurrencyRole(role)) {
        const currency = normalizeCurrency(address, role)
        return currency === TRON_NATIVE_CURRENCY_ID ? `0x${'0'.repeat(40)}` : tronAddress20(currency)
      }
      return tronAddress20(normalizeAddress(address, role))
    },
    encodeTransactionId(transactionId: string): `0x${string}` {
      const canonical = canonicalTxId(transactionId)
      if (canonical === undefined) {
        throw new PontisError(
          'INVALID_REQUEST',
          `transaction id '${String(transactionId).slice(0, 80)}' is not a Tron txID: expected 64 hex characters`,
          chain === undefined ? {} : { chainId: chain.id },
        )
      }
      return `0x${canonical}`
    },
  }
}
