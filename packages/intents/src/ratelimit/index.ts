/** Rate limits per API key and per client address, shared across instances through the database. */
// The generic limiter and address helpers live in @pontis/http (the oracle uses them too); re-exported
// so intents' public API stays the same.
export {
  addressBucket,
  clientAddressFrom,
  MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  type RateLimiter,
  type RateLimitResult,
} from '@pontis/http'
export {
  apiKeyIdOf,
  createRateLimitGate,
  type RateLimitGateOptions,
  type RateLimitState,
  routeClassOf,
} from './gate.js'
export { SqlRateLimiter, type SqlRateLimiterOptions } from './limiter.js'
export {
  type ClassLimits,
  DEFAULT_RATE_LIMIT_POLICY,
  parseRateLimitPolicy,
  RATE_LIMIT_CALLERS,
  type RateLimitCaller,
  type RateLimitPolicy,
  type RateLimitRule,
  ROUTE_CLASSES,
  type RouteClass,
  rateLimitPolicyFromEnv,
  ruleFor,
} from './policy.js'
