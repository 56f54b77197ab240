/**
 * The Bitcoin devnet's chain: an in-memory regtest chain with a UTXO set, a mempool and blocks mined
 * on demand. Blocks are real (BIP34 height in the coinbase, BIP141 witness commitment, merkle root,
 * regtest proof of work over the 80-byte header), starting from the real regtest genesis block.
 * Transactions enter the mempool only through {@link BitcoinChain.submit}, which applies the checks
 * of `validation.ts` (inputs exist and are unspent, no double spend, values balance, minimum relay
 * fee, signatures verify…). Funding outputs are the simulator's one liberty: {@link BitcoinChain.fund}
 * mines a block whose coinbase pays them (no subsidy limit, no coinbase maturity).
 */
import { Block, opcodes, script, Transaction } from 'bitcoinjs-lib'
import { BITCOIN_MINER } from './accounts.js'
import { BITCOIN_RPC_ERROR, BitcoinRejection } from './errors.js'
import { addressScript, toHex } from './script.js'
import {
  BITCOIN_MIN_RELAY_FEE_RATE,
  type BitcoinOutput,
  type BitcoinSpend,
  MAX_MONEY,
  validateTransaction,
} from './validation.js'

export type { BitcoinOutput, BitcoinSpend } from './validation.js'

/** Regtest's proof-of-work limit (compact form), which every devnet block uses. */
export const BITCOIN_REGTEST_BITS = 0x207fffff
/** Regtest halves the block subsidy every 150 blocks. */
const HALVING_INTERVAL = 150
const INITIAL_SUBSIDY = 50n * 100_000_000n
const MAX_BLOCK_WEIGHT = 4_000_000
/** Version bits header version (BIP9 top bits), as bitcoind mines. */
const BLOCK_VERSION = 0x20000000
/** BIP141 witness commitment header. */
const WITNESS_COMMITMENT_HEADER = Uint8Array.of(0xaa, 0x21, 0xa9, 0xed)

/** The default `GET /fee-estimates` answer: confirmation target (blocks) → sat/vB. */
export const BITCOIN_DEFAULT_FEE_RATES: Readonly<Record<string, number>> = Object.freeze({
  '1': 10,
  '2': 8,
  '3': 6,
  '6': 4,
  '144': 1,
})

/** A block of the devnet chain. */
export interface BitcoinBlock {
  /** Block hash (display order hex). */
  readonly hash: string
  readonly height: number
  readonly version: number
  /** Header time (Unix seconds). */
  readonly timestamp: number
  /** Median time of this block and the ten before it (BIP113). */
  readonly mediantime: number
  readonly bits: number
  readonly nonce: number
  /** Merkle root (display order hex). */
  readonly merkleRoot: string
  /** The previous block's hash; null for the genesis block. */
  readonly previousHash: string | null
  readonly txids: readonly string[]
  /** Serialized size with witness data (bytes) and weight (BIP141 units). */
  readonly size: number
  readonly weight: number
  /** The serialized block (header and transactions). */
  readonly raw: Uint8Array
}

/** A transaction the chain knows: confirmed when `block` is set, in the mempool otherwise. */
export interface BitcoinTxRecord {
  readonly txid: string
  readonly tx: Transaction
  readonly hex: string
  /** Serialized size with witness (bytes), weight (units) and virtual size (vbytes). */
  readonly size: number
  readonly weight: number
  readonly vsize: number
  /** Inputs minus outputs (satoshi); 0 for a coinbase. */
  readonly fee: bigint
  readonly coinbase: boolean
  /** Arrival order (mempool entries are listed newest first by it). */
  readonly arrival: number
  /** A funding coinbase (its outputs before the reward are spendable at once). */
  readonly funding?: boolean
  /** The block confirming it, and its position there. */
  block?: BitcoinBlock
  indexInBlock?: number
}

/** Esplora's per-address statistics (satoshi sums). */
export interface BitcoinAddressStats {
  funded_txo_count: number
  funded_txo_sum: number
  spent_txo_count: number
  spent_txo_sum: number
  tx_count: number
}

/** An output to create: to an address or a raw script. */
export interface BitcoinPayment {
  readonly address?: string
  readonly script?: Uint8Array
  readonly value: bigint | number
}

