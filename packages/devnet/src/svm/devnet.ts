/**
 * The local SVM devnet: a LiteSVM-backed Solana RPC (see `rpc.ts`) with the devnet cast of
 * `accounts.ts` funded at start by real transactions, all paid by the faucet so every other account
 * holds exactly what `SVM_FUNDING` declares:
 * - SOL to the solver, the users, the vault owner, the route authority and the mint authority;
 * - the stablecoin and the route-token mints created at their keypair addresses (mint authority
 *   SVM_MINT_AUTHORITY, no freeze authority, decimals as declared);
 * - USDC to the solver's and the users' associated token accounts, wSOL (wrapped by a transfer and
 *   syncNative) to the solver's, every route token to every user's;
 * - the vault owner's empty USDC and wSOL associated token accounts (a deployed depository has them).
 * The funding slots are then finalized before the devnet is handed out.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToCheckedInstruction,
  createSyncNativeInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {
  type Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'
import {
  SVM_FAUCET,
  SVM_FUNDING,
  SVM_MINT_AUTHORITY,
  SVM_ROUTE_AUTHORITY,
  SVM_ROUTE_TOKENS,
  SVM_SOLVER,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  SVM_WRAPPED_NATIVE_MINT,
  type SvmDevAccount,
  type SvmDevMint,
} from './accounts.js'
import { RpcError, type SvmLedger, type SvmRpcServer, startSvmRpcServer } from './rpc.js'

/** Options of {@link startSvmDevnet}. */
export interface SvmDevnetOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string
  /** RPC port; 0 or omitted picks a free one. */
  port?: number
  /** Slots after which a transaction counts as finalized (default 2). */
  finalizedDepth?: number
  /** Opens a slot every this many milliseconds (off by default). */
  slotIntervalMs?: number
  /** Receives one line per start-up step. */
  log?: (message: string) => void
}

/** A running SVM devnet: its RPC server, funded. */
export type SvmDevnet = SvmRpcServer

/** The associated token account of `owner` for `mint` (SPL Token). */
export function svmAssociatedTokenAddress(owner: string, mint: string): string {
  return getAssociatedTokenAddressSync(
    new PublicKey(mint),
    new PublicKey(owner),
    true,
    TOKEN_PROGRAM_ID,
  ).toBase58()
}

/**
 * Starts the RPC and funds the devnet cast (see the module comment); one log line per step. Each
 * call starts an independent devnet, so several can run in one process.
 *
 * @throws Error when the server cannot start or a funding transaction fails (the server is
 *   stopped again first).
 */
export async function startSvmDevnet(options: SvmDevnetOptions = {}): Promise<SvmDevnet> {
  const log = options.log ?? (() => {})
  const server = await startSvmRpcServer({
    host: options.host,
    port: options.port,
    finalizedDepth: options.finalizedDepth,
    slotIntervalMs: options.slotIntervalMs,
    faucet: SVM_FAUCET.keypair,
    log,
  })
  try {
    log(`SVM devnet RPC listening on ${server.rpcUrl} (subscriptions on ${server.wsUrl})`)
    fund(server.ledger, log)
    const slot = server.advanceSlots(server.ledger.finalizedDepth)
    log(`SVM devnet funded; funding finalized at slot ${slot}`)
  } catch (error) {
    await server.stop()
    throw error
  }
  return server
}

/** The environment variables the local configs read for the SVM devnet. */
export function svmDevnetEnvironment(devnet: Pick<SvmDevnet, 'rpcUrl'>): { LOCAL_SVM_RPC_URL: string } {
  return { LOCAL_SVM_RPC_URL: devnet.rpcUrl }
}

function sol(lamports: bigint): string {
  return `${Number(lamports) / 1e9} SOL`
}

/** Sends a faucet-paid transaction through the ledger's sendTransaction path (with preflight). */
function sendFunded(
  ledger: SvmLedger,
  step: string,
  instructions: TransactionInstruction[],
  signers: Keypair[] = [],
): string {
  const transaction = new Transaction({
    feePayer: SVM_FAUCET.keypair.publicKey,
    recentBlockhash: ledger.latestBlockhash().blockhash,
  }).add(...instructions)
  transaction.sign(SVM_FAUCET.keypair, ...signers)
  try {
    return ledger.sendTransaction(transaction.serialize())
  } catch (error) {
    const detail =
      error instanceof RpcError ? `${error.message} ${JSON.stringify(error.data ?? '')}` : String(error)
    throw new Error(`SVM devnet funding failed (${step}): ${detail}`)
  }
}

function mintTo(owner: SvmDevAccount, mint: SvmDevMint, amount: bigint): TransactionInstruction[] {
  const mintKey = new PublicKey(mint.address)
  const ata = new PublicKey(svmAssociatedTokenAddress(owner.address, mint.address))
  return [
    createAssociatedTokenAccountIdempotentInstruction(
      SVM_FAUCET.keypair.publicKey,
      ata,
      owner.keypair.publicKey,
      mintKey,
    ),
    createMintToCheckedInstruction(mintKey, ata, SVM_MINT_AUTHORITY.keypair.publicKey, amount, mint.decimals),
  ]
}

