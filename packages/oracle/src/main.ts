/** Runs the oracle alone: `tsx packages/oracle/src/main.ts`. */
import { createLogger } from '@pontis/core'
import { startOracleService } from './service.js'

const logger = createLogger('oracle')
const service = await startOracleService({ logger })
logger.info(`oracle listening on ${service.url} (API reference: ${service.url}/documentation)`)
const stop = () => void service.close().then(() => process.exit(0))
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
