/**
 * SVM reads for the indexer and the oracle: deposits into the vault, fills and refunds tagged with
 * an order id (a memo), found in a transaction by its signature; deposit scans over the vault's
 * accounts; balances.
 */
import {
  blockHashQuorum,
  type DepositFact,
  type DepositScan,
  type PayoutFact,
  PontisError,
  type ReadingCapability,
  type ScannedDeposit,
  type TransactionFacts,
  type TransactionState,
} from '@pontis/core/plugin'
import { getAssociatedTokenAddressSync, unpackAccount } from '@solana/spl-token'
import {
  type ConfirmedSignatureInfo,
  type Connection,
  PublicKey,
  SolanaJSONRPCError,
  type VersionedTransactionResponse,
} from '@solana/web3.js'
import { CONFIRMED, isNative, mintInfo, rpc, type SvmChainContext } from './context.js'
import { isSignature, SVM_NATIVE_CURRENCY_ID } from './identity.js'
import { type DecodedTransaction, decodeTransaction } from './transactions.js'

/** Where a signature stands: its state, slot distance and finality. */
export interface SignatureLookup {
  readonly state: TransactionState
  readonly final: boolean
  readonly confirmations: number
  readonly slot?: number
  readonly err?: unknown
}

function checkSignature(context: SvmChainContext, transactionId: string): void {
  if (!isSignature(transactionId)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${String(transactionId).slice(0, 100)}' is not a transaction signature of ${context.label.displayName}: expected a base58 signature of 64 bytes (87 or 88 characters, case-sensitive).`,
    )
  }
}

/**
 * The state of `signature`: not found, processed only (pending), or confirmed with its outcome.
 * @throws PontisError INVALID_REQUEST when `signature` is not a transaction signature.
 */
export async function lookUpSignature(context: SvmChainContext, signature: string): Promise<SignatureLookup> {
  checkSignature(context, signature)
  const [{ value }, current] = await rpc(context, () =>
    Promise.all([
      context.connection.getSignatureStatuses([signature], { searchTransactionHistory: true }),
      context.connection.getSlot('processed'),
    ]),
  )
  const status = value[0]
  if (!status) return { state: 'not_found', final: false, confirmations: 0 }
  const confirmations = Math.max(1, current - status.slot + 1)
  if (status.confirmationStatus === 'processed' || status.confirmationStatus === undefined) {
    return { state: 'pending', final: false, confirmations: 0, slot: status.slot }
  }
  return {
    state: status.err ? 'reverted' : 'success',
    final: status.confirmationStatus === 'finalized',
    confirmations,
    slot: status.slot,
    ...(status.err ? { err: status.err } : {}),
  }
}

/**
 * The blockhash of `slot` as `connection`'s node has it (confirmed at least); undefined when it
 * has no such block (skipped, not confirmed yet, or pruned).
 */
async function blockhashAt(connection: Connection, slot: number): Promise<string | undefined> {
  try {
    const block = await connection.getBlock(slot, {
      commitment: CONFIRMED,
      transactionDetails: 'none',
      rewards: false,
      maxSupportedTransactionVersion: 0,
    })
    return block?.blockhash
  } catch (error) {
    if (error instanceof SolanaJSONRPCError) return undefined
    throw error
  }
}

/** Whether a majority of the chain's nodes agree on the blockhash of `slot` (true with one node). */
async function slotVouchedFor(context: SvmChainContext, slot: number): Promise<boolean> {
  const witnesses = context.witnesses ?? []
  if (witnesses.length === 0) return true
  const blockhash = await rpc(context, () => blockhashAt(context.connection, slot))
  if (blockhash === undefined) return false
  return blockHashQuorum({
    witnesses,
    height: BigInt(slot),
    blockHash: blockhash,
    ask: (witness, height) => blockhashAt(witness.connection, Number(height)),
    onDisagreement: context.onDisagreement,
  })
}

/**
 * A transaction with where it stands: without it unless it succeeded and, with several nodes
 * configured, a majority of them vouch for its slot's block (else it reads as pending, so nothing
 * acts on it or signs it).
 */
async function readTransaction(
  context: SvmChainContext,
  signature: string,
  vouched: boolean,
): Promise<{ lookup: SignatureLookup; transaction?: VersionedTransactionResponse }> {
  const lookup = await lookUpSignature(context, signature)
  if (lookup.state !== 'success') return { lookup }
  const transaction = await rpc(context, () =>
    context.connection.getTransaction(signature, {
      commitment: CONFIRMED,
      maxSupportedTransactionVersion: 0,
    }),
  )
  // Confirmed per its status but not served yet by this node: report it as pending.
  if (!transaction) return { lookup: { ...lookup, state: 'pending', final: false } }
  if (vouched && !(await slotVouchedFor(context, transaction.slot))) {
    return { lookup: { ...lookup, state: 'pending', final: false, confirmations: 0 } }
  }
  return { lookup, transaction }
}