/** Options of {@link BitcoinChain}. */
export interface BitcoinChainOptions {
  /** The fee-estimates answer (target blocks → sat/vB); {@link BITCOIN_DEFAULT_FEE_RATES} by default. */
  feeRates?: Readonly<Record<string, number>>
  /** Clock for block timestamps (milliseconds); Date.now by default. */
  now?: () => number
}

/** The transaction the regtest genesis block holds ("The Times 03/Jan/2009…", 50 BTC to Satoshi's key). */
const GENESIS_COINBASE_HEX =
  '01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d01044554686' +
  '52054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e642062' +
  '61696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a8' +
  '28e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000'
const GENESIS_TIME = 1296688602
const GENESIS_NONCE = 2

function satPerVb(fee: bigint, vsize: number): string {
  return `${(Number(fee) / vsize).toFixed(8)} sat/vB`
}

/** The outpoint key `txid:vout`. */
export function outpointKey(txid: string, vout: number): string {
  return `${txid}:${vout}`
}

/** The txid (display order) an input spends. */
export function inputTxid(hash: Uint8Array): string {
  return Buffer.from(hash).reverse().toString('hex')
}

function toSats(value: bigint | number): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new Error(`not a whole number of satoshi: ${value}`)
  }
  return BigInt(value)
}

function emptyStats(): BitcoinAddressStats {
  return { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 }
}

/**
 * An in-memory regtest chain. Synchronous and single-threaded: every method sees a consistent state.
 */
export class BitcoinChain {
  private readonly blocks: BitcoinBlock[] = []
  private readonly blocksByHash = new Map<string, BitcoinBlock>()
  private readonly txs = new Map<string, BitcoinTxRecord>()
  private readonly mempool = new Map<string, BitcoinTxRecord>()
  private readonly outputs = new Map<string, BitcoinOutput>()
  private readonly spends = new Map<string, BitcoinSpend>()
  /** Script hex → txids paying or spending it (the address index). */
  private readonly scriptIndex = new Map<string, Set<string>>()
  private readonly now: () => number
  private arrivals = 0
  /** Reorganisations so far: blocks mined after one carry the count in their coinbase (new hashes). */
  private reorgs = 0
  private rates: Readonly<Record<string, number>>

  constructor(options: BitcoinChainOptions = {}) {
    this.now = options.now ?? Date.now
    this.rates = Object.freeze({ ...(options.feeRates ?? BITCOIN_DEFAULT_FEE_RATES) })
    this.appendGenesis()
  }

  /** Height of the tip (0: only the genesis block). */
  get height(): number {
    return this.blocks.length - 1
  }

  /** The tip block. */
  get tip(): BitcoinBlock {
    return this.blocks[this.blocks.length - 1]!
  }

  /** The fee-estimates answer (target blocks → sat/vB). */
  get feeRates(): Readonly<Record<string, number>> {
    return this.rates
  }

  /** Replaces the fee-estimates answer. */
  setFeeRates(rates: Readonly<Record<string, number>>): void {
    for (const [target, rate] of Object.entries(rates)) {
      if (!/^[1-9][0-9]*$/.test(target) || !Number.isFinite(rate) || rate < 0) {
        throw new Error(`invalid fee rate ${target}: ${rate}`)
      }
    }
    this.rates = Object.freeze({ ...rates })
  }

  /** The block at `height` of the chain. */
  blockAt(height: number): BitcoinBlock | undefined {
    return Number.isInteger(height) && height >= 0 ? this.blocks[height] : undefined
  }

  /** The block with hash `hash` (display hex). */
  block(hash: string): BitcoinBlock | undefined {
    return this.blocksByHash.get(hash)
  }

  /** A confirmed or mempool transaction. */
  transaction(txid: string): BitcoinTxRecord | undefined {
    return this.txs.get(txid)
  }

  /** A transaction output the chain has seen. */
  output(txid: string, vout: number): BitcoinOutput | undefined {
    return this.outputs.get(outpointKey(txid, vout))
  }

  /** The input (confirmed or in the mempool) spending an output, if any. */
  spender(txid: string, vout: number): BitcoinSpend | undefined {
    return this.spends.get(outpointKey(txid, vout))
  }

  /** The mempool, oldest first. */
  mempoolTransactions(): BitcoinTxRecord[] {
    return [...this.mempool.values()]
  }

