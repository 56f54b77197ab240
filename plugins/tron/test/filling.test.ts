/**
 * Tron filling on the devnet: fills from the solver and refunds from the vault (allocator key)
 * move balances, re-broadcasting is harmless, outcomes follow the chain, refusals are clear.
 */

import { PontisError, type SignedTransaction } from '@pontis/core/plugin'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import t from 'tap'
import { TRON_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  ALLOCATOR_KEY,
  idOf,
  SOLVER_KEY,
  startDevnet,
  TRON_SOLVER,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  tronAdapter,
} from './fixtures/tron-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await tronAdapter(devnet.url)
const { filling, reading } = adapter
const credentials = { solverKey: SOLVER_KEY, allocatorKey: ALLOCATOR_KEY }
const { alice, bob } = TRON_USERS

const fill = (currencyId: string, amount: bigint, n: number) =>
  filling.signFill(
    { orderId: idOf(n), recipient: bob.address, currencyId, amount, calls: [], topupNativeAmount: 0n },
    credentials,
  )

t.test('solver address and nonces', async (t) => {
  t.equal(filling.solverAddress(credentials), TRON_SOLVER.address)
  t.equal(await filling.nextNonce(TRON_SOLVER.address), 0n, 'Tron has no nonces')
})

t.test('a TRX fill pays the recipient, tagged with the order id; re-broadcast is fine', async (t) => {
  const before = devnet.trxBalance(bob.address)
  const signed = await fill(TRON_NATIVE_CURRENCY_ID, 3_000_000n, 1)
  t.equal(signed.amount, 3_000_000n)
  t.match(signed.transactionId, /^[0-9a-f]{64}$/)
  t.equal((await filling.outcome(signed.transactionId)).state, 'not_found')
  await filling.broadcast(signed.raw)
  t.same(
    await filling.outcome(signed.transactionId),
    { transactionId: signed.transactionId, state: 'pending', final: false },
    'broadcast, not mined: pending, no confirmations',
  )
  const pendingFill = await reading.readFills?.(signed.transactionId)
  t.equal(pendingFill?.state, 'pending')
  t.equal(pendingFill?.facts[0]?.orderId, idOf(1), 'with the payout it makes')
  await filling.broadcast(signed.raw)
  t.equal(devnet.trxBalance(bob.address), before + 3_000_000n)
  devnet.mine(1)
  const outcome = await filling.outcome(signed.transactionId)
  t.same(outcome, { transactionId: signed.transactionId, state: 'success', final: false, confirmations: 1 })
  await filling.broadcast(signed.raw)
  const read = await reading.readFills?.(signed.transactionId)
  t.same(read?.facts, [
    {
      index: 0,
      orderId: idOf(1),
      recipient: bob.address,
      currencyId: TRON_NATIVE_CURRENCY_ID,
      amount: 3_000_000n,
    },
  ])
  devnet.mine(18)
  t.equal((await filling.outcome(signed.transactionId)).final, true)
})

t.test('a USDT fill moves tokens; one above the solver balance reverts', async (t) => {
  const before = devnet.usdtBalance(bob.address)
  const signed = await fill(TRON_USDT_ADDRESS, 5_000_000n, 2)
  await filling.broadcast(signed.raw)
  devnet.mine(1)
  t.equal(devnet.usdtBalance(bob.address), before + 5_000_000n)
  t.equal((await reading.readFills?.(signed.transactionId))?.facts[0]?.orderId, idOf(2))
  const tooMuch = await fill(TRON_USDT_ADDRESS, devnet.usdtBalance(TRON_SOLVER.address) + 1n, 3)
  await filling.broadcast(tooMuch.raw)
  t.equal((await filling.outcome(tooMuch.transactionId)).state, 'pending', 'the result is known once mined')
  devnet.mine(1)
  const outcome = await filling.outcome(tooMuch.transactionId)
  t.equal(outcome.state, 'reverted')
  t.same(outcome.revert, { contractRet: 'REVERT' })
})

