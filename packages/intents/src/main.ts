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
  // SIGTERM (an orchestrator's stop) and SIGINT drain: requests in flight finish, leases go back,
  // websocket clients are told to reconnect; bounded by SHUTDOWN_TIMEOUT_MS.
  const stop = (signal: NodeJS.Signals) => {
    logger.info(`${signal}: shutting down`)
    const { shutdownTimeoutMs } = readIntentsEnvironment(process.env)
    // Whatever hangs while closing, the process is gone shortly after the bound.
    setTimeout(() => process.exit(1), shutdownTimeoutMs + 5000).unref()
    void service.shutdown({ timeoutMs: shutdownTimeoutMs }).then(
      (inTime) => process.exit(inTime ? 0 : 1),
      (error: unknown) => {
        logger.error(`shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (error) {
  // Configuration problems are the operator's to fix: one line that names the variable, no stack.
  logger.error(`intent service failed to start: ${startupFailure(error)}`)
  process.exit(1)
}
