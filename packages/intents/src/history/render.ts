/**
 * History items from the store's records: the status and fail reasons as the status API renders
 * them ({@link toStatusRecord}), the transactions the indexer and solver recorded, and what the
 * quote stored (its fees, and the currencies and amounts it priced in and out).
 */
import type { IntentsApi } from '@pontis/core'
import type { StoredQuote } from '../quote/persist.js'
import {
  type HistoryEntry,
  type HistoryTransaction,
  type StoredRequest,
  toStatusRecord,
} from '../store/index.js'

/** The parts of a stored quote the history shows, when present (older rows may lack some). */
interface QuotedParts {
  readonly fees?: IntentsApi.Fees
  readonly currencyIn?: IntentsApi.Fee
  readonly currencyOut?: IntentsApi.Fee
  readonly slippageTolerance?: string
  readonly referrerAddress?: string
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null

const isFee = (value: unknown): value is IntentsApi.Fee =>
  isObject(value) && isObject(value.currency) && typeof value.amount === 'string'

function quotedParts(request: StoredRequest): QuotedParts {
  const quote = request.quote as Partial<Record<keyof StoredQuote, unknown>>
  const fees = quote.fees
  const hasFees =
    isObject(fees) && ['relayerGas', 'relayerService', 'app', 'subsidized'].every((name) => isFee(fees[name]))
  return {
    ...(hasFees ? { fees: fees as IntentsApi.Fees } : {}),
    ...(isFee(quote.currencyIn) ? { currencyIn: quote.currencyIn } : {}),
    ...(isFee(quote.currencyOut) ? { currencyOut: quote.currencyOut } : {}),
    ...(typeof quote.slippageBps === 'number' ? { slippageTolerance: String(quote.slippageBps) } : {}),
    ...(isObject(quote.request) && typeof quote.request.referrerAddress === 'string'
      ? { referrerAddress: quote.request.referrerAddress }
      : {}),
  }
}

const seconds = (milliseconds: number) => Math.floor(milliseconds / 1000)
const isoTime = (milliseconds: number) => new Date(milliseconds).toISOString()

interface CommonTx {
  readonly chainId: number
  readonly type: 'onchain'
  readonly timestamp: number
  readonly block?: number
  readonly status?: 'success' | 'failure'
}

function commonTx(tx: HistoryTransaction): CommonTx {
  return {
    chainId: tx.chainId,
    type: 'onchain',
    timestamp: seconds(tx.at),
    ...(tx.block === undefined ? {} : { block: tx.block }),
    ...(tx.outcome === undefined ? {} : { status: tx.outcome }),
  }
}

/** The request's first recorded depositor and deposit transaction. */
function firstDeposit(entry: HistoryEntry): { depositor: string | null; hash: string | null } {
  const deposit = entry.inTxs.find((tx) => tx.depositor !== undefined)
  return { depositor: deposit?.depositor ?? null, hash: deposit?.hash ?? entry.inTxs[0]?.hash ?? null }
}

const feeAmount = (fee: IntentsApi.Fee | IntentsApi.SignedFee): IntentsApi.HistoryFeeAmount => ({
  amount: fee.amount,
  amountFormatted: fee.amountFormatted,
  usd: fee.amountUsd,
})

/** A `/requests/v3` item. */
export function toHistoryItemV3(entry: HistoryEntry): IntentsApi.HistoryRequestV3 {
  const { request } = entry
  const record = toStatusRecord(request)
  const quoted = quotedParts(request)
  const deposit = firstDeposit(entry)
  return {
    id: request.id,
    status: record.status,
    user: request.userAddress,
    recipient: request.recipient,
    refundTo: request.refundTo,
    sender: deposit.depositor,
    depositAddress:
      request.depositAddress !== null && request.depositAddressType !== null
        ? {
            address: request.depositAddress,
            type: request.depositAddressType,
            depositor: deposit.depositor,
            depositTxHash: deposit.hash,
          }
        : null,
    data: {
      failReason: record.failReason,
      refundFailReason: record.refundFailReason === 'N/A' ? null : record.refundFailReason,
      ...(quoted.slippageTolerance ? { slippageTolerance: quoted.slippageTolerance } : {}),
      inTxs: entry.inTxs.map((tx) => ({ txHash: tx.hash, ...commonTx(tx) })),
      outTxs: entry.outTxs.map((tx) => ({ txHash: tx.hash, ...commonTx(tx) })),
      ...(quoted.fees
        ? {
            fees: {
              quoted: {
                execution: feeAmount(quoted.fees.relayerGas),
                platform: feeAmount(quoted.fees.relayerService),
                app: feeAmount(quoted.fees.app),
                sponsored: feeAmount(quoted.fees.subsidized),
              },
              currency: quoted.fees.relayerGas.currency,
            },
          }
        : {}),
      referrer: request.referrer,
      referrerAddress: quoted.referrerAddress ?? null,
      ...(quoted.currencyIn && quoted.currencyOut
        ? {
            route: {
              quoted: {
                origin: { inputCurrency: quoted.currencyIn },
                destination: { outputCurrency: quoted.currencyOut },
              },
            },
          }
        : {}),
    },
    protocol: { orderId: request.id },
    createdAt: isoTime(request.createdAt),
    updatedAt: isoTime(request.updatedAt),
  }
}

/** The older shape's status names for the statuses it lacks. */
function statusV2(status: IntentsApi.RequestStatus): IntentsApi.HistoryRequestV2['status'] {
  if (status === 'submitted') return 'pending'
  if (status === 'fallback') return 'refund'
  return status
}

/** A `/requests/v2` item: the v3 item's facts in the older shape the swap widget reads. */
export function toHistoryItemV2(entry: HistoryEntry): IntentsApi.HistoryRequestV2 {
  const v3 = toHistoryItemV3(entry)
  const { request } = entry
  const quoted = quotedParts(request)
  const tx = ({ txHash, ...rest }: IntentsApi.HistoryTxV3): IntentsApi.HistoryTxV2 => ({
    hash: txHash,
    ...rest,
  })
  return {
    id: v3.id,
    status: statusV2(v3.status),
    user: v3.user,
    recipient: v3.recipient,
    depositAddress: v3.depositAddress
      ? {
          address: v3.depositAddress.address,
          depositAddressType: v3.depositAddress.type,
          depositor: v3.depositAddress.depositor,
          depositTxHash: v3.depositAddress.depositTxHash,
        }
      : null,
    data: {
      failReason: v3.data.failReason,
      ...(v3.data.refundFailReason === null ? {} : { refundFailReason: v3.data.refundFailReason }),
      ...(v3.data.slippageTolerance ? { slippageTolerance: v3.data.slippageTolerance } : {}),
      inTxs: v3.data.inTxs.map(tx),
      outTxs: v3.data.outTxs.map(tx),
      ...(quoted.fees
        ? {
            fees: { gas: quoted.fees.relayerGas.amount, price: quoted.fees.relayerService.amount },
            feesUsd: { gas: quoted.fees.relayerGas.amountUsd, price: quoted.fees.relayerService.amountUsd },
          }
        : {}),
      ...(quoted.currencyIn && quoted.currencyOut
        ? {
            metadata: {
              sender: request.userAddress,
              recipient: request.recipient,
              currencyIn: quoted.currencyIn,
              currencyOut: quoted.currencyOut,
            },
          }
        : {}),
    },
    protocol: v3.protocol,
    ...(request.referrer === null ? {} : { referrer: request.referrer }),
    createdAt: v3.createdAt,
    updatedAt: v3.updatedAt,
  }
}
