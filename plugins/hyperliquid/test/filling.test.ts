/**
 * Hyperliquid filling on the devnet: the solver's sends move balances, show on the explorer as the
 * solver's sends (they carry no order id, so the plugin does not read them as order facts), broadcast
 * twice without error, and report their outcome; refunds come out of the depository only; refusals.
 */
import { isPontisError } from '@pontis/core/plugin'
import t from 'tap'
import { HYPERLIQUID_NATIVE_CURRENCY_ID, HyperliquidExchangeError } from '../src/index.js'
import {
  HYPERLIQUID_HYPE_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_USERS,
  hyperliquidAdapter,
  SOLVER_KEY,
  startDevnet,
} from './fixtures/hyperliquid-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await hyperliquidAdapter(devnet.url)
const { filling, reading } = adapter
const credentials = { solverKey: SOLVER_KEY }

/** The simulator's explorer record of a transaction. */
async function explorerTx(hash: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${devnet.url}/explorer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'txDetails', hash }),
  })
  return ((await response.json()) as { tx: Record<string, unknown> }).tx
}
const { alice, bob } = HYPERLIQUID_USERS
const fill = (overrides: Record<string, unknown> = {}) => ({
  orderId: `0x${'33'.repeat(32)}`,
  recipient: alice.address,
  currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
  amount: 500_000_000n,
  calls: [],
  topupNativeAmount: 0n,
  ...overrides,
})

t.test('solver address and nonces', async (t) => {
  t.equal(filling.solverAddress(credentials), HYPERLIQUID_SOLVER.address)
  t.throws(() => filling.solverAddress({ solverKey: '0x1234' }), { code: 'INVALID_REQUEST' })
  const before = Date.now()
  const nonce = await filling.nextNonce(HYPERLIQUID_SOLVER.address)
  t.ok(nonce >= BigInt(before), 'a ms timestamp, at least now')
  const future = nonce + 60_000n
  await filling.signFill(fill(), credentials, { nonce: future })
  t.equal(await filling.nextNonce(HYPERLIQUID_SOLVER.address), future + 1n, 'above the last nonce used')
})

t.test("a fill moves the balance and shows as the solver's send", async (t) => {
  const before = devnet.balance(alice.address, HYPERLIQUID_NATIVE_CURRENCY_ID)
  const nonce = await filling.nextNonce(HYPERLIQUID_SOLVER.address)
  const signed = await filling.signFill(fill(), credentials, { nonce })
  t.match(signed.transactionId, /^0x[0-9a-f]{64}$/)
  t.equal(signed.amount, 500_000_000n)
  t.match(JSON.parse(signed.raw), {
    action: { type: 'usdSend', amount: '5', time: Number(nonce) },
    nonce: Number(nonce),
  })
  t.match(await filling.outcome(signed.transactionId), { state: 'not_found', final: false })
  await filling.broadcast(signed.raw)
  await filling.broadcast(signed.raw) // a repeat is not an error
  t.equal(devnet.balance(alice.address, HYPERLIQUID_NATIVE_CURRENCY_ID), before + 500_000_000n, 'paid once')
  t.match(await filling.outcome(signed.transactionId), { state: 'success', final: true, confirmations: 1 })
  t.equal(reading.readFills, undefined, 'payouts carry no order id here, so they are not read as order facts')
  t.match(await explorerTx(signed.transactionId), {
    user: HYPERLIQUID_SOLVER.address,
    action: { type: 'usdSend', destination: alice.address, amount: '5', time: Number(nonce) },
    error: null,
  })
  const hype = await filling.signFill(fill({ currencyId: HYPERLIQUID_HYPE_ID, amount: 1n }), credentials)
  const hypeBefore = devnet.balance(alice.address, HYPERLIQUID_HYPE_ID)
  await filling.broadcast(hype.raw)
  t.equal(devnet.balance(alice.address, HYPERLIQUID_HYPE_ID), hypeBefore + 1n, 'a spot fill')
})

