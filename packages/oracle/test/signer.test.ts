import { secp256k1 } from '@noble/curves/secp256k1'
import { createLogger } from '@pontis/core'
import t, { type Test } from 'tap'
import {
  bytesToHex,
  type Hex,
  hexToBigInt,
  hexToBytes,
  keccak256,
  parseSignature,
  recoverAddress,
  toHex,
} from 'viem'
import { createSigner, decodeDerSignature, decodeSpkiPublicKey, type OracleSigner } from '../src/signer.js'
import { FakeKmsClient, type FakeKmsSignature, fakeKmsSign, spkiOf } from './fixtures/fake-kms.js'

// Anvil's published account #0: a test key with a known address; OTHER_KEY is any second key.
const TEST_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const TEST_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const OTHER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88a7f7b6d2787c8690d188d'
const CURVE_ORDER = secp256k1.CURVE.n
const HALF_CURVE_ORDER = CURVE_ORDER >> 1n
const KEY_ID = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab'
const KMS_CONFIG = { module: 'aws-kms', keyId: KEY_ID, region: 'eu-west-1' } as const

const digestNumber = (index: number): Hex => keccak256(toHex(`pontis oracle signer test ${index}`))

/** The first test digest whose fake KMS signature (made with the test key) satisfies `wanted`. */
function findDigest(wanted: (signature: FakeKmsSignature) => boolean): {
  digest: Hex
  signature: FakeKmsSignature
} {
  for (let index = 0; index < 20_000; index++) {
    const digest = digestNumber(index)
    const signature = fakeKmsSign(TEST_KEY, hexToBytes(digest))
    if (wanted(signature)) return { digest, signature }
  }
  throw new Error('no test digest produced the wanted signature')
}

/** Asserts a 65-byte r||s||v signature with v 27/28 and low s that recovers to `address`. */
async function assertEthereumSignature(t: Test, signer: OracleSigner, digest: Hex, signature: Hex) {
  t.equal(hexToBytes(signature).length, 65, '65 bytes')
  const { r, s, v } = parseSignature(signature)
  if (v !== 27n && v !== 28n) throw new Error(`v is ${v}, not 27 or 28`)
  t.ok(hexToBigInt(s) <= HALF_CURVE_ORDER, 's is low')
  t.ok(hexToBigInt(r) > 0n, 'r is set')
  t.equal(await recoverAddress({ hash: digest, signature }), signer.address, 'recovers the signer address')
  return { r: hexToBigInt(r), s: hexToBigInt(s), v }
}

t.test('raw-private-key signer', async (t) => {
  const lines: string[] = []
  const logger = createLogger('signer-test', { level: 'debug', write: (line) => lines.push(line) })
  const signer = await createSigner({ module: 'raw-private-key', privateKey: TEST_KEY }, { logger })
  t.equal(signer.module, 'raw-private-key')
  t.equal(signer.address, TEST_ADDRESS, 'EIP-55 address of the key')

  const seenV = new Set<bigint>()
  for (let index = 0; index < 16; index++) {
    const digest = digestNumber(index)
    const { v } = await assertEthereumSignature(t, signer, digest, await signer.signDigest(digest))
    seenV.add(v)
  }
  t.same([...seenV].sort(), [27n, 28n], 'both recovery ids occur over 16 digests')

  await t.rejects(signer.signDigest('0x1234'), /32 bytes/, 'a short digest is refused')
  await t.rejects(signer.signDigest(`0x${'zz'.repeat(32)}` as Hex), /32 bytes/, 'non-hex is refused')
  t.ok(
    lines.some((line) => line.includes(TEST_ADDRESS)),
    'the address is logged',
  )
  t.notOk(
    lines.some((line) => line.toLowerCase().includes(TEST_KEY.slice(2))),
    'the private key never appears in the log',
  )
})

