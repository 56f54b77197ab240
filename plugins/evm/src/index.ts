/**
 * @pontis/plugin-evm: the EVM family (viem). Identity, quoting and reading on every chain; filling
 * (the reference solver's fills and refunds) on chains with a multicaller.
 */

import {
  type AdapterContext,
  type AddressRole,
  type ChainAdapter,
  type ChainConfig,
  type ChainLabel,
  type CurrencyRole,
  definePlugin,
  type IdentityCapability,
  invalidAddressError,
  invalidCurrencyError,
  isCurrencyRole,
  nodeDisagreementReporter,
  PontisError,
  type SwapSource,
} from '@pontis/core/plugin'
import { type Address, getAddress, type Hex, isAddress, isAddressEqual, recoverMessageAddress } from 'viem'
import { createEvmFilling } from './filling.js'
import { createEvmMarketData } from './market-data.js'
import { createEvmQuoting, EVM_PERMIT_KIND, type EvmChainContext } from './quoting.js'
import {
  currencyDecimals,
  type UniswapV3Contracts,
  uniswapReferenceImpact,
  uniswapV3Contracts,
  uniswapV3DepositSwap,
  uniswapV3FillSwap,
  uniswapV3Source,
} from './uniswap.js'
import { type ZeroExConfig, type ZeroExWarn, zeroExConfigSchema, zeroExSource } from './zeroex.js'

/**
 * The chain's swap sources, and the swaps its deposits and fills run (a Uniswap v3 deployment's
 * router): its Uniswap v3 deployment when `contracts` names one, then the 0x-shaped aggregator when
 * the plugin options give it an `apiUrl` and `contracts` names its allowance holder (whose quotes are
 * held to the Uniswap deployment's mid prices for their impact, when there is one).
 */
function swapsOf(
  evm: EvmChainContext,
  uniswap: UniswapV3Contracts | undefined,
  zeroEx: { config: ZeroExConfig; allowanceHolder: Address; warn: ZeroExWarn } | undefined,
): {
  sources: SwapSource[]
  depositSwap?: ReturnType<typeof uniswapV3DepositSwap>
  fillSwap?: ReturnType<typeof uniswapV3FillSwap>
} {
  const sources: SwapSource[] = uniswap ? [uniswapV3Source(evm, uniswap)] : []
  if (zeroEx) {
    sources.push(
      zeroExSource(evm, zeroEx.config, zeroEx.allowanceHolder, {
        warn: zeroEx.warn,
        decimals: (currency) => currencyDecimals(evm, currency),
        ...(uniswap ? { referenceImpact: (trade) => uniswapReferenceImpact(evm, uniswap, trade) } : {}),
      }),
    )
  }
  return uniswap
    ? {
        sources,
        depositSwap: uniswapV3DepositSwap(evm, uniswap),
        fillSwap: uniswapV3FillSwap(evm, uniswap),
      }
    : { sources }
}

import { createEvmReading } from './reading.js'
import { createRpcClient, ReadCache, rpc } from './rpc.js'
import { EVM_STEP_FORMATS } from './step-formats.js'

/** The native currency's id on every EVM chain: `0x` and 40 zeros. */
export const EVM_NATIVE_CURRENCY_ID = '0x0000000000000000000000000000000000000000'

/** Options of an EVM chain entry's `plugin` member. */
export interface EvmPluginConfig {
  /** Confirmations (1 = included in a block) before `slow` reads count a fact as final. Default 2. */
  readonly confirmations: number
  /** Confirmations before `fast` reads count a fact. Default 1. */
  readonly fastConfirmations: number
  /** `slow` reads also wait for the `finalized` block tag to cover the block. Default true. */
  readonly waitForFinalized: boolean
  /** Price transactions with EIP-1559 fees; false for legacy-gas chains. Default true. */
  readonly eip1559: boolean
  /** How often to poll for new blocks, when set (default: the chain's block time, per viem). */
  readonly pollingIntervalMs?: number
  /** Most blocks per `eth_getLogs` call, for providers that cap the range. Default 1000. */
  readonly maxLogBlockRange: number
  /** Seconds chain reads (fees, balances, allowances) are reused. Default 2. */
  readonly readCacheSeconds: number
  /** Secret (32-byte hex) that per-request deposit addresses are derived from; none: no deposit addresses. */
  readonly depositAddressSeed?: string
  /**
   * The fill multicaller (`fill(orderId, payments, calls)`); wins over the public record's
   * `contracts.multicaller`. A chain with neither has no filling capability.
   */
  readonly multicaller?: string
  /**
   * The most a replacement of a stuck transaction may offer per gas (wei, decimal): the solver
   * re-signs a fill that is not mined with higher fees up to this cap, then waits. Default 1000 gwei.
   */
  readonly maxReplacementFeePerGas?: string
  /**
   * A 0x Swap API v2 endpoint as the swap source `zeroex` (see zeroex.ts); used only when `apiUrl`
   * is not empty and the chain record's `contracts.zeroExAllowanceHolder` names the contract its
   * transactions must call. `apiKey` is a secret.
   */
  readonly zeroEx?: ZeroExConfig
}

