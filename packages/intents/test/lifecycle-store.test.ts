import t from 'tap'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import { canTransition, FINAL_STATUSES, TRANSITIONS } from '../src/lifecycle/state-machine.js'
import { openRequestStore } from '../src/store/index.js'

let clock = 1_700_000_000_000
const store = await openRequestStore({ now: () => clock })
const lifecycle = new LifecycleStore(store, () => clock)
t.teardown(() => store.close())

const id = `0x${'ab'.repeat(32)}`
await store.insertRequest({
  id,
  originChainId: 31337,
  destinationChainId: 31338,
  userAddress: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
  recipient: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
  refundTo: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
  originCurrency: '0x0000000000000000000000000000000000000000',
  destinationCurrency: '0x0000000000000000000000000000000000000000',
  tradeType: 'EXACT_INPUT',
  amountIn: 100n,
  amountOut: 90n,
  minimumAmountOut: 90n,
  quote: {},
  expiresAt: clock + 60_000,
})

t.test('the transition table: forward only, final statuses are final', async (t) => {
  for (const status of FINAL_STATUSES) t.same(TRANSITIONS[status], [], `${status} is final`)
  t.ok(canTransition('waiting', 'pending'))
  t.ok(canTransition('submitted', 'success'))
  t.ok(canTransition('failure', 'refund'))
  t.notOk(canTransition('submitted', 'waiting'), 'never backwards')
  t.ok(canTransition('pending', 'waiting'), 'but for a mempool deposit gone unconfirmed')
  t.notOk(canTransition('success', 'refund'))
  t.notOk(canTransition('submitted', 'pending'))
})

t.test('transitions are idempotent, record hashes and times, and never go backwards', async (t) => {
  clock += 1000
  const pending = await lifecycle.transition(id, {
    to: 'pending',
    inTxHash: '0xdeposit',
    deposit: { amount: '100' },
  })
  t.ok(pending.changed)
  t.equal(pending.request.status, 'pending')
  t.same(pending.request.inTxHashes, ['0xdeposit'])
  t.equal(pending.request.updatedAt, clock, 'updatedAt is the transition time')
  const again = await lifecycle.transition(id, { to: 'pending', inTxHash: '0xdeposit' })
  t.notOk(again.changed, 'the same move twice changes nothing')
  t.notOk(again.refused)
  const back = await lifecycle.transition(id, { to: 'depositing' })
  t.ok(back.refused, 'a late event cannot move it back')
  t.equal(back.request.status, 'pending')
  clock += 1000
  await lifecycle.transition(id, { to: 'submitted', txHash: '0xfill' })
  const failed = await lifecycle.transition(id, {
    to: 'failure',
    failReason: 'EXECUTION_REVERTED',
    details: { fill: { revert: { error: 'CallFailed' } } },
  })
  t.equal(failed.request.failReason, 'EXECUTION_REVERTED')
  t.same(failed.request.details, { fill: { revert: { error: 'CallFailed' } } })
  const refunded = await lifecycle.transition(id, {
    to: 'refund',
    txHash: '0xrefund',
    details: { refund: { amount: '100' } },
  })
  t.equal(refunded.request.status, 'refund')
  t.equal(refunded.request.failReason, 'EXECUTION_REVERTED', 'the reason of the failure stays on the refund')
  t.same(refunded.request.txHashes, ['0xfill', '0xrefund'])
  t.same(Object.keys(refunded.request.details ?? {}).sort(), ['fill', 'refund'], 'details merge')
  const record = store.toStatusRecord(refunded.request)
  t.equal(record.failReason, 'EXECUTION_REVERTED')
  t.equal(record.refundFailReason, 'N/A')
  t.ok((await lifecycle.transition(id, { to: 'success' })).refused, 'a refunded request is final')
})

t.test('jobs: one per key, leased to one worker, signed bytes stored once', async (t) => {
  const job = {
    jobKey: `fill:${id}`,
    requestId: id,
    kind: 'fill' as const,
    chainId: 31338,
    payload: { amount: '90' },
  }
  t.ok(await lifecycle.enqueue(job))
  t.notOk(await lifecycle.enqueue(job), 'a second fill of the same request is not queued')
  const [claimed] = await lifecycle.claimJobs('worker-a', 10_000, 10)
  t.equal(claimed?.jobKey, job.jobKey)
  t.same(
    await lifecycle.claimJobs('worker-b', 10_000, 10),
    [],
    'a leased job is not handed to another worker',
  )
  const signed = { transactionId: '0xAB', raw: '0x01', amount: 90n }
  t.notOk(await lifecycle.storeSigned(claimed!.id, 'worker-b', signed), 'only the lease holder stores')
  t.ok(await lifecycle.storeSigned(claimed!.id, 'worker-a', signed))
  t.notOk(
    await lifecycle.storeSigned(claimed!.id, 'worker-a', { ...signed, raw: '0x02' }),
    'signed bytes are never replaced',
  )
  clock += 11_000
  const [expired] = await lifecycle.claimJobs('worker-b', 10_000, 10)
  t.equal(expired?.raw, '0x01', 'after the lease runs out the next worker gets the same signed bytes')
  t.equal(expired?.transactionId, '0xab')
})

t.test('nonces: reserved per chain and signer, never handed out twice', async (t) => {
  const take = (chainNext: bigint) =>
    lifecycle.transaction((tx) => lifecycle.allocateNonce(tx, 1, '0xSolver', chainNext))
  t.equal(await take(5n), 5n)
  t.equal(await take(5n), 6n, 'the chain has not seen nonce 5 yet: 6 is next')
  t.equal(await take(9n), 9n, 'the chain moved ahead (another tool used the account): follow it')
  const parallel = await Promise.all([take(0n), take(0n), take(0n)])
  t.same([...parallel].sort(), [10n, 11n, 12n], 'concurrent allocations get distinct nonces')
})
