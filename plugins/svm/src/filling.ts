/**
 * SVM filling for the reference solver: fills from the solver's account and refunds out of the
 * vault (signed by the vault owner, the allocator key), each tagged with a memo; another intent
 * API's deposit items sent from the solver's account (rebalancing moves). SVM accounts have
 * no sequence numbers: a transaction is bound to a recent blockhash instead, so `nextNonce` is 0 and
 * re-broadcasting the stored bytes is safe. A transaction whose blockhash expired before it landed
 * is signed again with a fresh one (`replace`), only once the expiry is provable.
 */
import {
  type FillingCapability,
  type FillRequest,
  PontisError,
  type RefundRequest,
  type RepaymentRequest,
  type ReplacementTransaction,
  repaymentLegs,
  type SignedTransaction,
  type SolverCredentials,
  type TransactionOutcome,
} from '@pontis/core/plugin'
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import {
  type AddressLookupTableAccount,
  Keypair,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import bs58 from 'bs58'
import { CONFIRMED, isNative, mintInfo, rpc, type SvmChainContext, vaultOf } from './context.js'
import { lookupTables } from './quoting.js'
import { lookUpSignature } from './reading.js'
import { checkStep } from './steps.js'
import { memoInstruction } from './transactions.js'

/**
 * Currencies one repayment transaction pays back at most: each SPL leg may create the solver's
 * token account, and the whole must stay under the 1232-byte transaction limit.
 */
export const SVM_MAX_REPAYMENT_LEGS = 4

/**
 * The keypair of an SVM secret: base58 of the 64-byte secret key (the usual wallet export), a JSON
 * array of those 64 bytes (the CLI's key file), or 0x-hex of a 32-byte seed.
 * @throws PontisError INVALID_REQUEST without echoing the secret.
 */
export function keypairOf(secret: string, name: string): Keypair {
  try {
    const trimmed = secret.trim()
    if (/^0x[0-9a-fA-F]{64}$/.test(trimmed)) return Keypair.fromSeed(Buffer.from(trimmed.slice(2), 'hex'))
    if (trimmed.startsWith('['))
      return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(trimmed) as number[]))
    return Keypair.fromSecretKey(bs58.decode(trimmed))
  } catch {
    throw new PontisError(
      'INVALID_REQUEST',
      `the SVM ${name} key is not a base58 64-byte secret key, a JSON array of 64 bytes, or 0x-hex of a 32-byte seed`,
    )
  }
}

async function transferInstructions(
  context: SvmChainContext,
  from: PublicKey,
  payer: PublicKey,
  recipient: PublicKey,
  currencyId: string,
  amount: bigint,
): Promise<TransactionInstruction[]> {
  if (isNative(currencyId))
    return [SystemProgram.transfer({ fromPubkey: from, toPubkey: recipient, lamports: amount })]
  const mint = new PublicKey(currencyId)
  const { programId, decimals } = await mintInfo(context, currencyId)
  const source = getAssociatedTokenAddressSync(mint, from, true, programId)
  const destination = getAssociatedTokenAddressSync(mint, recipient, true, programId)
  return [
    // Idempotent: the recipient's token account is created (rent paid by the payer) only when missing.
    createAssociatedTokenAccountIdempotentInstruction(payer, destination, recipient, mint, programId),
    createTransferCheckedInstruction(source, mint, destination, from, amount, decimals, [], programId),
  ]
}

async function sign(
  context: SvmChainContext,
  signer: Keypair,
  instructions: TransactionInstruction[],
  amount: bigint,
  tables: readonly AddressLookupTableAccount[] = [],
): Promise<SignedTransaction> {
  const { blockhash, lastValidBlockHeight } = await rpc(context, () =>
    context.connection.getLatestBlockhash(CONFIRMED),
  )
  const message = new TransactionMessage({
    payerKey: signer.publicKey,
    recentBlockhash: blockhash,
    instructions,
  }).compileToV0Message([...tables])
  const transaction = new VersionedTransaction(message)
  transaction.sign([signer])
  return {
    transactionId: bs58.encode(transaction.signatures[0] as Uint8Array),
    raw: Buffer.from(transaction.serialize()).toString('base64'),
    amount,
    validThrough: BigInt(lastValidBlockHeight),
  }
}

