/**
 * The native (libsecp256k1) and the pure-JS (@noble/curves) ECDSA answer alike on the same vectors:
 * recovery on valid and broken signatures, through every check of a peer signature, and signing
 * (the very same RFC 6979 signature as viem's); and the pure-JS path is really the one used when it
 * is injected.
 */
import { randomBytes } from 'node:crypto'
import { type Eip712Domain, silentLogger } from '@pontis/core'
import t from 'tap'
import { type Hex, hexToBigInt, numberToHex, slice } from 'viem'
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts'
import { signatureProblemSync } from '../src/aggregate.js'
import { defaultEcdsa, type Ecdsa, loadNativeSecp256k1, nativeEcdsa, pureJsEcdsa } from '../src/ecdsa.js'
import {
  createSigner,
  encodeHubAction,
  HUB_ACTION,
  SignatureAggregator,
  signAttestation,
  type UnsignedAttestation,
} from '../src/index.js'
import { MESSAGE_TYPES } from '../src/typed-data.js'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn

const bindings = loadNativeSecp256k1()
t.ok(bindings, 'the native bindings load on this platform (the secp256k1 package ships a linux-x64 prebuild)')
const native = nativeEcdsa(bindings!)
t.equal(defaultEcdsa().implementation, 'native', 'and are the default')

const hex32 = (value: bigint): string => numberToHex(value, { size: 32 }).slice(2)
const withParts = (r: bigint, s: bigint, v: number): Hex =>
  `0x${hex32(r)}${hex32(s)}${numberToHex(v, { size: 1 }).slice(2)}`

interface Vector {
  readonly name: string
  readonly digest: Hex
  readonly signature: string
  readonly claimed: string
  /** What signatureProblem must say: undefined (valid) or a pattern. */
  readonly expected: RegExp | undefined
}

/** Valid signatures of random digests by random keys, and every way of breaking them. */
async function vectors(): Promise<Vector[]> {
  const all: Vector[] = []
  for (let index = 0; index < 24; index++) {
    const key = generatePrivateKey()
    const signer = privateKeyToAccount(key).address
    const digest = `0x${randomBytes(32).toString('hex')}` as Hex
    const signature = await sign({ hash: digest, privateKey: key, to: 'hex' })
    const r = hexToBigInt(slice(signature, 0, 32))
    const s = hexToBigInt(slice(signature, 32, 64))
    const v = Number(hexToBigInt(slice(signature, 64, 65)))
    const other = privateKeyToAccount(generatePrivateKey()).address
    all.push(
      { name: `valid ${index}`, digest, signature, claimed: signer, expected: undefined },
      {
        name: `valid ${index}, claimed in lower case`,
        digest,
        signature,
        claimed: signer.toLowerCase(),
        expected: undefined,
      },
      {
        name: `high-s twin ${index}`,
        digest,
        signature: withParts(r, N - s, v === 27 ? 28 : 27),
        claimed: signer,
        expected: /high-s/,
      },
      {
        name: `wrong signer ${index}`,
        digest,
        signature,
        claimed: other,
        expected: new RegExp(`recovers to ${signer}, not to the claimed ${other}`),
      },
      {
        name: `other digest ${index}`,
        digest: `0x${randomBytes(32).toString('hex')}` as Hex,
        signature,
        claimed: signer,
        expected: /recovers to 0x[0-9a-fA-F]{40}, not to the claimed/,
      },
      {
        name: `flipped recovery id ${index}`,
        digest,
        signature: withParts(r, s, v === 27 ? 28 : 27),
        claimed: signer,
        expected: /recovers to 0x[0-9a-fA-F]{40}, not to the claimed|does not recover/,
      },
    )
  }
  const digest = `0x${'ab'.repeat(32)}` as Hex
  const claimed = privateKeyToAccount(generatePrivateKey()).address
  const malformed: Array<[string, string, RegExp]> = [
    ['r = 0', withParts(0n, 1n, 27), /does not recover/],
    ['r = n', withParts(N, 1n, 27), /does not recover/],
    ['r above n', withParts(N + 5n, 1n, 28), /does not recover/],
    // x = 5 has no point on secp256k1 (5³ + 7 = 132 is not a square mod p).
    ['r not the x of a curve point', withParts(5n, 1n, 27), /does not recover/],
    ['r = p - 1', withParts(P - 1n, 1n, 27), /does not recover/],
    ['s = 0', withParts(1n, 0n, 27), /s = 0/],
    ['s = n - 1', withParts(1n, N - 1n, 27), /high-s/],
    ['v = 0', withParts(1n, 1n, 0), /v 0, not 27 or 28/],
    ['v = 29', withParts(1n, 1n, 29), /v 29/],
    ['64 bytes', `0x${'11'.repeat(64)}`, /65 bytes/],
    ['66 bytes', `0x${'11'.repeat(66)}`, /65 bytes/],
    ['not hex', `0x${'zz'.repeat(65)}`, /65 bytes/],
    ['no 0x', '11'.repeat(65), /65 bytes/],
  ]
  for (const [name, signature, expected] of malformed)
    all.push({ name, digest, signature, claimed, expected })
  return all
}

const cases = await vectors()

