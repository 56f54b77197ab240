/**
 * Reads of the venue for the indexer and the oracle.
 *
 * - Deposits: a transfer into the depository account with a non-zero 32-byte memo (the request
 *   id) in a configured asset: one fact, index 0, the depositor being the sending account.
 * - Fills and refunds: a transfer out of the depository account, its memo being the order or
 *   refund id: one payout fact to the receiving account.
 * - Transactions execute at once: an executed transfer (`status` 2) is `success` with 1
 *   confirmation, final once that meets `confirmations` (default 1). `status` 1 is `pending`; any
 *   other is `reverted`. The venue answers 400 to an unknown hash: `not_found`.
 * - Deposit scan: the depository's account history (`/accountTxs`) after the cursor, the last block
 *   height scanned; a new indexer starts at the head (`/currentHeight`), without replaying history.
 * - Balances: the perps collateral (route type 0) or the spot asset balance, decimal strings read
 *   into smallest units.
 */
import {
  type BalanceOptions,
  type DepositFact,
  type DepositScan,
  lastScannedBefore,
  type PayoutFact,
  PontisError,
  parseUnits,
  type ReadingCapability,
  type ScannedDeposit,
  type TransactionFacts,
  type TransactionState,
} from '@pontis/core/plugin'
import { isRefusal, type LighterApiTransaction } from './api.js'
import { LIGHTER_TRANSFER_TX_TYPE } from './config.js'
import { assetOf, currencyOfAsset, depositoryOf, type LighterChainContext } from './context.js'
import { canonicalTransactionHash, parseAccountIndex, requireTransactionHash } from './identity.js'
import type { SignedLighterTransfer } from './protocol.js'

/** `status` of an executed transaction; 1 is queued. */
const EXECUTED = 2
const QUEUED = 1
const ZERO_MEMO = `0x${'0'.repeat(64)}`

/** Where a transaction stands, with its transfer when it is one. */
export interface LighterTransactionLookup {
  readonly state: TransactionState
  readonly transfer: SignedLighterTransfer | undefined
  readonly confirmations: number
  readonly blockNumber?: bigint
}

function parseTransfer(type: number, info: string): SignedLighterTransfer | undefined {
  if (type !== LIGHTER_TRANSFER_TX_TYPE) return undefined
  try {
    const value = JSON.parse(info) as Partial<SignedLighterTransfer>
    const numbers = [value.FromAccountIndex, value.ToAccountIndex, value.AssetIndex, value.Amount]
    if (!numbers.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)) return undefined
    if (typeof value.Memo !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value.Memo)) return undefined
    return value as SignedLighterTransfer
  } catch {
    return undefined
  }
}

/** Looks a transaction up by hash (canonical 0x-hex). */
export async function lookUpTransaction(
  context: LighterChainContext,
  hash: `0x${string}`,
): Promise<LighterTransactionLookup> {
  const answer = await context.api.transaction(hash)
  if (isRefusal(answer)) return { state: 'not_found', transfer: undefined, confirmations: 0 }
  const transfer = parseTransfer(answer.type, answer.info)
  const state: TransactionState =
    answer.status === EXECUTED ? 'success' : answer.status === QUEUED ? 'pending' : 'reverted'
  return {
    state,
    transfer,
    confirmations: state === 'success' ? 1 : 0,
    ...(typeof answer.block_height === 'number' ? { blockNumber: BigInt(answer.block_height) } : {}),
  }
}

async function factsOf<Fact>(
  context: LighterChainContext,
  transactionId: string,
  extract: (transfer: SignedLighterTransfer) => Fact | undefined,
): Promise<TransactionFacts<Fact>> {
  const hash = requireTransactionHash(transactionId, context.label)
  const lookup = await lookUpTransaction(context, hash)
  const fact = lookup.transfer && lookup.state !== 'reverted' ? extract(lookup.transfer) : undefined
  return {
    transactionId: hash,
    state: lookup.state,
    final: lookup.state === 'success' && lookup.confirmations >= context.confirmations,
    confirmations: lookup.confirmations,
    ...(lookup.blockNumber === undefined ? {} : { blockNumber: lookup.blockNumber }),
    facts: fact === undefined ? [] : [fact],
  }
}

/** The deposit a transfer makes, or undefined. */
export function depositOf(
  context: LighterChainContext,
  transfer: SignedLighterTransfer,
): DepositFact | undefined {
  const depository = depositoryOf(context)
  const currencyId = currencyOfAsset(context, transfer.AssetIndex)
  const memo = transfer.Memo.toLowerCase()
  if (String(transfer.ToAccountIndex) !== depository || currencyId === undefined || memo === ZERO_MEMO)
    return undefined
  return {
    index: 0,
    depository,
    depositId: memo,
    depositor: String(transfer.FromAccountIndex),
    currencyId,
    amount: BigInt(transfer.Amount),
  }
}

