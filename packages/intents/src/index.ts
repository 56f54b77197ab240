export { createIntentsApp, INTENTS_DOCUMENT_PATH, type IntentsAppOptions } from './app.js'
export {
  DEFAULT_INTENTS_PORT,
  type IntentsServiceOptions,
  resolveIntentsPort,
  startIntentsService,
} from './service.js'
