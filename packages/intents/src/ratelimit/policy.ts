/**
 * Who may make how many requests: per route class (`quote` for `POST /quote`, `/quote/v2` and
 * `/price`, `other` for the rest), per caller kind (anonymous client address or API key tier).
 */
import type { ApiKeyTier } from '../keys/api-keys.js'

/** Routes are limited in two classes; the class also names the policy in the RateLimit headers. */
export type RouteClass = 'quote' | 'other'

export const ROUTE_CLASSES: readonly RouteClass[] = ['quote', 'other']

/** `limit` requests per fixed window of `windowSeconds`. */
export interface RateLimitRule {
  readonly limit: number
  readonly windowSeconds: number
}

/** One rule per route class. */
export type ClassLimits = Readonly<Record<RouteClass, RateLimitRule>>

/** Limits of anonymous calls (per client address) and of each API key tier (per key). */
export interface RateLimitPolicy {
  readonly anonymous: ClassLimits
  readonly public: ClassLimits
  readonly standard: ClassLimits
  readonly elevated: ClassLimits
}

export type RateLimitCaller = keyof RateLimitPolicy

export const RATE_LIMIT_CALLERS: readonly RateLimitCaller[] = ['anonymous', 'public', 'standard', 'elevated']

const perMinute = (limit: number): RateLimitRule => ({ limit, windowSeconds: 60 })

/**
 * The defaults. `standard` keys get the partner limits seen in the wild (50 quotes and 200 other
 * calls per minute), `elevated` keys 10 quotes per second. Calls without a key get a lower public
 * limit per client address: 20 quotes per minute, and 120 other calls, enough to poll two
 * requests once per second as the spec recommends. `public` keys get the anonymous limits,
 * counted per key instead of per address.
 */
export const DEFAULT_RATE_LIMIT_POLICY: RateLimitPolicy = {
  anonymous: { quote: perMinute(20), other: perMinute(120) },
  public: { quote: perMinute(20), other: perMinute(120) },
  standard: { quote: perMinute(50), other: perMinute(200) },
  elevated: { quote: perMinute(600), other: perMinute(1200) },
}

/** The rule for a caller (anonymous, or a key of `tier`) on a route class. */
export function ruleFor(policy: RateLimitPolicy, caller: 'anonymous' | ApiKeyTier, routeClass: RouteClass) {
  return policy[caller][routeClass]
}

const MAX_LIMIT = 1_000_000
const MAX_WINDOW_SECONDS = 86_400

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function checkRule(value: unknown, base: RateLimitRule, where: string): RateLimitRule {
  if (!isObject(value)) throw new Error(`${where} must be an object {"limit": n, "windowSeconds": s}`)
  for (const name of Object.keys(value)) {
    if (name !== 'limit' && name !== 'windowSeconds')
      throw new Error(`${where}.${name} is unknown: use limit and windowSeconds`)
  }
  const limit = value.limit ?? base.limit
  const windowSeconds = value.windowSeconds ?? base.windowSeconds
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new Error(`${where}.limit must be an integer from 1 to ${MAX_LIMIT}`)
  }
  if (
    typeof windowSeconds !== 'number' ||
    !Number.isInteger(windowSeconds) ||
    windowSeconds < 1 ||
    windowSeconds > MAX_WINDOW_SECONDS
  ) {
    throw new Error(`${where}.windowSeconds must be an integer from 1 to ${MAX_WINDOW_SECONDS}`)
  }
  return { limit, windowSeconds }
}

/**
 * Applies overrides to a policy: a JSON object (or its text, the `RATE_LIMITS` setting) naming
 * callers (`anonymous`, `public`, `standard`, `elevated`), route classes (`quote`, `other`) and
 * `limit` / `windowSeconds`, each optional, for example
 * `{"anonymous":{"quote":{"limit":10}},"elevated":{"other":{"limit":3000}}}`. Anything else is an
 * error naming the member, so a typo never silently leaves the defaults in place.
 */
export function parseRateLimitPolicy(
  overrides: unknown,
  base: RateLimitPolicy = DEFAULT_RATE_LIMIT_POLICY,
): RateLimitPolicy {
  let parsed: unknown = overrides
  if (typeof overrides === 'string') {
    if (overrides.trim() === '') return base
    try {
      parsed = JSON.parse(overrides)
    } catch (error) {
      throw new Error(`RATE_LIMITS is not valid JSON: ${(error as Error).message}`)
    }
  }
  if (!isObject(parsed)) throw new Error('RATE_LIMITS must be a JSON object keyed by caller')
  const policy = { ...base } as Record<RateLimitCaller, ClassLimits>
  for (const [caller, classes] of Object.entries(parsed)) {
    if (!(RATE_LIMIT_CALLERS as readonly string[]).includes(caller)) {
      throw new Error(`RATE_LIMITS.${caller} is unknown: use ${RATE_LIMIT_CALLERS.join(', ')}`)
    }
    if (!isObject(classes)) throw new Error(`RATE_LIMITS.${caller} must be an object keyed by quote, other`)
    const current = policy[caller as RateLimitCaller]
    const next: Record<RouteClass, RateLimitRule> = { ...current }
    for (const [routeClass, rule] of Object.entries(classes)) {
      if (!(ROUTE_CLASSES as readonly string[]).includes(routeClass)) {
        throw new Error(`RATE_LIMITS.${caller}.${routeClass} is unknown: use ${ROUTE_CLASSES.join(', ')}`)
      }
      next[routeClass as RouteClass] = checkRule(
        rule,
        current[routeClass as RouteClass],
        `RATE_LIMITS.${caller}.${routeClass}`,
      )
    }
    policy[caller as RateLimitCaller] = next
  }
  return policy
}

/**
 * The policy of an environment: the defaults with `RATE_LIMITS` (JSON) applied, or null for
 * `RATE_LIMITS=off` (no limits: for benchmarks, or behind a gateway that limits already; API keys
 * are still authenticated).
 */
export function rateLimitPolicyFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): RateLimitPolicy | null {
  const value = env.RATE_LIMITS ?? ''
  if (value.trim().toLowerCase() === 'off') return null
  return parseRateLimitPolicy(value)
}
