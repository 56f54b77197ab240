/**
 * What every Tron capability shares for one chain: the node API client, the read cache, the vault
 * (the depository: the address deposits pay) and the chain's settings; with the reads several
 * capabilities make (chain fee parameters, head block, a transaction and its effects).
 */
import {
  blockHashQuorum,
  type ChainLabel,
  type ChainWitness,
  PontisError,
  type ReadCache,
} from '@pontis/core/plugin'
import type { TronApiClient } from './api.js'
import { type TronRawTransaction, tronBytes, tronDecodeRaw, tronTransactionId } from './codec.js'
import type { TronPluginConfig } from './config.js'

/** The shared state of one chain. */
export interface TronChainContext {
  readonly label: ChainLabel
  readonly api: TronApiClient
  readonly cache: ReadCache
  /** The depository vault (base58); undefined when the chain has none configured. */
  readonly vault: string | undefined
  readonly options: TronPluginConfig
  /**
   * The chain's other node APIs (`rpc.fallbackUrls`), each asked on its own: a transaction is taken
   * as in a block only when a majority of all the nodes agree on that block's id.
   */
  readonly witnesses: readonly TronWitness[]
  /** Told about a witness that answered another block id for the same number. */
  readonly onDisagreement?: ((witness: ChainWitness, height: bigint) => void) | undefined
}

/** One more node of the chain, asked separately to confirm what the main one read. */
export interface TronWitness extends ChainWitness {
  readonly api: TronApiClient
}

/** Sun per bandwidth byte and per unit of energy, from `getchainparameters`. */
export interface TronFeePrices {
  readonly transactionFee: bigint
  readonly energyFee: bigint
}

/** The chain's current fee prices (cached for the read-cache time). */
export function feePrices(context: TronChainContext): Promise<TronFeePrices> {
  return context.cache.read('chain-parameters', async () => {
    const answer = await context.api.call<{ chainParameter?: { key: string; value?: number }[] }>(
      'getchainparameters',
    )
    const value = (key: string): bigint => {
      const found = answer.chainParameter?.find((entry) => entry.key === key)?.value
      if (typeof found !== 'number') {
        throw new PontisError(
          'RPC_HTTP_ERROR',
          `The Tron node of ${context.label.displayName} has no ${key} parameter.`,
          {
            chainId: context.label.id,
          },
        )
      }
      return BigInt(found)
    }
    return { transactionFee: value('getTransactionFee'), energyFee: value('getEnergyFee') }
  })
}

/**
 * Number of the newest block, asked of the node now (`getnowblock`; readiness probes).
 * @throws PontisError RPC_HTTP_ERROR when the node is unreachable or its answer is not a block.
 */
export async function nodeHeadNumber(context: TronChainContext): Promise<number> {
  const block = await context.api.call<{
    blockID?: unknown
    block_header?: { raw_data?: { number?: unknown } }
  }>('getnowblock')
  // The node's JSON leaves out zero fields: the genesis block has no `number`.
  const number = block.block_header?.raw_data?.number ?? 0
  if (
    typeof block.blockID !== 'string' ||
    typeof number !== 'number' ||
    !Number.isSafeInteger(number) ||
    number < 0
  ) {
    throw new PontisError(
      'RPC_HTTP_ERROR',
      `The Tron node API of ${context.label.displayName} (${context.label.id}) answered getnowblock without a block.`,
      { chainId: context.label.id },
    )
  }
  return number
}

/** The id (hash) of block `number` as `api`'s node has it, lower-case hex; undefined when it has none. */
export async function blockIdAt(api: TronApiClient, number: bigint): Promise<string | undefined> {
  const block = await api.call<{ blockID?: unknown }>('getblockbynum', { num: Number(number) })
  return typeof block.blockID === 'string' ? block.blockID.toLowerCase() : undefined
}

/** Whether a majority of the chain's nodes agree on the id of block `number` (true with one node). */
async function blockVouchedFor(context: TronChainContext, number: bigint): Promise<boolean> {
  if (context.witnesses.length === 0) return true
  const blockId = await blockIdAt(context.api, number)
  if (blockId === undefined) return false
  return blockHashQuorum({
    witnesses: context.witnesses,
    height: number,
    blockHash: blockId,
    ask: (witness, height) => blockIdAt(witness.api, height),
    onDisagreement: context.onDisagreement,
  })
}

/** Number of the newest block (cached for the read-cache time). */
export function headNumber(context: TronChainContext): Promise<number> {
  return context.cache.read('head', () => nodeHeadNumber(context))
}