  /** Median time past of the block at `height` (BIP113: median of it and the ten blocks before). */
  medianTimePast(height: number = this.height): number {
    const block = this.blockAt(height)
    if (!block) throw new Error(`no block at height ${height}`)
    return block.mediantime
  }

  /**
   * Validates a raw transaction and adds it to the mempool; returns its txid. A transaction already
   * in the mempool is accepted again (same txid), as bitcoind does.
   *
   * @throws BitcoinRejection with the bitcoind error code and reject reason.
   */
  submit(hex: string): string {
    const text = hex.trim()
    let tx: Transaction
    try {
      if (!/^([0-9a-fA-F]{2})+$/.test(text)) throw new Error('not hex')
      tx = Transaction.fromHex(text)
    } catch {
      throw new BitcoinRejection(
        BITCOIN_RPC_ERROR.deserialization,
        'TX decode failed. Make sure the tx has at least one input.',
      )
    }
    const txid = tx.getId()
    if (this.mempool.has(txid)) return txid
    const known = this.txs.get(txid)
    if (known && tx.outs.some((_, vout) => this.isUnspent(txid, vout))) {
      throw new BitcoinRejection(BITCOIN_RPC_ERROR.alreadyInChain, 'Transaction outputs already in utxo set')
    }
    // Full replace-by-fee (Bitcoin Core 28's default): mempool transactions spending an input of
    // this one, and their descendants, are evicted if this one pays enough more (BIP125 rules 3, 4, 6).
    const conflicts = this.mempoolConflicts(tx)
    const evicted = this.withDescendants(conflicts)
    if (tx.ins.some((input) => evicted.has(inputTxid(input.hash)))) {
      throw BitcoinRejection.rejected(
        `bad-txns-spends-conflicting-tx, ${txid} spends conflicting transaction`,
      )
    }
    const spender = (key: string) => {
      const spend = this.spends.get(key)
      return spend && evicted.has(spend.txid) ? undefined : spend
    }
    const { fee } = validateTransaction(tx, {
      tipHeight: this.height,
      medianTimePast: (height) => this.medianTimePast(height),
      output: (key) => this.outputs.get(key),
      spender,
      confirmationHeight: (txid) => this.txs.get(txid)?.block?.height,
      inMempool: (txid) => this.mempool.has(txid) && !evicted.has(txid),
      mempoolParents: (txid) => this.mempoolParents(txid).filter((parent) => !evicted.has(parent)),
    })
    if (evicted.size > 0) {
      this.checkReplacement(txid, tx.virtualSize(), fee, conflicts, evicted)
      this.rebuild(this.height, evicted)
    }
    const record = this.record(tx, fee)
    this.mempool.set(txid, record)
    return txid
  }

  /**
   * Removes the newest `depth` blocks (a simulator fault): the tip goes back by `depth`, the
   * transactions of those blocks are gone (not back in the mempool), and mempool transactions that
   * spent their outputs are dropped too.
   *
   * @throws RangeError when `depth` is not a positive integer or would remove the genesis block.
   */
  rollback(depth: number): void {
    if (!Number.isSafeInteger(depth) || depth < 1 || depth > this.height) {
      throw new RangeError(`cannot roll back ${depth} blocks of a chain at height ${this.height}`)
    }
    this.rebuild(this.height - depth, new Set())
  }

  /**
   * Replaces the newest `depth` blocks by as many empty ones, with other hashes (a simulator fault):
   * the tip keeps its height, the transactions of the replaced blocks are gone.
   */
  reorg(depth: number): BitcoinBlock[] {
    this.rollback(depth)
    this.reorgs += 1
    const mined: BitcoinBlock[] = []
    for (let index = 0; index < depth; index++)
      mined.push(this.appendBlock(BITCOIN_MINER.outputScript, [], []))
    return mined
  }

  /**
   * Evicts a mempool transaction, and the mempool transactions spending its outputs, as a node does
   * with one it drops (a simulator fault).
   *
   * @returns the txids removed; empty when `txid` is not in the mempool.
   */
  drop(txid: string): string[] {
    if (!this.mempool.has(txid)) return []
    const evicted = this.withDescendants(new Set([txid]))
    this.rebuild(this.height, evicted)
    return [...evicted]
  }

