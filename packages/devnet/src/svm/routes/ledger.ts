/**
 * How the route simulator reaches the chain, and the transactions it sends there: the pool input
 * vaults at start, and before each `/swap-instructions` answer the per-(pool, user) output vaults
 * (created once, funded with exactly the hop's output, and the user approved as their delegate).
 */
import { randomBytes } from 'node:crypto'
import {
  ACCOUNT_SIZE,
  createApproveCheckedInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeAccount3Instruction,
  createMintToInstruction,
  createSyncNativeInstruction,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {
  type Connection,
  type Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'
import { SVM_MINT_AUTHORITY, SVM_ROUTE_AUTHORITY, SVM_WRAPPED_NATIVE_MINT } from '../accounts.js'
import { poolInputVault, type VaultFunding } from './instructions.js'
import { SVM_ROUTE_GRAPH_TOKENS } from './pools.js'

/** How the simulator reaches the chain: send a fully signed legacy transaction and wait until it executed. */
export interface RouteLedger {
  latestBlockhash(): Promise<string>
  /** Resolves with the signature once executed; rejects (with the chain's error) if it failed. */
  send(transaction: Transaction): Promise<string>
}

/** Options of `connectionLedger`. */
export interface ConnectionLedgerOptions {
  /** How often to poll the signature status (default 100 ms). */
  pollIntervalMs?: number
  /** How long to wait for confirmation before rejecting (default 30 s). */
  timeoutMs?: number
}

/**
 * A ledger over a web3.js Connection: `sendRawTransaction`, then poll `getSignatureStatuses` until
 * the transaction is confirmed; rejects with the transaction error if it failed.
 */
export function connectionLedger(connection: Connection, options: ConnectionLedgerOptions = {}): RouteLedger {
  const pollIntervalMs = options.pollIntervalMs ?? 100
  const timeoutMs = options.timeoutMs ?? 30_000
  return {
    async latestBlockhash() {
      return (await connection.getLatestBlockhash('confirmed')).blockhash
    },
    async send(transaction) {
      const signature = await connection.sendRawTransaction(transaction.serialize(), {
        preflightCommitment: 'confirmed',
      })
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const [status] = (await connection.getSignatureStatuses([signature])).value
        if (status?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(status.err)}`)
        if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized')
          return signature
        if (Date.now() > deadline)
          throw new Error(`transaction ${signature} not confirmed after ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, pollIntervalMs))
      }
    },
  }
}

/** The SPL memo program (id MemoSq4…, the v2/v3 one); LiteSVM ships it alongside memo v1. */
const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')
const ROUTE_AUTHORITY = SVM_ROUTE_AUTHORITY.keypair
const MINT_AUTHORITY = SVM_MINT_AUTHORITY.keypair
/** Rent-exempt minimum of a token account at the default rent (3480 lamports per byte-year, 2 years). */
const TOKEN_ACCOUNT_RENT = BigInt((128 + ACCOUNT_SIZE) * 3480 * 2)

/** Sends the simulator's own transactions: the route authority pays, owns the vaults and approves. */
export class VaultFunder {
  /** Output vaults known to exist (created, or funded, by this process). */
  private readonly existingVaults = new Set<string>()
  /** Funding of one user waits for that user's previous funding (they share vaults). */
  private readonly userQueues = new Map<string, Promise<unknown>>()
  /** Memo prefix: unique per simulator, so equal funding transactions never share a signature. */
  private readonly session = randomBytes(6).toString('hex')
  private nonce = 0

  constructor(
    private readonly ledger: RouteLedger,
    private readonly log: (message: string) => void,
  ) {}

  /** Creates the pool input vaults (the route authority's ATAs of every graph token), idempotently. */
  async setUpInputVaults(): Promise<void> {
    const instructions = SVM_ROUTE_GRAPH_TOKENS.map((token) =>
      createAssociatedTokenAccountIdempotentInstruction(
        ROUTE_AUTHORITY.publicKey,
        poolInputVault(token.mint),
        ROUTE_AUTHORITY.publicKey,
        new PublicKey(token.mint),
      ),
    )
    await this.send(instructions, [])
  }

  /** Creates (first time), funds and approves `user` on the output vaults of a swap. */
  fund(user: PublicKey, funding: readonly VaultFunding[]): Promise<void> {
    const key = user.toBase58()
    const previous = this.userQueues.get(key) ?? Promise.resolve()
    const current = previous.catch(() => {}).then(() => this.fundNow(user, funding))
    this.userQueues.set(key, current)
    const forget = () => {
      if (this.userQueues.get(key) === current) this.userQueues.delete(key)
    }
    current.then(forget, forget)
    return current
  }

  private async fundNow(user: PublicKey, funding: readonly VaultFunding[]): Promise<void> {
    await Promise.all(
      funding
        .filter(({ vault }) => !this.existingVaults.has(vault.publicKey.toBase58()))
        .map(async ({ vault, token }) => {
          try {
            await this.send(
              [
                SystemProgram.createAccount({
                  fromPubkey: ROUTE_AUTHORITY.publicKey,
                  newAccountPubkey: vault.publicKey,
                  lamports: Number(TOKEN_ACCOUNT_RENT),
                  space: ACCOUNT_SIZE,
                  programId: TOKEN_PROGRAM_ID,
                }),
                createInitializeAccount3Instruction(
                  vault.publicKey,
                  new PublicKey(token.mint),
                  ROUTE_AUTHORITY.publicKey,
                ),
              ],
              [vault],
            )
          } catch (error) {
            // Most likely created by an earlier run against the same chain: funding will tell.
            this.log(`route vault ${vault.publicKey.toBase58()} not created: ${String(error)}`)
          }
        }),
    )
    const instructions: TransactionInstruction[] = []
    let mints = false
    for (const { vault, token, amount } of funding) {
      const mint = new PublicKey(token.mint)
      if (token.mint === SVM_WRAPPED_NATIVE_MINT) {
        instructions.push(
          SystemProgram.transfer({
            fromPubkey: ROUTE_AUTHORITY.publicKey,
            toPubkey: vault.publicKey,
            lamports: amount,
          }),
          createSyncNativeInstruction(vault.publicKey),
        )
      } else {
        instructions.push(createMintToInstruction(mint, vault.publicKey, MINT_AUTHORITY.publicKey, amount))
        mints = true
      }
      instructions.push(
        createApproveCheckedInstruction(
          vault.publicKey,
          mint,
          user,
          ROUTE_AUTHORITY.publicKey,
          amount,
          token.decimals,
        ),
      )
    }
    await this.send(instructions, mints ? [MINT_AUTHORITY] : [])
    for (const { vault } of funding) this.existingVaults.add(vault.publicKey.toBase58())
  }

  /** Sends a transaction paid and signed by the route authority; a memo nonce keeps it unique. */
  private async send(
    instructions: readonly TransactionInstruction[],
    signers: readonly Keypair[],
  ): Promise<string> {
    this.nonce += 1
    const transaction = new Transaction({
      feePayer: ROUTE_AUTHORITY.publicKey,
      recentBlockhash: await this.ledger.latestBlockhash(),
    })
    transaction.add(...instructions, {
      programId: MEMO_PROGRAM_ID,
      keys: [],
      data: Buffer.from(`pontis route simulator ${this.session}/${this.nonce}`),
    })
    transaction.sign(ROUTE_AUTHORITY, ...signers)
    return this.ledger.send(transaction)
  }
}