/**
 * `raw` signed again with a fresh blockhash, when the chain can provably no longer include it: its
 * signature is unknown and the finalized block height is past `validThrough` (its blockhash's last
 * valid block height), so at most one of the two can ever land. Undefined otherwise, or when
 * `raw`'s fee payer is none of `signers`.
 */
async function resignExpired(
  context: SvmChainContext,
  raw: string,
  validThrough: bigint | undefined,
  signers: readonly Keypair[],
): Promise<ReplacementTransaction | undefined> {
  if (validThrough === undefined) return undefined
  const transaction = VersionedTransaction.deserialize(Buffer.from(raw, 'base64'))
  const payer = transaction.message.staticAccountKeys[0]
  const signer = signers.find((candidate) => payer !== undefined && candidate.publicKey.equals(payer))
  if (!signer || transaction.message.header.numRequiredSignatures !== 1) return undefined
  const finalized = await rpc(context, () => context.connection.getBlockHeight('finalized'))
  if (BigInt(finalized) <= validThrough) return undefined
  const signature = bs58.encode(transaction.signatures[0] as Uint8Array)
  if ((await lookUpSignature(context, signature)).state !== 'not_found') return undefined
  const { blockhash, lastValidBlockHeight } = await rpc(context, () =>
    context.connection.getLatestBlockhash(CONFIRMED),
  )
  transaction.message.recentBlockhash = blockhash
  transaction.signatures[0] = new Uint8Array(64)
  transaction.sign([signer])
  return {
    transactionId: bs58.encode(transaction.signatures[0] as Uint8Array),
    raw: Buffer.from(transaction.serialize()).toString('base64'),
    validThrough: BigInt(lastValidBlockHeight),
  }
}

const ALREADY_PROCESSED = /AlreadyProcessed|already been processed/i

/** Base58 of a wire transaction's first signature (its id), or undefined when `bytes` is not one. */
function signatureOf(bytes: Uint8Array): string | undefined {
  try {
    const [signature] = VersionedTransaction.deserialize(bytes).signatures
    return signature ? bs58.encode(signature) : undefined
  } catch {
    return undefined
  }
}