function factsOf<Fact>(
  signature: string,
  lookup: SignatureLookup,
  facts: readonly Fact[],
): TransactionFacts<Fact> {
  return {
    transactionId: signature,
    state: lookup.state,
    final: lookup.final,
    ...(lookup.slot !== undefined ? { blockNumber: BigInt(lookup.slot) } : {}),
    confirmations: lookup.confirmations,
    facts,
  }
}

/** The deposits into the vault a decoded transaction makes, tagged by its single id memo. */
export function depositsIn(context: SvmChainContext, decoded: DecodedTransaction): DepositFact[] {
  const vault = context.vault?.toBase58()
  // One id per transaction: a deposit tagged with two ids belongs to neither.
  if (!vault || decoded.tags.length !== 1) return []
  const depositId = decoded.tags[0] as string
  return decoded.transfers
    .filter((transfer) => transfer.recipient === vault && transfer.currency !== undefined)
    .map((transfer) => ({
      index: transfer.index,
      depository: vault,
      depositId,
      depositor: transfer.authority,
      currencyId: transfer.currency as string,
      amount: transfer.amount,
    }))
}

/** Payments tagged with an order id: every transfer of a transaction with a single id memo. */
function payoutsIn(decoded: DecodedTransaction, excluded: string | undefined): PayoutFact[] {
  if (decoded.tags.length !== 1) return []
  const orderId = decoded.tags[0] as string
  return decoded.transfers
    .filter(
      (transfer) => transfer.recipient !== undefined && transfer.recipient !== excluded && transfer.currency,
    )
    .map((transfer) => ({
      index: transfer.index,
      orderId,
      recipient: transfer.recipient as string,
      currencyId: transfer.currency as string,
      amount: transfer.amount,
    }))
}

/**
 * Where the scan of one watched account stands: the newest signature read (the next scan reads
 * what is newer), or part way down a backlog larger than one page. Signatures only come newest
 * first, so a backlog is read page by page from `before` down to `until` (exclusive; absent: the
 * account's first transaction), and the scan goes on from `head` once it is through.
 */
type AccountCursor = string | { readonly head: string; readonly before: string; readonly until?: string }

type ScanCursor = Readonly<Record<string, AccountCursor>>

/**
 * The cursor key of a scan that starts at a slot (`indexer.startBlock`): until every watched account
 * has been read back to that slot, older signatures are skipped and the walk down stops there.
 */
const FROM_SLOT = '@fromSlot'

/**
 * The scan cursor a previous scan returned.
 * @throws PontisError INVALID_REQUEST when `cursor` is not one.
 */
function parseCursor(context: SvmChainContext, cursor: string): ScanCursor {
  let parsed: unknown
  try {
    parsed = JSON.parse(cursor)
  } catch {
    parsed = undefined
  }
  const valid =
    typeof parsed === 'object' &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every(
      (entry) =>
        typeof entry === 'string' ||
        (typeof entry === 'object' &&
          entry !== null &&
          typeof (entry as { head?: unknown }).head === 'string' &&
          typeof (entry as { before?: unknown }).before === 'string'),
    )
  if (!valid) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${cursor.slice(0, 100)}' is not a deposit scan cursor of ${context.label.displayName}.`,
    )
  }
  return parsed as ScanCursor
}

