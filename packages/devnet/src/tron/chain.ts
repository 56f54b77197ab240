/**
 * The Tron chain the simulator serves: TRX balances, one native USDT-like TRC20 token, blocks, a
 * pool of accepted transactions and the node's checks on broadcast. State changes when a
 * transaction is accepted (the node's pending state); it is put in the next block.
 */
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import {
  TRON_FUNDING,
  TRON_SOLVER,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  type TronDevAccount,
} from './accounts.js'
import {
  type TronRawTransaction,
  type TronTransactionJson,
  tronAddressBytes,
  tronDecodeRaw,
  tronRawToJson,
  tronRecoverSigner,
  tronSelector,
  tronTransactionId,
  tronTransactionJson,
} from './codec.js'

/** Sun burnt per bandwidth byte (`getTransactionFee`); no account has free bandwidth here. */
export const TRON_TRANSACTION_FEE_SUN = 1000n
/** Sun burnt per unit of energy (`getEnergyFee`); nobody has staked energy here. */
export const TRON_ENERGY_FEE_SUN = 100n
/** Energy of a TRC20 `transfer` to an address that already holds the token. */
export const TRON_TRC20_TRANSFER_ENERGY = 31_000n
/** Energy of a TRC20 `transfer` to an address that never held the token (a new storage slot). */
export const TRON_TRC20_NEW_HOLDER_ENERGY = 65_000n
/** Energy of a `balanceOf` call (constant calls are free; reported only). */
export const TRON_TRC20_BALANCE_OF_ENERGY = 500n
/** Blocks (1 = the block itself) that make a block solid. */
export const TRON_SOLID_CONFIRMATIONS = 19
/** How far past the head block's time an expiration may lie (the node's 24 hours). */
export const TRON_MAX_EXPIRATION_MS = 86_400_000
/** What the node adds to the head block's time for a new transaction's expiration. */
export const TRON_DEFAULT_EXPIRATION_MS = 60_000

const TRANSFER_SELECTOR = bytesToHex(tronSelector('transfer(address,uint256)'))
const BALANCE_OF_SELECTOR = bytesToHex(tronSelector('balanceOf(address)'))
/** keccak256('Transfer(address,address,uint256)'). */
export const TRON_TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

/**
 * Bandwidth a transaction uses: its `Transaction` protobuf size (raw data and 65-byte signatures,
 * with their field headers) plus the 64 bytes the node adds for the result.
 */
export function tronBandwidthBytes(rawLength: number, signatureCount: number): bigint {
  const lengthHeader = rawLength < 128 ? 1 : rawLength < 16_384 ? 2 : 3
  return BigInt(1 + lengthHeader + rawLength + signatureCount * 67 + 64)
}

/** A broadcast error, as the node words it. */
export type TronBroadcastCode =
  | 'SIGERROR'
  | 'TRANSACTION_EXPIRATION_ERROR'
  | 'DUP_TRANSACTION_ERROR'
  | 'CONTRACT_VALIDATE_ERROR'
  | 'BANDWITH_ERROR'
  | 'TAPOS_ERROR'
  | 'OTHER_ERROR'

/** A refused broadcast. */
export class TronRejection extends Error {
  constructor(
    readonly code: TronBroadcastCode,
    message: string,
  ) {
    super(message)
  }
}

/** A block. */
export interface TronBlock {
  readonly number: number
  /** 32 bytes hex: the number (8 bytes big-endian) then 24 bytes of a hash. */
  readonly id: string
  readonly parentId: string
  readonly timestamp: number
  readonly txIds: readonly string[]
}

/** A TRC20 Transfer event as `gettransactioninfobyid` serves it. */
export interface TronLog {
  /** The contract, 20-byte hex (no 41). */
  readonly address: string
  readonly topics: readonly string[]
  readonly data: string
}

