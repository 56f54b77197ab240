/**
 * The repayment books on both store backends (PGlite and PostgreSQL), with the local environment's
 * real plugins (no chain is called): what a filled request owes is recorded once; owed repayments
 * are batched into one job per chain (a leg per currency); a reverted batch is owed again and batched
 * anew, one that gave up after signing is never batched again; a sweep waits for the request's open
 * deposit-address legs and records what it sent and its fee; a request with app fees is swept to the
 * depository instead, and the solver is owed what arrived there less the fees, once.
 */
import { loadRegistry, silentLogger } from '@pontis/core'
import { ALLOCATOR, SOLVER, STABLECOIN_ADDRESS } from '@pontis/devnet'
import t, { type Test } from 'tap'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import { type RepaymentPayload, Repayments, recordOwed, settleBooksJob } from '../src/lifecycle/repayment.js'
import type { RequestStore } from '../src/store/index.js'
import { storeBackends } from './fixtures/store-backends.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const USER = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
const clock = 1_700_000_000_000
const now = () => clock
const registry = await loadRegistry({ env: { ...process.env, ENVIRONMENT: 'local' }, logger: silentLogger })
t.teardown(() => registry.close())
const credentials = () => ({ solverKey: SOLVER.privateKey, allocatorKey: ALLOCATOR.privateKey })
let nextId = 1

/** A request on 31337 → 31338 with a matched, confirmed deposit (or a deposit address), moved to success. */
async function filledRequest(
  store: RequestStore,
  lifecycle: LifecycleStore,
  currency: string,
  amountIn: bigint,
  options: { depositAddress?: string; confirmed?: boolean; appFee?: bigint } = {},
) {
  const id = `0x${(nextId++).toString(16).padStart(64, '0')}`
  await store.insertRequest({
    id,
    originChainId: 31337,
    destinationChainId: 31338,
    userAddress: USER,
    recipient: USER,
    refundTo: USER,
    originCurrency: currency,
    destinationCurrency: currency,
    tradeType: 'EXACT_INPUT',
    amountIn,
    amountOut: amountIn,
    minimumAmountOut: amountIn,
    ...(options.depositAddress
      ? { depositAddress: options.depositAddress, depositAddressType: 'strict' as const }
      : {}),
    quote: options.appFee
      ? { order: { fees: [{ recipient: USER, amount: options.appFee.toString() }] } }
      : {},
    expiresAt: clock + 60_000,
  })
  if (!options.depositAddress) {
    await lifecycle.recordDeposit({
      chainId: 31337,
      transactionId: id,
      index: 0,
      depositId: id,
      depositor: USER,
      currency,
      // An overpayment: only amountIn is owed to the solver (the excess goes back to the user).
      amount: amountIn + 7n,
      requestId: id,
      outcome: 'matched',
    })
    if (options.confirmed !== false)
      await store.client.query('UPDATE deposits SET confirmed = true WHERE request_id = $1', [id])
  }
  for (const to of ['pending', 'submitted', 'success'] as const) await lifecycle.transition(id, { to })
  const request = (await store.getRequest(id))!
  // Twice, as a retried confirmation would: recorded once.
  for (let i = 0; i < 2; i++) await lifecycle.transaction((tx) => recordOwed(tx, registry, request, clock))
  return request
}

async function repaymentRows(store: RequestStore) {
  const { rows } = await store.client.query<{
    request_id: string
    state: string
    job_id: string | null
    amount: string
  }>('SELECT request_id, state, job_id, amount FROM repayments ORDER BY request_id')
  return rows
}

async function jobsOfKind(store: RequestStore, lifecycle: LifecycleStore, kind: string) {
  const { rows } = await store.client.query<{ id: string }>(
    'SELECT id FROM solver_jobs WHERE kind = $1 ORDER BY id',
    [kind],
  )
  return Promise.all(rows.map(async (row) => (await lifecycle.jobById(Number(row.id)))!))
}

