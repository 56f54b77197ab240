/**
 * Identity on the venue: an "address" is an exchange account index (a decimal string without sign
 * or leading zeros, at most {@link LIGHTER_MAX_ACCOUNT_INDEX}); a currency id is a configured
 * decimal asset id (native "0"). Wallet addresses are refused with a message saying how to find
 * the account index.
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
import { LIGHTER_MAX_ACCOUNT_INDEX, LIGHTER_NATIVE_CURRENCY_ID } from './config.js'

const ACCOUNT_INDEX = /^(0|[1-9][0-9]{0,14})$/
const TRANSACTION_HASH = /^(0x)?[0-9a-fA-F]{64}$/

const LOOKUP_HINT =
  'pass the exchange account index (a decimal number such as 1001, not a wallet address); ' +
  'find it by the L1 wallet address with GET /api/v1/accountsByL1Address?l1_address=0x… on the exchange API'

/** Why `value` is not an account index, or undefined when it is one. */
export function accountIndexProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `expected a string; ${LOOKUP_HINT}`
  if (ACCOUNT_INDEX.test(value)) {
    return Number(value) <= LIGHTER_MAX_ACCOUNT_INDEX
      ? undefined
      : `account indexes go up to ${LIGHTER_MAX_ACCOUNT_INDEX}; ${LOOKUP_HINT}`
  }
  if (/^0x[0-9a-fA-F]{40}$/.test(value)) return `a wallet address is not an exchange account; ${LOOKUP_HINT}`
  if (/^0[0-9]+$/.test(value)) return `no leading zeros; ${LOOKUP_HINT}`
  if (/^[-+]/.test(value)) return `no sign; ${LOOKUP_HINT}`
  return LOOKUP_HINT
}

/** The account index as a number. @throws the role's address error when it is not one. */
export function parseAccountIndex(value: string, role: AddressRole, label: ChainLabel): number {
  const problem = accountIndexProblem(value)
  if (problem !== undefined) throw invalidAddressError(role, value, problem, label)
  return Number(value)
}

/** `value` as 32 bytes big-endian, 0x-hex. */
export function uint256Hex(value: number): `0x${string}` {
  return `0x${value.toString(16).padStart(64, '0')}`
}

/** The canonical form of a transaction hash (lower-case, 0x), or undefined when malformed. */
export function canonicalTransactionHash(value: unknown): `0x${string}` | undefined {
  if (typeof value !== 'string' || !TRANSACTION_HASH.test(value)) return undefined
  return `0x${value.replace(/^0x/, '').toLowerCase()}`
}

/** The canonical transaction hash. @throws PontisError INVALID_REQUEST naming the expected form. */
export function requireTransactionHash(value: string, label: ChainLabel): `0x${string}` {
  const hash = canonicalTransactionHash(value)
  if (hash === undefined) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${String(value).slice(0, 100)}' is not a transaction hash on ${label.displayName} (${label.id}): expected 0x and 64 hex digits`,
      { chainId: label.id },
    )
  }
  return hash
}

/** The identity capability for the configured currency ids. */
export function createLighterIdentity(currencyIds: readonly string[], label: ChainLabel): IdentityCapability {
  const currencies = new Set(currencyIds)
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    if (typeof currencyId === 'string' && currencies.has(currencyId)) return currencyId
    throw invalidCurrencyError(
      role,
      currencyId,
      `expected one of the exchange's configured asset ids (${[...currencies].join(', ')}); USDC is "${LIGHTER_NATIVE_CURRENCY_ID}"`,
      label,
    )
  }
  return {
    nativeCurrencyId: LIGHTER_NATIVE_CURRENCY_ID,
    normalizeAddress(address, role) {
      parseAccountIndex(address, role, label)
      return address
    },
    isValidAddress: (address) => accountIndexProblem(address) === undefined,
    normalizeCurrency,
    encodeAddress(address, role) {
      if (isCurrencyRole(role)) return uint256Hex(Number(normalizeCurrency(address, role)))
      return uint256Hex(parseAccountIndex(address, role, label))
    },
    encodeTransactionId: (transactionId) => requireTransactionHash(transactionId, label),
  }
}