t.test('refunds come out of the vault, signed with the allocator key', async (t) => {
  const vaultBefore = devnet.usdtBalance(TRON_VAULT.address)
  const aliceBefore = devnet.usdtBalance(alice.address)
  const signed = await filling.signRefund(
    {
      refundId: idOf(5),
      source: { kind: 'depository' },
      recipient: alice.address,
      currencyId: TRON_USDT_ADDRESS,
      amount: 1_250_000n,
    },
    credentials,
  )
  await filling.broadcast(signed.raw)
  devnet.mine(1)
  t.equal(devnet.usdtBalance(TRON_VAULT.address), vaultBefore - 1_250_000n)
  t.equal(devnet.usdtBalance(alice.address), aliceBefore + 1_250_000n)
  t.same((await reading.readRefunds?.(signed.transactionId))?.facts, [
    {
      index: 0,
      orderId: idOf(5),
      recipient: alice.address,
      currencyId: TRON_USDT_ADDRESS,
      amount: 1_250_000n,
    },
  ])
  const refund = {
    refundId: idOf(6),
    source: { kind: 'depository' as const },
    recipient: alice.address,
    currencyId: TRON_NATIVE_CURRENCY_ID,
    amount: 1n,
  }
  await t.rejects(filling.signRefund(refund, { solverKey: SOLVER_KEY, allocatorKey: SOLVER_KEY }), {
    code: 'INVALID_REQUEST',
  })
  await t.rejects(filling.signRefund(refund, { solverKey: SOLVER_KEY }), { code: 'INVALID_REQUEST' })
  await t.rejects(
    filling.signRefund({ ...refund, source: { kind: 'depositAddress', requestId: idOf(6) } }, credentials),
    {
      code: 'UNSUPPORTED_ROUTE',
    },
  )
})

t.test('a repayment pays the solver back out of the vault, one leg per transaction', async (t) => {
  const vaultBefore = devnet.usdtBalance(TRON_VAULT.address)
  const solverBefore = devnet.usdtBalance(TRON_SOLVER.address)
  const repayment = {
    repaymentId: idOf(7),
    recipient: filling.solverAddress(credentials),
    legs: [{ currencyId: TRON_USDT_ADDRESS, amount: 2_500_000n }],
  }
  t.equal(filling.maxRepaymentLegs, 1)
  const signed = await filling.signRepayment!(repayment, credentials)
  t.equal(signed.amount, 2_500_000n)
  await filling.broadcast(signed.raw)
  await filling.broadcast(signed.raw)
  devnet.mine(1)
  t.equal(devnet.usdtBalance(TRON_VAULT.address), vaultBefore - 2_500_000n, 'out of the vault, once')
  t.equal(devnet.usdtBalance(TRON_SOLVER.address), solverBefore + 2_500_000n, 'to the solver')
  t.equal((await filling.outcome(signed.transactionId)).state, 'success')
  await t.rejects(
    filling.signRepayment!({ ...repayment, legs: [...repayment.legs, ...repayment.legs] }, credentials),
    { code: 'INVALID_REQUEST' },
    'two legs are refused',
  )
  await t.rejects(filling.signRepayment!(repayment, { solverKey: SOLVER_KEY, allocatorKey: SOLVER_KEY }), {
    code: 'INVALID_REQUEST',
  })
})

t.test('refusals: a tampered signature, extras, an unfunded solver', async (t) => {
  const signed: SignedTransaction = await fill(TRON_NATIVE_CURRENCY_ID, 1_000n, 7)
  const body = JSON.parse(signed.raw) as { signature: string[] }
  const tampered = JSON.stringify({ ...body, signature: [`${'22'.repeat(64)}1c`] })
  const error = await filling.broadcast(tampered).catch((e: unknown) => e)
  t.ok(error instanceof PontisError)
  t.equal((error as PontisError).code, 'DESTINATION_TX_FAILED')
  t.match((error as PontisError).message, /SIGERROR/)
  await t.rejects(filling.broadcast('not json'), { code: 'INVALID_REQUEST' })
  await t.rejects(
    filling.signFill(
      {
        orderId: idOf(8),
        recipient: bob.address,
        currencyId: TRON_NATIVE_CURRENCY_ID,
        amount: 1n,
        calls: [],
        topupNativeAmount: 1n,
      },
      credentials,
    ),
    { code: 'UNSUPPORTED_ROUTE' },
  )
  await t.rejects(fill(TRON_NATIVE_CURRENCY_ID, devnet.trxBalance(TRON_SOLVER.address) + 1n, 9), {
    code: 'INSUFFICIENT_FUNDS',
  })
  await t.rejects(filling.outcome('xyz'), { code: 'INVALID_REQUEST' })
})

