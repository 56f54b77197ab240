/** Runs the oracle alone: `tsx packages/oracle/src/main.ts`. */
import { createLogger, startupFailure } from '@pontis/core'
import { startOracleService } from './service.js'

const logger = createLogger('oracle')
try {
  const service = await startOracleService({ logger })
  logger.info(`oracle listening on ${service.url} (API reference: ${service.url}/documentation)`)
  const stop = () => void service.close().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (error) {
  // Configuration problems are the operator's to fix: the message says what, a stack trace would not help.
  logger.error(`oracle failed to start: ${startupFailure(error)}`)
  process.exit(1)
}
