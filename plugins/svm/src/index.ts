/**
 * @pontis/plugin-svm: the SVM family (@solana/web3.js). Identity, quoting (deposit transactions with
 * optional origin swaps, measured against the 1232-byte limit), reading and filling.
 */
import {
  type AdapterContext,
  type ChainAdapter,
  type ChainConfig,
  definePlugin,
  type FinalityPolicy,
  keepAliveFetch,
  nodeDisagreementReporter,
  ReadCache,
} from '@pontis/core/plugin'
import { Connection, PublicKey } from '@solana/web3.js'
import { CONFIRMED, rpc, type SvmChainContext } from './context.js'
import { createSvmFilling } from './filling.js'
import { addressProblem, createSvmIdentity, SVM_NATIVE_CURRENCY_ID } from './identity.js'
import { createSvmQuoting } from './quoting.js'
import { createSvmReading } from './reading.js'
import { SVM_STEP_FORMATS } from './step-formats.js'

/** Options of an SVM chain entry's `plugin` member. */
export interface SvmPluginConfig {
  /** Seconds chain reads (blockhash, accounts, balances) are reused. Default 2. */
  readonly readCacheSeconds: number
  /** Base URL of the swap route source (aggregator quote and swap-instructions API); none: no origin swaps. */
  readonly swapApiUrl?: string
  /** Milliseconds a route source call may take. Default 5000. */
  readonly swapApiTimeoutMs: number
  /** Units of the compute-unit-limit instruction added for `includeComputeUnitLimit`. Default 200000. */
  readonly computeUnitLimit: number
  /** Fee per signature, lamports. Default 5000. */
  readonly signatureFeeLamports: number
  /** Most signatures a deposit scan reads per watched account and pass. Default 100. */
  readonly maxScanSignatures: number
}

/** JSON Schema of {@link SvmPluginConfig}; defaults are applied by the registry. */
export const svmConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    readCacheSeconds: { type: 'number', minimum: 0, maximum: 60, default: 2 },
    swapApiUrl: { type: 'string', pattern: '^https?://' },
    swapApiTimeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 5000 },
    computeUnitLimit: { type: 'integer', minimum: 1, maximum: 1400000, default: 200000 },
    signatureFeeLamports: { type: 'integer', minimum: 0, default: 5000 },
    maxScanSignatures: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
} as const

/** Fast reads wait for `confirmed`, slow ones for `finalized`. */
export const SVM_FINALITY: FinalityPolicy = Object.freeze({
  fastConfirmations: 1,
  slowConfirmations: 1,
  slowRequiresFinalized: true,
})

export default definePlugin<SvmPluginConfig>({
  vmType: 'svm',
  name: '@pontis/plugin-svm',
  coreApi: '^1.0.0',
  configSchema: svmConfigSchema,
  stepFormats: SVM_STEP_FORMATS,
  createAdapter(chain: ChainConfig<SvmPluginConfig>, adapterContext: AdapterContext): ChainAdapter {
    const label = { id: chain.id, displayName: chain.displayName }
    const identity = createSvmIdentity(label)
    const depository = chain.protocol?.v2?.depository
    const tokenCurrencies = [...(chain.currencies ?? []), ...(chain.solverCurrencies ?? [])]
      .map((currency) => currency.address)
      .filter((address) => address !== SVM_NATIVE_CURRENCY_ID && addressProblem(address) === undefined)
    const connectionOf = (url: string) =>
      new Connection(url, {
        commitment: 'confirmed',
        disableRetryOnRateLimit: true,
        // Core's keep-alive HTTP layer: cheaper than the default fetch, and it counts RPC calls.
        fetch: keepAliveFetch,
        ...(chain.rpc.headers ? { httpHeaders: { ...chain.rpc.headers } } : {}),
      })
    const context: SvmChainContext = {
      label,
      connection: connectionOf(chain.rpc.url),
      cache: new ReadCache({ ttlMs: chain.plugin.readCacheSeconds * 1000 }),
      // An invalid vault address is reported by the registry's address check, naming the field.
      vault: depository && addressProblem(depository) === undefined ? new PublicKey(depository) : undefined,
      tokenCurrencies: [...new Set(tokenCurrencies)],
      swapApiUrl: chain.plugin.swapApiUrl,
      swapApiTimeoutMs: chain.plugin.swapApiTimeoutMs,
      computeUnitLimit: chain.plugin.computeUnitLimit,
      signatureFeeLamports: BigInt(chain.plugin.signatureFeeLamports),
      maxScanSignatures: chain.plugin.maxScanSignatures,
      // Every node, the main one included, asked on its own.
      witnesses: (chain.rpc.fallbackUrls?.length ? [chain.rpc.url, ...chain.rpc.fallbackUrls] : []).map(
        (url) => ({ url, connection: connectionOf(url) }),
      ),
      onDisagreement: nodeDisagreementReporter(adapterContext.logger),
    }
    adapterContext.logger.debug('svm adapter created', { swapRoutes: context.swapApiUrl !== undefined })
    return {
      identity,
      finality: SVM_FINALITY,
      quoting: createSvmQuoting(context),
      reading: createSvmReading(context),
      filling: createSvmFilling(context),
      probe: async () => ({ head: String(await rpc(context, () => context.connection.getSlot(CONFIRMED))) }),
    }
  },
})

export { keypairOf } from './filling.js'
export {
  addressProblem,
  createSvmIdentity,
  decodeBase58,
  encodeBase58,
  isSignature,
  SVM_NATIVE_CURRENCY_ID,
} from './identity.js'
export { compileDeposit, SVM_ORIGIN_OPTIONS } from './quoting.js'
export { decodeTransaction, MEMO_PROGRAM_ID, SVM_TRANSACTION_SIZE_LIMIT, wireSize } from './transactions.js'
