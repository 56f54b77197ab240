import {
  type BalanceOptions,
  blockHashQuorum as coreBlockHashQuorum,
  type DepositFact,
  type DepositScan,
  type FinalityPolicy,
  lastScannedBefore,
  type PayoutFact,
  PontisError,
  type ReadingCapability,
  type ReadOptions,
  type ScannedDeposit,
  type ScannedSwap,
  type SwapFact,
  type TransactionFacts,
  type WithdrawalFact,
  type WithdrawalQuery,
  type WithdrawalTransfer,
} from '@pontis/core/plugin'
import { LRUCache } from 'lru-cache'
import {
  type Address,
  type BlockTag,
  decodeAbiParameters,
  decodeEventLog,
  decodeFunctionData,
  getAddress,
  type Hex,
  hashStruct,
  isAddress,
  isAddressEqual,
  type Log,
  parseAbiItem,
  size,
  slice,
  type Transaction,
  type TransactionReceipt,
  toEventSelector,
  toHex,
} from 'viem'
import { CALL_REQUEST_TYPES, depositoryAbi, erc20Abi, multicallerAbi } from './abi.js'
import { type EvmChainContext, isNativeCurrency, readAllowance } from './quoting.js'
import { rpc } from './rpc.js'
import { confirmationsOf, findReceipt, findTransaction, lookUpReceipt } from './transactions.js'
import { type FillSwap, routerAbi } from './uniswap.js'

const TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * Transactions whose facts are kept once final, per chain: a final block's receipt does not change
 * (that is what the finality policy promises, and why an attestation of it is signed), so a
 * transaction asked about again (by callers retrying, polling or asking several oracles that share
 * nothing but this one) is not read over RPC again.
 */
const FINAL_FACTS_KEPT = 4096

/** The order id of a payout whose order is not known on chain (plain transfers out of a deposit address). */
export const UNKNOWN_ORDER_ID: Hex = `0x${'00'.repeat(32)}`

const TRANSFER_EVENT = erc20Abi.find((item) => item.type === 'event' && item.name === 'Transfer')!
const DEPOSIT_EVENTS = depositoryAbi.filter(
  (item) =>
    item.type === 'event' && (item.name === 'RelayNativeDeposit' || item.name === 'RelayErc20Deposit'),
)
const TRANSFER_SELECTOR = '0xa9059cbb'
const FILLED_TOPIC = toEventSelector('Filled(bytes32,address)')
const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)')
const WITHDRAWAL_TOPIC = toEventSelector('Withdrawal(address,uint256)')
/** A Uniswap v3 pool's swap; `sender` is the caller (the router for the swaps it runs). */
const POOL_SWAP_EVENT = parseAbiItem(
  'event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)',
)

/** A deposit fact from one depository log, or undefined for the depository's other events. */
function depositOf(
  context: EvmChainContext,
  depository: Address,
  log: Pick<Log, 'data' | 'topics' | 'logIndex'>,
) {
  try {
    const event = decodeEventLog({ abi: depositoryAbi, data: log.data, topics: log.topics })
    if (event.eventName === 'RelayNativeDeposit') {
      return {
        index: log.logIndex ?? 0,
        depository,
        depositId: event.args.id,
        depositor: event.args.from,
        currencyId: context.nativeCurrencyId,
        amount: event.args.amount,
      }
    }
    if (event.eventName === 'RelayErc20Deposit') {
      return {
        index: log.logIndex ?? 0,
        depository,
        depositId: event.args.id,
        depositor: event.args.from,
        currencyId: event.args.token,
        amount: event.args.amount,
      }
    }
  } catch {
    // Not an event this ABI knows.
  }
  return undefined
}

/** The recipient and amount of `transfer(to, amount)` calldata (trailing bytes allowed), if it is one. */
function erc20Transfer(data: Hex): { recipient: Address; amount: bigint } | undefined {
  if (size(data) < 68 || slice(data, 0, 4) !== TRANSFER_SELECTOR) return undefined
  try {
    const decoded = decodeFunctionData({ abi: erc20Abi, data })
    if (decoded.functionName !== 'transfer') return undefined
    const [recipient, amount] = decoded.args
    return { recipient: getAddress(recipient), amount }
  } catch {
    return undefined
  }
}

/**
 * The payments of a successful fill transaction. Recognised shapes, all tagged with the order id in
 * the last 32 bytes of the calldata:
 * - a multicaller `fill` (the configured multicaller, `orderId` argument equal to the tail, `Filled`
 *   emitted): one fact per payment, `index` = position in the payments list;
 * - a native transfer whose calldata is just the order id: one fact, index 0;
 * - an ERC-20 `transfer(recipient, amount)` followed by the order id, with the token's matching
 *   `Transfer` event: one fact, index = that log's index.
 */
