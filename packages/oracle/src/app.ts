import { fileURLToPath } from 'node:url'
import {
  createChainReadiness,
  hubSigningDomain,
  isPontisError,
  type Logger,
  type OracleApi,
  PontisError,
  type RegisteredChain,
  type Registry,
} from '@pontis/core'
import {
  type ApiApp,
  createApiApp,
  createMetricsHandler,
  createOpenApiAjv,
  createReadinessHandler,
  describeProblems,
  type LoadedDocument,
  loadOpenApiDocument,
  type OperationHandler,
  type OperationRequest,
  type ResponseOf,
  toFieldProblems,
} from '@pontis/http'
import {
  type CollectOptions,
  collectSignatures,
  type PeerTarget,
  type SignedAttestation,
  signAttestation,
} from './aggregate.js'
import { type AttestationEngine, createAttestationEngine, type UnsignedAttestation } from './attestations.js'
import type { OracleConfig } from './config.js'
import { defaultEcdsa } from './ecdsa.js'
import { createHubReader, type HubReader } from './hub.js'
import { createOracleMetrics, type OracleMetrics } from './metrics.js'
import { createApiKeyVerifier, createOracleRateLimit } from './ratelimit.js'
import type { OracleSigner } from './signer.js'

export const ORACLE_DOCUMENT_PATH = fileURLToPath(new URL('../../../openapi/oracle.yaml', import.meta.url))

/** The parts of {@link OracleConfig} the app uses. */
export type OracleAppConfig = Pick<
  OracleConfig,
  | 'apiKeys'
  | 'rateLimit'
  | 'peers'
  | 'peerTimeoutMs'
  | 'signers'
  | 'threshold'
  | 'trustProxy'
  | 'proxyHops'
  | 'metricsToken'
> &
  Partial<Pick<OracleConfig, 'readinessTimeoutMs'>>

export interface OracleAppOptions {
  readonly registry: Registry
  readonly signer: OracleSigner
  readonly logger: Logger
  readonly config: OracleAppConfig
  /** Defaults to openapi/oracle.yaml. */
  readonly document?: LoadedDocument
  /** Defaults to reading the hub's oracle contract over the hub chain's RPC. */
  readonly hubReader?: HubReader
  /** Replaces global fetch for peer requests (tests). */
  readonly fetch?: typeof fetch
  /** Default: a registry of this app's own (`GET /metrics`). */
  readonly metrics?: OracleMetrics
}

/** Defaults of the spec, for callers that configure only part of the app. */
export const DEFAULT_ORACLE_APP_CONFIG: OracleAppConfig = {
  apiKeys: new Map(),
  rateLimit: { max: 2, windowMs: 1000 },
  peers: [],
  peerTimeoutMs: 10_000,
  signers: undefined,
  threshold: 1,
  trustProxy: false,
  proxyHops: 1,
  metricsToken: undefined,
}

function toOracleChain(chain: RegisteredChain): OracleApi.OracleChain {
  const depository = chain.record.protocol?.v2?.depository
  return {
    id: chain.id,
    name: chain.record.name,
    displayName: chain.record.displayName,
    vmType: chain.record.vmType as OracleApi.VmType,
    ...(depository ? { depository } : {}),
    // The documented members only: a policy may also carry functions and hints for the services.
    finality: {
      fastConfirmations: chain.adapter.finality.fastConfirmations,
      slowConfirmations: chain.adapter.finality.slowConfirmations,
      slowRequiresFinalized: chain.adapter.finality.slowRequiresFinalized,
    },
  }
}

/** One attestation route: its path, response schema, engine method and whether it takes `force`. */
interface AttestationRoute {
  readonly operationId: string
  readonly path: string
  readonly responseSchema: string
  readonly forceable: boolean
  readonly attest: (engine: AttestationEngine, body: never) => Promise<UnsignedAttestation>
  readonly data: (engine: AttestationEngine, body: never) => Record<string, unknown>
}

