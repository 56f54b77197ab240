import type { IncomingHttpHeaders } from 'node:http'
import type { IntentsApi } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { ApiKeyStore } from '../keys/index.js'
import type { QuoteEngine } from './engine.js'

type QuoteHandler = OperationHandler<
  RequestOf<IntentsApi.GetQuoteV2Data>,
  ResponseOf<IntentsApi.GetQuoteV2Responses>
>
type PriceHandler = OperationHandler<
  RequestOf<IntentsApi.GetPriceData>,
  ResponseOf<IntentsApi.GetPriceResponses>
>

/** `POST /quote/v2`, the deprecated `POST /quote` (same answer) and `POST /price` (no steps, nothing stored). */
export function createQuoteHandlers(
  engine: QuoteEngine,
  keys?: ApiKeyStore,
): {
  getQuoteV2: QuoteHandler
  getQuote: QuoteHandler
  getPrice: PriceHandler
} {
  // `x-api-key` ties the request to its key (webhooks, limits); an unknown or revoked key is 401.
  const apiKeyIdOf = async (headers: IncomingHttpHeaders) =>
    keys ? (await keys.authenticateHeader(headers))?.id : undefined
  const withKey = (apiKeyId: string | undefined) => (apiKeyId ? { apiKeyId } : {})
  const quote: QuoteHandler = async ({ body, headers }) => ({
    status: 200,
    body: await engine.quote(body, { withSteps: true, ...withKey(await apiKeyIdOf(headers)) }),
  })
  const getPrice: PriceHandler = async ({ body, headers }) => {
    const { steps: _steps, ...priced } = await engine.quote(body, {
      withSteps: false,
      ...withKey(await apiKeyIdOf(headers)),
    })
    return { status: 200, body: priced }
  }
  return { getQuoteV2: quote, getQuote: quote, getPrice }
}
