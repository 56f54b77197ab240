import { formatUnits, type IntentsApi, type Registry } from '@pontis/core'
import type { OperationHandler, OperationResponse, RequestOf, ResponseOf } from '@pontis/http'
import type { PriceSource } from '../quote/prices.js'
import { DeploymentCurrencies, toListItem } from './catalog.js'
import { IconLibrary, iconFor } from './icons.js'
import type { PublicBaseUrl } from './public-url.js'

type ListCurrenciesHandler = OperationHandler<
  RequestOf<IntentsApi.ListCurrenciesData>,
  ResponseOf<IntentsApi.ListCurrenciesResponses>
>
type TrendingHandler = OperationHandler<
  RequestOf<IntentsApi.GetTrendingCurrenciesData>,
  ResponseOf<IntentsApi.GetTrendingCurrenciesResponses>
>
type TokenPriceHandler = OperationHandler<
  RequestOf<IntentsApi.GetTokenPriceData>,
  ResponseOf<IntentsApi.GetTokenPriceResponses>
>
type IconHandler = OperationHandler<RequestOf<IntentsApi.GetIconData>, OperationResponse<200, Buffer>>

/** Icons change only with the installed package or the config: caches may keep them a day. */
const ICON_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'public, max-age=86400',
  'x-content-type-options': 'nosniff',
  // An SVG opened on its own must not run anything; pages on other origins may embed it.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  'cross-origin-resource-policy': 'cross-origin',
}

export interface CurrencyHandlerOptions {
  readonly registry: Registry
  /** The price source quotes use. */
  readonly prices: PriceSource
  readonly publicBaseUrl: PublicBaseUrl
}

/**
 * The routes token selectors call (`POST /currencies/v2`, `GET /currencies/trending`,
 * `GET /currencies/token/price`) and the icons their answers and `/chains` point at.
 */
export function createCurrencyHandlers(options: CurrencyHandlerOptions): {
  listCurrencies: ListCurrenciesHandler
  getTrendingCurrencies: TrendingHandler
  getTokenPrice: TokenPriceHandler
  getIcon: IconHandler
  getSquareIcon: IconHandler
} {
  const { registry, prices, publicBaseUrl } = options
  const currencies = new DeploymentCurrencies(registry)
  const icons = new IconLibrary()
  const getIcon: IconHandler = ({ path }) => ({
    status: 200,
    type: 'image/svg+xml',
    headers: ICON_HEADERS,
    body: iconFor(icons, registry, path.kind, path.name),
  })
  return {
    listCurrencies: ({ body, headers }) => {
      const baseUrl = publicBaseUrl(headers)
      return {
        status: 200,
        body: currencies.search(body ?? {}).map((listed) => toListItem(listed, baseUrl)),
      }
    },
    getTrendingCurrencies: ({ query, headers }) => {
      const baseUrl = publicBaseUrl(headers)
      return {
        status: 200,
        body: currencies
          .trending({ chainId: query?.chainId, limit: query?.limit })
          .map((listed) => toListItem(listed, baseUrl)),
      }
    },
    getTokenPrice: async ({ query }) => {
      const { currency } = currencies.find(query.chainId, query.address)
      // Asked afresh, as a quote asks: a source that cannot price now answers PRICE_FETCH_FAILED (503).
      const usdE18 = await prices.usdPrice(currency.entry)
      return { status: 200, body: { price: Number(formatUnits(usdE18, 18)) } }
    },
    getIcon,
    getSquareIcon: getIcon,
  }
}
