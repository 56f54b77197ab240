/**
 * Tron filling for the reference solver: fills are tagged transfers from the solver (`solverKey`),
 * refunds tagged transfers out of the vault signed with `allocatorKey` (the vault's own key). The
 * signed transaction is stored and broadcast as the node's JSON (`raw` is that JSON). Tron has no
 * account nonces (a transaction is unique by its txID and expires), so `nextNonce` answers 0 and
 * the signing options' nonce is ignored.
 */
import {
  type FillingCapability,
  type FillRequest,
  PontisError,
  type RefundRequest,
  type RepaymentRequest,
  repaymentLegs,
  type SignedTransaction,
  type SolverCredentials,
  type TransactionOutcome,
} from '@pontis/core/plugin'
import { tronMessageText } from './api.js'
import {
  type TronTransactionJson,
  tronAddressOfKey,
  tronBase58,
  tronBytes,
  tronSignTransaction,
} from './codec.js'
import { lookUpTransaction, type TronChainContext, vaultOf } from './context.js'
import { canonicalTxId } from './identity.js'
import { refuseFillExtras } from './quoting.js'
import { buildTaggedTransfer, tagHex } from './transactions.js'

function keyBytes(name: string, key: string | undefined): Uint8Array {
  if (key === undefined || !/^(0x)?[0-9a-fA-F]{64}$/.test(key)) {
    throw new PontisError('INVALID_REQUEST', `${name} must be a 32-byte secp256k1 private key, 0x-hex`)
  }
  return tronBytes(key.replace(/^0x/, '').toLowerCase())
}

/** The base58 address of a 0x-hex secp256k1 private key. */
export function tronAddressOfPrivateKey(key: string): string {
  return tronBase58(tronAddressOfKey(keyBytes('key', key)))
}

function signed(key: Uint8Array, transaction: TronTransactionJson, amount: bigint): SignedTransaction {
  const withSignature = tronSignTransaction(key, transaction)
  return { transactionId: withSignature.txID, raw: JSON.stringify(withSignature), amount }
}

/** Filling on a Tron chain. */
export function createTronFilling(context: TronChainContext): FillingCapability {
  /** A transfer out of the vault, signed by its key (the allocator key) and tagged with `tag`. */
  const signVaultTransfer = async (
    recipient: string,
    currencyId: string,
    amount: bigint,
    tagName: string,
    tag: string,
    credentials: SolverCredentials,
  ): Promise<SignedTransaction> => {
    const key = keyBytes('allocatorKey', credentials.allocatorKey)
    const vault = vaultOf(context)
    const signer = tronBase58(tronAddressOfKey(key))
    if (signer !== vault) {
      throw new PontisError(
        'INVALID_REQUEST',
        `allocatorKey signs as ${signer}, not as the vault ${vault} payouts are made from`,
      )
    }
    const transaction = await buildTaggedTransfer(context, {
      from: vault,
      to: recipient,
      currencyId,
      amount,
      tag: `0x${tagHex(tagName, tag)}`,
    })
    return signed(key, transaction, amount)
  }
  return {
    solverAddress: (credentials: SolverCredentials) => tronAddressOfPrivateKey(credentials.solverKey),
    // Tron has no account sequence numbers.
    nextNonce: async () => 0n,
    async signFill(request: FillRequest, credentials: SolverCredentials): Promise<SignedTransaction> {
      refuseFillExtras(context, request)
      const key = keyBytes('solverKey', credentials.solverKey)
      const transaction = await buildTaggedTransfer(context, {
        from: tronBase58(tronAddressOfKey(key)),
        to: request.recipient,
        currencyId: request.currencyId,
        amount: request.amount,
        tag: `0x${tagHex('order id', request.orderId)}`,
      })
      return signed(key, transaction, request.amount)
    },
    async signRefund(request: RefundRequest, credentials: SolverCredentials): Promise<SignedTransaction> {
      if (request.source.kind !== 'depository') {
        throw new PontisError(
          'UNSUPPORTED_ROUTE',
          `${context.label.displayName} has no per-request deposit addresses.`,
        )
      }
      return signVaultTransfer(
        request.recipient,
        request.currencyId,
        request.amount,
        'refund id',
        request.refundId,
        credentials,
      )
    },
    /** One leg per transaction: a Tron transfer moves one currency. */
    async signRepayment(
      request: RepaymentRequest,
      credentials: SolverCredentials,
    ): Promise<SignedTransaction> {
      const [leg] = repaymentLegs(request, 1, context.label)
      return signVaultTransfer(
        request.recipient,
        leg.currencyId,
        leg.amount,
        'repayment id',
        request.repaymentId,
        credentials,
      )
    },
    maxRepaymentLegs: 1,
    async broadcast(raw: string): Promise<void> {
      let body: Record<string, unknown>
      try {
        body = JSON.parse(raw) as Record<string, unknown>
      } catch (error) {
        throw new PontisError(
          'INVALID_REQUEST',
          'a Tron signed transaction is the node JSON of it',
          {},
          { cause: error },
        )
      }
      const answer = await context.api.call<{ result?: boolean; code?: string; message?: string }>(
        'broadcasttransaction',
        body,
      )
      // Already accepted (a re-broadcast after a crash): nothing to do.
      if (answer.result === true || answer.code === 'DUP_TRANSACTION_ERROR') return
      throw new PontisError(
        'DESTINATION_TX_FAILED',
        `The Tron node of ${context.label.displayName} refused the transaction: ${answer.code ?? 'error'} ${tronMessageText(answer.message)}`,
        { chainId: context.label.id, code: answer.code ?? null },
      )
    },
    async outcome(transactionId: string): Promise<TransactionOutcome> {
      const txId = canonicalTxId(transactionId)
      if (txId === undefined) {
        throw new PontisError(
          'INVALID_REQUEST',
          `transaction id '${transactionId.slice(0, 80)}' is not a Tron txID`,
        )
      }
      const lookup = await lookUpTransaction(context, txId)
      if (lookup.state === 'not_found' || lookup.state === 'pending')
        return { transactionId, state: lookup.state, final: false }
      return {
        transactionId,
        state: lookup.state,
        final: lookup.final,
        confirmations: lookup.confirmations,
        ...(lookup.state === 'reverted' ? { revert: { contractRet: lookup.contractRet } } : {}),
      }
    },
  }
}
