export {
  collectSignatures,
  SignatureAggregator,
  type SignedAttestation,
  signAttestation,
  signatureProblem,
} from './aggregate.js'
export {
  createOracleApp,
  DEFAULT_ORACLE_APP_CONFIG,
  ORACLE_DOCUMENT_PATH,
  type OracleAppConfig,
  type OracleAppOptions,
} from './app.js'
export { type AttestationEngine, createAttestationEngine, type UnsignedAttestation } from './attestations.js'
export {
  assertSignerAllowed,
  DEFAULT_VAULT_SECRETS_DIR,
  loadOracleConfig,
  loadVaultSecrets,
  MIN_METRICS_TOKEN_LENGTH,
  type OracleConfig,
  OracleConfigError,
  type PeerConfig,
  resolveOraclePort,
} from './config.js'
export {
  createHubReader,
  decodeHubAction,
  encodeHubAction,
  HUB_ACTION,
  type HubAction,
  type HubActionKind,
  type HubReader,
  hubAccountKey,
  hubAssetKey,
  idempotencyKey,
  withdrawalAddressOf,
} from './hub.js'
export {
  createOracleMetrics,
  type DisagreementResolution,
  type OracleMetrics,
  type OracleMetricsOptions,
  PEER_OUTCOMES,
  type PeerOutcome,
} from './metrics.js'
export { createApiKeyVerifier, createOracleRateLimit } from './ratelimit.js'
export { type OracleServiceOptions, startOracleService } from './service.js'
export { createSigner, type OracleSigner, type SigningConfig } from './signer.js'
export { EXECUTION_TYPES, executionDigest, typedDataDigest } from './typed-data.js'
