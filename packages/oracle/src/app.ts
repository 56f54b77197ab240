import { fileURLToPath } from 'node:url'
import {
  hubSigningDomain,
  type Logger,
  type OracleApi,
  type RegisteredChain,
  type Registry,
} from '@pontis/core'
import {
  type ApiApp,
  createApiApp,
  type LoadedDocument,
  loadOpenApiDocument,
  type OperationHandler,
  type ResponseOf,
} from '@pontis/http'
import type { SignerIdentity } from './signer.js'

export const ORACLE_DOCUMENT_PATH = fileURLToPath(new URL('../../../openapi/oracle.yaml', import.meta.url))

export interface OracleAppOptions {
  readonly registry: Registry
  readonly signer: SignerIdentity
  readonly logger: Logger
  /** Defaults to openapi/oracle.yaml. */
  readonly document?: LoadedDocument
  readonly trustProxy?: boolean
}

function toOracleChain(chain: RegisteredChain): OracleApi.OracleChain {
  const depository = chain.record.protocol?.v2?.depository
  return {
    id: chain.id,
    name: chain.record.name,
    displayName: chain.record.displayName,
    vmType: chain.record.vmType as OracleApi.VmType,
    ...(depository ? { depository } : {}),
    finality: { ...chain.adapter.finality },
  }
}

/** The oracle's Koa app: every operation of openapi/oracle.yaml, validated and routed. */
export async function createOracleApp(options: OracleAppOptions): Promise<ApiApp> {
  const loaded = options.document ?? (await loadOpenApiDocument(ORACLE_DOCUMENT_PATH))
  const hub = options.registry.hub()
  if (!hub) throw new Error('the oracle needs the hub of configs/chains.hub.<ENVIRONMENT>.json')
  const chainsBody: OracleApi.OracleChainsResponse = {
    chains: [...options.registry.chains()].sort((a, b) => a.id - b.id).map(toOracleChain),
    hub: {
      chainId: hub.chainId,
      name: hub.name,
      oracleContract: hub.oracleContract,
      domain: hubSigningDomain(hub),
    },
    signer: options.signer.address,
  }
  const getLives: OperationHandler<unknown, ResponseOf<OracleApi.GetLivesResponses>> = () => ({
    status: 200,
    body: { status: 'ok' },
  })
  const getOracleChains: OperationHandler<unknown, ResponseOf<OracleApi.GetOracleChainsResponses>> = () => ({
    status: 200,
    body: chainsBody,
  })
  return createApiApp({
    loaded,
    logger: options.logger,
    trustProxy: options.trustProxy ?? false,
    handlers: { getLives, getOracleChains },
  })
}
