/**
 * `npm start`: the intent service (INTENTS_PORT, default 4000) and the oracle (HTTP_PORT, then PORT,
 * then 3000) on the selected ENVIRONMENT (default `local`), in one process.
 */
import { createLogger } from '@pontis/core'
import { startIntentsService } from '@pontis/intents'
import { startOracleService } from '@pontis/oracle'

const logger = createLogger('pontis')
const environment = process.env.ENVIRONMENT ?? 'local'
try {
  const intents = await startIntentsService({ logger: createLogger('intents') })
  const oracle = await startOracleService({ logger: createLogger('oracle') })
  logger.info(`environment ${environment}`)
  logger.info(`intent service  ${intents.url}  (API reference ${intents.url}/documentation)`)
  logger.info(`oracle          ${oracle.url}  (API reference ${oracle.url}/documentation)`)
  const stop = async () => {
    await Promise.allSettled([intents.close(), oracle.close()])
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (error) {
  logger.error(`start-up failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}
