/**
 * @pontis/plugin-tron: the Tron family (`tvm`, chain 728126428), over the full-node HTTP API.
 * Identity (base58check `T…` addresses, 41-hex accepted), quoting (deposit transactions built by
 * the node: TRX transfers with the request id as memo, TRC20 transfers with it appended to the
 * calldata), reading (deposits, a block-walking deposit scan, fills, refunds, balances) and
 * filling (the reference solver's fills and refunds, signed with secp256k1 keys).
 */
import {
  type AdapterContext,
  type ChainAdapter,
  type ChainConfig,
  type ChainWitness,
  definePlugin,
  type FinalityPolicy,
  nodeDisagreementReporter,
  ReadCache,
} from '@pontis/core/plugin'
import { TronApiClient } from './api.js'
import { type TronPluginConfig, tronConfigSchema } from './config.js'
import { nodeHeadNumber, type TronChainContext } from './context.js'
import { createTronFilling } from './filling.js'
import { canonicalTronAddress, createTronIdentity } from './identity.js'
import { createTronQuoting } from './quoting.js'
import { createTronReading } from './reading.js'
import { TRON_STEP_FORMATS } from './step-formats.js'

const DEFAULT_TIMEOUT_MS = 10_000

/**
 * The finality policy of a Tron chain: fast after `fastConfirmations` blocks (default 1), slow
 * after `slowConfirmations` (default 19: a block is solid once 19 blocks, 2/3 of the 27 super
 * representatives, are on it). No separate finalized checkpoint is read.
 */
export function tronFinality(options: TronPluginConfig): FinalityPolicy {
  return Object.freeze({
    fastConfirmations: options.fastConfirmations,
    slowConfirmations: Math.max(options.fastConfirmations, options.slowConfirmations),
    slowRequiresFinalized: false,
    blockTimeSeconds: options.blockTimeSeconds,
  })
}

/**
 * The shared state of one chain's capabilities, from its validated config; `onDisagreement` is told
 * about a node contradicting the chain's others.
 */
export function createTronContext(
  chain: ChainConfig<TronPluginConfig>,
  onDisagreement?: (witness: ChainWitness, height: bigint) => void,
): TronChainContext {
  const options = chain.plugin
  const label = { id: chain.id, displayName: chain.displayName }
  const url = options.apiUrl ?? chain.rpc.url
  if (!/^https?:\/\//.test(url)) {
    throw new TypeError(
      `chain ${chain.id} (${chain.name}): the Tron node API needs an http(s) base URL (plugin.apiUrl or rpc.url)`,
    )
  }
  const depository = chain.protocol?.v2?.depository
  const apiOf = (url: string) =>
    new TronApiClient({
      url,
      timeoutMs: chain.rpc.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(chain.rpc.headers ? { headers: chain.rpc.headers } : {}),
      label,
    })
  // With `apiUrl` set, `rpc.url` and its fallbacks are not the node API: none to ask.
  // Every node, the main one included, asked on its own.
  const fallbacks = options.apiUrl ? [] : (chain.rpc.fallbackUrls ?? [])
  const witnessUrls = fallbacks.length > 0 ? [url, ...fallbacks] : []
  return {
    label,
    api: apiOf(url),
    cache: new ReadCache({ ttlMs: options.readCacheSeconds * 1000 }),
    // An invalid vault address is reported by the registry's address check, naming the field.
    vault: depository === undefined ? undefined : canonicalTronAddress(depository),
    options,
    witnesses: witnessUrls
      .filter((witness) => /^https?:\/\//.test(witness))
      .map((witness) => ({ url: witness, api: apiOf(witness) })),
    onDisagreement,
  }
}

export default definePlugin<TronPluginConfig>({
  vmType: 'tvm',
  name: '@pontis/plugin-tron',
  coreApi: '^1.0.0',
  configSchema: tronConfigSchema,
  stepFormats: TRON_STEP_FORMATS,
  createAdapter(chain: ChainConfig<TronPluginConfig>, adapterContext: AdapterContext): ChainAdapter {
    const context = createTronContext(chain, nodeDisagreementReporter(adapterContext.logger))
    adapterContext.logger.debug('tron adapter created', { vault: context.vault ?? null })
    return {
      identity: createTronIdentity(context.label),
      finality: tronFinality(chain.plugin),
      quoting: createTronQuoting(context),
      reading: createTronReading(context),
      filling: createTronFilling(context),
      probe: async () => ({ head: String(await nodeHeadNumber(context)) }),
      ...(chain.plugin.apiUrl ? { apiUrls: [chain.plugin.apiUrl] } : {}),
    }
  },
})

export { TronApiClient, type TronApiOptions, tronMessageText } from './api.js'
export {
  type TronContract,
  type TronRawDataJson,
  type TronRawTransaction,
  type TronTransactionJson,
  tronAddressBytes,
  tronBase58,
  tronDecodeRaw,
  tronEncodeRaw,
  tronSignTransaction,
  tronTransactionId,
} from './codec.js'
export { TRON_NATIVE_CURRENCY_ID, type TronPluginConfig, tronConfigSchema } from './config.js'
export {
  bandwidthBytes,
  blockIdAt,
  decodeRawIfKnown,
  feePrices,
  headNumber,
  lookUpTransaction,
  nodeHeadNumber,
  type TronChainContext,
  type TronEventLog,
  type TronFeePrices,
  type TronLookup,
  type TronWitness,
} from './context.js'
export { createTronFilling, tronAddressOfPrivateKey } from './filling.js'
export {
  canonicalTronAddress,
  canonicalTxId,
  createTronIdentity,
  tronAddress20,
  tronAddressProblem,
} from './identity.js'
export { createTronQuoting, estimateTransferCost, refuseFillExtras } from './quoting.js'
export { createTronReading, readTronBalance } from './reading.js'
export { scanTronDeposits } from './scan.js'
export {
  buildTaggedTransfer,
  depositFactOf,
  hasTransferLog,
  type TaggedTransfer,
  TRC20_TRANSFER_SELECTOR,
  TRC20_TRANSFER_TOPIC,
  taggedTransferOf,
  tagHex,
  trc20TransferData,
} from './transactions.js'
