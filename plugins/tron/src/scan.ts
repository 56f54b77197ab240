/**
 * The deposit scan: walks blocks after the cursor with `getblockbylimitnext` in bounded pages and
 * answers the vault's deposits in them (TRX transfers with a 32-byte memo, TRC20 transfers with the
 * 32-byte suffix whose Transfer event is in the receipt), as `readDeposits` reads them.
 */
import { type DepositScan, PontisError, type ScannedDeposit } from '@pontis/core/plugin'
import { tronBytes, tronTransactionId } from './codec.js'
import { TRON_NATIVE_CURRENCY_ID } from './config.js'
import { decodeRawIfKnown, headNumber, type TronChainContext, type TronEventLog } from './context.js'
import { depositFactOf, hasTransferLog, taggedTransferOf } from './transactions.js'

/** A transaction inside a block, as the node serves it. */
interface TronBlockTransaction {
  readonly txID?: string
  readonly raw_data_hex?: string
  readonly ret?: readonly { readonly contractRet?: string }[]
}

/** A block as `getblockbylimitnext` serves it. */
interface TronBlockJson {
  readonly block_header?: { readonly raw_data?: { readonly number?: number } }
  readonly transactions?: readonly TronBlockTransaction[]
}

function parseCursor(context: TronChainContext, cursor: string): number {
  const number = /^(0|[1-9][0-9]{0,15})$/.test(cursor) ? Number(cursor) : Number.NaN
  if (!Number.isSafeInteger(number)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${cursor.slice(0, 100)}' is not a deposit scan cursor of ${context.label.displayName} (a block number).`,
      { chainId: context.label.id },
    )
  }
  return number
}

/** The vault deposit one block transaction made, or undefined (no deposit, reverted, no event). */
async function depositIn(
  context: TronChainContext,
  transaction: TronBlockTransaction,
  blockNumber: number,
  head: number,
): Promise<ScannedDeposit | undefined> {
  // Reverted (or failed) transactions moved nothing.
  if (transaction.ret?.[0]?.contractRet !== 'SUCCESS') return undefined
  const rawHex = transaction.raw_data_hex?.toLowerCase()
  if (rawHex === undefined || !/^([0-9a-f]{2})+$/.test(rawHex)) return undefined
  const rawBytes = tronBytes(rawHex)
  const raw = decodeRawIfKnown(rawBytes)
  const transfer = raw === undefined ? undefined : taggedTransferOf(raw)
  const fact = transfer === undefined ? undefined : depositFactOf(context, transfer)
  if (transfer === undefined || fact === undefined) return undefined
  const transactionId = tronTransactionId(rawBytes)
  if (transfer.currencyId !== TRON_NATIVE_CURRENCY_ID) {
    // A TRC20 deposit counts only with the token's Transfer event, as readDeposits checks it.
    const info = await context.api.call<{ blockNumber?: number; log?: TronEventLog[] }>(
      'gettransactioninfobyid',
      { value: transactionId },
    )
    if (!hasTransferLog(info.log ?? [], transfer)) return undefined
  }
  return {
    ...fact,
    transactionId,
    blockNumber: BigInt(blockNumber),
    confirmations: Math.max(1, head - blockNumber + 1),
  }
}

/**
 * One scan step. The cursor is the last block scanned (decimal); without one the scan starts at the
 * head (a new indexer does not replay history). Reads at most `scanBlocksPerPage` blocks past the
 * cursor; `caughtUp` is false while blocks remain up to the head. Deposits are found once per
 * block, so a re-read after a crash only repeats what the indexer records once.
 * @throws PontisError INVALID_REQUEST for a cursor that is no block number; RPC_HTTP_ERROR when the
 *   node does not serve the blocks it says it has.
 */
export async function scanTronDeposits(
  context: TronChainContext,
  cursor: string | undefined,
): Promise<DepositScan> {
  const head = await headNumber(context)
  if (context.vault === undefined || cursor === undefined) {
    return { deposits: [], cursor: String(head), caughtUp: true }
  }
  const after = parseCursor(context, cursor)
  if (after >= head) return { deposits: [], cursor: String(after), caughtUp: true }
  const last = Math.min(head, after + context.options.scanBlocksPerPage)
  const page = await context.api.call<{ block?: TronBlockJson[] }>('getblockbylimitnext', {
    startNum: after + 1,
    endNum: last + 1,
    visible: true,
  })
  const blocks = [...(page.block ?? [])].sort(
    (a, b) => (a.block_header?.raw_data?.number ?? -1) - (b.block_header?.raw_data?.number ?? -1),
  )
  const deposits: ScannedDeposit[] = []
  let through = after
  for (const block of blocks) {
    const number = block.block_header?.raw_data?.number
    // Only consecutive blocks advance the cursor: a block the node skipped is asked for again.
    if (number !== through + 1 || number > last) break
    for (const transaction of block.transactions ?? []) {
      const deposit = await depositIn(context, transaction, number, head)
      if (deposit) deposits.push(deposit)
    }
    through = number
  }
  if (through === after) {
    throw new PontisError(
      'RPC_HTTP_ERROR',
      `The Tron node of ${context.label.displayName} (${context.label.id}) served no block ${after + 1} though its head is ${head}; retry shortly.`,
      { chainId: context.label.id },
    )
  }
  return { deposits, cursor: String(through), caughtUp: through >= head }
}
