/**
 * Bitcoin reads for the indexer and the oracle.
 *
 * - Deposits: outputs of a transaction paying the vault, in a transaction tagged with exactly one
 *   OP_RETURN id (the request id); one fact per paying output, the depositor being the address of
 *   the first input's previous output. Mempool transactions are reported as `pending` with their
 *   facts and 0 confirmations, so a request can move to `pending` as soon as its deposit is seen;
 *   once mined, confirmations = tip − height + 1 and `final` applies the confirmation policy
 *   (`confirmations`, or `highValueConfirmations` above the currency's threshold).
 *   Payments to a per-request deposit address are untagged plain payments: nothing in them names
 *   the request, so they are not deposit facts; the indexer finds them by the address's balance
 *   (`readBalance`), as on EVM.
 *   A transaction spending the vault's own coins is never a deposit: its output to the vault is the
 *   change of a repayment or refund.
 * - Fills and refunds: the outputs of a transaction tagged with one OP_RETURN id (order or refund
 *   id), except the change, i.e. outputs paying back a script the transaction spends from.
 * - Balances by the spec's rule (see `balanceOf`).
 * - Deposit scans over the vault's confirmed history, in bounded pages, plus its mempool.
 */
import {
  type BalanceOptions,
  blockHashQuorum,
  type DepositFact,
  type DepositScan,
  invalidAddressError,
  type PayoutFact,
  PontisError,
  type ReadingCapability,
  type ScannedDeposit,
  type TransactionFacts,
  type TransactionState,
} from '@pontis/core/plugin'
import { BITCOIN_NATIVE_CURRENCY_ID } from './config.js'
import { type BitcoinChainContext, balanceOf, confirmationsOf, requiredConfirmations } from './context.js'
import type { EsploraOutput, EsploraTransaction } from './esplora.js'
import { addressOfScript, parseAddress, requireTxid } from './identity.js'
import { isDataScript, tagOf } from './transactions.js'

/** Confirmed transactions per page of `/address/:address/txs/chain`. */
const ESPLORA_CHAIN_PAGE_SIZE = 25

/** Where a transaction stands, with the transaction when the API has it. */
export interface TransactionLookup {
  readonly transaction: EsploraTransaction | undefined
  readonly state: TransactionState
  readonly confirmations: number
  readonly blockNumber?: bigint
}

/**
 * Reads `txid` and where it stands: not found, pending (mempool, 0 confirmations) or mined (success,
 * 1 = in the newest block). Bitcoin transactions never revert. With several APIs configured, a
 * transaction whose block a majority of them does not vouch for is pending, without the
 * transaction: nothing acts on it or signs it.
 */
export async function lookUpTransaction(
  context: BitcoinChainContext,
  txid: string,
): Promise<TransactionLookup> {
  const transaction = await context.esplora.transaction(txid)
  if (!transaction) return { transaction, state: 'not_found', confirmations: 0 }
  if (!transaction.status.confirmed || transaction.status.block_height === undefined) {
    return { transaction, state: 'pending', confirmations: 0 }
  }
  if (!(await blockVouchedFor(context, transaction.status.block_height, transaction.status.block_hash))) {
    return { transaction: undefined, state: 'pending', confirmations: 0 }
  }
  const tip = await context.esplora.tipHeight()
  return {
    transaction,
    state: 'success',
    confirmations: confirmationsOf(transaction.status, tip),
    blockNumber: BigInt(transaction.status.block_height),
  }
}

/** Whether a majority of the chain's APIs answer `blockHash` for the block at `height`. */
function blockVouchedFor(
  context: BitcoinChainContext,
  height: number,
  blockHash: string | undefined,
): Promise<boolean> {
  if (context.witnesses.length === 0) return Promise.resolve(true)
  // A confirmed status without its block's hash vouches for nothing.
  if (blockHash === undefined) return Promise.resolve(false)
  return blockHashQuorum({
    witnesses: context.witnesses,
    height: BigInt(height),
    blockHash: blockHash.toLowerCase(),
    ask: (witness, at) => witness.esplora.blockHashAt(Number(at)),
    onDisagreement: context.onDisagreement,
  })
}

/** The single id a transaction is tagged with, or undefined (none, or several: then it belongs to none). */
function tagOfTransaction(transaction: EsploraTransaction): `0x${string}` | undefined {
  const tags = transaction.vout.flatMap((output) => {
    const tag = tagOf(output.scriptpubkey)
    return tag ? [tag] : []
  })
  return tags.length === 1 ? tags[0] : undefined
}

function addressOfOutput(context: BitcoinChainContext, output: EsploraOutput): string | undefined {
  return (
    addressOfScript(Buffer.from(output.scriptpubkey, 'hex'), context.network) ?? output.scriptpubkey_address
  )
}

