/**
 * The durable webhook outbox end to end on a loopback receiver: events are written with the status
 * change, delivered in order per request, signed so that an independent HMAC with the API key
 * verifies them, retried at the backoff times (controllable clock), dead-lettered after the last
 * attempt and redelivered on request, and a 410 disables the endpoint.
 */
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { silentLogger } from '@pontis/core'
import t from 'tap'
import { ApiKeyStore } from '../src/keys/index.js'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import { openRequestStore } from '../src/store/index.js'
import { WebhookDispatcher } from '../src/webhooks/index.js'

let clock = 1_800_000_000_000
const now = () => clock
const store = await openRequestStore({ now })
t.teardown(() => store.close())
// The receiver is plain http on loopback: the operator's development setting, for setting and delivering.
const keys = new ApiKeyStore(store.client, { now, webhookPolicy: { allowHttpLoopback: true } })
const lifecycle = new LifecycleStore(store, now)

interface Received {
  headers: IncomingHttpHeaders
  body: string
}
const received: Received[] = []
let answers: number[] = []
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() })
    res.writeHead(answers.shift() ?? 200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

const dispatcher = new WebhookDispatcher({
  client: store.client,
  keys,
  logger: silentLogger,
  now,
  policy: { allowHttpLoopback: true },
  maxAttempts: 3,
  // No jitter: the test checks exact backoff times.
  backoff: { random: () => 0.5 },
  // No case here lets an attempt time out: a generous budget, so a busy machine cannot turn a
  // delivery into a retry.
  timeoutMs: 30_000,
})

let counter = 0
async function newRequest(apiKeyId: string): Promise<string> {
  counter++
  const id = `0x${counter.toString(16).padStart(64, '0')}`
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
    apiKeyId,
    referrer: 'partner-app',
    quote: {},
    expiresAt: clock + 600_000,
  })
  return id
}

/** What a receiver does: HMAC-SHA256 over `<timestamp>.<body>` with the API key, compared with the header. */
function verifiedBy(secret: string, message: Received): boolean {
  const timestamp = String(message.headers['x-signature-timestamp'])
  const expected = createHmac('sha256', secret).update(`${timestamp}.${message.body}`).digest('hex')
  return expected === message.headers['x-signature-sha256']
}

t.test('every transition of a keyed request is delivered in order, signed with the API key', async (t) => {
  const { key, secret } = await keys.create({
    label: 'partner',
    tier: 'standard',
    webhook: { enabled: true, url, headers: { 'x-partner': 'acme' } },
  })
  const id = await newRequest(key.id)
  received.length = 0
  await lifecycle.transition(id, { to: 'pending', inTxHash: '0xdeposit' })
  await lifecycle.transition(id, { to: 'submitted', txHash: '0xfill' })
  await lifecycle.transition(id, { to: 'success' })
  await lifecycle.transition(id, { to: 'success' })
  for (let pass = 0; pass < 5; pass++) await dispatcher.tick()
  t.same(
    received.map((message) => (JSON.parse(message.body) as { data: { status: string } }).data.status),
    ['pending', 'submitted', 'success'],
    'one event per change, in order; a repeated transition sends nothing',
  )
  for (const message of received) {
    t.ok(verifiedBy(secret, message), 'an independent HMAC with the API key verifies the signature')
    t.equal(message.headers['x-partner'], 'acme', 'custom headers are sent')
    t.match(message.headers['x-event-id'], /^evt_/)
    const payload = JSON.parse(message.body) as { event: string; data: Record<string, unknown> }
    t.equal(payload.event, 'request.status.updated')
    t.equal(payload.data.requestId, id)
    t.equal(payload.data.referrer, 'partner-app')
    t.equal(payload.data.depositAddress, null)
  }
})

