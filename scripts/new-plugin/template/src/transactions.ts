/**
 * __TITLE__ transactions as the node takes them: `raw` is JSON, its id the SHA-256 of `raw`. A
 * deposit carries the user's signed authorization; a transfer (fill or refund) is signed by its
 * sender over the JSON of its other members.
 */
import { createHash } from 'node:crypto'
import type { Authorization } from './authorization.js'

/** A deposit the service submits with the user's signed authorization. */
export interface DepositTransaction {
  readonly kind: 'deposit'
  readonly authorization: Authorization
  readonly signature: string
}

/** A transfer out of the sender's balance, tagged with `memo` (the order or refund id). */
export interface TransferTransaction {
  readonly kind: 'transfer'
  readonly from: string
  readonly to: string
  readonly currencyId: string
  readonly amount: string
  readonly memo: string
  readonly signature: string
}

export type __PASCAL__Transaction = DepositTransaction | TransferTransaction

/** The id of a raw transaction: 0x and the SHA-256 of its bytes. */
export function transactionIdOf(raw: string): `0x${string}` {
  return `0x${createHash('sha256').update(raw).digest('hex')}`
}

/** What a transfer's sender signs: every member but the signature. */
export function transferMessage(transfer: Omit<TransferTransaction, 'signature'>): string {
  const { kind, from, to, currencyId, amount, memo } = transfer
  return JSON.stringify({ kind, from, to, currencyId, amount, memo })
}