function fillFacts(
  context: EvmChainContext,
  transaction: Transaction,
  receipt: TransactionReceipt,
  fillSwap?: FillSwap,
): PayoutFact[] {
  const to = transaction.to
  const input = transaction.input
  if (!to || size(input) < 32) return []
  const orderId = slice(input, size(input) - 32).toLowerCase() as Hex
  if (context.multicaller && isAddressEqual(to, context.multicaller)) {
    let decoded: ReturnType<typeof decodeFunctionData<typeof multicallerAbi>>
    try {
      decoded = decodeFunctionData({ abi: multicallerAbi, data: input })
    } catch {
      return []
    }
    if (decoded.functionName !== 'fill') return []
    const [argument, payments, calls] = decoded.args
    if (argument.toLowerCase() !== orderId) return []
    const filled = receipt.logs.some(
      (log) =>
        isAddressEqual(log.address, to) &&
        log.topics[0] === FILLED_TOPIC &&
        log.topics[1]?.toLowerCase() === orderId,
    )
    if (!filled) return []
    const paid: PayoutFact[] = payments.map((payment, index) => ({
      index,
      orderId,
      recipient: getAddress(payment.recipient),
      currencyId: isNativeCurrency(context, payment.token.toLowerCase())
        ? context.nativeCurrencyId
        : getAddress(payment.token),
      amount: payment.amount,
    }))
    // A destination swap pays the recipient what the swap's logs show (indexes are log indexes,
    // after the payments' positions so the two never collide).
    const swapped = fillSwap ? fillSwap.facts(calls, receipt.logs, orderId) : []
    return [...paid, ...swapped.map((fact) => ({ ...fact, index: payments.length + fact.index }))]
  }
  if (size(input) === 32) {
    return transaction.value > 0n
      ? [
          {
            index: 0,
            orderId,
            recipient: getAddress(to),
            currencyId: context.nativeCurrencyId,
            amount: transaction.value,
          },
        ]
      : []
  }
  const transfer = taggedTokenTransfer(transaction, receipt)
  return transfer
    ? [
        {
          index: transfer.index,
          orderId,
          currencyId: transfer.token,
          recipient: transfer.recipient,
          amount: transfer.amount,
        },
      ]
    : []
}

/**
 * An ERC-20 `transfer(recipient, amount)` sent straight to the token with a 32-byte tag appended
 * (fills tag it with the order id, direct deposits with the request id), confirmed by the token's
 * own `Transfer(sender, recipient, amount)` in the receipt: the tag, and `index` that log's index.
 */
function taggedTokenTransfer(
  transaction: Transaction,
  receipt: { readonly logs: readonly Pick<Log, 'address' | 'data' | 'topics' | 'logIndex'>[] },
): { index: number; token: Address; recipient: Address; amount: bigint; tag: Hex } | undefined {
  const token = transaction.to
  const input = transaction.input
  if (!token || size(input) !== 100) return undefined
  const transfer = erc20Transfer(input)
  if (!transfer) return undefined
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, token)) continue
    try {
      const event = decodeEventLog({
        abi: erc20Abi,
        eventName: 'Transfer',
        data: log.data,
        topics: log.topics,
      })
      if (
        log.logIndex !== null &&
        isAddressEqual(event.args.from, transaction.from) &&
        isAddressEqual(event.args.to, transfer.recipient) &&
        event.args.value === transfer.amount
      ) {
        return {
          index: log.logIndex,
          token: getAddress(token),
          ...transfer,
          tag: slice(input, 68).toLowerCase() as Hex,
        }
      }
    } catch {
      // Another event of the token.
    }
  }
  return undefined
}

/**
 * The direct form of an ERC-20 deposit (`explicitDeposit: false`): `transfer(depository, amount)`
 * with the request id appended, sent by the depositor straight to the token. The depository emits
 * nothing for it, so the transaction itself says whose deposit it is.
 */
function directTokenDeposit(
  context: EvmChainContext,
  depository: Address,
  transaction: Transaction,
  receipt: Parameters<typeof taggedTokenTransfer>[1],
): DepositFact | undefined {
  const transfer = taggedTokenTransfer(transaction, receipt)
  if (!transfer || !isAddressEqual(transfer.recipient, depository)) return undefined
  if (isNativeCurrency(context, transfer.token)) return undefined
  return {
    index: transfer.index,
    depository,
    depositId: transfer.tag,
    depositor: getAddress(transaction.from),
    currencyId: transfer.token,
    amount: transfer.amount,
  }
}

