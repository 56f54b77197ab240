import { fileURLToPath } from 'node:url'
import type { Logger, Registry } from '@pontis/core'
import { type ApiApp, createApiApp, type LoadedDocument, loadOpenApiDocument } from '@pontis/http'
import { createChainHandlers } from './chains.js'

export const INTENTS_DOCUMENT_PATH = fileURLToPath(new URL('../../../openapi/intents.yaml', import.meta.url))

export interface IntentsAppOptions {
  readonly registry: Registry
  readonly logger: Logger
  /** Defaults to openapi/intents.yaml. */
  readonly document?: LoadedDocument
  readonly trustProxy?: boolean
}

/** The intent service's Koa app: every operation of openapi/intents.yaml, validated and routed. */
export async function createIntentsApp(options: IntentsAppOptions): Promise<ApiApp> {
  const loaded = options.document ?? (await loadOpenApiDocument(INTENTS_DOCUMENT_PATH))
  return createApiApp({
    loaded,
    logger: options.logger,
    trustProxy: options.trustProxy ?? false,
    handlers: { ...createChainHandlers(options.registry) },
  })
}
