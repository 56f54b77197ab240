/**
 * The ledger behind the SVM devnet's RPC: a LiteSVM runtime plus what a validator's RPC keeps
 * around it and LiteSVM does not: slots with their blockhashes and times, a window of valid
 * blockhashes, commitment levels, and a full record of every transaction that landed (bytes, slot,
 * balances, token balances, logs, inner instructions, fee, error).
 *
 * Slot model: every transaction that lands executes in a slot of its own (the ledger opens a new
 * slot, with a new blockhash and clock, right before executing it), and `advanceSlots` opens empty
 * ones. There are no skipped slots, so block height equals slot. Slot `s` is confirmed once the
 * current slot is at least `s + confirmedDepth` and finalized at `s + finalizedDepth`.
 */
import { createPublicKey, verify as verifySignature } from 'node:crypto'
import {
  AddressLookupTableAccount,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  type VersionedMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import bs58 from 'bs58'
import {
  type AccountInfoBytes,
  Clock,
  EpochSchedule,
  FailedTransactionMetadata,
  LiteSVM,
  type TransactionMetadata,
} from 'litesvm'
import {
  fromLiteSvmError,
  invalidParams,
  RPC_ERROR,
  RpcError,
  type TransactionErrorInfo,
  type TransactionErrorJson,
  transactionError,
} from './errors.js'
import { disableAllocationSitePretenuring, releaseX87Stack } from './fpu.js'
import { decodeMint, decodeTokenAccount, isTokenProgram, type UiTokenAmount, uiTokenAmount } from './token.js'

/** How many slots a blockhash stays valid for (agave's MAX_PROCESSING_AGE). */
export const MAX_BLOCKHASH_AGE = 150
/** How many slots back `getSignatureStatuses` looks without `searchTransactionHistory` (the status cache). */
export const STATUS_CACHE_SLOTS = 300
/** The largest transaction the network accepts, in bytes (the packet data size). */
export const MAX_TRANSACTION_SIZE = 1232
/** Lamports per signature, as on mainnet (LiteSVM charges the same). */
export const LAMPORTS_PER_SIGNATURE = 5000
/** Lamports the faucet holds at genesis: 5,000,000 SOL (kept below 2^53 so JSON numbers stay exact). */
export const DEFAULT_FAUCET_LAMPORTS = 5_000_000n * 10n ** 9n
/** Slots per epoch (no warm-up: epoch 0 lasts for as long as any devnet run). */
export const SLOTS_PER_EPOCH = 432_000
/** The most slots one `advanceSlots` call opens. */
export const MAX_SLOTS_PER_ADVANCE = 100_000

const MAX_SLOT_HASHES = 512
const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111'
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111'
const MEMO_PROGRAMS = new Set([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
])
const NATIVE_MINTS = [
  'So11111111111111111111111111111111111111112',
  '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP',
]
// Built-in programs get 3,000 compute units by default instead of 200,000 (agave 2.x).
const BUILTIN_PROGRAMS = new Set([
  '11111111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM,
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
  'Config1111111111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
])
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** A commitment level. */
export type Commitment = 'processed' | 'confirmed' | 'finalized'

/** Options of {@link SvmLedger}. */
export interface SvmLedgerOptions {
  /** Slots after which a transaction counts as confirmed (default 0: at once). */
  confirmedDepth?: number
  /** Slots after which a transaction counts as finalized (default 2). */
  finalizedDepth?: number
  /** Pays airdrops; a fresh keypair when omitted. */
  faucet?: Keypair
  /** The faucet's genesis balance (default {@link DEFAULT_FAUCET_LAMPORTS}). */
  faucetLamports?: bigint
  /** Receives a line for every transaction the ledger drops (as a leader would) instead of executing. */
  log?: (message: string) => void
}

/** One token balance of a transaction's metadata (`preTokenBalances` / `postTokenBalances`). */
export interface TokenBalance {
  accountIndex: number
  mint: string
  owner: string
  programId: string
  uiTokenAmount: UiTokenAmount
}

/** An inner instruction in the RPC's compiled form (indexes into the transaction's account keys). */
export interface CompiledInnerInstruction {
  programIdIndex: number
  accounts: number[]
  /** Base58. */
  data: string
  stackHeight: number
}

/** The inner instructions of one top-level instruction. */
export interface InnerInstructions {
  index: number
  instructions: CompiledInnerInstruction[]
}

/** Data a program returned (`set_return_data`), base64 as the RPC reports it. */
export interface ReturnData {
  programId: string
  data: [string, 'base64']
}

/** A transaction that landed, with everything getTransaction and friends report about it. */
export interface RecordedTransaction {
  readonly signature: string
  readonly slot: number
  readonly blockTime: number
  /** The transaction as it was sent (wire format). */
  readonly wire: Uint8Array
  readonly message: VersionedMessage
  readonly version: 'legacy' | 0
  /** Static keys, then the writable and the read-only keys loaded from lookup tables. */
  readonly accountKeys: readonly string[]
  readonly loadedAddresses: { readonly writable: readonly string[]; readonly readonly: readonly string[] }
  readonly err: TransactionErrorJson | null
  readonly fee: number
  readonly preBalances: readonly number[]
  readonly postBalances: readonly number[]
  readonly preTokenBalances: readonly TokenBalance[]
  readonly postTokenBalances: readonly TokenBalance[]
  readonly logMessages: readonly string[]
  readonly innerInstructions: readonly InnerInstructions[]
  readonly computeUnitsConsumed: number
  readonly returnData: ReturnData | null
  /** Memo instructions as getSignaturesForAddress reports them ("[len] text; ..."), or null. */
  readonly memo: string | null
  /** Micro-lamports per compute unit the transaction offered (0 without a price instruction). */
  readonly computeUnitPrice: bigint
}

/** An account after a simulation (or now, when the simulation did not touch it). */
export type SimulatedAccount = AccountInfoBytes | null

/** What a simulation produced; `err` is null when it succeeded. */
export interface SimulationOutcome {
  err: TransactionErrorInfo | null
  logs: string[]
  unitsConsumed: number
  returnData: ReturnData | null
  innerInstructions: InnerInstructions[]
  /** The requested accounts after the simulation (only when addresses were asked for). */
  accounts: SimulatedAccount[] | null
  /** Set when the blockhash was replaced. */
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null
}

/** Options of {@link SvmLedger.simulateTransaction}. */
export interface SimulateOptions {
  sigVerify?: boolean
  replaceRecentBlockhash?: boolean
  /** Accounts to return after the simulation (base58 addresses). */
  accountAddresses?: readonly string[]
}

interface SlotEntry {
  readonly blockhash: string
  /** Unix seconds. */
  readonly blockTime: number
}

interface ResolvedKeys {
  readonly keys: readonly PublicKey[]
  readonly loaded: { readonly writable: readonly string[]; readonly readonly: readonly string[] }
}

interface AccountSnapshot {
  readonly balances: number[]
  readonly tokenBalances: TokenBalance[]
}

/** One account as it was before a transaction ran (null: it did not exist). */
interface UndoEntry {
  readonly key: PublicKey
  readonly account: AccountInfoBytes | null
}

/** A transaction accepted while production is paused, waiting for a slot. */
interface WaitingTransaction {
  readonly decoded: DecodedTransaction
}

/** The fields of a parsed wire transaction the ledger needs. */
interface DecodedTransaction {
  readonly transaction: VersionedTransaction
  readonly wire: Uint8Array
  /** Base58 of the first signature. */
  readonly signature: string
  /** Offset of the message in `wire` (after the signatures). */
  readonly messageOffset: number
}

function nonNegativeInteger(value: number | undefined, fallback: number, name: string): number {
  const resolved = value ?? fallback
  if (!Number.isSafeInteger(resolved) || resolved < 0)
    throw new Error(`${name} must be a non-negative integer`)
  return resolved
}

/** The compact-u16 length prefix at the start of `bytes`: its value and its size in bytes. */
function readShortVec(bytes: Uint8Array): { value: number; size: number } | undefined {
  let value = 0
  for (let size = 0; size < 3; size++) {
    const byte = bytes[size]
    if (byte === undefined) return undefined
    value |= (byte & 0x7f) << (7 * size)
    if ((byte & 0x80) === 0) return { value, size: size + 1 }
  }
  return undefined
}

/**
 * The transaction error agave's message sanitization would report for `message`, if any: header
 * counts that do not fit the keys, instruction indexes out of range, a duplicate static key.
 */
function sanitizeError(message: VersionedMessage): TransactionErrorInfo | undefined {
  const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = message.header
  const staticCount = message.staticAccountKeys.length
  const lookups = message.addressTableLookups
  const total = lookups.reduce(
    (sum, lookup) => sum + lookup.writableIndexes.length + lookup.readonlyIndexes.length,
    staticCount,
  )
  const malformed =
    numReadonlySignedAccounts >= numRequiredSignatures ||
    numRequiredSignatures + numReadonlyUnsignedAccounts > staticCount ||
    total > 256 ||
    lookups.some((lookup) => lookup.writableIndexes.length + lookup.readonlyIndexes.length === 0) ||
    message.compiledInstructions.some(
      (instruction) =>
        instruction.programIdIndex === 0 ||
        instruction.programIdIndex >= staticCount ||
        instruction.accountKeyIndexes.some((index) => index >= total),
    )
  if (malformed) return transactionError('SanitizeFailure')
  const keys = new Set(message.staticAccountKeys.map((key) => key.toBase58()))
  if (keys.size !== staticCount) return transactionError('AccountLoadedTwice')
  return undefined
}

/** The fee LiteSVM charged, from its metadata's debug text (the JS binding has no accessor for it). */
function chargedFee(meta: TransactionMetadata): number | undefined {
  const matches = [...meta.toString().matchAll(/\bfee: (\d+)\b/g)]
  const last = matches.at(-1)?.[1]
  return last === undefined ? undefined : Number(last)
}

function little64(data: Uint8Array, offset: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true)
}

