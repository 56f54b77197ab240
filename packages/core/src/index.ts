/**
 * @pontis/core: the plugin contract, the registry, chain config loading, the error catalog and
 * amount helpers shared by every Pontis package.
 */

// The HTTP shapes of both services, generated from openapi/*.yaml (never edited by hand).
export type * as IntentsApi from '@pontis/generated/intents/types'
export type * as OracleApi from '@pontis/generated/oracle/types'
export * from './amounts.js'
export * from './chains.js'
export * from './config.js'
export * from './config-error.js'
export * from './config-schema.js'
export * from './eip712.js'
export * from './entry-points.js'
export * from './env.js'
export * from './errors.js'
export * from './failover.js'
export * from './finality.js'
export * from './http-client.js'
export * from './logger.js'
export * from './order.js'
export * from './plugin.js'
export * from './quorum.js'
export * from './read-cache.js'
export * from './readiness.js'
export * from './registry.js'
export * from './rpc-calls.js'
export * from './semver.js'
export { SIGNATURE_STEP_FORMAT } from './step-formats.js'
export { addPontisFormats, createAjv, type JsonSchema, joinPath, type ValidationIssue } from './validation.js'
export * from './vm-type.js'
