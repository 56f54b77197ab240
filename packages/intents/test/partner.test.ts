/**
 * The partner self-service API (tag `Partner`) over real HTTP on loopback: `createApiApp` with the
 * intents document, the partner handlers and the rate-limit gate, the store on PGlite and on
 * PostgreSQL, the real webhook dispatcher and a loopback receiver. Every answer is checked against
 * the document by the test client. Each call acts on the calling key only; a test event is delivered signed, dead-lettered
 * after the last attempt, and redelivered by its partner; changes are logged without secrets.
 */
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { Logger } from '@pontis/core'
import { createApiApp, listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/app.js'
import { ApiKeyStore } from '../src/keys/index.js'
import { createPartnerHandlers } from '../src/partner/handlers.js'
import { createRateLimitGate, DEFAULT_RATE_LIMIT_POLICY, MemoryRateLimiter } from '../src/ratelimit/index.js'
import { WebhookDispatcher } from '../src/webhooks/index.js'
import { storeBackends } from './fixtures/store-backends.js'

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const backends = storeBackends('partner')
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }
type EventBody = { eventId: string; keyId: string; requestId: string | null; state: string; attempts: number }

for (const backend of [backends.pglite, backends.postgres]) {
  t.test(backend.name, async (t) => {
    const { store } = await backend.open(t)
    const policy = { allowHttpLoopback: true }
    const keys = new ApiKeyStore(store.client, { webhookPolicy: policy })
    const dispatcher = new WebhookDispatcher({
      client: store.client,
      keys,
      logger: quiet,
      policy,
      maxAttempts: 2,
      // Retries at once: the test drives the passes itself.
      backoff: { baseMs: 1, jitter: 0 },
      timeoutMs: 30_000,
    })

    const lines: string[] = []
    const capturing: Logger = {
      debug: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
      info: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
      warn: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
      error: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
    }
    const { koa } = await createApiApp({
      loaded,
      logger: capturing,
      handlers: createPartnerHandlers({ keys, dispatcher, logger: capturing }),
      gate: createRateLimitGate({ limiter: new MemoryRateLimiter(), keys, logger: capturing }),
    })
    const server = await listen(koa, { port: 0 })
    t.teardown(() => server.close())

    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = []
    let answer = 200
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() })
        res.writeHead(answer).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

    const mine = await keys.create({ label: 'Acme' })
    const theirs = await keys.create({ label: 'Other', tier: 'elevated' })
    const as = (secret: string) => ({ headers: { 'x-api-key': secret } })

    t.test('without a key every partner route is 401 UNAUTHORIZED', async (t) => {
      const api = createTestClient(t, server.url, loaded.document)
      const answers = await Promise.all([
        api.get('/partner/key'),
        api.request('PUT', '/partner/webhook', { json: { enabled: false } }),
        api.post('/partner/webhook/test', undefined),
        api.get('/partner/webhook/events'),
        api.post('/partner/webhook/events/evt_00000000-0000-0000-0000-000000000000/redeliver', undefined),
        api.get('/partner/usage'),
      ])
      for (const res of answers) {
        t.equal(res.status, 401)
        t.match(res.body, { errorCode: 'UNAUTHORIZED', message: /x-api-key/ })
      }
      const wrong = await api.get('/partner/key', as(`pk_${'A'.repeat(64)}`))
      t.equal(wrong.status, 401, 'an unknown key is refused')
    })

    t.test('a partner sees its own key and limits, never the secret', async (t) => {
      const api = createTestClient(t, server.url, loaded.document)
      const key = await api.get('/partner/key', as(mine.secret))
      t.equal(key.status, 200)
      t.match(key.body, { id: mine.key.id, label: 'Acme', tier: 'standard', webhook: null })
      t.notOk(key.text.includes(mine.secret), 'no secret in the answer')
      const usage = await api.get('/partner/usage', as(theirs.secret))
      t.same(usage.body, {
        keyId: theirs.key.id,
        tier: 'elevated',
        limits: DEFAULT_RATE_LIMIT_POLICY.elevated,
      })
      t.match(
        usage.headers.ratelimit,
        /"other";r=\d+;t=\d+/,
        'the remaining quota is in the RateLimit header',
      )
    })

    t.test('webhook: refused targets, set with a header, pause, a test event needs it enabled', async (t) => {
      const api = createTestClient(t, server.url, loaded.document)
      const refused = await api.request('PUT', '/partner/webhook', {
        ...as(mine.secret),
        json: { enabled: true, url: 'http://169.254.169.254/hook' },
      })
      t.equal(refused.status, 400)
      t.match(refused.body, { errorCode: 'INVALID_WEBHOOK_URL' })
      const noHook = await api.post('/partner/webhook/test', undefined, as(mine.secret))
      t.equal(noHook.status, 400)
      t.match(noHook.body, { errorCode: 'INVALID_REQUEST', message: /no enabled webhook/ })

      const set = await api.request('PUT', '/partner/webhook', {
        ...as(mine.secret),
        json: { enabled: true, url: hookUrl, headers: { 'X-Acme-Route': 'pontis' } },
      })
      t.equal(set.status, 200)
      t.match(set.body, { id: mine.key.id, webhook: { enabled: true, url: hookUrl } })
      t.equal((await keys.get(theirs.key.id))?.webhook, null, 'the other key is untouched')

      const paused = await api.request('PUT', '/partner/webhook', {
        ...as(mine.secret),
        json: { enabled: false },
      })
      t.match(paused.body, {
        webhook: { enabled: false, url: hookUrl, headers: { 'X-Acme-Route': 'pontis' } },
      })
      t.equal(
        (await api.post('/partner/webhook/test', undefined, as(mine.secret))).status,
        400,
        'paused: no test',
      )
      await api.request('PUT', '/partner/webhook', {
        ...as(mine.secret),
        json: { enabled: true, url: hookUrl, headers: { 'X-Acme-Route': 'pontis' } },
      })
      t.ok(
        lines.some(
          (line) => line.includes('API key webhook set by its partner') && line.includes(mine.key.id),
        ),
        'the change is logged with the key id',
      )
      t.notOk(
        lines.some((line) => line.includes(mine.secret) || line.includes(theirs.secret)),
        'no secret in any log line',
      )
    })

    t.test(
      'a test event is delivered signed, dead-lettered, and redelivered by its own partner only',
      async (t) => {
        const api = createTestClient(t, server.url, loaded.document)
        const queued = await api.post('/partner/webhook/test', undefined, as(mine.secret))
        t.equal(queued.status, 202)
        const event = queued.body as EventBody
        t.match(event, { keyId: mine.key.id, requestId: null, state: 'pending', attempts: 0 })

        await dispatcher.tick()
        const delivery = received.at(-1)
        if (!delivery) throw new Error('the receiver got nothing')
        t.equal(delivery.headers['x-acme-route'], 'pontis', 'the custom header is sent')
        t.equal(delivery.headers['x-event-id'], event.eventId)
        const timestamp = String(delivery.headers['x-signature-timestamp'])
        const expected = createHmac('sha256', mine.secret)
          .update(`${timestamp}.${delivery.body}`)
          .digest('hex')
        t.equal(delivery.headers['x-signature-sha256'], expected, 'signed with the partner key')
        t.match(JSON.parse(delivery.body), { event: 'webhook.test', data: { keyId: mine.key.id } })
        const delivered = await api.get('/partner/webhook/events', as(mine.secret))
        t.match((delivered.body as { events: EventBody[] }).events[0], {
          eventId: event.eventId,
          state: 'delivered',
        })

        answer = 500
        const failing = (await api.post('/partner/webhook/test', undefined, as(mine.secret)))
          .body as EventBody
        await dispatcher.tick()
        const retrying = await api.get('/partner/webhook/events?state=pending', as(mine.secret))
        t.match((retrying.body as { events: EventBody[] }).events, [
          { eventId: failing.eventId, attempts: 1, lastStatus: 500 },
        ])
        // The retry is due 1 ms later (baseMs 1): a following pass attempts it.
        while ((await dispatcher.event(failing.eventId))?.state === 'pending') await dispatcher.tick()
        const dead = await api.get('/partner/webhook/events?state=dead', as(mine.secret))
        t.match((dead.body as { events: EventBody[] }).events, [{ eventId: failing.eventId, attempts: 2 }])
        t.same(
          ((await api.get('/partner/webhook/events', as(theirs.secret))).body as { events: EventBody[] })
            .events,
          [],
          'another key sees none of these events',
        )

        const foreign = await api.post(
          `/partner/webhook/events/${failing.eventId}/redeliver`,
          undefined,
          as(theirs.secret),
        )
        t.equal(foreign.status, 404, "another key cannot redeliver this partner's event")
        t.equal((await dispatcher.event(failing.eventId))?.state, 'dead')

        answer = 200
        const redelivered = await api.post(
          `/partner/webhook/events/${failing.eventId}/redeliver`,
          undefined,
          as(mine.secret),
        )
        t.equal(redelivered.status, 200)
        t.match(redelivered.body, { eventId: failing.eventId, state: 'pending', attempts: 0 })
        await dispatcher.tick()
        t.equal((await dispatcher.event(failing.eventId))?.state, 'delivered', 'delivered after redelivery')
        const again = await api.post(
          `/partner/webhook/events/${failing.eventId}/redeliver`,
          undefined,
          as(mine.secret),
        )
        t.equal(again.status, 404, 'a delivered event is not redelivered')
      },
    )
  })
}
