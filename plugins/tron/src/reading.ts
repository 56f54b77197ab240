/**
 * Tron reading: deposits (tagged transfers to the vault), fills and refunds (tagged payouts), and
 * balances (TRX via `getaccount`, TRC20 via a `balanceOf` constant call). A TRC20 payment counts
 * only with its Transfer event in the transaction's logs; a transaction whose `contractRet` is not
 * SUCCESS is `reverted` and moved nothing.
 */
import {
  type DepositFact,
  lastScannedBefore,
  type PayoutFact,
  PontisError,
  type ReadingCapability,
  type TransactionFacts,
} from '@pontis/core/plugin'
import { tronAddressBytes, tronHex } from './codec.js'
import { TRON_NATIVE_CURRENCY_ID } from './config.js'
import { lookUpTransaction, type TronChainContext } from './context.js'
import { canonicalTronAddress, canonicalTxId } from './identity.js'
import { scanTronDeposits } from './scan.js'
import { depositFactOf, hasTransferLog, type TaggedTransfer, taggedTransferOf } from './transactions.js'

function requireTxId(context: TronChainContext, transactionId: string): string {
  const txId = canonicalTxId(transactionId)
  if (txId === undefined) {
    throw new PontisError(
      'INVALID_REQUEST',
      `transaction id '${String(transactionId).slice(0, 80)}' is not a Tron txID: expected 64 hex characters`,
      { chainId: context.label.id },
    )
  }
  return txId
}

/**
 * The tagged transfer a transaction made, with its state; no transfer unless it succeeded. An
 * accepted transaction not in a block yet is `pending` with the transfer it asks for (not yet
 * executed: a TRC20 one has no Transfer event to check).
 */
async function readTransfer<Fact>(
  context: TronChainContext,
  transactionId: string,
  toFact: (transfer: TaggedTransfer) => Fact | undefined,
): Promise<TransactionFacts<Fact>> {
  const lookup = await lookUpTransaction(context, requireTxId(context, transactionId))
  if (lookup.state === 'not_found') return { transactionId, state: 'not_found', final: false, facts: [] }
  if (lookup.state === 'pending') {
    const asked = lookup.raw === undefined ? undefined : taggedTransferOf(lookup.raw)
    const fact = asked === undefined ? undefined : toFact(asked)
    return { transactionId, state: 'pending', final: false, facts: fact === undefined ? [] : [fact] }
  }
  const transfer =
    lookup.state === 'success' && lookup.raw !== undefined ? taggedTransferOf(lookup.raw) : undefined
  const moved =
    transfer !== undefined &&
    (transfer.currencyId === TRON_NATIVE_CURRENCY_ID || hasTransferLog(lookup.logs, transfer))
  const fact = moved ? toFact(transfer) : undefined
  return {
    transactionId,
    state: lookup.state,
    final: lookup.final,
    blockNumber: lookup.blockNumber,
    confirmations: lookup.confirmations,
    facts: fact === undefined ? [] : [fact],
  }
}

/** The balance of `owner` in `currencyId` (TRX: sun; TRC20: the token's smallest unit). */
export async function readTronBalance(
  context: TronChainContext,
  owner: string,
  currencyId: string,
): Promise<bigint> {
  const address = canonicalTronAddress(owner)
  if (address === undefined)
    throw new PontisError('INVALID_ADDRESS', `'${owner.slice(0, 80)}' is not a Tron address`)
  if (currencyId === TRON_NATIVE_CURRENCY_ID) {
    const account = await context.api.call<{ balance?: number }>('getaccount', { address, visible: true })
    return BigInt(account.balance ?? 0)
  }
  const owner20 = tronHex((tronAddressBytes(address) as Uint8Array).subarray(1))
  const answer = await context.api.call<{
    constant_result?: string[]
    result?: { result?: boolean; message?: string }
  }>('triggerconstantcontract', {
    owner_address: address,
    contract_address: currencyId,
    function_selector: 'balanceOf(address)',
    parameter: owner20.padStart(64, '0'),
    visible: true,
  })
  const result = answer.constant_result?.[0]
  if (answer.result?.result !== true || typeof result !== 'string' || !/^[0-9a-fA-F]{64}$/.test(result)) {
    throw new PontisError(
      'UNSUPPORTED_CURRENCY',
      `${currencyId} on ${context.label.displayName} answered no balanceOf: is it a TRC20 contract?`,
      { chainId: context.label.id },
    )
  }
  return BigInt(`0x${result}`)
}

/** Reading on a Tron chain. */
export function createTronReading(context: TronChainContext): ReadingCapability {
  const payout = (transactionId: string) =>
    readTransfer<PayoutFact>(context, transactionId, (transfer) => ({
      index: 0,
      orderId: transfer.tag,
      recipient: transfer.to,
      currencyId: transfer.currencyId,
      amount: transfer.amount,
    }))
  return {
    readDeposits: (transactionId: string) =>
      readTransfer<DepositFact>(context, transactionId, (transfer) => depositFactOf(context, transfer)),
    scanDeposits: (cursor: string | undefined) => scanTronDeposits(context, cursor),
    startCursor: lastScannedBefore,
    readFills: payout,
    readRefunds: payout,
    readBalance: (owner: string, currencyId: string) => readTronBalance(context, owner, currencyId),
  }
}
