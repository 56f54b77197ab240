/**
 * Hyperliquid filling for the reference solver. A fill or refund is one user-signed send
 * (`usdSend`/`spotSend`) from the solver, which is also the depository: the solver holds the
 * deposits and pays out of the same account. Its nonce (the action's `time`) is a millisecond
 * timestamp; the solver allocates them from `nextNonce` upwards, and the payout reads back with
 * `orderId` = tag(solver, nonce): which order that nonce paid is the solver's record.
 *
 * The signed bytes (`raw`) are the JSON body `/exchange` takes; the transaction id is the hash
 * both this plugin and the devnet compute from the signed action (actions.ts), known before
 * broadcasting. A send the venue already has is not an error when broadcast again.
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
import type { Hex } from 'viem'
import { privateKeyToAddress } from 'viem/accounts'
import { type HyperliquidSignedAction, hyperliquidSendHash, signHyperliquidSend } from './actions.js'
import { isHyperliquidSend } from './api.js'
import { assetOf, depositoryOf, type HyperliquidChainContext, signerClock } from './context.js'
import { requireAddress, requireCurrency, requireHash } from './identity.js'
import { buildSend } from './quoting.js'
import { lookUpTransaction } from './reading.js'

/** `/exchange` refused a signed action the venue does not have. */
export class HyperliquidExchangeError extends Error {
  constructor(readonly reason: string) {
    super(`exchange refused the action: ${reason.slice(0, 500)}`)
    this.name = 'HyperliquidExchangeError'
  }
}

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/

/** The lower-case address of a 0x-hex secp256k1 private key. */
export function addressOfKey(privateKey: string, name: string): `0x${string}` {
  if (!PRIVATE_KEY.test(privateKey)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `${name} must be a secp256k1 private key: 0x followed by 64 hexadecimal digits.`,
    )
  }
  try {
    return privateKeyToAddress(privateKey as Hex).toLowerCase() as `0x${string}`
  } catch {
    throw new PontisError('INVALID_REQUEST', `${name} is not a valid secp256k1 private key.`)
  }
}

/** Parses a signed action as `raw` holds it. */
function parseRaw(raw: string): HyperliquidSignedAction {
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    value = undefined
  }
  const signed = value as Partial<HyperliquidSignedAction> | undefined
  if (
    typeof signed !== 'object' ||
    signed === null ||
    typeof signed.action !== 'object' ||
    signed.action === null ||
    !isHyperliquidSend(signed.action) ||
    typeof signed.nonce !== 'number' ||
    typeof signed.signature?.r !== 'string' ||
    typeof signed.signature.s !== 'string' ||
    typeof signed.signature.v !== 'number'
  ) {
    throw new PontisError(
      'INVALID_REQUEST',
      'Not a signed Hyperliquid action: expected {action, nonce, signature} JSON.',
    )
  }
  return signed as HyperliquidSignedAction
}

export function createHyperliquidFilling(context: HyperliquidChainContext): FillingCapability {
  /** Signs a send of `amount` from the key's account, with the given or next nonce. */
  async function signSend(
    privateKey: string,
    keyName: string,
    recipient: string,
    currencyId: string,
    amount: bigint,
    options: SigningOptions | undefined,
  ): Promise<SignedTransaction> {
    const signer = addressOfKey(privateKey, keyName)
    const destination = requireAddress(recipient, 'recipient', context.label)
    const asset = await assetOf(context, requireCurrency(currencyId, 'currency', context.label))
    const clock = signerClock(context, signer)
    const nonce = options?.nonce ?? clock.next(Date.now())
    const action = buildSend(context, asset, destination, amount, nonce)
    clock.use(nonce)
    const signed = await signHyperliquidSend(privateKey as Hex, action)
    return {
      transactionId: hyperliquidSendHash(signed.action, signed.signature),
      raw: JSON.stringify(signed),
      amount,
    }
  }

  return {
    solverAddress: (credentials: SolverCredentials) => addressOfKey(credentials.solverKey, 'solverKey'),

    async nextNonce(address: string): Promise<bigint> {
      const signer = requireAddress(address, 'solver', context.label)
      const now = BigInt(Date.now())
      const last = context.signerNonces.get(signer)?.last ?? 0n
      return now > last ? now : last + 1n
    },

    async signFill(request: FillRequest, credentials: SolverCredentials, options?: SigningOptions) {
      if (request.calls.length > 0) {
        throw new PontisError(
          'EXTRA_TXS_NOT_SUPPORTED',
          `${context.label.displayName} fills cannot run calls.`,
        )
      }
      if (request.topupNativeAmount > 0n) {
        throw new PontisError('UNSUPPORTED_ROUTE', `${context.label.displayName} fills carry no gas top-up.`)
      }
      return signSend(
        credentials.solverKey,
        'solverKey',
        request.recipient,
        request.currencyId,
        request.amount,
        options,
      )
    },

    async signRefund(request: RefundRequest, credentials: SolverCredentials, options?: SigningOptions) {
      if (request.source.kind !== 'depository') {
        throw new PontisError(
          'UNSUPPORTED_ROUTE',
          `${context.label.displayName} has no deposit addresses: refunds come out of the depository.`,
        )
      }
      // The depository is the solver's own account; a separate allocator key may hold it instead.
      const key = credentials.allocatorKey ?? credentials.solverKey
      const keyName = credentials.allocatorKey ? 'allocatorKey' : 'solverKey'
      const depository = depositoryOf(context)
      if (addressOfKey(key, keyName) !== depository) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `The configured ${keyName} does not hold the depository ${depository} on ${context.label.displayName}.`,
        )
      }
      return signSend(key, keyName, request.recipient, request.currencyId, request.amount, options)
    },

    async broadcast(raw: string): Promise<void> {
      const signed = parseRaw(raw)
      const answer = await context.api.exchange(signed)
      if (answer.status === 'ok') return
      // Refused: fine when the venue already has it (a repeat, or executed with an error: see outcome).
      const hash = hyperliquidSendHash(signed.action, signed.signature)
      if ((await context.api.txDetails(hash)) !== undefined) return
      throw new HyperliquidExchangeError(String(answer.response))
    },

    async outcome(transactionId: string): Promise<TransactionOutcome> {
      const lookup = await lookUpTransaction(context, requireHash(transactionId, context.label))
      return {
        transactionId,
        state: lookup.state,
        final: lookup.state === 'success' || lookup.state === 'reverted',
        confirmations: lookup.tx ? 1 : 0,
        ...(lookup.tx?.error ? { revert: { error: lookup.tx.error } } : {}),
      }
    },
  }
}
