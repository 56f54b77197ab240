/**
 * Prometheus metrics shared by both services (prom-client): the HTTP families every app built by
 * `createApiApp` records on both dispatch paths, the RPC families fed by core's RPC-call hook, and
 * the `GET /metrics` handler with its access rule (a bearer token, or this host's own scraper).
 * Each service has its own registry, so several services in one process (tests) never share counters.
 */
import { BlockList } from 'node:net'
import { type ChainReadiness, PontisError, type RpcCallObservation } from '@pontis/core'
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'
import type { OperationHandler, OperationRequest } from './app.js'
import { createBearerCheck } from './bearer.js'

export { Registry as MetricsRegistry } from 'prom-client'

/** Seconds; from a cached status poll (about a millisecond) to a slow quote or attestation. */
export const LATENCY_BUCKETS_SECONDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The operation label of a request no operation matched (unknown path, wrong method, preflight). */
export const UNMATCHED_OPERATION = 'unmatched'

/** A registry with the process's default metrics (CPU, memory, event-loop lag, open handles). */
export function createMetricsRegistry(): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return registry
}

/** Records one answered request; `errorCode` is the catalogued code of an error answer. */
export type HttpObserver = (
  operation: string,
  status: number,
  errorCode: string | undefined,
  seconds: number,
) => void

/**
 * `pontis_http_requests_total{operation,status,error_code}` and
 * `pontis_http_request_duration_seconds{operation,status}`. Every label comes from a closed set:
 * the document's operationIds (or `unmatched`), HTTP statuses, and the error catalog.
 */
export function createHttpObserver(registry: Registry, operationIds: readonly string[]): HttpObserver {
  // Apps that share one registry (two listeners over one runtime) share the families too.
  const requests =
    (registry.getSingleMetric('pontis_http_requests_total') as
      | Counter<'operation' | 'status' | 'error_code'>
      | undefined) ??
    new Counter({
      name: 'pontis_http_requests_total',
      help: 'HTTP requests answered, by operationId (unmatched: no operation), status and errorCode (empty on success).',
      labelNames: ['operation', 'status', 'error_code'] as const,
      registers: [registry],
    })
  const duration =
    (registry.getSingleMetric('pontis_http_request_duration_seconds') as
      | Histogram<'operation' | 'status'>
      | undefined) ??
    new Histogram({
      name: 'pontis_http_request_duration_seconds',
      help: 'Time from receiving a request to its answer being ready, by operationId and status.',
      labelNames: ['operation', 'status'] as const,
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    })
  const known = new Set(operationIds)
  return (operation, status, errorCode, seconds) => {
    const name = known.has(operation) ? operation : UNMATCHED_OPERATION
    const statusLabel = String(status)
    requests.inc({ operation: name, status: statusLabel, error_code: errorCode ?? '' })
    duration.observe({ operation: name, status: statusLabel }, seconds)
  }
}

/**
 * `pontis_rpc_calls_total{chain,outcome}` and `pontis_rpc_call_duration_seconds{chain}`: every call
 * to a chain's node (core's `watchRpcCalls` feeds them); `chain` is the configured chain id.
 */
export function createRpcCallMetrics(
  registry: Registry,
  chainIds: readonly number[],
): (observation: RpcCallObservation) => void {
  const calls = new Counter({
    name: 'pontis_rpc_calls_total',
    help: "Calls to a chain's node (RPC or chain API), by chain id and outcome (ok, error: unreachable, 429 or 5xx; timeout: no answer in time; disagreement: a block hash the chain's other nodes contradict, not trusted).",
    labelNames: ['chain', 'outcome'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'pontis_rpc_call_duration_seconds',
    help: "Duration of calls to a chain's node, by chain id.",
    labelNames: ['chain'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [registry],
  })
  for (const chainId of chainIds) {
    for (const outcome of ['ok', 'error', 'timeout', 'disagreement'])
      calls.inc({ chain: String(chainId), outcome }, 0)
  }
  return ({ chainId, outcome, durationSeconds }) => {
    calls.inc({ chain: String(chainId), outcome })
    // A disagreement is a verdict on an answer already timed, not a call of its own.
    if (outcome !== 'disagreement') duration.observe({ chain: String(chainId) }, durationSeconds)
  }
}

const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')
/** Headers a reverse proxy adds: a request carrying one did not come straight from this host. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const

/** A connection from this host with no proxy in between (IPv4-mapped loopback counts). */
export function isDirectLoopback(request: OperationRequest): boolean {
  if (FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined)) return false
  const address = request.clientIp
  return LOOPBACK.check(address, address.includes(':') ? 'ipv6' : 'ipv4')
}

export interface MetricsHandlerOptions {
  readonly registry: Registry
  /** The bearer token scrapers send (`METRICS_TOKEN`); unset: only this host's own scraper is answered. */
  readonly token: string | undefined
  /** The variable that sets the token, for messages. */
  readonly tokenVariable?: string
}

/**
 * `GET /metrics`. With a token the route asks for `Authorization: Bearer <token>` (compared in
 * constant time); without one it exists only for a scraper on this host, and anyone else sees the
 * answer of a path that does not exist.
 */
export function createMetricsHandler(options: MetricsHandlerOptions): OperationHandler {
  const { registry } = options
  const variable = options.tokenVariable ?? 'METRICS_TOKEN'
  const checkToken = options.token === undefined ? undefined : createBearerCheck(options.token)
  return async (request) => {
    if (checkToken === undefined) {
      if (!isDirectLoopback(request))
        throw new PontisError(
          'ROUTE_NOT_FOUND',
          'No route for GET /metrics. The API reference is at /documentation.',
        )
    } else {
      const authorization = request.headers.authorization
      const verdict = checkToken(Array.isArray(authorization) ? authorization[0] : authorization)
      if (verdict === 'missing')
        throw new PontisError('UNAUTHORIZED', `/metrics needs Authorization: Bearer <${variable}>.`)
      if (verdict === 'wrong') throw new PontisError('UNAUTHORIZED', 'The metrics token is wrong.')
    }
    return {
      status: 200,
      type: registry.contentType,
      headers: { 'cache-control': 'no-store' },
      body: await registry.metrics(),
    }
  }
}

/** One readiness check besides the chains. */
export interface ReadinessCheckResult {
  readonly status: 'ok' | 'failing'
  readonly latencyMs?: number
  readonly detail?: string
}

export interface ReadinessHandlerOptions {
  /** The chains' readiness (core's `createChainReadiness`). */
  readonly chains: () => Promise<readonly ChainReadiness[]>
  /** Further checks by name (the database, its migrations). */
  readonly checks?: () => Promise<Readonly<Record<string, ReadinessCheckResult>>>
  /** True once the process drains before exiting: never ready again. */
  readonly shuttingDown?: () => boolean
}

/** `GET /readyz`: 200 when every check and chain is ok, else 503 with the same body. */
export function createReadinessHandler(options: ReadinessHandlerOptions): OperationHandler {
  return async () => {
    const noChecks: Readonly<Record<string, ReadinessCheckResult>> = {}
    const [chains, checks] = await Promise.all([options.chains(), options.checks?.() ?? noChecks])
    const shuttingDown = options.shuttingDown?.() === true
    const ready =
      !shuttingDown &&
      chains.every((chain) => chain.status === 'ok') &&
      Object.values(checks).every((check) => check.status === 'ok')
    return {
      status: ready ? 200 : 503,
      headers: { 'cache-control': 'no-store' },
      body: {
        status: ready ? 'ready' : 'not_ready',
        ...(shuttingDown ? { shuttingDown: true } : {}),
        checks,
        chains,
      },
    }
  }
}