/**
 * Bandwidth a transaction uses: its `Transaction` protobuf size (raw data and 65-byte signatures
 * with their field headers) plus the 64 bytes the node adds for the result.
 */
export function bandwidthBytes(rawLength: number, signatureCount = 1): bigint {
  const lengthHeader = rawLength < 128 ? 1 : rawLength < 16_384 ? 2 : 3
  return BigInt(1 + lengthHeader + rawLength + signatureCount * 67 + 64)
}

/** The vault, or a clear error when the chain has none configured. */
export function vaultOf(context: TronChainContext): string {
  if (context.vault === undefined) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${context.label.displayName} (${context.label.id}) has no depository vault configured (protocol.v2.depository).`,
      { chainId: context.label.id },
    )
  }
  return context.vault
}

/** The raw data of a transaction's node JSON (`raw_data_hex`), or undefined when it carries none. */
export function rawBytesOf(json: unknown): Uint8Array | undefined {
  const hex = (json as { raw_data_hex?: unknown } | null | undefined)?.raw_data_hex
  return typeof hex === 'string' && /^([0-9a-fA-F]{2})+$/.test(hex) ? tronBytes(hex.toLowerCase()) : undefined
}

/**
 * The decoded raw data, or undefined for a transaction this plugin does not decode (other contract
 * types, fields it does not use): such a transaction makes no tagged transfer.
 */
export function decodeRawIfKnown(rawBytes: Uint8Array): TronRawTransaction | undefined {
  try {
    return tronDecodeRaw(rawBytes)
  } catch {
    return undefined
  }
}

/** A TRC20 Transfer event as the node serves it. */
export interface TronEventLog {
  readonly address: string
  readonly topics: readonly string[]
  readonly data: string
}

/** Where a transaction stands, with its decoded raw data (and logs once it is in a block). */
export type TronLookup =
  | { readonly state: 'not_found' }
  /** Accepted by the node, not in a block yet: no contract result, confirmations or logs. */
  | { readonly state: 'pending'; readonly raw: TronRawTransaction | undefined }
  | {
      readonly state: 'success' | 'reverted'
      /** The node's contract result (SUCCESS, REVERT, OUT_OF_ENERGY…). */
      readonly contractRet: string
      /** Undefined for a contract this plugin does not decode (it makes no tagged transfer). */
      readonly raw: TronRawTransaction | undefined
      readonly blockNumber: bigint
      readonly confirmations: number
      readonly final: boolean
      readonly logs: readonly TronEventLog[]
    }

/**
 * Looks a transaction up (`gettransactionbyid` and `gettransactioninfobyid`). The full node serves
 * a transaction it accepted before it is in a block, while its info is still `{}`: that is
 * `pending`. Unknown to the node (never received, dropped, expired) is `not_found`. With several
 * nodes configured, one in a block a majority of them does not vouch for is `pending` without its
 * raw data: nothing acts on it or signs it.
 */
export async function lookUpTransaction(context: TronChainContext, txId: string): Promise<TronLookup> {
  const [transaction, info] = await Promise.all([
    context.api.call<{ raw_data_hex?: string; ret?: { contractRet?: string }[] }>('gettransactionbyid', {
      value: txId,
      visible: true,
    }),
    context.api.call<{ blockNumber?: number; log?: TronEventLog[] }>('gettransactioninfobyid', {
      value: txId,
    }),
  ])
  const rawBytes = rawBytesOf(transaction)
  if (!rawBytes) return { state: 'not_found' }
  if (tronTransactionId(rawBytes) !== txId) {
    throw new PontisError(
      'RPC_HTTP_ERROR',
      `The Tron node served transaction ${txId} with raw data of another txID.`,
      {
        chainId: context.label.id,
      },
    )
  }
  if (info.blockNumber === undefined) return { state: 'pending', raw: decodeRawIfKnown(rawBytes) }
  if (!(await blockVouchedFor(context, BigInt(info.blockNumber)))) return { state: 'pending', raw: undefined }
  const head = await headNumber(context)
  const confirmations = Math.max(1, head - info.blockNumber + 1)
  const contractRet = transaction.ret?.[0]?.contractRet ?? 'UNKNOWN'
  return {
    state: contractRet === 'SUCCESS' ? 'success' : 'reverted',
    contractRet,
    raw: decodeRawIfKnown(rawBytes),
    blockNumber: BigInt(info.blockNumber),
    confirmations,
    final: confirmations >= context.options.slowConfirmations,
    logs: info.log ?? [],
  }
}
