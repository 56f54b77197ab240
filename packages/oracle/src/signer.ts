import {
  GetPublicKeyCommand,
  type GetPublicKeyCommandOutput,
  KMSClient,
  SignCommand,
  type SignCommandOutput,
} from '@aws-sdk/client-kms'
import { secp256k1 } from '@noble/curves/secp256k1'
import { type Logger, silentLogger } from '@pontis/core'
import {
  type Address,
  bytesToHex,
  type Hex,
  hexToBytes,
  isAddressEqual,
  isHex,
  numberToHex,
  recoverAddress,
  serializeSignature,
} from 'viem'
import { privateKeyToAccount, publicKeyToAddress } from 'viem/accounts'
import type { SigningConfig } from './config.js'
import { defaultEcdsa, type Ecdsa } from './ecdsa.js'

/** How the oracle signs; values are already validated by the configuration module. */
export type { SigningConfig }

/** The subset of KMSClient we use, so tests inject a client (KMSClient satisfies it). */
export interface KmsClientLike {
  // SignCommand first: its input is a superset of GetPublicKey's, so overload order matters.
  send(command: SignCommand): Promise<SignCommandOutput>
  send(command: GetPublicKeyCommand): Promise<GetPublicKeyCommandOutput>
}

export interface OracleSigner {
  /** EIP-55 checksummed. */
  readonly address: Address
  readonly module: 'raw-private-key' | 'aws-kms'
  /** 65-byte r||s||v as 0x-hex, v 27 or 28, always low-s. */
  signDigest(digest: Hex): Promise<Hex>
}

export interface CreateSignerOptions {
  /** Replaces `new KMSClient({ region })`, for tests. */
  readonly kmsClient?: KmsClientLike
  readonly logger?: Logger
  /** Default: native libsecp256k1 when it loads, else pure JS (see ecdsa.ts). */
  readonly ecdsa?: Ecdsa
}

const CURVE_ORDER = secp256k1.CURVE.n
const HALF_CURVE_ORDER = CURVE_ORDER >> 1n
const KMS_KEY_SPEC = 'ECC_SECG_P256K1'
const KMS_KEY_USAGE = 'SIGN_VERIFY'

/** Builds the oracle's signer. The raw private key is never logged. */
export async function createSigner(
  config: SigningConfig,
  options: CreateSignerOptions = {},
): Promise<OracleSigner> {
  const logger = options.logger ?? silentLogger
  const signer =
    config.module === 'raw-private-key'
      ? createRawPrivateKeySigner(config.privateKey, options.ecdsa ?? defaultEcdsa())
      : await createKmsSigner(config, options.kmsClient ?? new KMSClient({ region: config.region }))
  logger.info('oracle signer ready', { module: signer.module, address: signer.address })
  return signer
}

function createRawPrivateKeySigner(privateKey: Hex, ecdsa: Ecdsa): OracleSigner {
  const { address } = privateKeyToAccount(privateKey)
  const key = hexToBytes(privateKey)
  return {
    address,
    module: 'raw-private-key',
    // RFC 6979 and low-s on both implementations: the same signature viem's `sign` makes.
    signDigest: async (digest) => bytesToHex(ecdsa.sign(hexToBytes(assertDigest(digest)), key)),
  }
}