  /** Mempool transactions spending an input `tx` spends. */
  private mempoolConflicts(tx: Transaction): Set<string> {
    const conflicts = new Set<string>()
    for (const input of tx.ins) {
      const spend = this.spends.get(outpointKey(inputTxid(input.hash), input.index))
      if (spend && this.mempool.has(spend.txid)) conflicts.add(spend.txid)
    }
    return conflicts
  }

  /** `txids` and every mempool transaction descending from them. */
  private withDescendants(txids: ReadonlySet<string>): Set<string> {
    const all = new Set(txids)
    const pending = [...txids]
    while (pending.length > 0) {
      const record = this.mempool.get(pending.pop()!)
      if (!record) continue
      record.tx.outs.forEach((_, vout) => {
        const spend = this.spends.get(outpointKey(record.txid, vout))
        if (spend && this.mempool.has(spend.txid) && !all.has(spend.txid)) {
          all.add(spend.txid)
          pending.push(spend.txid)
        }
      })
    }
    return all
  }

  /** BIP125 rules 3, 4 and 6 (bitcoind's texts): more fee in total, enough more to relay, a higher rate. */
  private checkReplacement(
    txid: string,
    vsize: number,
    fee: bigint,
    conflicts: ReadonlySet<string>,
    evicted: ReadonlySet<string>,
  ): void {
    if (evicted.size > 100) {
      throw BitcoinRejection.rejected(`too many potential replacements, rejecting replacement ${txid}`)
    }
    for (const conflict of conflicts) {
      const old = this.mempool.get(conflict)!
      // Compare fee rates exactly: fee / vsize > old.fee / old.vsize.
      if (fee * BigInt(old.vsize) <= old.fee * BigInt(vsize)) {
        throw BitcoinRejection.rejected(
          `insufficient fee, rejecting replacement ${txid}; new feerate ${satPerVb(fee, vsize)} <= old feerate ${satPerVb(old.fee, old.vsize)}`,
        )
      }
    }
    const replacedFees = [...evicted].reduce((sum, id) => sum + (this.mempool.get(id)?.fee ?? 0n), 0n)
    if (fee < replacedFees) {
      throw BitcoinRejection.rejected(
        `insufficient fee, rejecting replacement ${txid}, less fees than conflicting txs; ${fee} < ${replacedFees}`,
      )
    }
    const relay = BigInt(vsize * BITCOIN_MIN_RELAY_FEE_RATE)
    if (fee - replacedFees < relay) {
      throw BitcoinRejection.rejected(
        `insufficient fee, rejecting replacement ${txid}, not enough additional fees to relay; ${fee - replacedFees} < ${relay}`,
      )
    }
  }

  /**
   * Rebuilds the chain's state from its first `height + 1` blocks, then puts the mempool back but
   * for `evict` (in arrival order; what no longer validates is dropped).
   */
  private rebuild(height: number, evict: ReadonlySet<string>): void {
    const blocks = this.blocks.slice(0, height + 1)
    const removed = this.blocks.slice(height + 1)
    const mempool = [...this.mempool.values()].filter((record) => !evict.has(record.txid))
    const records = new Map(this.txs)
    this.blocks.length = 0
    for (const block of removed) this.blocksByHash.delete(block.hash)
    this.txs.clear()
    this.mempool.clear()
    this.outputs.clear()
    this.spends.clear()
    this.scriptIndex.clear()
    for (const block of blocks) {
      this.blocks.push(block)
      block.txids.forEach((txid, index) => {
        const old = records.get(txid)
        // The genesis coinbase is not recorded.
        if (!old) return
        const record = this.record(old.tx, old.fee, old.funding === true)
        record.block = block
        record.indexInBlock = index
      })
    }
    for (const record of mempool) {
      try {
        this.submit(record.hex)
      } catch {
        // Its inputs went with the removed blocks or the evicted transactions: dropped.
      }
    }
  }

  /**
   * Mines `count` blocks paying the reward (subsidy and fees) to `payTo` (an address or a script; the
   * miner by default). Each block takes the mempool in arrival order up to the block weight limit.
   */
  mine(count = 1, payTo?: string | Uint8Array): BitcoinBlock[] {
    if (!Number.isInteger(count) || count < 0) throw new Error(`invalid block count: ${count}`)
    const payout = this.payoutScript(payTo)
    const mined: BitcoinBlock[] = []
    for (let index = 0; index < count; index++) mined.push(this.appendBlock(payout, this.selectMempool(), []))
    return mined
  }

