/**
 * Solidity `abi.encode` of the few shapes the hub's keys, ids and actions use, written straight into
 * bytes. viem's `encodeAbiParameters` (parameter checks, hex strings concatenated and padded) cost
 * ≈ 0.2 ms of every deposit attestation (five calls) in each of the three oracles an aggregated
 * request runs. The output equals viem's (test/abi.test.ts); a value viem refuses (an integer out of
 * range, hex that is not whole bytes) goes to viem, so the errors stay viem's.
 */
import { encodeAbiParameters, type Hex, hexToBytes } from 'viem'

/** One parameter and its value. */
export type AbiValue =
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'bytes'; readonly value: Hex }
  | { readonly type: 'uint256'; readonly value: bigint }
  | { readonly type: 'string[]'; readonly value: readonly string[] }

const WORD = 32
const WHOLE_BYTES_HEX = /^0x(?:[0-9a-fA-F]{2})*$/
const BYTES32_HEX = /^0x[0-9a-fA-F]{64}$/
const MAX_UINT256 = (1n << 256n) - 1n
const utf8 = new TextEncoder()

const isEncodable = (entry: AbiValue): boolean =>
  entry.type === 'bytes'
    ? WHOLE_BYTES_HEX.test(entry.value)
    : entry.type === 'uint256'
      ? entry.value >= 0n && entry.value <= MAX_UINT256
      : true

/** A 32-byte word holding `value` (0 ≤ value < 2^256), big-endian, as 64 hex digits. */
const wordHex = (value: bigint | number): string => value.toString(16).padStart(64, '0')

/** `data` behind its length word, zero-padded to whole words: a dynamic `bytes` or `string` tail. */
function lengthPrefixed(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(WORD + Math.ceil(data.length / WORD) * WORD)
  writeSmall(out, 0, data.length)
  out.set(data, WORD)
  return out
}

/** Writes a non-negative safe integer (a length or an offset) into the zeroed word at `offset`. */
function writeSmall(out: Uint8Array, offset: number, value: number): void {
  let rest = value
  for (let at = offset + WORD - 1; rest > 0; at--) {
    out[at] = rest % 256
    rest = Math.floor(rest / 256)
  }
}

/** Concatenates `parts` behind a head of one word each: an inline word or the offset of a tail. */
function headAndTails(parts: readonly (Uint8Array | { readonly word: bigint })[]): Uint8Array {
  let size = WORD * parts.length
  for (const part of parts) if (part instanceof Uint8Array) size += part.length
  const out = new Uint8Array(size)
  let tailAt = WORD * parts.length
  parts.forEach((part, index) => {
    if (part instanceof Uint8Array) {
      writeSmall(out, WORD * index, tailAt)
      out.set(part, tailAt)
      tailAt += part.length
    } else {
      out.set(Buffer.from(wordHex(part.word), 'hex'), WORD * index)
    }
  })
  return out
}

function partOf(entry: AbiValue): Uint8Array | { readonly word: bigint } {
  switch (entry.type) {
    case 'string':
      return lengthPrefixed(utf8.encode(entry.value))
    case 'bytes':
      return lengthPrefixed(Buffer.from(entry.value.slice(2), 'hex'))
    case 'uint256':
      return { word: entry.value }
    case 'string[]': {
      const elements = headAndTails(entry.value.map((value) => lengthPrefixed(utf8.encode(value))))
      const out = new Uint8Array(WORD + elements.length)
      writeSmall(out, 0, entry.value.length)
      out.set(elements, WORD)
      return out
    }
  }
}

/** `abi.encode(values...)` as bytes, equal to viem's `encodeAbiParameters` of the same types and values. */
export function abiEncode(values: readonly AbiValue[]): Uint8Array {
  if (!values.every(isEncodable)) {
    return hexToBytes(
      encodeAbiParameters(
        values.map((entry) => ({ type: entry.type })),
        values.map((entry) => entry.value),
      ),
    )
  }
  return headAndTails(values.map(partOf))
}

const UINT =
  /^uint(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)$/

/** One static word as 64 hex digits as viem writes it (`bytes32` as given, case kept), or undefined. */
function staticWord(type: string, value: unknown): string | undefined {
  if (type === 'bytes32')
    return typeof value === 'string' && BYTES32_HEX.test(value) ? value.slice(2) : undefined
  const bits = UINT.exec(type)?.[1]
  if (bits === undefined) return undefined
  const integer = typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value
  if (typeof integer !== 'bigint' || integer < 0n || integer >= 1n << BigInt(bits)) return undefined
  return wordHex(integer)
}

/**
 * `abi.encode` of static `uintN` and `bytes32` values as 0x-hex, equal to viem's
 * `encodeAbiParameters`; undefined for any other type or a value viem would refuse (the caller
 * then asks viem, for its answer or its error).
 */
export function encodeStaticWords(
  types: readonly { readonly type: string }[],
  values: readonly unknown[],
): Hex | undefined {
  if (types.length !== values.length) return undefined
  let hex = '0x'
  for (const [index, { type }] of types.entries()) {
    const word = staticWord(type, values[index])
    if (word === undefined) return undefined
    hex += word
  }
  return hex as Hex
}
