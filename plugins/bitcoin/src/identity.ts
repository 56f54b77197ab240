/**
 * Bitcoin identity: addresses of the configured network (P2PKH, P2SH, P2WPKH, P2WSH, P2TR) and the
 * native currency identifier.
 *
 * Case: base58 addresses are case-sensitive (another case is another checksum, so it is refused);
 * bech32 addresses are valid in all lower or all upper case, never mixed (BIP 173), and are
 * normalised to lower case. The native currency identifier is a fixed string that looks like a
 * bech32 address but is none (its program does not decode): it is accepted as a currency only.
 *
 * Encodings (signed protocol messages): an address is its output script; the native currency is
 * the empty byte string `0x`, which no output script can be, so it never collides with an address.
 */
import {
  type AddressRole,
  type ChainLabel,
  type CurrencyRole,
  type IdentityCapability,
  invalidAddressError,
  invalidCurrencyError,
  isCurrencyRole,
  PontisError,
} from '@pontis/core/plugin'
import { address as bitcoinAddress, type Network, networks } from 'bitcoinjs-lib'
import { BITCOIN_NATIVE_CURRENCY_ID, type BitcoinNetworkName } from './config.js'

/** The output types this plugin recognises. */
export type AddressType = 'p2pkh' | 'p2sh' | 'p2wpkh' | 'p2wsh' | 'p2tr'

/** A decoded address: its type, canonical spelling, output script and the hash or key it commits to. */
export interface ParsedAddress {
  readonly type: AddressType
  readonly address: string
  readonly script: Uint8Array
  /** P2PKH/P2SH/P2WPKH: the 20-byte hash; P2WSH: the 32-byte script hash; P2TR: the x-only output key. */
  readonly program: Uint8Array
}

const NETWORKS: Readonly<Record<BitcoinNetworkName, Network>> = {
  bitcoin: networks.bitcoin,
  testnet: networks.testnet,
  regtest: networks.regtest,
}

const NETWORK_LABELS: Readonly<Record<BitcoinNetworkName, string>> = {
  bitcoin: 'Bitcoin mainnet',
  testnet: 'Bitcoin testnet/signet',
  regtest: 'Bitcoin regtest',
}

