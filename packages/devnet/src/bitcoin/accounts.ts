/**
 * The Bitcoin devnet's fixed cast: secp256k1 keys whose private key is sha256(`pontis-devnet-bitcoin/<name>`),
 * on the regtest network (bech32 prefix `bcrt`), so every run, every test and the local configs agree on
 * them. Published test keys: never use them anywhere else.
 */
import { createHash } from 'node:crypto'
import * as ecc from '@bitcoinerlab/secp256k1'
import { crypto, initEccLib, type Network, networks, payments } from 'bitcoinjs-lib'
import { ECPairFactory, type ECPairInterface } from 'ecpair'

// bitcoinjs needs an ECC backend for taproot (address and output-key checks); the pure-JS one is enough.
initEccLib(ecc)

/** Builds and parses ECDSA/schnorr key pairs with the pure-JS secp256k1 backend. */
export const BitcoinECPair = ECPairFactory(ecc)

/** The network of the devnet: regtest (bech32 `bcrt`, base58 versions 0x6f / 0xc4). */
export const BITCOIN_DEVNET_NETWORK: Network = networks.regtest

/** The chain id this interface gives Bitcoin; the devnet uses it too. */
export const BITCOIN_DEVNET_CHAIN_ID = 8253038

/** The native currency identifier (an identifier, not an address one can pay) and its decimals. */
export const BITCOIN_NATIVE_CURRENCY_ID = 'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8'
export const BITCOIN_NATIVE_DECIMALS = 8

/** The script types the cast uses. */
export type BitcoinScriptKind = 'p2wpkh' | 'p2tr' | 'p2sh-p2wpkh' | 'p2pkh'

/** A named devnet account: one key, one address of `kind`. */
export interface BitcoinDevAccount {
  readonly name: string
  readonly kind: BitcoinScriptKind
  /** The account's key pair (compressed public key, regtest WIF). */
  readonly keypair: ECPairInterface
  /**
   * What signs this account's inputs: the key pair itself, except for P2TR where it is the key pair
   * tweaked by the BIP86 key-path tweak (no script tree).
   */
  readonly signer: ECPairInterface
  /** The 33-byte compressed public key. */
  readonly publicKey: Uint8Array
  /** The 32-byte x-only internal key (P2TR only). */
  readonly internalPublicKey?: Uint8Array
  /** The redeem script (P2SH-P2WPKH only: `OP_0 <hash160(publicKey)>`). */
  readonly redeemScript?: Uint8Array
  readonly address: string
  /** The scriptPubKey paying `address`. */
  readonly outputScript: Uint8Array
}

/** The private key of the cast member `name`: sha256(`pontis-devnet-bitcoin/<name>`). */
export function bitcoinDevnetPrivateKey(name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`pontis-devnet-bitcoin/${name}`).digest())
}

/** The key pair of the cast member `name` (regtest, compressed). */
export function bitcoinDevnetKeypair(name: string): ECPairInterface {
  return BitcoinECPair.fromPrivateKey(bitcoinDevnetPrivateKey(name), {
    network: BITCOIN_DEVNET_NETWORK,
    compressed: true,
  })
}

/** The BIP86 key-path signer of a P2TR output whose internal key is `keypair`'s. */
export function bitcoinTaprootSigner(keypair: ECPairInterface): ECPairInterface {
  const internal = keypair.publicKey.subarray(1, 33)
  return keypair.tweak(crypto.taggedHash('TapTweak', internal))
}

function paymentFor(kind: BitcoinScriptKind, publicKey: Uint8Array): payments.Payment {
  const network = BITCOIN_DEVNET_NETWORK
  switch (kind) {
    case 'p2wpkh':
      return payments.p2wpkh({ pubkey: publicKey, network })
    case 'p2pkh':
      return payments.p2pkh({ pubkey: publicKey, network })
    case 'p2sh-p2wpkh':
      return payments.p2sh({ redeem: payments.p2wpkh({ pubkey: publicKey, network }), network })
    case 'p2tr':
      return payments.p2tr({ internalPubkey: publicKey.subarray(1, 33), network })
  }
}

function account(name: string, kind: BitcoinScriptKind): BitcoinDevAccount {
  const keypair = bitcoinDevnetKeypair(name)
  const publicKey = keypair.publicKey
  const payment = paymentFor(kind, publicKey)
  if (!payment.address || !payment.output) throw new Error(`cannot derive the ${kind} address of ${name}`)
  return Object.freeze({
    name,
    kind,
    keypair,
    signer: kind === 'p2tr' ? bitcoinTaprootSigner(keypair) : keypair,
    publicKey,
    ...(kind === 'p2tr' ? { internalPublicKey: publicKey.subarray(1, 33) } : {}),
    ...(kind === 'p2sh-p2wpkh' ? { redeemScript: payment.redeem?.output } : {}),
    address: payment.address,
    outputScript: payment.output,
  })
}

/** One funded user per script type (keys `pontis-devnet-bitcoin/user-<kind>`). */
export const BITCOIN_USERS: Readonly<Record<BitcoinScriptKind, BitcoinDevAccount>> = Object.freeze({
  p2wpkh: account('user-p2wpkh', 'p2wpkh'),
  p2tr: account('user-p2tr', 'p2tr'),
  'p2sh-p2wpkh': account('user-p2sh-p2wpkh', 'p2sh-p2wpkh'),
  p2pkh: account('user-p2pkh', 'p2pkh'),
})

/** The users as a list, in the order P2WPKH, P2TR, P2SH-P2WPKH, P2PKH. */
export const BITCOIN_USER_LIST: readonly BitcoinDevAccount[] = Object.freeze(Object.values(BITCOIN_USERS))

/** Pays fills on the Bitcoin devnet (the reference solver). */
export const BITCOIN_SOLVER = account('solver', 'p2wpkh')
/** The depository vault: deposits from Bitcoin are paid to its address. Not funded at start. */
export const BITCOIN_VAULT = account('vault', 'p2wpkh')
/** Receives the block rewards of mined blocks (spendable after 100 confirmations, as on Bitcoin). */
export const BITCOIN_MINER = account('miner', 'p2wpkh')

/** Outputs the devnet funds at start (satoshi), each in a confirmed funding transaction. */
export const BITCOIN_FUNDING = Object.freeze({
  /** Each user gets this many outputs… */
  userOutputs: 3,
  /** …of 0.5 BTC each. */
  userOutputSats: 50_000_000n,
  /** The solver gets this many outputs… */
  solverOutputs: 10,
  /** …of 1 BTC each. */
  solverOutputSats: 100_000_000n,
})
