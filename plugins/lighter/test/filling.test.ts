/**
 * Filling on the venue simulator: fills and refunds signed by the plugin really move balances,
 * read back as payouts, re-broadcast safely; what cannot be signed is refused.
 */
import { PontisError } from '@pontis/core/plugin'
import t from 'tap'
import { LIGHTER_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  LIGHTER_SOLVER,
  LIGHTER_UNKNOWN_ACCOUNT_INDEX,
  LIGHTER_USERS,
  lighterAdapter,
  SOLVER_CREDENTIALS,
  startDevnet,
} from './fixtures/lighter-devnet.js'

const FEE = 10_000n
const devnet = await startDevnet(FEE)
t.teardown(() => devnet.stop())
const adapter = await lighterAdapter(devnet.url)
const { filling } = adapter
const { alice, aliceSub, bob } = LIGHTER_USERS
const solver = String(LIGHTER_SOLVER.index)
const idOf = (n: number) => `0x${(0xf111 + n).toString(16).padStart(64, '0')}`

const fillRequest = (orderId: string, recipient: string, amount: bigint) => ({
  orderId,
  recipient,
  currencyId: LIGHTER_NATIVE_CURRENCY_ID,
  amount,
  calls: [],
  topupNativeAmount: 0n,
})

async function rejection(run: () => Promise<unknown>): Promise<PontisError> {
  try {
    await run()
  } catch (error) {
    if (error instanceof PontisError) return error
    throw error
  }
  throw new Error('did not reject')
}

t.test('the solver is the depository account; nonces come from the venue', async (t) => {
  t.equal(filling.solverAddress(SOLVER_CREDENTIALS), solver)
  t.equal(await filling.nextNonce(solver), 0n)
  t.throws(() => filling.solverAddress({ solverKey: 'nonsense' }), TypeError)
})

t.test('a fill moves the balances and reads back as a payout', async (t) => {
  const orderId = idOf(1)
  const before = { solver: devnet.balanceOf(LIGHTER_SOLVER.index), bob: devnet.balanceOf(bob.index) }
  const signed = await filling.signFill(
    fillRequest(orderId, String(bob.index), 4_200_000n),
    SOLVER_CREDENTIALS,
  )
  t.match(signed.transactionId, /^0x[0-9a-f]{64}$/)
  t.equal(signed.amount, 4_200_000n)
  t.match(JSON.parse(signed.raw), { tx_type: 12, tx_info: String })
  t.equal(devnet.balanceOf(bob.index), before.bob, 'nothing moves before the broadcast')
  t.same(await filling.outcome(signed.transactionId), {
    transactionId: signed.transactionId,
    state: 'not_found',
    final: false,
    confirmations: 0,
  })
  await filling.broadcast(signed.raw)
  t.ok(devnet.transaction(signed.transactionId), 'the venue has it under the hash the plugin computed')
  t.equal(devnet.balanceOf(bob.index), before.bob + 4_200_000n, 'recipient credited')
  t.equal(
    devnet.balanceOf(LIGHTER_SOLVER.index),
    before.solver - 4_200_000n - FEE,
    'solver debited with the fee',
  )
  t.same(await filling.outcome(signed.transactionId), {
    transactionId: signed.transactionId,
    state: 'success',
    final: true,
    confirmations: 1,
  })
  t.same((await adapter.reading.readFills?.(signed.transactionId))?.facts, [
    { index: 0, orderId, recipient: String(bob.index), currencyId: '0', amount: 4_200_000n },
  ])
  await filling.broadcast(signed.raw)
  t.equal(
    devnet.balanceOf(bob.index),
    before.bob + 4_200_000n,
    'a re-broadcast is not an error and pays nothing twice',
  )
  t.equal(await filling.nextNonce(solver), 1n)
})

