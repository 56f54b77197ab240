/**
 * @pontis/plugin-bitcoin: the Bitcoin family (`bvm`), over the Esplora HTTP API. Identity (addresses
 * of the configured network), quoting (deposit PSBTs paying the vault, tagged with the request id
 * in an OP_RETURN output), reading (deposits, fills, refunds, balances, deposit scans) and filling
 * (the reference solver's fills and refunds, signed with P2WPKH keys).
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
import { type BitcoinPluginConfig, bitcoinConfigSchema } from './config.js'
import { type BitcoinChainContext, requiredConfirmations } from './context.js'
import { EsploraClient } from './esplora.js'
import { createBitcoinFilling } from './filling.js'
import { createBitcoinIdentity, networkOf, parseAddress } from './identity.js'
import { createBitcoinQuoting } from './quoting.js'
import { createBitcoinReading } from './reading.js'
import { OutpointReservations } from './reservations.js'
import { BITCOIN_STEP_FORMATS } from './step-formats.js'

/**
 * The finality policy of a Bitcoin chain: a deposit is acted on after `confirmations` blocks, or
 * `highValueConfirmations` when its amount is above its currency's threshold (`confirmationsFor`;
 * reads apply the same rule to `final`, which slow attestations wait for). Deposits are shown from
 * the mempool on (`showsUnconfirmedDeposits`). Bitcoin has no finalized checkpoint. A fill to Bitcoin
 * waits for a block, so clients stop following it at `submitted` (`clientsStopAtSubmitted`).
 */
export function bitcoinFinality(context: BitcoinChainContext, blockTimeSeconds: number): FinalityPolicy {
  return Object.freeze({
    fastConfirmations: context.confirmations,
    slowConfirmations: context.confirmations,
    slowRequiresFinalized: false,
    confirmationsFor: (currencyId: string, amount: bigint) =>
      requiredConfirmations(context, currencyId, amount),
    showsUnconfirmedDeposits: true,
    blockTimeSeconds,
    clientsStopAtSubmitted: true,
  })
}

const DEFAULT_TIMEOUT_MS = 10_000

/**
 * The shared state of one chain's capabilities, from its validated config; `onDisagreement` is told
 * about a node contradicting the chain's others.
 */
export function createBitcoinContext(
  chain: ChainConfig<BitcoinPluginConfig>,
  onDisagreement?: (witness: ChainWitness, height: bigint) => void,
): BitcoinChainContext {
  const options = chain.plugin
  const label = { id: chain.id, displayName: chain.displayName }
  const depository = chain.protocol?.v2?.depository
  const vault = depository === undefined ? undefined : parseAddress(depository, options.network)
  const urls = (
    options.esploraUrl ? [options.esploraUrl] : [chain.rpc.url, ...(chain.rpc.fallbackUrls ?? [])]
  ).filter((url) => /^https?:\/\//.test(url))
  if (urls.length === 0) {
    throw new TypeError(
      `chain ${chain.id} (${chain.name}): the Esplora API needs an http(s) base URL (plugin.esploraUrl or rpc.url)`,
    )
  }
  const esploraOf = (urls: readonly string[]) =>
    new EsploraClient({
      urls,
      timeoutMs: chain.rpc.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(chain.rpc.headers ? { headers: chain.rpc.headers } : {}),
      label,
    })
  return {
    label,
    network: options.network,
    params: networkOf(options.network),
    esplora: esploraOf(urls),
    cache: new ReadCache({ ttlMs: options.readCacheSeconds * 1000 }),
    // An invalid vault address is reported by the registry's address check, naming the field.
    vault: vault && 'parsed' in vault ? vault.parsed : undefined,
    confirmations: options.confirmations,
    highValueConfirmations: options.highValueConfirmations,
    highValueThresholds: new Map(
      Object.entries(options.highValueThreshold ?? {}).map(([currency, amount]) => [
        currency,
        BigInt(amount),
      ]),
    ),
    feeTargetBlocks: options.feeTargetBlocks,
    minFeeRate: options.minFeeRate,
    maxFeeRate: options.maxFeeRate,
    dustLimit: BigInt(options.dustLimit),
    depositAddressSeed: options.depositAddressSeed,
    reservations: new OutpointReservations({ ttlMs: options.reservationSeconds * 1000 }),
    reservationMs: options.reservationSeconds * 1000,
    maxReplacementFeeRate: options.maxReplacementFeeRate,
    maxScanPages: options.maxScanPages,
    // The main API fails over to the others; each, the first included, is also asked alone to vouch
    // for a block, so a node the main read failed over to does not vote twice.
    witnesses: (urls.length > 1 ? urls : []).map((url) => ({ url, esplora: esploraOf([url]) })),
    onDisagreement,
  }
}

export default definePlugin<BitcoinPluginConfig>({
  vmType: 'bvm',
  name: '@pontis/plugin-bitcoin',
  coreApi: '^1.0.0',
  configSchema: bitcoinConfigSchema,
  stepFormats: BITCOIN_STEP_FORMATS,
  createAdapter(chain: ChainConfig<BitcoinPluginConfig>, adapterContext: AdapterContext): ChainAdapter {
    const context = createBitcoinContext(chain, nodeDisagreementReporter(adapterContext.logger))
    adapterContext.logger.debug('bitcoin adapter created', {
      network: context.network,
      depositAddresses: context.depositAddressSeed !== undefined,
    })
    return {
      identity: createBitcoinIdentity(context.network, context.label),
      finality: bitcoinFinality(context, chain.plugin.blockTimeSeconds),
      quoting: createBitcoinQuoting(context),
      reading: createBitcoinReading(context),
      filling: createBitcoinFilling(context),
      probe: async () => ({ head: String(await context.esplora.tipHeight()) }),
      ...(chain.plugin.esploraUrl ? { apiUrls: [chain.plugin.esploraUrl] } : {}),
    }
  },
})

export {
  BITCOIN_NATIVE_CURRENCY_ID,
  type BitcoinNetworkName,
  type BitcoinPluginConfig,
  bitcoinConfigSchema,
} from './config.js'
export {
  type BitcoinChainContext,
  balanceOf,
  coinsOf,
  confirmationsOf,
  type EsploraWitness,
  feeRate,
  requiredConfirmations,
} from './context.js'
export {
  EsploraBroadcastError,
  EsploraClient,
  type EsploraOptions,
  type EsploraTransaction,
  type EsploraUtxo,
} from './esplora.js'
export { createBitcoinFilling } from './filling.js'
export {
  type AddressType,
  addressOfScript,
  addressProblem,
  canonicalTxid,
  createBitcoinIdentity,
  networkOf,
  type ParsedAddress,
  parseAddress,
} from './identity.js'
export {
  depositAddressKey,
  depositAddressKeyPair,
  ECPair,
  keyPairOf,
  p2wpkhAddress,
  taprootOutputKey,
} from './keys.js'
export {
  BITCOIN_ORIGIN_OPTIONS,
  buildDepositPsbt,
  createBitcoinQuoting,
  type DepositorSpend,
  type DepositPsbt,
  depositAddressOf,
  depositorSpend,
} from './quoting.js'
export { createBitcoinReading, depositsIn, lookUpTransaction, payoutsIn } from './reading.js'
export { OutpointReservations } from './reservations.js'
export {
  type Coin,
  estimateVsize,
  INPUT_WEIGHT,
  outputSize,
  type SpendableType,
  selectCoins,
  tagOf,
  tagScript,
} from './transactions.js'