/** The payout (fill or refund) a transfer makes, or undefined. */
export function payoutOf(
  context: LighterChainContext,
  transfer: SignedLighterTransfer,
): PayoutFact | undefined {
  const currencyId = currencyOfAsset(context, transfer.AssetIndex)
  if (String(transfer.FromAccountIndex) !== depositoryOf(context) || currencyId === undefined)
    return undefined
  return {
    index: 0,
    orderId: transfer.Memo.toLowerCase(),
    recipient: String(transfer.ToAccountIndex),
    currencyId,
    amount: BigInt(transfer.Amount),
  }
}

/** The block height a scan cursor names. @throws PontisError INVALID_REQUEST when it is not one. */
function parseScanCursor(context: LighterChainContext, cursor: string): number {
  const height = /^(0|[1-9][0-9]{0,15})$/.test(cursor) ? Number(cursor) : Number.NaN
  if (!Number.isSafeInteger(height)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${cursor.slice(0, 100)}' is not a deposit scan cursor of ${context.label.displayName} (a block height).`,
      { chainId: context.label.id },
    )
  }
  return height
}

/** The deposit an executed history transaction makes into the depository, or undefined. */
function scannedDepositOf(
  context: LighterChainContext,
  depository: string,
  tx: LighterApiTransaction & { readonly block_height: number },
): ScannedDeposit | undefined {
  if (tx.status !== EXECUTED) return undefined
  const transactionId = canonicalTransactionHash(tx.hash)
  const transfer = parseTransfer(tx.type, tx.info)
  if (transactionId === undefined || !transfer || String(transfer.FromAccountIndex) === depository)
    return undefined
  const fact = depositOf(context, transfer)
  if (!fact) return undefined
  return { ...fact, transactionId, blockNumber: BigInt(tx.block_height), confirmations: 1 }
}

/**
 * One deposit scan step: the depository's history after `cursor` (the last block height scanned),
 * one page of `scanPageSize` transactions. Without a cursor (or a depository) it answers the head.
 *
 * A full page may end inside a block whose other transactions are on the next page, so it is
 * scanned through the block before its last one, and that last block is read again next time
 * (unless the page holds one block only: then that block is taken as complete). A queued
 * transaction stops the step before its block, to be read once it executed.
 */
export async function scanLighterDeposits(
  context: LighterChainContext,
  cursor: string | undefined,
): Promise<DepositScan> {
  const depository = context.depository
  if (depository === undefined || cursor === undefined) {
    // A new indexer starts at the head: no history replay.
    return { deposits: [], cursor: String(await context.api.currentHeight()), caughtUp: true }
  }
  const after = parseScanCursor(context, cursor)
  const limit = context.scanPageSize
  const page = await context.api.accountTxs(depository, after + 1, limit)
  if (isRefusal(page)) {
    throw new PontisError(
      'RPC_HTTP_ERROR',
      `The venue API of ${context.label.displayName} (${context.label.id}) refused the depository's history: ${page.message}`,
      { chainId: context.label.id },
    )
  }
  // The venue answers from the asked height on; anything older is ignored.
  const txs = page.filter(
    (tx): tx is LighterApiTransaction & { block_height: number } =>
      typeof tx.block_height === 'number' && tx.block_height > after,
  )
  const full = page.length >= limit
  const first = txs[0]?.block_height ?? after
  const last = txs.at(-1)?.block_height ?? after
  let through = !full ? last : first < last ? last - 1 : last
  const queued = txs.find((tx) => tx.status === QUEUED)
  if (queued) through = Math.min(through, queued.block_height - 1)
  const deposits: ScannedDeposit[] = []
  for (const tx of txs) {
    if (tx.block_height > through) break
    const deposit = scannedDepositOf(context, depository, tx)
    if (deposit) deposits.push(deposit)
  }
  return {
    deposits,
    cursor: String(Math.max(after, through)),
    caughtUp: !full || queued !== undefined,
  }
}

/** The reading capability. */
export function createLighterReading(context: LighterChainContext): ReadingCapability {
  return {
    readDeposits: (transactionId) =>
      factsOf(context, transactionId, (transfer) => depositOf(context, transfer)),
    readFills: (transactionId) => factsOf(context, transactionId, (transfer) => payoutOf(context, transfer)),
    readRefunds: (transactionId) =>
      factsOf(context, transactionId, (transfer) => payoutOf(context, transfer)),
    scanDeposits: (cursor) => scanLighterDeposits(context, cursor),
    startCursor: lastScannedBefore,

    async readBalance(owner: string, currencyId: string, _options?: BalanceOptions): Promise<bigint> {
      const index = String(parseAccountIndex(owner, 'address', context.label))
      const asset = assetOf(context, currencyId)
      const account = await context.api.account(index)
      // An account that does not exist holds nothing.
      if (isRefusal(account)) return 0n
      const decimal =
        asset.routeType === 0
          ? account.collateral
          : (account.assets?.find((item) => item.asset_id === asset.assetIndex)?.balance ?? '0')
      try {
        const amount = parseUnits(decimal, asset.decimals)
        return amount > 0n ? amount : 0n
      } catch (cause) {
        throw new PontisError(
          'RPC_HTTP_ERROR',
          `The venue API of ${context.label.displayName} gave a bad balance '${decimal}' for account ${index}.`,
          { chainId: context.label.id },
          { cause },
        )
      }
    },
  }
}