/** The bitcoinjs network parameters of a network name. */
export function networkOf(name: BitcoinNetworkName): Network {
  return NETWORKS[name]
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/
const BECH32_PREFIX = /^(bc|tb|bcrt)1/i

function form(network: BitcoinNetworkName): string {
  const params = NETWORKS[network]
  const legacy = network === 'bitcoin' ? '1… or 3…' : 'm…, n… or 2…'
  return `expected a ${NETWORK_LABELS[network]} address: ${params.bech32}1… (P2WPKH, P2WSH, P2TR) or ${legacy} (P2PKH, P2SH)`
}

/** The network names whose bech32 prefix is `prefix`. */
function networkOfPrefix(prefix: string): string | undefined {
  const found = (Object.keys(NETWORKS) as BitcoinNetworkName[]).find(
    (name) => NETWORKS[name].bech32 === prefix,
  )
  return found === undefined ? undefined : NETWORK_LABELS[found]
}

/** The output script of a witness program. */
function witnessScript(version: number, program: Uint8Array): Uint8Array {
  // OP_0 is 0x00; OP_1..OP_16 are 0x51..0x60.
  return Uint8Array.from([version === 0 ? 0 : 0x50 + version, program.length, ...program])
}

function legacyScript(type: 'p2pkh' | 'p2sh', hash: Uint8Array): Uint8Array {
  return type === 'p2pkh'
    ? Uint8Array.from([0x76, 0xa9, 0x14, ...hash, 0x88, 0xac])
    : Uint8Array.from([0xa9, 0x14, ...hash, 0x87])
}

function parseBech32(
  value: string,
  network: BitcoinNetworkName,
): { parsed: ParsedAddress } | { problem: string } {
  const lower = value.toLowerCase()
  if (value !== lower && value !== value.toUpperCase()) {
    return { problem: `bech32 addresses are all lower case or all upper case, never mixed; ${form(network)}` }
  }
  let decoded: bitcoinAddress.Bech32Result
  try {
    decoded = bitcoinAddress.fromBech32(lower)
  } catch {
    return { problem: `not a valid bech32/bech32m address (bad checksum or length); ${form(network)}` }
  }
  const expected = NETWORKS[network].bech32
  if (decoded.prefix !== expected) {
    const other = networkOfPrefix(decoded.prefix)
    return {
      problem: other
        ? `this is a ${other} address but this chain is ${NETWORK_LABELS[network]}; ${form(network)}`
        : `unknown bech32 prefix '${decoded.prefix}'; ${form(network)}`,
    }
  }
  const { version, data } = decoded
  const type: AddressType | undefined =
    version === 0 && data.length === 20
      ? 'p2wpkh'
      : version === 0 && data.length === 32
        ? 'p2wsh'
        : version === 1 && data.length === 32
          ? 'p2tr'
          : undefined
  if (type === undefined) {
    return {
      problem: `witness version ${version} with a ${data.length}-byte program is not a supported output type; ${form(network)}`,
    }
  }
  return { parsed: { type, address: lower, script: witnessScript(version, data), program: data } }
}

function parseBase58(
  value: string,
  network: BitcoinNetworkName,
): { parsed: ParsedAddress } | { problem: string } {
  let decoded: bitcoinAddress.Base58CheckResult
  try {
    decoded = bitcoinAddress.fromBase58Check(value)
  } catch {
    // A Solana key is base58 of 32 bytes without a checksum: almost always 43 or 44 characters,
    // where Bitcoin's base58 addresses have at most 35.
    const svmLike = BASE58.test(value) && value.length >= 40 && value.length <= 44
    return {
      problem: svmLike
        ? `this looks like an SVM public key, not a Bitcoin address; ${form(network)}`
        : `not a valid base58check address (base58 addresses are case-sensitive); ${form(network)}`,
    }
  }
  const params = NETWORKS[network]
  if (decoded.hash.length !== 20) return { problem: form(network) }
  const type =
    decoded.version === params.pubKeyHash
      ? 'p2pkh'
      : decoded.version === params.scriptHash
        ? 'p2sh'
        : undefined
  if (type === undefined) {
    const mainnet =
      decoded.version === networks.bitcoin.pubKeyHash || decoded.version === networks.bitcoin.scriptHash
    const testnet =
      decoded.version === networks.testnet.pubKeyHash || decoded.version === networks.testnet.scriptHash
    const other = mainnet ? 'Bitcoin mainnet' : testnet ? 'Bitcoin testnet/regtest' : undefined
    return {
      problem: other
        ? `this is a ${other} address but this chain is ${NETWORK_LABELS[network]}; ${form(network)}`
        : `unknown address version ${decoded.version}; ${form(network)}`,
    }
  }
  return {
    parsed: { type, address: value, script: legacyScript(type, decoded.hash), program: decoded.hash },
  }
}

/**
 * Decodes `value` as an address of `network`, or says why it is not one.
 * Never throws.
 */
export function parseAddress(
  value: unknown,
  network: BitcoinNetworkName,
): { parsed: ParsedAddress } | { problem: string } {
  if (typeof value !== 'string' || value.length === 0) return { problem: form(network) }
  if (value === BITCOIN_NATIVE_CURRENCY_ID) {
    return {
      problem: `this is the native currency identifier, valid as a currency only, never as an address; ${form(network)}`,
    }
  }
  if (EVM_ADDRESS.test(value)) return { problem: `this is an EVM address; ${form(network)}` }
  if (value.length > 90) return { problem: form(network) }
  if (BECH32_PREFIX.test(value)) return parseBech32(value, network)
  return parseBase58(value, network)
}

/** Why `value` is not an address of `network`, or undefined when it is one. */
export function addressProblem(value: unknown, network: BitcoinNetworkName): string | undefined {
  const result = parseAddress(value, network)
  return 'problem' in result ? result.problem : undefined
}

/**
 * The address an output script pays, in canonical form, or undefined for scripts without one
 * (OP_RETURN, bare multisig, unknown witness versions).
 */
export function addressOfScript(script: Uint8Array, network: BitcoinNetworkName): string | undefined {
  const params = NETWORKS[network]
  const length = script.length
  if (
    length === 25 &&
    script[0] === 0x76 &&
    script[1] === 0xa9 &&
    script[2] === 0x14 &&
    script[23] === 0x88 &&
    script[24] === 0xac
  ) {
    return bitcoinAddress.toBase58Check(script.subarray(3, 23), params.pubKeyHash)
  }
  if (length === 23 && script[0] === 0xa9 && script[1] === 0x14 && script[22] === 0x87) {
    return bitcoinAddress.toBase58Check(script.subarray(2, 22), params.scriptHash)
  }
  if (script[0] === 0 && script[1] === length - 2 && (length === 22 || length === 34)) {
    return bitcoinAddress.toBech32(script.subarray(2), 0, params.bech32)
  }
  if (script[0] === 0x51 && script[1] === 32 && length === 34) {
    return bitcoinAddress.toBech32(script.subarray(2), 1, params.bech32)
  }
  return undefined
}

const toHex = (bytes: Uint8Array): `0x${string}` => `0x${Buffer.from(bytes).toString('hex')}`

const TRANSACTION_ID = /^(0x)?[0-9a-fA-F]{64}$/

/** The canonical form of a txid (64 lower-case hex characters, no 0x), or undefined when it is not one. */
export function canonicalTxid(value: unknown): string | undefined {
  if (typeof value !== 'string' || !TRANSACTION_ID.test(value)) return undefined
  return (value.startsWith('0x') ? value.slice(2) : value).toLowerCase()
}

/**
 * `transactionId` as a txid, or PontisError INVALID_REQUEST naming the expected form.
 * @throws PontisError INVALID_REQUEST
 */
export function requireTxid(transactionId: unknown, chain?: ChainLabel): string {
  const txid = canonicalTxid(transactionId)
  if (txid === undefined) {
    throw new PontisError(
      'INVALID_REQUEST',
      `'${String(transactionId).slice(0, 100)}' is not a transaction id${chain ? ` of ${chain.displayName}` : ''}: expected a txid of 64 hexadecimal characters (as block explorers show it)`,
    )
  }
  return txid
}

/** The identity rules of one Bitcoin chain, with messages that name it. */
export function createBitcoinIdentity(network: BitcoinNetworkName, chain?: ChainLabel): IdentityCapability {
  const parse = (address: string, role: AddressRole): ParsedAddress => {
    const result = parseAddress(address, network)
    if ('problem' in result) throw invalidAddressError(role, address, result.problem, chain)
    return result.parsed
  }
  const normalizeCurrency = (currencyId: string, role: CurrencyRole = 'currency'): string => {
    if (currencyId !== BITCOIN_NATIVE_CURRENCY_ID) {
      throw invalidCurrencyError(
        role,
        currencyId,
        `Bitcoin has one currency, the native one, whose id is ${BITCOIN_NATIVE_CURRENCY_ID}`,
        chain,
      )
    }
    return currencyId
  }
  return {
    nativeCurrencyId: BITCOIN_NATIVE_CURRENCY_ID,
    isValidAddress: (address: string): boolean => 'parsed' in parseAddress(address, network),
    normalizeAddress: (address: string, role: AddressRole): string => parse(address, role).address,
    normalizeCurrency,
    encodeAddress(address: string, role: AddressRole | CurrencyRole): `0x${string}` {
      if (isCurrencyRole(role)) {
        normalizeCurrency(address, role)
        return '0x'
      }
      return toHex(parse(address, role).script)
    },
    encodeTransactionId(transactionId: string): `0x${string}` {
      return `0x${requireTxid(transactionId, chain)}`
    },
  }
}
