/**
 * Bitcoin filling for the reference solver. Every transaction pays one recipient, carries the
 * order (or refund) id in an OP_RETURN output, and sends change back to the spender:
 * - fills from the solver's P2WPKH address (`solverKey`), the fee on top of the amount;
 * - refunds out of the vault (`allocatorKey` is the vault's key; the vault must be P2WPKH), the fee
 *   on top of the amount;
 * - refunds out of a request's deposit address (its key derived from `depositAddressSeed`), the
 *   fee taken out of the amount: the recipient gets the rest, reported as `amount`;
 * - another intent API's deposit (rebalancing moves): its payment and tag, from the solver's coins.
 *
 * Coins: confirmed and mempool coins of the spender, except those held for transactions signed
 * earlier: in the solver's store, shared by every worker (`SigningOptions.coins`), or outside the
 * solver in this process (`OutpointReservations`); so two transactions never spend the same coin.
 * Bitcoin has no account nonces: `nextNonce` is 0 and ignored. A stuck transaction is replaced by
 * fee (RBF, `replace`) up to `maxReplacementFeeRate`.
 */
import {
  type FillingCapability,
  type FillRequest,
  invalidAddressError,
  isPontisError,
  PontisError,
  type RefundRequest,
  type RepaymentRequest,
  type ReplacementTransaction,
  repaymentLegs,
  type SignedTransaction,
  type SigningOptions,
  type SolverCredentials,
  stepItemRefusal,
  type TransactionOutcome,
} from '@pontis/core/plugin'
import { address, Psbt, Transaction } from 'bitcoinjs-lib'
import type { ECPairInterface } from 'ecpair'
import { BITCOIN_NATIVE_CURRENCY_ID } from './config.js'
import { type BitcoinChainContext, coinsOf, feeRate, vaultOf } from './context.js'
import { EsploraBroadcastError } from './esplora.js'
import { type ParsedAddress, parseAddress, requireTxid } from './identity.js'
import { depositAddressKeyPair, keyPairOf, p2wpkhAddress } from './keys.js'
import { lookUpTransaction } from './reading.js'
import {
  type Coin,
  estimateVsize,
  isDataScript,
  P2WPKH_SCRIPT_LENGTH,
  selectCoins,
  TAG_SCRIPT_LENGTH,
  tagOf,
  tagScript,
} from './transactions.js'

/** A P2WPKH spender: its key, address and output script. */
interface Spender {
  readonly key: ECPairInterface
  readonly address: string
  readonly script: Uint8Array
}

function spenderOf(context: BitcoinChainContext, key: ECPairInterface): Spender {
  const address = p2wpkhAddress(key.publicKey, context.params)
  const parsed = parseAddress(address, context.network) as { parsed: ParsedAddress }
  return { key, address, script: parsed.parsed.script }
}

/** A payment to sign: who receives what, the tag, and who pays the fee. */
interface Payment {
  readonly recipient: ParsedAddress
  readonly amount: bigint
  /** The order or refund id the OP_RETURN output carries (32-byte hex). */
  readonly tag: string
  /** The fee comes out of `amount` (deposit-address refunds) instead of on top of it. */
  readonly feeFromAmount: boolean
}

function requireId(value: string, name: string): string {
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw new PontisError('INVALID_REQUEST', `${name} '${value.slice(0, 80)}' is not 32-byte hex`)
  }
  return value
}

