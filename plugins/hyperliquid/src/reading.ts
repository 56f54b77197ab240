/**
 * Hyperliquid reads for the indexer and the oracle, through the explorer's `txDetails` and `/info`.
 *
 * - A transaction is a signed action; the explorer knows it once it is in a block, which is final
 *   at once (HyperBFT): `success` (no error) or `reverted` (executed with an error, e.g. an
 *   insufficient balance), 1 confirmation, `final`. Unknown → `not_found`.
 * - Deposits: a successful `usdSend`/`spotSend` to the depository, one fact (index 0) with
 *   `depositId` = tag(sender, nonce) (see actions.ts).
 * - Fills and refunds: a successful send, one fact with `orderId` = tag(sender, nonce); which order
 *   a nonce paid is the solver's record (the venue knows no order ids).
 * - Balances: perps USDC `withdrawable` (clearinghouseState); spot `total − hold`
 *   (spotClearinghouseState).
 * - Deposit scans: the depository's ledger updates (`userNonFundingLedgerUpdates`) from a time cursor.
 */
import {
  type BalanceOptions,
  type DepositFact,
  type DepositScan,
  PontisError,
  type ReadingCapability,
  type ScannedDeposit,
  type TransactionFacts,
  type TransactionState,
} from '@pontis/core/plugin'
import { hyperliquidDepositTag } from './actions.js'
import { type HyperliquidExplorerTx, isHyperliquidSend } from './api.js'
import { HYPERLIQUID_NATIVE_CURRENCY_ID, HYPERLIQUID_NATIVE_DECIMALS } from './config.js'
import { assetOf, type HyperliquidChainContext, spotTokens } from './context.js'
import {
  canonicalAddress,
  canonicalCurrency,
  requireAddress,
  requireCurrency,
  requireHash,
} from './identity.js'

/** A transaction and where it stands. */
export interface HyperliquidLookup {
  readonly tx: HyperliquidExplorerTx | undefined
  readonly state: TransactionState
}

/** Reads `hash` from the explorer. */
export async function lookUpTransaction(
  context: HyperliquidChainContext,
  hash: string,
): Promise<HyperliquidLookup> {
  const tx = await context.api.txDetails(hash)
  if (!tx) return { tx, state: 'not_found' }
  return { tx, state: tx.error === null || tx.error === undefined ? 'success' : 'reverted' }
}

/** A send as read back: who paid whom, what, with which nonce. */
export interface HyperliquidTransfer {
  readonly sender: `0x${string}`
  readonly destination: `0x${string}`
  readonly currencyId: string
  readonly amount: bigint
  readonly nonce: bigint
}

/** Parses a decimal amount with at most `decimals` significant fraction digits; undefined otherwise. */
export function parseVenueAmount(text: unknown, decimals: number): bigint | undefined {
  const match = typeof text === 'string' ? /^([0-9]+)(?:\.([0-9]+))?$/.exec(text) : null
  if (!match) return undefined
  const [, whole = '0', fraction = ''] = match
  const significant = fraction.replace(/0+$/, '')
  if (significant.length > decimals) return undefined
  return BigInt(whole + significant.padEnd(decimals, '0'))
}

/** The transfer a transaction made, when it is a well-formed send of a known currency. */
export async function transferOf(
  context: HyperliquidChainContext,
  tx: HyperliquidExplorerTx,
): Promise<HyperliquidTransfer | undefined> {
  const action = tx.action
  const sender = canonicalAddress(tx.user)
  if (!isHyperliquidSend(action) || sender === undefined) return undefined
  const destination = canonicalAddress(action.destination)
  if (destination === undefined) return undefined
  let currencyId = HYPERLIQUID_NATIVE_CURRENCY_ID
  let decimals = HYPERLIQUID_NATIVE_DECIMALS
  if (action.type === 'spotSend') {
    const id = canonicalCurrency(action.token.split(':')[1])
    const token = (await spotTokens(context)).find((candidate) => candidate.tokenId === id)
    if (id === undefined || !token) return undefined
    currencyId = id
    decimals = token.weiDecimals
  }
  const amount = parseVenueAmount(action.amount, decimals)
  if (amount === undefined) return undefined
  return { sender, destination, currencyId, amount, nonce: BigInt(action.time) }
}

function factsOf<Fact>(
  hash: string,
  lookup: HyperliquidLookup,
  facts: readonly Fact[],
): TransactionFacts<Fact> {
  return {
    transactionId: hash,
    state: lookup.state,
    final: lookup.state === 'success' || lookup.state === 'reverted',
    ...(lookup.tx ? { blockNumber: BigInt(lookup.tx.block), confirmations: 1 } : { confirmations: 0 }),
    facts,
  }
}

/** The deposit fact of a transfer to the depository. */
function depositFact(depository: string, transfer: HyperliquidTransfer): DepositFact {
  return {
    index: 0,
    depository,
    depositId: hyperliquidDepositTag(transfer.sender, transfer.nonce),
    depositor: transfer.sender,
    currencyId: transfer.currencyId,
    amount: transfer.amount,
  }
}