t.test('a refund out of the depository moves the balances', async (t) => {
  const refundId = idOf(2)
  const before = devnet.balanceOf(aliceSub.index)
  const signed = await filling.signRefund(
    {
      refundId,
      source: { kind: 'depository' },
      recipient: String(aliceSub.index),
      currencyId: LIGHTER_NATIVE_CURRENCY_ID,
      amount: 999_999n,
    },
    SOLVER_CREDENTIALS,
  )
  await filling.broadcast(signed.raw)
  t.equal(devnet.balanceOf(aliceSub.index), before + 999_999n)
  t.same((await adapter.reading.readRefunds?.(signed.transactionId))?.facts, [
    { index: 0, orderId: refundId, recipient: String(aliceSub.index), currencyId: '0', amount: 999_999n },
  ])
})

t.test('signing with an allocated nonce, and sequences of fills', async (t) => {
  const next = await filling.nextNonce(solver)
  const first = await filling.signFill(
    fillRequest(idOf(3), String(alice.index), 1_000_000n),
    SOLVER_CREDENTIALS,
    {
      nonce: next,
    },
  )
  const second = await filling.signFill(
    fillRequest(idOf(4), String(alice.index), 2_000_000n),
    SOLVER_CREDENTIALS,
    {
      nonce: next + 1n,
    },
  )
  t.not(first.transactionId, second.transactionId)
  const early = await rejection(() => filling.broadcast(second.raw))
  t.equal(early.code, 'DESTINATION_TX_FAILED', 'the venue refuses a nonce ahead of its turn')
  t.match(early.message, /invalid nonce/)
  const before = devnet.balanceOf(alice.index)
  await filling.broadcast(first.raw)
  await filling.broadcast(second.raw)
  t.equal(devnet.balanceOf(alice.index), before + 3_000_000n)
})

t.test('what cannot be signed or sent', async (t) => {
  const depositAddress = await rejection(() =>
    filling.signRefund(
      {
        refundId: idOf(5),
        source: { kind: 'depositAddress', requestId: idOf(5) },
        recipient: String(alice.index),
        currencyId: '0',
        amount: 1n,
      },
      SOLVER_CREDENTIALS,
    ),
  )
  t.equal(depositAddress.code, 'INVALID_REQUEST')
  t.match(depositAddress.message, /no deposit addresses/)
  t.equal(
    (
      await rejection(() =>
        filling.signFill(fillRequest(idOf(6), String(LIGHTER_UNKNOWN_ACCOUNT_INDEX), 1n), SOLVER_CREDENTIALS),
      )
    ).code,
    'INVALID_RECIPIENT',
  )
  t.equal(
    (await rejection(() => filling.signFill(fillRequest(idOf(6), alice.l1Address, 1n), SOLVER_CREDENTIALS)))
      .code,
    'INVALID_RECIPIENT',
  )
  t.equal(
    (
      await rejection(() =>
        filling.signFill(
          {
            ...fillRequest(idOf(6), String(alice.index), 1n),
            calls: [{ to: `0x${'11'.repeat(20)}`, value: 0n, data: '0x' }],
          },
          SOLVER_CREDENTIALS,
        ),
      )
    ).code,
    'EXTRA_TXS_NOT_SUPPORTED',
  )
  t.equal(
    (
      await rejection(() =>
        filling.signFill(
          { ...fillRequest(idOf(6), String(alice.index), 1n), topupNativeAmount: 5n },
          SOLVER_CREDENTIALS,
        ),
      )
    ).code,
    'INVALID_REQUEST',
  )
  // Another account's key: the venue refuses the signature.
  const forged = await filling.signFill(fillRequest(idOf(7), String(alice.index), 1n), {
    solverKey: bob.apiKeySeed,
  })
  const refused = await rejection(() => filling.broadcast(forged.raw))
  t.equal(refused.code, 'DESTINATION_TX_FAILED')
  t.match(refused.message, /invalid signature/)
  t.equal((await rejection(() => filling.broadcast('not json'))).code, 'INVALID_REQUEST')
  // More than the depository holds.
  const tooMuch = await filling.signFill(
    fillRequest(idOf(8), String(alice.index), devnet.balanceOf(LIGHTER_SOLVER.index)),
    SOLVER_CREDENTIALS,
  )
  t.match((await rejection(() => filling.broadcast(tooMuch.raw))).message, /insufficient balance/)
})
