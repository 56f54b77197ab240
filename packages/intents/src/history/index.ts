/** Request history: `GET /requests/v3` and the deprecated `GET /requests/v2`. */
export { decodeContinuation, encodeContinuation, queryDigest } from './cursor.js'
export {
  createHistoryHandlers,
  DEFAULT_HISTORY_LIMIT,
  type HistoryHandlerOptions,
  MAX_HISTORY_LIMIT,
} from './handlers.js'
export { toHistoryItemV2, toHistoryItemV3 } from './render.js'
