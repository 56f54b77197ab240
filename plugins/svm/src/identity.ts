/**
 * SVM identity: base58 public keys and mints, case-sensitive and never normalised (a base58 string
 * that differs in case is another key). EVM addresses are refused with a message that says so.
 */

import { ed25519 } from '@noble/curves/ed25519'
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
import bs58 from 'bs58'

/** The native currency id: the system program's address. */
export const SVM_NATIVE_CURRENCY_ID = '11111111111111111111111111111111'

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const ADDRESS_FORM = 'expected a base58 public key of 32 bytes (32 to 44 characters, case-sensitive)'

/** The bytes of a base58 string, or undefined when it is not base58. */
export function decodeBase58(value: string): Uint8Array | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 128 || !BASE58.test(value)) {
    return undefined
  }
  try {
    return bs58.decode(value)
  } catch {
    return undefined
  }
}

/** Base58 of `bytes`. */
export function encodeBase58(bytes: Uint8Array): string {
  return bs58.encode(bytes)
}

/** Why `value` is not an SVM public key, or undefined when it is one. */
export function addressProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return ADDRESS_FORM
  if (EVM_ADDRESS.test(value)) return `this is an EVM address; ${ADDRESS_FORM}`
  const bytes = decodeBase58(value)
  if (bytes === undefined) return `not base58 (base58 has no 0, O, I or l); ${ADDRESS_FORM}`
  if (bytes.length !== 32) return `it decodes to ${bytes.length} bytes; ${ADDRESS_FORM}`
  // Base58 has one spelling per byte string: a leading-zero or re-encoding mismatch is not a key.
  if (bs58.encode(bytes) !== value) return ADDRESS_FORM
  return undefined
}

const toHex = (bytes: Uint8Array): `0x${string}` => `0x${Buffer.from(bytes).toString('hex')}`

/** The identity rules of one SVM chain, with messages that name it. */
export function createSvmIdentity(chain?: ChainLabel): IdentityCapability {
  const isValidAddress = (address: string): boolean => addressProblem(address) === undefined
  const normalizeAddress = (address: string, role: AddressRole): string => {
    const problem = addressProblem(address)
    if (problem !== undefined) throw invalidAddressError(role, address, problem, chain)
    return address
  }
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    const problem = addressProblem(currencyId)
    if (problem !== undefined) {
      throw invalidCurrencyError(
        role,
        currencyId,
        `${problem} (the mint address, or ${SVM_NATIVE_CURRENCY_ID} for the native currency)`,
        chain,
      )
    }
    return currencyId
  }
  return {
    nativeCurrencyId: SVM_NATIVE_CURRENCY_ID,
    isValidAddress,
    normalizeAddress,
    normalizeCurrency,
    encodeAddress(address: string, role: AddressRole | CurrencyRole): `0x${string}` {
      const normalized = isCurrencyRole(role)
        ? normalizeCurrency(address, role)
        : normalizeAddress(address, role)
      return toHex(bs58.decode(normalized))
    },
    encodeTransactionId(transactionId: string): `0x${string}` {
      const bytes = decodeBase58(transactionId)
      if (bytes === undefined || bytes.length !== 64 || bs58.encode(bytes) !== transactionId) {
        throw new PontisError(
          'INVALID_REQUEST',
          `'${String(transactionId).slice(0, 100)}' is not a transaction signature${chain ? ` of ${chain.displayName}` : ''}: expected a base58 signature of 64 bytes (87 or 88 characters, case-sensitive)`,
        )
      }
      return toHex(bytes)
    },
    async verifyMessage(signer: string, message: `0x${string}`, signature: `0x${string}`): Promise<boolean> {
      if (!isValidAddress(signer)) return false
      try {
        const signatureBytes = Buffer.from(signature.slice(2), 'hex')
        if (signatureBytes.length !== 64) return false
        return ed25519.verify(signatureBytes, Buffer.from(message.slice(2), 'hex'), bs58.decode(signer))
      } catch {
        return false
      }
    },
  }
}

/** True when `transactionId` has the shape of an SVM signature (base58, 64 bytes). */
export function isSignature(transactionId: string): boolean {
  const bytes = decodeBase58(transactionId)
  return bytes !== undefined && bytes.length === 64
}
