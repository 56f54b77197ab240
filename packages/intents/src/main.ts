/**
 * Runs the intent service alone: `tsx packages/intents/src/main.ts`. Uses DATABASE_URL when set,
 * else PGlite in PONTIS_DATA_DIR (in memory when unset); several processes share one PostgreSQL.
 */
import { createLogger, startupFailure } from '@pontis/core'
import { readIntentsEnvironment } from './config.js'

const logger = createLogger('intents')
try {
  // The service's own variables first, before the plugins and the database load: a bad one is
  // reported at once.
  readIntentsEnvironment(process.env)
  const { startIntentsService } = await import('./service.js')
  const service = await startIntentsService({
    logger,
    ...(process.env.PONTIS_DATA_DIR ? { dataDir: process.env.PONTIS_DATA_DIR } : {}),
  })
  logger.info(`intent service listening on ${service.url} (API reference: ${service.url}/documentation)`)
  const stop = () => void service.close().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (error) {
  // Configuration problems are the operator's to fix: one line that names the variable, no stack.
  logger.error(`intent service failed to start: ${startupFailure(error)}`)
  process.exit(1)
}
