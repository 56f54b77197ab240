import type { IntentsApi, Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'

/** `GET /chains`: the chain records of the selected environment, straight from config. */
export function createChainHandlers(registry: Registry): {
  getChains: OperationHandler<RequestOf<IntentsApi.GetChainsData>, ResponseOf<IntentsApi.GetChainsResponses>>
} {
  const chains = registry.publicChainRecords() as IntentsApi.ChainRecord[]
  return {
    getChains: () => ({ status: 200, body: { chains } }),
  }
}