const ROUTES: readonly AttestationRoute[] = [
  {
    operationId: 'attestDepositoryDeposits',
    path: '/attestations/depository-deposits/v1',
    responseSchema: 'DepositoryDepositsResponse',
    forceable: false,
    attest: (engine, body: OracleApi.DepositoryDepositsRequest) => engine.depositoryDeposits(body),
    data: (engine, body: OracleApi.DepositoryDepositsRequest) => engine.requestData.depositoryDeposits(body),
  },
  {
    operationId: 'attestDepositoryWithdrawals',
    path: '/attestations/depository-withdrawals/v1',
    responseSchema: 'DepositoryWithdrawalsResponse',
    forceable: false,
    attest: (engine, body: OracleApi.DepositoryWithdrawalsRequest) => engine.depositoryWithdrawals(body),
    data: (engine, body: OracleApi.DepositoryWithdrawalsRequest) =>
      engine.requestData.depositoryWithdrawals(body),
  },
  {
    operationId: 'attestSolverFills',
    path: '/attestations/solver-fills/v1',
    responseSchema: 'SolverFillsResponse',
    forceable: true,
    attest: (engine, body: OracleApi.SolverFillsRequest) => engine.solverFills(body),
    data: (engine, body: OracleApi.SolverFillsRequest) => engine.requestData.solverFills(body),
  },
  {
    operationId: 'attestSolverRefunds',
    path: '/attestations/solver-refunds/v1',
    responseSchema: 'SolverRefundsResponse',
    forceable: true,
    attest: (engine, body: OracleApi.SolverRefundsRequest) => engine.solverRefunds(body),
    data: (engine, body: OracleApi.SolverRefundsRequest) => engine.requestData.solverRefunds(body),
  },
  {
    operationId: 'attestWithdrawalInitiation',
    path: '/attestations/withdrawal-initiation/v1',
    responseSchema: 'WithdrawalInitiationResponse',
    forceable: false,
    attest: (engine, body: OracleApi.WithdrawalInitiationRequest) => engine.withdrawalInitiation(body),
    data: (engine, body: OracleApi.WithdrawalInitiationRequest) =>
      engine.requestData.withdrawalInitiation(body),
  },
  {
    operationId: 'attestWithdrawalInitiated',
    path: '/attestations/withdrawal-initiated/v1',
    responseSchema: 'WithdrawalInitiatedResponse',
    forceable: false,
    attest: (engine, body: OracleApi.WithdrawalInitiatedRequest) => engine.withdrawalInitiated(body),
    data: (engine, body: OracleApi.WithdrawalInitiatedRequest) =>
      engine.requestData.withdrawalInitiated(body),
  },
]

const DOCUMENT_ID = 'oracle.yaml'

/** The `x-api-key` header as one string. */
function presentedKey(request: OperationRequest): string | undefined {
  const value = request.headers['x-api-key']
  return Array.isArray(value) ? value[0] : value
}

/**
 * The oracle's app: every operation of openapi/oracle.yaml, validated and routed; the attestation
 * routes are answered without Koa (`directOperations`), so serve `handle` (`listen(app)`).
 */