export function createSvmReading(context: SvmChainContext): ReadingCapability {
  /**
   * The facts of `signature`. `vouched` (every read but the scan's): only once a majority of the
   * nodes vouch for its block; the scan records what it sees, which is not acting on it, and a
   * deposit it skipped would not be scanned again.
   */
  async function read<Fact>(
    signature: string,
    extract: (decoded: DecodedTransaction) => Fact[],
    vouched = true,
  ): Promise<TransactionFacts<Fact>> {
    const { lookup, transaction } = await readTransaction(context, signature, vouched)
    if (!transaction) return factsOf(signature, lookup, [])
    return factsOf(signature, lookup, extract(decodeTransaction(transaction)))
  }

  /** The vault and its token accounts for the configured currencies: where deposits land. */
  async function watchedAccounts(): Promise<string[]> {
    const vault = context.vault
    if (!vault) return []
    const accounts = [vault.toBase58()]
    for (const mint of context.tokenCurrencies) {
      const { programId } = await mintInfo(context, mint)
      accounts.push(getAssociatedTokenAddressSync(new PublicKey(mint), vault, true, programId).toBase58())
    }
    return accounts
  }

  /** Signatures touching `account`, newest first: at most `limit`, older than `before`, newer than `until`. */
  function signaturesOf(
    account: string,
    options: { limit: number; before?: string; until?: string },
  ): Promise<ConfirmedSignatureInfo[]> {
    return rpc(context, () =>
      context.connection.getSignaturesForAddress(new PublicKey(account), options, CONFIRMED),
    )
  }

  /**
   * The next page of `account` after `state`, oldest first, and where the account stands after it.
   * A full page may have unread signatures below it: the cursor then walks down to them.
   */
  async function nextPage(
    account: string,
    state: AccountCursor | undefined,
    fromSlot: number | undefined,
  ): Promise<{ signatures: ConfirmedSignatureInfo[]; next: AccountCursor | undefined; complete: boolean }> {
    const limit = context.maxScanSignatures
    const walking = typeof state === 'object' ? state : undefined
    const until = typeof state === 'object' ? state.until : state
    const fetched = await signaturesOf(account, {
      limit,
      ...(walking ? { before: walking.before } : {}),
      ...(until ? { until } : {}),
    })
    // Starting at a slot: what is older is history before the start, and the walk ends there.
    const page = fromSlot === undefined ? fetched : fetched.filter((info) => info.slot >= fromSlot)
    const head = walking?.head ?? fetched[0]?.signature
    const oldest = page.at(-1)?.signature
    if (page.length >= limit && page.length === fetched.length && head && oldest) {
      return {
        signatures: [...page].reverse(),
        next: { head, before: oldest, ...(until ? { until } : {}) },
        complete: false,
      }
    }
    return { signatures: [...page].reverse(), next: head ?? state, complete: true }
  }

  return {
    readDeposits: (signature) => read(signature, (decoded) => depositsIn(context, decoded)),
    readFills: (signature) => read(signature, (decoded) => payoutsIn(decoded, context.vault?.toBase58())),
    readRefunds: (signature) => read(signature, (decoded) => payoutsIn(decoded, context.vault?.toBase58())),

    async scanDeposits(cursor: string | undefined): Promise<DepositScan> {
      const previous = cursor === undefined ? undefined : parseCursor(context, cursor)
      const accounts = await watchedAccounts()
      const next: Record<string, AccountCursor> = { ...previous }
      const start = previous?.[FROM_SLOT]
      const fromSlot = typeof start === 'string' ? Number(start) : undefined
      const deposits: ScannedDeposit[] = []
      let caughtUp = true
      const seen = new Set<string>()
      for (const account of accounts) {
        if (previous === undefined) {
          // A new indexer starts at the head instead of replaying history.
          const [newest] = await signaturesOf(account, { limit: 1 })
          if (newest) next[account] = newest.signature
          continue
        }
        // An account without an entry had no transactions at the last scan: all of its are new.
        const page = await nextPage(account, previous[account], fromSlot)
        if (!page.complete) caughtUp = false
        if (page.next !== undefined) next[account] = page.next
        for (const info of page.signatures) {
          if (info.err || seen.has(info.signature)) continue
          seen.add(info.signature)
          const facts = await read(info.signature, (decoded) => depositsIn(context, decoded), false)
          if (facts.state !== 'success') continue
          for (const fact of facts.facts) {
            deposits.push({
              ...fact,
              transactionId: info.signature,
              ...(facts.blockNumber !== undefined ? { blockNumber: facts.blockNumber } : {}),
              confirmations: facts.confirmations ?? 1,
            })
          }
        }
      }
      // Every account is read back to the start slot: from now on each goes on from its own head.
      if (caughtUp) delete next[FROM_SLOT]
      return { deposits, cursor: JSON.stringify(next), caughtUp }
    },

    /**
     * A cursor that reads every watched account's signatures back to slot `height` (inclusive) on
     * the first scan, then goes on as usual from each account's newest one.
     */
    startCursor(height: bigint): string {
      if (height < 0n || height > BigInt(Number.MAX_SAFE_INTEGER))
        throw new PontisError('INVALID_REQUEST', `start slot ${height} is out of range`)
      return JSON.stringify({ [FROM_SLOT]: height.toString() })
    },

    async readBalance(owner: string, currencyId: string): Promise<bigint> {
      const key = new PublicKey(owner)
      if (isNative(currencyId) || currencyId === SVM_NATIVE_CURRENCY_ID) {
        return BigInt(await rpc(context, () => context.connection.getBalance(key, CONFIRMED)))
      }
      const { programId } = await mintInfo(context, currencyId)
      const account = getAssociatedTokenAddressSync(new PublicKey(currencyId), key, true, programId)
      const info = await rpc(context, () => context.connection.getAccountInfo(account, CONFIRMED))
      if (!info) return 0n
      return unpackAccount(account, info, programId).amount
    },
  }
}