/** Where a deposit scan stands: ledger updates up to this time (ms) were reported. */
function parseCursor(context: HyperliquidChainContext, cursor: string): number {
  const time = /^[0-9]{1,16}$/.test(cursor) ? Number(cursor) : Number.NaN
  if (!Number.isSafeInteger(time)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${cursor.slice(0, 100)}' is not a deposit scan cursor of ${context.label.displayName}.`,
    )
  }
  return time
}

export function createHyperliquidReading(context: HyperliquidChainContext): ReadingCapability {
  async function read<Fact>(
    transactionId: string,
    extract: (transfer: HyperliquidTransfer) => Fact | undefined,
  ): Promise<TransactionFacts<Fact>> {
    const hash = requireHash(transactionId, context.label)
    const lookup = await lookUpTransaction(context, hash)
    if (lookup.state !== 'success' || !lookup.tx) return factsOf(transactionId, lookup, [])
    const transfer = await transferOf(context, lookup.tx)
    const fact = transfer ? extract(transfer) : undefined
    return factsOf(transactionId, lookup, fact === undefined ? [] : [fact])
  }

  return {
    readDeposits: (transactionId) =>
      read(transactionId, (transfer) =>
        context.depository !== undefined && transfer.destination === context.depository
          ? depositFact(context.depository, transfer)
          : undefined,
      ),
    // No readFills / readRefunds: a payout here carries no order id (sends have no memo), so it
    // cannot be read as a fact about an order; the oracle answers UNSUPPORTED_CHAIN for them. The
    // solver follows its own fills by transaction id (`filling.outcome`).

    async scanDeposits(cursor: string | undefined): Promise<DepositScan> {
      const depository = context.depository
      const now = Date.now()
      // A new indexer starts at the head: no history.
      if (!depository || cursor === undefined) return { deposits: [], cursor: String(now), caughtUp: true }
      const from = parseCursor(context, cursor)
      const updates = await context.api.info<
        Array<{ time: number; hash: string; delta: Readonly<Record<string, unknown>> }>
      >({ type: 'userNonFundingLedgerUpdates', user: depository, startTime: from })
      const page = updates.slice(0, context.maxScanUpdates)
      const deposits: ScannedDeposit[] = []
      for (const update of page) {
        const { delta } = update
        if (delta.type !== 'send' && delta.type !== 'spotTransfer') continue
        if (canonicalAddress(delta.destination) !== depository) continue
        // The delta names the token by name; the transaction itself is the authority for the rest.
        const lookup = await lookUpTransaction(context, update.hash)
        if (lookup.state !== 'success' || !lookup.tx) continue
        const transfer = await transferOf(context, lookup.tx)
        if (!transfer || transfer.destination !== depository) continue
        deposits.push({
          ...depositFact(depository, transfer),
          transactionId: update.hash.toLowerCase(),
          blockNumber: BigInt(lookup.tx.block),
          confirmations: 1,
        })
      }
      // Entries at the cursor's own millisecond are read again next time: reads are idempotent.
      const last = page.reduce((max, update) => Math.max(max, update.time), from)
      return {
        deposits,
        cursor: String(last),
        caughtUp: updates.length < context.maxScanUpdates,
      }
    },

    async readBalance(owner: string, currencyId: string, options?: BalanceOptions): Promise<bigint> {
      const user = requireAddress(owner, 'address', context.label)
      // Fresh reads skip the cache: a balance a money decision rests on.
      const cached = <T>(key: string, load: () => Promise<T>): Promise<T> =>
        options?.fresh ? load() : context.cache.read(key, load)
      const asset = await assetOf(context, requireCurrency(currencyId, 'currency', context.label))
      if (asset.kind === 'perps') {
        const state = await cached(`perps:${user}`, () =>
          context.api.info<{ withdrawable?: string }>({ type: 'clearinghouseState', user }),
        )
        return parseBalance(context, state.withdrawable ?? '0', asset.decimals)
      }
      const spot = await cached(`spot:${user}`, () =>
        context.api.info<{ balances?: Array<{ token: number; total: string; hold: string }> }>({
          type: 'spotClearinghouseState',
          user,
        }),
      )
      const entry = (spot.balances ?? []).find((balance) => balance.token === asset.index)
      if (!entry) return 0n
      const available =
        parseBalance(context, entry.total, asset.decimals) - parseBalance(context, entry.hold, asset.decimals)
      return available > 0n ? available : 0n
    },
  }
}

/** A venue balance string in smallest units; digits beyond `decimals` are dropped (never rounded up). */
function parseBalance(context: HyperliquidChainContext, text: string, decimals: number): bigint {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(text)
  if (!match) {
    throw new PontisError(
      'RPC_HTTP_ERROR',
      `The Hyperliquid API of ${context.label.displayName} answered a malformed balance '${text.slice(0, 40)}'.`,
      { chainId: context.label.id },
    )
  }
  const [, whole = '0', fraction = ''] = match
  return BigInt(whole + fraction.slice(0, decimals).padEnd(decimals, '0'))
}