async function createKmsSigner(
  config: { readonly keyId: string; readonly region: string },
  client: KmsClientLike,
): Promise<OracleSigner> {
  const { keyId } = config
  const publicKeyAnswer = await callKms(keyId, 'GetPublicKey', () =>
    client.send(new GetPublicKeyCommand({ KeyId: keyId })),
  )
  const keySpec = publicKeyAnswer.KeySpec ?? publicKeyAnswer.CustomerMasterKeySpec
  if (keySpec !== KMS_KEY_SPEC || publicKeyAnswer.KeyUsage !== KMS_KEY_USAGE) {
    throw new Error(
      `AWS KMS key ${keyId} has key spec ${keySpec ?? 'unknown'} and usage ${publicKeyAnswer.KeyUsage ?? 'unknown'}; ` +
        `the oracle needs an ${KMS_KEY_SPEC} key with usage ${KMS_KEY_USAGE}`,
    )
  }
  if (!publicKeyAnswer.PublicKey)
    throw new Error(`AWS KMS GetPublicKey for key ${keyId} returned no public key`)
  const address = publicKeyToAddress(bytesToHex(decodeSpkiPublicKey(publicKeyAnswer.PublicKey)))

  return {
    address,
    module: 'aws-kms',
    async signDigest(digest) {
      const hash = assertDigest(digest)
      const signAnswer = await callKms(keyId, 'Sign', () =>
        client.send(
          new SignCommand({
            KeyId: keyId,
            Message: hexToBytes(hash),
            MessageType: 'DIGEST',
            SigningAlgorithm: 'ECDSA_SHA_256',
          }),
        ),
      )
      if (!signAnswer.Signature?.length)
        throw new Error(`AWS KMS Sign for key ${keyId} returned no signature`)
      const { r, s } = decodeDerSignature(signAnswer.Signature)
      // Ethereum rejects high-s signatures; (r, n - s) is the equally valid twin.
      const lowS = s > HALF_CURVE_ORDER ? CURVE_ORDER - s : s
      const signature = { r: numberToHex(r, { size: 32 }), s: numberToHex(lowS, { size: 32 }) }
      // KMS gives no recovery id: find the one that recovers this key's address.
      for (const yParity of [0, 1] as const) {
        const serialized = serializeSignature({ ...signature, yParity })
        if (isAddressEqual(await recoverAddress({ hash, signature: serialized }), address)) return serialized
      }
      throw new Error(`the AWS KMS signature does not match the key ${keyId} (address ${address})`)
    },
  }
}

async function callKms<T>(keyId: string, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    throw new Error(`AWS KMS ${operation} for key ${keyId} failed: ${reason}`, { cause: error })
  }
}

function assertDigest(digest: Hex): Hex {
  if (!isHex(digest, { strict: true }) || digest.length !== 66) {
    throw new Error('the digest to sign must be 32 bytes of 0x-prefixed hex')
  }
  return digest
}

/** DER ECDSA-Sig-Value -> {r, s}; throws a clear Error on malformed input. */
export function decodeDerSignature(der: Uint8Array): { r: bigint; s: bigint } {
  const sequence = readDerElement(der, 0, 'ECDSA signature')
  expectTag(sequence, DER_SEQUENCE, 'ECDSA signature')
  expectWholeInput(der, sequence.end, 'ECDSA signature')
  const rElement = readDerElement(der, sequence.contentStart, 'ECDSA signature r')
  const sElement = readDerElement(der, rElement.end, 'ECDSA signature s')
  expectWholeInput(der.subarray(0, sequence.end), sElement.end, 'ECDSA signature sequence')
  return {
    r: readSignatureInteger(der, rElement, 'r'),
    s: readSignatureInteger(der, sElement, 's'),
  }
}

/** DER SubjectPublicKeyInfo of a secp256k1 key (what KMS GetPublicKey returns) -> 65-byte uncompressed point. */
export function decodeSpkiPublicKey(spki: Uint8Array): Uint8Array {
  const what = 'secp256k1 SubjectPublicKeyInfo'
  const outer = readDerElement(spki, 0, what)
  expectTag(outer, DER_SEQUENCE, what)
  expectWholeInput(spki, outer.end, what)

  const algorithm = readDerElement(spki, outer.contentStart, `${what} algorithm`)
  expectTag(algorithm, DER_SEQUENCE, `${what} algorithm`)
  const keyType = readDerElement(spki, algorithm.contentStart, `${what} algorithm`)
  const curve = readDerElement(spki, keyType.end, `${what} curve`)
  expectWholeInput(spki.subarray(0, algorithm.end), curve.end, `${what} algorithm`)
  if (!isObjectIdentifier(spki, keyType, OID_EC_PUBLIC_KEY)) {
    throw new Error(`${what}: the key is not an elliptic-curve public key (id-ecPublicKey)`)
  }
  if (!isObjectIdentifier(spki, curve, OID_SECP256K1)) {
    throw new Error(`${what}: the curve is not secp256k1`)
  }

  const bitString = readDerElement(spki, algorithm.end, `${what} public key`)
  expectTag(bitString, DER_BIT_STRING, `${what} public key`)
  expectWholeInput(spki.subarray(0, outer.end), bitString.end, what)
  const content = spki.subarray(bitString.contentStart, bitString.end)
  if (content.length !== 66 || content[0] !== 0 || content[1] !== 0x04) {
    throw new Error(`${what}: the public key must be a 65-byte uncompressed point`)
  }
  const point = content.slice(1)
  try {
    secp256k1.ProjectivePoint.fromHex(point).assertValidity()
  } catch (error) {
    throw new Error(`${what}: the public key is not a point on secp256k1`, { cause: error })
  }
  return point
}

