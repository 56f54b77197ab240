/**
 * Transaction lookups shared by reading and filling: receipts and transactions with "not there"
 * mapped to `undefined`, confirmations against the finality policy, and revert data decoding.
 */

import type { FinalityPolicy } from '@pontis/core/plugin'
import {
  decodeErrorResult,
  type Hex,
  isHex,
  type Transaction,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem'
import { depositoryAbi, multicallerAbi, tokenErrorsAbi } from './abi.js'
import type { EvmChainContext } from './quoting.js'
import { rpc } from './rpc.js'

/** How many blocks cover `blockNumber` (1 = just included) and whether the slow policy is met. */
export async function confirmationsOf(
  context: EvmChainContext,
  blockNumber: bigint,
  finality: FinalityPolicy,
): Promise<{ confirmations: number; final: boolean }> {
  const [latest, finalized] = await rpc(context.label, () =>
    Promise.all([
      context.client.getBlockNumber({ cacheTime: 1000 }),
      finality.slowRequiresFinalized
        ? context.client.getBlock({ blockTag: 'finalized' }).then((block) => block.number)
        : Promise.resolve(undefined),
    ]),
  )
  // At least 1: the block is known to be included even when the cached head is a little behind it.
  const confirmations = Math.max(1, Number(latest - blockNumber + 1n))
  const final =
    confirmations >= finality.slowConfirmations &&
    (finalized === undefined || (finalized !== null && finalized >= blockNumber))
  return { confirmations, final }
}

/** The receipt of `hash`, or undefined while it is not mined. */
export function findReceipt(context: EvmChainContext, hash: Hex): Promise<TransactionReceipt | undefined> {
  return rpc(context.label, () => context.client.getTransactionReceipt({ hash })).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return undefined
    throw error
  })
}

/** The transaction `hash` (mined or in the mempool), or undefined when the node does not know it. */
export function findTransaction(context: EvmChainContext, hash: Hex): Promise<Transaction | undefined> {
  return rpc(context.label, () => context.client.getTransaction({ hash })).catch((error: unknown) => {
    if (error instanceof TransactionNotFoundError) return undefined
    throw error
  })
}

/** A transaction's receipt when mined, or the state it is in when not. */
export type ReceiptLookup =
  | { readonly mined: true; readonly state: 'success' | 'reverted'; readonly receipt: TransactionReceipt }
  | { readonly mined: false; readonly state: 'pending' | 'not_found' }

/** The receipt of `hash`; when there is none, whether the node has the transaction in its mempool. */
export async function lookUpReceipt(context: EvmChainContext, hash: Hex): Promise<ReceiptLookup> {
  const receipt = await findReceipt(context, hash)
  if (receipt) return { mined: true, state: receipt.status === 'success' ? 'success' : 'reverted', receipt }
  return { mined: false, state: (await findTransaction(context, hash)) ? 'pending' : 'not_found' }
}

/** The revert data an `eth_call` failed with, wherever viem put it in the error's cause chain. */
export function revertDataOf(error: unknown): Hex | undefined {
  for (let current = error, depth = 0; current && depth < 10; depth++) {
    const data = (current as { data?: unknown }).data
    if (typeof data === 'string' && isHex(data)) return data
    if (typeof data === 'object' && data !== null) {
      const inner = (data as { data?: unknown }).data
      if (typeof inner === 'string' && isHex(inner)) return inner
    }
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

// Every error the multicaller, its executor, the depository and common tokens revert with; viem
// adds Error(string) and Panic(uint256) itself.
const REVERT_ERRORS = [...multicallerAbi, ...depositoryAbi, ...tokenErrorsAbi].filter(
  (item) => item.type === 'error',
)

/** A JSON-safe form of a decoded argument (amounts as decimal strings). */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return value.map(jsonSafe)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, jsonSafe(inner)]))
  }
  return value
}

/**
 * Names revert data, best effort: `{ error, args, inner?, data }`, where `error` is the custom error's
 * name (or `unknown` with the 4-byte `selector`), `args` its arguments by name (amounts as decimal
 * strings) and `inner` the decoded form of a nested revert reason (e.g. the failing call's own error
 * inside the multicaller's `CallFailed`). The raw `data` is always kept. JSON-safe.
 */
export function decodeRevert(data: Hex, depth = 0): Record<string, unknown> {
  if (data === '0x') return { error: 'unknown', data }
  try {
    const decoded = decodeErrorResult({ abi: REVERT_ERRORS, data })
    const inputs = decoded.abiItem.type === 'error' ? decoded.abiItem.inputs : []
    const args: Record<string, unknown> = {}
    let inner: Record<string, unknown> | undefined
    for (const [position, value] of (decoded.args ?? []).entries()) {
      const input = inputs[position]
      args[input?.name ? input.name : `arg${position}`] = jsonSafe(value)
      // A bytes argument of a wrapping error (CallFailed, PaymentFailed) is the inner revert data.
      if (
        inner === undefined &&
        depth < 4 &&
        input?.type === 'bytes' &&
        typeof value === 'string' &&
        isHex(value)
      ) {
        inner = decodeRevert(value, depth + 1)
      }
    }
    return {
      error: decoded.errorName,
      args,
      ...(inner === undefined ? {} : { inner }),
      data,
    }
  } catch {
    return { error: 'unknown', selector: data.slice(0, 10), data }
  }
}
