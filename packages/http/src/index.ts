export { createOpenApiAjv } from './ajv.js'
export {
  type ApiApp,
  type ApiAppOptions,
  createApiApp,
  DEFAULT_BODY_LIMIT_BYTES,
  type GateOutcome,
  type GateRequest,
  type HandlerMap,
  type OperationHandler,
  type OperationRequest,
  type OperationResponse,
  type RequestGate,
  type RequestOf,
  type ResponseOf,
} from './app.js'
export { type BearerVerdict, createBearerCheck } from './bearer.js'
export { isJsonContentType, parseJsonBody, readTextBody } from './body.js'
export { documentationPage } from './docs.js'
export {
  assertValidOpenApi31,
  type LoadedDocument,
  loadOpenApiDocument,
  type OpenApiDocument,
} from './document.js'
export {
  createHttpObserver,
  createMetricsHandler,
  createMetricsRegistry,
  createReadinessHandler,
  createRpcCallMetrics,
  type HttpObserver,
  isDirectLoopback,
  LATENCY_BUCKETS_SECONDS,
  type MetricsHandlerOptions,
  MetricsRegistry,
  type ReadinessCheckResult,
  type ReadinessHandlerOptions,
  UNMATCHED_OPERATION,
} from './metrics.js'
export { describeProblems, type FieldProblem, toFieldProblems } from './problems.js'
export {
  addressBucket,
  checkRateLimitArguments,
  clientAddressFrom,
  fixedWindowOf,
  MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  normaliseRoutePath,
  type RateLimiter,
  type RateLimitHeaderPolicy,
  type RateLimitResult,
  rateLimitHeaders,
  rateLimitResultOf,
} from './ratelimit.js'
export { listen, type RunningServer } from './server.js'
export { openSchema } from './unknown-members.js'
export {
  createOperationValidator,
  type OperationValidator,
  type ValidationInput,
  type ValidationOutcome,
} from './validation.js'