/** The compute-unit price and limit a message sets with compute-budget instructions. */
function computeBudget(message: VersionedMessage): { price: bigint; limit: number | undefined } {
  let price = 0n
  let limit: number | undefined
  for (const instruction of message.compiledInstructions) {
    const program = message.staticAccountKeys[instruction.programIdIndex]?.toBase58()
    if (program !== COMPUTE_BUDGET_PROGRAM) continue
    const data = instruction.data
    if (data[0] === 3 && data.length >= 9) price = little64(data, 1)
    if (data[0] === 2 && data.length >= 5)
      limit = new DataView(data.buffer, data.byteOffset).getUint32(1, true)
  }
  return { price, limit }
}

/** Memo instructions formatted as the RPC's `memo` field does. */
function memoOf(message: VersionedMessage): string | null {
  const memos: string[] = []
  for (const instruction of message.compiledInstructions) {
    const program = message.staticAccountKeys[instruction.programIdIndex]?.toBase58()
    if (program === undefined || !MEMO_PROGRAMS.has(program)) continue
    memos.push(`[${instruction.data.length}] ${Buffer.from(instruction.data).toString('utf8')}`)
  }
  return memos.length === 0 ? null : memos.join('; ')
}

function innerInstructionsOf(meta: TransactionMetadata): InnerInstructions[] {
  return meta
    .innerInstructions()
    .map((instructions, index) => ({
      index,
      instructions: instructions.map((inner) => {
        const compiled = inner.instruction()
        return {
          programIdIndex: compiled.programIdIndex(),
          accounts: [...compiled.accounts()],
          data: bs58.encode(compiled.data()),
          stackHeight: inner.stackHeight(),
        }
      }),
    }))
    .filter((entry) => entry.instructions.length > 0)
}

