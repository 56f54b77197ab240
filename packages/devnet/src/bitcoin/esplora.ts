/**
 * The Esplora JSON shapes (https://github.com/Blockstream/esplora/blob/master/API.md, as electrs
 * serializes them: optional members are left out, not null) built from the devnet chain's records.
 */
import type {
  BitcoinAddressStats,
  BitcoinBlock,
  BitcoinChain,
  BitcoinOutput,
  BitcoinSpend,
  BitcoinTxRecord,
} from './chain.js'
import { inputTxid } from './chain.js'
import {
  classifyOutput,
  type OutputType,
  outputAddress,
  parseScript,
  pushedItems,
  scriptAsm,
  toHex,
  witnessProgram,
} from './script.js'

/** A transaction's confirmation status. */
export interface EsploraStatus {
  confirmed: boolean
  block_height?: number
  block_hash?: string
  block_time?: number
}

/** A transaction output (and an input's `prevout`). */
export interface EsploraTxOut {
  scriptpubkey: string
  scriptpubkey_asm: string
  scriptpubkey_type: OutputType
  scriptpubkey_address?: string
  value: number
}

/** A transaction input. */
export interface EsploraTxIn {
  txid: string
  vout: number
  /** Null for a coinbase input. */
  prevout: EsploraTxOut | null
  scriptsig: string
  scriptsig_asm: string
  /** Left out when the input has no witness. */
  witness?: string[]
  is_coinbase: boolean
  sequence: number
  inner_redeemscript_asm?: string
  inner_witnessscript_asm?: string
}

/** A transaction (`GET /tx/:txid`). */
export interface EsploraTx {
  txid: string
  version: number
  locktime: number
  vin: EsploraTxIn[]
  vout: EsploraTxOut[]
  size: number
  weight: number
  fee: number
  /** Left out in a block's transaction list. */
  status?: EsploraStatus
}

/** An unspent output (`GET /address/:address/utxo`). */
export interface EsploraUtxo {
  txid: string
  vout: number
  status: EsploraStatus
  value: number
}

/** An output's spending status (`GET /tx/:txid/outspends`). */
export interface EsploraOutspend {
  spent: boolean
  txid?: string
  vin?: number
  status?: EsploraStatus
}

/** `GET /address/:address`. */
export interface EsploraAddress {
  address: string
  chain_stats: BitcoinAddressStats
  mempool_stats: BitcoinAddressStats
}

/** `GET /block/:hash`. */
export interface EsploraBlock {
  id: string
  height: number
  version: number
  timestamp: number
  tx_count: number
  size: number
  weight: number
  merkle_root: string
  previousblockhash: string | null
  mediantime: number
  nonce: number
  bits: number
  difficulty: number
}

/** `GET /block/:hash/status`. */
export interface EsploraBlockStatus {
  in_best_chain: boolean
  height?: number
  next_best?: string
}

/** `GET /mempool`. */
export interface EsploraMempool {
  count: number
  vsize: number
  total_fee: number
  /** [fee rate (sat/vB), vsize paying at least that rate and less than the previous entry's]. */
  fee_histogram: [number, number][]
}

/** `GET /mempool/recent` entries. */
export interface EsploraRecentTx {
  txid: string
  fee: number
  vsize: number
  value: number
}

/** Bitcoin's difficulty: the mainnet proof-of-work limit over the block's target. */
export function difficulty(bits: number): number {
  const target = (bits & 0xffffff) * 256 ** ((bits >>> 24) - 3)
  return (0xffff * 256 ** (0x1d - 3)) / target
}

/** The status of a transaction record (unconfirmed when `record` is in the mempool). */
export function esploraStatus(record: Pick<BitcoinTxRecord, 'block'>): EsploraStatus {
  const block = record.block
  if (!block) return { confirmed: false }
  return { confirmed: true, block_height: block.height, block_hash: block.hash, block_time: block.timestamp }
}

/** An output as Esplora describes it. */
export function esploraTxOut(outputScript: Uint8Array, value: bigint): EsploraTxOut {
  const address = outputAddress(outputScript)
  return {
    scriptpubkey: toHex(outputScript),
    scriptpubkey_asm: scriptAsm(outputScript),
    scriptpubkey_type: classifyOutput(outputScript),
    ...(address === undefined ? {} : { scriptpubkey_address: address }),
    value: Number(value),
  }
}

