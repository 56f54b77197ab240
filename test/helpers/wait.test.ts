/**
 * The shared waiting helpers: they answer the awaited state or event, and a wait that runs out says
 * what it waited for and what it saw last. The bounds here are short on purpose (the point is the
 * timeout's message); nothing awaited here ever comes late, it comes or it never does.
 */
import t from 'tap'
import { deferred, WaitTimeout, waitFor, within } from './wait.js'

t.test('waitFor answers the first value that is the awaited one', async (t) => {
  let reads = 0
  const value = await waitFor('the third read', () => ++reads, { until: (n) => n === 3, intervalMs: 1 })
  t.equal(value, 3)
  t.equal(reads, 3, 'no read after the awaited value')
  t.equal(await waitFor('a truthy value', () => 'yes'), 'yes', 'by default any truthy value is awaited')
})

t.test('waitFor that runs out names what it waited for and the last value read', async (t) => {
  await t.rejects(
    waitFor('the status to be success', async () => ({ status: 'pending' }), {
      until: (record) => record.status === 'success',
      timeoutMs: 30,
      intervalMs: 5,
    }),
    {
      name: 'WaitTimeout',
      message:
        "timed out after 0.03 s waiting for the status to be success; last seen: { status: 'pending' }",
    },
  )
  await t.rejects(
    waitFor('the balance', () => 5n, {
      until: (n) => n === 7n,
      timeoutMs: 10,
      describe: (n) => `balance ${n}`,
    }),
    { message: /waiting for the balance; last seen: balance 5$/ },
  )
})

t.test('waitFor ends with the error of a read that throws', async (t) => {
  await t.rejects(
    waitFor('anything', () => {
      throw new Error('the endpoint is down')
    }),
    { message: 'the endpoint is down' },
  )
})

t.test('within answers the event, or names it and the last state seen', async (t) => {
  const arrived = deferred<string>()
  setImmediate(() => arrived.resolve('delivered'))
  t.equal(await within('the delivery', arrived.promise, { timeoutMs: 60_000 }), 'delivered')

  const never = deferred()
  const error = await within('the success webhook', never.promise, {
    timeoutMs: 10,
    lastSeen: async () => 'delivered pending, submitted',
  }).catch((caught: unknown) => caught)
  t.ok(error instanceof WaitTimeout)
  t.equal(
    (error as Error).message,
    'timed out after 0.01 s waiting for the success webhook; last seen: delivered pending, submitted',
  )
  await t.rejects(within('the event', Promise.reject(new Error('exited')), { timeoutMs: 60_000 }), {
    message: 'exited',
  })
})
