import type { QuotedRequest } from './quote/engine.js'
import type { JsonObject, NewRequest } from './store/index.js'

/** The engine's quoted request as the store keeps it. */
export function toNewRequest(request: QuotedRequest): NewRequest {
  return {
    id: request.id,
    originChainId: request.originChainId,
    destinationChainId: request.destinationChainId,
    userAddress: request.user,
    recipient: request.recipient,
    refundTo: request.refundTo,
    originCurrency: request.originCurrency,
    destinationCurrency: request.destinationCurrency,
    tradeType: request.tradeType,
    amountIn: request.amountIn,
    amountOut: request.amountOut,
    minimumAmountOut: request.minimumAmountOut,
    ...(request.depositAddress && request.depositAddressType
      ? { depositAddress: request.depositAddress, depositAddressType: request.depositAddressType }
      : {}),
    ...(request.depositTag ? { depositTag: request.depositTag } : {}),
    ...(request.apiKeyId ? { apiKeyId: request.apiKeyId } : {}),
    ...(request.referrer ? { referrer: request.referrer } : {}),
    quote: JSON.parse(JSON.stringify(request.quote)) as JsonObject,
    expiresAt: request.expiresAt,
  }
}