/** JSON Schema of {@link EvmPluginConfig}; defaults are applied by the registry. */
export const evmConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    confirmations: { type: 'integer', minimum: 1, default: 2 },
    fastConfirmations: { type: 'integer', minimum: 1, default: 1 },
    waitForFinalized: { type: 'boolean', default: true },
    eip1559: { type: 'boolean', default: true },
    pollingIntervalMs: { type: 'integer', minimum: 50 },
    maxLogBlockRange: { type: 'integer', minimum: 1, default: 1000 },
    readCacheSeconds: { type: 'number', minimum: 0, maximum: 60, default: 2 },
    depositAddressSeed: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
    multicaller: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
    maxReplacementFeePerGas: { type: 'string', pattern: '^[1-9][0-9]{0,30}$', default: '1000000000000' },
    zeroEx: zeroExConfigSchema,
  },
} as const

const ADDRESS_FORM = 'expected 0x followed by 40 hexadecimal characters'

/** The identity rules of one EVM chain, with messages that name it. */
export function createEvmIdentity(chain?: ChainLabel): IdentityCapability {
  const isValidAddress = (address: string): boolean =>
    typeof address === 'string' && isAddress(address, { strict: false })
  const normalizeAddress = (address: string, role: AddressRole): string => {
    if (!isValidAddress(address)) throw invalidAddressError(role, address, ADDRESS_FORM, chain)
    return getAddress(address)
  }
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    if (!isValidAddress(currencyId)) {
      throw invalidCurrencyError(
        role,
        currencyId,
        `${ADDRESS_FORM} (the token address, or ${EVM_NATIVE_CURRENCY_ID} for the native currency)`,
        chain,
      )
    }
    return getAddress(currencyId)
  }
  return {
    nativeCurrencyId: EVM_NATIVE_CURRENCY_ID,
    isValidAddress,
    normalizeAddress,
    normalizeCurrency,
    encodeAddress(address: string, role: AddressRole | CurrencyRole): Hex {
      const normalized = isCurrencyRole(role)
        ? normalizeCurrency(address, role)
        : normalizeAddress(address, role)
      return normalized.toLowerCase() as Hex
    },
    encodeTransactionId(transactionId: string): Hex {
      if (typeof transactionId !== 'string' || !TRANSACTION_HASH.test(transactionId)) {
        throw new PontisError(
          'INVALID_REQUEST',
          `'${String(transactionId).slice(0, 80)}' is not a transaction hash${chain ? ` of ${chain.displayName}` : ''}: expected 0x followed by 64 hexadecimal characters`,
        )
      }
      return transactionId.toLowerCase() as Hex
    },
    async verifyMessage(signer: string, message: Hex, signature: Hex): Promise<boolean> {
      if (!isValidAddress(signer)) return false
      try {
        const recovered = await recoverMessageAddress({ message: { raw: message }, signature })
        return isAddressEqual(recovered, signer as Address)
      } catch {
        return false
      }
    },
  }
}

const TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/

