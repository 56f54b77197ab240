/**
 * `@pontis/core/plugin`: what a plugin author needs, and nothing of the services' runtime (the
 * registry, config loading, the logger factory, order encoding). The contract modules
 * (`plugin.ts`, `vm-type.ts`) are exported whole; from the others, only what the plugins use or
 * what the contract's signatures name. The services keep importing `@pontis/core`, which carries
 * all of this too.
 */

// Amounts between decimal strings and smallest units.
export { formatUnits, parseUnits } from './amounts.js'
// The chain a plugin is handed, and the records it is made of.
export type {
  ChainConfig,
  ChainContracts,
  ChainContractsV3,
  ChainEntry,
  ChainProtocol,
  CurrencyEntry,
  CurrencyMetadata,
  PublicChainRecord,
  RpcConfig,
} from './chains.js'
// The error a plugin throws, with the catalog's codes.
export { type ErrorCode, isPontisError, PontisError } from './errors.js'
// Timed HTTP calls and failover over several base URLs, for families reached over HTTP APIs.
export {
  type FailoverRequest,
  type FailoverTarget,
  FetchTimeoutError,
  fetchWithFailover,
  type TimedFetchOptions,
  type TimedResponse,
  timedFetch,
  unexpectedAnswer,
} from './failover.js'
export { keepAliveFetch } from './http-client.js'
// What `AdapterContext.logger` is.
export type { LogFields, Logger } from './logger.js'
// The contract: definePlugin, the capability interfaces and their value types, the error helpers.
export * from './plugin.js'
// Several nodes of one chain: the majority vote on a fact's block hash, and the report of a node
// contradicting the others (logged by host, counted with the RPC call metrics).
export {
  type BlockHashVote,
  blockHashQuorum,
  type ChainWitness,
  nodeDisagreementReporter,
} from './quorum.js'
// A bounded cache of chain reads.
export { ReadCache } from './read-cache.js'
export { reportRpcDisagreement } from './rpc-calls.js'
// What `PluginDefinition.configSchema` is.
// The step format of the execute API, for families that serve signatures the service redeems.
export { SIGNATURE_STEP_FORMAT } from './step-formats.js'
export type { JsonSchema } from './validation.js'
// Family ids.
export * from './vm-type.js'