function fund(ledger: SvmLedger, log: (message: string) => void): void {
  const sols: [SvmDevAccount, bigint][] = [
    [SVM_SOLVER, SVM_FUNDING.solverLamports],
    ...SVM_USERS.map((user): [SvmDevAccount, bigint] => [user, SVM_FUNDING.userLamports]),
    [SVM_VAULT_OWNER, SVM_FUNDING.vaultLamports],
    [SVM_ROUTE_AUTHORITY, SVM_FUNDING.routeAuthorityLamports],
    [SVM_MINT_AUTHORITY, SVM_FUNDING.mintAuthorityLamports],
  ]
  for (const [account, lamports] of sols) ledger.requestAirdrop(account.keypair.publicKey, Number(lamports))
  log(`airdropped SOL: ${sols.map(([account, lamports]) => `${account.name} ${sol(lamports)}`).join(', ')}`)

  const mints = [SVM_STABLECOIN, ...SVM_ROUTE_TOKENS]
  const mintRent = ledger.minimumBalanceForRentExemption(MINT_SIZE)
  for (const mint of mints) {
    sendFunded(
      ledger,
      `create mint ${mint.symbol}`,
      [
        SystemProgram.createAccount({
          fromPubkey: SVM_FAUCET.keypair.publicKey,
          newAccountPubkey: mint.keypair.publicKey,
          lamports: mintRent,
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(
          mint.keypair.publicKey,
          mint.decimals,
          SVM_MINT_AUTHORITY.keypair.publicKey,
          null,
        ),
      ],
      [mint.keypair],
    )
  }
  log(
    `created mints: ${mints.map((mint) => `${mint.symbol} ${mint.address} (${mint.decimals} decimals)`).join(', ')}`,
  )

  const stablecoinHolders: [SvmDevAccount, bigint][] = [
    [SVM_SOLVER, SVM_FUNDING.solverStablecoin],
    ...SVM_USERS.map((user): [SvmDevAccount, bigint] => [user, SVM_FUNDING.userStablecoin]),
  ]
  for (const [holder, amount] of stablecoinHolders) {
    sendFunded(ledger, `mint USDC to ${holder.name}`, mintTo(holder, SVM_STABLECOIN, amount), [
      SVM_MINT_AUTHORITY.keypair,
    ])
  }
  log(
    `minted USDC: ${stablecoinHolders.map(([holder, amount]) => `${holder.name} ${Number(amount) / 10 ** SVM_STABLECOIN.decimals}`).join(', ')}`,
  )

  const nativeMint = new PublicKey(SVM_WRAPPED_NATIVE_MINT)
  const solverWrapped = new PublicKey(svmAssociatedTokenAddress(SVM_SOLVER.address, SVM_WRAPPED_NATIVE_MINT))
  sendFunded(ledger, 'wrap SOL for the solver', [
    createAssociatedTokenAccountIdempotentInstruction(
      SVM_FAUCET.keypair.publicKey,
      solverWrapped,
      SVM_SOLVER.keypair.publicKey,
      nativeMint,
    ),
    SystemProgram.transfer({
      fromPubkey: SVM_FAUCET.keypair.publicKey,
      toPubkey: solverWrapped,
      lamports: SVM_FUNDING.solverWrappedNative,
    }),
    createSyncNativeInstruction(solverWrapped),
  ])
  log(`wrapped SOL for the solver: ${sol(SVM_FUNDING.solverWrappedNative)} in ${solverWrapped.toBase58()}`)

  for (const user of SVM_USERS) {
    const instructions = SVM_ROUTE_TOKENS.flatMap((token) =>
      mintTo(user, token, SVM_FUNDING.userRouteTokenWhole * 10n ** BigInt(token.decimals)),
    )
    sendFunded(ledger, `mint route tokens to ${user.name}`, instructions, [SVM_MINT_AUTHORITY.keypair])
  }
  log(
    `minted route tokens (${SVM_ROUTE_TOKENS.map((token) => token.symbol).join(', ')}): ${SVM_FUNDING.userRouteTokenWhole} each to ${SVM_USERS.map((user) => user.name).join(', ')}`,
  )

  sendFunded(
    ledger,
    'create the vault token accounts',
    [SVM_STABLECOIN.address, SVM_WRAPPED_NATIVE_MINT].map((mint) =>
      createAssociatedTokenAccountIdempotentInstruction(
        SVM_FAUCET.keypair.publicKey,
        new PublicKey(svmAssociatedTokenAddress(SVM_VAULT_OWNER.address, mint)),
        SVM_VAULT_OWNER.keypair.publicKey,
        new PublicKey(mint),
      ),
    ),
  )
  log(`created the vault owner's USDC and wSOL token accounts (empty)`)
}
