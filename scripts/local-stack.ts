/**
 * The stack `npm start` serves: on the `local` environment (the default) the devnet first, then the
 * intent service and the oracle on the environment's chain config. `scripts/start.ts` runs it as a
 * process; tests start the same stack in-process (with `DEVNET_PORTS=0` and port 0 for both services)
 * so that what they exercise is what a user gets from `npm start`.
 */
import { randomBytes } from 'node:crypto'
import { createLogger, type Logger, readChoice } from '@pontis/core'
import { type Devnet, devnetEnvironment, startDevnet } from '@pontis/devnet'
import type { RunningServer } from '@pontis/http'
import { type IntentsService, startIntentsService } from '@pontis/intents'
import { startOracleService } from '@pontis/oracle'

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /**
   * The variables the stack reads (default `process.env`): `ENVIRONMENT` (default `local`),
   * `DEVNET=off` (no devnet), `DEVNET_PORTS=0` (free devnet ports), and everything the services read
   * (`INTENTS_PORT`, `HTTP_PORT`, `DATABASE_URL`, `RATE_LIMITS`, ...).
   */
  readonly env?: NodeJS.ProcessEnv
  /** The intent service's PGlite data directory; in memory when absent. */
  readonly dataDir?: string
  /** Loggers: `pontis` (the stack's own lines), `intents`, `oracle`. Default `createLogger(name)`. */
  readonly loggers?: Partial<Record<'pontis' | 'intents' | 'oracle', Logger>>
}

/**
 * What a local run adds so that a new user can sign in to the dashboard and give a key a webhook
 * on this machine: an `ADMIN_TOKEN` made for this run when none is set (its value is returned, to
 * be printed: it exists for this process only and guards nothing but the local devnet), and
 * `WEBHOOKS_ALLOW_HTTP_LOOPBACK=true` unless set (receivers on this machine). Other environments
 * get nothing: their operators set both themselves, and their tokens are never printed.
 */
export function localOperatorSettings(
  environment: string,
  env: NodeJS.ProcessEnv,
): { readonly env: NodeJS.ProcessEnv; readonly generatedAdminToken?: string } {
  if (environment !== 'local') return { env }
  const added: NodeJS.ProcessEnv = {}
  if (env.WEBHOOKS_ALLOW_HTTP_LOOPBACK === undefined) added.WEBHOOKS_ALLOW_HTTP_LOOPBACK = 'true'
  if (env.ADMIN_TOKEN === undefined || env.ADMIN_TOKEN === '') {
    const generatedAdminToken = `local-${randomBytes(24).toString('base64url')}`
    return { env: { ...env, ...added, ADMIN_TOKEN: generatedAdminToken }, generatedAdminToken }
  }
  return { env: { ...env, ...added } }
}

/** A started stack. */
export interface LocalStack {
  readonly environment: string
  /** Present on the `local` environment unless `DEVNET=off`. */
  readonly devnet: Devnet | undefined
  /** The variables the services were started with (the devnet's ports and addresses included). */
  readonly env: NodeJS.ProcessEnv
  readonly intents: IntentsService
  readonly oracle: RunningServer
  /** Stops both services, then the devnet. */
  stop(): Promise<void>
}

/**
 * Starts the devnet (on `local`), the intent service and the oracle, logging what `npm start` logs.
 * On a failure everything already started is stopped again before the error is rethrown.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const baseEnv = options.env ?? process.env
  const logger = options.loggers?.pontis ?? createLogger('pontis')
  const environment = baseEnv.ENVIRONMENT || 'local'
  let devnet: Devnet | undefined
  let intents: IntentsService | undefined
  try {
    const operator = localOperatorSettings(environment, baseEnv)
    let env: NodeJS.ProcessEnv = operator.env
    // `off` runs the services against chains already running elsewhere (their RPC variables).
    const devnetWanted = readChoice(baseEnv, 'DEVNET', ['on', 'off']) !== 'off'
    if (environment === 'local' && devnetWanted) {
      // DEVNET_PORTS=0 picks free ports (tests); otherwise the config's defaults 8545, 8546, 8899 (SVM), 8901 (routes), 3002 (Bitcoin Esplora), 8910 (Lighter), 8920 (Hyperliquid), 8090 (Tron).
      const freePorts = baseEnv.DEVNET_PORTS === '0'
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
        svm: freePorts
          ? { port: 0, routesPort: 0, slotIntervalMs: 400 }
          : { port: 8899, slotIntervalMs: 400 },
        // Regtest blocks every 10 s (the local config's blockTimeSeconds), so deposits confirm on their own.
        bitcoin: { port: freePorts ? 0 : 3002, blockIntervalMs: 10_000 },
        lighter: { port: freePorts ? 0 : 8910 },
        hyperliquid: { port: freePorts ? 0 : 8920 },
        // A Tron block every 3 s, as on the real chain.
        tron: { port: freePorts ? 0 : 8090, blockIntervalMs: 3000 },
        log: (message) => logger.info(message),
      })
      env = { ...env, ...devnetEnvironment(devnet) }
      for (const chain of devnet.chains) logger.info(`devnet chain ${chain.chainId}  ${chain.rpcUrl}`)
      if (devnet.svm)
        logger.info(`devnet svm chain  ${devnet.svm.rpcUrl}  (swap routes ${devnet.svm.routesUrl})`)
      if (devnet.bitcoin) logger.info(`devnet bitcoin (regtest, Esplora API)  ${devnet.bitcoin.url}`)
      if (devnet.lighter) logger.info(`devnet lighter (venue simulator)  ${devnet.lighter.url}`)
      if (devnet.hyperliquid)
        logger.info(`devnet hyperliquid (core API simulator)  ${devnet.hyperliquid.url}`)
      if (devnet.tron) logger.info(`devnet tron (full-node API simulator)  ${devnet.tron.url}`)
    }
    intents = await startIntentsService({
      env,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      logger: options.loggers?.intents ?? createLogger('intents'),
    })
    const oracle = await startOracleService({
      env,
      logger: options.loggers?.oracle ?? createLogger('oracle'),
    })
    logger.info(`environment ${environment}`)
    logger.info(`intent service  ${intents.url}  (API reference ${intents.url}/documentation)`)
    logger.info(`oracle          ${oracle.url}  (API reference ${oracle.url}/documentation)`)
    logger.info(`dashboard       ${intents.url}/dashboard`)
    if (operator.generatedAdminToken !== undefined) {
      logger.info(
        `dashboard sign-in: choose "operator" and enter the admin token ${operator.generatedAdminToken} (made for this local run; set ADMIN_TOKEN to choose your own)`,
      )
    } else if (env.ADMIN_TOKEN) {
      logger.info('dashboard sign-in: choose "operator" and enter your ADMIN_TOKEN')
    } else {
      logger.info(
        'dashboard sign-in: set ADMIN_TOKEN to sign in as the operator; partners sign in with their API key',
      )
    }
    const started = { devnet, intents }
    return {
      environment,
      devnet,
      env,
      intents,
      oracle,
      async stop() {
        await Promise.allSettled([started.intents.close(), oracle.close()])
        await started.devnet?.stop()
      },
    }
  } catch (error) {
    await intents?.close().catch(() => {})
    await devnet?.stop()
    throw error
  }
}
