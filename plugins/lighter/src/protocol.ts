/**
 * The transfer rules of the venue as the devnet's simulator defines them (its
 * `packages/devnet/src/lighter/protocol.ts`; this is the plugin's own copy, kept identical): the
 * canonical bytes an API key signs with ed25519, and the transaction hash
 * `0x` + hex(sha256(message ‖ signature)), known before sending.
 *
 * Message (integers big-endian, unsigned): ASCII `pontis-lighter-sim/transfer/v1`, chain id (4),
 * FromAccountIndex (8), ApiKeyIndex (1), ToAccountIndex (8), AssetIndex (2), FromRouteType (1),
 * ToRouteType (1), Amount (8), USDCFee (8), Memo (32), ExpiredAt (8, Unix ms), Nonce (8).
 */
import { ed25519 } from '@noble/curves/ed25519'
import { sha256 } from '@noble/hashes/sha2'
import { LIGHTER_CHAIN_ID } from './config.js'

const DOMAIN_TAG = new TextEncoder().encode('pontis-lighter-sim/transfer/v1')

/** A transfer's signed fields (`tx_info` without `Sig`), JSON-safe integers. */
export interface LighterTransfer {
  readonly FromAccountIndex: number
  readonly ApiKeyIndex: number
  readonly ToAccountIndex: number
  readonly AssetIndex: number
  readonly FromRouteType: number
  readonly ToRouteType: number
  readonly Amount: number
  readonly USDCFee: number
  /** 32 bytes, 0x-hex. */
  readonly Memo: string
  /** Unix milliseconds. */
  readonly ExpiredAt: number
  readonly Nonce: number
}

/** A signed transfer: the `tx_info` of `sendTx`. */
export interface SignedLighterTransfer extends LighterTransfer {
  /** ed25519 signature, 0x-hex (64 bytes). */
  readonly Sig: string
}

/** Bytes of a 0x-hex (or bare hex) string. */
export function hexBytes(hex: string): Uint8Array {
  const digits = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex
  if (!/^([0-9a-fA-F]{2})*$/.test(digits)) throw new TypeError('not hex')
  return Uint8Array.from(Buffer.from(digits, 'hex'))
}

/** 0x-hex of bytes. */
export function toHex(bytes: Uint8Array): `0x${string}` {
  return `0x${Buffer.from(bytes).toString('hex')}`
}

/**
 * The canonical bytes an API key signs.
 * @throws RangeError when a field does not fit its width, TypeError when the memo is not 32 bytes.
 */
export function transferMessage(transfer: LighterTransfer): Uint8Array {
  const memo = hexBytes(transfer.Memo)
  if (memo.length !== 32) throw new TypeError('memo must be 32 bytes')
  const widths: [1 | 2 | 4 | 8, number][] = [
    [4, LIGHTER_CHAIN_ID],
    [8, transfer.FromAccountIndex],
    [1, transfer.ApiKeyIndex],
    [8, transfer.ToAccountIndex],
    [2, transfer.AssetIndex],
    [1, transfer.FromRouteType],
    [1, transfer.ToRouteType],
    [8, transfer.Amount],
    [8, transfer.USDCFee],
  ]
  const tail: [1 | 2 | 4 | 8, number][] = [
    [8, transfer.ExpiredAt],
    [8, transfer.Nonce],
  ]
  const size = (list: [number, number][]) => list.reduce((sum, [width]) => sum + width, 0)
  const message = new Uint8Array(DOMAIN_TAG.length + size(widths) + 32 + size(tail))
  const view = new DataView(message.buffer)
  message.set(DOMAIN_TAG, 0)
  let offset = DOMAIN_TAG.length
  const write = ([width, value]: [1 | 2 | 4 | 8, number]) => {
    if (!Number.isSafeInteger(value) || value < 0 || (width < 8 && value >= 2 ** (8 * width))) {
      throw new RangeError(`${value} does not fit ${width} unsigned bytes`)
    }
    if (width === 1) view.setUint8(offset, value)
    else if (width === 2) view.setUint16(offset, value)
    else if (width === 4) view.setUint32(offset, value)
    else view.setBigUint64(offset, BigInt(value))
    offset += width
  }
  widths.forEach(write)
  message.set(memo, offset)
  offset += 32
  tail.forEach(write)
  return message
}

/** The transaction hash of a signed transfer, lower-case 0x-hex (32 bytes). */
export function transferHash(signed: SignedLighterTransfer): `0x${string}` {
  const message = transferMessage(signed)
  const signature = hexBytes(signed.Sig)
  const joined = new Uint8Array(message.length + signature.length)
  joined.set(message, 0)
  joined.set(signature, message.length)
  return toHex(sha256(joined))
}

/** Signs a transfer with an API key seed (32 bytes, 0x-hex). */
export function signTransfer(transfer: LighterTransfer, seed: string): SignedLighterTransfer {
  const Sig = toHex(ed25519.sign(transferMessage(transfer), hexBytes(seed)))
  return { ...transfer, Memo: transfer.Memo.toLowerCase(), Sig }
}
