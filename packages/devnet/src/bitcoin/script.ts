/**
 * Script helpers of the Bitcoin devnet: a byte-exact script parser (bitcoinjs' decompile rewrites
 * pushes minimally, which would hide non-canonical encodings), the output classification and the
 * assembly text Esplora prints (rust-bitcoin's `to_asm` style, e.g. `OP_0 OP_PUSHBYTES_20 <hex>`).
 */
import { address, opcodes } from 'bitcoinjs-lib'
import { BITCOIN_DEVNET_NETWORK } from './accounts.js'

/** One script element: an opcode, with its pushed bytes when it is a push (OP_0 pushes nothing). */
export interface ScriptChunk {
  readonly opcode: number
  readonly data?: Uint8Array
}

const OP_PUSHDATA1 = 0x4c
const OP_PUSHDATA2 = 0x4d
const OP_PUSHDATA4 = 0x4e
const OP_1NEGATE = 0x4f
const OP_1 = 0x51
const OP_16 = 0x60
/** The last opcode that only pushes (OP_16); anything above executes. */
const MAX_PUSH_OPCODE = OP_16

/** Parses `script` into chunks; undefined when a push runs past the end. */
export function parseScript(script: Uint8Array): ScriptChunk[] | undefined {
  const chunks: ScriptChunk[] = []
  let offset = 0
  while (offset < script.length) {
    const opcode = script[offset++]!
    let length: number
    if (opcode > 0 && opcode < OP_PUSHDATA1) length = opcode
    else if (opcode === OP_PUSHDATA1) {
      if (offset + 1 > script.length) return undefined
      length = script[offset]!
      offset += 1
    } else if (opcode === OP_PUSHDATA2) {
      if (offset + 2 > script.length) return undefined
      length = script[offset]! | (script[offset + 1]! << 8)
      offset += 2
    } else if (opcode === OP_PUSHDATA4) {
      if (offset + 4 > script.length) return undefined
      length = new DataView(script.buffer, script.byteOffset + offset, 4).getUint32(0, true)
      offset += 4
    } else {
      chunks.push({ opcode })
      continue
    }
    if (offset + length > script.length) return undefined
    chunks.push({ opcode, data: script.subarray(offset, offset + length) })
    offset += length
  }
  return chunks
}

/** Whether every chunk only pushes data (what a standard scriptSig may contain). */
export function isPushOnly(chunks: readonly ScriptChunk[]): boolean {
  return chunks.every((chunk) => chunk.opcode <= MAX_PUSH_OPCODE)
}

/** The bytes pushed by each chunk of a push-only script (OP_1..OP_16 push their number). */
export function pushedItems(chunks: readonly ScriptChunk[]): Uint8Array[] {
  return chunks.map((chunk) => {
    if (chunk.data) return chunk.data
    if (chunk.opcode === 0) return new Uint8Array(0)
    if (chunk.opcode === OP_1NEGATE) return Uint8Array.of(0x81)
    return Uint8Array.of(chunk.opcode - OP_1 + 1)
  })
}

function opcodeName(opcode: number): string {
  if (opcode === 0) return 'OP_0'
  if (opcode === OP_1NEGATE) return 'OP_PUSHNUM_NEG1'
  if (opcode >= OP_1 && opcode <= OP_16) return `OP_PUSHNUM_${opcode - OP_1 + 1}`
  if (opcode === 0xb1) return 'OP_CLTV'
  if (opcode === 0xb2) return 'OP_CSV'
  if (opcode === 0xba) return 'OP_CHECKSIGADD'
  if (opcode === 0xff) return 'OP_INVALIDOPCODE'
  if (opcode > 0xba) return `OP_RETURN_${opcode}`
  return (opcodes as unknown as Record<number, string>)[opcode] ?? `OP_UNKNOWN_${opcode}`
}

