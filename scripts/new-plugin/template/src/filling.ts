/**
 * __TITLE__ filling, for the reference solver: fills and refunds are transfers signed with the
 * solver's secp256k1 key; a permit deposit submits the user's checked authorization.
 */
import {
  type FillingCapability,
  type IdentityCapability,
  type PermitDeposit,
  PontisError,
  type SignedTransaction,
  type SolverCredentials,
} from '@pontis/core/plugin'
import { privateKeyToAccount } from 'viem/accounts'
import { authorizationOf, signerOf } from './authorization.js'
import type { __PASCAL__ChainContext } from './context.js'
import { addressOf } from './identity.js'
import { type __PASCAL__Transaction, transactionIdOf, transferMessage } from './transactions.js'

function accountOf(credentials: SolverCredentials) {
  return privateKeyToAccount(credentials.solverKey as `0x${string}`)
}

function signed(transaction: __PASCAL__Transaction, amount: bigint): SignedTransaction {
  const raw = JSON.stringify(transaction)
  return { transactionId: transactionIdOf(raw), raw, amount }
}

/** Fills, refunds and permit deposits of one chain. */
export function create__PASCAL__Filling(
  context: __PASCAL__ChainContext,
  identity: IdentityCapability,
): FillingCapability {
  const transfer = async (
    credentials: SolverCredentials,
    to: string,
    currencyId: string,
    amount: bigint,
    memo: string,
  ): Promise<SignedTransaction> => {
    const account = accountOf(credentials)
    const unsigned = {
      kind: 'transfer' as const,
      from: addressOf(account.address),
      to: identity.normalizeAddress(to, 'recipient'),
      currencyId: identity.normalizeCurrency(currencyId),
      amount: amount.toString(),
      memo,
    }
    const signature = await account.signMessage({ message: transferMessage(unsigned) })
    return signed({ ...unsigned, signature }, amount)
  }
  return {
    solverAddress: (credentials) => addressOf(accountOf(credentials).address),
    // The toy node has no account sequence numbers.
    nextNonce: async () => 0n,
    signFill: (request, credentials) =>
      transfer(credentials, request.recipient, request.currencyId, request.amount, request.orderId),
    signRefund: (request, credentials) =>
      transfer(credentials, request.recipient, request.currencyId, request.amount, request.refundId),
    async signPermitDeposit(permit: PermitDeposit, signature: string): Promise<SignedTransaction> {
      if (context.depository === undefined) {
        throw new PontisError('UNSUPPORTED_EXECUTION_TYPE', `${context.label.displayName} has no depository.`)
      }
      const authorization = authorizationOf({
        ...permit,
        chainId: context.chainId,
        from: identity.encodeAddress(permit.depositor, 'depositor'),
        to: identity.encodeAddress(context.depository, 'contract'),
        currency: identity.encodeAddress(permit.currencyId, 'input'),
      })
      const signer = await signerOf(authorization, signature)
      if (addressOf(signer) !== identity.normalizeAddress(permit.depositor, 'depositor')) {
        throw new PontisError('INVALID_SIGNATURE', `The authorization is not signed by ${permit.depositor}.`)
      }
      return signed({ kind: 'deposit', authorization, signature }, permit.amount)
    },
    broadcast: (raw) => context.api.send(raw),
    async outcome(transactionId) {
      const found = await context.api.transaction(transactionId)
      if (found === undefined) return { transactionId, state: 'not_found', final: false }
      const final = found.confirmations >= context.options.confirmations
      return { transactionId, state: found.state, final, confirmations: found.confirmations }
    },
  }
}