async function books(t: Test, store: RequestStore) {
  const lifecycle = new LifecycleStore(store, now)
  const repayments = new Repayments({ registry, lifecycle, logger: silentLogger, credentials, now })

  const a = await filledRequest(store, lifecycle, NATIVE, 1000n)
  const b = await filledRequest(store, lifecycle, NATIVE, 2000n)
  const c = await filledRequest(store, lifecycle, STABLECOIN_ADDRESS, 30n)
  await filledRequest(store, lifecycle, NATIVE, 5n, { confirmed: false })
  t.same(
    (await repaymentRows(store)).map((row) => [row.request_id, row.state, row.amount]),
    [
      [a.id, 'owed', '1000'],
      [b.id, 'owed', '2000'],
      [c.id, 'owed', '30'],
    ],
    'one owed row per filled request with a confirmed deposit, for amountIn',
  )

  t.equal(await repayments.tick(), 1, 'one job for the chain')
  t.equal(await repayments.tick(), 0, 'a second pass batches nothing')
  const [first] = await jobsOfKind(store, lifecycle, 'repayment')
  const payload = first!.payload as unknown as RepaymentPayload
  t.equal(payload.recipient, SOLVER.address, 'paid to the solver')
  t.same(
    [...payload.legs].sort((x, y) => x.currency.localeCompare(y.currency)),
    [
      { currency: NATIVE, amount: '3000' },
      { currency: STABLECOIN_ADDRESS, amount: '30' },
    ].sort((x, y) => x.currency.localeCompare(y.currency)),
    'a leg per currency, summed',
  )
  t.same([...payload.requestIds].sort(), [a.id, b.id, c.id])
  t.ok(
    (await repaymentRows(store)).every((row) => row.state === 'batched' && Number(row.job_id) === first!.id),
    'every row is in the job',
  )

  // Reverted: nothing was paid; the requests are owed again and go into a new batch (a new id).
  await settleBooksJob(store.client, first!, 'reverted', clock)
  t.ok((await repaymentRows(store)).every((row) => row.state === 'owed' && row.job_id === null))
  t.equal(await repayments.tick(), 1)
  const [, second] = await jobsOfKind(store, lifecycle, 'repayment')
  t.not(
    (second!.payload as unknown as RepaymentPayload).repaymentId,
    payload.repaymentId,
    'a new repayment id',
  )

  // Gave up after signing: it may still land, so it is never batched again.
  await settleBooksJob(store.client, second!, 'failed', clock)
  t.ok((await repaymentRows(store)).every((row) => row.state === 'failed'))
  t.equal(await repayments.tick(), 0, 'a failed repayment is not batched again')

  const d = await filledRequest(store, lifecycle, NATIVE, 400n)
  t.equal(await repayments.tick(), 1)
  const [, , third] = await jobsOfKind(store, lifecycle, 'repayment')
  await store.client.query(`UPDATE solver_jobs SET transaction_id = '0xpaid', raw = '0x01' WHERE id = $1`, [
    third!.id,
  ])
  const signedThird = (await lifecycle.jobById(third!.id))!
  await settleBooksJob(store.client, signedThird, 'confirmed', clock)
  await settleBooksJob(store.client, signedThird, 'reverted', clock)
  const paid = (await repaymentRows(store)).find((row) => row.request_id === d.id)
  t.equal(paid?.state, 'paid', 'paid, and a late second settlement changes nothing')
  const summary = await repayments.summary()
  t.same(
    summary.repayments.map((line) => [line.currency, line.state, line.count, line.amount]),
    [
      [NATIVE, 'failed', 2, 3000n],
      [NATIVE, 'paid', 1, 400n],
      [STABLECOIN_ADDRESS, 'failed', 1, 30n],
    ],
  )
}