function returnDataOf(meta: TransactionMetadata): ReturnData | null {
  const returned = meta.returnData()
  const data = returned.data()
  if (data.length === 0) return null
  return {
    programId: new PublicKey(returned.programId()).toBase58(),
    data: [Buffer.from(data).toString('base64'), 'base64'],
  }
}

/**
 * A LiteSVM-backed ledger with slots, commitments, a blockhash window and transaction records.
 * Every method is synchronous: callers (the RPC server) never interleave two of them.
 */
export class SvmLedger {
  /** Slots after which a transaction is confirmed. */
  readonly confirmedDepth: number
  /** Slots after which a transaction is finalized. */
  readonly finalizedDepth: number
  /** Pays airdrops. */
  readonly faucet: Keypair
  /** The blockhash of slot 0. */
  readonly genesisHash: string

  readonly #svm: LiteSVM
  readonly #log: (message: string) => void
  readonly #slots: SlotEntry[] = []
  readonly #blockhashSlots = new Map<string, number>()
  readonly #records = new Map<string, RecordedTransaction>()
  /** Records in the order they landed (slot order). */
  readonly #history: RecordedTransaction[] = []
  /** Address -> records that reference it, in slot order. */
  readonly #byAddress = new Map<string, RecordedTransaction[]>()
  /** Every address a landed transaction referenced: the universe of account scans. */
  readonly #knownAddresses = new Set<string>(NATIVE_MINTS)
  readonly #listeners = new Set<() => void>()
  /** What each landed transaction's accounts held before it ran, to roll it back. */
  readonly #undo = new Map<string, readonly UndoEntry[]>()
  /** Transactions accepted while production is paused, in arrival order (the mempool). */
  readonly #waiting: WaitingTransaction[] = []
  #paused = false
  #slotHashesBuiltFor = -1

