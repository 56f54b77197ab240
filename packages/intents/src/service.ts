import {
  ConfigError,
  createLogger,
  type EnvironmentVariables,
  type Logger,
  loadRegistry,
  type Registry,
  rpcEndpointsOf,
  watchRpcCalls,
} from '@pontis/core'
import { type LoadedDocument, listen, type RunningServer } from '@pontis/http'
import { createIntentsApp } from './app.js'
import { AppFeeLedger } from './app-fees/ledger.js'
import {
  databaseHint,
  describeDatabaseUrl,
  type IntentsEnvironment,
  readIntentsEnvironment,
} from './config.js'
import { StatusEvents } from './events/index.js'
import { ApiKeyStore } from './keys/index.js'
import { HubRepayments } from './lifecycle/hub-repayment.js'
import { Indexer } from './lifecycle/indexer.js'
import { LifecycleStore } from './lifecycle/lifecycle-store.js'
import { Rebalancer } from './lifecycle/rebalance.js'
import { Repayments } from './lifecycle/repayment.js'
import { Solver } from './lifecycle/solver.js'
import { createIntentsMetrics, type IntentsMetrics } from './metrics.js'
import { QuoteEngine } from './quote/engine.js'
import { LiquidityBook } from './quote/inventory.js'
import { loadPriceSource, type PriceSource } from './quote/prices.js'
import { loadSolverSettings, solverCredentialsFor } from './quote/settings.js'
import { MemoryRateLimiter, type RateLimiter, SqlRateLimiter } from './ratelimit/index.js'
import { StatusCache } from './status/cache.js'
import { openRequestStore, type RequestStore } from './store/index.js'
import { startWebhookLoop, WebhookDispatcher } from './webhooks/index.js'
import { type Loop, startLoop } from './workers/loop.js'
import { attachStatusStream } from './ws/index.js'

export interface IntentsServiceOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly port?: number
  readonly host?: string
  readonly configDir?: string
  readonly logger?: Logger
  /** PGlite data directory when `DATABASE_URL` is unset; in memory when absent. */
  readonly dataDir?: string
  readonly document?: LoadedDocument
  readonly now?: () => number
  /** Run the indexer and solver loops in this process (default true; tests may drive them by hand). */
  readonly workers?: boolean
  /** Pause between indexer passes. Default 1000 ms. */
  readonly indexerIntervalMs?: number
  /** How often the indexer reads deposits it acted on again, for reorganisations. Default 15 s. */
  readonly reorgCheckMs?: number
  /** Pause between solver passes. Default 250 ms. */
  readonly solverIntervalMs?: number
  /** Pause between webhook delivery passes. Default 200 ms. */
  readonly webhookIntervalMs?: number
  /** Pause between repayment passes (batching what fills are owed). Default 2000 ms. */
  readonly repaymentIntervalMs?: number
  /** Rebalancing pass interval (only when a band is configured); default 10 s. */
  readonly rebalanceIntervalMs?: number
  /** Where quotes and token prices get USD prices; default `configs/prices.<ENVIRONMENT>.json`. */
  readonly prices?: PriceSource
}

export interface IntentsService extends RunningServer {
  readonly registry: Registry
  readonly store: RequestStore
  readonly engine: QuoteEngine
  readonly lifecycle: LifecycleStore
  readonly indexer: Indexer
  readonly solver: Solver
  /** Repays the solver for its fills: batches repayments, queues deposit-address sweeps. */
  readonly repayments: Repayments
  /** Keeps the solver's balances inside their configured bands: plans moves within a budget. */
  readonly rebalancer: Rebalancer
  readonly metrics: IntentsMetrics
  /**
   * The graceful stop of SIGTERM: `/readyz` turns 503, the port stops accepting connections, the
   * requests in flight finish, the workers end their pass and give back their leases, websocket
   * clients get close code 1012 (service restart: reconnect), then everything closes. Bounded by
   * `timeoutMs` (default `SHUTDOWN_TIMEOUT_MS`); answers whether it finished within the bound.
   */
  shutdown(options?: { readonly timeoutMs?: number }): Promise<boolean>
}

/**
 * Crash tests name a point with PONTIS_FAILPOINT, alone (the first job to reach it) or after a job
 * kind (`repayment:after-send`); the process kills itself there, as a power cut would.
 */