/** Chooses coins for the payment: what is spent, what the recipient gets, the change. */
function plan(
  context: BitcoinChainContext,
  spender: Spender,
  coins: readonly Coin[],
  payment: Payment,
  rate: bigint,
): { coins: readonly Coin[]; send: bigint; change: bigint } {
  const outputs = [payment.recipient.script.length, TAG_SCRIPT_LENGTH]
  const chain = context.label.displayName
  if (!payment.feeFromAmount) {
    const chosen = selectCoins(coins, 'p2wpkh', {
      outputScriptLengths: outputs,
      target: payment.amount,
      changeScriptLength: P2WPKH_SCRIPT_LENGTH,
      feeRate: rate,
      dustLimit: context.dustLimit,
    })
    if ('shortfall' in chosen) {
      const { available, required } = chosen.shortfall
      throw new PontisError(
        'INSUFFICIENT_FUNDS',
        `${spender.address} can spend ${available} sat on ${chain} (unreserved coins); paying ${payment.amount} sat needs ${required} sat with the fee.`,
        { chainId: context.label.id, balance: available.toString(), required: required.toString() },
      )
    }
    return { coins: chosen.selection.coins, send: payment.amount, change: chosen.selection.change }
  }
  // The fee is taken out of the amount: choose coins covering the amount alone, then price the result.
  const chosen = selectCoins(coins, 'p2wpkh', {
    outputScriptLengths: outputs,
    target: payment.amount,
    changeScriptLength: P2WPKH_SCRIPT_LENGTH,
    feeRate: 0n,
    dustLimit: context.dustLimit,
  })
  if ('shortfall' in chosen) {
    throw new PontisError(
      'INSUFFICIENT_FUNDS',
      `${spender.address} holds ${chosen.shortfall.available} sat on ${chain} (unreserved coins), less than the refund amount ${payment.amount}.`,
      {
        chainId: context.label.id,
        balance: chosen.shortfall.available.toString(),
        required: payment.amount.toString(),
      },
    )
  }
  const { coins: used, change } = chosen.selection
  const vsize = estimateVsize(
    used.map(() => 'p2wpkh'),
    change > 0n ? [...outputs, P2WPKH_SCRIPT_LENGTH] : outputs,
  )
  const fee = BigInt(vsize) * rate
  const send = payment.amount - fee
  if (send < context.dustLimit) {
    throw new PontisError(
      'INSUFFICIENT_FUNDS',
      `The refund of ${payment.amount} sat does not cover its own transfer fee of ${fee} sat on ${chain} and leave at least the dust limit.`,
      { chainId: context.label.id, amount: payment.amount.toString(), fee: fee.toString() },
    )
  }
  return { coins: used, send, change }
}

/** How many times coin selection starts again when a chosen coin was held meanwhile. */
const MAX_SELECTION_ROUNDS = 5

const coinId = (coin: { readonly txid: string; readonly vout: number }) => `${coin.txid}:${coin.vout}`

/**
 * {@link plan} over the coins no other signed transaction holds. Short only because of holds, the
 * payment waits: those transactions' change comes back to the same address once they are mined (a
 * repayment after a restart met the one before it still in flight), so the error is a retryable one
 * rather than INSUFFICIENT_FUNDS, which gives the job up.
 */
function planAroundHolds(
  context: BitcoinChainContext,
  spender: Spender,
  fetched: readonly Coin[],
  held: ReadonlySet<string>,
  payment: Payment,
  rate: bigint,
): ReturnType<typeof plan> {
  try {
    return plan(
      context,
      spender,
      fetched.filter((coin) => !held.has(coinId(coin))),
      payment,
      rate,
    )
  } catch (error) {
    if (held.size === 0 || !isPontisError(error) || error.code !== 'INSUFFICIENT_FUNDS') throw error
    throw new Error(
      `${error.message} ${held.size} more coin(s) are held by signed transactions not yet on chain; signing again once their change is back.`,
    )
  }
}

/**
 * Signs a payment from `spender`: recipient, tag, change. Holds the coins it spends, in the shared
 * holds the solver passes (`options.coins`) or else this process's own.
 */
async function signPayment(
  context: BitcoinChainContext,
  spender: Spender,
  payment: Payment,
  options: SigningOptions = {},
): Promise<SignedTransaction> {
  const holds = options.coins ?? context.reservations.asCoinReservations()
  const [rate, fetched] = await Promise.all([feeRate(context), coinsOf(context, spender.address)])
  let chosen: ReturnType<typeof plan> | undefined
  for (let round = 0; round < MAX_SELECTION_ROUNDS && !chosen; round++) {
    const held = await holds.held(fetched.map(coinId))
    const candidate = planAroundHolds(context, spender, fetched, held, payment, rate)
    // Another worker may have held one of them since: choose again without it.
    if (await holds.hold(candidate.coins.map(coinId), context.reservationMs)) chosen = candidate
  }
  if (!chosen) {
    // Not the caller's fault: the solver retries the job later.
    throw new Error(
      `${spender.address}'s coins on ${context.label.displayName} were taken by other signings ${MAX_SELECTION_ROUNDS} times in a row`,
    )
  }
  const psbt = new Psbt({ network: context.params })
  for (const coin of chosen.coins) {
    psbt.addInput({
      hash: coin.txid,
      index: coin.vout,
      witnessUtxo: { script: spender.script, value: coin.value },
    })
  }
  psbt.addOutput({ script: payment.recipient.script, value: chosen.send })
  psbt.addOutput({ script: tagScript(payment.tag), value: 0n })
  if (chosen.change > 0n) psbt.addOutput({ script: spender.script, value: chosen.change })
  psbt.signAllInputs(spender.key)
  psbt.finalizeAllInputs()
  const transaction = psbt.extractTransaction()
  return { transactionId: transaction.getId(), raw: transaction.toHex(), amount: chosen.send }
}

