/**
 * The intent service's Prometheus metrics (prom-client), served by `GET /metrics`. Besides the HTTP
 * and RPC families every Pontis app records (packages/http), the service's own: quotes by route and
 * outcome, requests by status and the time spent in each, solver jobs, fill latency and failures by
 * `failReason`, solver repayments and deposit-address sweeps, the webhook outbox, and websocket
 * clients. Every label comes from a closed set (configured chain ids, statuses, job kinds,
 * catalogued codes); never a request id or an address.
 */
import type { RpcCallObservation } from '@pontis/core'
import { createMetricsRegistry, createRpcCallMetrics, type MetricsRegistry } from '@pontis/http'
import { Counter, Gauge, Histogram } from 'prom-client'
import type { JobKind } from './lifecycle/lifecycle-store.js'
import type { RepaymentState, SweepState } from './lifecycle/repayment.js'
import { TRANSITIONS } from './lifecycle/state-machine.js'
import type { LiquidityPosition } from './quote/inventory.js'

/** Seconds a request may spend in one status: from an instant fill to a day-long Bitcoin wait. */
const STATE_SECONDS_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600, 21_600, 86_400]
/** Seconds from a fill job being queued to its transaction confirmed. */
const FILL_SECONDS_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 900, 3600]

export type QuoteKind = 'quote' | 'price'
/** How a solver job ended. */
export type JobOutcome = 'confirmed' | 'reverted' | 'failed'
/** How one webhook delivery attempt ended. */
export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'dead' | 'disabled'
/** When a reorganisation removed a deposit: before its fill was sent (nothing paid) or after (paid). */
export type DepositReorgStage = 'before_fill' | 'after_fill'

/** What the gauges read when scraped; each is set once the part it reads exists. */
export interface IntentsMetricsSources {
  /** Requests per status, from the store (one grouped count over its status index). */
  requestsByStatus?: () => Promise<ReadonlyMap<string, number>>
  /** Webhook events waiting for delivery. */
  webhookBacklog?: () => Promise<number>
  /** Open websocket connections. */
  websocketClients?: () => number
  /** The solver's balance, committed and available liquidity per chain and currency. */
  solverLiquidity?: () => Promise<readonly LiquidityPosition[]>
}

export interface IntentsMetrics {
  readonly registry: MetricsRegistry
  /** Set by the service as its parts start; read at each scrape. */
  readonly sources: IntentsMetricsSources
  /** One answered quote or price; the chains are configured ids or `other`, outcome `ok` or an errorCode. */
  quoteAnswered(kind: QuoteKind, origin: string, destination: string, outcome: string): void
  /** A request moved from `from` to `to` after `secondsInFrom` there; a failure with its reason. */
  transitioned(from: string, to: string, secondsInFrom: number, failReason: string | undefined): void
  /** A solver job reached a final state; a confirmed fill with its latency since it was queued. */
  jobFinished(kind: JobKind, outcome: JobOutcome, fillSeconds?: number): void
  webhookAttempted(outcome: WebhookAttemptOutcome): void
  /** `count` requests' repayments (or deposit-address sweeps) entered `state`. */
  repayment(kind: BooksKind, state: BooksState, count: number): void
  /** A deposit a reorganisation removed, before its fill was sent or after. */
  depositReorged(chainId: number, stage: DepositReorgStage): void
  /** A job's transaction a reorganisation removed after it counted as final (sent again). */
  settledReorged(chainId: number, kind: JobKind): void
  rpcCall(observation: RpcCallObservation): void
}

const STATUSES = Object.keys(TRANSITIONS)
const JOB_KINDS: readonly JobKind[] = [
  'fill',
  'refund',
  'excess_refund',
  'orphan_refund',
  'submit_deposit',
  'repayment',
  'sweep',
  'hub_relay',
  'app_fee_claim',
  'rebalance_step',
]
/** How a filled request's solver is paid back: out of the depository, or by sweeping its deposit address. */
export type BooksKind = 'repayment' | 'sweep'
/** States of repayments (owed, batched, paid, failed) and of sweeps (owed, queued, swept, failed). */
export type BooksState = RepaymentState | SweepState
const BOOKS_STATES: Readonly<Record<BooksKind, readonly BooksState[]>> = {
  repayment: ['batched', 'paid', 'owed', 'failed'],
  sweep: ['queued', 'swept', 'failed'],
}
const JOB_OUTCOMES: readonly JobOutcome[] = ['confirmed', 'reverted', 'failed']
const WEBHOOK_OUTCOMES: readonly WebhookAttemptOutcome[] = ['delivered', 'retry', 'dead', 'disabled']