  /**
   * Creates confirmed outputs out of thin air (a simulator extension): mines one block, holding no
   * mempool transaction, whose coinbase pays `payments` first (vouts 0…n-1) and then the block reward
   * to the miner. Funding outputs can be spent at once.
   *
   * @returns the funding transaction and its block.
   * @throws Error for an invalid address, script or value.
   */
  fund(payments: readonly BitcoinPayment[]): { txid: string; block: BitcoinBlock } {
    if (payments.length === 0) throw new Error('nothing to fund')
    const outputs = payments.map((payment) => {
      const outputScript = payment.script ?? (payment.address ? addressScript(payment.address) : undefined)
      if (!outputScript) throw new Error(`invalid address: ${payment.address ?? '(none)'}`)
      const value = toSats(payment.value)
      if (value <= 0n || value > MAX_MONEY) throw new Error(`invalid funding value: ${value}`)
      return { script: outputScript, value }
    })
    const block = this.appendBlock(BITCOIN_MINER.outputScript, [], outputs)
    return { txid: block.txids[0]!, block }
  }

  /** Chain and mempool statistics of the outputs paying `outputScript`, as Esplora counts them. */
  addressStats(outputScript: Uint8Array): { chain: BitcoinAddressStats; mempool: BitcoinAddressStats } {
    const scriptHex = toHex(outputScript)
    const chain = emptyStats()
    const mempool = emptyStats()
    for (const txid of this.scriptIndex.get(scriptHex) ?? []) {
      const record = this.txs.get(txid)!
      const stats = record.block ? chain : mempool
      let touched = false
      record.tx.outs.forEach((out, vout) => {
        if (this.outputs.get(outpointKey(txid, vout))?.scriptHex !== scriptHex) return
        stats.funded_txo_count += 1
        stats.funded_txo_sum += Number(out.value)
        touched = true
      })
      if (!record.coinbase) {
        for (const input of record.tx.ins) {
          const spent = this.outputs.get(outpointKey(inputTxid(input.hash), input.index))
          if (spent?.scriptHex !== scriptHex) continue
          stats.spent_txo_count += 1
          stats.spent_txo_sum += Number(spent.value)
          touched = true
        }
      }
      if (touched) stats.tx_count += 1
    }
    return { chain, mempool }
  }

  /**
   * Unspent outputs paying `outputScript` (confirmed and mempool ones, minus those a mempool
   * transaction spends), confirmed first, oldest first.
   */
  utxos(outputScript: Uint8Array): { output: BitcoinOutput; record: BitcoinTxRecord }[] {
    const scriptHex = toHex(outputScript)
    const found: { output: BitcoinOutput; record: BitcoinTxRecord }[] = []
    for (const txid of this.scriptIndex.get(scriptHex) ?? []) {
      const record = this.txs.get(txid)!
      record.tx.outs.forEach((_, vout) => {
        const output = this.outputs.get(outpointKey(txid, vout))!
        if (output.scriptHex !== scriptHex || !this.isUnspent(txid, vout)) return
        found.push({ output, record })
      })
    }
    return found.sort((a, b) => this.chronological(a.record, b.record) || a.output.vout - b.output.vout)
  }

  /** Confirmed and unconfirmed balance of `outputScript` (funded minus spent, satoshi). */
  balance(outputScript: Uint8Array): { confirmed: bigint; unconfirmed: bigint } {
    const { chain, mempool } = this.addressStats(outputScript)
    return {
      confirmed: BigInt(chain.funded_txo_sum - chain.spent_txo_sum),
      unconfirmed: BigInt(mempool.funded_txo_sum - mempool.spent_txo_sum),
    }
  }

