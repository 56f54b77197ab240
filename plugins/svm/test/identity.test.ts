import { PontisError } from '@pontis/core/plugin'
import { Keypair } from '@solana/web3.js'
import bs58 from 'bs58'
import t from 'tap'
import { createSvmIdentity, SVM_NATIVE_CURRENCY_ID } from '../src/index.js'

const identity = createSvmIdentity({ id: 792703809, displayName: 'Solana' })
const key = Keypair.fromSeed(new Uint8Array(32).fill(7))
const address = key.publicKey.toBase58()
const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'

function swapCase(value: string): string {
  // Flip the case of the first letter whose other case is still base58 (I, O and l are not).
  for (let index = 0; index < value.length; index++) {
    const char = value[index] as string
    const flipped = char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase()
    if (flipped !== char && /[1-9A-HJ-NP-Za-km-z]/.test(flipped)) {
      return value.slice(0, index) + flipped + value.slice(index + 1)
    }
  }
  throw new Error('no flippable letter')
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    if (error instanceof PontisError) return error.code
    throw error
  }
  return undefined
}

t.test('valid keys and mints are kept exactly as given (case-sensitive)', async (t) => {
  t.equal(identity.normalizeAddress(address, 'user'), address)
  t.equal(identity.normalizeCurrency(mint, 'input'), mint)
  t.equal(identity.normalizeCurrency(SVM_NATIVE_CURRENCY_ID, 'output'), SVM_NATIVE_CURRENCY_ID)
  t.equal(identity.nativeCurrencyId, '11111111111111111111111111111111')
  t.ok(identity.isValidAddress(address))
})

const invalid: ReadonlyArray<{ name: string; value: string; reason: RegExp }> = [
  { name: 'EVM address', value: '0x7099797051812dc3a010c7d01b50e0d17dc79c8a', reason: /EVM address/ },
  {
    name: 'checksummed EVM address',
    value: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    reason: /EVM address/,
  },
  { name: 'bad base58 (0, O, I, l)', value: `0${address.slice(1)}`, reason: /not base58/ },
  {
    name: 'too short (31 bytes)',
    value: bs58.encode(new Uint8Array(31).fill(9)),
    reason: /decodes to 31 bytes/,
  },
  {
    name: 'too long (33 bytes)',
    value: bs58.encode(new Uint8Array(33).fill(9)),
    reason: /decodes to 33 bytes/,
  },
  {
    name: 'a signature (64 bytes)',
    value: bs58.encode(new Uint8Array(64).fill(3)),
    reason: /decodes to 64 bytes/,
  },
  { name: 'empty', value: '', reason: /not base58/ },
  { name: 'spaces', value: ` ${address}`, reason: /not base58/ },
]

t.test('invalid addresses: the role picks the code, the message says why', async (t) => {
  for (const { name, value, reason } of invalid) {
    t.equal(
      codeOf(() => identity.normalizeAddress(value, 'recipient')),
      'INVALID_RECIPIENT',
      `${name}: recipient`,
    )
    t.equal(
      codeOf(() => identity.normalizeAddress(value, 'user')),
      'INVALID_ADDRESS',
      `${name}: user`,
    )
    t.equal(
      codeOf(() => identity.normalizeCurrency(value, 'input')),
      'INVALID_INPUT_CURRENCY',
      `${name}: input`,
    )
    t.equal(
      codeOf(() => identity.normalizeCurrency(value, 'output')),
      'INVALID_OUTPUT_CURRENCY',
      `${name}: output`,
    )
    t.notOk(identity.isValidAddress(value), `${name}: not valid`)
    t.throws(() => identity.normalizeAddress(value, 'user'), { message: reason }, `${name}: reason`)
    t.throws(
      () => identity.normalizeAddress(value, 'user'),
      { message: /Solana \(792703809\)/ },
      `${name}: names the chain`,
    )
  }
})

t.test('wrong case is another key: it decodes to other bytes or to no key at all', async (t) => {
  const flipped = swapCase(address)
  t.not(flipped, address)
  if (identity.isValidAddress(flipped)) {
    t.not(identity.encodeAddress(flipped, 'user'), identity.encodeAddress(address, 'user'), 'a different key')
  } else {
    t.equal(
      codeOf(() => identity.normalizeAddress(flipped, 'recipient')),
      'INVALID_RECIPIENT',
    )
  }
  const flippedMint = swapCase(mint)
  t.not(
    identity.isValidAddress(flippedMint) ? identity.encodeAddress(flippedMint, 'currency') : 'invalid',
    identity.encodeAddress(mint, 'currency'),
  )
})

t.test('encodings for signed messages: the 32 key bytes, the 64 signature bytes', async (t) => {
  t.equal(
    identity.encodeAddress(address, 'recipient'),
    `0x${Buffer.from(key.publicKey.toBytes()).toString('hex')}`,
  )
  t.equal(identity.encodeAddress(SVM_NATIVE_CURRENCY_ID, 'currency'), `0x${'00'.repeat(32)}`)
  const signature = bs58.encode(new Uint8Array(64).fill(5))
  t.equal(identity.encodeTransactionId(signature), `0x${'05'.repeat(64)}`)
  t.equal(
    codeOf(() => identity.encodeTransactionId(`0x${'ab'.repeat(32)}`)),
    'INVALID_REQUEST',
    'an EVM hash',
  )
  t.equal(
    codeOf(() => identity.encodeTransactionId(address)),
    'INVALID_REQUEST',
    'a 32-byte key',
  )
  t.equal(
    codeOf(() => identity.encodeAddress('0x7099797051812dc3a010c7d01b50e0d17dc79c8a', 'recipient')),
    'INVALID_RECIPIENT',
  )
})

t.test('verifyMessage checks ed25519 signatures and never throws', async (t) => {
  const { ed25519 } = await import('@noble/curves/ed25519')
  const message = Buffer.from('a1'.repeat(32), 'hex')
  const signature = ed25519.sign(message, key.secretKey.slice(0, 32))
  const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}` as const
  t.ok(await identity.verifyMessage?.(address, hex(message), hex(signature)))
  const other = Keypair.fromSeed(new Uint8Array(32).fill(8)).publicKey.toBase58()
  t.notOk(await identity.verifyMessage?.(other, hex(message), hex(signature)), 'another signer')
  const tampered = Uint8Array.from(signature)
  tampered[0] = (tampered[0] as number) ^ 1
  t.notOk(await identity.verifyMessage?.(address, hex(message), hex(tampered)), 'tampered')
  t.notOk(await identity.verifyMessage?.(address, hex(message), '0x1234'), 'short')
  t.notOk(
    await identity.verifyMessage?.(
      '0x7099797051812dc3a010c7d01b50e0d17dc79c8a',
      hex(message),
      hex(signature),
    ),
    'EVM signer',
  )
})
