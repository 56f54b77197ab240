import type { IntentsApi } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
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
export function createQuoteHandlers(engine: QuoteEngine): {
  getQuoteV2: QuoteHandler
  getQuote: QuoteHandler
  getPrice: PriceHandler
} {
  const quote: QuoteHandler = async ({ body }) => ({
    status: 200,
    body: await engine.quote(body, { withSteps: true }),
  })
  const getPrice: PriceHandler = async ({ body }) => {
    const { steps: _steps, ...priced } = await engine.quote(body, { withSteps: false })
    return { status: 200, body: priced }
  }
  return { getQuoteV2: quote, getQuote: quote, getPrice }
}