export function createSvmFilling(context: SvmChainContext): FillingCapability {
  /** The vault owner's keypair (the allocator key), checked to own the vault payouts come out of. */
  const vaultSigner = (credentials: SolverCredentials, what: string) => {
    if (!credentials.allocatorKey) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `No vault key is configured to ${what} on ${context.label.displayName}.`,
      )
    }
    const owner = keypairOf(credentials.allocatorKey, 'vault owner')
    const vault = vaultOf(context)
    if (!owner.publicKey.equals(vault)) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `The configured vault key does not own the vault ${vault.toBase58()} on ${context.label.displayName}.`,
      )
    }
    return { owner, vault }
  }

  const solverOf = (credentials: SolverCredentials) => keypairOf(credentials.solverKey, 'solver')
  return {
    solverAddress: (credentials) => solverOf(credentials).publicKey.toBase58(),
    async nextNonce(): Promise<bigint> {
      return 0n
    },

    async signFill(request: FillRequest, credentials: SolverCredentials): Promise<SignedTransaction> {
      if (request.calls.length > 0) {
        throw new PontisError(
          'EXTRA_TXS_NOT_SUPPORTED',
          `${context.label.displayName} fills cannot run calls.`,
        )
      }
      const solver = solverOf(credentials)
      const recipient = new PublicKey(request.recipient)
      const instructions = await transferInstructions(
        context,
        solver.publicKey,
        solver.publicKey,
        recipient,
        request.currencyId,
        request.amount,
      )
      if (request.topupNativeAmount > 0n) {
        instructions.push(
          SystemProgram.transfer({
            fromPubkey: solver.publicKey,
            toPubkey: recipient,
            lamports: request.topupNativeAmount,
          }),
        )
      }
      instructions.push(memoInstruction(request.orderId))
      return sign(context, solver, instructions, request.amount)
    },

    async signRefund(request: RefundRequest, credentials: SolverCredentials): Promise<SignedTransaction> {
      if (request.source.kind !== 'depository') {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${context.label.displayName} has no deposit addresses to refund from.`,
        )
      }
      const { owner, vault } = vaultSigner(credentials, 'refund')
      const instructions = await transferInstructions(
        context,
        vault,
        vault,
        new PublicKey(request.recipient),
        request.currencyId,
        request.amount,
      )
      instructions.push(memoInstruction(request.refundId))
      return sign(context, owner, instructions, request.amount)
    },

    /** One transaction out of the vault: a transfer per leg, tagged with the repayment id. */
    async signRepayment(
      request: RepaymentRequest,
      credentials: SolverCredentials,
    ): Promise<SignedTransaction> {
      const { owner, vault } = vaultSigner(credentials, 'repay the solver')
      const recipient = new PublicKey(request.recipient)
      const instructions: TransactionInstruction[] = []
      for (const leg of repaymentLegs(request, SVM_MAX_REPAYMENT_LEGS, context.label))
        instructions.push(
          ...(await transferInstructions(context, vault, vault, recipient, leg.currencyId, leg.amount)),
        )
      instructions.push(memoInstruction(request.repaymentId))
      const total = request.legs.reduce((sum, leg) => sum + leg.amount, 0n)
      return sign(context, owner, instructions, total)
    },
    maxRepaymentLegs: SVM_MAX_REPAYMENT_LEGS,

    /**
     * Another intent API's `svm-transaction` item (rebalancing), its instructions checked against
     * the move ({@link checkStep}), compiled again with the solver as fee payer and a fresh blockhash.
     */
    async signStep(item, spend, credentials): Promise<SignedTransaction> {
      const solver = solverOf(credentials)
      const step = checkStep(context, item, solver.publicKey, spend)
      const tables = await lookupTables(context, step.addressLookupTableAddresses)
      if (tables.length !== step.addressLookupTableAddresses.length)
        step.refuse('one of its address lookup tables does not exist')
      return sign(context, solver, step.instructions, step.spent, tables)
    },

    async broadcast(raw: string): Promise<void> {
      const bytes = Buffer.from(raw, 'base64')
      try {
        await rpc(context, () =>
          context.connection.sendRawTransaction(bytes, {
            skipPreflight: false,
            preflightCommitment: CONFIRMED,
            maxRetries: 0,
          }),
        )
      } catch (error) {
        // The chain has it already: broadcasting the same bytes again is not an error.
        if (
          ALREADY_PROCESSED.test(
            error instanceof Error
              ? `${error.message} ${JSON.stringify((error as { logs?: unknown }).logs ?? '')}`
              : String(error),
          )
        )
          return
        // Landed, but its blockhash has expired since: preflight fails on the blockhash instead.
        const signature = signatureOf(bytes)
        if (signature && (await lookUpSignature(context, signature)).state !== 'not_found') return
        throw error
      }
    },

    /**
     * No fee market to outbid: a transaction that does not land is signed again with a fresh
     * blockhash, and only once its own blockhash has provably expired (see {@link resignExpired}).
     */
    replace(raw, credentials, stored) {
      const signers = [solverOf(credentials)]
      if (credentials.allocatorKey) signers.push(keypairOf(credentials.allocatorKey, 'vault owner'))
      return resignExpired(context, raw, stored?.validThrough, signers)
    },

    async outcome(transactionId: string): Promise<TransactionOutcome> {
      const lookup = await lookUpSignature(context, transactionId)
      return {
        transactionId,
        state: lookup.state,
        final: lookup.final,
        confirmations: lookup.confirmations,
        ...(lookup.err !== undefined
          ? { revert: { error: JSON.parse(JSON.stringify(lookup.err)) as unknown } }
          : {}),
      }
    },
  }
}