/** An accepted transaction and its effects. */
export interface TronTxRecord {
  readonly transaction: TronTransactionJson & { readonly signature: readonly string[] }
  readonly raw: TronRawTransaction
  readonly contractRet: 'SUCCESS' | 'REVERT'
  readonly netFee: bigint
  readonly energyFee: bigint
  readonly energyUsage: bigint
  readonly logs: readonly TronLog[]
  blockNumber?: number
  blockTimeStamp?: number
}

const hex21 = (bytes: Uint8Array): string => bytesToHex(bytes)

/** One balance change of an accepted transaction. */
interface JournalEntry {
  readonly kind: 'trx' | 'token'
  readonly key: string
  readonly delta: bigint
  /** The balance entry did not exist before the change. */
  readonly created: boolean
}

function blockId(number: number, seed: string): string {
  const hash = bytesToHex(sha256(new TextEncoder().encode(seed))).slice(16)
  return `${number.toString(16).padStart(16, '0')}${hash}`
}

/**
 * A decoded TRC20 call: selector, arguments, and whatever follows them (kept, never read). An
 * address word may carry the 0x41 prefix in its 12th byte (some wallets encode it); the token reads
 * the low 20 bytes, as the Solidity 0.4 USDT contract does.
 */
interface TokenCall {
  readonly selector: string
  readonly address?: Uint8Array
  readonly amount?: bigint
}

function decodeCall(data: Uint8Array): TokenCall {
  const selector = bytesToHex(data.subarray(0, 4))
  const word = (index: number): Uint8Array | undefined => {
    const start = 4 + index * 32
    return data.length >= start + 32 ? data.subarray(start, start + 32) : undefined
  }
  const first = word(0)
  const address =
    first?.subarray(0, 11).every((byte) => byte === 0) && (first[11] === 0 || first[11] === 0x41)
      ? Uint8Array.from([0x41, ...(first as Uint8Array).subarray(12)])
      : undefined
  const second = word(1)
  return {
    selector,
    ...(address ? { address } : {}),
    ...(second ? { amount: BigInt(`0x${bytesToHex(second)}`) } : {}),
  }
}

/** Options of {@link TronChain}. */
export interface TronChainOptions {
  /** Clock, Unix ms (tests may fix it). */
  readonly now?: () => number
}

/** The simulated chain. */
export class TronChain {
  readonly #clock: () => number
  /** How far {@link advanceClock} moved the clock ahead of `options.now`, ms. */
  #clockAhead = 0
  /** TRX balances by 41-hex address; an address is an account once it is here. */
  readonly #balances = new Map<string, bigint>()
  readonly #createTimes = new Map<string, number>()
  /** Token balances by 41-hex address; present once the address held the token. */
  readonly #tokenBalances = new Map<string, bigint>()
  readonly #blocks: TronBlock[] = []
  readonly #pool: string[] = []
  readonly #txs = new Map<string, TronTxRecord>()
  /** What each accepted transaction changed, to undo it when it is dropped or forked away. */
  readonly #undo = new Map<string, JournalEntry[]>()
  /** Collects the changes of the transaction being accepted. */
  #journal: JournalEntry[] | undefined
  /** Forks so far: part of new block ids, so a replacing block never repeats a replaced one's id. */
  #forks = 0
  /** The token contract, 21 bytes hex. */
  readonly tokenAddress = hex21(tronAddressBytes(TRON_USDT_ADDRESS) as Uint8Array)
  transactionFee = TRON_TRANSACTION_FEE_SUN
  energyFee = TRON_ENERGY_FEE_SUN

