/**
 * Signature checks of the Bitcoin devnet: for each spendable output type the simulator supports, the
 * same decisions Bitcoin Core's interpreter takes for that template, with its error texts:
 * - P2PKH: scriptSig `<sig> <pubkey>`, legacy sighash;
 * - P2WPKH, and P2SH-P2WPKH (scriptSig exactly the redeem-script push): witness `<sig> <pubkey>`, BIP143;
 * - P2WSH (native or in P2SH) with a single-key witness script, `<pubkey> OP_CHECKSIG` or
 *   `OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG`: BIP143 over the witness script;
 * - P2TR key path: one 64/65-byte BIP340 signature over the BIP341 sighash (all prevouts and amounts).
 * ECDSA signatures must be strict DER (BIP66), low-S and carry a defined sighash type; segwit keys must
 * be compressed. Anything else (taproot script paths, multisig, other P2SH scripts) is refused as
 * unsupported rather than accepted unchecked.
 */
import * as ecc from '@bitcoinerlab/secp256k1'
import { crypto, payments, script, type Transaction } from 'bitcoinjs-lib'
import { BitcoinRejection } from './errors.js'
import { classifyOutput, isPushOnly, parseScript, pushedItems, witnessProgram } from './script.js'

/** The output an input spends. */
export interface Prevout {
  readonly value: bigint
  readonly script: Uint8Array
}

/** secp256k1 order / 2: ECDSA signatures with a larger S are malleable and non-standard (BIP146). */
const HALF_ORDER = Buffer.from('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 'hex')

const OP_CHECKSIG = 0xac
const OP_DUP = 0x76
const OP_HASH160 = 0xa9
const OP_EQUALVERIFY = 0x88
const ANNEX_TAG = 0x50

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index])
}

function mandatory(message: string): BitcoinRejection {
  return BitcoinRejection.rejected(`mandatory-script-verify-flag-failed (${message})`)
}

function nonMandatory(message: string): BitcoinRejection {
  return BitcoinRejection.rejected(`non-mandatory-script-verify-flag (${message})`)
}

function unsupported(index: number, what: string): BitcoinRejection {
  return BitcoinRejection.rejected(
    `simulator-unsupported-input, input ${index}: ${what} (this simulator verifies single-key spends only)`,
  )
}

const EVAL_FALSE = 'Script evaluated without error but finished with a false/empty top stack element'
const NULLFAIL = 'Signature must be zero for failed CHECK(MULTI)SIG operation'

/**
 * Checks one ECDSA signature (with its trailing sighash byte) by `publicKey` over the digest
 * `digestFor(hashType)`.
 */
function checkEcdsa(
  signature: Uint8Array,
  publicKey: Uint8Array,
  segwit: boolean,
  digestFor: (hashType: number) => Uint8Array,
): void {
  if (signature.length === 0) throw mandatory(EVAL_FALSE)
  const hashType = signature[signature.length - 1]!
  const baseType = hashType & ~0x80
  if (baseType < 1 || baseType > 3) throw nonMandatory('Signature hash type missing or not understood')
  let compact: Uint8Array
  try {
    compact = script.signature.decode(signature).signature
  } catch {
    throw mandatory('Non-canonical DER signature')
  }
  const compressed = publicKey.length === 33 && (publicKey[0] === 2 || publicKey[0] === 3)
  const uncompressed = publicKey.length === 65 && publicKey[0] === 4
  if (!compressed && !uncompressed) throw nonMandatory('Public key is neither compressed or uncompressed')
  if (segwit && !compressed) throw nonMandatory('Using non-compressed keys in segwit')
  if (Buffer.compare(Buffer.from(compact.subarray(32)), HALF_ORDER) > 0) {
    throw nonMandatory('Non-canonical signature: S value is unnecessarily high')
  }
  let valid = false
  try {
    valid = ecc.verify(digestFor(hashType), publicKey, compact)
  } catch {
    valid = false
  }
  if (!valid) throw mandatory(NULLFAIL)
}

/** The P2PKH script code BIP143 signs for a P2WPKH program. */
function p2pkhScriptCode(hash: Uint8Array): Uint8Array {
  return payments.p2pkh({ hash }).output!
}

/** Verifies a v0 witness program spend (native or nested) against `witness`. */
function verifyWitnessV0(
  tx: Transaction,
  index: number,
  program: Uint8Array,
  value: bigint,
  witness: readonly Uint8Array[],
): void {
  if (witness.length === 0) throw mandatory('Witness program was passed an empty witness')
  if (program.length === 20) {
    if (witness.length !== 2) throw mandatory('Witness program hash mismatch')
    const [signature, publicKey] = witness as [Uint8Array, Uint8Array]
    if (!equalBytes(crypto.hash160(publicKey), program)) {
      throw mandatory('Script failed an OP_EQUALVERIFY operation')
    }
    const scriptCode = p2pkhScriptCode(program)
    checkEcdsa(signature, publicKey, true, (hashType) =>
      tx.hashForWitnessV0(index, scriptCode, value, hashType),
    )
    return
  }
  if (program.length !== 32) throw mandatory('Witness program has incorrect length')
  const witnessScript = witness[witness.length - 1]!
  if (!equalBytes(crypto.sha256(witnessScript), program)) throw mandatory('Witness program hash mismatch')
  const stack = witness.slice(0, -1)
  const digestFor = (hashType: number) => tx.hashForWitnessV0(index, witnessScript, value, hashType)
  const chunks = parseScript(witnessScript) ?? []
  // <pubkey> OP_CHECKSIG
  if (chunks.length === 2 && chunks[0]?.data && chunks[1]?.opcode === OP_CHECKSIG) {
    if (stack.length !== 1) throw nonMandatory('Stack size must be exactly one after execution')
    checkEcdsa(stack[0]!, chunks[0].data, true, digestFor)
    return
  }
  // OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG
  const keyHash = chunks[2]?.data
  if (
    chunks.length === 5 &&
    chunks[0]?.opcode === OP_DUP &&
    chunks[1]?.opcode === OP_HASH160 &&
    keyHash?.length === 20 &&
    chunks[3]?.opcode === OP_EQUALVERIFY &&
    chunks[4]?.opcode === OP_CHECKSIG
  ) {
    if (stack.length !== 2) throw nonMandatory('Stack size must be exactly one after execution')
    const [signature, publicKey] = stack as [Uint8Array, Uint8Array]
    if (!equalBytes(crypto.hash160(publicKey), keyHash)) {
      throw mandatory('Script failed an OP_EQUALVERIFY operation')
    }
    checkEcdsa(signature, publicKey, true, digestFor)
    return
  }
  throw unsupported(index, 'P2WSH witness script other than a single-key check')
}