/**
 * An origin swap's deposit: a transaction to the chain's swap router with the request id appended,
 * whose output the router pays to the depository (one token `Transfer` to it in the receipt). The
 * depository emits nothing for it, so the transaction says whose deposit it is, as for the direct form.
 */
function swapDeposit(
  context: EvmChainContext,
  depository: Address,
  transaction: Transaction,
  receipt: Parameters<typeof taggedTokenTransfer>[1],
): DepositFact | undefined {
  const router = context.swapRouter
  const input = transaction.input
  if (!router || !transaction.to || !isAddressEqual(transaction.to, router) || size(input) < 36)
    return undefined
  const native = nativeSwapDeposit(context, depository, transaction, receipt)
  if (native) return native
  const incoming = receipt.logs.filter(
    (log) => log.topics[0] === TRANSFER_TOPIC && log.topics[2]?.toLowerCase() === addressTopic(depository),
  )
  const [log] = incoming
  if (incoming.length !== 1 || !log || log.logIndex === null) return undefined
  const event = decodeEventLog({ abi: erc20Abi, eventName: 'Transfer', data: log.data, topics: log.topics })
  return {
    index: log.logIndex,
    depository,
    depositId: slice(input, size(input) - 32).toLowerCase() as Hex,
    depositor: getAddress(transaction.from),
    currencyId: getAddress(log.address),
    amount: event.args.value,
  }
}

/** What a router `multicall` pays out: the swap's recipient and output token, and an `unwrapWETH9` target. */
function routerPayout(
  input: Hex,
): { swapRecipient: Address; token: Address; unwrapTo: Address | undefined } | undefined {
  let calls: readonly Hex[]
  try {
    const decoded = decodeFunctionData({ abi: routerAbi, data: input })
    if (decoded.functionName !== 'multicall') return undefined
    calls = decoded.args[0]
  } catch {
    return undefined
  }
  let swap: { swapRecipient: Address; token: Address } | undefined
  let unwrapTo: Address | undefined
  for (const call of calls) {
    let inner: ReturnType<typeof decodeFunctionData<typeof routerAbi>>
    try {
      inner = decodeFunctionData({ abi: routerAbi, data: call })
    } catch {
      return undefined
    }
    if (inner.functionName === 'exactInput' || inner.functionName === 'exactOutput') {
      if (swap) return undefined
      const { path, recipient } = inner.args[0]
      if (size(path) < 43) return undefined
      // Exact input paths run input to output; exact output paths run output to input.
      const token = inner.functionName === 'exactInput' ? slice(path, size(path) - 20) : slice(path, 0, 20)
      swap = { swapRecipient: getAddress(recipient), token: getAddress(token) }
    } else if (inner.functionName === 'unwrapWETH9') unwrapTo = getAddress(inner.args[1])
  }
  return swap ? { ...swap, unwrapTo } : undefined
}

/**
 * A same-chain swap the user sent (see the Uniswap source's `buildSwapSteps`): a router `multicall`
 * with the request id appended whose swap pays a recipient other than the depository, either a token
 * straight from the pools or the native currency through the router's `unwrapWETH9`. `amount` is what
 * the receipt shows reaching the recipient: the token's `Transfer`s to it, or the wrapped native
 * token's `Withdrawal`s by the router (which sends all it unwrapped on); 0 for a reverted transaction.
 */
function selfSwapOf(
  context: EvmChainContext,
  transaction: Transaction,
  receipt: { readonly logs: readonly Pick<Log, 'address' | 'data' | 'topics'>[] },
): SwapFact | undefined {
  const router = context.swapRouter
  const input = transaction.input
  if (!router || !transaction.to || !isAddressEqual(transaction.to, router) || size(input) < 36)
    return undefined
  const payout = routerPayout(input)
  if (!payout) return undefined
  const weth = context.wrappedNative
  const native =
    payout.unwrapTo !== undefined &&
    weth !== undefined &&
    isAddressEqual(payout.swapRecipient, router) &&
    isAddressEqual(payout.token, weth)
  const recipient = native ? (payout.unwrapTo as Address) : payout.swapRecipient
  if (context.depository && isAddressEqual(recipient, context.depository)) return undefined
  const sum = (matches: (log: Pick<Log, 'address' | 'topics'>) => boolean) =>
    receipt.logs
      .filter(matches)
      .reduce((total, log) => total + (size(log.data) === 32 ? BigInt(log.data) : 0n), 0n)
  const amount = native
    ? sum(
        (log) =>
          isAddressEqual(log.address, weth as Address) &&
          log.topics[0] === WITHDRAWAL_TOPIC &&
          log.topics[1]?.toLowerCase() === addressTopic(router),
      )
    : sum(
        (log) =>
          isAddressEqual(log.address, payout.token) &&
          log.topics[0] === TRANSFER_TOPIC &&
          log.topics[2]?.toLowerCase() === addressTopic(recipient),
      )
  return {
    swapId: slice(input, size(input) - 32).toLowerCase() as Hex,
    sender: getAddress(transaction.from),
    recipient,
    currencyId: native ? context.nativeCurrencyId : payout.token,
    amount,
  }
}

