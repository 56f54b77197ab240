/**
 * A tiny structured logger contract (so plugins do not pick a logging library) and a default
 * implementation that writes one JSON object per line and never prints secrets.
 */

import { ConfigError } from './config-error.js'

/** Structured fields attached to one log line. */
export type LogFields = Readonly<Record<string, unknown>>

/** Severity, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** What core hands to plugins and services. Any object with these four methods will do. */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
}

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** Lowest level written; `silent` writes nothing. Default: `LOG_LEVEL` when valid, else `info`. */
  readonly level?: LogLevel | 'silent'
  /** Fields added to every line (after redaction), e.g. `{ chainId: 1 }`. */
  readonly fields?: LogFields
  /** Where a finished line goes. Default: stdout for debug/info, stderr for warn/error. */
  readonly write?: (line: string, level: LogLevel) => void
  /** Clock, for tests. */
  readonly now?: () => Date
}

const LEVEL_ORDER: Record<LogLevel | 'silent', number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
}

/** The values `LOG_LEVEL` takes (any case): a level, or `silent`. */
export const LOG_LEVELS = Object.freeze(Object.keys(LEVEL_ORDER)) as readonly (LogLevel | 'silent')[]

/**
 * Start-up check of `LOG_LEVEL`: the logger reads it in any case and falls back to `info`, so a
 * typo would otherwise go unnoticed.
 * @throws ConfigError naming the variable and its values.
 */
export function checkLogLevel(env: Readonly<Record<string, string | undefined>>): void {
  const level = env.LOG_LEVEL?.trim()
  if (level === undefined || level === '' || Object.hasOwn(LEVEL_ORDER, level.toLowerCase())) return
  throw new ConfigError(
    `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level.slice(0, 80))}`,
  )
}

/** Replaces the value of a secret-looking field. */
export const REDACTED = '[redacted]'

// A field is secret when its name, lower-cased without separators, ends with one of these:
// that catches apiKey, x-api-key, ECDSA_PRIVATE_KEY, accessToken, clientSecret, Authorization.
// Erring on the side of hiding (an idempotencyKey is hidden too) is the point.
const SECRET_NAME_ENDINGS = [
  'key',
  'secret',
  'secrets',
  'password',
  'passwd',
  'passphrase',
  'token',
  'authorization',
  'cookie',
  'mnemonic',
  'credential',
  'credentials',
]

/** True when a field with this name must never be printed. */
export function isSecretFieldName(name: string): boolean {
  const normalised = name.toLowerCase().replace(/[^a-z0-9]/g, '')
  return SECRET_NAME_ENDINGS.some((ending) => normalised.endsWith(ending))
}

const MAX_DEPTH = 8

/**
 * Copies `value` into something `JSON.stringify` can print: secret-named fields become
 * `[redacted]` at any depth, bigints become strings, errors keep name/message/stack/cause,
 * cycles and very deep values are cut.
 */
export function redactFields(value: unknown): unknown {
  return sanitise(value, new WeakSet(), 0)
}

function sanitise(value: unknown, seen: WeakSet<object>, depth: number): unknown {
  if (typeof value === 'bigint') return value.toString(10)
  if (typeof value === 'function' || typeof value === 'symbol') return String(value)
  if (value === null || typeof value !== 'object') return value
  if (seen.has(value)) return '[circular]'
  if (depth >= MAX_DEPTH) return '[too deep]'
  seen.add(value)
  try {
    if (value instanceof Error) {
      const error: Record<string, unknown> = { name: value.name, message: value.message, stack: value.stack }
      for (const [key, field] of Object.entries(value)) {
        error[key] = isSecretFieldName(key) ? REDACTED : sanitise(field, seen, depth + 1)
      }
      if (value.cause !== undefined) error.cause = sanitise(value.cause, seen, depth + 1)
      return error
    }
    if (Array.isArray(value)) return value.map((item) => sanitise(item, seen, depth + 1))
    if (value instanceof Date) return value.toISOString()
    const copy: Record<string, unknown> = {}
    for (const [key, field] of Object.entries(value)) {
      copy[key] = isSecretFieldName(key) ? REDACTED : sanitise(field, seen, depth + 1)
    }
    return copy
  } finally {
    seen.delete(value)
  }
}

function defaultWrite(line: string, level: LogLevel): void {
  if (level === 'warn' || level === 'error') process.stderr.write(`${line}\n`)
  else process.stdout.write(`${line}\n`)
}

function levelFromEnvironment(): LogLevel | 'silent' | undefined {
  const level = process.env.LOG_LEVEL?.toLowerCase()
  return level !== undefined && Object.hasOwn(LEVEL_ORDER, level) ? (level as LogLevel | 'silent') : undefined
}

/**
 * The default logger: one JSON line per call, `{ time, level, logger, msg, ...fields }`.
 * Field names that look like secrets (key, privateKey, apiKey, secret, password, token,
 * authorization, …) are printed as `[redacted]`, at any depth.
 */
export function createLogger(name: string, options: CreateLoggerOptions = {}): Logger {
  const threshold = LEVEL_ORDER[options.level ?? levelFromEnvironment() ?? 'info']
  const write = options.write ?? defaultWrite
  const now = options.now ?? (() => new Date())
  const base = options.fields ?? {}
  const log = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (LEVEL_ORDER[level] < threshold) return
    const payload = redactFields({ ...base, ...fields }) as Record<string, unknown>
    const reserved = { time: now().toISOString(), level, logger: name, msg: message }
    // Reserved keys print first, and are assigned again last so a field cannot impersonate them.
    const line = Object.assign({ ...reserved }, payload, reserved)
    write(JSON.stringify(line), level)
  }
  return {
    debug: (message, fields) => log('debug', message, fields),
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
  }
}

/** A logger that adds `fields` to every line of `logger` (call-site fields win). */
export function withLogFields(logger: Logger, fields: LogFields): Logger {
  return {
    debug: (message, extra) => logger.debug(message, { ...fields, ...extra }),
    info: (message, extra) => logger.info(message, { ...fields, ...extra }),
    warn: (message, extra) => logger.warn(message, { ...fields, ...extra }),
    error: (message, extra) => logger.error(message, { ...fields, ...extra }),
  }
}

/** A logger that drops everything (tests, embedded use). */
export const silentLogger: Logger = Object.freeze({
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
})
