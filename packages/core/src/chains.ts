/**
 * The shape of one chain in `configs/chains.<ENVIRONMENT>.json` and of the hub in
 * `configs/chains.hub.<ENVIRONMENT>.json`. A chain entry is the public chain record (served by
 * `/chains` and `/chains/v1`) plus two private members, `rpc` and `plugin`, that never leave the
 * process: `toPublicChainRecord` is the only way from one to the other.
 */

import type { VmType } from './vm-type.js'

/** Display metadata of a currency item. */
export interface CurrencyMetadata {
  readonly logoURI?: string
  readonly verified?: boolean
  readonly isNative?: boolean
}

/** A currency on a chain: the native currency, a featured token, an ERC-20-style token, … */
export interface CurrencyEntry {
  /** Short stable id, e.g. `eth`, `usdc`. */
  readonly id: string
  readonly symbol: string
  readonly name: string
  /** Currency id in the family's form (EVM: token address; native is the zero address). */
  readonly address: string
  readonly decimals: number
  readonly supportsBridging?: boolean
  readonly metadata?: CurrencyMetadata
  readonly withdrawalFee?: number
  readonly depositFee?: number
  readonly surgeEnabled?: boolean
}

/** Router contracts of the v3 flow. */
export interface ChainContractsV3 {
  readonly erc20Router?: string
  readonly approvalProxy?: string
}

/** Well-known helper contracts on a chain; families may add their own names. */
export interface ChainContracts {
  readonly multicall3?: string
  readonly multicaller?: string
  readonly onlyOwnerMulticaller?: string
  readonly relayReceiver?: string
  readonly erc20Router?: string
  readonly approvalProxy?: string
  readonly v3?: ChainContractsV3
  readonly [contract: string]: string | ChainContractsV3 | undefined
}

/** Where settlement-protocol deposits go on this chain. */
export interface ChainProtocol {
  readonly v2?: {
    /** The chain's id in protocol messages: its name, as a string. */
    readonly chainId: string
    /** The depository contract (or account) deposits are made to. */
    readonly depository: string
  }
}

/** Private: how this process reaches the chain. Never served. */
export interface RpcConfig {
  /** Primary endpoint; usually `${<CHAIN>_RPC_URL}` in config. */
  readonly url: string
  /** Websocket endpoint for subscriptions, when the family uses one. */
  readonly wsUrl?: string
  /** Further endpoints, so one faulty provider is not trusted alone. */
  readonly fallbackUrls?: readonly string[]
  /** Extra HTTP headers (provider credentials); values usually placeholders. */
  readonly headers?: Readonly<Record<string, string>>
  /** Per-request timeout. */
  readonly timeoutMs?: number
}

/** The public chain record: what `/chains` serves for one chain. */
export interface PublicChainRecord {
  /** Chain id (a JSON number; service-assigned for some non-EVM chains). */
  readonly id: number
  /** Stable lower-case name, e.g. `base`; also the chain's id in protocol messages. */
  readonly name: string
  readonly displayName: string
  readonly vmType: VmType
  /** Public RPC endpoint clients may use (not ours). */
  readonly httpRpcUrl?: string
  readonly wsRpcUrl?: string
  readonly explorerUrl?: string
  readonly explorerName?: string
  /** Default true. */
  readonly depositEnabled: boolean
  readonly tokenSupport?: string
  /** Default false. Set during incidents to stop use. */
  readonly disabled: boolean
  readonly partialDisableLimit?: number
  readonly blockProductionLagging?: boolean
  /** The native currency. */
  readonly currency: CurrencyEntry
  readonly withdrawalFee?: number
  readonly depositFee?: number
  readonly surgeEnabled?: boolean
  readonly featuredTokens?: readonly CurrencyEntry[]
  readonly erc20Currencies?: readonly CurrencyEntry[]
  readonly solverCurrencies?: readonly CurrencyEntry[]
  readonly iconUrl?: string
  readonly contracts?: ChainContracts
  readonly baseChainId?: number
  readonly solverAddresses?: readonly string[]
  readonly tags?: readonly string[]
  readonly protocol?: ChainProtocol
}

/**
 * One item of `chains` in `chains.<ENVIRONMENT>.json`, after placeholders are resolved and
 * defaults applied.
 * @typeParam PluginOptions - the family's options, as validated by its plugin's `configSchema`.
 */
