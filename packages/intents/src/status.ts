import { type IntentsApi, PontisError } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { RequestStore } from './store/index.js'

type StatusHandler = OperationHandler<
  RequestOf<IntentsApi.GetIntentStatusV3Data>,
  ResponseOf<IntentsApi.GetIntentStatusV3Responses>
>

/** `GET /intents/status/v3` and the legacy `GET /intents/status`: one record, the same answer. */
export function createStatusHandlers(store: RequestStore): {
  getIntentStatusV3: StatusHandler
  getIntentStatus: StatusHandler
} {
  const status: StatusHandler = async ({ query }) => {
    const stored = await store.getRequest(query.requestId)
    if (!stored) {
      throw new PontisError(
        'REQUEST_NOT_FOUND',
        `No request ${query.requestId}. Request ids come from steps[].requestId of a quote.`,
        { requestId: query.requestId },
      )
    }
    return { status: 200, body: store.toStatusRecord(stored) }
  }
  return { getIntentStatusV3: status, getIntentStatus: status }
}
