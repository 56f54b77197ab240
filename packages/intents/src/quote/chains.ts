import type { IntentsApi, Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { withImages } from '../currencies/icons.js'
import type { PublicBaseUrl } from '../currencies/public-url.js'

export type GetChainsHandler = OperationHandler<
  RequestOf<IntentsApi.GetChainsData>,
  ResponseOf<IntentsApi.GetChainsResponses>
>

/**
 * `GET /chains`: the chain records of the selected environment, straight from config, optionally
 * filtered, with absolute image URLs (`iconUrl`, each currency's `metadata.logoURI`) on the
 * deployment's public base URL.
 */
export function createChainHandlers(
  registry: Registry,
  publicBaseUrl: PublicBaseUrl,
): { getChains: GetChainsHandler } {
  const chains = registry.publicChainRecords()
  return {
    getChains: ({ query, headers }) => {
      const wanted = query?.includeChains ? new Set(query.includeChains.split(',').map(Number)) : undefined
      const vmType = query?.vmType
      const baseUrl = publicBaseUrl(headers)
      const selected = chains
        .filter((chain) => (!wanted || wanted.has(chain.id)) && (!vmType || chain.vmType === vmType))
        .map((chain) => withImages(chain, baseUrl) as IntentsApi.ChainRecord)
      return { status: 200, body: { chains: selected } }
    },
  }
}
