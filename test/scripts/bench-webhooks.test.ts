/**
 * The parts of the benchmarks that decide whether a run counts: the webhook bench's loopback
 * receiver checks signatures as a partner would and counts duplicates, a run is rejected when a
 * delivery is missing, repeated, badly signed or not marked delivered, and the status and chains
 * targets build their request from the set-up and reject wrong answers. No timings are asserted.
 */
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { deliverOnce } from '../../packages/intents/src/webhooks/index.js'
import { spawnServer, stopAllServers } from '../../scripts/bench/children.js'
import { baselineOf, TARGETS } from '../../scripts/bench/targets.js'
import type { ReceiverStats } from '../../scripts/bench/webhook-receiver.js'
import { type DeliveryRun, runProblem } from '../../scripts/bench/webhooks.js'
import { WAIT_BOUND_MS } from '../helpers/wait.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

t.test('the receiver verifies signatures and counts distinct events', async (t) => {
  // API keys are longer than HMAC-SHA256's block, so the worker may sign with the key's digest.
  const secret = `pk_${'s'.repeat(80)}`
  const receiver = await spawnServer({
    name: 'webhook receiver',
    args: ['scripts/bench/webhook-receiver.ts'],
    cwd: repoRoot,
    env: { ...process.env, RECEIVER_PORT: '0', WEBHOOK_SECRET: secret },
    urls: { receiver: /webhook receiver\s+(http:\/\/[^\s"]+)/ },
    startTimeoutMs: WAIT_BOUND_MS,
  })
  t.teardown(stopAllServers)
  const url = receiver.urls.receiver!
  const send = (eventId: string, apiKey: string | Uint8Array) =>
    deliverOnce({
      url: `${url}/hook`,
      body: JSON.stringify({ event: 'request.status.updated', data: { eventId } }),
      apiKey,
      eventId,
      // Every delivery here must succeed: the receiver is another process on a possibly busy machine.
      timeoutMs: WAIT_BOUND_MS,
      policy: { allowHttpLoopback: true },
    })
  const digest = createHash('sha256').update(secret).digest()
  t.equal((await send('evt_1', digest)).outcome, 'delivered', 'answered 2xx')
  t.equal((await send('evt_1', secret)).outcome, 'delivered')
  t.equal((await send('evt_2', 'pk_another_key_entirely')).outcome, 'delivered')
  const stats = (await (await fetch(`${url}/stats`)).json()) as ReceiverStats
  t.equal(stats.received, 3)
  t.equal(stats.distinctEvents, 2, 'a repeated event id counts once')
  t.equal(stats.badSignatures, 1, 'only the delivery signed with another key fails the check')
  t.equal(stats.latenciesMs.length, 3)
  t.ok(
    stats.latenciesMs.every((ms) => ms > -2),
    'latency is receipt minus the signature timestamp',
  )
  t.equal((await fetch(`${url}/stats`, { method: 'DELETE' })).status, 204)
  const reset = (await (await fetch(`${url}/stats`)).json()) as ReceiverStats
  t.same([reset.received, reset.distinctEvents, reset.badSignatures], [0, 0, 0], 'DELETE resets')
})

t.test('a webhook run counts only when every event arrived once, signed, and marked delivered', async (t) => {
  const good: DeliveryRun = {
    mode: 'drain',
    events: 100,
    batch: 50,
    seconds: 0.1,
    deliveriesPerSecond: 1000,
    latencyMs: { p50: 1, p99: 2, p999: 3 },
    tickMs: { p50: 10, p99: 20, max: 20 },
    ticks: 2,
    workerCpuCores: 1,
    receiverCpuCores: 0.2,
    databaseCpuCores: 0.5,
    otherCpuCores: 0,
    workerPeakRssBytes: 1,
    received: 100,
    distinctEvents: 100,
    badSignatures: 0,
    markedDelivered: 100,
  }
  t.equal(runProblem(good), undefined)
  t.match(runProblem({ ...good, received: 99, distinctEvents: 99 }), /99 deliveries received/)
  t.match(runProblem({ ...good, distinctEvents: 98 }), /2 events arrived twice/)
  t.match(runProblem({ ...good, badSignatures: 1 }), /wrong signature/)
  t.match(runProblem({ ...good, markedDelivered: 97 }), /97 of 100 events marked delivered/)
})

t.test('the status and chains targets', async (t) => {
  const { status, chains, quote } = TARGETS
  t.type(status.path, 'function')
  const path = typeof status.path === 'function' ? status.path({ requestId: '0xabc' }) : status.path
  t.equal(path, '/intents/status/v3?requestId=0xabc', 'asks for the request the set-up stored')
  t.throws(() => typeof status.path === 'function' && status.path({}), /stored no request/)
  t.equal(status.checkAnswer({ status: 'waiting' }), undefined)
  t.type(status.checkAnswer({ message: 'not found' }), 'string', 'an answer without a status is wrong')
  t.equal(chains.checkAnswer({ chains: [{ id: 1 }, { id: 2 }] }), undefined)
  t.type(chains.checkAnswer({ chains: [] }), 'string', 'an empty chain list is wrong')
  t.same(
    [baselineOf(status), baselineOf(chains), baselineOf(quote)],
    ['bare-get', 'bare-get', 'bare'],
    'GET targets are divided by GET /bare, the POST targets by POST /bare',
  )
})
