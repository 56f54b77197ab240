import { createLogger, type Logger, loadRegistry } from '@pontis/core'
import { listen, type RunningServer } from '@pontis/http'
import { createIntentsApp } from './app.js'

export const DEFAULT_INTENTS_PORT = 4000

export interface IntentsServiceOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly port?: number
  readonly host?: string
  readonly configDir?: string
  readonly logger?: Logger
}

/** `INTENTS_PORT`, else 4000; a value that is not a port is a start-up error naming the variable. */
export function resolveIntentsPort(env: NodeJS.ProcessEnv): number {
  const raw = env.INTENTS_PORT
  if (raw === undefined || raw === '') return DEFAULT_INTENTS_PORT
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`INTENTS_PORT must be a port number (0-65535), got "${raw}"`)
  }
  return port
}

/** Loads the environment's chain config and plugins, then serves the intent API. */
export async function startIntentsService(options: IntentsServiceOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env
  const logger = options.logger ?? createLogger('intents')
  const registry = await loadRegistry({ env, logger, configDir: options.configDir })
  const { koa } = await createIntentsApp({ registry, logger, trustProxy: env.TRUST_PROXY === 'true' })
  return listen(koa, {
    port: options.port ?? resolveIntentsPort(env),
    host: options.host ?? env.HOST ?? '127.0.0.1',
  })
}