/** The redeem and witness scripts an input reveals (electrs' `get_innerscripts`). */
function innerScripts(
  scriptSig: Uint8Array,
  witness: readonly Uint8Array[],
  prevout: BitcoinOutput,
): { redeem?: Uint8Array; witnessScript?: Uint8Array } {
  const type = classifyOutput(prevout.script)
  let redeem: Uint8Array | undefined
  if (type === 'p2sh') {
    const chunks = parseScript(scriptSig)
    redeem = chunks ? pushedItems(chunks).at(-1) : undefined
  }
  const nested = redeem ? witnessProgram(redeem) : undefined
  const wrapsP2wsh = nested?.version === 0 && nested.program.length === 32
  const witnessScript = type === 'v0_p2wsh' || wrapsP2wsh ? witness.at(-1) : undefined
  return { redeem, witnessScript }
}

/** A transaction as `GET /tx/:txid` answers it (`withStatus` false: as a block's list does). */
export function esploraTx(chain: BitcoinChain, record: BitcoinTxRecord, withStatus = true): EsploraTx {
  const vin = record.tx.ins.map((input): EsploraTxIn => {
    const txid = inputTxid(input.hash)
    const prevout = record.coinbase ? undefined : chain.output(txid, input.index)
    const inner = prevout ? innerScripts(input.script, input.witness, prevout) : {}
    return {
      txid,
      vout: input.index,
      prevout: prevout ? esploraTxOut(prevout.script, prevout.value) : null,
      scriptsig: toHex(input.script),
      scriptsig_asm: scriptAsm(input.script),
      ...(input.witness.length > 0 ? { witness: input.witness.map(toHex) } : {}),
      is_coinbase: record.coinbase,
      sequence: input.sequence,
      ...(inner.redeem ? { inner_redeemscript_asm: scriptAsm(inner.redeem) } : {}),
      ...(inner.witnessScript ? { inner_witnessscript_asm: scriptAsm(inner.witnessScript) } : {}),
    }
  })
  return {
    txid: record.txid,
    version: record.tx.version >>> 0,
    locktime: record.tx.locktime,
    vin,
    vout: record.tx.outs.map((out) => esploraTxOut(out.script, out.value)),
    size: record.size,
    weight: record.weight,
    fee: Number(record.fee),
    ...(withStatus ? { status: esploraStatus(record) } : {}),
  }
}

/** The spending status of one output. */
export function esploraOutspend(chain: BitcoinChain, spend: BitcoinSpend | undefined): EsploraOutspend {
  if (!spend) return { spent: false }
  const spender = chain.transaction(spend.txid)!
  return { spent: true, txid: spend.txid, vin: spend.vin, status: esploraStatus(spender) }
}

/** A block as `GET /block/:hash` answers it. */
export function esploraBlock(block: BitcoinBlock): EsploraBlock {
  return {
    id: block.hash,
    height: block.height,
    version: block.version,
    timestamp: block.timestamp,
    tx_count: block.txids.length,
    size: block.size,
    weight: block.weight,
    merkle_root: block.merkleRoot,
    previousblockhash: block.previousHash,
    mediantime: block.mediantime,
    nonce: block.nonce,
    bits: block.bits,
    difficulty: difficulty(block.bits),
  }
}

/** Mempool backlog statistics, with one histogram entry per distinct fee rate (highest first). */
export function esploraMempool(records: readonly BitcoinTxRecord[]): EsploraMempool {
  const byRate = new Map<number, number>()
  for (const record of records) {
    const rate = Math.round((Number(record.fee) / record.vsize) * 100) / 100
    byRate.set(rate, (byRate.get(rate) ?? 0) + record.vsize)
  }
  return {
    count: records.length,
    vsize: records.reduce((sum, record) => sum + record.vsize, 0),
    total_fee: records.reduce((sum, record) => sum + Number(record.fee), 0),
    fee_histogram: [...byRate.entries()].sort((a, b) => b[0] - a[0]),
  }
}