/** The registry and families of one intent service. */
export function createIntentsMetrics(
  options: { readonly chainIds?: readonly number[] } = {},
): IntentsMetrics {
  const registry = createMetricsRegistry()
  const registers = [registry]
  const sources: IntentsMetricsSources = {}
  const quotes = new Counter({
    name: 'pontis_quotes_total',
    help: 'Quotes (POST /quote, /quote/v2) and prices (POST /price) answered, by origin and destination chain id (other: not configured), kind and outcome (ok, or the errorCode).',
    labelNames: ['origin_chain', 'destination_chain', 'kind', 'outcome'] as const,
    registers,
  })
  new Gauge({
    name: 'pontis_requests',
    help: 'Stored requests by status, counted at scrape time.',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      const counts = await sources.requestsByStatus?.()
      if (counts === undefined) return
      for (const status of STATUSES) this.set({ status }, counts.get(status) ?? 0)
    },
  })
  const transitions = new Counter({
    name: 'pontis_request_transitions_total',
    help: 'Requests moved between statuses, by the status left and the status entered.',
    labelNames: ['from', 'to'] as const,
    registers,
  })
  const stateSeconds = new Histogram({
    name: 'pontis_request_state_seconds',
    help: 'Time a request spent in a status before leaving it (since its last change), by that status.',
    labelNames: ['status'] as const,
    buckets: STATE_SECONDS_BUCKETS,
    registers,
  })
  const failures = new Counter({
    name: 'pontis_request_failures_total',
    help: 'Requests that entered failure or refund with a failReason, by failReason.',
    labelNames: ['fail_reason'] as const,
    registers,
  })
  const jobs = new Counter({
    name: 'pontis_solver_jobs_total',
    help: 'Solver jobs that reached a final state, by kind and outcome (confirmed, reverted, failed: gave up).',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  })
  const fillSeconds = new Histogram({
    name: 'pontis_fill_seconds',
    help: 'Time from a fill job being queued (deposit accepted) to its transaction confirmed.',
    buckets: FILL_SECONDS_BUCKETS,
    registers,
  })
  new Gauge({
    name: 'pontis_webhook_backlog',
    help: 'Webhook events waiting for delivery (pending), at scrape time.',
    registers,
    async collect() {
      const backlog = await sources.webhookBacklog?.()
      if (backlog !== undefined) this.set(backlog)
    },
  })
  const webhookAttempts = new Counter({
    name: 'pontis_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retry: failed and rescheduled, dead: dead-lettered after the last attempt, disabled: the key has no target).',
    labelNames: ['outcome'] as const,
    registers,
  })
  const repayments = new Counter({
    name: 'pontis_solver_repayments_total',
    help: 'Filled requests whose solver repayment entered a state, by kind (repayment: out of the depository; sweep: out of the deposit address) and state (batched/queued, paid/swept, owed: a reverted batch owed again, failed: gave up after signing).',
    labelNames: ['kind', 'state'] as const,
    registers,
  })
  new Gauge({
    name: 'pontis_websocket_clients',
    help: 'Open websocket connections of the status stream.',
    registers,
    collect() {
      this.set(sources.websocketClients?.() ?? 0)
    },
  })
  new Gauge({
    name: 'pontis_solver_liquidity',
    help: "The solver's liquidity in smallest units (as a float), by chain id, currency and part: balance (as last read by a quote), committed (live quotes and requests not yet filled), available (balance less committed).",
    labelNames: ['chain', 'currency', 'part'] as const,
    registers,
    async collect() {
      const positions = await sources.solverLiquidity?.()
      if (positions === undefined) return
      this.reset()
      for (const { chainId, currency, balance, committed, available } of positions) {
        const labels = { chain: String(chainId), currency }
        this.set({ ...labels, part: 'balance' }, Number(balance))
        this.set({ ...labels, part: 'committed' }, Number(committed))
        this.set({ ...labels, part: 'available' }, Number(available))
      }
    },
  })
  const depositReorgs = new Counter({
    name: 'pontis_deposit_reorgs_total',
    help: 'Deposits a chain reorganisation removed, by chain and stage (before_fill: nothing was paid; after_fill: the fill was sent for a deposit that no longer exists).',
    labelNames: ['chain', 'stage'] as const,
    registers,
  })
  const settledReorgs = new Counter({
    name: 'pontis_settled_transaction_reorgs_total',
    help: 'Solver transactions (fills, refunds, repayments…) a chain reorganisation removed after they counted as final, by chain and job kind; each is sent again (the same signed bytes), and an error is logged.',
    labelNames: ['chain', 'kind'] as const,
    registers,
  })
  // Zeros, so an alert on increase() sees the first event.
  for (const chain of options.chainIds ?? []) {
    for (const stage of ['before_fill', 'after_fill'] as const)
      depositReorgs.inc({ chain: String(chain), stage }, 0)
    settledReorgs.inc({ chain: String(chain), kind: 'fill' }, 0)
  }
  for (const kind of JOB_KINDS) for (const outcome of JOB_OUTCOMES) jobs.inc({ kind, outcome }, 0)
  for (const outcome of WEBHOOK_OUTCOMES) webhookAttempts.inc({ outcome }, 0)
  for (const [kind, states] of Object.entries(BOOKS_STATES))
    for (const state of states) repayments.inc({ kind, state }, 0)
  return {
    registry,
    sources,
    quoteAnswered: (kind, origin, destination, outcome) =>
      quotes.inc({ origin_chain: origin, destination_chain: destination, kind, outcome }),
    transitioned: (from, to, secondsInFrom, failReason) => {
      transitions.inc({ from, to })
      stateSeconds.observe({ status: from }, Math.max(0, secondsInFrom))
      if (failReason !== undefined) failures.inc({ fail_reason: failReason })
    },
    jobFinished: (kind, outcome, seconds) => {
      jobs.inc({ kind, outcome })
      if (seconds !== undefined) fillSeconds.observe(Math.max(0, seconds))
    },
    webhookAttempted: (outcome) => webhookAttempts.inc({ outcome }),
    repayment: (kind, state, count) => {
      if (count > 0) repayments.inc({ kind, state }, count)
    },
    depositReorged: (chainId, stage) => depositReorgs.inc({ chain: String(chainId), stage }),
    settledReorged: (chainId, kind) => settledReorgs.inc({ chain: String(chainId), kind }),
    rpcCall: createRpcCallMetrics(registry, options.chainIds ?? []),
  }
}