/** Verifies a P2TR key-path spend (BIP341/BIP340). */
function verifyTaproot(
  tx: Transaction,
  index: number,
  outputKey: Uint8Array,
  prevouts: readonly Prevout[],
  witness: readonly Uint8Array[],
): void {
  if (witness.length === 0) throw mandatory('Witness program was passed an empty witness')
  if (witness.length >= 2 && witness[witness.length - 1]![0] === ANNEX_TAG) {
    throw BitcoinRejection.rejected('bad-witness-nonstandard')
  }
  if (witness.length > 1) throw unsupported(index, 'taproot script-path spend')
  const signature = witness[0]!
  if (signature.length !== 64 && signature.length !== 65) throw mandatory('Invalid Schnorr signature size')
  const hashType = signature.length === 65 ? signature[64]! : 0
  const definedType = (hashType & ~0x80) >= 1 && (hashType & ~0x80) <= 3
  if (signature.length === 65 && !definedType) throw mandatory('Invalid Schnorr signature hash type')
  // SIGHASH_SINGLE needs an output at the input's index (BIP341).
  if ((hashType & 3) === 3 && index >= tx.outs.length) throw mandatory('Invalid Schnorr signature hash type')
  const digest = tx.hashForWitnessV1(
    index,
    prevouts.map((prevout) => prevout.script),
    prevouts.map((prevout) => prevout.value),
    hashType,
  )
  let valid = false
  try {
    valid = ecc.verifySchnorr(digest, outputKey, signature.subarray(0, 64))
  } catch {
    valid = false
  }
  if (!valid) throw mandatory('Invalid Schnorr signature')
}

/**
 * Verifies input `index` of `tx`, which spends `prevouts[index]` (`prevouts` lists every input's,
 * as BIP341 signs them all).
 *
 * @throws BitcoinRejection with Bitcoin Core's reason when the spend does not verify, or a
 *   `simulator-unsupported-input` reason for templates this simulator cannot check.
 */
export function verifyInput(tx: Transaction, index: number, prevouts: readonly Prevout[]): void {
  const input = tx.ins[index]!
  const prevout = prevouts[index]!
  const witness = input.witness
  const scriptSigChunks = parseScript(input.script)
  if (!scriptSigChunks) throw mandatory('Attempted to push more data than the script contains')
  const type = classifyOutput(prevout.script)

  if (type === 'p2pkh') {
    if (witness.length > 0) throw mandatory('Witness provided for non-witness script')
    if (!isPushOnly(scriptSigChunks)) throw BitcoinRejection.rejected('scriptsig-not-pushonly')
    const items = pushedItems(scriptSigChunks)
    if (items.length < 2) throw mandatory('Operation not valid with the current stack size')
    const [signature, publicKey] = items.slice(-2) as [Uint8Array, Uint8Array]
    if (!equalBytes(crypto.hash160(publicKey), prevout.script.subarray(3, 23))) {
      throw mandatory('Script failed an OP_EQUALVERIFY operation')
    }
    checkEcdsa(signature, publicKey, false, (hashType) =>
      tx.hashForSignature(index, prevout.script, hashType),
    )
    if (items.length !== 2) throw nonMandatory('Stack size must be exactly one after execution')
    return
  }

  if (type === 'p2sh') {
    if (!isPushOnly(scriptSigChunks)) throw mandatory('Only push operators allowed in signatures')
    const items = pushedItems(scriptSigChunks)
    const redeemScript = items[items.length - 1]
    if (!redeemScript || !equalBytes(crypto.hash160(redeemScript), prevout.script.subarray(2, 22))) {
      throw mandatory(EVAL_FALSE)
    }
    const nested = witnessProgram(redeemScript)
    if (!nested) {
      if (witness.length > 0) throw mandatory('Witness provided for non-witness script')
      throw unsupported(index, 'P2SH redeem script other than a v0 witness program')
    }
    if (!equalBytes(input.script, script.compile([redeemScript]))) {
      throw mandatory('Witness requires only-redeemscript scriptSig')
    }
    if (nested.version !== 0) throw nonMandatory('Witness version reserved for soft-fork upgrades')
    verifyWitnessV0(tx, index, nested.program, prevout.value, witness)
    return
  }

  const program = witnessProgram(prevout.script)
  if (program) {
    if (input.script.length > 0) throw mandatory('Witness requires empty scriptSig')
    if (program.version === 0) verifyWitnessV0(tx, index, program.program, prevout.value, witness)
    else if (type === 'v1_p2tr') verifyTaproot(tx, index, program.program, prevouts, witness)
    else throw nonMandatory('Witness version reserved for soft-fork upgrades')
    return
  }
  throw unsupported(index, `spending a ${type} output`)
}
