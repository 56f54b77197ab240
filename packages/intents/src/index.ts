export { createIntentsApp, INTENTS_DOCUMENT_PATH, type IntentsAppOptions } from './app.js'
export { type QuoteContext, type QuotedRequest, QuoteEngine, type QuoteRequest } from './quote/engine.js'
export { type PriceSource, StaticPriceSource } from './quote/prices.js'
export { loadSolverSettings, type SolverSettings } from './quote/settings.js'
export {
  createIntentsRuntime,
  DEFAULT_INTENTS_PORT,
  type IntentsService,
  type IntentsServiceOptions,
  resolveIntentsPort,
  startIntentsService,
} from './service.js'
export { openRequestStore, RequestStore } from './store/index.js'
