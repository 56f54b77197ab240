/** Rate limits per API key and per client address, shared across instances through the database. */
export {
  MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  type RateLimiter,
  type RateLimitResult,
  SqlRateLimiter,
  type SqlRateLimiterOptions,
} from './limiter.js'
export {
  addressBucket,
  apiKeyIdOf,
  clientAddressOf,
  createRateLimitMiddleware,
  type RateLimitMiddlewareOptions,
  type RateLimitState,
  routeClassOf,
} from './middleware.js'
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
