/**
 * Hyperliquid user-signed sends (`usdSend` for perps USDC, `spotSend` for spot tokens): building,
 * EIP-712 signing, the transaction hash this plugin and the devnet agree on, and the deposit tag.
 *
 * Transfers on Hyperliquid carry no memo, so a transfer is recognised by its sender and nonce:
 * its tag is keccak256(encodePacked(address sender, uint64 nonce)). Deposits report it as their
 * `depositId`; fills and refunds as their `orderId`, where the binding nonce → order is the
 * solver's own record (the venue knows no order ids, so the oracle cannot check a fill by order id).
 */
import {
  concat,
  encodePacked,
  type Hex,
  hashTypedData,
  keccak256,
  numberToHex,
  pad,
  parseSignature,
  type TypedDataDefinition,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** `usdSend`: perps USDC from the signer to `destination`. */
export interface HyperliquidUsdSend {
  readonly type: 'usdSend'
  readonly hyperliquidChain: string
  readonly signatureChainId: string
  readonly destination: string
  /** Decimal string in whole units. */
  readonly amount: string
  /** Unix milliseconds, equal to the nonce. */
  readonly time: number
}

/** `spotSend`: a spot token (`token` = `NAME:0xtokenid`) from the signer to `destination`. */
export interface HyperliquidSpotSend {
  readonly type: 'spotSend'
  readonly hyperliquidChain: string
  readonly signatureChainId: string
  readonly destination: string
  readonly token: string
  readonly amount: string
  readonly time: number
}

/** The sends this plugin builds and reads. */
export type HyperliquidSend = HyperliquidUsdSend | HyperliquidSpotSend

/** A signature as `/exchange` takes it. */
export interface HyperliquidActionSignature {
  readonly r: Hex
  readonly s: Hex
  readonly v: number
}

/** What is posted to `/exchange` (and what a signed fill's `raw` holds, as JSON). */
export interface HyperliquidSignedAction {
  readonly action: HyperliquidSend
  readonly nonce: number
  readonly signature: HyperliquidActionSignature
}

const USD_SEND = 'HyperliquidTransaction:UsdSend'
const SPOT_SEND = 'HyperliquidTransaction:SpotSend'

/** The typed data a wallet signs for `action`. */
export function hyperliquidTypedData(action: HyperliquidSend): TypedDataDefinition {
  const domain = {
    name: 'HyperliquidSignTransaction',
    version: '1',
    chainId: Number.parseInt(action.signatureChainId, 16),
    verifyingContract: `0x${'0'.repeat(40)}` as Hex,
  }
  const head = [
    { name: 'hyperliquidChain', type: 'string' },
    { name: 'destination', type: 'string' },
  ]
  const tail = [
    { name: 'amount', type: 'string' },
    { name: 'time', type: 'uint64' },
  ]
  const common = {
    hyperliquidChain: action.hyperliquidChain,
    destination: action.destination,
    amount: action.amount,
    time: BigInt(action.time),
  }
  if (action.type === 'usdSend') {
    return { domain, types: { [USD_SEND]: [...head, ...tail] }, primaryType: USD_SEND, message: common }
  }
  return {
    domain,
    types: { [SPOT_SEND]: [...head, { name: 'token', type: 'string' }, ...tail] },
    primaryType: SPOT_SEND,
    message: { ...common, token: action.token },
  }
}

/** Signs `action` with a secp256k1 private key (0x-hex), as `/exchange` takes it. */
export async function signHyperliquidSend(
  privateKey: Hex,
  action: HyperliquidSend,
): Promise<HyperliquidSignedAction> {
  const serialized = await privateKeyToAccount(privateKey).signTypedData(hyperliquidTypedData(action))
  const { r, s, yParity } = parseSignature(serialized)
  return { action, nonce: action.time, signature: { r, s, v: 27 + yParity } }
}

/**
 * The transaction hash of a signed send: keccak256(EIP-712 digest ‖ r ‖ s ‖ v), the digest, r and
 * s 32 bytes each and v one byte. The devnet names transactions by it; the real venue's hashes
 * are its own and differ (see README.md).
 */
export function hyperliquidSendHash(action: HyperliquidSend, signature: HyperliquidActionSignature): Hex {
  return keccak256(
    concat([
      hashTypedData(hyperliquidTypedData(action)),
      pad(signature.r, { size: 32 }),
      pad(signature.s, { size: 32 }),
      numberToHex(signature.v, { size: 1 }),
    ]),
  )
}

/** The tag of a transfer by `sender` signed with `nonce`: keccak256(encodePacked(address, uint64)). */
export function hyperliquidDepositTag(sender: string, nonce: bigint): Hex {
  return keccak256(encodePacked(['address', 'uint64'], [sender as Hex, nonce]))
}
