/**
 * The SVM devnet's fixed cast: keypairs derived from public seeds (sha256 of `pontis-devnet-svm/<name>`
 * as the ed25519 seed) and mint addresses derived the same way, so every run, every test and
 * `configs/chains.local.json` agree on them. Published test keys: never use them anywhere else.
 */
import { createHash } from 'node:crypto'
import { Keypair, PublicKey } from '@solana/web3.js'

/** The chain id this interface gives Solana; the local SVM devnet uses it too. */
export const SVM_DEVNET_CHAIN_ID = 792703809

/** The native currency id (the system program's address) and its decimals. */
export const SVM_NATIVE_CURRENCY_ID = '11111111111111111111111111111111'
export const SVM_NATIVE_DECIMALS = 9

/** The wrapped-native mint (the real one; LiteSVM is started with native mints). */
export const SVM_WRAPPED_NATIVE_MINT = 'So11111111111111111111111111111111111111112'

/** The keypair whose ed25519 seed is sha256(`pontis-devnet-svm/<name>`). */
export function svmDevnetKeypair(name: string): Keypair {
  return Keypair.fromSeed(createHash('sha256').update(`pontis-devnet-svm/${name}`).digest())
}

/** A named devnet account. */
export interface SvmDevAccount {
  readonly name: string
  readonly keypair: Keypair
  /** Base58 public key. */
  readonly address: string
}

function account(name: string): SvmDevAccount {
  const keypair = svmDevnetKeypair(name)
  return Object.freeze({ name, keypair, address: keypair.publicKey.toBase58() })
}

/** Pays fills on the SVM devnet (the reference solver). */
export const SVM_SOLVER = account('solver')
/** Owns the depository vault: deposits are paid to it (SOL) and to its associated token accounts. */
export const SVM_VAULT_OWNER = account('vault')
/** Mint authority of every devnet mint. */
export const SVM_MINT_AUTHORITY = account('mint-authority')
/** Owns the route simulator's pool vaults. */
export const SVM_ROUTE_AUTHORITY = account('route-authority')
/** Funded test users. */
export const SVM_USERS: readonly SvmDevAccount[] = Object.freeze(
  [0, 1, 2, 3].map((index) => account(`user-${index}`)),
)

/** A devnet SPL mint: its address is the public key of the keypair named `mint/<symbol>`. */
export interface SvmDevMint {
  readonly symbol: string
  readonly name: string
  readonly decimals: number
  readonly keypair: Keypair
  readonly address: string
}

function mint(symbol: string, name: string, decimals: number): SvmDevMint {
  const keypair = svmDevnetKeypair(`mint/${symbol.toLowerCase()}`)
  return Object.freeze({ symbol, name, decimals, keypair, address: keypair.publicKey.toBase58() })
}

/** The stablecoin (as USDC: 6 decimals). */
export const SVM_STABLECOIN = mint('USDC', 'USD Coin (SVM devnet)', 6)

/**
 * Tokens that exist only to be swapped through the route simulator (multi-hop routes need
 * intermediate tokens). Users hold some of each; the solver never does.
 */
export const SVM_ROUTE_TOKENS: readonly SvmDevMint[] = Object.freeze([
  mint('PBONK', 'Pontis Bonk (route token)', 5),
  mint('PJUP', 'Pontis Jupiter (route token)', 6),
  mint('PRAY', 'Pontis Ray (route token)', 6),
  mint('PORCA', 'Pontis Orca (route token)', 6),
])

/** Lamports and token amounts the devnet funds at start. */
export const SVM_FUNDING = Object.freeze({
  solverLamports: 1_000n * 10n ** 9n,
  userLamports: 100n * 10n ** 9n,
  vaultLamports: 10n * 10n ** 9n,
  routeAuthorityLamports: 1_000n * 10n ** 9n,
  mintAuthorityLamports: 10n * 10n ** 9n,
  /** USDC to the solver: 1,000,000. */
  solverStablecoin: 1_000_000n * 10n ** 6n,
  /** USDC to each user: 10,000. */
  userStablecoin: 10_000n * 10n ** 6n,
  /** wSOL to the solver (so wrapped-native outputs can be filled): 1,000. */
  solverWrappedNative: 1_000n * 10n ** 9n,
  /** Each route token to each user: 1,000,000 whole tokens. */
  userRouteTokenWhole: 1_000_000n,
})

/** Public key of a base58 address (throws on a bad one: devnet inputs are ours). */
export function svmPublicKey(address: string): PublicKey {
  return new PublicKey(address)
}

/**
 * The devnet's faucet: pays `requestAirdrop` and everything the start-up funding costs (account
 * rent, fees), so every other account holds exactly what {@link SVM_FUNDING} declares.
 */
export const SVM_FAUCET = account('faucet')
