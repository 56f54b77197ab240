/**
 * The request's `authorizationList` on an EVM destination: EIP-7702 authorizations the fill carries
 * as a type-4 transaction, so the destination calls run against the code each authority delegates
 * to. The chain skips an authorization that does not verify or whose nonce is not the authority's
 * next one, without failing the transaction: the calls would then run against an account without
 * that code. So each one is checked before it is priced and again before it is signed.
 */
import { type DestinationAuthorization, PontisError } from '@pontis/core/plugin'
import { type Address, type Hex, pad, type SignedAuthorization } from 'viem'
import { recoverAuthorizationAddress } from 'viem/utils'
import type { EvmChainContext } from './quoting.js'
import { rpc } from './rpc.js'

/** One authorization as viem signs it into a transaction. */
function toSigned(authorization: DestinationAuthorization): SignedAuthorization {
  return {
    address: authorization.address as Address,
    chainId: authorization.chainId,
    nonce: authorization.nonce,
    yParity: authorization.yParity,
    r: pad(authorization.r as Hex, { size: 32 }),
    s: pad(authorization.s as Hex, { size: 32 }),
  }
}

/**
 * The authorizations in viem's form, each for this chain (or any: 0), signed by an authority whose
 * next nonce is the one it was signed for.
 * @throws PontisError INVALID_SIGNATURE when a signature recovers no authority, INVALID_EXTRA_TXS
 *   when one is for another chain or another nonce (the chain would skip it).
 */
export async function checkedAuthorizations(
  context: EvmChainContext,
  authorizations: readonly DestinationAuthorization[],
): Promise<SignedAuthorization[]> {
  const chain = `${context.label.displayName} (${context.chainId})`
  return Promise.all(
    authorizations.map(async (authorization, index) => {
      const field = `authorizationList[${index}]`
      if (authorization.chainId !== 0 && authorization.chainId !== context.chainId) {
        throw new PontisError(
          'INVALID_EXTRA_TXS',
          `${field}.chainId is ${authorization.chainId}; it must be ${context.chainId} (${chain}) or 0.`,
          { index },
        )
      }
      const signed = toSigned(authorization)
      let authority: Address
      try {
        authority = await recoverAuthorizationAddress({ authorization: signed })
      } catch {
        throw new PontisError(
          'INVALID_SIGNATURE',
          `${field} carries no valid signature (r, s, yParity); sign the authorization again.`,
          { index },
        )
      }
      const next = await rpc(context.label, () =>
        context.client.getTransactionCount({ address: authority, blockTag: 'pending' }),
      )
      if (next !== authorization.nonce) {
        throw new PontisError(
          'INVALID_EXTRA_TXS',
          `${field} is signed by ${authority} for nonce ${authorization.nonce}, but that account's next nonce on ${chain} is ${next}, so the chain would skip it; sign it again for nonce ${next}.`,
          { index, authority, nonce: next },
        )
      }
      return signed
    }),
  )
}
