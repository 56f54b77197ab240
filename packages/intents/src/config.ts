/**
 * The intent service's own environment variables, read and checked once before anything else
 * loads: a bad value stops start-up at once with a line that names the variable (every bad one,
 * when there are several). The chain, solver and price files have their own checks in core.
 */
import {
  ConfigError,
  checkLogLevel,
  DEFAULT_READINESS_TIMEOUT_MS,
  type EnvironmentVariables,
  readChoice,
  readFlag,
  readInteger,
  readMetricsToken,
  readPort,
  readVariable,
} from '@pontis/core'
import { checkPublicBaseUrl } from './currencies/public-url.js'
import { resolveAdminToken, type WebhookTargetPolicy, webhookPolicyFromEnv } from './keys/index.js'
import { type RateLimitPolicy, rateLimitPolicyFromEnv } from './ratelimit/index.js'
import { checkSchemaName } from './store/sql-client.js'
import { MAX_ATTEMPTS } from './webhooks/backoff.js'

export const DEFAULT_INTENTS_PORT = 4000

/** Longest lease or timeout a variable may set: a day, in milliseconds. */
const MAX_MILLISECONDS = 86_400_000

/** What the service reads from its environment, checked. */
export interface IntentsEnvironment {
  /** `INTENTS_PORT`, else 4000. */
  readonly port: number
  /** `HOST`, else 127.0.0.1. */
  readonly host: string
  /** `TRUST_PROXY`: take the client address from `X-Forwarded-For`. */
  readonly trustProxy: boolean
  /** `DATABASE_URL`: PostgreSQL; else PGlite. */
  readonly databaseUrl: string | undefined
  /** `DATABASE_SCHEMA`. */
  readonly databaseSchema: string | undefined
  /** `ADMIN_TOKEN`; undefined disables the admin API. */
  readonly adminToken: string | undefined
  /** `RATE_LIMITS`; null is `off`. */
  readonly rateLimitPolicy: RateLimitPolicy | null
  /** `PONTIS_WORKERS=off` runs the API without the indexer, solver and webhook loops. */
  readonly workers: boolean
  /** `SOLVER_LEASE_MS`, `WEBHOOK_LEASE_MS`, `WEBHOOK_TIMEOUT_MS` when set. */
  readonly solverLeaseMs: number | undefined
  readonly webhookLeaseMs: number | undefined
  readonly webhookTimeoutMs: number | undefined
  /**
   * `WEBHOOK_MAX_ATTEMPTS` (1 to 11, default 11) and `WEBHOOK_RETRY_BASE_MS` (the first retry's
   * delay, default 1000): fewer and sooner retries, for staging and tests.
   */
  readonly webhookMaxAttempts: number | undefined
  readonly webhookRetryBaseMs: number | undefined
  /** `SOLVER_REPLACE_AFTER_MS`: how long a broadcast transaction may go unmined before it is repriced. */
  readonly solverReplaceAfterMs: number | undefined
  /** `REBALANCE_INTERVAL_MS`: how often the rebalancer reads the bands and moves open moves on. */
  readonly rebalanceIntervalMs: number | undefined
  /** `WEBHOOKS_ALLOW_HTTP_LOOPBACK`, `WEBHOOKS_ALLOW_PRIVATE`. */
  readonly webhookPolicy: WebhookTargetPolicy
  /** `PUBLIC_BASE_URL`: where the service's own URLs (icons) start; else the request's origin. */
  readonly publicBaseUrl: string | undefined
  /** `METRICS_TOKEN`: the bearer token of `GET /metrics`; unset: only this host's scraper is answered. */
  readonly metricsToken: string | undefined
  /** `READINESS_TIMEOUT_MS`: how long `GET /readyz` waits for each chain's node. Default 3000. */
  readonly readinessTimeoutMs: number
  /** `SHUTDOWN_TIMEOUT_MS`: how long SIGTERM may take before the process exits anyway. Default 25000. */
  readonly shutdownTimeoutMs: number
}

/** Within Kubernetes' default 30 s grace period, with room for the pre-stop delay. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000

/** `INTENTS_PORT`, else 4000; a value that is not a port is a start-up error naming the variable. */
export function resolveIntentsPort(env: EnvironmentVariables): number {
  return readPort(env, 'INTENTS_PORT') ?? DEFAULT_INTENTS_PORT
}

/**
 * `DATABASE_URL` in the one form the service takes, `postgres://` or `postgresql://`: the driver
 * would otherwise read "localhost" as a host name and a `mysql://` URL as PostgreSQL.
 */
function checkDatabaseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(
      'DATABASE_URL is not a URL; expected postgres://<user>[:<password>]@<host>[:<port>]/<database>',
    )
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(
      `DATABASE_URL must be a postgres:// or postgresql:// URL, got a ${url.protocol}// URL`,
    )
  }
  return raw
}

