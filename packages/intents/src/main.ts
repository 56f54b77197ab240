/** Runs the intent service alone: `tsx packages/intents/src/main.ts`. */
import { createLogger } from '@pontis/core'
import { startIntentsService } from './service.js'

const logger = createLogger('intents')
const service = await startIntentsService({ logger })
logger.info(`intent service listening on ${service.url} (API reference: ${service.url}/documentation)`)
const stop = () => void service.close().then(() => process.exit(0))
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