t.test('aws-kms signer with a fake KMS client (no AWS here)', async (t) => {
  t.test('derives the address from the public key and sends a DIGEST Sign request', async (t) => {
    const kms = new FakeKmsClient({ signingKey: TEST_KEY })
    const signer = await createSigner(KMS_CONFIG, { kmsClient: kms })
    t.equal(signer.module, 'aws-kms')
    t.equal(signer.address, TEST_ADDRESS)
    t.equal(kms.getPublicKeyCalls, 1, 'GetPublicKey is asked once, at creation')

    const digest = digestNumber(1)
    await assertEthereumSignature(t, signer, digest, await signer.signDigest(digest))
    t.equal(kms.signRequests.length, 1)
    const [request] = kms.signRequests
    t.equal(request?.KeyId, KEY_ID)
    t.equal(request?.MessageType, 'DIGEST')
    t.equal(request?.SigningAlgorithm, 'ECDSA_SHA_256')
    t.equal(request?.Message && bytesToHex(request.Message), digest, 'the message is the 32 digest bytes')
    await t.rejects(signer.signDigest('0xabcd'), /32 bytes/, 'a short digest never reaches KMS')
    t.equal(kms.signRequests.length, 1)
  })

  t.test('gives the same signature as the raw signer for the same key', async (t) => {
    const kmsSigner = await createSigner(KMS_CONFIG, {
      kmsClient: new FakeKmsClient({ signingKey: TEST_KEY }),
    })
    const rawSigner = await createSigner({ module: 'raw-private-key', privateKey: TEST_KEY })
    for (let index = 0; index < 8; index++) {
      const digest = digestNumber(index)
      t.equal(await kmsSigner.signDigest(digest), await rawSigner.signDigest(digest), `digest ${index}`)
    }
  })

  t.test('normalises a high-s signature to low-s', async (t) => {
    const { digest, signature: asSigned } = findDigest((signature) => signature.s > HALF_CURVE_ORDER)
    const kms = new FakeKmsClient({ signingKey: TEST_KEY })
    const signer = await createSigner(KMS_CONFIG, { kmsClient: kms })
    const { r, s } = await assertEthereumSignature(t, signer, digest, await signer.signDigest(digest))
    t.ok(
      kms.lastSignature && kms.lastSignature.s > HALF_CURVE_ORDER,
      'the fake KMS really answered with high s',
    )
    t.equal(r, asSigned.r)
    t.equal(s, CURVE_ORDER - asSigned.s, 's became n - s')
  })

  t.test('decodes an r shorter than 32 bytes', async (t) => {
    const { digest, signature: asSigned } = findDigest((signature) => signature.r < 1n << 248n)
    const derR = decodeDerR(asSigned.der)
    t.ok(derR.length < 32, `DER r is ${derR.length} bytes`)
    const signer = await createSigner(KMS_CONFIG, { kmsClient: new FakeKmsClient({ signingKey: TEST_KEY }) })
    const signature = await signer.signDigest(digest)
    const { r } = await assertEthereumSignature(t, signer, digest, signature)
    t.equal(r, asSigned.r)
    t.equal(signature.slice(2, 4), '00', 'r is left-padded to 32 bytes')
  })

  t.test('decodes a 33-byte DER integer (r with the top bit set)', async (t) => {
    const { digest, signature: asSigned } = findDigest((signature) => signature.r >= 1n << 255n)
    const derR = decodeDerR(asSigned.der)
    t.equal(derR.length, 33)
    t.equal(derR[0], 0, 'with a leading 0x00')
    const signer = await createSigner(KMS_CONFIG, { kmsClient: new FakeKmsClient({ signingKey: TEST_KEY }) })
    const { r } = await assertEthereumSignature(t, signer, digest, await signer.signDigest(digest))
    t.equal(r, asSigned.r)
  })

  t.test('finds both recovery ids by recovery, for low-s and high-s answers alike', async (t) => {
    const signer = await createSigner(KMS_CONFIG, { kmsClient: new FakeKmsClient({ signingKey: TEST_KEY }) })
    const seen = new Set<string>()
    for (let index = 0; index < 32 && seen.size < 4; index++) {
      const digest = digestNumber(index)
      const asSigned = fakeKmsSign(TEST_KEY, hexToBytes(digest))
      const { v } = await assertEthereumSignature(t, signer, digest, await signer.signDigest(digest))
      // Flipping s to n - s flips the recovery bit, so v must follow the normalisation.
      const expectedParity = asSigned.s > HALF_CURVE_ORDER ? 1 - asSigned.recovery : asSigned.recovery
      t.equal(v, BigInt(27 + expectedParity), `digest ${index}: v matches the recovery bit`)
      seen.add(`v=${v} ${asSigned.s > HALF_CURVE_ORDER ? 'high' : 'low'}-s`)
    }
    t.same([...seen].sort(), ['v=27 high-s', 'v=27 low-s', 'v=28 high-s', 'v=28 low-s'])
  })

  t.test('rejects a KMS answer signed by a different key', async (t) => {
    const kms = new FakeKmsClient({ signingKey: OTHER_KEY, reportedKey: TEST_KEY })
    const signer = await createSigner(KMS_CONFIG, { kmsClient: kms })
    t.equal(signer.address, TEST_ADDRESS)
    await t.rejects(signer.signDigest(digestNumber(3)), /KMS signature does not match the key/)
  })

  t.test('rejects malformed DER from KMS', async (t) => {
    const truncated = new FakeKmsClient({
      signingKey: TEST_KEY,
      rewriteSignature: (der) => der.subarray(0, 40),
    })
    const signer = await createSigner(KMS_CONFIG, { kmsClient: truncated })
    await t.rejects(signer.signDigest(digestNumber(0)), /ECDSA signature.*truncated/)

    const trailing = new FakeKmsClient({ signingKey: TEST_KEY, rewriteSignature: (der) => concat(der, [0]) })
    const trailingSigner = await createSigner(KMS_CONFIG, { kmsClient: trailing })
    await t.rejects(trailingSigner.signDigest(digestNumber(0)), /trailing bytes/)

    const empty = new FakeKmsClient({ signingKey: TEST_KEY, rewriteSignature: () => new Uint8Array() })
    const emptySigner = await createSigner(KMS_CONFIG, { kmsClient: empty })
    await t.rejects(emptySigner.signDigest(digestNumber(0)), /returned no signature/)
  })

  t.test('rejects a key that is not secp256k1 SIGN_VERIFY', async (t) => {
    await t.rejects(
      createSigner(KMS_CONFIG, {
        kmsClient: new FakeKmsClient({ signingKey: TEST_KEY, keySpec: 'ECC_NIST_P256' }),
      }),
      /key spec ECC_NIST_P256.*needs an ECC_SECG_P256K1 key with usage SIGN_VERIFY/,
    )
    await t.rejects(
      createSigner(KMS_CONFIG, {
        kmsClient: new FakeKmsClient({ signingKey: TEST_KEY, keyUsage: 'ENCRYPT_DECRYPT' }),
      }),
      /usage ENCRYPT_DECRYPT/,
    )
  })

  t.test('names the key and operation when KMS fails', async (t) => {
    const failWith = Object.assign(new Error('User is not authorized to perform kms:GetPublicKey'), {
      name: 'AccessDeniedException',
    })
    const error = await createSigner(KMS_CONFIG, {
      kmsClient: new FakeKmsClient({ signingKey: TEST_KEY, failWith }),
    })
      .then(() => undefined)
      .catch((caught: unknown) => caught)
    t.ok(error instanceof Error)
    t.match((error as Error).message, `AWS KMS GetPublicKey for key ${KEY_ID} failed: AccessDeniedException`)
    t.equal((error as Error).cause, failWith, 'the KMS error is kept as the cause')
  })
})

