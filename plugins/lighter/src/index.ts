/**
 * @pontis/plugin-lighter: the perpetuals-exchange family (`lvm`, Lighter, chain 3586256), over the
 * venue's public REST API. Addresses are exchange account indexes; currency ids are configured
 * asset ids (native "0", USDC). Withdrawals from the venue are one user-signed transfer to the
 * depository account tagged with the request id; fills and refunds are transfers out of it signed
 * with the solver's API key.
 */
import {
  type AdapterContext,
  type ChainAdapter,
  type ChainConfig,
  type ChainLabel,
  definePlugin,
  type FinalityPolicy,
  invalidAddressError,
  ReadCache,
} from '@pontis/core/plugin'
import { isRefusal, LighterApiClient } from './api.js'
import {
  LIGHTER_CHAIN_ID,
  LIGHTER_NATIVE_CURRENCY_ID,
  type LighterPluginConfig,
  lighterConfigSchema,
} from './config.js'
import type { LighterChainContext } from './context.js'
import { createLighterFilling } from './filling.js'
import { accountIndexProblem, createLighterIdentity } from './identity.js'
import { createLighterQuoting } from './quoting.js'
import { createLighterReading } from './reading.js'
import { LIGHTER_STEP_FORMATS } from './step-formats.js'

/** Fast and slow facts both wait for `confirmations` (default 1): the venue is final on execution. */
export function lighterFinality(confirmations: number): FinalityPolicy {
  return Object.freeze({
    fastConfirmations: confirmations,
    slowConfirmations: confirmations,
    slowRequiresFinalized: false,
    finalOnExecution: true,
  })
}

/** The shared state of one chain's capabilities, from its validated config. */
export function createLighterContext(chain: ChainConfig<LighterPluginConfig>): LighterChainContext {
  const options = chain.plugin
  const label = { id: chain.id, displayName: chain.displayName }
  if (!Object.hasOwn(options.assets, LIGHTER_NATIVE_CURRENCY_ID)) {
    throw new TypeError(
      `chain ${chain.id} (${chain.name}): plugin.assets must map the native currency "${LIGHTER_NATIVE_CURRENCY_ID}" (USDC)`,
    )
  }
  // A disabled entry is listed, never served: it may name the real venue ahead of its signing.
  if (options.network !== 'simulator' && !chain.disabled) {
    throw new TypeError(
      `chain ${chain.id} (${chain.name}): Lighter ${options.network} cannot be enabled: this plugin signs transfers with ed25519 as the devnet simulator does, and the real venue's signing (ECgFp5 Schnorr over Poseidon2 with the API key, plus an Ethereum L1 signature) is not implemented; set "disabled": true`,
    )
  }
  const urls = [chain.rpc.url, ...(chain.rpc.fallbackUrls ?? [])].filter((url) => /^https?:\/\//.test(url))
  if (urls.length === 0) {
    throw new TypeError(
      `chain ${chain.id} (${chain.name}): the venue API needs an http(s) base URL (rpc.url)`,
    )
  }
  const depository = chain.protocol?.v2?.depository
  return {
    label,
    api: new LighterApiClient({
      urls,
      timeoutMs: chain.rpc.timeoutMs ?? options.requestTimeoutMs,
      ...(chain.rpc.headers ? { headers: chain.rpc.headers } : {}),
      label,
    }),
    cache: new ReadCache({ ttlMs: options.readCacheSeconds * 1000 }),
    // An invalid depository is reported by the registry's address check, naming the field.
    depository:
      depository !== undefined && accountIndexProblem(depository) === undefined ? depository : undefined,
    assets: new Map(Object.entries(options.assets)),
    solverApiKeyIndex: options.solverApiKeyIndex,
    confirmations: options.confirmations,
    transferExpirySeconds: options.transferExpirySeconds,
    scanPageSize: options.scanPageSize,
  }
}

/**
 * The account indexes an L1 wallet address owns on the venue at `apiUrl` (main account first), as
 * the decimal strings this plugin takes as addresses; empty when it owns none.
 * @throws PontisError INVALID_ADDRESS when `l1Address` is not 0x and 40 hex digits; RPC_HTTP_ERROR
 *   when the venue is unreachable.
 */
export async function lookupLighterAccounts(
  apiUrl: string,
  l1Address: string,
  options: { timeoutMs?: number; label?: ChainLabel } = {},
): Promise<string[]> {
  if (typeof l1Address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(l1Address)) {
    throw invalidAddressError('address', l1Address, 'expected an L1 wallet address: 0x and 40 hex digits')
  }
  const api = new LighterApiClient({
    urls: [apiUrl],
    timeoutMs: options.timeoutMs ?? 10_000,
    label: options.label ?? { id: LIGHTER_CHAIN_ID, displayName: 'Lighter' },
  })
  const answer = await api.accountsByL1Address(l1Address)
  return isRefusal(answer) ? [] : answer.map(String)
}

export default definePlugin<LighterPluginConfig>({
  vmType: 'lvm',
  name: '@pontis/plugin-lighter',
  coreApi: '^1.0.0',
  configSchema: lighterConfigSchema,
  stepFormats: LIGHTER_STEP_FORMATS,
  createAdapter(chain: ChainConfig<LighterPluginConfig>, adapterContext: AdapterContext): ChainAdapter {
    const context = createLighterContext(chain)
    adapterContext.logger.debug('lighter adapter created', {
      depository: context.depository,
      assets: [...context.assets.keys()],
    })
    return {
      identity: createLighterIdentity([...context.assets.keys()], context.label),
      finality: lighterFinality(context.confirmations),
      quoting: createLighterQuoting(context),
      reading: createLighterReading(context),
      filling: createLighterFilling(context),
      probe: async () => ({ head: String(await context.api.currentHeight()) }),
    }
  },
})

export {
  isRefusal,
  LIGHTER_ACCOUNT_TXS_MAX_LIMIT,
  type LighterApiAccount,
  LighterApiClient,
  type LighterApiOptions,
  type LighterApiTransaction,
  type LighterRefusal,
} from './api.js'
export {
  LIGHTER_CHAIN_ID,
  LIGHTER_MAX_ACCOUNT_INDEX,
  LIGHTER_NATIVE_CURRENCY_ID,
  LIGHTER_TRANSFER_FORMAT,
  LIGHTER_TRANSFER_TX_TYPE,
  type LighterAssetConfig,
  type LighterNetwork,
  type LighterPluginConfig,
  lighterConfigSchema,
} from './config.js'
export { type LighterChainContext, transferFee } from './context.js'
export { createLighterFilling } from './filling.js'
export {
  accountIndexProblem,
  canonicalTransactionHash,
  createLighterIdentity,
  parseAccountIndex,
  uint256Hex,
} from './identity.js'
export {
  type LighterTransfer,
  type SignedLighterTransfer,
  signTransfer,
  transferHash,
  transferMessage,
} from './protocol.js'
export { createLighterQuoting, memoOf, transferAmount } from './quoting.js'
export {
  createLighterReading,
  depositOf,
  lookUpTransaction,
  payoutOf,
  scanLighterDeposits,
} from './reading.js'
