/**
 * Hyperliquid user-signed actions (`usdSend`, `spotSend`): their EIP-712 form, signing (the
 * wallet's side, for tests), signer recovery (the venue's side) and the devnet's transaction hash.
 */
import {
  type HyperliquidActionSignature,
  type HyperliquidSend,
  type HyperliquidSpotSend,
  type HyperliquidUsdSend,
  hyperliquidSendHash,
  hyperliquidTypedData,
  signHyperliquidSend,
} from '@pontis/plugin-hyperliquid/actions'
import { type Hex, hashTypedData, recoverAddress } from 'viem'

/** `usdSend`: perps USDC from the signer to `destination`. */
export type HyperliquidUsdSendAction = HyperliquidUsdSend
/** `spotSend`: a spot token (`token` is `NAME:0xtokenid`) from the signer to `destination`. */
export type HyperliquidSpotSendAction = HyperliquidSpotSend
/** The user-signed actions the devnet executes. */
export type HyperliquidSendAction = HyperliquidSend
/** A signature as `/exchange` takes it (`v` 27 or 28). */
export type HyperliquidSignature = HyperliquidActionSignature

/** The EIP-712 digest a wallet signs for `action` (the plugin's typed data, one type per action). */
export function hyperliquidActionDigest(action: HyperliquidSendAction): Hex {
  return hashTypedData(hyperliquidTypedData(action))
}

/** Signs `action` with `privateKey` as a wallet does (EIP-712), in `/exchange`'s `{r, s, v}` form. */
export async function hyperliquidSignAction(
  privateKey: Hex,
  action: HyperliquidSendAction,
): Promise<HyperliquidSignature> {
  return (await signHyperliquidSend(privateKey, action)).signature
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
 * for the digest, r and s, one byte for v (the plugin's `hyperliquidSendHash`). Anyone holding the
 * signed action computes it before posting. (The real venue's hashes are its own and differ.)
 */
export function hyperliquidTransactionHash(
  action: HyperliquidSendAction,
  signature: HyperliquidSignature,
): Hex {
  return hyperliquidSendHash(action, signature)
}
