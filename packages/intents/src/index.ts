export { createIntentsApp, INTENTS_DOCUMENT_PATH, type IntentsAppOptions } from './app.js'
export {
  DEFAULT_INTENTS_PORT,
  type IntentsEnvironment,
  readIntentsEnvironment,
  resolveIntentsPort,
} from './config.js'
export { notifyStatus, STATUS_CHANNEL, StatusEvents } from './events/index.js'
export { webhookPolicyFromEnv } from './keys/index.js'
export { Indexer } from './lifecycle/indexer.js'
export { LifecycleStore } from './lifecycle/lifecycle-store.js'
export { Solver } from './lifecycle/solver.js'
export { canTransition, FINAL_STATUSES, TRANSITIONS } from './lifecycle/state-machine.js'
export { createIntentsMetrics, type IntentsMetrics } from './metrics.js'
export { type QuoteContext, QuoteEngine } from './quote/engine.js'
export type { QuotedRequest, StoredQuote } from './quote/persist.js'
export { type PriceSource, StaticPriceSource } from './quote/prices.js'
export type { QuoteRequest } from './quote/route.js'
export { loadSolverSettings, type SolverSettings } from './quote/settings.js'
export {
  createIntentsRuntime,
  type IntentsService,
  type IntentsServiceOptions,
  startIntentsService,
  WS_SERVICE_RESTART,
} from './service.js'
export { openRequestStore, RequestStore } from './store/index.js'
export { attachStatusStream, type StatusStream } from './ws/index.js'
