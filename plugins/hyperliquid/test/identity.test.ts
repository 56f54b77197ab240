/**
 * Hyperliquid identity: 0x addresses (any case in, lower case out), role-aware refusals of other
 * families' addresses, 16-byte token ids (a 20-byte EVM address is refused with a message saying
 * so), encodings and message signatures.
 */
import { isPontisError } from '@pontis/core/plugin'
import t from 'tap'
import { privateKeyToAccount } from 'viem/accounts'
import { createHyperliquidIdentity, HYPERLIQUID_NATIVE_CURRENCY_ID } from '../src/index.js'
import { HYPERLIQUID_HYPE_ID, HYPERLIQUID_USERS } from './fixtures/hyperliquid-devnet.js'

const identity = createHyperliquidIdentity({ id: 1337, displayName: 'Hyperliquid' })
const alice = HYPERLIQUID_USERS.alice

function refusal(run: () => unknown): { code?: string; message?: string } {
  try {
    run()
  } catch (error) {
    if (isPontisError(error)) return { code: error.code, message: error.message }
    throw error
  }
  return {}
}

t.test('addresses', async (t) => {
  const mixed = privateKeyToAccount(alice.privateKey).address // EIP-55 checksummed
  t.not(mixed, alice.address)
  for (const spelling of [alice.address, mixed, alice.address.toUpperCase().replace('0X', '0x')]) {
    t.equal(identity.normalizeAddress(spelling, 'user'), alice.address, `${spelling} → lower case`)
    t.equal(identity.encodeAddress(spelling, 'recipient'), alice.address, 'encodes to its 20 bytes')
  }
  const cases: Array<[string, RegExp]> = [
    ['So11111111111111111111111111111111111111112', /40 hexadecimal digits/],
    ['TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', /Tron/],
    [`0x${'ab'.repeat(19)}`, /40 hexadecimal digits/],
    [`0x${'ab'.repeat(21)}`, /40 hexadecimal digits/],
    [`0x${'g1'.repeat(20)}`, /40 hexadecimal digits/],
    [alice.address.slice(2), /40 hexadecimal digits/],
    [HYPERLIQUID_HYPE_ID, /token id/],
  ]
  for (const [value, reason] of cases) {
    t.notOk(identity.isValidAddress(value), `${value} is not an address`)
    const asRecipient = refusal(() => identity.normalizeAddress(value, 'recipient'))
    t.equal(asRecipient.code, 'INVALID_RECIPIENT')
    t.match(asRecipient.message, reason)
    t.match(asRecipient.message, /^recipient '.*' is not a valid address on Hyperliquid \(1337\)/)
    t.equal(refusal(() => identity.normalizeAddress(value, 'refundTo')).code, 'INVALID_ADDRESS')
    t.equal(refusal(() => identity.encodeAddress(value, 'depositor')).code, 'INVALID_ADDRESS')
  }
  t.notOk(identity.isValidAddress(42 as unknown as string))
})

t.test('currency ids', async (t) => {
  t.equal(identity.nativeCurrencyId, HYPERLIQUID_NATIVE_CURRENCY_ID)
  t.equal(
    identity.normalizeCurrency(HYPERLIQUID_HYPE_ID.toUpperCase().replace('0X', '0x')),
    HYPERLIQUID_HYPE_ID,
  )
  t.equal(identity.encodeAddress(HYPERLIQUID_NATIVE_CURRENCY_ID, 'output'), `0x${'0'.repeat(32)}`)
  t.equal(identity.encodeAddress(HYPERLIQUID_HYPE_ID, 'input').length, 2 + 32, '16 bytes')
  const evm = refusal(() => identity.normalizeCurrency(`0x${'0'.repeat(40)}`, 'input'))
  t.equal(evm.code, 'INVALID_INPUT_CURRENCY')
  t.match(evm.message, /20-byte EVM address; Hyperliquid token ids are 16 bytes/)
  t.equal(refusal(() => identity.normalizeCurrency('USDC', 'output')).code, 'INVALID_OUTPUT_CURRENCY')
  t.equal(refusal(() => identity.normalizeCurrency(`0x${'ab'.repeat(17)}`)).code, 'UNSUPPORTED_CURRENCY')
  t.equal(refusal(() => identity.encodeAddress(alice.address, 'currency')).code, 'UNSUPPORTED_CURRENCY')
})

t.test('transaction ids and messages', async (t) => {
  const hash = `0x${'AB'.repeat(32)}`
  t.equal(identity.encodeTransactionId(hash), hash.toLowerCase())
  for (const bad of ['ab'.repeat(32), `0x${'ab'.repeat(31)}`, 'not a hash']) {
    t.equal(refusal(() => identity.encodeTransactionId(bad)).code, 'INVALID_REQUEST', bad)
  }
  const message = '0x68656c6c6f' as const
  const signature = await privateKeyToAccount(alice.privateKey).signMessage({ message: { raw: message } })
  t.ok(await identity.verifyMessage?.(alice.address, message, signature))
  t.notOk(await identity.verifyMessage?.(HYPERLIQUID_USERS.bob.address, message, signature))
  t.notOk(await identity.verifyMessage?.(alice.address, message, '0x1234'))
  t.notOk(await identity.verifyMessage?.('not an address', message, signature))
})
