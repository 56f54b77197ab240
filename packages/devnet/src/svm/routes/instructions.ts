/**
 * Turns a priced route into the instructions a client runs (pure: no chain access) and the vault
 * funding the simulator must do first. There is no swap program, so every hop is two SPL Token
 * `transferChecked`: the user's input into the pool's input vault (user as owner), and the output
 * from the pool's per-(pool, user) output vault onward (user as the vault's approved delegate).
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createSyncNativeInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import { type Keypair, PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js'
import { SVM_ROUTE_AUTHORITY, SVM_WRAPPED_NATIVE_MINT, svmDevnetKeypair } from '../accounts.js'
import type { ApiInstruction, SwapInstructionsResponse } from './api.js'
import type { RouteToken } from './pools.js'
import type { Route, RouteHop } from './routing.js'

/** Options of `/swap-instructions`, parsed. */
export interface SwapPlanOptions {
  user: PublicKey
  wrapAndUnwrapSol: boolean
  useSharedAccounts: boolean
  /** Receives the output instead of the user's ATA (must exist). */
  destinationTokenAccount?: PublicKey
}

/** One pool output vault the simulator funds and approves before the user's transaction runs. */
export interface VaultFunding {
  /** The vault's keypair (it signs its own creation). */
  readonly vault: Keypair
  readonly token: RouteToken
  /** Exactly what the hop pays out, and what the user is approved to move as delegate. */
  readonly amount: bigint
}

/** Everything a swap needs: the user's instructions and the simulator's funding. */
export interface SwapPlan {
  readonly setupInstructions: readonly TransactionInstruction[]
  /** The route's instructions in execution order (the first is the API's `swapInstruction`). */
  readonly routeInstructions: readonly TransactionInstruction[]
  readonly cleanupInstruction: TransactionInstruction | null
  readonly funding: readonly VaultFunding[]
  /** A compute-unit budget that covers setup, route and cleanup. */
  readonly computeUnitLimit: number
}

const WRAPPED_NATIVE = new PublicKey(SVM_WRAPPED_NATIVE_MINT)
const ROUTE_AUTHORITY = SVM_ROUTE_AUTHORITY.keypair.publicKey

// Generous upper bounds: creating an ATA (CPIs into System and Token) costs the most; the tests
// check that measured use on LiteSVM stays below the estimate (it is several times lower).
const COMPUTE_UNITS = { base: 5_000, createAccount: 30_000, tokenInstruction: 8_000 }

const inputVaults = new Map<string, PublicKey>()

/** A pool input vault: the route authority's ATA of the mint, shared by every pool and user. */
export function poolInputVault(mint: string): PublicKey {
  let vault = inputVaults.get(mint)
  if (!vault) {
    vault = getAssociatedTokenAddressSync(new PublicKey(mint), ROUTE_AUTHORITY)
    inputVaults.set(mint, vault)
  }
  return vault
}

const outputVaults = new Map<string, Keypair>()
const OUTPUT_VAULT_CACHE_LIMIT = 10_000

/**
 * The output vault of one pool, output mint and user: a token account owned by the route authority
 * at the address of a deterministic keypair, so users never overwrite each other's approvals.
 */
export function poolOutputVault(ammKey: string, outputMint: string, user: PublicKey): Keypair {
  const name = `route/vault/${ammKey}/${outputMint}/${user.toBase58()}`
  let vault = outputVaults.get(name)
  if (!vault) {
    if (outputVaults.size >= OUTPUT_VAULT_CACHE_LIMIT) outputVaults.clear()
    vault = svmDevnetKeypair(name)
    outputVaults.set(name, vault)
  }
  return vault
}

function mintOf(token: RouteToken): PublicKey {
  return new PublicKey(token.mint)
}

function userTokenAccount(user: PublicKey, token: RouteToken): PublicKey {
  return getAssociatedTokenAddressSync(mintOf(token), user, true)
}

/** The hop's pool program id and pool accounts, as read-only accounts the token program ignores. */
function poolAccountMetas(hop: RouteHop) {
  return [hop.pool.programId, ...hop.pool.accounts].map((address) => ({
    pubkey: new PublicKey(address),
    isSigner: false,
    isWritable: false,
  }))
}