  constructor(options: TronChainOptions = {}) {
    this.#clock = options.now ?? Date.now
    const timestamp = this.#now()
    this.#blocks.push({
      number: 0,
      id: blockId(0, 'genesis'),
      parentId: '0'.repeat(64),
      timestamp,
      txIds: [],
    })
    const fund = (who: TronDevAccount, trx: bigint, usdt: bigint) => {
      this.credit(who.hexAddress, trx)
      if (usdt > 0n) this.#tokenBalances.set(who.hexAddress, usdt)
    }
    for (const user of Object.values(TRON_USERS)) fund(user, TRON_FUNDING.userTrx, TRON_FUNDING.userUsdt)
    fund(TRON_SOLVER, TRON_FUNDING.solverTrx, TRON_FUNDING.solverUsdt)
    fund(TRON_VAULT, TRON_FUNDING.vaultTrx, TRON_FUNDING.vaultUsdt)
  }

  /** The chain's time, Unix ms: the clock plus what {@link advanceClock} added. */
  #now(): number {
    return this.#clock() + this.#clockAhead
  }

  /**
   * Moves the chain's time `milliseconds` ahead: blocks produced from now on are stamped that much
   * later, so transactions expire without waiting for them to.
   * @throws RangeError when `milliseconds` is not a positive integer.
   */
  advanceClock(milliseconds: number): void {
    if (!Number.isSafeInteger(milliseconds) || milliseconds < 1)
      throw new RangeError(`milliseconds must be a positive integer, got ${milliseconds}`)
    this.#clockAhead += milliseconds
  }

  /** The newest block. */
  get head(): TronBlock {
    return this.#blocks.at(-1) as TronBlock
  }

  /** The block at `number`, if produced. */
  block(number: number): TronBlock | undefined {
    return this.#blocks[number]
  }

  /** Produces `count` blocks; the first takes the pool (unless `options.empty`). */
  mine(count = 1, options: { empty?: boolean } = {}): TronBlock[] {
    const produced: TronBlock[] = []
    for (let index = 0; index < count; index++) {
      const parent = this.head
      const number = parent.number + 1
      const timestamp = Math.max(this.#now(), parent.timestamp + 1)
      const txIds = options.empty ? [] : this.#pool.splice(0)
      const block = {
        number,
        id: blockId(
          number,
          `${parent.id}${timestamp}${txIds.join('')}${this.#forks > 0 ? `fork${this.#forks}` : ''}`,
        ),
        parentId: parent.id,
        timestamp,
        txIds,
      }
      for (const txId of txIds) {
        const record = this.#txs.get(txId) as TronTxRecord
        record.blockNumber = number
        record.blockTimeStamp = timestamp
      }
      this.#blocks.push(block)
      produced.push(block)
    }
    return produced
  }

  /** Transactions accepted and not yet in a block, oldest first. */
  pool(): readonly string[] {
    return [...this.#pool]
  }

  /**
   * Removes the newest `depth` blocks, as a fork that replaced them would: their transactions are
   * undone and forgotten (their senders may broadcast them again). Solid blocks never go: `depth`
   * is at most {@link TRON_SOLID_CONFIRMATIONS} - 1. Pool transactions stay in the pool.
   *
   * @throws RangeError when `depth` is out of that range or would remove the genesis block.
   */
  rollback(depth: number): void {
    const limit = Math.min(TRON_SOLID_CONFIRMATIONS - 1, this.head.number)
    if (!Number.isSafeInteger(depth) || depth < 1 || depth > limit)
      throw new RangeError(`depth must be an integer from 1 to ${limit} (solid blocks stay), got ${depth}`)
    this.#forks++
    for (let index = 0; index < depth; index++) {
      const block = this.#blocks.pop() as TronBlock
      for (const txId of [...block.txIds].reverse()) this.#forget(txId)
    }
  }

  /** Removes a pool transaction, undoing it, as a node evicting it. False when it is not in the pool. */
  dropTransaction(txId: string): boolean {
    const index = this.#pool.indexOf(txId.toLowerCase())
    if (index < 0) return false
    this.#pool.splice(index, 1)
    this.#forget(txId.toLowerCase())
    return true
  }

  #forget(txId: string): void {
    for (const entry of (this.#undo.get(txId) ?? []).reverse()) {
      const balances = entry.kind === 'trx' ? this.#balances : this.#tokenBalances
      const left = (balances.get(entry.key) ?? 0n) - entry.delta
      if (entry.created && left === 0n) {
        balances.delete(entry.key)
        if (entry.kind === 'trx') this.#createTimes.delete(entry.key)
      } else balances.set(entry.key, left)
    }
    this.#undo.delete(txId)
    this.#txs.delete(txId)
  }

  /** TRX balance (sun) of a 41-hex address; undefined when it is no account. */
  balance(hexAddress: string): bigint | undefined {
    return this.#balances.get(hexAddress.toLowerCase())
  }

  /** Creation time of an account. */
  createTime(hexAddress: string): number | undefined {
    return this.#createTimes.get(hexAddress.toLowerCase())
  }

  /** Token balance of a 41-hex address. */
  tokenBalance(hexAddress: string): bigint {
    return this.#tokenBalances.get(hexAddress.toLowerCase()) ?? 0n
  }

  /** Adds TRX (creating the account). */
  credit(hexAddress: string, sun: bigint): void {
    const key = hexAddress.toLowerCase()
    const created = !this.#balances.has(key)
    if (created) this.#createTimes.set(key, this.#now())
    this.#balances.set(key, (this.#balances.get(key) ?? 0n) + sun)
    this.#journal?.push({ kind: 'trx', key, delta: sun, created })
  }

  /** Adds token units. */
  creditToken(hexAddress: string, units: bigint): void {
    const key = hexAddress.toLowerCase()
    this.#journal?.push({ kind: 'token', key, delta: units, created: !this.#tokenBalances.has(key) })
    this.#tokenBalances.set(key, this.tokenBalance(key) + units)
  }

  /** An accepted transaction (in a block or the pool). */
  transaction(txId: string): TronTxRecord | undefined {
    return this.#txs.get(txId.toLowerCase())
  }

  /** Energy a TRC20 transfer to `to` (41-hex) takes. */
  transferEnergy(to: string): bigint {
    return this.#tokenBalances.has(to.toLowerCase())
      ? TRON_TRC20_TRANSFER_ENERGY
      : TRON_TRC20_NEW_HOLDER_ENERGY
  }

  /** Reference block fields and times for a new transaction, as the node fills them. */
  newRaw(
    contract: TronRawTransaction['contract'],
    extra: { data?: Uint8Array; feeLimit?: bigint } = {},
  ): TronRawTransaction {
    const head = this.head
    const id = hexToBytes(head.id)
    return {
      refBlockBytes: id.subarray(6, 8),
      refBlockHash: id.subarray(8, 16),
      expiration: head.timestamp + TRON_DEFAULT_EXPIRATION_MS,
      data: extra.data ?? new Uint8Array(),
      contract,
      timestamp: this.#now(),
      feeLimit: extra.feeLimit ?? 0n,
    }
  }

  /**
   * The node's checks on a TransferContract before it builds one (`createtransaction`).
   * @throws TronRejection CONTRACT_VALIDATE_ERROR
   */
  validateTransfer(owner: Uint8Array, to: Uint8Array, amount: bigint): void {
    const balance = this.balance(hex21(owner))
    if (balance === undefined)
      throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'Validate TransferContract error, no OwnerAccount.')
    if (amount <= 0n) throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'Amount must be greater than 0.')
    if (hex21(owner) === hex21(to))
      throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'Cannot transfer TRX to yourself.')
    if (balance < amount) {
      throw new TronRejection(
        'CONTRACT_VALIDATE_ERROR',
        `Validate TransferContract error, balance is not sufficient.`,
      )
    }
  }

  /** Runs a constant call on the token: `balanceOf` answers the balance; `transfer` its energy. */
  constantCall(data: Uint8Array): { result: Uint8Array; energy: bigint } {
    const call = decodeCall(data)
    if (call.selector === BALANCE_OF_SELECTOR && call.address) {
      return { result: word(this.tokenBalance(hex21(call.address))), energy: TRON_TRC20_BALANCE_OF_ENERGY }
    }
    if (call.selector === TRANSFER_SELECTOR && call.address && call.amount !== undefined) {
      return { result: word(1n), energy: this.transferEnergy(hex21(call.address)) }
    }
    throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'REVERT opcode executed')
  }

  /**
   * Checks a signed transaction as the node does and, when it passes, applies it and puts it in the
   * pool. Returns the txID.
   * @throws TronRejection with the node's code
   */
  broadcast(body: Record<string, unknown>): string {
    const rawHex = typeof body.raw_data_hex === 'string' ? body.raw_data_hex.toLowerCase() : ''
    let raw: TronRawTransaction
    try {
      if (!/^([0-9a-f]{2})+$/.test(rawHex)) throw new Error('raw_data_hex is not hex')
      raw = tronDecodeRaw(hexToBytes(rawHex))
    } catch (error) {
      throw new TronRejection('OTHER_ERROR', `raw_data_hex does not decode: ${(error as Error).message}`)
    }
    const txId = tronTransactionId(hexToBytes(rawHex))
    const visible = body.visible === true
    const rebuilt = tronTransactionJson(raw, visible)
    if (rebuilt.raw_data_hex !== rawHex) {
      throw new TronRejection('OTHER_ERROR', 'raw_data_hex is not in canonical protobuf encoding')
    }
    if (
      body.raw_data !== undefined &&
      canonicalJson(body.raw_data) !== canonicalJson(tronRawToJson(raw, visible))
    ) {
      throw new TronRejection('OTHER_ERROR', 'raw_data does not match raw_data_hex')
    }
    if (typeof body.txID !== 'string' || body.txID.toLowerCase() !== txId) {
      throw new TronRejection('SIGERROR', `txID does not match sha256(raw_data_hex) = ${txId}`)
    }
    if (this.#txs.has(txId)) throw new TronRejection('DUP_TRANSACTION_ERROR', 'Dup transaction.')
    const signatures = Array.isArray(body.signature) ? body.signature : []
    if (signatures.length !== 1 || typeof signatures[0] !== 'string') {
      throw new TronRejection('SIGERROR', 'validate signature error: expected exactly one signature')
    }
    const signer = tronRecoverSigner(txId, signatures[0])
    const owner = hex21(raw.contract.owner)
    if (!signer || hex21(signer) !== owner) {
      throw new TronRejection(
        'SIGERROR',
        `validate signature error: the signature is not the owner's (${owner})`,
      )
    }
    const head = this.head
    if (raw.expiration <= head.timestamp || raw.expiration > head.timestamp + TRON_MAX_EXPIRATION_MS) {
      throw new TronRejection(
        'TRANSACTION_EXPIRATION_ERROR',
        `Transaction expiration, transaction expiration time is ${raw.expiration}, but latest block time is ${head.timestamp}`,
      )
    }
    if (!this.#refBlockKnown(raw)) {
      throw new TronRejection('TAPOS_ERROR', 'Tapos check error: the reference block is unknown')
    }
    const balance = this.balance(owner)
    if (balance === undefined)
      throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'Validate contract error: no OwnerAccount.')
    const netFee = tronBandwidthBytes(rawHex.length / 2, 1) * this.transactionFee
    if (balance < netFee) {
      throw new TronRejection(
        'BANDWITH_ERROR',
        `Account resource insufficient error: needs ${netFee} sun for bandwidth, has ${balance}.`,
      )
    }
    const journal: JournalEntry[] = []
    this.#journal = journal
    try {
      this.#apply(txId, raw, rebuilt, signatures[0], balance, netFee)
    } finally {
      this.#journal = undefined
    }
    this.#undo.set(txId, journal)
    return txId
  }

  /** Applies a checked transaction to the state and puts it in the pool (changes journaled). */
  #apply(
    txId: string,
    raw: TronRawTransaction,
    rebuilt: TronTransactionJson,
    signature: string,
    balance: bigint,
    netFee: bigint,
  ): void {
    const owner = hex21(raw.contract.owner)
    const contract = raw.contract
    let record: Omit<TronTxRecord, 'transaction' | 'raw'>
    if (contract.type === 'TransferContract') {
      this.validateTransfer(contract.owner, contract.to, contract.amount)
      if (balance < contract.amount + netFee) {
        throw new TronRejection(
          'CONTRACT_VALIDATE_ERROR',
          `Validate TransferContract error, balance is not sufficient (amount ${contract.amount} + bandwidth ${netFee} sun).`,
        )
      }
      this.credit(owner, -(contract.amount + netFee))
      this.credit(hex21(contract.to), contract.amount)
      record = { contractRet: 'SUCCESS', netFee, energyFee: 0n, energyUsage: 0n, logs: [] }
    } else {
      if (hex21(contract.contractAddress) !== this.tokenAddress) {
        throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'No contract or not a valid smart contract')
      }
      if (contract.callValue !== 0n)
        throw new TronRejection('CONTRACT_VALIDATE_ERROR', 'the token takes no call_value')
      const call = decodeCall(contract.data)
      const isTransfer =
        call.selector === TRANSFER_SELECTOR && call.address !== undefined && call.amount !== undefined
      const energy = isTransfer
        ? this.transferEnergy(hex21(call.address as Uint8Array))
        : TRON_TRC20_TRANSFER_ENERGY
      const energyFee = energy * this.energyFee
      if (raw.feeLimit < energyFee) {
        throw new TronRejection(
          'CONTRACT_VALIDATE_ERROR',
          `fee_limit ${raw.feeLimit} sun is below the energy cost ${energyFee} sun (${energy} energy × ${this.energyFee} sun)`,
        )
      }
      if (balance < netFee + energyFee) {
        throw new TronRejection(
          'CONTRACT_VALIDATE_ERROR',
          `balance ${balance} sun is not sufficient for bandwidth ${netFee} and energy ${energyFee} sun`,
        )
      }
      this.credit(owner, -(netFee + energyFee))
      const from = owner
      const ok = isTransfer && this.tokenBalance(from) >= (call.amount as bigint)
      const logs: TronLog[] = []
      if (ok) {
        const to = hex21(call.address as Uint8Array)
        this.creditToken(from, -(call.amount as bigint))
        this.creditToken(to, call.amount as bigint)
        logs.push({
          address: this.tokenAddress.slice(2),
          topics: [TRON_TRANSFER_TOPIC, from.slice(2).padStart(64, '0'), to.slice(2).padStart(64, '0')],
          data: (call.amount as bigint).toString(16).padStart(64, '0'),
        })
      }
      record = { contractRet: ok ? 'SUCCESS' : 'REVERT', netFee, energyFee, energyUsage: energy, logs }
    }
    const transaction = {
      ...rebuilt,
      signature: [signature.toLowerCase()],
    }
    this.#txs.set(txId, { ...record, transaction, raw })
    this.#pool.push(txId)
  }

  #refBlockKnown(raw: TronRawTransaction): boolean {
    const bytes = bytesToHex(raw.refBlockBytes)
    const hash = bytesToHex(raw.refBlockHash)
    return this.#blocks.some((block) => block.id.slice(12, 16) === bytes && block.id.slice(16, 32) === hash)
  }
}

function word(value: bigint): Uint8Array {
  return hexToBytes(value.toString(16).padStart(64, '0'))
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, entry: unknown) =>
    entry && typeof entry === 'object' && !Array.isArray(entry)
      ? Object.fromEntries(
          Object.entries(entry as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : entry,
  )
}