t.test(
  "another API's deposit item is sent by the solver, built again; what could take more is refused",
  async (t) => {
    const itemFor = async (depositor: string, currencyId: string, amount: bigint, n: number) => {
      const steps = await adapter.quoting.buildDepositSteps(
        depositStepsRequest({
          requestId: idOf(n),
          depositor,
          currencyId,
          amount,
        }),
      )
      return steps[0]?.items[0]?.data as unknown as Readonly<Record<string, unknown>>
    }
    const signStep = filling.signStep
    if (!signStep) throw new Error('the Tron plugin has no signStep')
    const item = await itemFor(TRON_SOLVER.address, TRON_USDT_ADDRESS, 7_000_000n, 20)
    const [vaultBefore, solverBefore] = [
      devnet.usdtBalance(TRON_VAULT.address),
      devnet.usdtBalance(TRON_SOLVER.address),
    ]
    const signed = await signStep(item, { currencyId: TRON_USDT_ADDRESS, amount: 7_000_000n }, credentials)
    t.equal(signed.amount, 7_000_000n)
    await filling.broadcast(signed.raw)
    devnet.mine(1)
    t.equal((await filling.outcome(signed.transactionId)).state, 'success')
    t.equal(devnet.usdtBalance(TRON_VAULT.address), vaultBefore + 7_000_000n, 'the vault got the deposit')
    t.equal(devnet.usdtBalance(TRON_SOLVER.address), solverBefore - 7_000_000n, 'out of the solver')
    t.match(
      (await reading.readDeposits(signed.transactionId)).facts,
      [
        {
          depositId: idOf(20),
          depositor: TRON_SOLVER.address,
          currencyId: TRON_USDT_ADDRESS,
          amount: 7_000_000n,
        },
      ],
      'tagged with the request id, as served',
    )

    const trx = await itemFor(TRON_SOLVER.address, TRON_NATIVE_CURRENCY_ID, 2_000_000n, 21)
    const spend = { currencyId: TRON_USDT_ADDRESS, amount: 7_000_000n }
    const cases: Array<[string, Readonly<Record<string, unknown>>, typeof spend, RegExp]> = [
      [
        'more than the move',
        item,
        { ...spend, amount: 6_999_999n },
        /sends 7000000, more than the move's 6999999/,
      ],
      [
        'another currency',
        trx,
        spend,
        new RegExp(`sends ${TRON_NATIVE_CURRENCY_ID} in a move of ${TRON_USDT_ADDRESS}`),
      ],
      [
        "another sender's deposit",
        await itemFor(alice.address, TRON_USDT_ADDRESS, 1n, 22),
        spend,
        new RegExp(`sent by ${alice.address}, not by the solver`),
      ],
      ['another chain', { ...item, chainId: 1 }, spend, /it is for chain 1/],
      [
        'another format',
        { ...item, format: 'evm-transaction' },
        spend,
        /'evm-transaction' item, not 'tron-transaction'/,
      ],
      ['no raw data', { ...item, transaction: {} }, spend, /carries no raw_data_hex/],
    ]
    for (const [what, candidate, caseSpend, message] of cases)
      await t.rejects(signStep(candidate, caseSpend, credentials), { code: 'INVALID_REQUEST', message }, what)
  },
)

const expirationOf = (raw: string): number =>
  (JSON.parse(raw) as { raw_data: { expiration: number } }).raw_data.expiration

// Last: the clock it moves ahead stays ahead for the devnet's later blocks.
t.test(
  'replace signs the transfer again only once a solid block is stamped past its expiration',
  async (t) => {
    const before = devnet.usdtBalance(bob.address)
    const signed = await fill(TRON_USDT_ADDRESS, 4_000_000n, 10)
    const landed = await fill(TRON_USDT_ADDRESS, 1_000_000n, 11)
    await filling.broadcast(landed.raw)
    devnet.mine(1)
    t.equal(await filling.replace?.(signed.raw, credentials), undefined, 'not expired: not replaced')
    const expiration = Math.max(expirationOf(signed.raw), expirationOf(landed.raw))
    await devnet.faults.advanceClock(expiration - devnet.chain.head.timestamp + 1000)
    devnet.mine(1)
    await t.rejects(filling.broadcast(signed.raw), /TRANSACTION_EXPIRATION_ERROR/, 'the node refuses it')
    t.equal(await filling.replace?.(signed.raw, credentials), undefined, 'the block past it is not solid yet')
    devnet.mine(17)
    t.equal(await filling.replace?.(signed.raw, credentials), undefined, 'one block short of solid')
    devnet.mine(1)
    t.equal(await filling.replace?.(landed.raw, credentials), undefined, 'one on chain is never replaced')
    t.equal(
      await filling.replace?.(signed.raw, { solverKey: ALLOCATOR_KEY }),
      undefined,
      'nor one none of the keys owns',
    )
    const replacement = await filling.replace?.(signed.raw, credentials)
    if (!replacement) throw new Error('expected a replacement')
    t.not(replacement.transactionId, signed.transactionId, 'a new transaction')
    t.ok(expirationOf(replacement.raw) > devnet.chain.head.timestamp, 'with a fresh expiration')
    await filling.broadcast(replacement.raw)
    devnet.mine(1)
    t.equal((await filling.outcome(replacement.transactionId)).state, 'success')
    const [fact] = (await reading.readFills?.(replacement.transactionId))?.facts ?? []
    t.equal(fact?.orderId, idOf(10), 'the same order')
    t.equal(fact?.amount, 4_000_000n, 'the same amount')
    t.equal((await filling.outcome(signed.transactionId)).state, 'not_found', 'the expired one never landed')
    t.equal(devnet.usdtBalance(bob.address) - before, 5_000_000n, 'each paid once')
  },
)