t.test('native and pure-JS recovery give the same verdict on every vector', async (t) => {
  for (const vector of cases) {
    const fromNative = signatureProblemSync(vector.digest, vector.signature, vector.claimed, native)
    const fromPureJs = signatureProblemSync(vector.digest, vector.signature, vector.claimed, pureJsEcdsa)
    t.equal(fromNative, fromPureJs, `${vector.name}: the same verdict`)
    if (vector.expected === undefined) t.equal(fromNative, undefined, `${vector.name}: valid`)
    else t.match(fromNative, vector.expected, `${vector.name}: ${fromNative}`)
  }
})

t.test('native and pure-JS recover the same address, or both refuse, below the checks too', async (t) => {
  const digest = Buffer.from('cd'.repeat(32), 'hex')
  const compact = (r: bigint, s: bigint) => Buffer.from(`${hex32(r)}${hex32(s)}`, 'hex')
  const raw: Array<[string, Buffer, number]> = [
    [
      'a high-s signature (recovery itself accepts it)',
      compact(0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n, N - 2n),
      0,
    ],
    ['r = 0', compact(0n, 1n), 0],
    ['r = n', compact(N, 1n), 1],
    ['s = n', compact(1n, N), 0],
    ['r not on the curve', compact(5n, 1n), 1],
  ]
  for (const vector of cases.filter((candidate) => /^(valid|other digest|flipped)/.test(candidate.name))) {
    const bytes = Buffer.from(vector.signature.slice(2), 'hex')
    raw.push([vector.name, bytes.subarray(0, 64), bytes[64]! - 27])
  }
  for (const [name, signature, recoveryId] of raw) {
    const outcome = (recovery: Ecdsa) => {
      try {
        return recovery.recoverAddress(digest, signature, recoveryId)
      } catch {
        return 'refused'
      }
    }
    t.equal(outcome(native), outcome(pureJsEcdsa), name)
  }
})

t.test('native and pure-JS sign alike, and as viem does (RFC 6979, low-s, v 27/28)', async (t) => {
  for (let index = 0; index < 32; index++) {
    const key = generatePrivateKey()
    const digest = `0x${randomBytes(32).toString('hex')}` as Hex
    const keyBytes = Buffer.from(key.slice(2), 'hex')
    const digestBytes = Buffer.from(digest.slice(2), 'hex')
    const fromNative = `0x${Buffer.from(native.sign(digestBytes, keyBytes)).toString('hex')}`
    const fromPureJs = `0x${Buffer.from(pureJsEcdsa.sign(digestBytes, keyBytes)).toString('hex')}`
    t.equal(fromNative, fromPureJs, `signature ${index}: native and pure JS`)
    t.equal(fromNative, await sign({ hash: digest, privateKey: key, to: 'hex' }), `signature ${index}: viem`)
    t.equal(
      signatureProblemSync(digest, fromNative, privateKeyToAccount(key).address, native),
      undefined,
      `signature ${index}: valid`,
    )
  }
})

t.test('an aggregator and a signer given the pure-JS implementation use it, and no other', async (t) => {
  const domain: Eip712Domain = {
    name: 'PontisOracle',
    version: '1',
    chainId: 31337,
    verifyingContract: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
  }
  const result = {
    onchainId: `0x${'01'.repeat(32)}`,
    depository: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
    depositId: `0x${'00'.repeat(32)}`,
    depositor: '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
    currency: '0x0000000000000000000000000000000000000000',
    amount: '5',
  }
  const unsigned: UnsignedAttestation = {
    messages: [
      {
        data: {
          domain,
          types: MESSAGE_TYPES.DepositoryDeposit,
          primaryType: 'DepositoryDeposit',
          message: { data: { chainId: 'pontis-local-a', transactionId: `0x${'12'.repeat(32)}` }, result },
        },
        result,
      },
    ],
    execution: {
      idempotencyKey: `0x${'02'.repeat(32)}`,
      actions: [
        encodeHubAction({
          kind: HUB_ACTION.CREDIT,
          to: `0x${'03'.repeat(32)}`,
          asset: `0x${'04'.repeat(32)}`,
          amount: 5n,
        }),
      ],
    },
  }
  const calls: string[] = []
  const counting: Ecdsa = {
    implementation: 'pure-js',
    recoverAddress: (digest, signature, recoveryId) => {
      calls.push('recover')
      return pureJsEcdsa.recoverAddress(digest, signature, recoveryId)
    },
    sign: (digest, privateKey) => {
      calls.push('sign')
      return pureJsEcdsa.sign(digest, privateKey)
    },
  }
  const key = generatePrivateKey()
  const peer = await createSigner({ module: 'raw-private-key', privateKey: key }, { ecdsa: counting })
  const answer = await signAttestation(unsigned, peer, domain)
  t.same(calls, ['sign', 'sign'], 'the signer signed message and execution in pure JS')
  const nativeSigner = await createSigner({ module: 'raw-private-key', privateKey: key })
  t.same(
    await signAttestation(unsigned, nativeSigner, domain),
    answer,
    'the same answer as the native signer',
  )
  calls.length = 0
  const aggregator = new SignatureAggregator({
    domain,
    allowlist: undefined,
    logger: silentLogger,
    ecdsa: counting,
  })
  t.ok(await aggregator.add('peer', answer, false), 'a valid peer answer')
  t.same(calls, ['recover', 'recover'], 'its message and execution signatures were recovered in pure JS')
  t.equal(aggregator.strongest()?.signers.size, 1)
})
