/**
 * Identity: account indexes are the addresses (decimal, no sign, no leading zeros, within 48 bits);
 * wallet addresses and other families' forms are refused with a message saying how to find the
 * account index; configured asset ids are the currency ids; encodings are 32-byte big-endian.
 */
import { type IdentityCapability, PontisError } from '@pontis/core/plugin'
import t from 'tap'
import { createLighterIdentity, LIGHTER_MAX_ACCOUNT_INDEX } from '../src/index.js'

const label = { id: 3586256, displayName: 'Lighter' }
const identity: IdentityCapability = createLighterIdentity(['0', '7'], label)

function errorOf(run: () => unknown): PontisError {
  try {
    run()
  } catch (error) {
    if (error instanceof PontisError) return error
    throw error
  }
  throw new Error('did not throw')
}

t.test('valid account indexes are canonical as given', async (t) => {
  for (const index of ['0', '1', '1001', '281474976710001', String(LIGHTER_MAX_ACCOUNT_INDEX)]) {
    t.ok(identity.isValidAddress(index), `${index} is valid`)
    t.equal(identity.normalizeAddress(index, 'user'), index)
    t.equal(identity.normalizeAddress(index, 'recipient'), index)
  }
})

t.test('wrong address forms are refused with the lookup hint', async (t) => {
  const invalid: [string, string, RegExp][] = [
    [
      'EVM wallet address',
      '0xa11ce00000000000000000000000000000000a11',
      /wallet address is not an exchange account/,
    ],
    ['base58 (Solana) address', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', /exchange account index/],
    ['bech32 (Bitcoin) address', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', /exchange account index/],
    ['negative', '-1001', /no sign/],
    ['explicit plus', '+1001', /no sign/],
    ['leading zeros', '01001', /no leading zeros/],
    ['fractional', '1001.5', /exchange account index/],
    ['hex', '0x3e9', /exchange account index/],
    ['above 48 bits', String(LIGHTER_MAX_ACCOUNT_INDEX + 1), /go up to 281474976710655/],
    ['far too large', '1'.repeat(30), /exchange account index/],
    ['empty', '', /exchange account index/],
    ['padded', ' 1001', /exchange account index/],
  ]
  for (const [name, value, reason] of invalid) {
    t.notOk(identity.isValidAddress(value), `${name}: invalid`)
    const asRecipient = errorOf(() => identity.normalizeAddress(value, 'recipient'))
    t.equal(asRecipient.code, 'INVALID_RECIPIENT', `${name}: INVALID_RECIPIENT as recipient`)
    t.match(asRecipient.message, reason, `${name}: says why`)
    t.match(asRecipient.message, /accountsByL1Address/, `${name}: says how to look the index up`)
    t.equal(
      errorOf(() => identity.normalizeAddress(value, 'user')).code,
      'INVALID_ADDRESS',
      `${name}: INVALID_ADDRESS as user`,
    )
    t.equal(errorOf(() => identity.encodeAddress(value, 'refundTo')).code, 'INVALID_ADDRESS')
  }
  for (const notString of [undefined, null, 1001, {}]) t.notOk(identity.isValidAddress(notString as string))
})

t.test('currency ids are the configured asset ids', async (t) => {
  t.equal(identity.nativeCurrencyId, '0')
  t.equal(identity.normalizeCurrency('0'), '0')
  t.equal(identity.normalizeCurrency('7', 'input'), '7')
  const cases: [string, 'input' | 'output' | 'currency', string][] = [
    ['3', 'input', 'INVALID_INPUT_CURRENCY'],
    ['00', 'output', 'INVALID_OUTPUT_CURRENCY'],
    ['0x0000000000000000000000000000000000000000', 'currency', 'UNSUPPORTED_CURRENCY'],
    ['usdc', 'currency', 'UNSUPPORTED_CURRENCY'],
  ]
  for (const [value, role, code] of cases) {
    t.equal(errorOf(() => identity.normalizeCurrency(value, role)).code, code, `${value} as ${role}`)
  }
})

t.test('encodings', async (t) => {
  t.equal(identity.encodeAddress('1001', 'recipient'), `0x${'0'.repeat(61)}3e9`)
  t.equal(
    identity.encodeAddress(String(LIGHTER_MAX_ACCOUNT_INDEX), 'user'),
    `0x${'0'.repeat(52)}ffffffffffff`,
  )
  t.equal(identity.encodeAddress('7', 'output'), `0x${'0'.repeat(63)}7`)
  t.equal(errorOf(() => identity.encodeAddress('3', 'input')).code, 'INVALID_INPUT_CURRENCY')
  const hash = `0x${'Ab'.repeat(32)}`
  t.equal(identity.encodeTransactionId(hash), hash.toLowerCase())
  t.equal(identity.encodeTransactionId('ab'.repeat(32)), `0x${'ab'.repeat(32)}`, 'the 0x prefix is optional')
  for (const garbage of ['', '0x', `0x${'ab'.repeat(31)}`, `0x${'ab'.repeat(33)}`, '1001']) {
    t.equal(
      errorOf(() => identity.encodeTransactionId(garbage)).code,
      'INVALID_REQUEST',
      `${garbage} refused`,
    )
  }
})
