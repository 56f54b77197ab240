/**
 * Hyperliquid user-signed actions (`usdSend`, `spotSend`): their EIP-712 form, signing (the
 * wallet's side, for tests), signer recovery (the venue's side) and the devnet's transaction hash.
 */
import {
  concat,
  type Hex,
  hashTypedData,
  keccak256,
  numberToHex,
  pad,
  parseSignature,
  recoverAddress,
  type TypedDataDefinition,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** `usdSend`: perps USDC from the signer to `destination`. */
export interface HyperliquidUsdSendAction {
  readonly type: 'usdSend'
  readonly hyperliquidChain: string
  /** The EIP-712 domain's chain id, hex (e.g. `0xa4b1`, `0x66eee`). */
  readonly signatureChainId: string
  readonly destination: string
  /** Decimal string in whole units, e.g. `"12.5"`. */
  readonly amount: string
  /** Unix milliseconds; equals the request's nonce. */
  readonly time: number
}

/** `spotSend`: a spot token (`token` is `NAME:0xtokenid`) from the signer to `destination`. */
export interface HyperliquidSpotSendAction {
  readonly type: 'spotSend'
  readonly hyperliquidChain: string
  readonly signatureChainId: string
  readonly destination: string
  readonly token: string
  readonly amount: string
  readonly time: number
}

/** The user-signed actions the devnet executes. */
export type HyperliquidSendAction = HyperliquidUsdSendAction | HyperliquidSpotSendAction

/** A signature as `/exchange` takes it. */
export interface HyperliquidSignature {
  readonly r: Hex
  readonly s: Hex
  /** 27 or 28. */
  readonly v: number
}

/** The EIP-712 domain name of user-signed actions. */
export const HYPERLIQUID_SIGN_DOMAIN_NAME = 'HyperliquidSignTransaction'

const USD_SEND_TYPE = 'HyperliquidTransaction:UsdSend'
const SPOT_SEND_TYPE = 'HyperliquidTransaction:SpotSend'

/** The EIP-712 types of each action, as Hyperliquid's SDKs sign them. */
export const HYPERLIQUID_ACTION_TYPES = Object.freeze({
  [USD_SEND_TYPE]: [
    { name: 'hyperliquidChain', type: 'string' },
    { name: 'destination', type: 'string' },
    { name: 'amount', type: 'string' },
    { name: 'time', type: 'uint64' },
  ],
  [SPOT_SEND_TYPE]: [
    { name: 'hyperliquidChain', type: 'string' },
    { name: 'destination', type: 'string' },
    { name: 'token', type: 'string' },
    { name: 'amount', type: 'string' },
    { name: 'time', type: 'uint64' },
  ],
})

/** The typed data a wallet signs for `action` (one primary type per action). */
function typedDataOf(action: HyperliquidSendAction): TypedDataDefinition {
  const domain = {
    name: HYPERLIQUID_SIGN_DOMAIN_NAME,
    version: '1',
    chainId: Number.parseInt(action.signatureChainId, 16),
    verifyingContract: `0x${'0'.repeat(40)}` as Hex,
  }
  if (action.type === 'usdSend') {
    return {
      domain,
      types: { [USD_SEND_TYPE]: HYPERLIQUID_ACTION_TYPES[USD_SEND_TYPE] },
      primaryType: USD_SEND_TYPE,
      message: {
        hyperliquidChain: action.hyperliquidChain,
        destination: action.destination,
        amount: action.amount,
        time: BigInt(action.time),
      },
    }
  }
  return {
    domain,
    types: { [SPOT_SEND_TYPE]: HYPERLIQUID_ACTION_TYPES[SPOT_SEND_TYPE] },
    primaryType: SPOT_SEND_TYPE,
    message: {
      hyperliquidChain: action.hyperliquidChain,
      destination: action.destination,
      token: action.token,
      amount: action.amount,
      time: BigInt(action.time),
    },
  }
}

/** The EIP-712 digest a wallet signs for `action`. */
export function hyperliquidActionDigest(action: HyperliquidSendAction): Hex {
  return hashTypedData(typedDataOf(action))
}

/** Signs `action` with `privateKey` as a wallet does (EIP-712), in `/exchange`'s `{r, s, v}` form. */
export async function hyperliquidSignAction(
  privateKey: Hex,
  action: HyperliquidSendAction,
): Promise<HyperliquidSignature> {
  const serialized = await privateKeyToAccount(privateKey).signTypedData(typedDataOf(action))
  const { r, s, yParity } = parseSignature(serialized)
  return { r, s, v: 27 + yParity }
}

/**
 * The address that signed `action` (lower case).
 * @throws Error when the signature does not recover to any key.
 */
export async function hyperliquidRecoverSigner(
  action: HyperliquidSendAction,
  signature: HyperliquidSignature,
): Promise<`0x${string}`> {
  const address = await recoverAddress({
    hash: hyperliquidActionDigest(action),
    signature: { r: signature.r, s: signature.s, v: BigInt(signature.v) },
  })
  return address.toLowerCase() as `0x${string}`
}

/**
 * The devnet's transaction hash of a signed action: keccak256(digest ‖ r ‖ s ‖ v), 32 bytes each
 * for the digest, r and s, one byte for v. Anyone holding the signed action computes it before
 * posting. (The real venue's hashes are its own and differ.)
 */
export function hyperliquidTransactionHash(
  action: HyperliquidSendAction,
  signature: HyperliquidSignature,
): Hex {
  return keccak256(
    concat([
      hyperliquidActionDigest(action),
      pad(signature.r, { size: 32 }),
      pad(signature.s, { size: 32 }),
      numberToHex(signature.v, { size: 1 }),
    ]),
  )
}
