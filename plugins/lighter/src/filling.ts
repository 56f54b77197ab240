/**
 * Fills and refunds for the reference solver: transfers out of the depository (the solver's
 * account), signed with its API key (`credentials.solverKey`, the ed25519 seed), tagged with the
 * order or refund id in the memo. The transaction id is the transfer's hash, computed before
 * sending; `raw` is the `sendTx` body.
 */
import {
  type FillingCapability,
  type FillRequest,
  PontisError,
  type RefundRequest,
  type SignedTransaction,
  type SigningOptions,
  type SolverCredentials,
  type TransactionOutcome,
} from '@pontis/core/plugin'
import { isRefusal } from './api.js'
import { LIGHTER_TRANSFER_TX_TYPE } from './config.js'
import { assetOf, depositoryOf, existingAccount, type LighterChainContext } from './context.js'
import { createLighterIdentity, requireTransactionHash } from './identity.js'
import { type SignedLighterTransfer, signTransfer, transferHash } from './protocol.js'
import { memoOf, transferAmount } from './quoting.js'
import { lookUpTransaction } from './reading.js'

const SEED = /^0x[0-9a-fA-F]{64}$/

function seedOf(credentials: SolverCredentials): string {
  if (typeof credentials.solverKey !== 'string' || !SEED.test(credentials.solverKey)) {
    throw new TypeError('the Lighter solverKey must be the API key ed25519 seed: 0x and 64 hex digits')
  }
  return credentials.solverKey
}

/** The body `sendTx` takes, as stored in `SignedTransaction.raw`. */
interface RawTransfer {
  readonly tx_type: number
  readonly tx_info: string
}

function parseRaw(raw: string): { body: RawTransfer; transfer: SignedLighterTransfer } {
  try {
    const body = JSON.parse(raw) as RawTransfer
    if (body.tx_type !== LIGHTER_TRANSFER_TX_TYPE || typeof body.tx_info !== 'string')
      throw new Error('shape')
    return { body, transfer: JSON.parse(body.tx_info) as SignedLighterTransfer }
  } catch (cause) {
    throw new PontisError(
      'INVALID_REQUEST',
      'not a signed Lighter transfer: expected {tx_type: 12, tx_info}',
      {},
      { cause },
    )
  }
}

/** The filling capability. */
export function createLighterFilling(context: LighterChainContext): FillingCapability {
  const identity = createLighterIdentity([...context.assets.keys()], context.label)

  async function nextNonce(address: string): Promise<bigint> {
    const index = identity.normalizeAddress(address, 'solver')
    const nonce = await context.api.nextNonce(index, context.solverApiKeyIndex)
    if (isRefusal(nonce)) {
      throw new PontisError(
        'INVALID_ADDRESS',
        `${context.label.displayName} has no nonce for account ${index} api key ${context.solverApiKeyIndex}: ${nonce.message}`,
        { chainId: context.label.id },
      )
    }
    return nonce
  }

  /** Signs a transfer from the depository to `recipient` tagged with `tag`. */
  async function signPayout(
    tag: string,
    recipientIn: string,
    currencyIn: string,
    amountIn: bigint,
    credentials: SolverCredentials,
    options: SigningOptions | undefined,
  ): Promise<SignedTransaction> {
    const seed = seedOf(credentials)
    const recipient = identity.normalizeAddress(recipientIn, 'recipient')
    const currencyId = identity.normalizeCurrency(currencyIn, 'output')
    const asset = assetOf(context, currencyId)
    const memo = memoOf(tag, 'order id')
    const amount = transferAmount(amountIn)
    const depository = depositoryOf(context)
    await existingAccount(context, recipient, 'recipient')
    const nonce = options?.nonce ?? (await nextNonce(depository))
    // The fee is read fresh: a stale one would be refused.
    const fee = await context.api.transferFee(depository)
    if (isRefusal(fee)) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `${context.label.displayName} refused the fee read: ${fee.message}`,
      )
    }
    const signed = signTransfer(
      {
        FromAccountIndex: Number(depository),
        ApiKeyIndex: context.solverApiKeyIndex,
        ToAccountIndex: Number(recipient),
        AssetIndex: asset.assetIndex,
        FromRouteType: asset.routeType,
        ToRouteType: asset.routeType,
        Amount: amount,
        USDCFee: Number(fee),
        Memo: memo,
        ExpiredAt: Date.now() + context.transferExpirySeconds * 1000,
        Nonce: Number(nonce),
      },
      seed,
    )
    const raw: RawTransfer = { tx_type: LIGHTER_TRANSFER_TX_TYPE, tx_info: JSON.stringify(signed) }
    return { transactionId: transferHash(signed), raw: JSON.stringify(raw), amount: amountIn }
  }

  return {
    solverAddress(credentials) {
      seedOf(credentials)
      return depositoryOf(context)
    },
    nextNonce,

    async signFill(request: FillRequest, credentials, options): Promise<SignedTransaction> {
      if (request.calls.length > 0) {
        throw new PontisError(
          'EXTRA_TXS_NOT_SUPPORTED',
          `${context.label.displayName} fills cannot run calls.`,
        )
      }
      if (request.topupNativeAmount > 0n) {
        throw new PontisError(
          'INVALID_REQUEST',
          `${context.label.displayName} fills cannot carry a gas top-up.`,
        )
      }
      return signPayout(
        request.orderId,
        request.recipient,
        request.currencyId,
        request.amount,
        credentials,
        options,
      )
    },

    async signRefund(request: RefundRequest, credentials, options): Promise<SignedTransaction> {
      if (request.source.kind !== 'depository') {
        throw new PontisError(
          'INVALID_REQUEST',
          `${context.label.displayName} has no deposit addresses: refunds come out of the depository account only.`,
        )
      }
      return signPayout(
        request.refundId,
        request.recipient,
        request.currencyId,
        request.amount,
        credentials,
        options,
      )
    },

    async broadcast(raw: string): Promise<void> {
      const { body, transfer } = parseRaw(raw)
      const answer = await context.api.sendTx(body.tx_type, body.tx_info)
      if (!isRefusal(answer)) return
      // Refused: fine when the venue already has it (a re-broadcast after a crash uses its nonce).
      let hash: `0x${string}`
      try {
        hash = transferHash(transfer)
      } catch {
        hash = `0x${'0'.repeat(64)}`
      }
      const known = await lookUpTransaction(context, hash)
      if (known.state !== 'not_found') return
      throw new PontisError(
        'DESTINATION_TX_FAILED',
        `${context.label.displayName} refused the transfer: ${answer.message}`,
        { chainId: context.label.id, venueCode: answer.code },
      )
    },

    async outcome(transactionId: string): Promise<TransactionOutcome> {
      const hash = requireTransactionHash(transactionId, context.label)
      const lookup = await lookUpTransaction(context, hash)
      return {
        transactionId: hash,
        state: lookup.state,
        final: lookup.state === 'success' && lookup.confirmations >= context.confirmations,
        confirmations: lookup.confirmations,
      }
    },
  }
}