export async function createOracleApp(
  options: OracleAppOptions,
): Promise<ApiApp & { readonly metrics: OracleMetrics }> {
  const loaded = options.document ?? (await loadOpenApiDocument(ORACLE_DOCUMENT_PATH))
  const { registry, signer, logger, config } = options
  const hub = registry.hub()
  if (!hub) throw new Error('the oracle needs the hub of configs/chains.hub.<ENVIRONMENT>.json')
  const domain = hubSigningDomain(hub)
  const hubChain = registry.tryChain(hub.chainId)
  const hubReader =
    options.hubReader ??
    createHubReader(hub, hubChain?.entry.rpc.url, hubChain?.adapter.finality.slowRequiresFinalized ?? true)
  const engine = createAttestationEngine({ registry, hub, domain, hubReader })
  const verifyKey = createApiKeyVerifier(config.apiKeys)
  const metrics =
    options.metrics ??
    createOracleMetrics({
      peers: config.peers.map((peer) => peer.url),
      paths: ROUTES.map((route) => route.path),
      chainIds: registry.chains().map((chain) => chain.id),
    })
  if (defaultEcdsa().implementation !== 'native') {
    logger.warn(
      'the native secp256k1 bindings did not load: signatures are made and peer signatures recovered in pure JavaScript, 20 to 40 times slower',
    )
  }

  // Peer answers are checked against the route's response schema before anything else (rule 3).
  const ajv = createOpenApiAjv()
  ajv.addSchema(loaded.document as object, DOCUMENT_ID, undefined, false)
  const shapeChecker = (schema: string): CollectOptions['checkShape'] => {
    const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${schema}` })
    return (body) => (validate(body) ? undefined : describeProblems(toFieldProblems(validate.errors ?? [])))
  }

  const chainsBody: OracleApi.OracleChainsResponse = {
    chains: [...registry.chains()].sort((a, b) => a.id - b.id).map(toOracleChain),
    hub: { chainId: hub.chainId, name: hub.name, oracleContract: hub.oracleContract, domain },
    signer: signer.address,
  }
  const getLives: OperationHandler<unknown, ResponseOf<OracleApi.GetLivesResponses>> = () => ({
    status: 200,
    body: { status: 'ok' },
  })
  const getOracleChains: OperationHandler<unknown, ResponseOf<OracleApi.GetOracleChainsResponses>> = () => ({
    status: 200,
    body: chainsBody,
  })

  const getMetrics = createMetricsHandler({ registry: metrics.registry, token: config.metricsToken })
  const getReadyz = createReadinessHandler({
    chains: createChainReadiness(registry, {
      ...(config.readinessTimeoutMs !== undefined ? { timeoutMs: config.readinessTimeoutMs } : {}),
    }),
  })

  const handlerFor = (route: AttestationRoute): OperationHandler => {
    const checkShape = shapeChecker(route.responseSchema)
    const attest = attestationHandler(route, checkShape)
    return async (request) => {
      try {
        const answer = await attest(request)
        metrics.attestationAnswered(route.path, 'ok')
        return answer
      } catch (error) {
        metrics.attestationAnswered(route.path, isPontisError(error) ? error.code : 'UNKNOWN_ERROR')
        throw error
      }
    }
  }

  const attestationHandler = (
    route: AttestationRoute,
    checkShape: CollectOptions['checkShape'],
  ): OperationHandler => {
    return async (request) => {
      const body = request.body as { force?: boolean; requestPeerSignatures?: boolean }
      const callerKey = presentedKey(request)
      if (route.forceable && body.force === true && verifyKey(callerKey) === undefined) {
        throw new PontisError('UNAUTHORIZED', '`force` needs a valid x-api-key.')
      }
      const local = async (): Promise<SignedAttestation> =>
        signAttestation(await route.attest(engine, body as never), signer, domain)
      if (body.requestPeerSignatures !== true || config.peers.length === 0) {
        return { status: 200, body: await local() }
      }
      // Fails fast on a request that cannot be attested, before any peer is asked.
      const expectedData = route.data(engine, body as never)
      const peers: PeerTarget[] = config.peers.map((peer) => ({
        url: peer.url,
        apiKey: peer.credential.kind === 'key' ? peer.credential.key : callerKey,
      }))
      const answer = await collectSignatures({
        domain,
        allowlist: config.signers,
        threshold: config.threshold,
        peers,
        timeoutMs: config.peerTimeoutMs,
        logger,
        path: route.path,
        // Peers never fan out further.
        peerBody: { ...body, requestPeerSignatures: false },
        checkShape,
        local,
        expectedData,
        metrics,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      })
      return { status: 200, body: answer }
    }
  }

  const app = await createApiApp({
    loaded,
    logger,
    metrics: metrics.registry,
    trustProxy: config.trustProxy,
    gate: createOracleRateLimit({
      max: config.rateLimit.max,
      windowMs: config.rateLimit.windowMs,
      apiKeys: config.apiKeys,
      logger,
      proxyHops: config.proxyHops,
    }),
    handlers: {
      getLives,
      getOracleChains,
      getMetrics,
      getReadyz,
      ...Object.fromEntries(ROUTES.map((route) => [route.operationId, handlerFor(route)])),
    },
    // Without Koa: an aggregated attestation passes through three oracles (issue 19).
    directOperations: ROUTES.map((route) => route.operationId),
  })
  return { ...app, metrics }
}
