import { fileURLToPath } from 'node:url'
import { DEFAULT_READINESS_TIMEOUT_MS, type Logger, type Registry } from '@pontis/core'
import {
  type ApiApp,
  createApiApp,
  createMetricsHandler,
  type LoadedDocument,
  loadOpenApiDocument,
} from '@pontis/http'
import { createAppFeeHandlers } from './app-fees/handlers.js'
import type { AppFeeLedger } from './app-fees/ledger.js'
import { createCurrencyHandlers } from './currencies/handlers.js'
import { publicBaseUrlResolver } from './currencies/public-url.js'
import { createDashboardHandlers } from './dashboard.js'
import { createHealthHandlers } from './health.js'
import { createHistoryHandlers } from './history/index.js'
import { type ApiKeyStore, createAdminHandlers } from './keys/index.js'
import { createLifecycleHandlers } from './lifecycle/handlers.js'
import type { Indexer } from './lifecycle/indexer.js'
import type { LifecycleStore } from './lifecycle/lifecycle-store.js'
import type { Rebalancer } from './lifecycle/rebalance.js'
import type { Repayments } from './lifecycle/repayment.js'
import { createRebalanceAdminHandlers, createRepaymentAdminHandlers } from './lifecycle/repayment-handlers.js'
import type { Solver } from './lifecycle/solver.js'
import { createIntentsMetrics, type IntentsMetrics } from './metrics.js'
import { createPartnerHandlers } from './partner/handlers.js'
import { createChainHandlers } from './quote/chains.js'
import type { QuoteEngine } from './quote/engine.js'
import { createQuoteHandlers } from './quote/handlers.js'
import type { LiquidityBook } from './quote/inventory.js'
import { createInventoryHandlers } from './quote/inventory-handlers.js'
import type { PriceSource } from './quote/prices.js'
import { createRateLimitGate, type RateLimiter, type RateLimitPolicy } from './ratelimit/index.js'
import type { StatusCache } from './status/cache.js'
import { createStatusHandlers } from './status/handlers.js'
import type { RequestStore } from './store/index.js'
import { createWebhookAdminHandlers, type WebhookDispatcher } from './webhooks/index.js'

export const INTENTS_DOCUMENT_PATH = fileURLToPath(new URL('../../../openapi/intents.yaml', import.meta.url))

export interface IntentsAppOptions {
  readonly registry: Registry
  readonly engine: QuoteEngine
  /** App fees accrued and claimed, for `/app-fees/{wallet}/...`. */
  readonly appFees: AppFeeLedger
  /** The solver's liquidity, for `GET /admin/inventory`. */
  readonly liquidity: LiquidityBook
  /** The price source of the engine, for `GET /currencies/token/price`. */
  readonly prices: PriceSource
  readonly store: RequestStore
  readonly lifecycle: LifecycleStore
  readonly indexer: Indexer
  readonly solver: Solver
  /** The solver's repayments, for the operator's `GET /admin/repayments`. */
  readonly repayments: Repayments
  /** The solver's rebalancing, for the operator's `GET /admin/rebalances`. */
  readonly rebalancer: Rebalancer
  readonly keys: ApiKeyStore
  readonly limiter: RateLimiter
  /** Limits per caller kind; `null` turns limiting off (keys are still checked). Default: the built-in policy. */
  readonly rateLimitPolicy?: RateLimitPolicy | null
  /** Bearer token of the admin API; unset: the admin API answers 403. */
  readonly adminToken?: string | undefined
  readonly webhooks: WebhookDispatcher
  /** Status records served from memory; it must follow the status channel (`StatusCache.follow`). */
  readonly statusCache?: StatusCache
  readonly logger: Logger
  /** Defaults to openapi/intents.yaml. */
  readonly document?: LoadedDocument
  readonly trustProxy?: boolean
  /** `PUBLIC_BASE_URL`: where the service's own URLs (icons) start; default: the request's origin. */
  readonly publicBaseUrl?: string | undefined
  /** Clock (Unix ms) for permit expiry; the service's own, so tests can move it. */
  readonly now?: () => number
  /** Where `GET /metrics` reads from and requests are counted. Default: a registry of this app's own. */
  readonly metrics?: IntentsMetrics
  /** `METRICS_TOKEN`; unset: `/metrics` answers only this host's own scraper. */
  readonly metricsToken?: string | undefined
  /** Bound of each `/readyz` probe. Default 3000 ms. */
  readonly readinessTimeoutMs?: number
  /** True once a shutdown began: `/readyz` answers 503. */
  readonly shuttingDown?: () => boolean
}

/** The intent service's Koa app: every operation of openapi/intents.yaml, validated and routed. */
export async function createIntentsApp(options: IntentsAppOptions): Promise<ApiApp> {
  const loaded = options.document ?? (await loadOpenApiDocument(INTENTS_DOCUMENT_PATH))
  const publicBaseUrl = publicBaseUrlResolver({
    publicBaseUrl: options.publicBaseUrl,
    trustProxy: options.trustProxy ?? false,
  })
  const metrics = options.metrics ?? createIntentsMetrics()
  return createApiApp({
    loaded,
    logger: options.logger,
    metrics: metrics.registry,
    trustProxy: options.trustProxy ?? false,
    gate: createRateLimitGate({
      limiter: options.limiter,
      keys: options.keys,
      ...(options.rateLimitPolicy !== undefined ? { policy: options.rateLimitPolicy } : {}),
      logger: options.logger,
    }),
    // Status polls are the most frequent call by far; they skip Koa's per-request machinery.
    directOperations: ['getIntentStatusV3', 'getIntentStatus'],
    handlers: {
      ...createChainHandlers(options.registry, publicBaseUrl),
      ...createCurrencyHandlers({ registry: options.registry, prices: options.prices, publicBaseUrl }),
      ...createQuoteHandlers(options.engine, options.keys, { metrics, registry: options.registry }),
      ...createAdminHandlers({
        keys: options.keys,
        adminToken: options.adminToken,
        logger: options.logger,
        ...(options.rateLimitPolicy !== undefined ? { rateLimitPolicy: options.rateLimitPolicy } : {}),
      }),
      ...createAppFeeHandlers(options),
      ...createInventoryHandlers({ liquidity: options.liquidity, adminToken: options.adminToken }),
      ...createWebhookAdminHandlers({ dispatcher: options.webhooks, adminToken: options.adminToken }),
      ...createPartnerHandlers({
        keys: options.keys,
        dispatcher: options.webhooks,
        logger: options.logger,
        ...(options.rateLimitPolicy !== undefined ? { rateLimitPolicy: options.rateLimitPolicy } : {}),
      }),
      ...createRepaymentAdminHandlers({ repayments: options.repayments, adminToken: options.adminToken }),
      ...createRebalanceAdminHandlers({ rebalancer: options.rebalancer, adminToken: options.adminToken }),
      ...createStatusHandlers(options.store, options.statusCache),
      ...createHistoryHandlers({
        store: options.store,
        keys: options.keys,
        registry: options.registry,
        adminToken: options.adminToken,
      }),
      ...createLifecycleHandlers(options),
      ...createDashboardHandlers(),
      getMetrics: createMetricsHandler({ registry: metrics.registry, token: options.metricsToken }),
      ...createHealthHandlers({
        registry: options.registry,
        store: options.store,
        timeoutMs: options.readinessTimeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS,
        ...(options.shuttingDown ? { shuttingDown: options.shuttingDown } : {}),
      }),
    },
  })
}