/** Esplora's assembly text of a script (rust-bitcoin format). */
export function scriptAsm(script: Uint8Array): string {
  const parts: string[] = []
  let offset = 0
  while (offset < script.length) {
    const opcode = script[offset++]!
    let length: number | undefined
    let prefix = 0
    if (opcode > 0 && opcode < OP_PUSHDATA1) length = opcode
    else if (opcode === OP_PUSHDATA1) prefix = 1
    else if (opcode === OP_PUSHDATA2) prefix = 2
    else if (opcode === OP_PUSHDATA4) prefix = 4
    if (prefix > 0) {
      if (offset + prefix > script.length) {
        parts.push('<unexpected end>')
        break
      }
      length = 0
      for (let index = prefix - 1; index >= 0; index--) length = length * 256 + script[offset + index]!
      offset += prefix
    }
    if (length === undefined) {
      parts.push(opcodeName(opcode))
      continue
    }
    const name = prefix > 0 ? `OP_PUSHDATA${prefix}` : `OP_PUSHBYTES_${length}`
    if (offset + length > script.length) {
      parts.push(name, '<push past end>')
      break
    }
    parts.push(name, Buffer.from(script.subarray(offset, offset + length)).toString('hex'))
    offset += length
  }
  return parts.join(' ')
}

/** Esplora's `scriptpubkey_type` values. */
export type OutputType =
  | 'empty'
  | 'op_return'
  | 'p2pk'
  | 'p2pkh'
  | 'p2sh'
  | 'v0_p2wpkh'
  | 'v0_p2wsh'
  | 'v1_p2tr'
  | 'unknown'

/** A segwit output's version and program (BIP141: a version opcode then one 2..40-byte push). */
export function witnessProgram(script: Uint8Array): { version: number; program: Uint8Array } | undefined {
  if (script.length < 4 || script.length > 42) return undefined
  const versionOpcode = script[0]!
  if (versionOpcode !== 0 && (versionOpcode < OP_1 || versionOpcode > OP_16)) return undefined
  if (script[1]! + 2 !== script.length) return undefined
  return { version: versionOpcode === 0 ? 0 : versionOpcode - OP_1 + 1, program: script.subarray(2) }
}

function isP2pk(script: Uint8Array): boolean {
  return (
    (script.length === 35 && script[0] === 33 && script[34] === 0xac) ||
    (script.length === 67 && script[0] === 65 && script[66] === 0xac)
  )
}

/** The Esplora type of an output script. */
export function classifyOutput(script: Uint8Array): OutputType {
  if (script.length === 0) return 'empty'
  if (script[0] === 0x6a) return 'op_return'
  if (isP2pk(script)) return 'p2pk'
  if (
    script.length === 25 &&
    script[0] === 0x76 &&
    script[1] === 0xa9 &&
    script[2] === 20 &&
    script[23] === 0x88 &&
    script[24] === 0xac
  )
    return 'p2pkh'
  if (script.length === 23 && script[0] === 0xa9 && script[1] === 20 && script[22] === 0x87) return 'p2sh'
  const witness = witnessProgram(script)
  if (witness?.version === 0 && witness.program.length === 20) return 'v0_p2wpkh'
  if (witness?.version === 0 && witness.program.length === 32) return 'v0_p2wsh'
  if (witness?.version === 1 && witness.program.length === 32) return 'v1_p2tr'
  return 'unknown'
}

/** The regtest address of an output script; undefined for scripts without one (OP_RETURN, P2PK…). */
export function outputAddress(script: Uint8Array): string | undefined {
  try {
    return address.fromOutputScript(script, BITCOIN_DEVNET_NETWORK)
  } catch {
    return undefined
  }
}

/**
 * The output script of a regtest address; undefined when `text` is not one (any other network,
 * bad checksum, unknown format).
 */
export function addressScript(text: string): Uint8Array | undefined {
  try {
    return address.toOutputScript(text, BITCOIN_DEVNET_NETWORK)
  } catch {
    return undefined
  }
}

/** Hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

/** Bytes of a hex string (the caller checks the format). */
export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'))
}
