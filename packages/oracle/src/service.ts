import { createLogger, type Logger, loadRegistry } from '@pontis/core'
import { listen, type RunningServer } from '@pontis/http'
import { createOracleApp } from './app.js'
import { resolveSigner } from './signer.js'

export const DEFAULT_ORACLE_PORT = 3000

export interface OracleServiceOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly port?: number
  readonly host?: string
  readonly configDir?: string
  readonly logger?: Logger
}

/** The spec's order: `HTTP_PORT`, then `PORT`, then 3000. A set value that is not a port is an error. */
export function resolveOraclePort(env: NodeJS.ProcessEnv): number {
  for (const name of ['HTTP_PORT', 'PORT'] as const) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    const port = Number(raw)
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new Error(`${name} must be a port number (0-65535), got "${raw}"`)
    }
    return port
  }
  return DEFAULT_ORACLE_PORT
}

/** Loads the environment's chain config and plugins, then serves the oracle API. */
export async function startOracleService(options: OracleServiceOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env
  const logger = options.logger ?? createLogger('oracle')
  const registry = await loadRegistry({ env, logger, configDir: options.configDir })
  const signer = resolveSigner(env, registry.environment, logger)
  const { koa } = await createOracleApp({ registry, signer, logger, trustProxy: env.TRUST_PROXY === 'true' })
  return listen(koa, {
    port: options.port ?? resolveOraclePort(env),
    host: options.host ?? env.HOST ?? '127.0.0.1',
  })
}