  /** Transactions paying or spending `outputScript`: mempool ones and confirmed ones, newest first. */
  history(outputScript: Uint8Array): { mempool: BitcoinTxRecord[]; chain: BitcoinTxRecord[] } {
    const records = [...(this.scriptIndex.get(toHex(outputScript)) ?? [])].map((txid) => this.txs.get(txid)!)
    const newestFirst = (a: BitcoinTxRecord, b: BitcoinTxRecord) => this.chronological(b, a)
    return {
      mempool: records.filter((record) => !record.block).sort(newestFirst),
      chain: records.filter((record) => record.block).sort(newestFirst),
    }
  }

  /** Orders confirmed before unconfirmed, then by height and position, then by arrival. */
  private chronological(a: BitcoinTxRecord, b: BitcoinTxRecord): number {
    if (a.block && b.block) return a.block.height - b.block.height || a.indexInBlock! - b.indexInBlock!
    if (a.block) return -1
    if (b.block) return 1
    return a.arrival - b.arrival
  }

  private isUnspent(txid: string, vout: number): boolean {
    const key = outpointKey(txid, vout)
    const output = this.outputs.get(key)
    return output?.spendable === true && !this.spends.has(key)
  }

  /** Mempool transactions whose outputs `txid` (a mempool transaction) spends. */
  private mempoolParents(txid: string): string[] {
    const record = this.mempool.get(txid)
    if (!record) return []
    return [
      ...new Set(
        record.tx.ins.map((input) => inputTxid(input.hash)).filter((parent) => this.mempool.has(parent)),
      ),
    ]
  }

  private payoutScript(payTo: string | Uint8Array | undefined): Uint8Array {
    if (payTo === undefined) return BITCOIN_MINER.outputScript
    if (typeof payTo !== 'string') return payTo
    const payout = addressScript(payTo)
    if (!payout) throw new Error(`invalid address: ${payTo}`)
    return payout
  }

  /** The mempool transactions the next block takes: arrival order (parents first), within the weight. */
  private selectMempool(): BitcoinTxRecord[] {
    const taken = new Set<string>()
    const selected: BitcoinTxRecord[] = []
    // Header, transaction count and a generous coinbase.
    let weight = 4 * (80 + 3) + 4000
    for (const record of this.mempool.values()) {
      if (weight + record.weight > MAX_BLOCK_WEIGHT) continue
      const parents = this.mempoolParents(record.txid)
      if (!parents.every((parent) => taken.has(parent))) continue
      taken.add(record.txid)
      selected.push(record)
      weight += record.weight
    }
    return selected
  }

  /** Registers a transaction: its outputs, its spends and the address index. */
  private record(tx: Transaction, fee: bigint, funding = false): BitcoinTxRecord {
    const txid = tx.getId()
    const coinbase = tx.isCoinbase()
    const record: BitcoinTxRecord = {
      txid,
      tx,
      hex: tx.toHex(),
      size: tx.byteLength(),
      weight: tx.weight(),
      vsize: tx.virtualSize(),
      fee,
      coinbase,
      arrival: this.arrivals++,
      ...(funding ? { funding } : {}),
    }
    this.txs.set(txid, record)
    const touch = (scriptHex: string) => {
      const txids = this.scriptIndex.get(scriptHex) ?? new Set<string>()
      txids.add(txid)
      this.scriptIndex.set(scriptHex, txids)
    }
    tx.outs.forEach((out, vout) => {
      const scriptHex = toHex(out.script)
      this.outputs.set(outpointKey(txid, vout), {
        txid,
        vout,
        value: out.value,
        script: out.script,
        scriptHex,
        coinbase,
        // The miner's reward in a funding block matures as any other.
        funding: funding && vout < tx.outs.length - 2,
        spendable: out.script[0] !== opcodes.OP_RETURN && out.script.length <= 10_000,
      })
      touch(scriptHex)
    })
    if (!coinbase) {
      tx.ins.forEach((input, vin) => {
        const key = outpointKey(inputTxid(input.hash), input.index)
        this.spends.set(key, { txid, vin })
        touch(this.outputs.get(key)!.scriptHex)
      })
    }
    return record
  }