t.test(
  'a failing receiver gets the event on attempt 3 at the backoff times; then dead letters and redelivery',
  async (t) => {
    const { key, secret } = await keys.create({
      label: 'flaky',
      tier: 'standard',
      webhook: { enabled: true, url },
    })
    const id = await newRequest(key.id)
    received.length = 0
    answers = [500, 503]
    await lifecycle.transition(id, { to: 'pending' })
    const start = clock
    await dispatcher.tick()
    const [event] = (
      await store.client.query<{ event_id: string }>(
        'SELECT event_id FROM webhook_events WHERE request_id = $1',
        [id],
      )
    ).rows
    const eventId = event!.event_id
    t.equal((await dispatcher.event(eventId))?.nextAttemptAt, start + 1000, 'first retry after 1 s')
    clock += 999
    t.equal(await dispatcher.tick(), 0, 'not before its time')
    clock += 1
    await dispatcher.tick()
    t.equal(
      (await dispatcher.event(eventId))?.nextAttemptAt,
      clock + 2000,
      'second retry 2 s later (exponential)',
    )
    clock += 2000
    await dispatcher.tick()
    t.equal((await dispatcher.event(eventId))?.state, 'delivered', 'attempt 3 is delivered')
    t.equal(received.length, 3)
    t.equal(
      new Set(received.map((message) => message.headers['x-event-id'])).size,
      1,
      'the event id is stable across attempts',
    )
    t.ok(
      received.every((message) => verifiedBy(secret, message)),
      'each attempt is signed over its own timestamp',
    )

    const doomed = await newRequest(key.id)
    answers = [500, 500, 500]
    received.length = 0
    await lifecycle.transition(doomed, { to: 'pending' })
    for (let pass = 0; pass < 3; pass++) {
      await dispatcher.tick()
      clock += 60_000
    }
    const [dead] = await dispatcher.deadLetters()
    t.equal(dead?.requestId, doomed, 'after the last attempt the event is dead-lettered')
    t.equal(dead?.attempts, 3)
    t.ok(await dispatcher.redeliver(dead!.eventId), 'an operator redelivers it')
    await dispatcher.tick()
    t.equal((await dispatcher.event(dead!.eventId))?.state, 'delivered')
  },
)

t.test('410 disables the endpoint; a disabled webhook queues nothing', async (t) => {
  const { key } = await keys.create({ label: 'gone', tier: 'standard', webhook: { enabled: true, url } })
  const id = await newRequest(key.id)
  answers = [410]
  await lifecycle.transition(id, { to: 'pending' })
  await dispatcher.tick()
  t.equal((await keys.get(key.id))?.webhook?.enabled, false, 'the endpoint is disabled')
  await lifecycle.transition(id, { to: 'submitted' })
  const { rows } = await store.client.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM webhook_events WHERE request_id = $1',
    [id],
  )
  t.equal(rows[0]?.count, 1, 'no new event for a disabled endpoint')
})

t.test('the admin API lists dead letters and redelivers them', async (t) => {
  const { createApiApp, listen, loadOpenApiDocument } = await import('@pontis/http')
  const { createTestClient } = await import('@pontis/http/testing')
  const { INTENTS_DOCUMENT_PATH } = await import('../src/app.js')
  const { createWebhookAdminHandlers } = await import('../src/webhooks/index.js')
  const adminToken = 'dispatcher-test-admin-token-0123456789'
  const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
  const { koa } = await createApiApp({
    loaded,
    logger: silentLogger,
    handlers: createWebhookAdminHandlers({ dispatcher, adminToken }),
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  const client = createTestClient(t, server.url, loaded.document)
  const auth = { headers: { authorization: `Bearer ${adminToken}` } }

  const { key } = await keys.create({ label: 'dead', tier: 'standard', webhook: { enabled: true, url } })
  const id = await newRequest(key.id)
  answers = [500, 500, 500]
  await lifecycle.transition(id, { to: 'pending' })
  for (let pass = 0; pass < 3; pass++) {
    await dispatcher.tick()
    clock += 60_000
  }
  t.equal((await client.get('/admin/webhooks/dead-letters')).status, 401, 'the admin token is required')
  const listed = await client.get('/admin/webhooks/dead-letters', auth)
  t.equal(listed.status, 200)
  const dead = (
    listed.body as { events: Array<{ eventId: string; requestId: string; state: string }> }
  ).events.find((event) => event.requestId === id)
  t.equal(dead?.state, 'dead')
  const again = await client.request('POST', `/admin/webhooks/events/${dead!.eventId}/redeliver`, auth)
  t.equal(again.status, 200)
  t.equal((again.body as { state: string; attempts: number }).state, 'pending')
  await dispatcher.tick()
  t.equal((await dispatcher.event(dead!.eventId))?.state, 'delivered', 'delivered after redelivery')
  const missing = await client.request(
    'POST',
    '/admin/webhooks/events/evt_00000000-0000-0000-0000-000000000000/redeliver',
    auth,
  )
  t.equal(missing.status, 404)
})