function crashAt(wanted: string, logger: Logger): (point: string, kind: string) => void {
  return (point, kind) => {
    if (point !== wanted && `${kind}:${point}` !== wanted) return
    logger.warn(`failpoint ${point}: killing the process`)
    process.kill(process.pid, 'SIGKILL')
  }
}

/**
 * The request store the environment names, or a start-up error naming `DATABASE_URL` (never its
 * password) or `PONTIS_DATA_DIR` with what went wrong.
 */
async function openConfiguredStore(
  settings: IntentsEnvironment,
  options: IntentsServiceOptions,
  logger: Logger,
): Promise<RequestStore> {
  try {
    return await openRequestStore({
      ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
      ...(settings.databaseSchema ? { schema: settings.databaseSchema } : {}),
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.now ? { now: options.now } : {}),
      logger,
    })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const where =
      settings.databaseUrl !== undefined
        ? `DATABASE_URL (${describeDatabaseUrl(settings.databaseUrl)}): cannot open the database`
        : `PONTIS_DATA_DIR (${options.dataDir ?? 'in memory'}): cannot open the embedded database`
    throw new ConfigError(`${where}: ${message}${databaseHint(message)}`, [], { cause: error })
  }
}

/** The engine, its store and registry for one environment: what the HTTP app and tests build on. */
export async function createIntentsRuntime(options: IntentsServiceOptions = {}) {
  const env: EnvironmentVariables = options.env ?? process.env
  // The service's own variables first: a bad one stops start-up before anything is loaded.
  const settingsFromEnv = readIntentsEnvironment(env)
  const logger = options.logger ?? createLogger('intents')
  const configOptions = { env, ...(options.configDir ? { configDir: options.configDir } : {}) }
  const registry = await loadRegistry({ ...configOptions, logger })
  const environment = registry.environment
  const [settingsResult, pricesResult, storeResult] = await Promise.allSettled([
    loadSolverSettings({ ...configOptions, environment, registry }),
    options.prices ?? loadPriceSource({ ...configOptions, environment, registry }),
    openConfiguredStore(settingsFromEnv, options, logger),
  ])
  if (
    settingsResult.status === 'rejected' ||
    pricesResult.status === 'rejected' ||
    storeResult.status === 'rejected'
  ) {
    // Nothing is served: release what did open, so the process can exit, and report the first failure.
    await Promise.allSettled([
      storeResult.status === 'fulfilled' ? storeResult.value.close() : undefined,
      registry.close(),
    ])
    const failed = [settingsResult, pricesResult, storeResult].find((result) => result.status === 'rejected')
    throw (failed as PromiseRejectedResult).reason
  }
  const settings = settingsResult.value
  const prices = pricesResult.value
  const store = storeResult.value
  const liquidity = new LiquidityBook(store.client, options.now)
  const engine = new QuoteEngine({
    liquidity,
    registry,
    prices,
    settings,
    logger,
    ...(options.now ? { now: options.now } : {}),
    saveRequest: async (request) => {
      await store.insertRequest(request)
    },
  })
  const now = options.now ?? Date.now
  const metrics = createIntentsMetrics({ chainIds: registry.chains().map((chain) => chain.id) })
  const lifecycle = new LifecycleStore(store, now, metrics)
  const appFees = new AppFeeLedger(store.client, now)
  const indexer = new Indexer({
    registry,
    lifecycle,
    logger,
    now,
    metrics,
    ...(options.reorgCheckMs !== undefined ? { reorgCheckMs: options.reorgCheckMs } : {}),
  })
  const credentials = (vmType: string) => solverCredentialsFor(settings, vmType)
  const solver = new Solver({
    registry,
    lifecycle,
    logger,
    now,
    credentials,
    metrics,
    ...(settingsFromEnv.solverLeaseMs !== undefined ? { leaseMs: settingsFromEnv.solverLeaseMs } : {}),
    ...(settingsFromEnv.solverReplaceAfterMs !== undefined
      ? { replaceAfterMs: settingsFromEnv.solverReplaceAfterMs }
      : {}),
    ...(env.PONTIS_FAILPOINT ? { failpoint: crashAt(env.PONTIS_FAILPOINT, logger) } : {}),
    ...(settings.repayment ? { repaymentPath: settings.repayment.path } : {}),
  })
  const hubRepayments =
    settings.repayment?.path === 'hub'
      ? new HubRepayments({
          registry,
          lifecycle,
          logger,
          now,
          credentials,
          hubKey: settings.solver.privateKey,
          oracles: settings.repayment.oracles ?? [],
          ...(settings.repayment.oracleApiKey ? { oracleApiKey: settings.repayment.oracleApiKey } : {}),
          ...(env.PONTIS_FAILPOINT ? { failpoint: crashAt(env.PONTIS_FAILPOINT, logger) } : {}),
        })
      : undefined
  const repayments = new Repayments({
    registry,
    lifecycle,
    logger,
    now,
    credentials,
    metrics,
    ...(hubRepayments ? { hub: hubRepayments } : {}),
  })
  const rebalancer = new Rebalancer({
    registry,
    client: store.client,
    logger,
    now,
    credentials,
    lifecycle,
    inventory: settings.inventory ?? [],
    ...(settings.rebalance ? { execution: settings.rebalance } : {}),
  })
  // Webhook URLs are checked with the delivery's own policy when they are set.
  const keys = new ApiKeyStore(store.client, { now, webhookPolicy: settingsFromEnv.webhookPolicy })
  // Several instances share one PostgreSQL, so their limits live there; one PGlite process counts in memory.
  const limiter: RateLimiter = settingsFromEnv.databaseUrl
    ? new SqlRateLimiter(store.client, { logger })
    : new MemoryRateLimiter()
  const { rateLimitPolicy, adminToken } = settingsFromEnv
  const webhooks = new WebhookDispatcher({
    client: store.client,
    keys,
    logger,
    now,
    ...(settingsFromEnv.webhookLeaseMs !== undefined ? { leaseMs: settingsFromEnv.webhookLeaseMs } : {}),
    ...(settingsFromEnv.webhookTimeoutMs !== undefined
      ? { timeoutMs: settingsFromEnv.webhookTimeoutMs }
      : {}),
    ...(settingsFromEnv.webhookMaxAttempts !== undefined
      ? { maxAttempts: settingsFromEnv.webhookMaxAttempts }
      : {}),
    ...(settingsFromEnv.webhookRetryBaseMs !== undefined
      ? { backoff: { baseMs: settingsFromEnv.webhookRetryBaseMs } }
      : {}),
    // Plain http to loopback receivers is a development flag, never a default.
    policy: settingsFromEnv.webhookPolicy,
    metrics,
  })
  metrics.sources.requestsByStatus = async () => {
    const { rows } = await store.client.query<{ status: string; count: string | number }>(
      'SELECT status, count(*) AS count FROM requests GROUP BY status',
    )
    return new Map(rows.map((row) => [row.status, Number(row.count)]))
  }
  metrics.sources.webhookBacklog = () => webhooks.backlog()
  metrics.sources.solverLiquidity = () => liquidity.positions()
  return {
    registry,
    store,
    engine,
    liquidity,
    appFees,
    prices,
    logger,
    lifecycle,
    indexer,
    solver,
    repayments,
    rebalancer,
    now,
    keys,
    limiter,
    rateLimitPolicy,
    adminToken,
    webhooks,
    metrics,
    settings: settingsFromEnv,
  }
}

