import {
  createLogger,
  type EnvironmentVariables,
  type Logger,
  loadRegistry,
  type Registry,
} from '@pontis/core'
import { type LoadedDocument, listen, type RunningServer } from '@pontis/http'
import { createIntentsApp } from './app.js'
import { StatusEvents } from './events/index.js'
import { ApiKeyStore, resolveAdminToken } from './keys/index.js'
import { Indexer } from './lifecycle/indexer.js'
import { LifecycleStore } from './lifecycle/lifecycle-store.js'
import { type Loop, startLoop } from './lifecycle/loop.js'
import { Solver } from './lifecycle/solver.js'
import { QuoteEngine } from './quote/engine.js'
import { loadPriceSource } from './quote/prices.js'
import { loadSolverSettings, solverCredentialsFor } from './quote/settings.js'
import {
  MemoryRateLimiter,
  type RateLimiter,
  rateLimitPolicyFromEnv,
  SqlRateLimiter,
} from './ratelimit/index.js'
import { StatusCache } from './status.js'
import { openRequestStore, type RequestStore } from './store/index.js'
import { toNewRequest } from './store-bridge.js'
import { startWebhookLoop, WebhookDispatcher } from './webhooks/index.js'
import { attachStatusStream } from './ws/index.js'

export const DEFAULT_INTENTS_PORT = 4000

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
  /** Pause between solver passes. Default 250 ms. */
  readonly solverIntervalMs?: number
  /** Pause between webhook delivery passes. Default 200 ms. */
  readonly webhookIntervalMs?: number
}

export interface IntentsService extends RunningServer {
  readonly registry: Registry
  readonly store: RequestStore
  readonly engine: QuoteEngine
  readonly lifecycle: LifecycleStore
  readonly indexer: Indexer
  readonly solver: Solver
}

/** `INTENTS_PORT`, else 4000; a value that is not a port is a start-up error naming the variable. */
export function resolveIntentsPort(env: NodeJS.ProcessEnv): number {
  const raw = env.INTENTS_PORT
  if (raw === undefined || raw === '') return DEFAULT_INTENTS_PORT
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`INTENTS_PORT must be a port number (0-65535), got "${raw}"`)
  }
  return port
}

/** Crash tests name a point with PONTIS_FAILPOINT; the process kills itself there, as a power cut would. */
function crashAt(wanted: string, logger: Logger): (point: string) => void {
  return (point) => {
    if (point !== wanted) return
    logger.warn(`failpoint ${point}: killing the process`)
    process.kill(process.pid, 'SIGKILL')
  }
}