const DER_INTEGER = 0x02
const DER_BIT_STRING = 0x03
const DER_OBJECT_IDENTIFIER = 0x06
const DER_SEQUENCE = 0x30
/** 1.2.840.10045.2.1 */
const OID_EC_PUBLIC_KEY = Uint8Array.of(0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01)
/** 1.3.132.0.10 */
const OID_SECP256K1 = Uint8Array.of(0x2b, 0x81, 0x04, 0x00, 0x0a)

interface DerElement {
  readonly tag: number
  readonly contentStart: number
  /** Index just past the content. */
  readonly end: number
}

/** Reads one tag-length-value at `offset`, in definite minimal-length DER form. */
function readDerElement(bytes: Uint8Array, offset: number, what: string): DerElement {
  if (offset + 2 > bytes.length) throw new Error(`${what}: DER input is truncated`)
  const tag = bytes[offset] as number
  const firstLengthByte = bytes[offset + 1] as number
  let length = firstLengthByte
  let contentStart = offset + 2
  if (firstLengthByte >= 0x80) {
    // Our structures are under 256 bytes: only the one-byte long form, and only where DER requires it.
    const longForm = firstLengthByte === 0x81 ? bytes[offset + 2] : undefined
    if (longForm === undefined || longForm < 0x80) throw new Error(`${what}: DER length is not valid`)
    length = longForm
    contentStart = offset + 3
  }
  const end = contentStart + length
  if (end > bytes.length) throw new Error(`${what}: DER input is truncated`)
  return { tag, contentStart, end }
}

function expectTag(element: DerElement, tag: number, what: string): void {
  if (element.tag !== tag) {
    throw new Error(`${what}: expected DER tag 0x${tag.toString(16)}, found 0x${element.tag.toString(16)}`)
  }
}

function expectWholeInput(bytes: Uint8Array, end: number, what: string): void {
  if (end !== bytes.length) throw new Error(`${what}: unexpected trailing bytes after the DER value`)
}

function isObjectIdentifier(bytes: Uint8Array, element: DerElement, oid: Uint8Array): boolean {
  if (element.tag !== DER_OBJECT_IDENTIFIER || element.end - element.contentStart !== oid.length) return false
  return oid.every((byte, index) => bytes[element.contentStart + index] === byte)
}

/** A positive DER INTEGER in [1, n-1]: at most 32 value bytes, plus one 0x00 when the top bit is set. */
function readSignatureInteger(bytes: Uint8Array, element: DerElement, name: 'r' | 's'): bigint {
  const what = `ECDSA signature ${name}`
  expectTag(element, DER_INTEGER, what)
  const content = bytes.subarray(element.contentStart, element.end)
  if (content.length === 0) throw new Error(`${what}: DER integer is empty`)
  if (content.length > 33)
    throw new Error(`${what}: DER integer is ${content.length} bytes, at most 33 allowed`)
  const first = content[0] as number
  if (first & 0x80) throw new Error(`${what}: DER integer is negative`)
  if (first === 0 && content.length > 1 && !((content[1] as number) & 0x80)) {
    throw new Error(`${what}: DER integer has a superfluous leading zero`)
  }
  const value = BigInt(bytesToHex(content))
  if (value === 0n) throw new Error(`${what}: value is zero`)
  if (value >= CURVE_ORDER) throw new Error(`${what}: value is not below the secp256k1 group order`)
  return value
}
