import { createLogger, type Logger, loadRegistry, rpcEndpointsOf, watchRpcCalls } from '@pontis/core'
import { listen, type RunningServer } from '@pontis/http'
import { createOracleApp } from './app.js'
import { assertSignerAllowed, loadOracleConfig, loadVaultSecrets } from './config.js'
import { createSigner, type KmsClientLike } from './signer.js'

export interface OracleServiceOptions {
  /** Default `process.env`; secrets of the vault directory are added to it. */
  readonly env?: NodeJS.ProcessEnv
  /** Overrides the configured port (0 picks a free one). */
  readonly port?: number
  readonly host?: string
  readonly configDir?: string
  readonly logger?: Logger
  /** Replaces the AWS KMS client (tests). */
  readonly kmsClient?: KmsClientLike
}

/**
 * Loads the configuration (environment, then `/vault/secrets`), checks it, builds the signer and the
 * environment's chains, then serves the oracle API. Every configuration problem stops start-up with
 * a message naming the variable.
 */
export async function startOracleService(options: OracleServiceOptions = {}): Promise<RunningServer> {
  const env = loadVaultSecrets(options.env ?? process.env)
  const logger = options.logger ?? createLogger('oracle')
  const config = loadOracleConfig(env, logger)
  const signer = await createSigner(config.signing, {
    logger,
    ...(options.kmsClient ? { kmsClient: options.kmsClient } : {}),
  })
  assertSignerAllowed(config, signer.address)
  const registry = await loadRegistry({ env, logger, configDir: options.configDir })
  const app = await createOracleApp({ registry, signer, logger, config })
  const server = await listen(app, { port: options.port ?? config.port, host: options.host ?? config.host })
  const unwatchRpc = watchRpcCalls(rpcEndpointsOf(registry.chains()), app.metrics.rpcCall)
  const close = server.close.bind(server)
  return {
    ...server,
    close: async () => {
      await close()
      unwatchRpc()
      await registry.close()
    },
  }
}
