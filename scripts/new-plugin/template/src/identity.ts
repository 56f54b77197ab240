/**
 * __TITLE__ identity: addresses and currency ids are `__NAME__:` and 40 hexadecimal characters
 * (20 bytes, canonical in lower case), transaction ids are `0x` and 64 hexadecimal characters.
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
import { __CONSTANT___NATIVE_CURRENCY_ID, __CONSTANT___PREFIX } from './config.js'

const ADDRESS = /^__NAME__:([0-9a-fA-F]{40})$/
const TRANSACTION_ID = /^0x[0-9a-fA-F]{64}$/
const ADDRESS_FORM = `expected '${__CONSTANT___PREFIX}' followed by 40 hexadecimal characters`

/** The 20 bytes of an address or currency id (lower-case hex, no prefix), or undefined. */
export function bytesOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  return ADDRESS.exec(value)?.[1]?.toLowerCase()
}

/** The address of 20 bytes given as hex (with or without 0x). */
export function addressOf(hex: string): string {
  return `${__CONSTANT___PREFIX}${hex.replace(/^0x/, '').toLowerCase()}`
}

/** The identity rules of one __TITLE__ chain, with messages that name it. */
export function create__PASCAL__Identity(chain?: ChainLabel): IdentityCapability {
  const normalizeAddress = (address: string, role: AddressRole): string => {
    const bytes = bytesOf(address)
    if (bytes === undefined) throw invalidAddressError(role, address, ADDRESS_FORM, chain)
    return addressOf(bytes)
  }
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    const bytes = bytesOf(currencyId)
    if (bytes === undefined) {
      const form = `${ADDRESS_FORM} (the token id, or ${__CONSTANT___NATIVE_CURRENCY_ID} for the native currency)`
      throw invalidCurrencyError(role, currencyId, form, chain)
    }
    return addressOf(bytes)
  }
  return {
    nativeCurrencyId: __CONSTANT___NATIVE_CURRENCY_ID,
    isValidAddress: (address: string): boolean => bytesOf(address) !== undefined,
    normalizeAddress,
    normalizeCurrency,
    encodeAddress(address: string, role: AddressRole | CurrencyRole): `0x${string}` {
      const normalized = isCurrencyRole(role)
        ? normalizeCurrency(address, role)
        : normalizeAddress(address, role)
      return `0x${normalized.slice(__CONSTANT___PREFIX.length)}`
    },
    encodeTransactionId(transactionId: string): `0x${string}` {
      if (typeof transactionId !== 'string' || !TRANSACTION_ID.test(transactionId)) {
        throw new PontisError(
          'INVALID_REQUEST',
          `'${String(transactionId).slice(0, 100)}' is not a transaction id${chain ? ` of ${chain.displayName}` : ''}: expected 0x followed by 64 hexadecimal characters`,
        )
      }
      return transactionId.toLowerCase() as `0x${string}`
    },
  }
}