/**
 * An origin swap settled in the native currency: the router call (tagged) swaps into WETH for the
 * router and `unwrapWETH9` sends it to the depository, which takes plain transfers without an event.
 * The amount is the router's WETH `Withdrawal` (the router sends all it unwrapped on).
 */
function nativeSwapDeposit(
  context: EvmChainContext,
  depository: Address,
  transaction: Transaction,
  receipt: Parameters<typeof taggedTokenTransfer>[1],
): DepositFact | undefined {
  const router = context.swapRouter
  const weth = context.wrappedNative
  if (!router || !weth) return undefined
  const payout = routerPayout(transaction.input)
  if (
    !payout?.unwrapTo ||
    !isAddressEqual(payout.unwrapTo, depository) ||
    !isAddressEqual(payout.swapRecipient, router) ||
    !isAddressEqual(payout.token, weth)
  )
    return undefined
  const withdrawals = receipt.logs.filter(
    (log) =>
      isAddressEqual(log.address, weth) &&
      log.topics[0] === WITHDRAWAL_TOPIC &&
      log.topics[1]?.toLowerCase() === addressTopic(router),
  )
  const [log] = withdrawals
  if (withdrawals.length !== 1 || !log || log.logIndex === null || size(log.data) !== 32) return undefined
  return {
    index: log.logIndex,
    depository,
    depositId: slice(transaction.input, size(transaction.input) - 32).toLowerCase() as Hex,
    depositor: getAddress(transaction.from),
    currencyId: context.nativeCurrencyId,
    amount: BigInt(log.data),
  }
}

/** True when the receipt has the swap router's WETH `Withdrawal` (a native-settled swap). */
function routerUnwrapped(context: EvmChainContext, receipt: TransactionReceipt): boolean {
  const { swapRouter: router, wrappedNative: weth } = context
  if (!router || !weth || !receipt.to || !isAddressEqual(receipt.to, router)) return false
  return receipt.logs.some(
    (log) =>
      isAddressEqual(log.address, weth) &&
      log.topics[0] === WITHDRAWAL_TOPIC &&
      log.topics[1]?.toLowerCase() === addressTopic(router),
  )
}

