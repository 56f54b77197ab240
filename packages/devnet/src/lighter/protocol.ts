/**
 * The simulator's transfer rules, in one place so a client can mirror them: the fields of a transfer
 * (`tx_info` of `POST /api/v1/sendTx` with `tx_type` 12), the canonical bytes an API key signs, and
 * the transaction hash. The real venue signs with its own Schnorr/Poseidon scheme; the simulator
 * signs these bytes with ed25519 (see README.md).
 *
 * Signed message (all integers big-endian, unsigned):
 *
 * | bytes | field |
 * | --- | --- |
 * | 30 | ASCII `pontis-lighter-sim/transfer/v1` (domain tag) |
 * | 4 | chain id (3586256) |
 * | 8 | FromAccountIndex |
 * | 1 | ApiKeyIndex |
 * | 8 | ToAccountIndex |
 * | 2 | AssetIndex |
 * | 1 | FromRouteType |
 * | 1 | ToRouteType |
 * | 8 | Amount |
 * | 8 | USDCFee |
 * | 32 | Memo |
 * | 8 | ExpiredAt (Unix milliseconds) |
 * | 8 | Nonce |
 *
 * `Sig` is the 64-byte ed25519 signature of those bytes, 0x-hex. The transaction hash is
 * `0x` + hex(sha256(message ‖ signature)): ed25519 is deterministic, so the signer knows the hash
 * before sending.
 */
import { ed25519 } from '@noble/curves/ed25519'
import {
  hexBytes,
  type LighterTransfer,
  type SignedLighterTransfer,
  signTransfer,
  toHex,
  transferHash,
  transferMessage,
} from '@pontis/plugin-lighter/protocol'

/** The chain id the service assigns the venue. */
export const LIGHTER_DEVNET_CHAIN_ID = 3586256
/** `tx_type` of a transfer in `POST /api/v1/sendTx`. */
export const LIGHTER_TX_TYPE_TRANSFER = 12
/** `status` of an executed transaction in `GET /api/v1/tx` and `/accountTxs`. */
export const LIGHTER_TX_STATUS_EXECUTED = 2
/**
 * `status` of a transaction that failed at execution: stored, no funds moved. The simulator stores
 * one only when a test asks for it (`LighterVenue.recordFailedTransfer`).
 */
export const LIGHTER_TX_STATUS_FAILED = 3
/** The venue's asset index of USDC. */
export const LIGHTER_USDC_ASSET_INDEX = 3
/** Decimals of USDC on the venue. */
export const LIGHTER_USDC_DECIMALS = 6
/** Route types: the perpetuals collateral balance and the spot balance. */
export const LIGHTER_ROUTE_PERPS = 0
export const LIGHTER_ROUTE_SPOT = 1
/** Largest account index (48 bits; sub-accounts use the high end). */
export const LIGHTER_MAX_ACCOUNT_INDEX = 2 ** 48 - 1
/** Largest API key index. */
export const LIGHTER_MAX_API_KEY_INDEX = 254

/** A transfer's signed fields, with JSON-safe integers (amounts stay below 2^53). */
export type LighterTransferFields = LighterTransfer
/** The `tx_info` of a transfer: its fields and the ed25519 signature of {@link lighterTransferMessage}. */
export type LighterTransferInfo = SignedLighterTransfer

/**
 * The canonical bytes an API key signs for a transfer: the plugin's own encoding, which the
 * simulator checks signatures against.
 * @throws RangeError when a field does not fit its width; TypeError when the memo is not 32 bytes.
 */
export function lighterTransferMessage(fields: LighterTransferFields): Uint8Array {
  return transferMessage(fields)
}

/** The transaction hash of a signed transfer: `0x` + hex(sha256(message ‖ signature)). */
export function lighterTransferHash(info: LighterTransferInfo): `0x${string}` {
  return transferHash(info)
}

/** The ed25519 public key (0x-hex) of an API key seed (0x-hex, 32 bytes). */
export function lighterApiPublicKey(seed: string): `0x${string}` {
  return toHex(ed25519.getPublicKey(hexBytes(seed)))
}

/** Signs a transfer with an API key seed (0x-hex, 32 bytes), as a wallet or the solver does. */
export function lighterSignTransfer(
  fields: LighterTransferFields,
  seed: string,
): { info: LighterTransferInfo; hash: `0x${string}`; txInfo: string } {
  const info = signTransfer(fields, seed)
  return { info, hash: transferHash(info), txInfo: JSON.stringify(info) }
}

/** True when `signature` (0x-hex) is the API key `publicKey`'s signature of the transfer. */
export function lighterVerifyTransfer(info: LighterTransferInfo, publicKey: string): boolean {
  try {
    return ed25519.verify(hexBytes(info.Sig), transferMessage(info), hexBytes(publicKey))
  } catch {
    return false
  }
}

/** `micro` smallest units (6 decimals) as the venue's decimal string, e.g. `12.5` → "12.500000". */
export function lighterUsdcDecimal(micro: bigint): string {
  const sign = micro < 0n ? '-' : ''
  const magnitude = micro < 0n ? -micro : micro
  const whole = magnitude / 1_000_000n
  const fraction = (magnitude % 1_000_000n).toString().padStart(LIGHTER_USDC_DECIMALS, '0')
  return `${sign}${whole}.${fraction}`
}
