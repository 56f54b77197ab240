/**
 * `npm start`: on the `local` environment (the default) the devnet chains first, then the intent
 * service (INTENTS_PORT, default 4000) and the oracle (HTTP_PORT, then PORT, then 3000), in one
 * process (the stack of ./local-stack.ts, which tests start too). The intent service keeps its
 * embedded PostgreSQL (PGlite) in PONTIS_DATA_DIR (default .pontis/data) unless DATABASE_URL points
 * at a PostgreSQL server.
 */
import { join, resolve } from 'node:path'
import { createLogger, startupFailure } from '@pontis/core'
import { startLocalStack } from './local-stack.js'

const logger = createLogger('pontis')
try {
  const stack = await startLocalStack({
    env: process.env,
    dataDir: resolve(process.env.PONTIS_DATA_DIR || join('.pontis', 'data')),
    loggers: { pontis: logger },
  })
  const stop = async () => {
    await stack.stop()
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (error) {
  logger.error(`start-up failed: ${startupFailure(error)}`)
  process.exit(1)
}