/**
 * A replacement of `raw` (RBF): the same coins and outputs, the change smaller by the extra fee, at
 * the market rate or 25 % above the old rate (whichever is more, and at least what BIP125 asks:
 * a higher rate and the old fee plus the new one's own relay fee). Undefined above
 * `maxReplacementFeeRate`, when the change cannot pay the difference, or when the coins are not the
 * solver's or the vault's (a deposit address refund pays its fee out of the amount).
 */
async function replacePayment(
  context: BitcoinChainContext,
  raw: string,
  spenders: readonly Spender[],
): Promise<ReplacementTransaction | undefined> {
  const old = Transaction.fromHex(raw.trim())
  const prevouts = await Promise.all(
    old.ins.map(async (input) => {
      const txid = Buffer.from(input.hash).reverse().toString('hex')
      const previous = await context.esplora.transaction(txid)
      const output = previous?.vout[input.index]
      if (!output) return undefined
      return {
        txid,
        vout: input.index,
        value: BigInt(output.value),
        script: output.scriptpubkey.toLowerCase(),
      }
    }),
  )
  if (prevouts.some((prevout) => prevout === undefined)) return undefined
  const coins = prevouts as { txid: string; vout: number; value: bigint; script: string }[]
  const scriptHex = coins[0]?.script
  const spender = spenders.find((candidate) => Buffer.from(candidate.script).toString('hex') === scriptHex)
  if (!spender || coins.some((coin) => coin.script !== scriptHex)) return undefined
  const inputSum = coins.reduce((sum, coin) => sum + coin.value, 0n)
  const outputSum = old.outs.reduce((sum, out) => sum + out.value, 0n)
  const oldFee = inputSum - outputSum
  const changeIndex = old.outs.findIndex((out) => Buffer.from(out.script).toString('hex') === scriptHex)
  if (changeIndex < 0) return undefined
  const vsize = BigInt(old.virtualSize())
  const oldRate = (oldFee + vsize - 1n) / vsize
  const market = await feeRate(context)
  let rate = (oldRate * 5n + 3n) / 4n
  if (rate < market) rate = market
  if (rate <= oldRate) rate = oldRate + 1n
  // BIP125 rule 4: the old fee plus the replacement's own relay fee (1 sat/vB), at least.
  let fee = rate * vsize
  if (fee < oldFee + vsize) fee = oldFee + vsize
  if (fee > BigInt(context.maxReplacementFeeRate) * vsize) return undefined
  const change = old.outs[changeIndex]!.value - (fee - oldFee)
  if (change < context.dustLimit) return undefined
  const psbt = new Psbt({ network: context.params })
  for (const coin of coins) {
    psbt.addInput({
      hash: coin.txid,
      index: coin.vout,
      witnessUtxo: { script: spender.script, value: coin.value },
    })
  }
  old.outs.forEach((out, index) => {
    psbt.addOutput({ script: out.script, value: index === changeIndex ? change : out.value })
  })
  psbt.signAllInputs(spender.key)
  psbt.finalizeAllInputs()
  const transaction = psbt.extractTransaction()
  return { transactionId: transaction.getId(), raw: transaction.toHex() }
}

function requireNative(context: BitcoinChainContext, currencyId: string): void {
  if (currencyId !== BITCOIN_NATIVE_CURRENCY_ID) {
    throw new PontisError(
      'UNSUPPORTED_CURRENCY',
      `${context.label.displayName} has one currency, the native one (${BITCOIN_NATIVE_CURRENCY_ID}).`,
      { chainId: context.label.id, currency: currencyId },
    )
  }
}