/** The vault deposits one transaction makes (see the module comment). */
export function depositsIn(context: BitcoinChainContext, transaction: EsploraTransaction): DepositFact[] {
  const vault = context.vault
  const depositId = tagOfTransaction(transaction)
  if (!vault || depositId === undefined) return []
  const vaultScript = Buffer.from(vault.script).toString('hex')
  // The vault's own payment (a repayment or a refund): its output to the vault is change, not a deposit.
  if (transaction.vin.some((input) => input.prevout?.scriptpubkey.toLowerCase() === vaultScript)) return []
  const first = transaction.vin[0]?.prevout
  const depositor = first ? (addressOfOutput(context, first) ?? '') : ''
  return transaction.vout.flatMap((output, index) =>
    output.scriptpubkey.toLowerCase() === vaultScript
      ? [
          {
            index,
            depository: vault.address,
            depositId,
            depositor,
            currencyId: BITCOIN_NATIVE_CURRENCY_ID,
            amount: BigInt(output.value),
          },
        ]
      : [],
  )
}

/** The tagged payouts one transaction makes: every output but the tag and the change. */
export function payoutsIn(context: BitcoinChainContext, transaction: EsploraTransaction): PayoutFact[] {
  const orderId = tagOfTransaction(transaction)
  if (orderId === undefined) return []
  const spentFrom = new Set(
    transaction.vin.flatMap((input) => (input.prevout ? [input.prevout.scriptpubkey.toLowerCase()] : [])),
  )
  return transaction.vout.flatMap((output, index) => {
    if (isDataScript(output.scriptpubkey) || spentFrom.has(output.scriptpubkey.toLowerCase())) return []
    const recipient = addressOfOutput(context, output)
    if (recipient === undefined) return []
    return [
      { index, orderId, recipient, currencyId: BITCOIN_NATIVE_CURRENCY_ID, amount: BigInt(output.value) },
    ]
  })
}

function factsOf<Fact extends { readonly amount: bigint }>(
  txid: string,
  lookup: TransactionLookup,
  facts: readonly Fact[],
  required: (facts: readonly Fact[]) => number,
): TransactionFacts<Fact> {
  return {
    transactionId: txid,
    state: lookup.state,
    final: lookup.state === 'success' && lookup.confirmations >= required(facts),
    ...(lookup.blockNumber !== undefined ? { blockNumber: lookup.blockNumber } : {}),
    confirmations: lookup.confirmations,
    facts,
  }
}

/** Confirmations the largest deposit of a transaction needs (the base rule when it has none). */
function depositsRequire(context: BitcoinChainContext, facts: readonly DepositFact[]): number {
  return Math.max(
    context.confirmations,
    ...facts.map((fact) => requiredConfirmations(context, fact.currencyId, fact.amount)),
  )
}

/** Confirmations the payouts of a transaction need, by their total. */
function payoutsRequire(context: BitcoinChainContext, facts: readonly PayoutFact[]): number {
  const total = facts.reduce((sum, fact) => sum + fact.amount, 0n)
  return requiredConfirmations(context, BITCOIN_NATIVE_CURRENCY_ID, total)
}

/**
 * Where a deposit scan stands: every confirmed vault transaction up to `height` was reported
 * (the next scan re-reads a few blocks below it, so a shallow reorg is seen again). `walk`: part
 * way down a backlog larger than one step, from `target` (a tip height) down to `height`,
 * continuing with the transactions older than `before`.
 */
interface ScanCursor {
  readonly height: number
  readonly walk?: { readonly target: number; readonly before: string }
}

function parseCursor(context: BitcoinChainContext, cursor: string): ScanCursor {
  let parsed: unknown
  try {
    parsed = JSON.parse(cursor)
  } catch {
    parsed = undefined
  }
  const value = parsed as Partial<ScanCursor> | undefined
  const walk = value?.walk as Partial<NonNullable<ScanCursor['walk']>> | undefined
  const valid =
    typeof value === 'object' &&
    value !== null &&
    Number.isSafeInteger(value.height) &&
    (walk === undefined ||
      (typeof walk === 'object' && Number.isSafeInteger(walk.target) && typeof walk.before === 'string'))
  if (!valid) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${cursor.slice(0, 100)}' is not a deposit scan cursor of ${context.label.displayName}.`,
    )
  }
  return value as ScanCursor
}

