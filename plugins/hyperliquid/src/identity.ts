/**
 * Hyperliquid identity. Addresses are EVM-style (0x + 40 hex digits, any case accepted, lower case
 * canonical, as Hyperliquid's API writes users). Currency ids are 16-byte token ids (0x + 32 hex
 * digits, lower case canonical); perps USDC, the native currency, is all zeros. Encodings: an
 * address is its 20 bytes, a currency id its 16 bytes, a transaction id its 32-byte hash.
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
import { type Hex, verifyMessage } from 'viem'
import { HYPERLIQUID_NATIVE_CURRENCY_ID } from './config.js'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const TOKEN_ID = /^0x[0-9a-fA-F]{32}$/
const HASH = /^0x[0-9a-fA-F]{64}$/

/** Why `value` is not a Hyperliquid address, or undefined when it is one. */
export function addressProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'expected a string'
  if (ADDRESS.test(value)) return undefined
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value)) {
    return 'this looks like a Tron address; Hyperliquid addresses are 0x followed by 40 hexadecimal digits'
  }
  if (TOKEN_ID.test(value)) {
    return 'this is 16 bytes (a Hyperliquid token id?); addresses are 0x followed by 40 hexadecimal digits'
  }
  return 'expected 0x followed by 40 hexadecimal digits'
}

/** The canonical (lower-case) address, or undefined. */
export function canonicalAddress(value: unknown): `0x${string}` | undefined {
  return addressProblem(value) === undefined ? ((value as string).toLowerCase() as `0x${string}`) : undefined
}

/** The canonical (lower-case) token id, or undefined. */
export function canonicalCurrency(value: unknown): string | undefined {
  return typeof value === 'string' && TOKEN_ID.test(value) ? value.toLowerCase() : undefined
}

/**
 * `transactionId` as a canonical hash (0x + 64 lower-case hex digits).
 * @throws PontisError INVALID_REQUEST naming the expected form
 */
export function requireHash(transactionId: unknown, chain?: ChainLabel): `0x${string}` {
  if (typeof transactionId !== 'string' || !HASH.test(transactionId)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${String(transactionId).slice(0, 100)}' is not a transaction id${chain ? ` of ${chain.displayName}` : ''}: expected a 32-byte hash, 0x followed by 64 hexadecimal digits`,
    )
  }
  return transactionId.toLowerCase() as `0x${string}`
}

/**
 * The canonical form of `address`.
 * @throws PontisError INVALID_RECIPIENT / INVALID_ADDRESS by role
 */
export function requireAddress(address: string, role: AddressRole, chain?: ChainLabel): `0x${string}` {
  const problem = addressProblem(address)
  if (problem !== undefined) throw invalidAddressError(role, address, problem, chain)
  return address.toLowerCase() as `0x${string}`
}

/**
 * The canonical form of a currency id.
 * @throws PontisError per currency role
 */
export function requireCurrency(
  currencyId: string,
  role: CurrencyRole = 'currency',
  chain?: ChainLabel,
): string {
  const canonical = canonicalCurrency(currencyId)
  if (canonical !== undefined) return canonical
  const reason =
    typeof currencyId === 'string' && ADDRESS.test(currencyId)
      ? `this is a 20-byte EVM address; Hyperliquid token ids are 16 bytes (0x followed by 32 hexadecimal digits; perps USDC is ${HYPERLIQUID_NATIVE_CURRENCY_ID})`
      : `Hyperliquid token ids are 16 bytes: 0x followed by 32 hexadecimal digits (perps USDC is ${HYPERLIQUID_NATIVE_CURRENCY_ID})`
  throw invalidCurrencyError(role, currencyId, reason, chain)
}

/** The identity rules of one Hyperliquid chain, with messages that name it. */
export function createHyperliquidIdentity(chain?: ChainLabel): IdentityCapability {
  return {
    nativeCurrencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
    isValidAddress: (address: string): boolean => addressProblem(address) === undefined,
    normalizeAddress: (address: string, role: AddressRole): string => requireAddress(address, role, chain),
    normalizeCurrency: (currencyId: string, role?: CurrencyRole): string =>
      requireCurrency(currencyId, role, chain),
    encodeAddress(address: string, role: AddressRole | CurrencyRole): `0x${string}` {
      return (
        isCurrencyRole(role) ? requireCurrency(address, role, chain) : requireAddress(address, role, chain)
      ) as `0x${string}`
    },
    encodeTransactionId: (transactionId: string): `0x${string}` => requireHash(transactionId, chain),
    // Hyperliquid users are EVM keys: EIP-191 personal_sign.
    async verifyMessage(signer: string, message: `0x${string}`, signature: `0x${string}`): Promise<boolean> {
      const address = canonicalAddress(signer)
      if (address === undefined) return false
      try {
        return await verifyMessage({ address, message: { raw: message }, signature: signature as Hex })
      } catch {
        return false
      }
    },
  }
}