t.test('decodeDerSignature', async (t) => {
  const r = 0x1234n
  const s = CURVE_ORDER - 1n
  t.same(decodeDerSignature(der(0x30, der(0x02, [0x12, 0x34]), der(0x02, [0, ...integerBytes(s)]))), { r, s })
  const topBitR = 1n << 255n
  t.same(
    decodeDerSignature(der(0x30, der(0x02, [0, ...integerBytes(topBitR)]), der(0x02, [1]))),
    { r: topBitR, s: 1n },
    'a 33-byte integer with a leading 0x00',
  )
  const fromNoble = fakeKmsSign(OTHER_KEY, hexToBytes(digestNumber(7)))
  t.same(decodeDerSignature(fromNoble.der), { r: fromNoble.r, s: fromNoble.s }, 'a real DER signature')

  const valid = der(0x02, [1])
  const malformed: Array<[string, Uint8Array, RegExp]> = [
    ['empty input', new Uint8Array(), /truncated/],
    ['not a sequence', der(0x31, valid, valid), /expected DER tag 0x30, found 0x31/],
    ['an integer with the wrong tag', der(0x30, der(0x04, [1]), valid), /signature r: expected DER tag 0x2/],
    ['trailing bytes after the sequence', concat(der(0x30, valid, valid), [0]), /trailing bytes/],
    ['a third element in the sequence', der(0x30, valid, valid, valid), /trailing bytes/],
    ['a missing s', der(0x30, valid), /signature s: DER input is truncated/],
    ['a sequence longer than the input', Uint8Array.of(0x30, 0x10, 0x02, 0x01, 0x01), /truncated/],
    ['an integer of 34 bytes', der(0x30, der(0x02, [0, 0x80, ...new Array(32).fill(1)]), valid), /34 bytes/],
    ['a zero r', der(0x30, der(0x02, [0]), valid), /r: value is zero/],
    ['a zero s', der(0x30, valid, der(0x02, [0])), /s: value is zero/],
    ['an empty integer', der(0x30, der(0x02, []), valid), /empty/],
    ['a negative integer', der(0x30, der(0x02, [0x80]), valid), /negative/],
    ['a superfluous leading zero', der(0x30, der(0x02, [0, 1]), valid), /superfluous leading zero/],
    ['a value not below n', der(0x30, der(0x02, [0, ...integerBytes(CURVE_ORDER)]), valid), /group order/],
    [
      'a non-minimal long-form length',
      Uint8Array.of(0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01),
      /length/,
    ],
    ['an indefinite length', Uint8Array.of(0x30, 0x80, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0, 0), /length/],
  ]
  for (const [name, input, message] of malformed) {
    t.throws(() => decodeDerSignature(input), message, name)
  }
})

