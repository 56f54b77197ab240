import type { DepositStepsRequest } from '@pontis/core/plugin'

/**
 * What `QuotingCapability.buildDepositSteps` is asked for a deposit the depositor sends itself (no
 * authorization to sign), as the quote engine asks it now; `request` names the deposit and may set
 * anything else.
 */
export function depositStepsRequest(
  request: Pick<DepositStepsRequest, 'requestId' | 'depositor' | 'currencyId' | 'amount'> &
    Partial<DepositStepsRequest>,
): DepositStepsRequest {
  return {
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute/permits',
    nowSeconds: Math.floor(Date.now() / 1000),
    ...request,
  }
}