export function createBitcoinReading(context: BitcoinChainContext): ReadingCapability {
  async function read<Fact extends { readonly amount: bigint }>(
    transactionId: string,
    extract: (transaction: EsploraTransaction) => Fact[],
    required: (facts: readonly Fact[]) => number,
  ): Promise<TransactionFacts<Fact>> {
    const txid = requireTxid(transactionId, context.label)
    const lookup = await lookUpTransaction(context, txid)
    const facts = lookup.transaction ? extract(lookup.transaction) : []
    return factsOf(txid, lookup, facts, required)
  }

  const scanned = (transaction: EsploraTransaction, confirmations: number): ScannedDeposit[] =>
    depositsIn(context, transaction).map((fact) => ({
      ...fact,
      transactionId: transaction.txid,
      ...(transaction.status.block_height !== undefined && transaction.status.confirmed
        ? { blockNumber: BigInt(transaction.status.block_height) }
        : {}),
      confirmations,
    }))

  async function mempoolDeposits(vault: string): Promise<ScannedDeposit[]> {
    const pending = await context.esplora.addressMempoolTxs(vault)
    return pending.flatMap((transaction) => scanned(transaction, 0))
  }

  return {
    readDeposits: (transactionId) =>
      read(
        transactionId,
        (transaction) => depositsIn(context, transaction),
        (facts) => depositsRequire(context, facts),
      ),
    readFills: (transactionId) =>
      read(
        transactionId,
        (transaction) => payoutsIn(context, transaction),
        (facts) => payoutsRequire(context, facts),
      ),
    readRefunds: (transactionId) =>
      read(
        transactionId,
        (transaction) => payoutsIn(context, transaction),
        (facts) => payoutsRequire(context, facts),
      ),

    async scanDeposits(cursor: string | undefined): Promise<DepositScan> {
      const vault = context.vault
      const tip = await context.esplora.tipHeight()
      if (!vault) return { deposits: [], cursor: JSON.stringify({ height: tip }), caughtUp: true }
      if (cursor === undefined) {
        // A new indexer starts at the head: no history, only what is waiting in the mempool.
        return {
          deposits: await mempoolDeposits(vault.address),
          cursor: JSON.stringify({ height: tip }),
          caughtUp: true,
        }
      }
      const previous = parseCursor(context, cursor)
      const target = previous.walk?.target ?? tip
      // Re-read the newest blocks already scanned: a transaction a shallow reorg moved is seen again.
      const floor = previous.height - Math.max(context.confirmations, context.highValueConfirmations)
      const deposits: ScannedDeposit[] = []
      let before = previous.walk?.before
      for (let pages = 0; pages < context.maxScanPages; pages++) {
        const page = await context.esplora.addressChainTxs(vault.address, before)
        // A short page is the end of the history (Esplora pages hold 25 confirmed transactions).
        let reachedFloor = page.length < ESPLORA_CHAIN_PAGE_SIZE
        for (const transaction of page) {
          const height = transaction.status.block_height ?? 0
          if (height <= floor) {
            reachedFloor = true
            break
          }
          // Mined after this walk began: the next scan (from `target`) reads it.
          if (height > target) continue
          deposits.push(...scanned(transaction, confirmationsOf(transaction.status, tip)))
        }
        if (reachedFloor) {
          deposits.push(...(await mempoolDeposits(vault.address)))
          return { deposits, cursor: JSON.stringify({ height: target }), caughtUp: target >= tip }
        }
        before = (page.at(-1) as EsploraTransaction).txid
      }
      return {
        deposits,
        cursor: JSON.stringify({ height: previous.height, walk: { target, before } }),
        caughtUp: false,
      }
    },

    async readBalance(owner: string, currencyId: string, options?: BalanceOptions): Promise<bigint> {
      if (currencyId !== BITCOIN_NATIVE_CURRENCY_ID) {
        throw new PontisError(
          'UNSUPPORTED_CURRENCY',
          `${context.label.displayName} has one currency, the native one (${BITCOIN_NATIVE_CURRENCY_ID}).`,
          { chainId: context.label.id, currency: currencyId },
        )
      }
      const parsed = parseAddress(owner, context.network)
      if ('problem' in parsed) {
        throw invalidAddressError('address', owner, parsed.problem, context.label)
      }
      const depth = options?.minConfirmations ?? 1
      if (depth <= 1) return balanceOf(context, parsed.parsed.address, { fresh: options?.fresh === true })
      // Deeper than one block: the unspent outputs at least `depth` blocks deep (spent ones are gone
      // from the UTXO set, those spent in the mempool too).
      const [utxos, tip] = await Promise.all([
        context.esplora.addressUtxos(parsed.parsed.address),
        context.esplora.tipHeight(),
      ])
      return utxos
        .filter((utxo) => utxo.status.confirmed && tip - (utxo.status.block_height ?? tip) + 1 >= depth)
        .reduce((sum, utxo) => sum + BigInt(utxo.value), 0n)
    },
  }
}
