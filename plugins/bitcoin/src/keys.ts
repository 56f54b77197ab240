/**
 * Keys: the secp256k1 backend (registered with bitcoinjs once, for Taproot), solver and vault keys,
 * and the keys of per-request deposit addresses, derived from a secret seed and the request id.
 */
import { createHmac } from 'node:crypto'
import * as ecc from '@bitcoinerlab/secp256k1'
import { PontisError } from '@pontis/core/plugin'
import { crypto as bitcoinCrypto, initEccLib, type Network, payments } from 'bitcoinjs-lib'
import { ECPairFactory, type ECPairInterface } from 'ecpair'

initEccLib(ecc)

/** Key pairs over the pure-JavaScript secp256k1 backend. */
export const ECPair = ECPairFactory(ecc)

const HEX_KEY = /^(0x)?[0-9a-fA-F]{64}$/

/**
 * The key pair of a secret: a 32-byte private key in hex (with or without 0x) or a WIF string of
 * `network` (mainnet keys start with K, L or 5; test networks' with c or 9). Always compressed
 * for hex keys, so its P2WPKH address is standard.
 * @throws PontisError INVALID_REQUEST naming the key, never echoing the secret.
 */
export function keyPairOf(secret: string, name: string, network: Network): ECPairInterface {
  const trimmed = secret.trim()
  try {
    if (HEX_KEY.test(trimmed)) {
      const bytes = Buffer.from(trimmed.replace(/^0x/, ''), 'hex')
      return ECPair.fromPrivateKey(bytes, { network, compressed: true })
    }
    const pair = ECPair.fromWIF(trimmed, network)
    if (!pair.compressed) throw new Error('uncompressed')
    return pair
  } catch {
    throw new PontisError(
      'INVALID_REQUEST',
      `the Bitcoin ${name} key is not a 32-byte private key in hex or a compressed-key WIF of this network`,
    )
  }
}

/** The P2WPKH address of a compressed public key. */
export function p2wpkhAddress(publicKey: Uint8Array, network: Network): string {
  return payments.p2wpkh({ pubkey: publicKey, network }).address as string
}

/** HASH160 (RIPEMD-160 of SHA-256), as addresses commit to keys and scripts. */
export function hash160(bytes: Uint8Array): Uint8Array {
  return bitcoinCrypto.hash160(bytes)
}

const DEPOSIT_ADDRESS_DOMAIN = Buffer.from('pontis/bitcoin/deposit-address/v1', 'utf8')

/**
 * The private key of a request's deposit address: HMAC-SHA256 keyed by the seed over a domain tag
 * and the 32-byte request id, so the service can re-derive it to sweep or refund, and nobody
 * without the seed can. A digest outside the curve order (odds about 2^-128) is re-derived with a
 * counter appended.
 * @throws PontisError INVALID_REQUEST when `requestId` is not 32-byte hex.
 */
export function depositAddressKey(seed: string, requestId: string): Uint8Array {
  if (!/^0x[0-9a-fA-F]{64}$/.test(requestId)) {
    throw new PontisError('INVALID_REQUEST', `request id '${requestId.slice(0, 80)}' is not 32-byte hex`)
  }
  const id = Buffer.from(requestId.slice(2), 'hex')
  for (let counter = 0; ; counter++) {
    const hmac = createHmac('sha256', Buffer.from(seed.replace(/^0x/, ''), 'hex'))
    hmac.update(DEPOSIT_ADDRESS_DOMAIN)
    hmac.update(id)
    if (counter > 0) hmac.update(Uint8Array.of(counter))
    const key = new Uint8Array(hmac.digest())
    if (ecc.isPrivate(key)) return key
  }
}

/** The key pair of a request's deposit address (see {@link depositAddressKey}). */
export function depositAddressKeyPair(seed: string, requestId: string, network: Network): ECPairInterface {
  return ECPair.fromPrivateKey(depositAddressKey(seed, requestId), { network, compressed: true })
}

/** True when `key` (33-byte compressed or 32-byte x-only public key) is a point on the curve. */
export function isPublicKey(key: Uint8Array): boolean {
  return key.length === 32 ? ecc.isXOnlyPoint(key) : key.length === 33 && ecc.isPoint(key)
}

/**
 * The Taproot output key of an internal key with no script tree (BIP 86): P + H_TapTweak(P)·G.
 * Undefined when the tweak fails (never for a valid key).
 */
export function taprootOutputKey(internalKey: Uint8Array): Uint8Array | undefined {
  const tweak = bitcoinCrypto.taggedHash('TapTweak', internalKey)
  return ecc.xOnlyPointAddTweak(internalKey, tweak)?.xOnlyPubkey
}
