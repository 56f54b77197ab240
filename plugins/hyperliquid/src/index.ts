/**
 * @pontis/plugin-hyperliquid: the Hyperliquid core family (`hypevm`, chain 1337), over
 * Hyperliquid's public HTTP API. Identity (0x addresses, 16-byte token ids; perps USDC is the
 * native currency), quoting (one user-signed `usdSend`/`spotSend` to the depository, tagged by
 * its sender and nonce), reading (explorer `txDetails`, `/info` balances, deposit scans over the
 * depository's ledger updates) and filling (the reference solver's sends).
 */
import {
  type AdapterContext,
  type ChainAdapter,
  type ChainConfig,
  definePlugin,
  type FinalityPolicy,
  ReadCache,
} from '@pontis/core/plugin'
import { HyperliquidApi } from './api.js'
import { type HyperliquidPluginConfig, hyperliquidConfigSchema } from './config.js'
import { type HyperliquidChainContext, NonceClock } from './context.js'
import { createHyperliquidFilling } from './filling.js'
import { canonicalAddress, createHyperliquidIdentity } from './identity.js'
import { createHyperliquidQuoting } from './quoting.js'
import { createHyperliquidReading } from './reading.js'
import { HYPERLIQUID_STEP_FORMATS } from './step-formats.js'

/** A send is final once it is in a block (HyperBFT finalizes each block at once). */
export const HYPERLIQUID_FINALITY: FinalityPolicy = Object.freeze({
  fastConfirmations: 1,
  slowConfirmations: 1,
  slowRequiresFinalized: false,
  blockTimeSeconds: 1,
  finalOnExecution: true,
})

const DEFAULT_TIMEOUT_MS = 10_000
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** The shared state of one chain's capabilities, from its validated config. */
export function createHyperliquidContext(
  chain: ChainConfig<HyperliquidPluginConfig>,
): HyperliquidChainContext {
  const options = chain.plugin
  const label = { id: chain.id, displayName: chain.displayName }
  const urls = [chain.rpc.url, ...(chain.rpc.fallbackUrls ?? [])].filter((url) => /^https?:\/\//.test(url))
  if (urls.length === 0) {
    throw new TypeError(
      `chain ${chain.id} (${chain.name}): the Hyperliquid API needs an http(s) base URL (rpc.url)`,
    )
  }
  return {
    label,
    api: new HyperliquidApi({
      urls,
      ...(options.explorerUrl ? { explorerUrls: [options.explorerUrl] } : {}),
      timeoutMs: chain.rpc.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(chain.rpc.headers ? { headers: chain.rpc.headers } : {}),
      label,
    }),
    cache: new ReadCache({ ttlMs: options.readCacheSeconds * 1000 }),
    metaCache: new ReadCache({ ttlMs: options.metaCacheSeconds * 1000 }),
    // An invalid depository is reported by the registry's address check, naming the field.
    depository: canonicalAddress(chain.protocol?.v2?.depository),
    hyperliquidChain: options.hyperliquidChain,
    signatureChainId: options.signatureChainId.toLowerCase(),
    depositNonces: new NonceClock(),
    signerNonces: new Map(),
    maxScanUpdates: options.maxScanUpdates,
  }
}

export default definePlugin<HyperliquidPluginConfig>({
  vmType: 'hypevm',
  name: '@pontis/plugin-hyperliquid',
  coreApi: '^1.0.0',
  configSchema: hyperliquidConfigSchema,
  stepFormats: HYPERLIQUID_STEP_FORMATS,
  createAdapter(chain: ChainConfig<HyperliquidPluginConfig>, adapterContext: AdapterContext): ChainAdapter {
    const context = createHyperliquidContext(chain)
    adapterContext.logger.debug('hyperliquid adapter created', {
      hyperliquidChain: context.hyperliquidChain,
      depository: context.depository,
    })
    return {
      identity: createHyperliquidIdentity(context.label),
      finality: HYPERLIQUID_FINALITY,
      quoting: createHyperliquidQuoting(context),
      reading: createHyperliquidReading(context),
      filling: createHyperliquidFilling(context),
      // The venue has no block height to ask for; any address is answered, so the zero one stands in.
      probe: async () => {
        await context.api.checkAnswers(context.depository ?? ZERO_ADDRESS)
        return {}
      },
      ...(chain.plugin.explorerUrl ? { apiUrls: [chain.plugin.explorerUrl] } : {}),
    }
  },
})

export {
  type HyperliquidActionSignature,
  type HyperliquidSend,
  type HyperliquidSignedAction,
  type HyperliquidSpotSend,
  type HyperliquidUsdSend,
  hyperliquidDepositTag,
  hyperliquidSendHash,
  hyperliquidTypedData,
  signHyperliquidSend,
} from './actions.js'
export {
  HyperliquidApi,
  type HyperliquidApiOptions,
  type HyperliquidExchangeAnswer,
  type HyperliquidExplorerTx,
  type HyperliquidLedgerEntry,
  type HyperliquidTokenInfo,
  isHyperliquidSend,
} from './api.js'
export {
  HYPERLIQUID_NATIVE_CURRENCY_ID,
  HYPERLIQUID_NATIVE_DECIMALS,
  type HyperliquidPluginConfig,
  hyperliquidConfigSchema,
} from './config.js'
export {
  assetOf,
  type HyperliquidAsset,
  type HyperliquidChainContext,
  NonceClock,
} from './context.js'
export { addressOfKey, createHyperliquidFilling, HyperliquidExchangeError } from './filling.js'
export {
  addressProblem,
  canonicalAddress,
  canonicalCurrency,
  createHyperliquidIdentity,
  requireAddress,
  requireCurrency,
  requireHash,
} from './identity.js'
export { buildSend, createHyperliquidQuoting, HYPERLIQUID_CHAIN_ID } from './quoting.js'
export {
  createHyperliquidReading,
  type HyperliquidLookup,
  type HyperliquidTransfer,
  lookUpTransaction,
  parseVenueAmount,
  transferOf,
} from './reading.js'