/** Builds the user's instructions for a route, and the funding they rely on. */
export function planSwap(route: Route, options: SwapPlanOptions): SwapPlan {
  const { user, wrapAndUnwrapSol, useSharedAccounts, destinationTokenAccount } = options
  const first = route.hops[0]
  const last = route.hops.at(-1)
  if (!first || !last) throw new Error('empty route')
  const wrappedInput = first.input.mint === SVM_WRAPPED_NATIVE_MINT && wrapAndUnwrapSol
  const unwrappedOutput =
    last.output.mint === SVM_WRAPPED_NATIVE_MINT && wrapAndUnwrapSol && destinationTokenAccount === undefined
  let ataCreations = 0
  const createAta = (token: RouteToken) => {
    ataCreations += 1
    return createAssociatedTokenAccountIdempotentInstruction(
      user,
      userTokenAccount(user, token),
      user,
      mintOf(token),
    )
  }

  const setupInstructions: TransactionInstruction[] = []
  if (wrappedInput) {
    const wrappedAccount = userTokenAccount(user, first.input)
    setupInstructions.push(
      createAta(first.input),
      SystemProgram.transfer({ fromPubkey: user, toPubkey: wrappedAccount, lamports: route.inAmount }),
      createSyncNativeInstruction(wrappedAccount),
    )
  }
  if (!useSharedAccounts) for (const hop of route.hops.slice(1)) setupInstructions.push(createAta(hop.input))
  if (destinationTokenAccount === undefined) setupInstructions.push(createAta(last.output))

  const routeInstructions: TransactionInstruction[] = []
  const funding: VaultFunding[] = []
  for (const [index, hop] of route.hops.entries()) {
    const legInstructions: TransactionInstruction[] = []
    const inputVault = poolInputVault(hop.input.mint)
    // With shared accounts, a later hop's input is already in its pool's input vault.
    if (index === 0 || !useSharedAccounts)
      legInstructions.push(
        createTransferCheckedInstruction(
          userTokenAccount(user, hop.input),
          mintOf(hop.input),
          inputVault,
          user,
          hop.inAmount,
          hop.input.decimals,
        ),
      )
    const next = route.hops[index + 1]
    const destination = next
      ? useSharedAccounts
        ? poolInputVault(next.input.mint)
        : userTokenAccount(user, hop.output)
      : (destinationTokenAccount ?? userTokenAccount(user, hop.output))
    const outputVault = poolOutputVault(hop.pool.ammKey, hop.output.mint, user)
    legInstructions.push(
      createTransferCheckedInstruction(
        outputVault.publicKey,
        mintOf(hop.output),
        destination,
        user,
        hop.outAmount,
        hop.output.decimals,
      ),
    )
    legInstructions[0]?.keys.push(...poolAccountMetas(hop))
    routeInstructions.push(...legInstructions)
    funding.push({ vault: outputVault, token: hop.output, amount: hop.outAmount })
  }

  const cleanupInstruction =
    wrappedInput || unwrappedOutput
      ? createCloseAccountInstruction(getAssociatedTokenAddressSync(WRAPPED_NATIVE, user, true), user, user)
      : null

  const cheapInstructions =
    setupInstructions.length - ataCreations + routeInstructions.length + (cleanupInstruction ? 1 : 0)
  const computeUnitLimit =
    COMPUTE_UNITS.base +
    ataCreations * COMPUTE_UNITS.createAccount +
    cheapInstructions * COMPUTE_UNITS.tokenInstruction

  return { setupInstructions, routeInstructions, cleanupInstruction, funding, computeUnitLimit }
}

/** An instruction as the API serializes it. */
export function toApiInstruction(instruction: TransactionInstruction): ApiInstruction {
  return {
    programId: instruction.programId.toBase58(),
    accounts: instruction.keys.map((key) => ({
      pubkey: key.pubkey.toBase58(),
      isSigner: key.isSigner,
      isWritable: key.isWritable,
    })),
    data: Buffer.from(instruction.data).toString('base64'),
  }
}

/** A swap plan as the `/swap-instructions` answer. */
export function swapInstructionsResponse(plan: SwapPlan): SwapInstructionsResponse {
  const [swapInstruction, ...otherInstructions] = plan.routeInstructions
  if (!swapInstruction) throw new Error('empty route')
  return {
    tokenLedgerInstruction: null,
    computeBudgetInstructions: [],
    setupInstructions: plan.setupInstructions.map(toApiInstruction),
    swapInstruction: toApiInstruction(swapInstruction),
    cleanupInstruction: plan.cleanupInstruction ? toApiInstruction(plan.cleanupInstruction) : null,
    otherInstructions: otherInstructions.map(toApiInstruction),
    addressLookupTableAddresses: [],
    prioritizationFeeLamports: 0,
    computeUnitLimit: plan.computeUnitLimit,
  }
}