export interface ChainEntry<PluginOptions = unknown> extends Omit<PublicChainRecord, 'erc20Currencies'> {
  /**
   * The tokens the chain serves besides its native currency, in the family's own ids (ERC-20
   * addresses, SVM mints, …); served in the public record as Relay's `erc20Currencies`.
   */
  readonly currencies?: readonly CurrencyEntry[]
  /** Private: how to reach the chain. */
  readonly rpc: RpcConfig
  /** Private: family-specific options, validated by the plugin's `configSchema`. */
  readonly plugin?: PluginOptions
  /** Private: confirmation depth the service waits for on this chain, above the family's own. */
  readonly finality?: FinalityConfig
  /** Private: where the deposit watcher starts on its first run. */
  readonly indexer?: IndexerConfig
}

/**
 * Confirmation depth on one chain, for every family: deposits are acted on, and fills and refunds
 * count as final, only this deep (1 = included). The family's own rule still applies: the deeper
 * of the two wins.
 */
export interface FinalityConfig {
  /** Blocks for every deposit, fill and refund on the chain. */
  readonly confirmations?: number
  /** Deeper for large deposits: a deposit of `currency` above `above` (smallest unit) waits for `confirmations`. */
  readonly highValue?: readonly HighValueRule[]
}

export interface HighValueRule {
  /** Currency id in the family's own form (the address, mint, …), checked at start-up. */
  readonly currency: string
  /** Smallest-unit amount, decimal; deposits strictly above it are high value. */
  readonly above: string
  readonly confirmations: number
}

export interface IndexerConfig {
  /**
   * Block height (slot on SVM) the deposit watcher starts from on its first run, so deposits made
   * before the service first started are found; without it the first run starts at the head.
   * Ignored once the watcher has a cursor of its own.
   */
  readonly startBlock?: string
}

/** What a plugin's `createAdapter` receives: the entry with its options validated and defaulted. */
export type ChainConfig<PluginOptions = unknown> = Omit<ChainEntry<PluginOptions>, 'plugin'> & {
  readonly plugin: PluginOptions
}

/** The members of a chain entry that must never be served. */
export const PRIVATE_CHAIN_FIELDS = ['rpc', 'plugin', 'finality', 'indexer'] as const

/** The public record of a chain entry: everything but `rpc` and `plugin`, its `currencies` as Relay's `erc20Currencies`. */
export function toPublicChainRecord(entry: ChainEntry | ChainConfig): PublicChainRecord {
  const { rpc: _rpc, plugin: _plugin, finality: _finality, indexer: _indexer, currencies, ...record } = entry
  return currencies === undefined ? record : { ...record, erc20Currencies: currencies }
}

/** A short human label for a chain in messages: `31337 (pontis-local-a)`. */
export function describeChain(chain: { readonly id: unknown; readonly name?: unknown }): string {
  return typeof chain.name === 'string' ? `${String(chain.id)} (${chain.name})` : String(chain.id)
}

/** The EIP-712 domain the oracle's execution signatures use. */
export interface OracleDomainConfig {
  readonly name: string
  readonly version: string
}

/**
 * The hub: the chain where oracle signatures are verified. Carries every member of the EIP-712
 * domain of execution signatures: name, version, chain id and verifying contract.
 */
export interface HubConfig {
  /** Hub chain id (EIP-712 `chainId`). */
  readonly chainId: number
  /** Hub chain name, for messages and logs. */
  readonly name: string
  /** Oracle verifier contract on the hub (EIP-712 `verifyingContract`). */
  readonly oracleContract: `0x${string}`
  readonly domain: OracleDomainConfig
}

/** An EIP-712 domain, in the form signing libraries take. */
export interface Eip712Domain {
  readonly name: string
  readonly version: string
  readonly chainId: number
  readonly verifyingContract: `0x${string}`
}

/** The EIP-712 domain of oracle execution signatures for a hub. */
export function hubSigningDomain(hub: HubConfig): Eip712Domain {
  return {
    name: hub.domain.name,
    version: hub.domain.version,
    chainId: hub.chainId,
    verifyingContract: hub.oracleContract,
  }
}
