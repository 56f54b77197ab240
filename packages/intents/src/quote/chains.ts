import type { IntentsApi, Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'

export type GetChainsHandler = OperationHandler<
  RequestOf<IntentsApi.GetChainsData>,
  ResponseOf<IntentsApi.GetChainsResponses>
>

/** `GET /chains`: the chain records of the selected environment, straight from config, optionally filtered. */
export function createChainHandlers(registry: Registry): { getChains: GetChainsHandler } {
  const chains = registry.publicChainRecords() as IntentsApi.ChainRecord[]
  return {
    getChains: ({ query }) => {
      const wanted = query?.includeChains ? new Set(query.includeChains.split(',').map(Number)) : undefined
      const vmType = query?.vmType
      const selected = chains.filter(
        (chain) => (!wanted || wanted.has(chain.id)) && (!vmType || chain.vmType === vmType),
      )
      return { status: 200, body: { chains: selected } }
    },
  }
}