/** Runs each reader, so one start-up reports every bad variable at once. */
function collect<T>(problems: string[], read: () => T): T | undefined {
  try {
    return read()
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error))
    return undefined
  }
}

/**
 * Reads and checks every variable of the service.
 * @throws ConfigError naming each variable that is set but unusable.
 */
export function readIntentsEnvironment(env: EnvironmentVariables): IntentsEnvironment {
  const problems: string[] = []
  const milliseconds = (name: string) =>
    collect(problems, () =>
      readInteger(env, name, { min: 1, max: MAX_MILLISECONDS, unit: ' of milliseconds' }),
    )
  const port = collect(problems, () => resolveIntentsPort(env))
  const trustProxy = collect(problems, () => readFlag(env, 'TRUST_PROXY'))
  const rawDatabaseUrl = readVariable(env, 'DATABASE_URL')
  const databaseUrl =
    rawDatabaseUrl === undefined ? undefined : collect(problems, () => checkDatabaseUrl(rawDatabaseUrl))
  const rawSchema = readVariable(env, 'DATABASE_SCHEMA')
  const databaseSchema =
    rawSchema === undefined
      ? undefined
      : collect(problems, () => {
          try {
            return checkSchemaName(rawSchema)
          } catch (error) {
            throw new ConfigError(`DATABASE_SCHEMA: ${(error as Error).message}`)
          }
        })
  const adminToken = collect(problems, () => resolveAdminToken(env))
  const rateLimitPolicy = collect(problems, () => rateLimitPolicyFromEnv(env))
  const workers = collect(problems, () => readChoice(env, 'PONTIS_WORKERS', ['on', 'off']) !== 'off')
  const solverLeaseMs = milliseconds('SOLVER_LEASE_MS')
  const webhookLeaseMs = milliseconds('WEBHOOK_LEASE_MS')
  const webhookTimeoutMs = milliseconds('WEBHOOK_TIMEOUT_MS')
  const webhookMaxAttempts = collect(problems, () =>
    readInteger(env, 'WEBHOOK_MAX_ATTEMPTS', { min: 1, max: MAX_ATTEMPTS, unit: ' of attempts' }),
  )
  const webhookRetryBaseMs = milliseconds('WEBHOOK_RETRY_BASE_MS')
  const solverReplaceAfterMs = milliseconds('SOLVER_REPLACE_AFTER_MS')
  const rebalanceIntervalMs = milliseconds('REBALANCE_INTERVAL_MS')
  const webhookPolicy = collect(problems, () => webhookPolicyFromEnv(env))
  const rawPublicBaseUrl = readVariable(env, 'PUBLIC_BASE_URL')
  const publicBaseUrl =
    rawPublicBaseUrl === undefined ? undefined : collect(problems, () => checkPublicBaseUrl(rawPublicBaseUrl))
  const metricsToken = collect(problems, () => readMetricsToken(env))
  const readinessTimeoutMs = milliseconds('READINESS_TIMEOUT_MS')
  const shutdownTimeoutMs = milliseconds('SHUTDOWN_TIMEOUT_MS')
  collect(problems, () => checkLogLevel(env))
  if (problems.length === 1) throw new ConfigError(problems[0] as string)
  if (problems.length > 1) {
    throw new ConfigError(
      `${problems.length} settings of the intent service are invalid`,
      problems.map((message) => ({ message })),
    )
  }
  return {
    port: port as number,
    host: readVariable(env, 'HOST') ?? '127.0.0.1',
    trustProxy: trustProxy as boolean,
    databaseUrl,
    databaseSchema,
    adminToken,
    rateLimitPolicy: rateLimitPolicy as RateLimitPolicy | null,
    workers: workers as boolean,
    solverLeaseMs,
    webhookLeaseMs,
    webhookTimeoutMs,
    webhookMaxAttempts,
    webhookRetryBaseMs,
    solverReplaceAfterMs,
    rebalanceIntervalMs,
    webhookPolicy: webhookPolicy as WebhookTargetPolicy,
    publicBaseUrl,
    metricsToken,
    readinessTimeoutMs: readinessTimeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS,
    shutdownTimeoutMs: shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
  }
}

/** The database URL for messages: scheme, user, host, port and database; never the password. */
export function describeDatabaseUrl(raw: string): string {
  try {
    const url = new URL(raw)
    const user = url.username === '' ? '' : `${decodeURIComponent(url.username)}@`
    return `${url.protocol}//${user}${url.host}${url.pathname}`
  } catch {
    return 'the URL given'
  }
}

/** A hint for the database failures an operator meets first. */
export function databaseHint(message: string): string {
  if (/no PostgreSQL user name/i.test(message))
    return ' (put the user in the URL, postgres://<user>@<host>/<database>, or set PGUSER)'
  if (/password authentication failed|SASL|no password/i.test(message))
    return ' (check the user and password in the URL)'
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT/.test(message))
    return ' (is PostgreSQL running and reachable at that host and port?)'
  return ''
}