const addressTopic = (address: Address): string => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`

/**
 * True when the receipt has a token `Transfer` to `recipient` emitted by the transaction's target,
 * or any token's when the target is the swap router (an origin swap's deposit).
 */
function hasTransferTo(context: EvmChainContext, receipt: TransactionReceipt, recipient: Address): boolean {
  const target = receipt.to
  if (!target) return false
  const viaRouter = context.swapRouter !== undefined && isAddressEqual(target, context.swapRouter)
  return receipt.logs.some(
    (log) =>
      (viaRouter || isAddressEqual(log.address, target)) &&
      log.topics[0] === TRANSFER_TOPIC &&
      log.topics[2]?.toLowerCase() === addressTopic(recipient),
  )
}

/**
 * The payouts of a successful refund transaction:
 * - each `RelayCallExecuted` of the depository that is a native transfer (empty calldata, value) or an
 *   ERC-20 `transfer`: `orderId` is the executed call request's id (its EIP-712 struct hash),
 *   `index` the log's index;
 * - a refund the solver paid itself, tagged with the order id like a fill (see `fillFacts`):
 *   `orderId` is the order's id;
 * - on a chain with deposit addresses, a plain native transfer (empty calldata): `orderId` is
 *   {@link UNKNOWN_ORDER_ID}, because nothing on chain ties the sending address to its request.
 */
function refundFacts(
  context: EvmChainContext,
  transaction: Transaction,
  receipt: TransactionReceipt,
): PayoutFact[] {
  const facts: PayoutFact[] = []
  const depository = context.depository
  for (const log of receipt.logs) {
    if (!depository || !isAddressEqual(log.address, depository)) continue
    let event: ReturnType<typeof decodeEventLog<typeof depositoryAbi>>
    try {
      event = decodeEventLog({ abi: depositoryAbi, data: log.data, topics: log.topics })
    } catch {
      continue
    }
    if (event.eventName !== 'RelayCallExecuted') continue
    const { id, call } = event.args
    if (call.data === '0x' && call.value > 0n) {
      facts.push({
        index: log.logIndex,
        orderId: id,
        recipient: getAddress(call.to),
        currencyId: context.nativeCurrencyId,
        amount: call.value,
      })
      continue
    }
    const transfer = call.value === 0n && size(call.data) === 68 ? erc20Transfer(call.data) : undefined
    if (transfer)
      facts.push({ index: log.logIndex, orderId: id, currencyId: getAddress(call.to), ...transfer })
  }
  if (facts.length === 0) facts.push(...fillFacts(context, transaction, receipt))
  if (
    facts.length === 0 &&
    context.depositAddressSeed &&
    transaction.to &&
    transaction.input === '0x' &&
    transaction.value > 0n
  ) {
    facts.push({
      index: 0,
      orderId: UNKNOWN_ORDER_ID,
      recipient: getAddress(transaction.to),
      currencyId: context.nativeCurrencyId,
      amount: transaction.value,
    })
  }
  return facts
}

/**
 * Whether a majority of the chain's nodes (the main client counts as one, each witness as one)
 * answer `blockHash` for `blockNumber`. Without witnesses, true. A witness answering another hash is
 * reported and does not count; one that fails to answer does not count either.
 */
export function blockHashQuorum(
  context: EvmChainContext,
  blockNumber: bigint,
  blockHash: Hex,
): Promise<boolean> {
  return coreBlockHashQuorum({
    witnesses: context.witnesses ?? [],
    height: blockNumber,
    blockHash,
    ask: (witness, height) => witness.client.getBlock({ blockNumber: height }).then((block) => block.hash),
    onDisagreement: context.onDisagreement,
  })
}

/** The reading capability of one EVM chain. */
export function createEvmReading(
  context: EvmChainContext,
  finality: FinalityPolicy,
  fillSwap?: FillSwap,
): ReadingCapability {
  /**
   * Facts of final transactions by kind and hash (see {@link FINAL_FACTS_KEPT}). Only what is final
   * for the slow rule goes in; the confirmations are counted again from the head on every read.
   */
  const finalFacts = new LRUCache<string, TransactionFacts<unknown>>({ max: FINAL_FACTS_KEPT })

  /**
   * Reads a transaction's state and, once it succeeded, the facts `extract` finds in its receipt (and
   * in the transaction itself, fetched only for extractors that need it). `kind` names the extractor:
   * facts kept once final are kept per kind.
   */
  async function factsOf<Fact>(
    kind: 'deposits' | 'fills' | 'refunds' | 'swaps',
    transactionId: string,
    fresh: boolean,
    extract: (
      receipt: TransactionReceipt,
      transaction: () => Promise<Transaction | undefined>,
    ) => Promise<Fact[]>,
    /** Also read the facts of a reverted transaction (what its calldata names). */
    whenReverted = false,
  ): Promise<TransactionFacts<Fact>> {
    if (!TRANSACTION_HASH.test(transactionId)) {
      throw new PontisError(
        'INVALID_REQUEST',
        `'${transactionId.slice(0, 100)}' is not a transaction hash of ${context.label.displayName}: expected 0x followed by 64 hexadecimal characters.`,
      )
    }
    const hash = transactionId as Hex
    const key = `${kind}:${hash.toLowerCase()}`
    const kept = fresh ? undefined : (finalFacts.get(key) as TransactionFacts<Fact> | undefined)
    if (kept !== undefined && kept.blockNumber !== undefined) {
      // Still final (a finalized block stays finalized, confirmations only grow); the count is fresh
      // from the head the reads share (cached for a second), never below the one it was kept with.
      const latest = await rpc(context.label, () => context.client.getBlockNumber({ cacheTime: 1000 }))
      const confirmations = Math.max(kept.confirmations ?? 1, Number(latest - kept.blockNumber + 1n))
      return { ...kept, confirmations }
    }
    const facts = await readFacts(hash, transactionId, extract, whenReverted)
    if (facts.final && facts.blockNumber !== undefined) finalFacts.set(key, facts)
    return facts
  }

  async function readFacts<Fact>(
    hash: Hex,
    transactionId: string,
    extract: (
      receipt: TransactionReceipt,
      transaction: () => Promise<Transaction | undefined>,
    ) => Promise<Fact[]>,
    whenReverted: boolean,
  ): Promise<TransactionFacts<Fact>> {
    const lookup = await lookUpReceipt(context, hash)
    if (!lookup.mined) {
      return { transactionId, state: lookup.state, final: false, facts: [] }
    }
    const { receipt } = lookup
    // Not enough nodes vouch for the block: as if not mined yet, so nothing acts on it or signs it.
    if (!(await blockHashQuorum(context, receipt.blockNumber, receipt.blockHash))) {
      return { transactionId, state: 'pending', final: false, facts: [] }
    }
    const [{ confirmations, final }, facts] = await Promise.all([
      confirmationsOf(context, receipt.blockNumber, finality),
      // A reverted transaction moved nothing.
      lookup.state === 'success' || whenReverted
        ? extract(receipt, () => findTransaction(context, hash))
        : Promise.resolve([]),
    ])
    return {
      transactionId,
      state: lookup.state,
      final,
      confirmations,
      blockNumber: receipt.blockNumber,
      facts,
    }
  }

  /** Facts that need the transaction's calldata; none when the node no longer has it (reorged away). */
  const withTransaction =
    <Fact>(extract: (transaction: Transaction, receipt: TransactionReceipt) => Fact[]) =>
    async (receipt: TransactionReceipt, transaction: () => Promise<Transaction | undefined>) => {
      const found = await transaction()
      return found ? extract(found, receipt) : []
    }

  const reading: ReadingCapability = {
    async readDeposits(transactionId: string, options?: ReadOptions): Promise<TransactionFacts<DepositFact>> {
      return factsOf('deposits', transactionId, options?.fresh === true, async (receipt, transaction) => {
        const depository = context.depository
        if (!depository) return []
        const facts: DepositFact[] = receipt.logs.flatMap((log) => {
          if (!isAddressEqual(log.address, depository)) return []
          const fact = depositOf(context, depository, log)
          return fact ? [fact] : []
        })
        // No depository event: a direct token deposit, if the calldata says so (fetched only then).
        if (
          facts.length > 0 ||
          !(hasTransferTo(context, receipt, depository) || routerUnwrapped(context, receipt))
        )
          return facts
        const found = await transaction()
        const direct = found
          ? (directTokenDeposit(context, depository, found, receipt) ??
            swapDeposit(context, depository, found, receipt))
          : undefined
        return direct ? [direct] : []
      })
    },

    readFills: (transactionId: string) =>
      factsOf(
        'fills',
        transactionId,
        false,
        withTransaction((transaction, receipt) => fillFacts(context, transaction, receipt, fillSwap)),
      ),

    readSwaps: (transactionId: string, options?: ReadOptions) =>
      factsOf(
        'swaps',
        transactionId,
        options?.fresh === true,
        withTransaction((transaction, receipt) => {
          const fact = selfSwapOf(context, transaction, receipt)
          return fact ? [fact] : []
        }),
        true,
      ),

    readRefunds: (transactionId: string) =>
      factsOf(
        'refunds',
        transactionId,
        false,
        withTransaction((transaction, receipt) => refundFacts(context, transaction, receipt)),
      ),

    readBalance(owner: string, currencyId: string, options?: BalanceOptions): Promise<bigint> {
      const read = () =>
        rpc(context.label, () =>
          isNativeCurrency(context, currencyId)
            ? context.client.getBalance({ address: owner as Address })
            : context.client.readContract({
                address: currencyId as Address,
                abi: erc20Abi,
                functionName: 'balanceOf',
                args: [owner as Address],
              }),
        )
      return options?.fresh ? read() : context.cache.read(`balance:${currencyId}:${owner}`, read)
    },

    readWithdrawal: (query: WithdrawalQuery) => readWithdrawal(context, finality, query),

    readAllowance: (owner, spender, currencyId) =>
      isNativeCurrency(context, currencyId)
        ? Promise.resolve((1n << 256n) - 1n)
        : readAllowance(context, owner, spender, currencyId),
  }

  const depository = context.depository
  if (!depository) return reading
  return {
    ...reading,
    startCursor: lastScannedBefore,
    /**
     * Deposits of blocks `cursor + 1 ..= min(head, cursor + maxLogBlockRange)`. The cursor is the
     * last block scanned, as a decimal string; without one the scan starts at the head (no history).
     * A cursor above the head (the chain went back) is pulled down to the head, so re-mined blocks
     * are scanned again: callers dedupe by (transactionId, index) and confirm with `readDeposits`.
     */
    async scanDeposits(cursor: string | undefined): Promise<DepositScan> {
      const head = await rpc(context.label, () => context.client.getBlockNumber({ cacheTime: 0 }))
      if (cursor === undefined) return { deposits: [], cursor: head.toString(), caughtUp: true }
      if (typeof cursor !== 'string' || !/^\d{1,30}$/.test(cursor)) {
        throw new PontisError(
          'INVALID_REQUEST',
          `scan cursor must be a block number, got '${String(cursor).slice(0, 40)}'`,
        )
      }
      const last = BigInt(cursor)
      if (last >= head) return { deposits: [], cursor: head.toString(), caughtUp: true }
      const fromBlock = last + 1n
      const toBlock =
        last + BigInt(context.maxLogBlockRange) < head ? last + BigInt(context.maxLogBlockRange) : head
      const router = context.swapRouter
      const [logs, transfers, poolSwaps] = await rpc(context.label, () =>
        Promise.all([
          context.client.getLogs({ address: depository, events: DEPOSIT_EVENTS, fromBlock, toBlock }),
          // Token transfers into the depository, of any token: the candidates for direct deposits.
          context.client.getLogs({ event: TRANSFER_EVENT, args: { to: depository }, fromBlock, toBlock }),
          // Pool swaps the router ran: the candidates for tagged same-chain swaps.
          router
            ? context.client.getLogs({ event: POOL_SWAP_EVENT, args: { sender: router }, fromBlock, toBlock })
            : Promise.resolve([]),
        ]),
      )
      const deposits: ScannedDeposit[] = []
      const seen = (blockNumber: bigint, transactionId: Hex, fact: DepositFact) =>
        deposits.push({
          ...fact,
          transactionId,
          blockNumber,
          confirmations: Number(head - blockNumber + 1n),
        })
      const withDepositoryEvent = new Set<string>()
      for (const log of logs) {
        if (log.removed || log.blockNumber === null || log.transactionHash === null) continue
        const fact = depositOf(context, depository, log)
        if (!fact) continue
        withDepositoryEvent.add(log.transactionHash)
        seen(log.blockNumber, log.transactionHash, fact)
      }
      // A transfer in a transaction without a depository event may be a direct deposit; its
      // calldata says (one transaction fetch per such transfer).
      const candidates = new Map<Hex, { blockNumber: bigint; logs: (typeof transfers)[number][] }>()
      for (const log of transfers) {
        if (log.removed || log.blockNumber === null || log.transactionHash === null) continue
        if (withDepositoryEvent.has(log.transactionHash)) continue
        const entry = candidates.get(log.transactionHash) ?? { blockNumber: log.blockNumber, logs: [] }
        entry.logs.push(log)
        candidates.set(log.transactionHash, entry)
      }
      for (const [hash, { blockNumber, logs: transferLogs }] of candidates) {
        const transaction = await findTransaction(context, hash)
        const fact = transaction
          ? (directTokenDeposit(context, depository, transaction, { logs: transferLogs }) ??
            swapDeposit(context, depository, transaction, { logs: transferLogs }))
          : undefined
        if (fact) seen(blockNumber, hash, fact)
      }
      const swaps: ScannedSwap[] = []
      const swapTransactions = new Map<Hex, bigint>()
      for (const log of poolSwaps) {
        if (log.removed || log.blockNumber === null || log.transactionHash === null) continue
        if (withDepositoryEvent.has(log.transactionHash) || candidates.has(log.transactionHash)) continue
        swapTransactions.set(log.transactionHash, log.blockNumber)
      }
      for (const [hash, blockNumber] of swapTransactions) {
        const [transaction, receipt] = await Promise.all([
          findTransaction(context, hash),
          findReceipt(context, hash),
        ])
        if (!transaction || !receipt) continue
        // A native-settled origin swap pays the depository; any other tagged router swap is a user's swap.
        const deposit = nativeSwapDeposit(context, depository, transaction, receipt)
        if (deposit) {
          seen(blockNumber, hash, deposit)
          continue
        }
        const fact = selfSwapOf(context, transaction, receipt)
        if (fact)
          swaps.push({
            ...fact,
            transactionId: hash,
            blockNumber,
            confirmations: Number(head - blockNumber + 1n),
          })
      }
      deposits.sort((a, b) =>
        a.blockNumber === b.blockNumber
          ? a.index - b.index
          : (a.blockNumber ?? 0n) < (b.blockNumber ?? 0n)
            ? -1
            : 1,
      )
      return { deposits, swaps, cursor: toBlock.toString(), caughtUp: toBlock === head }
    },
  }
}

/** ABI parameters of a depository `CallRequest`, the encoding `readWithdrawal` takes. */
export const CALL_REQUEST_PARAMETERS = [
  {
    type: 'tuple',
    components: [
      {
        name: 'calls',
        type: 'tuple[]',
        components: [
          { name: 'to', type: 'address' },
          { name: 'data', type: 'bytes' },
          { name: 'value', type: 'uint256' },
          { name: 'allowFailure', type: 'bool' },
        ],
      },
      { name: 'nonce', type: 'uint256' },
      { name: 'expiration', type: 'uint256' },
    ],
  },
] as const

type CallRequest = ReturnType<typeof decodeAbiParameters<typeof CALL_REQUEST_PARAMETERS>>[0]

function decodeCallRequest(context: EvmChainContext, withdrawal: Hex): CallRequest {
  try {
    return decodeAbiParameters(CALL_REQUEST_PARAMETERS, withdrawal)[0]
  } catch {
    throw new PontisError(
      'INVALID_REQUEST',
      `withdrawal is not an ABI-encoded depository CallRequest{(address to, bytes data, uint256 value, bool allowFailure)[] calls, uint256 nonce, uint256 expiration} of ${context.label.displayName}`,
    )
  }
}

/** The plain native and ERC-20 transfers of a call request, in order. */
function transfersOf(context: EvmChainContext, request: CallRequest): WithdrawalTransfer[] {
  const transfers: WithdrawalTransfer[] = []
  for (const call of request.calls) {
    if (call.data === '0x' && call.value > 0n) {
      transfers.push({
        recipient: getAddress(call.to),
        currencyId: context.nativeCurrencyId,
        amount: call.value,
      })
      continue
    }
    const transfer = call.value === 0n && size(call.data) === 68 ? erc20Transfer(call.data) : undefined
    if (transfer) transfers.push({ currencyId: getAddress(call.to), ...transfer })
  }
  return transfers
}

/**
 * The status of a call request at the newest block meeting `mode`: `executed` once the depository
 * marked it used, `expired` once that block is past its expiration (no later block can run it), else
 * `pending`. Reading at a final block means a reorg cannot take an `executed` back.
 */
async function readWithdrawal(
  context: EvmChainContext,
  finality: FinalityPolicy,
  query: WithdrawalQuery,
): Promise<WithdrawalFact> {
  const request = decodeCallRequest(context, query.withdrawal)
  if (!isAddress(query.depository, { strict: false })) {
    throw new PontisError(
      'INVALID_ADDRESS',
      `depository '${query.depository}' is not an address of ${context.label.displayName}`,
    )
  }
  const depository = getAddress(query.depository)
  const withdrawalId = hashStruct({ primaryType: 'CallRequest', types: CALL_REQUEST_TYPES, data: request })
  const blockNumber = await readableBlock(context, finality, query.mode)
  const [used, block] = await rpc(context.label, () =>
    Promise.all([
      context.client.readContract({
        address: depository,
        abi: depositoryAbi,
        functionName: 'callRequests',
        args: [withdrawalId],
        blockNumber,
      }),
      context.client.getBlock({ blockNumber }),
    ]),
  )
  const status = used ? 'executed' : request.expiration < block.timestamp ? 'expired' : 'pending'
  return {
    withdrawalId,
    depository,
    status,
    reference: toHex(request.nonce, { size: 32 }),
    transfers: transfersOf(context, request),
  }
}

/** The newest block whose state meets `mode`: enough confirmations and, when required, finalized. */
async function readableBlock(
  context: EvmChainContext,
  finality: FinalityPolicy,
  mode: 'fast' | 'slow',
): Promise<bigint> {
  const confirmations = mode === 'fast' ? finality.fastConfirmations : finality.slowConfirmations
  const finalizedTag: BlockTag | undefined =
    mode === 'slow' && finality.slowRequiresFinalized ? 'finalized' : undefined
  const [head, finalized] = await rpc(context.label, () =>
    Promise.all([
      context.client.getBlockNumber({ cacheTime: 0 }),
      finalizedTag
        ? context.client.getBlock({ blockTag: finalizedTag }).then((block) => block.number)
        : undefined,
    ]),
  )
  const byConfirmations = head - BigInt(confirmations - 1)
  const newest =
    finalized !== undefined && finalized !== null && finalized < byConfirmations ? finalized : byConfirmations
  return newest < 0n ? 0n : newest
}
