/**
 * `npm start`: on the `local` environment (the default) the devnet chains first, then the intent
 * service (INTENTS_PORT, default 4000) and the oracle (HTTP_PORT, then PORT, then 3000), in one
 * process. The intent service keeps its embedded PostgreSQL (PGlite) in PONTIS_DATA_DIR
 * (default .pontis/data) unless DATABASE_URL points at a PostgreSQL server.
 */
import { join, resolve } from 'node:path'
import { createLogger } from '@pontis/core'
import { type Devnet, devnetEnvironment, startDevnet } from '@pontis/devnet'
import { startIntentsService } from '@pontis/intents'
import { startOracleService } from '@pontis/oracle'

const logger = createLogger('pontis')
const environment = process.env.ENVIRONMENT || 'local'
let devnet: Devnet | undefined
try {
  let env: NodeJS.ProcessEnv = process.env
  if (environment === 'local' && process.env.DEVNET !== 'off') {
    // DEVNET_PORTS=0 picks free ports (tests); otherwise the config's defaults 8545, 8546, 8899 (SVM), 8901 (routes), 3002 (Bitcoin Esplora), 8910 (Lighter), 8920 (Hyperliquid), 8090 (Tron).
    const freePorts = process.env.DEVNET_PORTS === '0'
    devnet = await startDevnet({
      ...(freePorts
        ? {
            chains: [
              { chainId: 31337, port: 0 },
              { chainId: 31338, port: 0 },
            ],
          }
        : {}),
      // The SVM chain opens a slot every 400 ms, as Solana does, so deposits finalize on their own.
      svm: freePorts ? { port: 0, routesPort: 0, slotIntervalMs: 400 } : { port: 8899, slotIntervalMs: 400 },
      // Regtest blocks every 10 s (the local config's blockTimeSeconds), so deposits confirm on their own.
      bitcoin: { port: freePorts ? 0 : 3002, blockIntervalMs: 10_000 },
      lighter: { port: freePorts ? 0 : 8910 },
      hyperliquid: { port: freePorts ? 0 : 8920 },
      // A Tron block every 3 s, as on the real chain.
      tron: { port: freePorts ? 0 : 8090, blockIntervalMs: 3000 },
      log: (message) => logger.info(message),
    })
    env = { ...process.env, ...devnetEnvironment(devnet) }
    for (const chain of devnet.chains) logger.info(`devnet chain ${chain.chainId}  ${chain.rpcUrl}`)
    if (devnet.svm)
      logger.info(`devnet svm chain  ${devnet.svm.rpcUrl}  (swap routes ${devnet.svm.routesUrl})`)
    if (devnet.bitcoin) logger.info(`devnet bitcoin (regtest, Esplora API)  ${devnet.bitcoin.url}`)
    if (devnet.lighter) logger.info(`devnet lighter (venue simulator)  ${devnet.lighter.url}`)
    if (devnet.hyperliquid) logger.info(`devnet hyperliquid (core API simulator)  ${devnet.hyperliquid.url}`)
    if (devnet.tron) logger.info(`devnet tron (full-node API simulator)  ${devnet.tron.url}`)
  }
  const dataDir = resolve(process.env.PONTIS_DATA_DIR || join('.pontis', 'data'))
  const intents = await startIntentsService({ env, dataDir, logger: createLogger('intents') })
  const oracle = await startOracleService({ env, logger: createLogger('oracle') })
  logger.info(`environment ${environment}`)
  logger.info(`intent service  ${intents.url}  (API reference ${intents.url}/documentation)`)
  logger.info(`oracle          ${oracle.url}  (API reference ${oracle.url}/documentation)`)
  const stop = async () => {
    await Promise.allSettled([intents.close(), oracle.close()])
    await devnet?.stop()
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (error) {
  logger.error(`start-up failed: ${error instanceof Error ? error.message : String(error)}`)
  await devnet?.stop()
  process.exit(1)
}