/** The close code websocket clients get on a graceful stop: RFC 6455 "Service Restart", reconnect. */
export const WS_SERVICE_RESTART = 1012

/** Loads the environment's chain config, plugins, settings and store, then serves the intent API. */
export async function startIntentsService(options: IntentsServiceOptions = {}): Promise<IntentsService> {
  const runtime = await createIntentsRuntime(options)
  const { registry, store, engine, logger, lifecycle, indexer, solver, metrics } = runtime
  // Before listening: if LISTEN cannot be set up, start-up fails before the port is bound.
  const events = await StatusEvents.open(store.client, { logger })
  // Status polls are answered from memory until a change of that request is announced.
  const statusCache = new StatusCache()
  statusCache.follow(events)
  let shuttingDown = false
  const app = await createIntentsApp({
    ...runtime,
    statusCache,
    trustProxy: runtime.settings.trustProxy,
    publicBaseUrl: runtime.settings.publicBaseUrl,
    metricsToken: runtime.settings.metricsToken,
    readinessTimeoutMs: runtime.settings.readinessTimeoutMs,
    shuttingDown: () => shuttingDown,
    ...(options.document ? { document: options.document } : {}),
  })
  // Rotations and revocations made by other instances take effect here at once.
  const unwatchKeys = await runtime.keys.watch()
  const port = options.port ?? runtime.settings.port
  const host = options.host ?? runtime.settings.host
  const server = await listen(app, { port, host }).catch(async (error: unknown) => {
    await Promise.allSettled([unwatchKeys(), events.close(), store.close(), registry.close()])
    throw new ConfigError(
      `cannot listen on ${host}:${port} (HOST, INTENTS_PORT): ${error instanceof Error ? error.message : String(error)}`,
      [],
      { cause: error },
    )
  })
  const unwatchRpc = watchRpcCalls(rpcEndpointsOf(registry.chains()), metrics.rpcCall)
  // Requests being answered, so a shutdown can wait for them.
  let inFlight = 0
  let drained: (() => void) | undefined
  server.server.on('request', (_request, response) => {
    inFlight++
    // While draining, keep-alive clients are told to reconnect (to another instance).
    if (shuttingDown) response.setHeader('connection', 'close')
    response.once('close', () => {
      inFlight--
      if (inFlight === 0) drained?.()
    })
  })
  const statusStream = attachStatusStream(server.server, { store, events, logger })
  metrics.sources.websocketClients = () => statusStream.connections()
  const runWorkers = (options.workers ?? runtime.settings.workers) !== false
  const loops: Loop[] = runWorkers
    ? [
        startLoop('indexer', () => indexer.tick(), options.indexerIntervalMs ?? 1000, logger),
        startLoop('solver', () => solver.tick(), options.solverIntervalMs ?? 250, logger),
        // Seconds apart: repayments wait a little so that one transaction repays several fills.
        startLoop('repayments', () => runtime.repayments.tick(), options.repaymentIntervalMs ?? 2000, logger),
        ...(runtime.rebalancer.configured
          ? [
              startLoop(
                'rebalancer',
                () => runtime.rebalancer.tick(),
                options.rebalanceIntervalMs ?? runtime.settings.rebalanceIntervalMs ?? 10_000,
                logger,
              ),
            ]
          : []),
        startWebhookLoop(() => runtime.webhooks.tick(), {
          logger,
          ...(options.webhookIntervalMs !== undefined ? { intervalMs: options.webhookIntervalMs } : {}),
        }),
      ]
    : []

  const closeEverything = async (): Promise<void> => {
    await Promise.allSettled(loops.map((loop) => loop.stop()))
    unwatchRpc()
    await events.close()
    await unwatchKeys()
    await Promise.allSettled([store.close(), registry.close()])
  }
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Websockets first: server.close() waits for upgraded sockets, which closeAllConnections misses.
      await statusStream.close()
      await server.close()
      await closeEverything()
    })()
    return closing
  }

  const drain = async (): Promise<void> => {
    shuttingDown = true
    // No new connections from here; idle keep-alive connections are closed by server.close().
    const stopped = new Promise<void>((resolve) => server.server.close(() => resolve()))
    server.server.closeIdleConnections()
    solver.stop()
    const clientsClosed = statusStream.close({ code: WS_SERVICE_RESTART, reason: 'service restart' })
    const requestsDone =
      inFlight === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            drained = resolve
          })
    // The workers end their pass; then what they claimed and did not finish goes back at once.
    const workersDone = Promise.allSettled(loops.map((loop) => loop.stop())).then(async () => {
      if (!runWorkers) return
      const [jobs, events] = await Promise.all([solver.releaseLeases(), runtime.webhooks.releaseLeases()])
      if (jobs + events > 0)
        logger.info('released leases for other instances', { jobs, webhookEvents: events })
    })
    await Promise.all([requestsDone, clientsClosed, workersDone])
    server.server.closeAllConnections()
    await stopped
  }

  let shutdownRun: Promise<boolean> | undefined
  const shutdown = (shutdownOptions: { readonly timeoutMs?: number } = {}): Promise<boolean> => {
    shutdownRun ??= (async () => {
      const timeoutMs = shutdownOptions.timeoutMs ?? runtime.settings.shutdownTimeoutMs
      let timer: NodeJS.Timeout | undefined
      const outOfTime = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs)
      })
      const finished = await Promise.race([drain().then(() => true as const), outOfTime])
      clearTimeout(timer)
      if (!finished)
        logger.warn(`shutdown took longer than ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS): closing anyway`)
      closing ??= closeEverything()
      await closing
      return finished
    })()
    return shutdownRun
  }

  return {
    ...server,
    registry,
    store,
    engine,
    lifecycle,
    indexer,
    solver,
    repayments: runtime.repayments,
    rebalancer: runtime.rebalancer,
    metrics,
    close,
    shutdown,
  }
}
