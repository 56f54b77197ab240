/**
 * Runs the intent service alone: `tsx packages/intents/src/main.ts`. Uses DATABASE_URL when set,
 * else PGlite in PONTIS_DATA_DIR (in memory when unset); several processes share one PostgreSQL.
 */
import { createLogger } from '@pontis/core'
import { startIntentsService } from './service.js'

const logger = createLogger('intents')
const service = await startIntentsService({
  logger,
  ...(process.env.PONTIS_DATA_DIR ? { dataDir: process.env.PONTIS_DATA_DIR } : {}),
})
logger.info(`intent service listening on ${service.url} (API reference: ${service.url}/documentation)`)
const stop = () => void service.close().then(() => process.exit(0))
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
