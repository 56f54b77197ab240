/**
 * The intent service's health probes: `GET /healthz` (the process serves HTTP) and `GET /readyz`
 * (the database answers, every migration of this code is applied, every chain's node answers).
 */
import {
  createChainReadiness,
  type IntentsApi,
  ProbeTimeout,
  type Registry,
  withDeadline,
} from '@pontis/core'
import {
  createReadinessHandler,
  type OperationHandler,
  type ReadinessCheckResult,
  type ResponseOf,
} from '@pontis/http'
import { loadMigrations, type RequestStore } from './store/index.js'

export interface HealthOptions {
  readonly registry: Registry
  readonly store: RequestStore
  /** Bound of each probe (database and chains). */
  readonly timeoutMs: number
  /** True once a shutdown began. */
  readonly shuttingDown?: () => boolean
}

function failing(started: number, error: unknown, timeoutMs: number): ReadinessCheckResult {
  return {
    status: 'failing',
    latencyMs: Math.round(performance.now() - started),
    detail:
      error instanceof ProbeTimeout
        ? `no answer within ${timeoutMs} ms`
        : (error instanceof Error ? error.message : String(error)).slice(0, 200),
  }
}

/** The database and migration checks: one round trip each, bounded by `timeoutMs`. */
function databaseChecks(
  store: RequestStore,
  timeoutMs: number,
): () => Promise<Record<string, ReadinessCheckResult>> {
  let expected: Promise<readonly number[]> | undefined
  return async () => {
    expected ??= loadMigrations().then((migrations) => migrations.map((migration) => migration.version))
    const started = performance.now()
    let database: ReadinessCheckResult
    let migrations: ReadinessCheckResult
    try {
      const { rows } = await withDeadline(
        () => store.client.query<{ version: number }>('SELECT version FROM schema_migrations'),
        timeoutMs,
      )
      database = { status: 'ok', latencyMs: Math.round(performance.now() - started) }
      const applied = new Set(rows.map((row) => Number(row.version)))
      const versions = await expected
      const missing = versions.filter((version) => !applied.has(version))
      migrations =
        missing.length === 0
          ? { status: 'ok', detail: `${versions.length} of ${versions.length} applied` }
          : {
              status: 'failing',
              detail: `${versions.length - missing.length} of ${versions.length} applied; missing ${missing.join(', ')}`,
            }
    } catch (error) {
      database = failing(started, error, timeoutMs)
      migrations = { status: 'failing', detail: 'unknown: the database did not answer' }
    }
    return { database, migrations }
  }
}

type HealthzHandler = OperationHandler<unknown, ResponseOf<IntentsApi.GetHealthzResponses>>

export function createHealthHandlers(options: HealthOptions): {
  getHealthz: HealthzHandler
  getReadyz: OperationHandler
} {
  return {
    getHealthz: () => ({ status: 200, body: { status: 'ok' } }),
    getReadyz: createReadinessHandler({
      chains: createChainReadiness(options.registry, { timeoutMs: options.timeoutMs }),
      checks: databaseChecks(options.store, options.timeoutMs),
      ...(options.shuttingDown ? { shuttingDown: options.shuttingDown } : {}),
    }),
  }
}
