/**
 * Quote stage 6, persist: the quoted request as the store keeps it (status `waiting`). The quote
 * issues the store's own record, {@link NewRequest}; only its `quote` member is the quote's business.
 */
import type { IntentsApi, PermitTerms, PreparedStep } from '@pontis/core'
import type { Hex } from 'viem'
import { DepositTagTakenError, type NewRequest } from '../store/index.js'
import { type StoredDestinationSwap, storeDestinationSwap } from './destination-swap.js'
import type { IssuedOrder } from './order.js'
import type { PricedQuote } from './priced-quote.js'
import type { QuoteRequest } from './route.js'

/** {@link PermitTerms} as JSON: what the execute API redeems for a `usePermit` request. */
export interface StoredPermit {
  readonly kind: string
  readonly validAfter: string
  readonly validBefore: string
}

/** JSON-safe record of the request, order and amounts; opaque to the store. */
// A type, not an interface, so it is a JSON object to the store.
export type StoredQuote = {
  readonly request: QuoteRequest
  readonly order: IntentsApi.Order
  /** Present when the quote returned protocol data; the solver signs the order id again when it needs to. */
  readonly orderSignature?: Hex
  readonly fees: IntentsApi.Fees
  readonly calls: ReadonlyArray<{ to: string; value: string; data: string }>
  readonly topupNativeAmount: string
  readonly slippageBps: number
  /** The authorizations the quote's signature items issued, for the execute API. */
  readonly permits?: readonly StoredPermit[]
  /**
   * With `latePaymentSlippageTolerance`: the destination fill cost the quote priced (native smallest
   * unit) and the account it was simulated for, so a deposit after the deadline is priced again.
   */
  readonly quotedFill?: { readonly payer: string; readonly cost: string }
  /** What the quote priced in and out (`details.currencyIn/currencyOut`), for the request history. */
  readonly currencyIn?: IntentsApi.Fee
  readonly currencyOut?: IntentsApi.Fee
  /** The fill's destination swap: the solver pays its inventory currency into it for the recipient. */
  readonly destinationSwap?: StoredDestinationSwap
}

/** Everything later stages (indexer, solver, webhooks) need about a quoted request: the store's record. */
export type QuotedRequest = NewRequest<StoredQuote>

/** What the quote adds to a priced quote and its order by the time it stores the request. */
export interface StoredParts {
  readonly fees: IntentsApi.Fees
  /** The answer's details; the history shows their `currencyIn` and `currencyOut`. */
  readonly details?: Pick<IntentsApi.Details, 'currencyIn' | 'currencyOut'>
  readonly prepared: readonly PreparedStep[]
  readonly depositTag: Hex | undefined
  readonly apiKeyId: string | undefined
}

/** The request record of a quote, as {@link RequestStore.insertRequest} takes it. */
export function quotedRequest(
  priced: PricedQuote,
  issued: IssuedOrder & { readonly id: Hex },
  parts: StoredParts,
): QuotedRequest {
  const { route, payout, costs } = priced
  const swap = priced.destinationSwap
  // As asked: an exact-output destination swap was priced as a bridge of the swap's input.
  const request = swap ? swap.request : priced.request
  const { depositAddress } = issued
  return {
    id: issued.id,
    originChainId: route.origin.chain.id,
    destinationChainId: route.destination.chain.id,
    userAddress: route.user,
    recipient: route.recipient,
    refundTo: route.refundTo,
    originCurrency: route.origin.currency.address,
    destinationCurrency: swap ? swap.currency.address : route.destination.currency.address,
    tradeType: request.tradeType,
    amountIn: priced.charges.breakdown.amountIn,
    amountOut: swap ? swap.amountOut : payout.paidOut,
    minimumAmountOut: swap ? swap.minimumAmountOut : payout.minimumAmountOut,
    ...(depositAddress ? { depositAddress, depositAddressType: request.strict ? 'strict' : 'open' } : {}),
    ...(parts.depositTag ? { depositTag: parts.depositTag } : {}),
    ...(parts.apiKeyId ? { apiKeyId: parts.apiKeyId } : {}),
    ...(request.referrer ? { referrer: request.referrer } : {}),
    expiresAt: priced.expiresAt,
    quote: {
      request,
      order: issued.order,
      ...(issued.orderSignature ? { orderSignature: issued.orderSignature } : {}),
      fees: parts.fees,
      calls: priced.calls.map((call) => ({ to: call.to, value: call.value.toString(), data: call.data })),
      topupNativeAmount: costs.topupNativeAmount.toString(),
      slippageBps: costs.slippageBps,
      ...(request.latePaymentSlippageTolerance !== undefined
        ? { quotedFill: { payer: costs.fillPayer, cost: costs.fillCost.amount.toString() } }
        : {}),
      permits: parts.prepared.flatMap((step) =>
        step.items.flatMap((item) => (item.permit ? [storedPermit(item.permit)] : [])),
      ),
      ...(parts.details
        ? { currencyIn: parts.details.currencyIn, currencyOut: parts.details.currencyOut }
        : {}),
      ...(swap ? { destinationSwap: storeDestinationSwap(swap, route.destination.currency.address) } : {}),
    },
  }
}

function storedPermit(terms: PermitTerms): StoredPermit {
  return {
    kind: terms.kind,
    validAfter: terms.validAfter.toString(),
    validBefore: terms.validBefore.toString(),
  }
}

/** Nonces tried for a memo-less deposit before a quote gives up (each taken one is another instance's). */
const DEPOSIT_TAG_ATTEMPTS = 3

/**
 * Runs `attempt` again while the store refuses its deposit tag. Memo-less families know a deposit
 * by its sender and the nonce fixed in its steps; another instance may hand out the same nonce in
 * the same millisecond, and the steps are then built again with the family's next nonce.
 */
export async function retryTakenDepositTag<Result>(attempt: () => Promise<Result>): Promise<Result> {
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt()
    } catch (error) {
      if (!(error instanceof DepositTagTakenError) || attempts >= DEPOSIT_TAG_ATTEMPTS) throw error
    }
  }
}