function recipientOf(context: BitcoinChainContext, recipient: string, amount: bigint): ParsedAddress {
  const parsed = parseAddress(recipient, context.network)
  if ('problem' in parsed) throw invalidAddressError('recipient', recipient, parsed.problem, context.label)
  if (amount < context.dustLimit) {
    throw new PontisError(
      'AMOUNT_TOO_LOW',
      `A payment of ${amount} sat is below the dust limit of ${context.dustLimit} sat on ${context.label.displayName}.`,
      { amount: amount.toString(), dustLimit: context.dustLimit.toString() },
    )
  }
  return parsed.parsed
}

// What nodes answer for a transaction they already have (bitcoind: -27 in chain; mempool variants).
const ALREADY_KNOWN = /already in block chain|txn-already-known|txn-already-in-mempool|"code":\s*-27/i

export function createBitcoinFilling(context: BitcoinChainContext): FillingCapability {
  /** The vault's spender (the allocator key), checked to be the vault payouts come out of. */
  const vaultSpender = (credentials: SolverCredentials, what: string) => {
    if (!credentials.allocatorKey) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `No vault key (allocatorKey) is configured to ${what} on ${context.label.displayName}.`,
      )
    }
    const vault = vaultOf(context)
    const spender = spenderOf(context, keyPairOf(credentials.allocatorKey, 'vault', context.params))
    if (spender.address !== vault.address) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `The configured vault key's P2WPKH address ${spender.address} is not the vault ${vault.address} on ${context.label.displayName}.`,
      )
    }
    return spender
  }

  const solverOf = (credentials: SolverCredentials) =>
    spenderOf(context, keyPairOf(credentials.solverKey, 'solver', context.params))
  return {
    solverAddress: (credentials) => solverOf(credentials).address,
    async nextNonce(): Promise<bigint> {
      return 0n
    },

    async signFill(
      request: FillRequest,
      credentials: SolverCredentials,
      options?: SigningOptions,
    ): Promise<SignedTransaction> {
      if (request.calls.length > 0) {
        throw new PontisError(
          'EXTRA_TXS_NOT_SUPPORTED',
          `${context.label.displayName} fills cannot run calls.`,
        )
      }
      if (request.topupNativeAmount > 0n) {
        throw new PontisError('UNSUPPORTED_ROUTE', `${context.label.displayName} fills carry no gas top-up.`)
      }
      requireNative(context, request.currencyId)
      const recipient = recipientOf(context, request.recipient, request.amount)
      return signPayment(
        context,
        solverOf(credentials),
        {
          recipient,
          amount: request.amount,
          tag: requireId(request.orderId, 'orderId'),
          feeFromAmount: false,
        },
        options,
      )
    },

    async signRefund(
      request: RefundRequest,
      credentials: SolverCredentials,
      options?: SigningOptions,
    ): Promise<SignedTransaction> {
      requireNative(context, request.currencyId)
      const recipient = recipientOf(context, request.recipient, request.amount)
      const tag = requireId(request.refundId, 'refundId')
      if (request.source.kind === 'depositAddress') {
        const seed = context.depositAddressSeed
        if (!seed) {
          throw new PontisError(
            'UNSUPPORTED_ROUTE',
            `${context.label.displayName} has no deposit addresses (plugin.depositAddressSeed).`,
          )
        }
        const key = depositAddressKeyPair(
          seed,
          requireId(request.source.requestId, 'source.requestId'),
          context.params,
        )
        return signPayment(
          context,
          spenderOf(context, key),
          { recipient, amount: request.amount, tag, feeFromAmount: true },
          options,
        )
      }
      const spender = vaultSpender(credentials, 'refund')
      return signPayment(
        context,
        spender,
        { recipient, amount: request.amount, tag, feeFromAmount: false },
        options,
      )
    },

    /**
     * One payment out of the vault to the solver, tagged with the repayment id (native only: one leg).
     * Its fee comes out of the leg, as a deposit-address sweep's does: the vault holds exactly the
     * deposits it is owed back, so a fee on top would be taken from another request's deposit and
     * leave the last repayment unable to pay.
     */
    async signRepayment(
      request: RepaymentRequest,
      credentials: SolverCredentials,
      options?: SigningOptions,
    ): Promise<SignedTransaction> {
      const [leg] = repaymentLegs(request, 1, context.label)
      requireNative(context, leg.currencyId)
      const recipient = recipientOf(context, request.recipient, leg.amount)
      const tag = requireId(request.repaymentId, 'repaymentId')
      const spender = vaultSpender(credentials, 'repay the solver')
      return signPayment(
        context,
        spender,
        { recipient, amount: leg.amount, tag, feeFromAmount: true },
        options,
      )
    },
    maxRepaymentLegs: 1,

    /**
     * Another intent API's `bitcoin-psbt` item (rebalancing). Its coins are chosen for the user it
     * was built for, so only what it pays is taken: one payment to an address other than the
     * solver's, at most the move, tagged with one 32-byte id (other outputs only change back to
     * the solver). The same payment and tag are then signed from the solver's own coins, held like
     * a fill's, the fee on top.
     */
    async signStep(item, spend, credentials, options): Promise<SignedTransaction> {
      const solver = solverOf(credentials)
      const refuse = stepItemRefusal(item, 'bitcoin-psbt', context.label)
      if (spend.currencyId !== BITCOIN_NATIVE_CURRENCY_ID)
        refuse(`a move of ${spend.currencyId}: ${context.label.displayName} has only its native currency`)
      let outputs: Psbt['txOutputs'] = []
      try {
        outputs = Psbt.fromHex(String(item.psbt), { network: context.params }).txOutputs
      } catch {
        refuse('its `psbt` is not a hex PSBT')
      }
      const solverScript = Buffer.from(solver.script).toString('hex')
      const tags: string[] = []
      const payments: Array<{ script: Uint8Array; value: bigint }> = []
      for (const output of outputs) {
        const scriptHex = Buffer.from(output.script).toString('hex')
        const tag = tagOf(scriptHex)
        if (tag) tags.push(tag)
        else if (isDataScript(scriptHex)) refuse('it carries data other than one 32-byte tag')
        else if (scriptHex !== solverScript)
          payments.push({ script: output.script, value: BigInt(output.value) })
      }
      const [payment] = payments
      if (payments.length !== 1 || !payment) return refuse(`it pays ${payments.length} addresses, not one`)
      const [tag] = tags
      if (tags.length !== 1 || !tag) return refuse(`it carries ${tags.length} tags, not one`)
      if (payment.value > spend.amount)
        refuse(`it sends ${payment.value}, more than the move's ${spend.amount}`)
      let recipient = ''
      try {
        recipient = address.fromOutputScript(payment.script, context.params)
      } catch {
        refuse('it pays a script that is no address')
      }
      return signPayment(
        context,
        solver,
        {
          recipient: recipientOf(context, recipient, payment.value),
          amount: payment.value,
          tag,
          feeFromAmount: false,
        },
        options,
      )
    },

    /** RBF: the solver's or the vault's transaction re-signed paying more (see replacePayment). */
    async replace(raw: string, credentials: SolverCredentials): Promise<ReplacementTransaction | undefined> {
      const spenders = [solverOf(credentials)]
      if (credentials.allocatorKey && context.vault) {
        try {
          spenders.push(vaultSpender(credentials, 'replace'))
        } catch {
          // Not the vault's key: only the solver's transactions are replaced.
        }
      }
      return replacePayment(context, raw, spenders)
    },

    async broadcast(raw: string): Promise<void> {
      const hex = raw.trim()
      try {
        await context.esplora.broadcast(hex)
      } catch (error) {
        if (!(error instanceof EsploraBroadcastError)) throw error
        if (ALREADY_KNOWN.test(error.message)) return
        // Refused for another reason (e.g. its inputs are spent by itself, mined meanwhile): known is fine.
        let txid: string | undefined
        try {
          txid = Transaction.fromHex(hex).getId()
        } catch {
          throw error
        }
        if ((await context.esplora.transaction(txid)) !== undefined) return
        throw error
      }
    },

    async outcome(transactionId: string): Promise<TransactionOutcome> {
      const lookup = await lookUpTransaction(context, requireTxid(transactionId, context.label))
      return {
        transactionId,
        state: lookup.state,
        // Payout amounts are not at hand here: the stricter rule applies.
        final:
          lookup.state === 'success' &&
          lookup.confirmations >= Math.max(context.confirmations, context.highValueConfirmations),
        confirmations: lookup.confirmations,
      }
    },
  }
}
