/**
 * Tron identity: base58check (T…) canonical, 41-hex accepted and normalised, other forms refused
 * with errors naming the role and the Tron form; currency ids; encodings.
 */
import { PontisError } from '@pontis/core/plugin'
import t from 'tap'
import { createTronIdentity, TRON_NATIVE_CURRENCY_ID } from '../src/index.js'
import { TRON_USDT_ADDRESS, TRON_USERS } from './fixtures/tron-devnet.js'

const identity = createTronIdentity({ id: 728126428, displayName: 'Tron' })
const alice = TRON_USERS.alice

function refusal(fn: () => unknown): PontisError {
  try {
    fn()
  } catch (error) {
    if (error instanceof PontisError) return error
    throw error
  }
  throw new Error('expected a refusal')
}

t.test('valid addresses normalise to base58', async (t) => {
  t.equal(identity.normalizeAddress(alice.address, 'user'), alice.address)
  t.equal(identity.normalizeAddress(alice.hexAddress, 'user'), alice.address, '41-hex')
  t.equal(
    identity.normalizeAddress(alice.hexAddress.toUpperCase(), 'recipient'),
    alice.address,
    'upper-case hex',
  )
  t.ok(identity.isValidAddress(TRON_USDT_ADDRESS))
  t.equal(
    identity.encodeAddress(alice.address, 'user'),
    `0x${alice.hexAddress.slice(2)}`,
    '20 bytes without 0x41',
  )
  t.equal(identity.encodeAddress(alice.hexAddress, 'user'), identity.encodeAddress(alice.address, 'user'))
})

t.test('invalid addresses are refused, role-aware, naming the Tron form', async (t) => {
  const evm = `0x${alice.hexAddress.slice(2)}`
  const asRecipient = refusal(() => identity.normalizeAddress(evm, 'recipient'))
  t.equal(asRecipient.code, 'INVALID_RECIPIENT')
  t.match(asRecipient.message, /recipient .* EVM 0x address .*base58check address \(T…, 34 characters\)/)
  const asUser = refusal(() => identity.normalizeAddress(evm, 'user'))
  t.equal(asUser.code, 'INVALID_ADDRESS')
  t.match(asUser.message, /^user /)
  const last = alice.address.at(-1) === 'a' ? 'b' : 'a'
  const badChecksum = `${alice.address.slice(0, -1)}${last}`
  t.match(refusal(() => identity.normalizeAddress(badChecksum, 'refundTo')).message, /checksum/)
  for (const bad of [
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T',
    alice.address.slice(0, -1),
    `${alice.address}1`,
    `42${alice.hexAddress.slice(2)}`,
    alice.address.toLowerCase(),
    TRON_NATIVE_CURRENCY_ID,
    '',
  ]) {
    t.notOk(identity.isValidAddress(bad), `${bad} is not valid`)
    t.match(refusal(() => identity.normalizeAddress(bad, 'user')).message, /Tron base58check address/)
  }
  t.notOk(identity.isValidAddress(42 as unknown as string))
})

t.test('currencies', async (t) => {
  t.equal(identity.nativeCurrencyId, TRON_NATIVE_CURRENCY_ID)
  t.equal(identity.normalizeCurrency(TRON_NATIVE_CURRENCY_ID), TRON_NATIVE_CURRENCY_ID)
  const usdtHex = `41${identity.encodeAddress(TRON_USDT_ADDRESS, 'currency').slice(2)}`
  t.equal(identity.normalizeCurrency(usdtHex, 'input'), TRON_USDT_ADDRESS)
  t.equal(identity.encodeAddress(TRON_NATIVE_CURRENCY_ID, 'currency'), `0x${'0'.repeat(40)}`)
  t.equal(refusal(() => identity.normalizeCurrency('usdt', 'input')).code, 'INVALID_INPUT_CURRENCY')
  t.equal(
    refusal(() => identity.normalizeCurrency(`0x${'0'.repeat(40)}`, 'output')).code,
    'INVALID_OUTPUT_CURRENCY',
  )
  t.equal(refusal(() => identity.normalizeCurrency('trx')).code, 'UNSUPPORTED_CURRENCY')
})

t.test('transaction ids', async (t) => {
  const id = 'AB'.repeat(32)
  t.equal(identity.encodeTransactionId(id), `0x${'ab'.repeat(32)}`)
  t.equal(identity.encodeTransactionId(`0x${id}`), `0x${'ab'.repeat(32)}`)
  for (const bad of ['ab'.repeat(31), `${'ab'.repeat(32)}00`, 'xyz']) {
    t.equal(refusal(() => identity.encodeTransactionId(bad)).code, 'INVALID_REQUEST')
  }
})
