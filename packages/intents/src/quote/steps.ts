/** Quote stage 5, build the steps: the origin family's deposit steps, checked, in the API's form. */
import {
  type DepositNonceTag,
  type IntentsApi,
  type OriginSwapQuote,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
  type RegisteredChain,
} from '@pontis/core'
import type { Hex } from 'viem'
import { PERMIT_EXPIRY_DEFAULT } from './options.js'
import type { IssuedOrder } from './order.js'
import type { PricedQuote } from './priced-quote.js'

const PLACEHOLDER_ID: Hex = `0x${'00'.repeat(32)}`
const STATUS_PATH = '/intents/status'
const EXECUTE_PATH = '/execute/permits'

/**
 * The origin family's deposit steps for a priced quote; a price without a request id is compiled
 * with a placeholder (size-limited families check every quote).
 * @throws PontisError the family's own error when a step is over its size limit.
 */
export async function prepareDepositSteps(
  priced: PricedQuote,
  issued: IssuedOrder,
  nonceTag: DepositNonceTag | undefined,
): Promise<readonly PreparedStep[]> {
  const { route, originSwap } = priced
  const { depositAddress } = issued
  const quoting = route.origin.quoting
  const prepared = await quoting.buildDepositSteps({
    requestId: issued.id ?? PLACEHOLDER_ID,
    depositor: route.user,
    currencyId: route.origin.currency.address,
    amount: priced.charges.breakdown.amountIn,
    usePermit: priced.usePermit,
    permitExpiry: priced.request.permitExpiry ?? PERMIT_EXPIRY_DEFAULT,
    executeEndpoint: EXECUTE_PATH,
    nowSeconds: Math.floor(priced.nowMs / 1000),
    options: priced.familyOptions,
    ...(originSwap ? { originSwap } : {}),
    ...(depositAddress ? { depositAddress } : {}),
    ...(nonceTag ? { depositNonce: nonceTag.nonce } : {}),
  })
  checkSize(quoting, prepared, originSwap)
  return prepared
}

/** Refuses a deposit transaction over its family's wire-size limit, with the family's error and remedy. */
function checkSize(
  quoting: QuotingCapability,
  steps: readonly PreparedStep[],
  originSwap: OriginSwapQuote | undefined,
): void {
  const check = quoting.checkTransactionSize
  if (!check) return
  for (const step of steps) {
    const { sizeBytes, limitBytes, fits } = check(step)
    if (fits) continue
    const overBy = sizeBytes - limitBytes
    const oversized = quoting.oversizedTransaction
    throw new PontisError(
      oversized?.errorCode ?? 'UNSUPPORTED_ROUTE',
      `transaction is ${sizeBytes} bytes, ${overBy} over the ${limitBytes} byte limit; ${oversized?.remedy(originSwap) ?? 'change the amount'}.`,
      { size: sizeBytes, limit: limitBytes, overBy },
    )
  }
}

/**
 * The answer's `steps`: each prepared step for request `id`, its items checked through the
 * request's status; without `destinationChain` (a swap the user runs, done when it is mined) unchecked.
 */
export function apiSteps(
  prepared: readonly PreparedStep[],
  id: Hex,
  depositAddress: string | undefined,
  destinationChain: RegisteredChain | undefined,
): IntentsApi.Step[] {
  const finalStatuses = destinationChain?.adapter.finality.clientsStopAtSubmitted
    ? (['submitted', 'success'] as const)
    : (['success'] as const)
  return prepared.map((step) => ({
    id: step.id,
    action: step.action,
    description: step.description,
    kind: step.kind,
    requestId: id,
    depositAddress: depositAddress ?? '',
    items: step.items.map((item) => ({
      status: 'incomplete' as const,
      data: item.data as IntentsApi.StepItemData,
      // Every item but an approval ends in the request's status: a client polls it until the
      // fill (the Relay SDK keeps polling a signature item only when it has a check).
      ...(step.id !== 'approve' && destinationChain
        ? {
            check: {
              endpoint: `${STATUS_PATH}?requestId=${id}`,
              method: 'GET' as const,
              finalStatuses: [...finalStatuses],
            },
          }
        : {}),
    })),
  }))
}
