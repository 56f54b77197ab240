/**
 * Tron wire formats the simulator and the plugin share: base58check addresses (version byte 0x41), the protobuf
 * encoding of `Transaction.raw` for the two contracts it runs (TransferContract and
 * TriggerSmartContract), its JSON rendering as the node serves it (`raw_data`), txID =
 * sha256(raw bytes) and secp256k1 signatures (r‖s‖v over the txID, v = 27 + recovery).
 *
 * The Tron simulator of @pontis/devnet uses this codec as is (one implementation); real node
 * output (raw data, txIDs, signatures) in the tests is what checks it.
 */
import { secp256k1 } from '@noble/curves/secp256k1'
import { sha256 } from '@noble/hashes/sha2'
import { keccak_256 } from '@noble/hashes/sha3'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import { createBase58check } from '@scure/base'

const base58check = createBase58check(sha256)

/** The version byte of every Tron address. */
export const TRON_ADDRESS_PREFIX = 0x41

/** 21 address bytes (0x41 + 20) as base58check (`T…`). */
export function tronBase58(address21: Uint8Array): string {
  return base58check.encode(address21)
}

/** The 21 bytes of a base58check (`T…`) or 41-hex address; undefined when it is neither. */
export function tronAddressBytes(address: string): Uint8Array | undefined {
  if (/^41[0-9a-fA-F]{40}$/.test(address)) return hexToBytes(address.toLowerCase())
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address)) return undefined
  try {
    const bytes = base58check.decode(address)
    return bytes.length === 21 && bytes[0] === TRON_ADDRESS_PREFIX ? bytes : undefined
  } catch {
    return undefined
  }
}

/** The address of a secp256k1 private key: 0x41 + the last 20 bytes of keccak256(public key). */
export function tronAddressOfKey(privateKey: Uint8Array): Uint8Array {
  return tronAddressOfPublicKey(secp256k1.getPublicKey(privateKey, false))
}

/** The address of an uncompressed (65-byte) public key. */
export function tronAddressOfPublicKey(publicKey: Uint8Array): Uint8Array {
  const hash = keccak_256(publicKey.subarray(1))
  return Uint8Array.from([TRON_ADDRESS_PREFIX, ...hash.subarray(12)])
}

/** The contracts the simulator runs. */
export type TronContract =
  | {
      readonly type: 'TransferContract'
      readonly owner: Uint8Array
      readonly to: Uint8Array
      readonly amount: bigint
    }
  | {
      readonly type: 'TriggerSmartContract'
      readonly owner: Uint8Array
      readonly contractAddress: Uint8Array
      readonly callValue: bigint
      readonly data: Uint8Array
    }

/** `Transaction.raw`, decoded. */
export interface TronRawTransaction {
  readonly refBlockBytes: Uint8Array
  readonly refBlockHash: Uint8Array
  /** Unix milliseconds. */
  readonly expiration: number
  /** The memo (`data`, field 10); empty when none. */
  readonly data: Uint8Array
  readonly contract: TronContract
  readonly timestamp: number
  /** Sun; 0 when absent. */
  readonly feeLimit: bigint
}

const CONTRACT_TYPE = { TransferContract: 1, TriggerSmartContract: 31 } as const
const TYPE_URL = 'type.googleapis.com/protocol.'

// ---------------------------------------------------------------------------------------------
// protobuf

function varint(value: bigint): number[] {
  if (value < 0n) throw new Error('negative varint')
  const out: number[] = []
  let rest = value
  do {
    const byte = Number(rest & 0x7fn)
    rest >>= 7n
    out.push(rest > 0n ? byte | 0x80 : byte)
  } while (rest > 0n)
  return out
}

function fieldVarint(field: number, value: bigint): number[] {
  return value === 0n ? [] : [...varint(BigInt(field << 3)), ...varint(value)]
}

function fieldBytes(field: number, value: Uint8Array): number[] {
  return value.length === 0
    ? []
    : [...varint(BigInt((field << 3) | 2)), ...varint(BigInt(value.length)), ...value]
}

function contractValue(contract: TronContract): Uint8Array {
  if (contract.type === 'TransferContract') {
    return Uint8Array.from([
      ...fieldBytes(1, contract.owner),
      ...fieldBytes(2, contract.to),
      ...fieldVarint(3, contract.amount),
    ])
  }
  return Uint8Array.from([
    ...fieldBytes(1, contract.owner),
    ...fieldBytes(2, contract.contractAddress),
    ...fieldVarint(3, contract.callValue),
    ...fieldBytes(4, contract.data),
  ])
}