async function sweeps(t: Test, store: RequestStore) {
  const lifecycle = new LifecycleStore(store, now)
  const repayments = new Repayments({ registry, lifecycle, logger: silentLogger, credentials, now })
  const address = '0x1111111111111111111111111111111111111111'
  const request = await filledRequest(store, lifecycle, NATIVE, 10_000n, { depositAddress: address })
  await lifecycle.enqueue({
    jobKey: `excess_refund:${request.id}`,
    requestId: request.id,
    kind: 'excess_refund',
    chainId: 31337,
    payload: {},
  })
  t.equal((await repaymentRows(store)).length, 0, 'a deposit-address request owes no depository repayment')
  t.equal(await repayments.tick(), 0, 'the sweep waits for the open excess refund')
  const [excess] = await jobsOfKind(store, lifecycle, 'excess_refund')
  await lifecycle.setJobState(excess!.id, 'confirmed')
  t.equal(await repayments.tick(), 1, 'then it is queued')
  t.equal(await repayments.tick(), 0, 'once')
  const [sweep] = await jobsOfKind(store, lifecycle, 'sweep')
  t.match(sweep!.payload, {
    recipient: SOLVER.address,
    amount: '10000',
    source: { kind: 'depositAddress', requestId: request.id },
  })
  await store.client.query(
    `UPDATE solver_jobs SET transaction_id = '0xswept', raw = '0x01', amount = 9790 WHERE id = $1`,
    [sweep!.id],
  )
  await settleBooksJob(store.client, (await lifecycle.jobById(sweep!.id))!, 'confirmed', clock)
  const { sweeps: lines } = await repayments.summary()
  t.same(lines, [{ chainId: 31337, currency: NATIVE, state: 'swept', count: 1, amount: 10_000n, fee: 210n }])
}

async function appFeeSweep(t: Test, store: RequestStore) {
  const lifecycle = new LifecycleStore(store, now)
  const repayments = new Repayments({ registry, lifecycle, logger: silentLogger, credentials, now })
  const address = '0x2222222222222222222222222222222222222222'
  const request = await filledRequest(store, lifecycle, NATIVE, 10_000n, {
    depositAddress: address,
    appFee: 300n,
  })
  t.equal(await repayments.tick(), 1, 'the sweep is queued')
  const [sweep] = await jobsOfKind(store, lifecycle, 'sweep')
  const depository = registry.chain(31337).record.protocol?.v2?.depository
  t.ok(depository, 'the local chain has a depository')
  t.match(sweep!.payload, {
    recipient: depository,
    amount: '10000',
    source: { kind: 'depositAddress', requestId: request.id },
  })
  t.equal((await repaymentRows(store)).length, 0, 'nothing is owed before the sweep lands')
  await store.client.query(
    `UPDATE solver_jobs SET transaction_id = '0xswept', raw = '0x01', amount = 9790 WHERE id = $1`,
    [sweep!.id],
  )
  const job = (await lifecycle.jobById(sweep!.id))!
  // Twice, as a retried confirmation would: the solver is owed once.
  for (let i = 0; i < 2; i++) await settleBooksJob(store.client, job, 'confirmed', clock)
  t.same(
    (await repaymentRows(store)).map((row) => [row.request_id, row.state, row.amount]),
    [[request.id, 'owed', '9490']],
    'the solver is owed what reached the depository less the app fee, once',
  )
  t.equal(await repayments.tick(), 1, 'and it is batched like any repayment')
}

for (const backend of Object.values(storeBackends('repayment_books', now))) {
  t.test(
    `${backend.name}: an app-fee deposit address is swept to the depository, the rest owed`,
    async (t) => {
      await appFeeSweep(t, (await backend.open(t)).store)
    },
  )
  t.test(`${backend.name}: repayments are batched once, re-batched only when nothing was paid`, async (t) => {
    await books(t, (await backend.open(t)).store)
  })
  t.test(`${backend.name}: a deposit address is swept after its other legs, with its fee`, async (t) => {
    await sweeps(t, (await backend.open(t)).store)
  })
}
