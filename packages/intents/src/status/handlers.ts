import { type IntentsApi, PontisError } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { RequestStore } from '../store/index.js'
import type { StatusCache } from './cache.js'

type StatusHandler = OperationHandler<
  RequestOf<IntentsApi.GetIntentStatusV3Data>,
  ResponseOf<IntentsApi.GetIntentStatusV3Responses>
>

/** `GET /intents/status/v3` and the legacy `GET /intents/status`: one record, the same answer. */
export function createStatusHandlers(
  store: RequestStore,
  cache?: StatusCache,
): {
  getIntentStatusV3: StatusHandler
  getIntentStatus: StatusHandler
} {
  const read = async (id: string) => {
    const stored = await store.getRequest(id)
    return stored ? store.toStatusRecord(stored) : undefined
  }
  const status: StatusHandler = async ({ query }) => {
    const id = query.requestId.toLowerCase()
    const record = cache ? await cache.get(id, () => read(id)) : await read(id)
    if (!record) {
      throw new PontisError(
        'REQUEST_NOT_FOUND',
        `No request ${query.requestId}. Request ids come from steps[].requestId of a quote.`,
        { requestId: query.requestId },
      )
    }
    return { status: 200, body: record }
  }
  return { getIntentStatusV3: status, getIntentStatus: status }
}
