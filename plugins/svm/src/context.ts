/**
 * What every SVM capability shares for one chain: the connection, the read cache, the vault (the
 * depository: the account deposits are paid to) and the chain's settings.
 */
import { type ChainLabel, type ChainWitness, PontisError, type ReadCache } from '@pontis/core/plugin'
import { getMint, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token'
import { type Connection, type Finality, PublicKey } from '@solana/web3.js'
import { SVM_NATIVE_CURRENCY_ID } from './identity.js'

/** The wrapped-native mint: how swap routes name the native currency. */
export const WRAPPED_NATIVE_MINT = new PublicKey('So11111111111111111111111111111111111111112')

export interface SvmChainContext {
  readonly label: ChainLabel
  readonly connection: Connection
  readonly cache: ReadCache
  /** The depository vault's owner; undefined when the chain has none configured. */
  readonly vault: PublicKey | undefined
  /** Token currencies of the chain's config (mints), whose vault token accounts are watched. */
  readonly tokenCurrencies: readonly string[]
  /** Swap route source (aggregator quote and swap-instructions API); none: no origin swaps. */
  readonly swapApiUrl: string | undefined
  readonly swapApiTimeoutMs: number
  readonly computeUnitLimit: number
  readonly signatureFeeLamports: bigint
  /** Most signatures one deposit scan reads per watched account. */
  readonly maxScanSignatures: number
  /**
   * The chain's other nodes (`rpc.fallbackUrls`), each asked on its own: a transaction's facts are
   * trusted only when a majority of all the nodes agree on the blockhash of its slot.
   */
  readonly witnesses?: readonly SvmWitness[]
  /** Told about a witness that answered another blockhash for the same slot. */
  readonly onDisagreement?: ((witness: ChainWitness, slot: bigint) => void) | undefined
}

/** One more node of the chain, asked separately to confirm what the main connection read. */
export interface SvmWitness extends ChainWitness {
  readonly connection: Connection
}

/** Commitment of `fast` reads and of everything a quote or fill acts on. */
export const CONFIRMED: Finality = 'confirmed'

// web3.js words every JSON-RPC error answer "failed to get …: <reason>": only a network failure or
// an HTTP error status (its "<status> <text>: …" form) is the RPC's trouble rather than the request's.
const TRANSPORT_FAILURE =
  /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|ETIMEDOUT|timed? ?out|(^|: )(429|5\d\d) [A-Z]/i

/** Runs an RPC call, mapping transport failures to the transient RPC_HTTP_ERROR that names the chain. */
export async function rpc<T>(context: SvmChainContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof PontisError) throw error
    const message = error instanceof Error ? error.message : String(error)
    if (TRANSPORT_FAILURE.test(message)) {
      throw new PontisError(
        'RPC_HTTP_ERROR',
        `The RPC of ${context.label.displayName} (${context.label.id}) is unreachable or failing; retry shortly.`,
        { chainId: context.label.id },
        { cause: error },
      )
    }
    throw error
  }
}

export const isNative = (currencyId: string): boolean => currencyId === SVM_NATIVE_CURRENCY_ID

/** A mint's token program and decimals; mints never change either, so they are cached for long. */
export interface MintInfo {
  readonly programId: PublicKey
  readonly decimals: number
}

const MINT_TTL_MS = 10 * 60_000

/**
 * The token program and decimals of `mint`.
 * @throws PontisError UNSUPPORTED_CURRENCY when `mint` is not a mint of SPL Token or Token-2022.
 */
export function mintInfo(context: SvmChainContext, mint: string): Promise<MintInfo> {
  return context.cache.read(
    `mint:${mint}`,
    async () => {
      const key = new PublicKey(mint)
      const account = await rpc(context, () => context.connection.getAccountInfo(key, CONFIRMED))
      const programId = account?.owner.equals(TOKEN_2022_PROGRAM_ID)
        ? TOKEN_2022_PROGRAM_ID
        : account?.owner.equals(TOKEN_PROGRAM_ID)
          ? TOKEN_PROGRAM_ID
          : undefined
      if (!account || !programId) {
        throw new PontisError(
          'UNSUPPORTED_CURRENCY',
          `${mint} is not a token mint on ${context.label.displayName} (${context.label.id}).`,
          { chainId: context.label.id, currency: mint },
        )
      }
      const parsed = await rpc(context, () => getMint(context.connection, key, CONFIRMED, programId))
      return { programId, decimals: parsed.decimals }
    },
    MINT_TTL_MS,
  )
}

/** True when an account exists at `address` (briefly cached). */
export function accountExists(context: SvmChainContext, address: PublicKey): Promise<boolean> {
  return context.cache.read(`exists:${address.toBase58()}`, async () => {
    const account = await rpc(context, () => context.connection.getAccountInfo(address, CONFIRMED))
    return account !== null
  })
}

/** Lamports that keep an account of `size` bytes alive (rent exemption), cached. */
export function rentExemption(context: SvmChainContext, size: number): Promise<bigint> {
  return context.cache.read(
    `rent:${size}`,
    async () => BigInt(await rpc(context, () => context.connection.getMinimumBalanceForRentExemption(size))),
    MINT_TTL_MS,
  )
}

/** The vault, or a clear error when the chain has no depository configured. */
export function vaultOf(context: SvmChainContext): PublicKey {
  if (!context.vault) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${context.label.displayName} (${context.label.id}) has no depository vault configured (protocol.v2.depository).`,
      { chainId: context.label.id },
    )
  }
  return context.vault
}