/** The protobuf bytes of `Transaction.raw` (fields in ascending order, defaults omitted, as protoc does). */
export function tronEncodeRaw(raw: TronRawTransaction): Uint8Array {
  const any = Uint8Array.from([
    ...fieldBytes(1, new TextEncoder().encode(`${TYPE_URL}${raw.contract.type}`)),
    ...fieldBytes(2, contractValue(raw.contract)),
  ])
  const contract = Uint8Array.from([
    ...fieldVarint(1, BigInt(CONTRACT_TYPE[raw.contract.type])),
    ...fieldBytes(2, any),
  ])
  return Uint8Array.from([
    ...fieldBytes(1, raw.refBlockBytes),
    ...fieldBytes(4, raw.refBlockHash),
    ...fieldVarint(8, BigInt(raw.expiration)),
    ...fieldBytes(10, raw.data),
    ...fieldBytes(11, contract),
    ...fieldVarint(14, BigInt(raw.timestamp)),
    ...fieldVarint(18, raw.feeLimit),
  ])
}

type Field = { readonly field: number; readonly varint?: bigint; readonly bytes?: Uint8Array }

function readFields(bytes: Uint8Array): Field[] {
  const fields: Field[] = []
  let at = 0
  const readVarint = (): bigint => {
    let value = 0n
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (at >= bytes.length) throw new Error('truncated varint')
      const byte = bytes[at++] as number
      value |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return value
    }
    throw new Error('varint too long')
  }
  while (at < bytes.length) {
    const key = Number(readVarint())
    const field = key >> 3
    const wire = key & 7
    if (wire === 0) fields.push({ field, varint: readVarint() })
    else if (wire === 2) {
      const length = Number(readVarint())
      if (at + length > bytes.length) throw new Error('truncated field')
      fields.push({ field, bytes: bytes.slice(at, at + length) })
      at += length
    } else throw new Error(`unsupported wire type ${wire}`)
  }
  return fields
}

function one(fields: Field[], field: number): Field | undefined {
  const found = fields.filter((entry) => entry.field === field)
  if (found.length > 1) throw new Error(`field ${field} repeated`)
  return found[0]
}

const bytesOf = (fields: Field[], field: number): Uint8Array => one(fields, field)?.bytes ?? new Uint8Array()
const numberOf = (fields: Field[], field: number): bigint => one(fields, field)?.varint ?? 0n

/**
 * Decodes `Transaction.raw` bytes holding exactly one TransferContract or TriggerSmartContract.
 * @throws Error naming what is wrong (malformed protobuf, unknown field, other contract type).
 */
export function tronDecodeRaw(bytes: Uint8Array): TronRawTransaction {
  const fields = readFields(bytes)
  for (const entry of fields) {
    if (![1, 4, 8, 10, 11, 14, 18].includes(entry.field)) throw new Error(`unsupported field ${entry.field}`)
  }
  const contractBytes = one(fields, 11)?.bytes
  if (!contractBytes) throw new Error('no contract')
  const contractFields = readFields(contractBytes)
  const typeNumber = Number(numberOf(contractFields, 1))
  const type = typeNumber === 1 ? 'TransferContract' : typeNumber === 31 ? 'TriggerSmartContract' : undefined
  if (!type) throw new Error(`unsupported contract type ${typeNumber}`)
  const anyFields = readFields(bytesOf(contractFields, 2))
  const typeUrl = new TextDecoder().decode(bytesOf(anyFields, 1))
  if (typeUrl !== `${TYPE_URL}${type}`) throw new Error(`type_url ${typeUrl} does not match ${type}`)
  const value = readFields(bytesOf(anyFields, 2))
  const address = (field: number): Uint8Array => {
    const found = bytesOf(value, field)
    if (found.length !== 21 || found[0] !== TRON_ADDRESS_PREFIX)
      throw new Error(`bad address in field ${field}`)
    return found
  }
  const contract: TronContract =
    type === 'TransferContract'
      ? { type, owner: address(1), to: address(2), amount: numberOf(value, 3) }
      : {
          type,
          owner: address(1),
          contractAddress: address(2),
          callValue: numberOf(value, 3),
          data: bytesOf(value, 4),
        }
  return {
    refBlockBytes: bytesOf(fields, 1),
    refBlockHash: bytesOf(fields, 4),
    expiration: Number(numberOf(fields, 8)),
    data: bytesOf(fields, 10),
    contract,
    timestamp: Number(numberOf(fields, 14)),
    feeLimit: numberOf(fields, 18),
  }
}

/** txID: sha256 of the raw bytes, hex. */
export function tronTransactionId(rawBytes: Uint8Array): string {
  return bytesToHex(sha256(rawBytes))
}

// ---------------------------------------------------------------------------------------------
// JSON (`raw_data` as the node renders it)