t.test('decodeSpkiPublicKey', async (t) => {
  const spki = spkiOf(TEST_KEY)
  const point = decodeSpkiPublicKey(spki)
  t.equal(point.length, 65)
  t.equal(bytesToHex(point), bytesToHex(secp256k1.getPublicKey(hexToBytes(TEST_KEY), false)))

  const withByte = (index: number, value: number) => {
    const copy = spki.slice()
    copy[index] = value
    return copy
  }
  // A P-256 (prime256v1) key's SPKI differs in the curve OID: 1.2.840.10045.3.1.7.
  const p256Spki = concat(
    hexToBytes('0x3059301306072a8648ce3d020106082a8648ce3d030107034200'),
    spki.subarray(spki.length - 65),
  )
  const offCurve = spki.slice()
  offCurve[spki.length - 1] = (offCurve[spki.length - 1] as number) ^ 1
  const malformed: Array<[string, Uint8Array, RegExp]> = [
    ['a P-256 key', p256Spki, /curve is not secp256k1/],
    ['a non-EC key type', withByte(12, 0x03), /not an elliptic-curve public key/],
    ['trailing bytes', concat(spki, [0]), /trailing bytes/],
    ['a truncated key', spki.subarray(0, 60), /truncated/],
    ['a compressed point', withByte(23, 0x02), /65-byte uncompressed point/],
    ['unused bits in the bit string', withByte(22, 0x01), /65-byte uncompressed point/],
    ['an octet string instead of a bit string', withByte(20, 0x04), /expected DER tag 0x3, found 0x4/],
    ['a point off the curve', offCurve, /not a point on secp256k1/],
    ['not a sequence', withByte(0, 0x31), /expected DER tag 0x30/],
  ]
  for (const [name, input, message] of malformed) {
    t.throws(() => decodeSpkiPublicKey(input), message, name)
  }
})

/** The content bytes of r in a DER ECDSA-Sig-Value, read independently of the code under test. */
function decodeDerR(signature: Uint8Array): Uint8Array {
  const rLength = signature[3] as number
  return signature.subarray(4, 4 + rLength)
}

/** One short-form DER element. */
function der(tag: number, ...parts: Array<Uint8Array | number[]>): Uint8Array {
  const content = concat(...parts)
  return concat([tag, content.length], content)
}

function concat(...parts: Array<Uint8Array | number[]>): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]))
}

function integerBytes(value: bigint): Uint8Array {
  return hexToBytes(toHex(value))
}
