/**
 * Reading a service's own environment variables at start-up. A value that is set but unusable is
 * a `ConfigError` whose message starts with the variable's name and says what is expected: the
 * operator reads one line and knows what to change. Values are echoed only for settings that are
 * not secrets; callers never pass a secret's name here.
 */

import type { EnvironmentVariables } from './config.js'
import { ConfigError } from './config-error.js'

/** Longest value echoed back in a message. */
const MAX_ECHOED = 80

function echo(value: string): string {
  return JSON.stringify(value.length > MAX_ECHOED ? `${value.slice(0, MAX_ECHOED)}…` : value)
}

/** The trimmed value of `name`, or undefined when it is unset or blank. */
export function readVariable(env: EnvironmentVariables, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

/**
 * A switch: `true` or `false` (unset or blank is `fallback`). Anything else is refused rather
 * than read as false, or "1" and "yes" would silently leave the switch off.
 */
export function readFlag(env: EnvironmentVariables, name: string, fallback = false): boolean {
  const raw = readVariable(env, name)
  if (raw === undefined) return fallback
  if (raw === 'true') return true
  if (raw === 'false') return false
  throw new ConfigError(`${name} must be "true" or "false", got ${echo(raw)}`)
}

/** One of `choices` (unset or blank is undefined). */
export function readChoice<Choice extends string>(
  env: EnvironmentVariables,
  name: string,
  choices: readonly Choice[],
): Choice | undefined {
  const raw = readVariable(env, name)
  if (raw === undefined) return undefined
  if ((choices as readonly string[]).includes(raw)) return raw as Choice
  throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got ${echo(raw)}`)
}

/**
 * A whole number from `min` to `max` written in decimal digits (unset or blank is undefined).
 * `Number()` alone would also take " ", "0x50", "1e3" or "-0".
 */
export function readInteger(
  env: EnvironmentVariables,
  name: string,
  { min, max, unit = '' }: { readonly min: number; readonly max: number; readonly unit?: string },
): number | undefined {
  const raw = readVariable(env, name)
  if (raw === undefined) return undefined
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number${unit} from ${min} to ${max}, got ${echo(raw)}`)
  }
  return value
}

/** A TCP port, 0 to 65535 (0 lets the system pick one). */
export function readPort(env: EnvironmentVariables, name: string): number | undefined {
  return readInteger(env, name, { min: 0, max: 65_535 })
}

/** Shortest `METRICS_TOKEN` accepted: a guessable token would expose the metrics. */
export const MIN_METRICS_TOKEN_LENGTH = 24
const HEADER_TOKEN = /^[\x21-\x7e]+$/

/**
 * `METRICS_TOKEN`, the bearer token `GET /metrics` asks for on both services; unset: the route
 * answers only this host's own scraper.
 * @throws ConfigError describing the token (a secret: never showing it) when it is too short or
 * not visible ASCII without spaces.
 */
export function readMetricsToken(env: EnvironmentVariables): string | undefined {
  const token = readVariable(env, 'METRICS_TOKEN')
  if (token === undefined) return undefined
  if (token.length < MIN_METRICS_TOKEN_LENGTH || !HEADER_TOKEN.test(token)) {
    throw new ConfigError(
      `METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} visible ASCII characters without spaces (for example: openssl rand -base64 32)`,
    )
  }
  return token
}