t.test('refunds out of the depository', async (t) => {
  const before = devnet.balance(bob.address, HYPERLIQUID_HYPE_ID)
  const refund = await filling.signRefund(
    {
      refundId: `0x${'44'.repeat(32)}`,
      source: { kind: 'depository' },
      recipient: bob.address,
      currencyId: HYPERLIQUID_HYPE_ID,
      amount: 300_000_000n,
    },
    credentials,
  )
  await filling.broadcast(refund.raw)
  t.equal(devnet.balance(bob.address, HYPERLIQUID_HYPE_ID), before + 300_000_000n)
  t.equal(reading.readRefunds, undefined)
  t.match(await explorerTx(refund.transactionId), {
    user: HYPERLIQUID_SOLVER.address,
    action: { type: 'spotSend', destination: bob.address, amount: '3' },
    error: null,
  })
  await t.rejects(
    filling.signRefund(
      {
        refundId: `0x${'44'.repeat(32)}`,
        source: { kind: 'depositAddress', requestId: `0x${'55'.repeat(32)}` },
        recipient: bob.address,
        currencyId: HYPERLIQUID_HYPE_ID,
        amount: 1n,
      },
      credentials,
    ),
    { code: 'UNSUPPORTED_ROUTE' },
  )
  await t.rejects(
    filling.signRefund(
      {
        refundId: `0x${'44'.repeat(32)}`,
        source: { kind: 'depository' },
        recipient: bob.address,
        currencyId: HYPERLIQUID_HYPE_ID,
        amount: 1n,
      },
      { solverKey: alice.privateKey },
    ),
    { code: 'UNSUPPORTED_EXECUTION_TYPE' },
  )
})

t.test('failures', async (t) => {
  await t.rejects(
    filling.signFill(fill({ calls: [{ to: alice.address, value: 0n, data: '0x' }] }), credentials),
    {
      code: 'EXTRA_TXS_NOT_SUPPORTED',
    },
  )
  await t.rejects(filling.signFill(fill({ topupNativeAmount: 1n }), credentials), {
    code: 'UNSUPPORTED_ROUTE',
  })
  await t.rejects(filling.signFill(fill({ recipient: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' }), credentials), {
    code: 'INVALID_RECIPIENT',
  })
  // More than the solver holds: the venue executes it with an error; the outcome is reverted.
  const tooMuch = await filling.signFill(fill({ amount: 10n ** 20n }), credentials)
  await filling.broadcast(tooMuch.raw)
  t.match(await filling.outcome(tooMuch.transactionId), {
    state: 'reverted',
    final: true,
    revert: { error: 'Insufficient balance for withdrawal' },
  })
  // A nonce outside the venue's window is refused and never recorded: broadcasting fails.
  const stale = await filling.signFill(fill(), credentials, {
    nonce: BigInt(Date.now() - 3 * 24 * 3600 * 1000),
  })
  const error = await filling.broadcast(stale.raw).catch((caught: unknown) => caught)
  t.ok(error instanceof HyperliquidExchangeError, 'refused')
  t.match((error as Error).message, /Invalid nonce/)
  // A body the venue cannot deserialize (v is not 27/28) is refused for good, not retried.
  const good = JSON.parse((await filling.signFill(fill(), credentials)).raw)
  const undeserializable = await filling
    .broadcast(JSON.stringify({ ...good, signature: { ...good.signature, v: 1 } }))
    .catch((caught: unknown) => caught)
  t.ok(undeserializable instanceof HyperliquidExchangeError, 'a 422 is a refusal')
  t.match((undeserializable as Error).message, /422: Failed to deserialize/)
  const malformed = await filling.broadcast('{"action":1}').catch((caught: unknown) => caught)
  t.ok(isPontisError(malformed) && malformed.code === 'INVALID_REQUEST')
})
