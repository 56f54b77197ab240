/**
 * The signed transfer authorization a __TITLE__ deposit is made with (EIP-712 typed data over the
 * 20-byte forms of the addresses): the quote asks the user to sign it, the service checks it and
 * submits it, and the chain verifies it again.
 */
import { type PermitDeposit, PontisError } from '@pontis/core/plugin'
import { recoverTypedDataAddress } from 'viem'

/** The `kind` a client posts back with the signed authorization (`data.post.body.kind`). */
export const PERMIT_KIND = 'eip3009-receive'

/** The EIP-712 types of the authorization. */
export const AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

/** The typed data of one authorization, as the signature item serves it (`data.sign`). */
export interface Authorization {
  readonly signatureKind: 'eip712'
  readonly domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` }
  readonly types: typeof AUTHORIZATION_TYPES
  readonly primaryType: 'ReceiveWithAuthorization'
  readonly value: {
    from: `0x${string}`
    to: `0x${string}`
    value: string
    validAfter: string
    validBefore: string
    nonce: `0x${string}`
  }
}

/** The parties and amount of an authorization, as 20-byte hex. */
export interface AuthorizationTerms extends Omit<PermitDeposit, 'depositor' | 'currencyId'> {
  readonly chainId: number
  readonly from: `0x${string}`
  readonly to: `0x${string}`
  readonly currency: `0x${string}`
}

/** The typed data the depositor signs. */
export function authorizationOf(terms: AuthorizationTerms): Authorization {
  return {
    signatureKind: 'eip712',
    domain: {
      name: '__TITLE__ deposit',
      version: '1',
      chainId: terms.chainId,
      verifyingContract: terms.currency,
    },
    types: AUTHORIZATION_TYPES,
    primaryType: 'ReceiveWithAuthorization',
    value: {
      from: terms.from,
      to: terms.to,
      value: terms.amount.toString(),
      validAfter: terms.validAfter.toString(),
      validBefore: terms.validBefore.toString(),
      nonce: terms.requestId.toLowerCase() as `0x${string}`,
    },
  }
}

/** `authorization` as viem's typed-data parameters (amounts as bigints), to sign or verify it. */
export function typedDataOf(authorization: Authorization) {
  const { value } = authorization
  return {
    domain: authorization.domain,
    types: authorization.types,
    primaryType: authorization.primaryType,
    message: {
      ...value,
      value: BigInt(value.value),
      validAfter: BigInt(value.validAfter),
      validBefore: BigInt(value.validBefore),
    },
  }
}

/**
 * The 20-byte hex (lower case, 0x) of the account that signed `authorization`.
 * @throws PontisError INVALID_SIGNATURE when the signature is malformed.
 */
export async function signerOf(authorization: Authorization, signature: string): Promise<string> {
  try {
    const signer = await recoverTypedDataAddress({
      ...typedDataOf(authorization),
      signature: signature as `0x${string}`,
    })
    return signer.toLowerCase()
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new PontisError('INVALID_SIGNATURE', `The authorization's signature is malformed: ${reason}`)
  }
}
