export { createOracleApp, ORACLE_DOCUMENT_PATH, type OracleAppOptions } from './app.js'
export {
  DEFAULT_ORACLE_PORT,
  type OracleServiceOptions,
  resolveOraclePort,
  startOracleService,
} from './service.js'
export { resolveSigner, type SignerIdentity } from './signer.js'