  /** The coinbase of the next block: funding outputs, the reward, the witness commitment. */
  private coinbase(
    height: number,
    payout: Uint8Array,
    reward: bigint,
    funding: readonly { script: Uint8Array; value: bigint }[],
    txs: readonly Transaction[],
  ): Transaction {
    const coinbase = new Transaction()
    coinbase.version = 2
    // BIP34: the height first; OP_0 keeps the scriptSig at least two bytes long (as bitcoind does).
    coinbase.addInput(
      new Uint8Array(32),
      0xffffffff,
      0xffffffff,
      // After a reorganisation the count goes in too, so replacement blocks get other hashes.
      script.compile([
        script.number.encode(height),
        this.reorgs === 0 ? opcodes.OP_0 : script.number.encode(this.reorgs),
      ]),
    )
    for (const output of funding) coinbase.addOutput(output.script, output.value)
    coinbase.addOutput(payout, reward)
    // BIP141: commit to the wtxids (the coinbase's counts as zero) with a zero witness reserved value.
    coinbase.ins[0]!.witness = [new Uint8Array(32)]
    const commitment = Block.calculateMerkleRoot([coinbase, ...txs], true)
    coinbase.addOutput(
      script.compile([opcodes.OP_RETURN, Buffer.concat([WITNESS_COMMITMENT_HEADER, commitment])]),
      0n,
    )
    return coinbase
  }

  private subsidy(height: number): bigint {
    const halvings = Math.floor(height / HALVING_INTERVAL)
    return halvings >= 64 ? 0n : INITIAL_SUBSIDY >> BigInt(halvings)
  }

  private appendBlock(
    payout: Uint8Array,
    included: readonly BitcoinTxRecord[],
    funding: readonly { script: Uint8Array; value: bigint }[],
  ): BitcoinBlock {
    const height = this.height + 1
    const fees = included.reduce((sum, record) => sum + record.fee, 0n)
    const txs = included.map((record) => record.tx)
    const coinbase = this.coinbase(height, payout, this.subsidy(height) + fees, funding, txs)
    const header = new Block()
    header.version = BLOCK_VERSION
    header.prevHash = Buffer.from(this.tip.hash, 'hex').reverse()
    header.merkleRoot = Block.calculateMerkleRoot([coinbase, ...txs])
    // Consensus wants a time above the median time past; bitcoind mines at max(now, MTP + 1).
    header.timestamp = Math.max(Math.floor(this.now() / 1000), this.medianTimePast() + 1)
    header.bits = BITCOIN_REGTEST_BITS
    header.nonce = 0
    while (!header.checkProofOfWork()) header.nonce += 1
    header.transactions = [coinbase, ...txs]
    const block = this.store(header, height)

    const coinbaseRecord = this.record(coinbase, 0n, funding.length > 0)
    coinbaseRecord.block = block
    coinbaseRecord.indexInBlock = 0
    included.forEach((record, index) => {
      record.block = block
      record.indexInBlock = index + 1
      this.mempool.delete(record.txid)
    })
    return block
  }

  private store(header: Block, height: number): BitcoinBlock {
    const transactions = header.transactions ?? []
    const previous = this.blocks[height - 1]
    const timestamps = [
      ...this.blocks.slice(Math.max(0, height - 10), height).map((b) => b.timestamp),
      header.timestamp,
    ].sort((a, b) => a - b)
    const block: BitcoinBlock = Object.freeze({
      hash: header.getId(),
      height,
      version: header.version,
      timestamp: header.timestamp,
      mediantime: timestamps[Math.floor(timestamps.length / 2)]!,
      bits: header.bits,
      nonce: header.nonce,
      merkleRoot: Buffer.from(header.merkleRoot!).reverse().toString('hex'),
      previousHash: previous?.hash ?? null,
      txids: Object.freeze(transactions.map((tx) => tx.getId())),
      size: header.byteLength(false, true),
      weight: header.weight(),
      raw: header.toBuffer(),
    })
    this.blocks.push(block)
    this.blocksByHash.set(block.hash, block)
    return block
  }

  /** The regtest genesis block; its coinbase is not spendable (nor indexed), as on Bitcoin. */
  private appendGenesis(): void {
    const coinbase = Transaction.fromHex(GENESIS_COINBASE_HEX)
    const header = new Block()
    header.version = 1
    header.prevHash = new Uint8Array(32)
    header.merkleRoot = Block.calculateMerkleRoot([coinbase])
    header.timestamp = GENESIS_TIME
    header.bits = BITCOIN_REGTEST_BITS
    header.nonce = GENESIS_NONCE
    header.transactions = [coinbase]
    this.store(header, 0)
  }
}
