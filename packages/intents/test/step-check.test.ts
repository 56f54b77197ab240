/**
 * Served step items are checked against the origin plugin's declarations: a format it declares,
 * valid under its schema, and permits of a kind it declares; anything else fails the quote naming
 * the plugin.
 */
import type { PreparedStep, RegisteredChain, Registry } from '@pontis/core'
import evm from '@pontis/plugin-evm'
import t from 'tap'
import { createStepCheck } from '../src/quote/step-check.js'

const chain = { id: 8453, plugin: evm } as unknown as RegisteredChain
const check = createStepCheck({
  plugins: () => [{ plugin: evm, source: '@pontis/plugin-evm' }],
} as unknown as Registry)
const transaction = {
  format: 'evm-transaction',
  to: `0x${'11'.repeat(20)}`,
  data: '0x',
  value: '0',
  chainId: 8453,
}
const step = (
  data: Record<string, unknown>,
  permit?: PreparedStep['items'][number]['permit'],
): PreparedStep => ({
  id: 'deposit',
  kind: 'transaction',
  action: 'Confirm transaction in your wallet',
  description: 'Deposit',
  items: [{ data, ...(permit ? { permit } : {}) }],
})

t.test('a declared, valid item passes', async (t) => {
  t.doesNotThrow(() => check(chain, [step(transaction)]))
})

t.test('an item of a format the plugin does not declare fails, naming plugin and format', async (t) => {
  t.throws(() => check(chain, [step({ ...transaction, format: 'svm-transaction' })]), {
    code: 'UNKNOWN_ERROR',
    message:
      /plugin '@pontis\/plugin-evm' served steps\[0\]\.items\[0\] of format 'svm-transaction', which it does not declare/,
  })
})

t.test('an item its schema refuses fails with the schema’s reason', async (t) => {
  t.throws(() => check(chain, [step({ ...transaction, value: '-1' })]), {
    code: 'UNKNOWN_ERROR',
    message: /'evm-transaction' schema refuses: .*value/,
  })
})

t.test('a permit of a kind the plugin does not declare fails', async (t) => {
  const permit = { kind: 'eip2612-permit', validAfter: 0n, validBefore: 1n }
  t.throws(() => check(chain, [step(transaction, permit)]), { message: /permit of kind 'eip2612-permit'/ })
  t.doesNotThrow(() => check(chain, [step(transaction, { ...permit, kind: 'eip3009-receive' })]))
})
