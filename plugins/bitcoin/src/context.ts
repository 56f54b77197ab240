/**
 * What every Bitcoin capability shares for one chain: the Esplora client, the read cache, the
 * network, the vault (the depository: the address deposits pay) and the chain's settings; with
 * the reads several capabilities make (fee rate, tip height, spendable coins, confirmations).
 */
import { type ChainLabel, type ChainWitness, PontisError, type ReadCache } from '@pontis/core/plugin'
import type { Network } from 'bitcoinjs-lib'
import type { BitcoinNetworkName } from './config.js'
import type { EsploraClient, EsploraTxStatus } from './esplora.js'
import type { ParsedAddress } from './identity.js'
import type { OutpointReservations } from './reservations.js'
import type { Coin } from './transactions.js'

export interface BitcoinChainContext {
  readonly label: ChainLabel
  readonly network: BitcoinNetworkName
  readonly params: Network
  readonly esplora: EsploraClient
  readonly cache: ReadCache
  /** The depository vault; undefined when the chain has none configured. */
  readonly vault: ParsedAddress | undefined
  readonly confirmations: number
  readonly highValueConfirmations: number
  /** Per currency id: amounts above this wait for `highValueConfirmations`. */
  readonly highValueThresholds: ReadonlyMap<string, bigint>
  readonly feeTargetBlocks: number
  readonly minFeeRate: number
  readonly maxFeeRate: number
  readonly dustLimit: bigint
  readonly depositAddressSeed: string | undefined
  /**
   * Outpoints spent by transactions this process signed, not to be spent again for a while: used
   * when the signer passes no shared holds (the solver passes its store's).
   */
  readonly reservations: OutpointReservations
  /** Milliseconds a coin stays held for a signed transaction (`reservationSeconds`). */
  readonly reservationMs: number
  /** Highest fee rate a stuck transaction is replaced at, sat/vB (`maxReplacementFeeRate`). */
  readonly maxReplacementFeeRate: number
  readonly maxScanPages: number
  /**
   * The chain's other Esplora APIs (`rpc.fallbackUrls`), each asked on its own: a transaction is
   * taken as mined only when a majority of all of them agree on the hash of its block.
   */
  readonly witnesses: readonly EsploraWitness[]
  /** Told about a witness that answered another block hash for the same height. */
  readonly onDisagreement?: ((witness: ChainWitness, height: bigint) => void) | undefined
}

/** One more Esplora API of the chain, asked separately to confirm what the main one read. */
export interface EsploraWitness extends ChainWitness {
  readonly esplora: EsploraClient
}

/**
 * The fee rate, whole sat/vB: Esplora's estimate for `feeTargetBlocks` (or the nearest faster
 * target it has; a slower one when it has no faster), rounded up, within [minFeeRate, maxFeeRate]
 * and at least 1. Whole units keep `amount = units × unitPrice` exact in cost estimates.
 */
export function feeRate(context: BitcoinChainContext): Promise<bigint> {
  return context.cache.read('fee-rate', async () => {
    const estimates = await context.esplora.feeEstimates()
    const targets = Object.keys(estimates)
      .map(Number)
      .filter(
        (target) => Number.isInteger(target) && target > 0 && Number.isFinite(estimates[String(target)]),
      )
      .sort((a, b) => a - b)
    const faster = targets.filter((target) => target <= context.feeTargetBlocks).at(-1)
    const chosen = faster ?? targets[0]
    const estimate = chosen === undefined ? 0 : (estimates[String(chosen)] as number)
    const bounded = Math.min(context.maxFeeRate, Math.max(context.minFeeRate, estimate))
    return BigInt(Math.max(1, Math.ceil(bounded)))
  })
}

/** Height of the newest block (cached for the read-cache time). */
export function tipHeight(context: BitcoinChainContext): Promise<number> {
  return context.cache.read('tip-height', () => context.esplora.tipHeight())
}

/** Blocks since inclusion (1 = in the newest block), 0 while in the mempool. */
export function confirmationsOf(status: EsploraTxStatus, tip: number): number {
  if (!status.confirmed || status.block_height === undefined) return 0
  return Math.max(1, tip - status.block_height + 1)
}

/** Confirmations a deposit of `amount` in `currencyId` waits for: more above the currency's threshold. */
export function requiredConfirmations(
  context: BitcoinChainContext,
  currencyId: string,
  amount: bigint,
): number {
  const threshold = context.highValueThresholds.get(currencyId)
  return threshold !== undefined && amount > threshold
    ? Math.max(context.confirmations, context.highValueConfirmations)
    : context.confirmations
}

/** The vault, or a clear error when the chain has none configured. */
export function vaultOf(context: BitcoinChainContext): ParsedAddress {
  if (!context.vault) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${context.label.displayName} (${context.label.id}) has no depository vault configured (protocol.v2.depository).`,
      { chainId: context.label.id },
    )
  }
  return context.vault
}

/**
 * The spendable coins of `address`, confirmed and in the mempool (Esplora leaves out those already
 * spent by a mempool transaction). Signing leaves out those held for signed transactions.
 */
export async function coinsOf(context: BitcoinChainContext, address: string): Promise<Coin[]> {
  const utxos = await context.esplora.addressUtxos(address)
  return utxos.map((utxo) => ({
    txid: utxo.txid,
    vout: utxo.vout,
    value: BigInt(utxo.value),
    confirmed: utxo.status.confirmed,
  }))
}

/**
 * The balance of `address`, satoshi, by the spec's rule: confirmed funded outputs minus confirmed
 * spent outputs minus outputs spent by mempool transactions. Outputs funded by mempool
 * transactions are not counted: until mined they can be replaced or dropped, whereas an owner who
 * has broadcast a spend has committed those coins already. (A mempool spend of a mempool output
 * makes the rule undercount; the result is never below 0.)
 */
export async function balanceOf(
  context: BitcoinChainContext,
  address: string,
  options: { fresh?: boolean } = {},
): Promise<bigint> {
  const read = async () => {
    const stats = await context.esplora.addressStats(address)
    const balance =
      BigInt(stats.chain_stats.funded_txo_sum) -
      BigInt(stats.chain_stats.spent_txo_sum) -
      BigInt(stats.mempool_stats.spent_txo_sum)
    return balance > 0n ? balance : 0n
  }
  return options.fresh ? read() : context.cache.read(`balance:${address}`, read)
}
