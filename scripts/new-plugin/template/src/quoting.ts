/**
 * __TITLE__ quoting: costs in work units, and the deposit as one `signature` step (the user signs a
 * transfer authorization, the service submits it through the execute API).
 */
import type {
  CostEstimate,
  DepositStepsRequest,
  IdentityCapability,
  PreparedStep,
  QuotingCapability,
} from '@pontis/core/plugin'
import { authorizationOf, PERMIT_KIND } from './authorization.js'
import { __CONSTANT___UNITS } from './config.js'
import type { __PASCAL__ChainContext } from './context.js'

/** Pricing and deposit steps of one chain whose depository is `depository`. */
export function create__PASCAL__Quoting(
  context: __PASCAL__ChainContext,
  identity: IdentityCapability,
  depository: string,
): QuotingCapability {
  const unitPrice = BigInt(context.options.unitPrice)
  const cost = (units: bigint): CostEstimate => ({
    currencyId: identity.nativeCurrencyId,
    amount: units * unitPrice,
    units,
    unitPrice,
  })
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: false,
    estimateOriginCost: async () => cost(__CONSTANT___UNITS.deposit),
    estimateFillCost: async () => cost(__CONSTANT___UNITS.fill),
    supportsPermit: async () => true,
    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      const permit = {
        kind: PERMIT_KIND,
        validAfter: 0n,
        validBefore: BigInt(request.nowSeconds + request.permitExpiry),
      }
      const sign = authorizationOf({
        chainId: context.chainId,
        requestId: request.requestId,
        amount: request.amount,
        validAfter: permit.validAfter,
        validBefore: permit.validBefore,
        from: identity.encodeAddress(request.depositor, 'depositor'),
        to: identity.encodeAddress(depository, 'contract'),
        currency: identity.encodeAddress(request.currencyId, 'input'),
      })
      const post = {
        endpoint: request.executeEndpoint,
        method: 'POST',
        body: { kind: PERMIT_KIND, requestId: request.requestId.toLowerCase() },
      }
      return [
        {
          id: 'authorize',
          kind: 'signature',
          action: 'Sign the transfer authorization',
          description: `Authorize the deposit on ${context.label.displayName}; the service submits it for you`,
          // The service keeps `permit` with the request; clients post only `post.body`.
          items: [{ data: { format: 'signature', sign, post }, permit }],
        },
      ]
    },
  }
}