/** The engine, its store and registry for one environment: what the HTTP app and tests build on. */
export async function createIntentsRuntime(options: IntentsServiceOptions = {}) {
  const env: EnvironmentVariables = options.env ?? process.env
  const logger = options.logger ?? createLogger('intents')
  const configOptions = { env, ...(options.configDir ? { configDir: options.configDir } : {}) }
  const registry = await loadRegistry({ ...configOptions, logger })
  const environment = registry.environment
  const [settings, prices, store] = await Promise.all([
    loadSolverSettings({ ...configOptions, environment }),
    loadPriceSource({ ...configOptions, environment }),
    openRequestStore({
      ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
      ...(env.DATABASE_SCHEMA ? { schema: env.DATABASE_SCHEMA } : {}),
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.now ? { now: options.now } : {}),
      logger,
    }),
  ])
  const engine = new QuoteEngine({
    registry,
    prices,
    settings,
    logger,
    ...(options.now ? { now: options.now } : {}),
    saveRequest: async (request) => {
      await store.insertRequest(toNewRequest(request))
    },
  })
  const now = options.now ?? Date.now
  const lifecycle = new LifecycleStore(store, now)
  const indexer = new Indexer({ registry, lifecycle, logger, now })
  const solver = new Solver({
    registry,
    lifecycle,
    logger,
    now,
    credentials: (vmType) => solverCredentialsFor(settings, vmType),
    ...(env.SOLVER_LEASE_MS ? { leaseMs: Number(env.SOLVER_LEASE_MS) } : {}),
    ...(env.PONTIS_FAILPOINT ? { failpoint: crashAt(env.PONTIS_FAILPOINT, logger) } : {}),
  })
  const keys = new ApiKeyStore(store.client, { now })
  // Several instances share one PostgreSQL, so their limits live there; one PGlite process counts in memory.
  const limiter: RateLimiter = env.DATABASE_URL
    ? new SqlRateLimiter(store.client, { logger })
    : new MemoryRateLimiter()
  const rateLimitPolicy = rateLimitPolicyFromEnv(env)
  const adminToken = resolveAdminToken(env)
  const webhooks = new WebhookDispatcher({
    client: store.client,
    keys,
    logger,
    now,
    ...(env.WEBHOOK_LEASE_MS ? { leaseMs: Number(env.WEBHOOK_LEASE_MS) } : {}),
    ...(env.WEBHOOK_TIMEOUT_MS ? { timeoutMs: Number(env.WEBHOOK_TIMEOUT_MS) } : {}),
    // Plain http to loopback receivers is a development flag, never a default.
    policy: {
      allowHttpLoopback: env.WEBHOOKS_ALLOW_HTTP_LOOPBACK === 'true',
      allowPrivate: env.WEBHOOKS_ALLOW_PRIVATE === 'true',
    },
  })
  return {
    registry,
    store,
    engine,
    logger,
    lifecycle,
    indexer,
    solver,
    now,
    keys,
    limiter,
    rateLimitPolicy,
    adminToken,
    webhooks,
  }
}

/** Loads the environment's chain config, plugins, settings and store, then serves the intent API. */
export async function startIntentsService(options: IntentsServiceOptions = {}): Promise<IntentsService> {
  const env = options.env ?? process.env
  const runtime = await createIntentsRuntime(options)
  const { registry, store, engine, logger, lifecycle, indexer, solver } = runtime
  // Before listening: if LISTEN cannot be set up, start-up fails before the port is bound.
  const events = await StatusEvents.open(store.client, { logger })
  // Status polls are answered from memory until a change of that request is announced.
  const statusCache = new StatusCache()
  statusCache.follow(events)
  const app = await createIntentsApp({
    ...runtime,
    statusCache,
    trustProxy: env.TRUST_PROXY === 'true',
    ...(options.document ? { document: options.document } : {}),
  })
  // Rotations and revocations made by other instances take effect here at once.
  const unwatchKeys = await runtime.keys.watch()
  const server = await listen(app, {
    port: options.port ?? resolveIntentsPort(env),
    host: options.host ?? env.HOST ?? '127.0.0.1',
  })
  const statusStream = attachStatusStream(server.server, { store, events, logger })
  const loops: Loop[] =
    (options.workers ?? env.PONTIS_WORKERS !== 'off') === false
      ? []
      : [
          startLoop('indexer', () => indexer.tick(), options.indexerIntervalMs ?? 1000, logger),
          startLoop('solver', () => solver.tick(), options.solverIntervalMs ?? 250, logger),
          startWebhookLoop(() => runtime.webhooks.tick(), {
            logger,
            ...(options.webhookIntervalMs !== undefined ? { intervalMs: options.webhookIntervalMs } : {}),
          }),
        ]
  return {
    ...server,
    registry,
    store,
    engine,
    lifecycle,
    indexer,
    solver,
    close: async () => {
      // Websockets first: server.close() waits for upgraded sockets, which closeAllConnections misses.
      await statusStream.close()
      await server.close()
      await Promise.allSettled(loops.map((loop) => loop.stop()))
      await events.close()
      await unwatchKeys()
      await Promise.allSettled([store.close(), registry.close()])
    },
  }
}