/** The node's JSON rendering of `Transaction.raw`. */
export interface TronRawDataJson {
  readonly contract: readonly {
    readonly parameter: { readonly value: Record<string, unknown>; readonly type_url: string }
    readonly type: string
  }[]
  readonly ref_block_bytes: string
  readonly ref_block_hash: string
  readonly expiration: number
  readonly timestamp: number
  readonly data?: string
  readonly fee_limit?: number
}

/** A transaction as the node API serves and takes it. */
export interface TronTransactionJson {
  readonly txID: string
  readonly raw_data: TronRawDataJson
  readonly raw_data_hex: string
  readonly visible: boolean
  readonly signature?: readonly string[]
}

/** An address as the node renders it: base58 when `visible`, else 41-hex. */
export function tronRenderAddress(address21: Uint8Array, visible: boolean): string {
  return visible ? tronBase58(address21) : bytesToHex(address21)
}

/** Renders raw data as the node's JSON (`visible`: base58 addresses). */
export function tronRawToJson(raw: TronRawTransaction, visible: boolean): TronRawDataJson {
  const contract = raw.contract
  const value: Record<string, unknown> =
    contract.type === 'TransferContract'
      ? {
          amount: Number(contract.amount),
          owner_address: tronRenderAddress(contract.owner, visible),
          to_address: tronRenderAddress(contract.to, visible),
        }
      : {
          data: bytesToHex(contract.data),
          owner_address: tronRenderAddress(contract.owner, visible),
          contract_address: tronRenderAddress(contract.contractAddress, visible),
          ...(contract.callValue > 0n ? { call_value: Number(contract.callValue) } : {}),
        }
  return {
    contract: [{ parameter: { value, type_url: `${TYPE_URL}${contract.type}` }, type: contract.type }],
    ref_block_bytes: bytesToHex(raw.refBlockBytes),
    ref_block_hash: bytesToHex(raw.refBlockHash),
    expiration: raw.expiration,
    timestamp: raw.timestamp,
    ...(raw.data.length > 0 ? { data: bytesToHex(raw.data) } : {}),
    ...(raw.feeLimit > 0n ? { fee_limit: Number(raw.feeLimit) } : {}),
  }
}

/** A transaction (unsigned) in the node's JSON form. */
export function tronTransactionJson(raw: TronRawTransaction, visible: boolean): TronTransactionJson {
  const bytes = tronEncodeRaw(raw)
  return {
    txID: tronTransactionId(bytes),
    raw_data: tronRawToJson(raw, visible),
    raw_data_hex: bytesToHex(bytes),
    visible,
  }
}

/** The same raw data with another expiration (a new txID follows from it). */
export function tronWithExpiration(raw: TronRawTransaction, expiration: number): TronRawTransaction {
  return { ...raw, expiration }
}

// ---------------------------------------------------------------------------------------------
// signatures

/** Signs a txID (hex) with a secp256k1 key: 65 bytes r‖s‖v, v = 27 + recovery id, hex. */
export function tronSignTransactionId(privateKey: Uint8Array, txId: string): string {
  const signature = secp256k1.sign(hexToBytes(txId), privateKey)
  return bytesToHex(Uint8Array.from([...signature.toCompactRawBytes(), 27 + signature.recovery]))
}

/**
 * Signs a transaction as a wallet does (its `txID` as given, not recomputed) and returns it with
 * `signature` set. `privateKey` is 0x-hex, plain hex or bytes.
 */
export function tronSignTransaction<T extends { readonly txID: string }>(
  privateKey: string | Uint8Array,
  transaction: T,
): T & { readonly signature: readonly string[] } {
  const key = typeof privateKey === 'string' ? hexToBytes(privateKey.replace(/^0x/, '')) : privateKey
  return { ...transaction, signature: [tronSignTransactionId(key, transaction.txID)] }
}

/** The address (21 bytes) that made `signature` (hex r‖s‖v, v 0/1 or 27/28) over `txId`; undefined when it does not recover. */
export function tronRecoverSigner(txId: string, signature: string): Uint8Array | undefined {
  try {
    if (!/^[0-9a-fA-F]{130}$/.test(signature)) return undefined
    const bytes = hexToBytes(signature)
    const v = bytes[64] as number
    const recovery = v >= 27 ? v - 27 : v
    if (recovery !== 0 && recovery !== 1) return undefined
    const point = secp256k1.Signature.fromCompact(bytes.subarray(0, 64))
      .addRecoveryBit(recovery)
      .recoverPublicKey(hexToBytes(txId))
    return tronAddressOfPublicKey(point.toRawBytes(false))
  } catch {
    return undefined
  }
}

/** The ABI selector of a function signature: first 4 bytes of keccak256. */
export function tronSelector(signature: string): Uint8Array {
  return keccak_256(new TextEncoder().encode(signature)).subarray(0, 4)
}

export { bytesToHex as tronHex, hexToBytes as tronBytes }
