/**
 * Tron filling for the reference solver: fills are tagged transfers from the solver (`solverKey`),
 * refunds tagged transfers out of the vault signed with `allocatorKey` (the vault's own key), and
 * another intent API's deposit items from the solver (rebalancing moves). The
 * signed transaction is stored and broadcast as the node's JSON (`raw` is that JSON). Tron has no
 * account nonces (a transaction is unique by its txID and expires), so `nextNonce` answers 0 and
 * the signing options' nonce is ignored. A transaction that expired before it landed is built and
 * signed again with a fresh reference block and expiration (`replace`), only once the expiry is
 * provable.
 */
import {
  type FillingCapability,
  type FillRequest,
  PontisError,
  type RefundRequest,
  type RepaymentRequest,
  type ReplacementTransaction,
  repaymentLegs,
  type SignedTransaction,
  type SolverCredentials,
  stepItemRefusal,
  type TransactionOutcome,
} from '@pontis/core/plugin'
import { tronMessageText } from './api.js'
import {
  type TronTransactionJson,
  tronAddressOfKey,
  tronBase58,
  tronBytes,
  tronSignTransaction,
  tronTransactionId,
} from './codec.js'
import {
  decodeRawIfKnown,
  lookUpTransaction,
  nodeHeadNumber,
  rawBytesOf,
  type TronChainContext,
  vaultOf,
} from './context.js'
import { canonicalTxId } from './identity.js'
import { refuseFillExtras } from './quoting.js'
import { buildTaggedTransfer, taggedTransferOf, tagHex } from './transactions.js'

/**
 * Blocks (1 = the block itself) that make a Tron block solid: 2/3 of the 27 super representatives
 * have built on it, and it never forks.
 */
const TRON_SOLID_BLOCKS = 19

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

/**
 * The tagged transfer `raw` (a signed transaction's node JSON) makes, built and signed again by
 * whichever of `keys` owns it, when the chain can provably no longer include `raw`: a solid block
 * is stamped at or past its `expiration` (every later block validates it against a head at least
 * that late, and refuses it), and its txID is in none of the blocks up to there. At most one of the
 * two can land. Undefined otherwise, or when `raw` is no tagged transfer of one of `keys`.
 * Solid is the deeper of `slowConfirmations` and Tron's 19 blocks: a lowered `slowConfirmations`
 * trusts blocks that may still fork, and one forked away could have held `raw`.
 */
async function resignExpired(
  context: TronChainContext,
  raw: string,
  keys: readonly Uint8Array[],
): Promise<ReplacementTransaction | undefined> {
  const rawBytes = rawBytesOf(JSON.parse(raw))
  if (!rawBytes) return undefined
  const decoded = decodeRawIfKnown(rawBytes)
  const transfer = decoded && taggedTransferOf(decoded)
  const key = keys.find((candidate) => tronBase58(tronAddressOfKey(candidate)) === transfer?.from)
  if (!decoded || !transfer || !key) return undefined
  const solid =
    (await nodeHeadNumber(context)) - Math.max(context.options.slowConfirmations, TRON_SOLID_BLOCKS) + 1
  if (solid < 0) return undefined
  const block = await context.api.call<{ block_header?: { raw_data?: { timestamp?: unknown } } }>(
    'getblockbynum',
    { num: solid },
  )
  const stamped = block.block_header?.raw_data?.timestamp
  if (typeof stamped !== 'number' || stamped < decoded.expiration) return undefined
  if ((await lookUpTransaction(context, tronTransactionId(rawBytes))).state !== 'not_found') return undefined
  const again = signed(key, await buildTaggedTransfer(context, transfer), transfer.amount)
  return { transactionId: again.transactionId, raw: again.raw }
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
    /**
     * Another intent API's `tron-transaction` item (rebalancing): only a tagged transfer (TRX, or a
     * TRC-20 `transfer` with its tag) from the solver of the move's currency, at most the move, is
     * taken; it is built again with this chain's fresh reference block and fee limit (the item's may
     * have expired) and signed by the solver, so nothing else the item's bytes may say is signed.
     */
    async signStep(item, spend, credentials): Promise<SignedTransaction> {
      const key = keyBytes('solverKey', credentials.solverKey)
      const solver = tronBase58(tronAddressOfKey(key))
      const refuse = stepItemRefusal(item, 'tron-transaction', context.label)
      const rawBytes = rawBytesOf(item.transaction)
      if (!rawBytes) return refuse('its `transaction` carries no raw_data_hex')
      const decoded = decodeRawIfKnown(rawBytes)
      const transfer = decoded && taggedTransferOf(decoded)
      if (!transfer) return refuse('it is not a tagged transfer of TRX or of a TRC-20 token')
      if (transfer.from !== solver) refuse(`it is to be sent by ${transfer.from}, not by the solver`)
      if (transfer.currencyId !== spend.currencyId)
        refuse(`it sends ${transfer.currencyId} in a move of ${spend.currencyId}`)
      if (transfer.amount > spend.amount)
        refuse(`it sends ${transfer.amount}, more than the move's ${spend.amount}`)
      return signed(key, await buildTaggedTransfer(context, transfer), transfer.amount)
    },
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
    /**
     * No fee market to outbid: a transaction that does not land is built and signed again with a
     * fresh reference block, and only once it has provably expired (see {@link resignExpired}).
     */
    replace(raw, credentials) {
      const keys = [keyBytes('solverKey', credentials.solverKey)]
      if (credentials.allocatorKey !== undefined)
        keys.push(keyBytes('allocatorKey', credentials.allocatorKey))
      return resignExpired(context, raw, keys)
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