export default definePlugin<EvmPluginConfig>({
  vmType: 'evm',
  name: '@pontis/plugin-evm',
  coreApi: '^1.0.0',
  configSchema: evmConfigSchema,
  stepFormats: EVM_STEP_FORMATS,
  permitKinds: [EVM_PERMIT_KIND],
  createAdapter(chain: ChainConfig<EvmPluginConfig>, context: AdapterContext): ChainAdapter {
    context.logger.debug('evm adapter created', {
      confirmations: chain.plugin.confirmations,
      eip1559: chain.plugin.eip1559,
    })
    const label = { id: chain.id, displayName: chain.displayName }
    const identity = createEvmIdentity(label)
    const finality = {
      fastConfirmations: chain.plugin.fastConfirmations,
      slowConfirmations: Math.max(chain.plugin.confirmations, chain.plugin.fastConfirmations),
      slowRequiresFinalized: chain.plugin.waitForFinalized,
    }
    const depository = chain.protocol?.v2?.depository
    const multicaller = chain.plugin.multicaller ?? chain.contracts?.multicaller
    const depositReceiver = chain.contracts?.relayReceiver
    const uniswap = uniswapV3Contracts(chain.contracts)
    const evm: EvmChainContext = {
      label,
      chainId: chain.id,
      client: createRpcClient({
        url: chain.rpc.url,
        ...(chain.rpc.fallbackUrls ? { fallbackUrls: chain.rpc.fallbackUrls } : {}),
        ...(chain.rpc.timeoutMs !== undefined ? { timeoutMs: chain.rpc.timeoutMs } : {}),
        ...(chain.rpc.headers ? { headers: chain.rpc.headers } : {}),
      }),
      cache: new ReadCache({ ttlMs: chain.plugin.readCacheSeconds * 1000 }),
      // An invalid address is reported by the registry's address check, naming the field.
      depository:
        depository && isAddress(depository, { strict: false })
          ? (getAddress(depository) as Address)
          : undefined,
      multicaller:
        typeof multicaller === 'string' && isAddress(multicaller, { strict: false })
          ? (getAddress(multicaller) as Address)
          : undefined,
      depositReceiver:
        typeof depositReceiver === 'string' && isAddress(depositReceiver, { strict: false })
          ? (getAddress(depositReceiver) as Address)
          : undefined,
      nativeCurrencyId: EVM_NATIVE_CURRENCY_ID,
      eip1559: chain.plugin.eip1559,
      depositAddressSeed: chain.plugin.depositAddressSeed as Hex | undefined,
      maxLogBlockRange: chain.plugin.maxLogBlockRange,
      swapRouter: uniswap?.router,
      wrappedNative: uniswap?.weth,
      // Every node, the main one included, asked on its own (the main client fails over).
      witnesses: (chain.rpc.fallbackUrls?.length ? [chain.rpc.url, ...chain.rpc.fallbackUrls] : []).map(
        (url) => ({
          url,
          client: createRpcClient({
            url,
            ...(chain.rpc.timeoutMs !== undefined ? { timeoutMs: chain.rpc.timeoutMs } : {}),
            ...(chain.rpc.headers ? { headers: chain.rpc.headers } : {}),
          }),
        }),
      ),
      onDisagreement: nodeDisagreementReporter(context.logger),
    }
    const allowanceHolder = chain.contracts?.zeroExAllowanceHolder
    const zeroEx = chain.plugin.zeroEx
    const zeroExOn = zeroEx !== undefined && zeroEx.apiUrl !== ''
    if (zeroExOn && !(typeof allowanceHolder === 'string' && isAddress(allowanceHolder, { strict: false }))) {
      throw new TypeError(
        `chain ${chain.id} (${chain.name}): plugin.zeroEx.apiUrl is set but contracts.zeroExAllowanceHolder is not an address; name the contract the 0x API's transactions call (its AllowanceHolder), or leave apiUrl empty`,
      )
    }
    const swaps = swapsOf(
      evm,
      uniswap,
      zeroExOn
        ? {
            config: zeroEx,
            allowanceHolder: getAddress(allowanceHolder as string),
            // The host and the reason only: never the key, nor the URL's query.
            warn: (message, fields) => context.logger.warn(message, { chainId: chain.id, ...fields }),
          }
        : undefined,
    )
    return {
      identity,
      finality,
      quoting: createEvmQuoting(evm, swaps.sources, swaps.depositSwap, swaps.fillSwap),
      reading: createEvmReading(evm, finality, swaps.fillSwap),
      marketData: createEvmMarketData(evm),
      probe: async () => ({
        head: String(await rpc(label, () => evm.client.getBlockNumber({ cacheTime: 0 }))),
      }),
      // Fills go through the multicaller; without one this chain cannot be a solver's destination.
      ...(evm.multicaller
        ? {
            filling: createEvmFilling(evm, finality, {
              ...(swaps.fillSwap ? { fillSwap: swaps.fillSwap } : {}),
              ...(chain.plugin.maxReplacementFeePerGas === undefined
                ? {}
                : { maxReplacementFeePerGas: BigInt(chain.plugin.maxReplacementFeePerGas) }),
            }),
          }
        : {}),
    }
  },
})

export {
  CALL_REQUEST_TYPES,
  depositoryAbi,
  erc20Abi,
  multicallerAbi,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  tokenErrorsAbi,
} from './abi.js'
export { createEvmFilling, FALLBACK_GAS, REFUND_EXPIRATION } from './filling.js'
export { depositAddressKey, GAS } from './quoting.js'
export { CALL_REQUEST_PARAMETERS, UNKNOWN_ORDER_ID } from './reading.js'
export { isTransportFailure, ReadCache } from './rpc.js'
export { decodeRevert } from './transactions.js'