  constructor(options: SvmLedgerOptions = {}) {
    this.confirmedDepth = nonNegativeInteger(options.confirmedDepth, 0, 'confirmedDepth')
    this.finalizedDepth = nonNegativeInteger(options.finalizedDepth, 2, 'finalizedDepth')
    if (this.confirmedDepth > this.finalizedDepth)
      throw new Error('confirmedDepth must not exceed finalizedDepth')
    this.#log = options.log ?? (() => {})
    disableAllocationSitePretenuring()
    // The ledger checks blockhash age itself (LiteSVM only knows its latest blockhash) and verifies
    // signatures itself (so unsigned transactions can be simulated).
    // LiteSVM keeps no transaction history: the ledger keeps its own records, and a transaction
    // whose slot was rolled back must be able to land again (LiteSVM would answer AlreadyProcessed).
    this.#svm = new LiteSVM()
      .withNativeMints()
      .withBlockhashCheck(false)
      .withSigverify(false)
      .withTransactionHistory(0n)
    this.#svm.setEpochSchedule(
      new EpochSchedule(BigInt(SLOTS_PER_EPOCH), BigInt(SLOTS_PER_EPOCH), false, 0n, 0n),
    )
    this.faucet = options.faucet ?? Keypair.generate()
    this.#svm.setAccount(this.faucet.publicKey, {
      lamports: Number(options.faucetLamports ?? DEFAULT_FAUCET_LAMPORTS),
      data: new Uint8Array(),
      owner: SystemProgram.programId,
      executable: false,
    })
    this.#knownAddresses.add(this.faucet.publicKey.toBase58())
    this.genesisHash = this.#svm.latestBlockhash()
    this.#openSlot(this.genesisHash)
  }

  /** The current (processed) slot. */
  get slot(): number {
    return this.#slots.length - 1
  }

  /** How many transactions have landed. */
  get transactionCount(): number {
    return this.#history.length
  }

  /** The newest slot visible at `commitment`. */
  slotAt(commitment: Commitment): number {
    const depth =
      commitment === 'finalized' ? this.finalizedDepth : commitment === 'confirmed' ? this.confirmedDepth : 0
    return Math.max(0, this.slot - depth)
  }

  /** The commitment a block at `slot` has reached. */
  commitmentOf(slot: number): Commitment {
    if (this.slot >= slot + this.finalizedDepth) return 'finalized'
    if (this.slot >= slot + this.confirmedDepth) return 'confirmed'
    return 'processed'
  }

  /** Whether a block at `slot` has reached `commitment`. */
  reached(slot: number, commitment: Commitment): boolean {
    return slot <= this.slotAt(commitment)
  }

  /** Opens `count` empty slots, each with a new blockhash. Returns the new current slot. */
  advanceSlots(count: number): number {
    if (!Number.isSafeInteger(count) || count < 0 || count > MAX_SLOTS_PER_ADVANCE) {
      throw new RangeError(`slot count must be an integer from 0 to ${MAX_SLOTS_PER_ADVANCE}, got ${count}`)
    }
    for (let opened = 0; opened < count; opened++) this.#newSlot()
    if (count > 0) this.#changed()
    return this.slot
  }

  /**
   * Calls `listener` after every change (new slots, a landed transaction); returns the function
   * that removes it. Listener errors are swallowed: they must not break the ledger.
   */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener()
      } catch {
        // A subscriber's problem, not the ledger's.
      }
    }
  }

  /** The blockhash and unix time of `slot`, when it exists. */
  block(slot: number): { blockhash: string; blockTime: number } | undefined {
    return this.#slots[slot]
  }

  /** The blockhash of the newest slot at `commitment`, and the last block height it is valid at. */
  latestBlockhash(commitment: Commitment = 'processed'): {
    blockhash: string
    lastValidBlockHeight: number
    slot: number
  } {
    const slot = this.slotAt(commitment)
    return { blockhash: this.#blockOf(slot).blockhash, lastValidBlockHeight: slot + MAX_BLOCKHASH_AGE, slot }
  }

  /** Whether a transaction using `blockhash` would be accepted now. */
  isBlockhashValid(blockhash: string): boolean {
    const slot = this.#blockhashSlots.get(blockhash)
    return slot !== undefined && this.slot - slot <= MAX_BLOCKHASH_AGE
  }

  /** The epoch, slot index and sizes for the current slot (epochs have no warm-up here). */
  epochInfo(commitment: Commitment = 'processed'): {
    absoluteSlot: number
    blockHeight: number
    epoch: number
    slotIndex: number
    slotsInEpoch: number
    transactionCount: number
  } {
    const slot = this.slotAt(commitment)
    return {
      absoluteSlot: slot,
      blockHeight: slot,
      epoch: Math.floor(slot / SLOTS_PER_EPOCH),
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: this.#history.filter((record) => record.slot <= slot).length,
    }
  }

  /** The account at `address` in the latest state, or null. */
  getAccount(address: PublicKey): AccountInfoBytes | null {
    return this.#svm.getAccount(address)
  }

  /** Lamports needed for an account of `dataLength` bytes to be rent exempt. */
  minimumBalanceForRentExemption(dataLength: number): number {
    return Number(this.#svm.minimumBalanceForRentExemption(BigInt(dataLength)))
  }

  /** Addresses any landed transaction referenced (plus the native mints): what account scans see. */
  knownAddresses(): IterableIterator<string> {
    return this.#knownAddresses.values()
  }

  /** The decimals of the mint at `mint`, when it is one. */
  decimalsOf(mint: string): number | undefined {
    const account = this.#svm.getAccount(new PublicKey(mint))
    if (!account) return undefined
    return decodeMint(account.owner.toBase58(), account.data)?.decimals
  }

  /**
   * The fee for `message`: lamports per signature plus the priority fee its compute-budget
   * instructions ask for. Null when its blockhash is no longer valid (as the RPC answers).
   */
  feeFor(message: VersionedMessage): number | null {
    if (!this.isBlockhashValid(message.recentBlockhash)) return null
    const { price, limit } = computeBudget(message)
    let units = limit
    if (units === undefined) {
      units = 0
      for (const instruction of message.compiledInstructions) {
        const program = message.staticAccountKeys[instruction.programIdIndex]?.toBase58() ?? ''
        units += BUILTIN_PROGRAMS.has(program) ? 3_000 : 200_000
      }
    }
    const priorityFee = (price * BigInt(Math.min(units, 1_400_000)) + 999_999n) / 1_000_000n
    return LAMPORTS_PER_SIGNATURE * message.header.numRequiredSignatures + Number(priorityFee)
  }

  /** The record of a landed transaction (at any commitment). */
  transaction(signature: string): RecordedTransaction | undefined {
    return this.#records.get(signature)
  }

  /** Landed transactions that reference `address`, oldest first. */
  transactionsFor(address: string): readonly RecordedTransaction[] {
    return this.#byAddress.get(address) ?? []
  }

  /** Landed transactions, oldest first. */
  transactions(): readonly RecordedTransaction[] {
    return this.#history
  }

  /**
   * sendTransaction: verifies, simulates (unless `skipPreflight`) and executes a wire transaction
   * in a new slot. With `skipPreflight`, a transaction a leader would drop (bad signature, unknown
   * or expired blockhash, already processed) is dropped: its signature comes back, nothing lands.
   * A transaction that fails while executing lands with its error and pays its fee, as on chain.
   *
   * @returns The transaction's signature (base58).
   * @throws RpcError -32602 (malformed), -32003 (signature) or -32002 (preflight failed, `data`
   *   holds the simulation result).
   */
  sendTransaction(wire: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    const decoded = this.#decodeTransaction(wire)
    const keys = this.#resolveKeys(decoded.transaction.message)
    if ('message' in keys) throw new RpcError(RPC_ERROR.invalidParams, `invalid transaction: ${keys.message}`)
    if (!options.skipPreflight) {
      if (!this.#verifySignatures(decoded)) {
        throw new RpcError(
          RPC_ERROR.transactionSignatureVerificationFailure,
          'Transaction signature verification failure',
        )
      }
      const outcome = this.#simulate(decoded.transaction, decoded.signature, {})
      if (outcome.err) {
        throw new RpcError(
          RPC_ERROR.sendTransactionPreflightFailure,
          `Transaction simulation failed: ${outcome.err.message}`,
          {
            err: outcome.err.json,
            logs: outcome.logs,
            accounts: null,
            unitsConsumed: outcome.unitsConsumed,
            returnData: outcome.returnData,
            innerInstructions: null,
            replacementBlockhash: null,
          },
        )
      }
    } else {
      const dropReason = !this.#verifySignatures(decoded)
        ? 'SignatureFailure'
        : !this.isBlockhashValid(decoded.transaction.message.recentBlockhash)
          ? 'BlockhashNotFound'
          : this.#records.has(decoded.signature)
            ? 'AlreadyProcessed'
            : undefined
      if (dropReason) {
        this.#log(`dropped ${decoded.signature}: ${dropReason}`)
        return decoded.signature
      }
    }
    if (this.#paused) {
      if (!this.#waiting.some((waiting) => waiting.decoded.signature === decoded.signature))
        this.#waiting.push({ decoded })
      return decoded.signature
    }
    this.#execute(decoded, keys)
    this.#changed()
    return decoded.signature
  }

  /** Whether slot production is paused (transactions wait in the mempool). */
  get paused(): boolean {
    return this.#paused
  }

  /** Stops landing transactions: sent ones wait (see {@link waiting}) until {@link produce}. */
  pause(): void {
    this.#paused = true
  }

  /** Lands what waited, each in a slot of its own (or opens one slot when nothing did), and lands transactions as they come again. */
  resume(): number {
    this.#paused = false
    return this.produce(1)
  }

  /** Signatures of the transactions waiting for a slot, oldest first. */
  waiting(): string[] {
    return this.#waiting.map((waiting) => waiting.decoded.signature)
  }

  /**
   * Produces at least `slots` slots now: every waiting transaction lands in a slot of its own
   * (one whose blockhash expired meanwhile, or that already landed, is dropped as a leader
   * would), then empty slots make up the rest. Returns the new current slot.
   */
  produce(slots = 1): number {
    if (!Number.isSafeInteger(slots) || slots < 0 || slots > MAX_SLOTS_PER_ADVANCE) {
      throw new RangeError(`slot count must be an integer from 0 to ${MAX_SLOTS_PER_ADVANCE}, got ${slots}`)
    }
    const start = this.slot
    for (const { decoded } of this.#waiting.splice(0)) {
      const reason = !this.isBlockhashValid(decoded.transaction.message.recentBlockhash)
        ? 'BlockhashNotFound'
        : this.#records.has(decoded.signature)
          ? 'AlreadyProcessed'
          : undefined
      const keys = reason === undefined ? this.#resolveKeys(decoded.transaction.message) : undefined
      if (reason !== undefined || keys === undefined || 'message' in keys) {
        this.#log(`dropped ${decoded.signature}: ${reason ?? 'address lookup failed'}`)
        continue
      }
      this.#execute(decoded, keys)
    }
    const landed = this.slot - start
    for (let opened = landed; opened < slots; opened++) this.#newSlot()
    if (this.slot !== start) this.#changed()
    return this.slot
  }

  /** Removes a waiting transaction, as a leader does with one it evicts. False when it was not waiting. */
  dropWaiting(signature: string): boolean {
    const index = this.#waiting.findIndex((waiting) => waiting.decoded.signature === signature)
    if (index < 0) return false
    this.#waiting.splice(index, 1)
    return true
  }

  /**
   * Removes the newest `depth` slots: the transactions that landed in them are undone (their
   * accounts get back what they held before), forgotten, and their blockhashes are no longer
   * valid. Waiting transactions stay waiting. Returns the new current slot.
   *
   * @throws RangeError when `depth` is not a positive integer or would remove slot 0.
   */
  rollback(depth: number): number {
    if (!Number.isSafeInteger(depth) || depth < 1 || depth > this.slot) {
      throw new RangeError(`depth must be an integer from 1 to ${this.slot}, got ${depth}`)
    }
    const target = this.slot - depth
    while ((this.#history.at(-1)?.slot ?? -1) > target) {
      const record = this.#history.pop() as RecordedTransaction
      for (const { key, account } of [...(this.#undo.get(record.signature) ?? [])].reverse()) {
        this.#svm.setAccount(
          key,
          account ?? {
            lamports: 0,
            data: new Uint8Array(),
            owner: SystemProgram.programId,
            executable: false,
          },
        )
      }
      this.#undo.delete(record.signature)
      this.#records.delete(record.signature)
      for (const address of new Set(record.accountKeys)) {
        const list = this.#byAddress.get(address)
        if (list?.at(-1) === record) list.pop()
      }
    }
    while (this.slot > target) {
      const removed = this.#slots.pop() as SlotEntry
      this.#blockhashSlots.delete(removed.blockhash)
    }
    this.#slotHashesBuiltFor = -1
    this.#setClock(this.slot, this.#blockOf(this.slot).blockTime)
    this.#changed()
    return this.slot
  }

  /**
   * Opens empty slots (waiting transactions stay waiting) until `blockhash` is no longer valid:
   * the block height passes its last valid block height. Waiting transactions that used it are
   * then dropped, as a leader would. Returns the new current slot.
   *
   * @throws RangeError when the ledger never produced `blockhash` (or it was rolled back).
   */
  expireBlockhash(blockhash: string): number {
    const slot = this.#blockhashSlots.get(blockhash)
    if (slot === undefined) throw new RangeError(`unknown blockhash ${blockhash}`)
    const opened = Math.max(0, slot + MAX_BLOCKHASH_AGE + 1 - this.slot)
    for (let index = 0; index < opened; index++) this.#newSlot()
    for (const signature of this.waiting()) {
      const waiting = this.#waiting.find((entry) => entry.decoded.signature === signature)
      if (waiting && !this.isBlockhashValid(waiting.decoded.transaction.message.recentBlockhash)) {
        this.dropWaiting(signature)
        this.#log(`dropped ${signature}: BlockhashNotFound`)
      }
    }
    if (opened > 0) this.#changed()
    return this.slot
  }

  /**
   * simulateTransaction against the current state, as the next slot (where a transaction sent now
   * would land). Signatures are only checked with `sigVerify`; `replaceRecentBlockhash` swaps in
   * the latest blockhash first.
   *
   * @throws RpcError -32602 (malformed, or sigVerify with replaceRecentBlockhash) or -32003.
   */
  simulateTransaction(wire: Uint8Array, options: SimulateOptions = {}): SimulationOutcome {
    if (options.sigVerify && options.replaceRecentBlockhash) {
      throw invalidParams('sigVerify may not be used with replaceRecentBlockhash')
    }
    const decoded = this.#decodeTransaction(wire)
    if (options.sigVerify && !this.#verifySignatures(decoded)) {
      throw new RpcError(
        RPC_ERROR.transactionSignatureVerificationFailure,
        'Transaction signature verification failure',
      )
    }
    const keys = this.#resolveKeys(decoded.transaction.message)
    if ('message' in keys) throw new RpcError(RPC_ERROR.invalidParams, `invalid transaction: ${keys.message}`)
    return this.#simulate(decoded.transaction, decoded.signature, options)
  }

  /**
   * requestAirdrop: a transfer from the faucet, landing like any transaction.
   *
   * @throws RpcError -32603 when the transfer cannot succeed (faucet drained, bad amount).
   */
  requestAirdrop(recipient: PublicKey, lamports: number): string {
    const message = new TransactionMessage({
      payerKey: this.faucet.publicKey,
      recentBlockhash: this.latestBlockhash().blockhash,
      instructions: [
        SystemProgram.transfer({ fromPubkey: this.faucet.publicKey, toPubkey: recipient, lamports }),
      ],
    }).compileToLegacyMessage()
    const transaction = new VersionedTransaction(message)
    transaction.sign([this.faucet])
    try {
      return this.sendTransaction(transaction.serialize())
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      throw new RpcError(RPC_ERROR.internalError, `airdrop request failed: ${error.message}`)
    }
  }

  /**
   * Prioritization fees of recent slots (the newest 150): per slot, the lowest compute-unit price
   * of its transactions that write one of `addresses` (all transactions when none are given), 0
   * for slots without any.
   */
  recentPrioritizationFees(addresses: readonly string[]): { slot: number; prioritizationFee: number }[] {
    const oldest = Math.max(0, this.slot - MAX_BLOCKHASH_AGE + 1)
    const fees = new Map<number, bigint>()
    for (let index = this.#history.length - 1; index >= 0; index--) {
      const record = this.#history[index] as RecordedTransaction
      if (record.slot < oldest) break
      const relevant =
        addresses.length === 0 ||
        record.accountKeys.some(
          (key, keyIndex) => addresses.includes(key) && record.message.isAccountWritable(keyIndex),
        )
      if (!relevant) continue
      const known = fees.get(record.slot)
      fees.set(
        record.slot,
        known === undefined || record.computeUnitPrice < known ? record.computeUnitPrice : known,
      )
    }
    const answer: { slot: number; prioritizationFee: number }[] = []
    for (let slot = oldest; slot <= this.slot; slot++) {
      answer.push({ slot, prioritizationFee: Number(fees.get(slot) ?? 0n) })
    }
    return answer
  }

  /**
   * Decodes a wire transaction and checks what the RPC checks before anything else: size,
   * format, signature count, and the message sanitization rules.
   *
   * @throws RpcError -32602 naming the problem.
   */
  #decodeTransaction(wire: Uint8Array): DecodedTransaction {
    if (wire.length > MAX_TRANSACTION_SIZE) {
      throw invalidParams(`transaction too large: ${wire.length} bytes (max: ${MAX_TRANSACTION_SIZE} bytes)`)
    }
    let transaction: VersionedTransaction
    try {
      transaction = VersionedTransaction.deserialize(wire)
    } catch (error) {
      throw invalidParams(
        `failed to deserialize transaction: ${error instanceof Error ? error.message : error}`,
      )
    }
    const prefix = readShortVec(wire)
    const signatures = transaction.signatures
    const first = signatures[0]
    if (
      prefix === undefined ||
      first === undefined ||
      signatures.length !== transaction.message.header.numRequiredSignatures ||
      transaction.message.staticAccountKeys.length < signatures.length
    ) {
      throw new RpcError(
        RPC_ERROR.invalidParams,
        `invalid transaction: ${transactionError('SanitizeFailure').message}`,
      )
    }
    const unsanitary = sanitizeError(transaction.message)
    if (unsanitary) throw new RpcError(RPC_ERROR.invalidParams, `invalid transaction: ${unsanitary.message}`)
    return {
      transaction,
      wire,
      signature: bs58.encode(first),
      messageOffset: prefix.size + 64 * signatures.length,
    }
  }

  /** Whether every signature of `decoded` verifies against its signer and message. */
  #verifySignatures(decoded: DecodedTransaction): boolean {
    const message = decoded.wire.subarray(decoded.messageOffset)
    const signers = decoded.transaction.message.staticAccountKeys
    return decoded.transaction.signatures.every((signature, index) => {
      const signer = signers[index]
      if (!signer) return false
      const key = createPublicKey({
        key: Buffer.concat([ED25519_SPKI_PREFIX, signer.toBuffer()]),
        format: 'der',
        type: 'spki',
      })
      return verifySignature(null, message, key, signature)
    })
  }

  #blockOf(slot: number): SlotEntry {
    const entry = this.#slots[slot]
    if (!entry) throw new Error(`slot ${slot} does not exist`)
    return entry
  }

  #openSlot(blockhash: string): void {
    const previous = this.#slots.at(-1)
    // Block times never go backwards, even if the wall clock does.
    const blockTime = Math.max(previous?.blockTime ?? 0, Math.floor(Date.now() / 1000))
    const slot = this.#slots.length
    this.#slots.push({ blockhash, blockTime })
    this.#blockhashSlots.set(blockhash, slot)
    this.#setClock(slot, blockTime)
  }

  /** Sets the Clock sysvar to `slot` at unix time `blockTime`. */
  #setClock(slot: number, blockTime: number): void {
    const epoch = BigInt(Math.floor(slot / SLOTS_PER_EPOCH))
    const genesisTime = BigInt(this.#slots[0]?.blockTime ?? blockTime)
    this.#svm.setClock(new Clock(BigInt(slot), genesisTime, epoch, epoch + 1n, BigInt(blockTime)))
  }

  #newSlot(): void {
    this.#svm.expireBlockhash()
    this.#openSlot(this.#svm.latestBlockhash())
  }

  /**
   * Fills the SlotHashes sysvar with the slots before `executingSlot`, newest first, as a bank at
   * that slot sees it (address lookup tables check their creation slot against it). LiteSVM's
   * SlotHash has no constructor, so existing entries are cloned through the sysvar and rewritten.
   */
  #syncSlotHashes(executingSlot: number): void {
    if (this.#slotHashesBuiltFor === executingSlot) return
    const wanted: { slot: number; hash: string }[] = []
    for (let slot = executingSlot - 1; slot >= 0 && wanted.length < MAX_SLOT_HASHES; slot--) {
      wanted.push({ slot, hash: this.#blockOf(slot).blockhash })
    }
    let entries = this.#svm.getSlotHashes()
    const template = entries[0]
    if (wanted.length === 0 || template === undefined) return
    if (entries.length < wanted.length) {
      this.#svm.setSlotHashes(wanted.map(() => template))
      entries = this.#svm.getSlotHashes()
    }
    entries = entries.slice(0, wanted.length)
    entries.forEach((entry, index) => {
      const source = wanted[index] as { slot: number; hash: string }
      entry.slot = BigInt(source.slot)
      entry.hash = source.hash
    })
    this.#svm.setSlotHashes(entries)
    this.#slotHashesBuiltFor = executingSlot
  }

  /** The account keys a message uses, with lookup tables resolved against the current state. */
  #resolveKeys(message: VersionedMessage): ResolvedKeys | TransactionErrorInfo {
    if (message.addressTableLookups.length === 0) {
      return { keys: message.staticAccountKeys, loaded: { writable: [], readonly: [] } }
    }
    const writable: PublicKey[] = []
    const readonly: PublicKey[] = []
    for (const lookup of message.addressTableLookups) {
      const account = this.#svm.getAccount(lookup.accountKey)
      if (!account) return transactionError('AddressLookupTableNotFound')
      if (account.owner.toBase58() !== ADDRESS_LOOKUP_TABLE_PROGRAM)
        return transactionError('InvalidAddressLookupTableOwner')
      let addresses: PublicKey[]
      try {
        addresses = AddressLookupTableAccount.deserialize(account.data).addresses
      } catch {
        return transactionError('InvalidAddressLookupTableData')
      }
      for (const [indexes, into] of [
        [lookup.writableIndexes, writable],
        [lookup.readonlyIndexes, readonly],
      ] as const) {
        for (const index of indexes) {
          const address = addresses[index]
          if (!address) return transactionError('InvalidAddressLookupTableIndex')
          into.push(address)
        }
      }
    }
    return {
      keys: [...message.staticAccountKeys, ...writable, ...readonly],
      loaded: {
        writable: writable.map((key) => key.toBase58()),
        readonly: readonly.map((key) => key.toBase58()),
      },
    }
  }

  #snapshot(keys: readonly PublicKey[]): AccountSnapshot {
    const balances: number[] = []
    const tokenBalances: TokenBalance[] = []
    keys.forEach((key, accountIndex) => {
      const account = this.#svm.getAccount(key)
      balances.push(account?.lamports ?? 0)
      if (!account) return
      const programId = account.owner.toBase58()
      if (!isTokenProgram(programId)) return
      const token = decodeTokenAccount(programId, account.data)
      if (!token) return
      const decimals = this.decimalsOf(token.mint)
      if (decimals === undefined) return
      tokenBalances.push({
        accountIndex,
        mint: token.mint,
        owner: token.owner,
        programId,
        uiTokenAmount: uiTokenAmount(token.amount, decimals),
      })
    })
    return { balances, tokenBalances }
  }

  /** Simulates against the current state; the caller has checked the lookup tables resolve. */
  #simulate(
    transaction: VersionedTransaction,
    signature: string,
    options: SimulateOptions,
  ): SimulationOutcome {
    let replacementBlockhash: SimulationOutcome['replacementBlockhash'] = null
    const failed = (err: TransactionErrorInfo): SimulationOutcome => ({
      err,
      logs: [],
      unitsConsumed: 0,
      returnData: null,
      innerInstructions: [],
      accounts: null,
      replacementBlockhash,
    })
    if (options.replaceRecentBlockhash) {
      const latest = this.latestBlockhash()
      transaction.message.recentBlockhash = latest.blockhash
      replacementBlockhash = {
        blockhash: latest.blockhash,
        lastValidBlockHeight: latest.lastValidBlockHeight,
      }
    } else if (!this.isBlockhashValid(transaction.message.recentBlockhash)) {
      return failed(transactionError('BlockhashNotFound'))
    }
    if (this.#records.has(signature)) return failed(transactionError('AlreadyProcessed'))
    // Simulate as the slot the transaction would land in: the next one (lookup-table entries
    // extended in the current slot, for one, only become usable there).
    const landingSlot = this.slot + 1
    this.#syncSlotHashes(landingSlot)
    this.#setClock(landingSlot, this.#blockOf(this.slot).blockTime)
    let result: ReturnType<LiteSVM['simulateTransaction']>
    try {
      result = this.#svm.simulateTransaction(transaction)
    } finally {
      releaseX87Stack()
      this.#setClock(this.slot, this.#blockOf(this.slot).blockTime)
    }
    const meta = result instanceof FailedTransactionMetadata ? result.meta() : result.meta()
    let accounts: SimulatedAccount[] | null = null
    if (options.accountAddresses) {
      const after = new Map<string, AccountInfoBytes>()
      if (!(result instanceof FailedTransactionMetadata)) {
        for (const [address, account] of result.postAccounts()) {
          after.set(address.toBase58(), {
            lamports: Number(account.lamports()),
            data: account.data(),
            owner: new PublicKey(account.owner()),
            executable: account.executable(),
            rentEpoch: Number(account.rentEpoch()),
          })
        }
      }
      accounts = options.accountAddresses.map(
        (address) => after.get(address) ?? this.#svm.getAccount(new PublicKey(address)),
      )
    }
    return {
      err: result instanceof FailedTransactionMetadata ? fromLiteSvmError(result.err()) : null,
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      returnData: returnDataOf(meta),
      innerInstructions: innerInstructionsOf(meta),
      accounts,
      replacementBlockhash,
    }
  }

  #execute(decoded: DecodedTransaction, keys: ResolvedKeys): void {
    const { transaction, signature } = decoded
    this.#newSlot()
    const slot = this.slot
    this.#syncSlotHashes(slot)
    const before = this.#snapshot(keys.keys)
    const undo = keys.keys.map((key) => ({ key, account: this.#svm.getAccount(key) }))
    let result: ReturnType<LiteSVM['sendTransaction']>
    try {
      result = this.#svm.sendTransaction(transaction)
    } finally {
      releaseX87Stack()
    }
    // Committed: successful, or failed with its fee charged (the fee payer's balance moved).
    const committed =
      !(result instanceof FailedTransactionMetadata) ||
      (this.#svm.getAccount(keys.keys[0] as PublicKey)?.lamports ?? 0) !== before.balances[0]
    if (!committed) {
      const reason =
        result instanceof FailedTransactionMetadata ? fromLiteSvmError(result.err()).message : 'not committed'
      this.#log(`dropped ${signature}: ${reason}`)
      return
    }
    const after = this.#snapshot(keys.keys)
    const meta = result instanceof FailedTransactionMetadata ? result.meta() : result
    const message = transaction.message
    const accountKeys = keys.keys.map((key) => key.toBase58())
    const record: RecordedTransaction = {
      signature,
      slot,
      blockTime: this.#blockOf(slot).blockTime,
      wire: decoded.wire,
      message,
      version: message.version,
      accountKeys,
      loadedAddresses: keys.loaded,
      err: result instanceof FailedTransactionMetadata ? fromLiteSvmError(result.err()).json : null,
      fee: chargedFee(meta) ?? LAMPORTS_PER_SIGNATURE * message.header.numRequiredSignatures,
      preBalances: before.balances,
      postBalances: after.balances,
      preTokenBalances: before.tokenBalances,
      postTokenBalances: after.tokenBalances,
      logMessages: meta.logs(),
      innerInstructions: innerInstructionsOf(meta),
      computeUnitsConsumed: Number(meta.computeUnitsConsumed()),
      returnData: returnDataOf(meta),
      memo: memoOf(message),
      computeUnitPrice: computeBudget(message).price,
    }
    this.#records.set(signature, record)
    this.#undo.set(signature, undo)
    this.#history.push(record)
    for (const address of new Set(accountKeys)) {
      this.#knownAddresses.add(address)
      const list = this.#byAddress.get(address)
      if (list) list.push(record)
      else this.#byAddress.set(address, [record])
    }
  }
}
