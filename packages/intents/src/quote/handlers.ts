import type { IncomingHttpHeaders } from 'node:http'
import { type IntentsApi, isPontisError, type Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { ApiKeyStore } from '../keys/index.js'
import type { IntentsMetrics, QuoteKind } from '../metrics.js'
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
  counted?: { readonly metrics: Pick<IntentsMetrics, 'quoteAnswered'>; readonly registry: Registry },
): {
  getQuoteV2: QuoteHandler
  getQuote: QuoteHandler
  getPrice: PriceHandler
} {
  // `x-api-key` ties the request to its key (webhooks, limits); an unknown or revoked key is 401.
  const apiKeyIdOf = async (headers: IncomingHttpHeaders) =>
    keys ? (await keys.authenticateHeader(headers))?.id : undefined
  const withKey = (apiKeyId: string | undefined) => (apiKeyId ? { apiKeyId } : {})
  // A chain label is a configured id or `other`: what a caller sends never becomes a label.
  const chainLabel = (id: unknown): string =>
    (typeof id === 'number' || typeof id === 'string') && counted?.registry.tryChain(id)
      ? String(counted.registry.tryChain(id)?.id)
      : 'other'
  const count = async <T>(
    kind: QuoteKind,
    body: { originChainId?: unknown; destinationChainId?: unknown },
    answer: () => Promise<T>,
  ): Promise<T> => {
    if (counted === undefined) return answer()
    const route = [chainLabel(body.originChainId), chainLabel(body.destinationChainId)] as const
    try {
      const result = await answer()
      counted.metrics.quoteAnswered(kind, ...route, 'ok')
      return result
    } catch (error) {
      counted.metrics.quoteAnswered(kind, ...route, isPontisError(error) ? error.code : 'UNKNOWN_ERROR')
      throw error
    }
  }
  const quote: QuoteHandler = async ({ body, headers }) => ({
    status: 200,
    body: await count('quote', body, async () =>
      engine.quote(body, { withSteps: true, ...withKey(await apiKeyIdOf(headers)) }),
    ),
  })
  const getPrice: PriceHandler = async ({ body, headers }) => {
    const { steps: _steps, ...priced } = await count('price', body, async () =>
      engine.quote(body, { withSteps: false, ...withKey(await apiKeyIdOf(headers)) }),
    )
    return { status: 200, body: priced }
  }
  return { getQuoteV2: quote, getQuote: quote, getPrice }
}
