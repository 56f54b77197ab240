/**
 * Mempool acceptance of the Bitcoin devnet, in Bitcoin Core's order and with its reject reasons:
 * `sendrawtransaction`'s burn limit, consensus structure checks (CheckTransaction), standardness
 * (IsStandardTx), finality (BIP113 locktime, BIP68 sequence locks), input availability (a conflict
 * with the mempool before missing inputs), coinbase maturity, values, the minimum relay fee, the
 * unconfirmed-ancestor limit, the signatures (`verify.ts`) and finally `sendrawtransaction`'s maximum
 * fee rate. Not modelled: descendant limits, TRUC (v3)
 * rules, sigop limits and package relay.
 */
import type { Transaction } from 'bitcoinjs-lib'
import { BITCOIN_RPC_ERROR, BitcoinRejection } from './errors.js'
import { classifyOutput, isPushOnly, parseScript, witnessProgram } from './script.js'
import { type Prevout, verifyInput } from './verify.js'

/** 21 million BTC in satoshi: no output or sum of outputs may exceed it. */
export const MAX_MONEY = 21_000_000n * 100_000_000n
/** Blocks a coinbase output waits before it can be spent (as on every Bitcoin network). */
export const BITCOIN_COINBASE_MATURITY = 100
/** The minimum relay fee rate (sat/vB), bitcoind's default. */
export const BITCOIN_MIN_RELAY_FEE_RATE = 1
/** `sendrawtransaction`'s default `maxfeerate`: 0.10 BTC/kvB = 10,000 sat/vB. */
export const BITCOIN_MAX_FEE_RATE = 10_000
/** Data an OP_RETURN output may carry (bytes), bitcoind's classic `-datacarriersize`. */
export const BITCOIN_MAX_OP_RETURN_DATA = 80
const MAX_STANDARD_WEIGHT = 400_000
const MAX_BLOCK_WEIGHT = 4_000_000
const MIN_STANDARD_NON_WITNESS_SIZE = 65
const MAX_STANDARD_SCRIPTSIG_SIZE = 1650
const MAX_MEMPOOL_ANCESTORS = 25
const DUST_RELAY_FEE_RATE = 3n
const LOCKTIME_THRESHOLD = 500_000_000
const SEQUENCE_FINAL = 0xffffffff
const SEQUENCE_LOCKTIME_DISABLE_FLAG = 0x80000000
const SEQUENCE_LOCKTIME_TYPE_FLAG = 0x00400000
const SEQUENCE_LOCKTIME_MASK = 0x0000ffff

/** A transaction output the chain has seen (spent or not). */
export interface BitcoinOutput {
  readonly txid: string
  readonly vout: number
  readonly value: bigint
  readonly script: Uint8Array
  readonly scriptHex: string
  /** Created by a coinbase (block reward: matures after 100 blocks). */
  readonly coinbase: boolean
  /** A simulator funding output: spendable at once. */
  readonly funding: boolean
  /** False for outputs that can never be spent (OP_RETURN): they never enter the UTXO set. */
  readonly spendable: boolean
}

/** The input spending an output. */
export interface BitcoinSpend {
  readonly txid: string
  readonly vin: number
}

/** What validation needs to know about the chain. */
export interface ChainView {
  readonly tipHeight: number
  medianTimePast(height: number): number
  output(key: string): BitcoinOutput | undefined
  spender(key: string): BitcoinSpend | undefined
  /** Height of the block confirming `txid`; undefined when unconfirmed or unknown. */
  confirmationHeight(txid: string): number | undefined
  inMempool(txid: string): boolean
  /** The mempool transactions a mempool transaction spends from. */
  mempoolParents(txid: string): string[]
}

function rejected(reason: string): BitcoinRejection {
  return BitcoinRejection.rejected(reason)
}

/** bitcoind's FormatMoney: BTC with at least two decimals, trailing zeros trimmed. */
export function formatMoney(sats: bigint): string {
  const negative = sats < 0n
  const absolute = negative ? -sats : sats
  const fraction = (absolute % 100_000_000n)
    .toString()
    .padStart(8, '0')
    .replace(/0{1,6}$/, '')
  return `${negative ? '-' : ''}${absolute / 100_000_000n}.${fraction.padEnd(2, '0')}`
}

function outpoint(input: Transaction['ins'][number]): { txid: string; vout: number; key: string } {
  const txid = Buffer.from(input.hash).reverse().toString('hex')
  return { txid, vout: input.index, key: `${txid}:${input.index}` }
}

/** The size without witness data (what bitcoind calls the stripped size). */
function strippedSize(tx: Transaction): number {
  return tx.byteLength(false)
}

/** CheckTransaction: the consensus rules that need no chain state. */
function checkStructure(tx: Transaction): void {
  if (tx.ins.length === 0) throw rejected('bad-txns-vin-empty')
  if (tx.outs.length === 0) throw rejected('bad-txns-vout-empty')
  if (strippedSize(tx) * 4 > MAX_BLOCK_WEIGHT) throw rejected('bad-txns-oversize')
  let total = 0n
  for (const out of tx.outs) {
    if (out.value < 0n) throw rejected('bad-txns-vout-negative')
    if (out.value > MAX_MONEY) throw rejected('bad-txns-vout-toolarge')
    total += out.value
    if (total > MAX_MONEY) throw rejected('bad-txns-txouttotal-toolarge')
  }
  const seen = new Set<string>()
  for (const input of tx.ins) {
    const { key } = outpoint(input)
    if (seen.has(key)) throw rejected('bad-txns-inputs-duplicate')
    seen.add(key)
  }
  if (tx.isCoinbase()) throw rejected('coinbase')
  const nullHash = (hash: Uint8Array) => hash.every((byte) => byte === 0)
  if (tx.ins.some((input) => nullHash(input.hash) && input.index === 0xffffffff)) {
    throw rejected('bad-txns-prevout-null')
  }
}

/** The dust threshold of an output (bitcoind's GetDustThreshold at 3 sat/vB). */
function dustThreshold(outputScript: Uint8Array): bigint {
  const outputSize = 8 + (outputScript.length < 0xfd ? 1 : 3) + outputScript.length
  // Spending a witness output costs 32+4+1+(107/4)+4 vbytes, a legacy one 32+4+1+107+4.
  const spendSize = witnessProgram(outputScript) ? 67 : 148
  return BigInt(outputSize + spendSize) * DUST_RELAY_FEE_RATE
}

/** Whether an output script is one of the standard templates (bitcoind's Solver + IsStandard). */
function isStandardOutput(outputScript: Uint8Array): boolean {
  const type = classifyOutput(outputScript)
  if (type === 'op_return') {
    const chunks = parseScript(outputScript.subarray(1))
    return outputScript.length <= BITCOIN_MAX_OP_RETURN_DATA + 3 && chunks !== undefined && isPushOnly(chunks)
  }
  if (type === 'empty') return false
  if (type !== 'unknown') return true
  // Future witness versions (v1+ programs that are not taproot) are standard to pay.
  const program = witnessProgram(outputScript)
  return program !== undefined && program.version !== 0
}

/** IsStandardTx: version, size, scriptSigs, output templates, OP_RETURN count, dust. */
function checkStandard(tx: Transaction): void {
  if (tx.version < 1 || tx.version > 3) throw rejected('version')
  if (tx.weight() > MAX_STANDARD_WEIGHT) throw rejected('tx-size')
  if (strippedSize(tx) < MIN_STANDARD_NON_WITNESS_SIZE) throw rejected('tx-size-small')
  for (const input of tx.ins) {
    if (input.script.length > MAX_STANDARD_SCRIPTSIG_SIZE) throw rejected('scriptsig-size')
    const chunks = parseScript(input.script)
    if (!chunks || !isPushOnly(chunks)) throw rejected('scriptsig-not-pushonly')
  }
  let opReturns = 0
  for (const out of tx.outs) {
    if (!isStandardOutput(out.script)) throw rejected('scriptpubkey')
    if (classifyOutput(out.script) === 'op_return') opReturns += 1
    else if (out.value < dustThreshold(out.script)) throw rejected('dust')
  }
  if (opReturns > 1) throw rejected('multi-op-return')
}

/** IsFinalTx for the next block (BIP113: time locks compare with the median time past). */
function checkFinal(tx: Transaction, chain: ChainView): void {
  if (tx.locktime === 0) return
  const nextHeight = chain.tipHeight + 1
  const limit = tx.locktime < LOCKTIME_THRESHOLD ? nextHeight : chain.medianTimePast(chain.tipHeight)
  if (tx.locktime < limit) return
  if (tx.ins.every((input) => input.sequence === SEQUENCE_FINAL)) return
  throw rejected('non-final')
}

/** BIP68 relative lock times, for the next block. */
function checkSequenceLocks(tx: Transaction, chain: ChainView, coinHeights: readonly number[]): void {
  if (tx.version < 2) return
  const nextHeight = chain.tipHeight + 1
  const tipTime = chain.medianTimePast(chain.tipHeight)
  tx.ins.forEach((input, index) => {
    if (input.sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG) return
    const coinHeight = coinHeights[index]!
    const amount = input.sequence & SEQUENCE_LOCKTIME_MASK
    if (input.sequence & SEQUENCE_LOCKTIME_TYPE_FLAG) {
      const coinTime = chain.medianTimePast(Math.max(0, coinHeight - 1))
      if (coinTime + amount * 512 - 1 >= tipTime) throw rejected('non-BIP68-final')
    } else if (coinHeight + amount - 1 >= nextHeight) {
      throw rejected('non-BIP68-final')
    }
  })
}

function countAncestors(parents: readonly string[], chain: ChainView): number {
  const seen = new Set<string>()
  const pending = [...parents]
  while (pending.length > 0) {
    const txid = pending.pop()!
    if (seen.has(txid)) continue
    seen.add(txid)
    pending.push(...chain.mempoolParents(txid))
  }
  return seen.size
}

/**
 * Validates `tx` for the mempool on top of `chain`.
 *
 * @returns the fee (inputs minus outputs, satoshi).
 * @throws BitcoinRejection with bitcoind's error code and reject reason.
 */
export function validateTransaction(tx: Transaction, chain: ChainView): { fee: bigint } {
  if (tx.outs.some((out) => classifyOutput(out.script) === 'op_return' && out.value > 0n)) {
    throw new BitcoinRejection(
      BITCOIN_RPC_ERROR.transaction,
      'Unspendable output exceeds maximum configured by user (maxburnamount)',
    )
  }
  checkStructure(tx)
  checkStandard(tx)
  checkFinal(tx, chain)

  const inputs = tx.ins.map(outpoint)
  // A conflict with the mempool is reported before missing inputs, as bitcoind's PreChecks do.
  for (const { key } of inputs) {
    const spend = chain.spender(key)
    if (spend && chain.inMempool(spend.txid)) throw rejected('txn-mempool-conflict')
  }
  const spent: BitcoinOutput[] = inputs.map(({ key }) => {
    const output = chain.output(key)
    if (!output?.spendable || chain.spender(key)) {
      throw new BitcoinRejection(BITCOIN_RPC_ERROR.transaction, 'bad-txns-inputs-missingorspent')
    }
    return output
  })

  const nextHeight = chain.tipHeight + 1
  const coinHeights = inputs.map(({ txid }) => chain.confirmationHeight(txid) ?? nextHeight)
  checkSequenceLocks(tx, chain, coinHeights)
  spent.forEach((output, index) => {
    if (!output.coinbase || output.funding) return
    const depth = nextHeight - coinHeights[index]!
    if (depth < BITCOIN_COINBASE_MATURITY) {
      throw rejected(`bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth ${depth}`)
    }
  })

  const valueIn = spent.reduce((sum, output) => sum + output.value, 0n)
  const valueOut = tx.outs.reduce((sum, out) => sum + out.value, 0n)
  if (valueIn < valueOut) {
    throw rejected(
      `bad-txns-in-belowout, value in (${formatMoney(valueIn)}) < value out (${formatMoney(valueOut)})`,
    )
  }
  const fee = valueIn - valueOut

  const vsize = tx.virtualSize()
  const minimumFee = BigInt(vsize * BITCOIN_MIN_RELAY_FEE_RATE)
  if (fee < minimumFee) throw rejected(`min relay fee not met, ${fee} < ${minimumFee}`)

  const parents = [...new Set(inputs.map(({ txid }) => txid).filter((txid) => chain.inMempool(txid)))]
  if (countAncestors(parents, chain) + 1 > MAX_MEMPOOL_ANCESTORS) {
    throw rejected(`too-long-mempool-chain, too many unconfirmed ancestors [limit: ${MAX_MEMPOOL_ANCESTORS}]`)
  }

  const prevouts: Prevout[] = spent.map((output) => ({ value: output.value, script: output.script }))
  tx.ins.forEach((_, index) => {
    verifyInput(tx, index, prevouts)
  })

  if (fee > BigInt(vsize * BITCOIN_MAX_FEE_RATE)) {
    throw new BitcoinRejection(
      BITCOIN_RPC_ERROR.transaction,
      'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)',
    )
  }
  return { fee }
}
