/**
 * deliverOnce against real loopback receivers (node:http on 127.0.0.1, port 0). The receiver checks
 * signatures with its own node:crypto HMAC, as an integrator would, and records what arrived.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import type { WebhookLookup, WebhookTargetPolicy } from '../src/keys/webhook-target.js'
import { deliverOnce, parseRetryAfter, WEBHOOK_USER_AGENT } from '../src/webhooks/deliver.js'

const API_KEY = 'pk_live_receiver_secret_8c1f'
const EVENT_ID = 'evt_01JD7Q5V6M7ZP3X9K2B4N8C1T0'
// A whole second, so an HTTP-date Retry-After converts exactly.
const NOW = 1_767_225_600_000
const now = (): number => NOW
const BODY = JSON.stringify({
  event: 'request.status.updated',
  timestamp: NOW,
  data: { status: 'success', requestId: '0x58996a9d', referrer: 'ünïcode ✓' },
})
const dev: WebhookTargetPolicy = { allowHttpLoopback: true }
const strict: WebhookTargetPolicy = { allowHttpLoopback: false }

interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
  verified: boolean
}

function independentlyVerified(headers: IncomingHttpHeaders, body: Buffer): boolean {
  const timestamp = headers['x-signature-timestamp']
  const signature = headers['x-signature-sha256']
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature))
    return false
  const expected = createHmac('sha256', API_KEY)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), body]))
    .digest()
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'))
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

// The redirect target: must never be reached.
const elsewhere: Received[] = []
const elsewhereServer = createServer((request, response) => {
  elsewhere.push({
    path: request.url ?? '',
    headers: request.headers,
    body: Buffer.alloc(0),
    verified: false,
  })
  response.end('ok')
})

const received: Received[] = []
let elsewherePort = 0
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const body = Buffer.concat(chunks)
    const path = request.url ?? ''
    const verified = independentlyVerified(request.headers, body)
    received.push({ path, headers: request.headers, body, verified })
    switch (path) {
      case '/ok':
        // A well-behaved receiver: 2xx only after verifying.
        response.writeHead(verified ? 204 : 401).end()
        return
      case '/fail':
        response.writeHead(500).end('boom')
        return
      case '/gone':
        response.writeHead(410).end()
        return
      case '/busy':
        response.writeHead(429, { 'Retry-After': '7' }).end()
        return
      case '/busy-date':
        response.writeHead(503, { 'Retry-After': new Date(NOW + 30_000).toUTCString() }).end()
        return
      case '/redirect':
        response.writeHead(302, { Location: `http://127.0.0.1:${elsewherePort}/target` }).end()
        return
      case '/big':
        response.writeHead(200, { 'Content-Type': 'text/plain' }).end(Buffer.alloc(4 * 1024 * 1024, 0x61))
        return
      case '/slow-body':
        response.writeHead(202)
        response.write('partial')
        return // never ends
      case '/hang':
        return // never answers
      default:
        response.writeHead(404).end()
    }
  })
})

let port = 0
t.before(async () => {
  port = await listen(receiver)
  elsewherePort = await listen(elsewhereServer)
})
t.teardown(async () => {
  await close(receiver)
  await close(elsewhereServer)
})
t.beforeEach(() => {
  received.length = 0
  elsewhere.length = 0
})

/**
 * Attempts that must succeed get a generous budget (a busy machine may pause this process, which
 * runs both ends); the cases about the timeout set their own, and only those wait it out.
 */
const GENEROUS_MS = 30_000
/** A budget a test means to run out: it only has to outlast a loopback request's arrival. */
const RUNS_OUT_MS = 2000
const base = () => ({
  body: BODY,
  apiKey: API_KEY,
  eventId: EVENT_ID,
  timeoutMs: GENEROUS_MS,
  policy: dev,
  now,
})
const url = (path: string): string => `http://127.0.0.1:${port}${path}`

t.test('2xx: delivered, signed over the exact bytes, with all headers', async (t) => {
  const result = await deliverOnce({
    ...base(),
    url: url('/ok'),
    headers: { 'X-Tenant': 'acme', Authorization: 'Bearer receiver-token' },
  })
  t.same(result, { outcome: 'delivered', status: 204 })
  t.equal(received.length, 1)
  const [request] = received
  if (request === undefined) return
  t.equal(request.verified, true, 'independent HMAC verification')
  t.equal(request.body.toString('utf8'), BODY)
  t.equal(request.headers['content-type'], 'application/json')
  t.equal(request.headers['content-length'], String(Buffer.byteLength(BODY)))
  t.equal(request.headers['user-agent'], WEBHOOK_USER_AGENT)
  t.equal(request.headers['x-event-id'], EVENT_ID)
  t.equal(request.headers['x-signature-timestamp'], String(NOW), 'Unix milliseconds of this attempt')
  t.equal(request.headers['x-tenant'], 'acme', 'custom header')
  t.equal(request.headers.authorization, 'Bearer receiver-token', 'custom header')
  t.equal(request.headers.host, `127.0.0.1:${port}`)
})

t.test('custom headers cannot override the signature, event id or content headers', async (t) => {
  const result = await deliverOnce({
    ...base(),
    url: url('/ok'),
    headers: {
      'X-Signature-SHA256': 'f'.repeat(64),
      'x-signature-timestamp': '1',
      'X-EVENT-ID': 'forged',
      'content-type': 'text/plain',
      'Content-Length': '1',
      'User-Agent': 'curl',
      Host: 'evil.example',
      'X-Kept': 'yes',
    },
  })
  t.same(result, { outcome: 'delivered', status: 204 })
  const headers = received[0]?.headers ?? {}
  t.equal(received[0]?.verified, true)
  t.equal(headers['x-signature-timestamp'], String(NOW))
  t.equal(headers['x-event-id'], EVENT_ID)
  t.equal(headers['content-type'], 'application/json')
  t.equal(headers['user-agent'], WEBHOOK_USER_AGENT)
  t.equal(headers.host, `127.0.0.1:${port}`)
  t.equal(headers['x-kept'], 'yes')
})

t.test('every attempt signs its own timestamp; the event id stays', async (t) => {
  await deliverOnce({ ...base(), url: url('/fail'), now: () => NOW })
  await deliverOnce({ ...base(), url: url('/fail'), now: () => NOW + 60_000 })
  t.same(
    received.map((request) => request.headers['x-signature-timestamp']),
    [String(NOW), String(NOW + 60_000)],
  )
  t.same(
    received.map((request) => request.verified),
    [true, true],
  )
  t.same(
    received.map((request) => request.headers['x-event-id']),
    [EVENT_ID, EVENT_ID],
  )
})

t.test('a Uint8Array body is sent and signed byte for byte', async (t) => {
  const bytes = new TextEncoder().encode(BODY)
  t.same(await deliverOnce({ ...base(), body: bytes, url: url('/ok') }), {
    outcome: 'delivered',
    status: 204,
  })
  t.same(received[0]?.body, Buffer.from(bytes))
})

t.test('500: retry', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/fail') })
  t.same(result, { outcome: 'retry', status: 500, error: 'HTTP 500' })
})

t.test('410: disable', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/gone') })
  t.equal(result.outcome, 'disable')
  t.equal(result.status, 410)
})

t.test('429 with Retry-After: 7 → retry after 7000 ms', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/busy') })
  t.same(result, { outcome: 'retry', status: 429, retryAfterMs: 7000, error: 'HTTP 429' })
})

t.test('503 with an HTTP-date Retry-After', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/busy-date') })
  t.same(result, { outcome: 'retry', status: 503, retryAfterMs: 30_000, error: 'HTTP 503' })
})

t.test('a receiver that never answers: retry after the timeout', async (t) => {
  const started = performance.now()
  const result = await deliverOnce({ ...base(), url: url('/hang'), timeoutMs: RUNS_OUT_MS })
  const elapsed = performance.now() - started
  // /hang never answers, so only the timeout can end the attempt; how late it ends is the machine's.
  t.same(result, { outcome: 'retry', error: `timed out after ${RUNS_OUT_MS} ms` })
  t.ok(elapsed >= RUNS_OUT_MS - 10, `not before the timeout (${Math.round(elapsed)} ms)`)
  t.equal(received.length, 1, 'the request did arrive')
})

t.test('a status with a stalled body still counts', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/slow-body'), timeoutMs: RUNS_OUT_MS })
  t.same(result, { outcome: 'delivered', status: 202 })
})

t.test('a huge response body is cut off, not read', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/big'), maxResponseBytes: 1024 })
  t.same(result, { outcome: 'delivered', status: 200 })
})

t.test('302: not followed, retried', async (t) => {
  const result = await deliverOnce({ ...base(), url: url('/redirect') })
  t.equal(result.outcome, 'retry')
  t.equal(result.status, 302)
  t.match(result.error, /redirect/)
  // Following it would have meant waiting for the target's answer before this one.
  t.same(elsewhere, [], 'the Location target received nothing')
})

t.test('a name resolving to 127.0.0.1 without the dev flag: rejected-target, nothing sent', async (t) => {
  const lookup: WebhookLookup = async () => [{ address: '127.0.0.1', family: 4 }]
  const https = await deliverOnce({
    ...base(),
    policy: strict,
    lookup,
    url: `https://hooks.example.test:${port}/ok`,
  })
  t.equal(https.outcome, 'rejected-target')
  t.match(https.error, /127\.0\.0\.1 \(loopback\)/)
  const http = await deliverOnce({
    ...base(),
    policy: strict,
    lookup,
    url: `http://hooks.example.test:${port}/ok`,
  })
  t.equal(http.outcome, 'rejected-target')
  const literal = await deliverOnce({ ...base(), policy: strict, url: `https://[::ffff:7f00:1]:${port}/ok` })
  t.equal(literal.outcome, 'rejected-target')
  const credentials = await deliverOnce({ ...base(), url: `http://user:pw@127.0.0.1:${port}/ok` })
  t.equal(credentials.outcome, 'rejected-target')
  t.same(received, [])
})

t.test('pinning: the connection goes to the checked address, Host keeps the name', async (t) => {
  const asked: string[] = []
  // A rebinding resolver: the first answer is the receiver, any later one a different address.
  const lookup: WebhookLookup = async (hostname) => {
    asked.push(hostname)
    return [{ address: asked.length === 1 ? '127.0.0.1' : '10.9.9.9', family: 4 }]
  }
  const result = await deliverOnce({ ...base(), lookup, url: `http://hooks.example.test:${port}/ok` })
  t.same(result, { outcome: 'delivered', status: 204 })
  t.same(asked, ['hooks.example.test'], 'resolved once, by the check')
  t.equal(received[0]?.headers.host, `hooks.example.test:${port}`)
  t.equal(received[0]?.verified, true)
})

t.test('network and DNS errors: retry', async (t) => {
  const closed = createServer()
  const closedPort = await listen(closed)
  await close(closed)
  const refused = await deliverOnce({ ...base(), url: `http://127.0.0.1:${closedPort}/ok` })
  t.equal(refused.outcome, 'retry')
  t.match(refused.error, /ECONNREFUSED/)

  const failing: WebhookLookup = async () => {
    throw Object.assign(new Error('queryA ESERVFAIL'), { code: 'ESERVFAIL' })
  }
  const dns = await deliverOnce({ ...base(), lookup: failing, url: 'https://hooks.example.test/ok' })
  t.same(dns, { outcome: 'retry', error: 'could not resolve webhook host hooks.example.test: ESERVFAIL' })

  const never: WebhookLookup = () => new Promise(() => {})
  const slow = await deliverOnce({
    ...base(),
    lookup: never,
    url: 'https://hooks.example.test/ok',
    timeoutMs: 100,
  })
  t.same(slow, { outcome: 'retry', error: 'timed out after 100 ms' }, 'the timeout covers DNS')
})

t.test('an invalid custom header: rejected-target, value not echoed', async (t) => {
  const result = await deliverOnce({
    ...base(),
    url: url('/ok'),
    headers: { 'X-Token': 'secret-value\r\nX-Evil: 1' },
  })
  t.equal(result.outcome, 'rejected-target')
  t.match(result.error, 'X-Token')
  t.notMatch(result.error, 'secret-value')
  const badName = await deliverOnce({ ...base(), url: url('/ok'), headers: { 'Bad Name': 'x' } })
  t.equal(badName.outcome, 'rejected-target')
  t.same(received, [])
})

t.test('an outer abort signal ends the attempt', async (t) => {
  const controller = new AbortController()
  // Aborted once the receiver holds the request: the attempt is in flight, whatever the timing.
  void waitFor('the request at /hang', () => received.length === 1).then(
    () => controller.abort(),
    () => undefined, // never held: the attempt then times out and the check below says so
  )
  const result = await deliverOnce({ ...base(), url: url('/hang'), signal: controller.signal })
  t.same(result, { outcome: 'retry', error: 'aborted' })
  const already = AbortSignal.abort()
  t.same(await deliverOnce({ ...base(), url: url('/ok'), signal: already }), {
    outcome: 'retry',
    error: 'aborted',
  })
})

t.test('no result carries the API key', async (t) => {
  const results = [
    ...(await Promise.all(
      ['/ok', '/fail', '/gone', '/busy', '/redirect'].map((path) =>
        deliverOnce({ ...base(), url: url(path) }),
      ),
    )),
    await deliverOnce({ ...base(), url: `https://${API_KEY}@example.com/` }),
    await deliverOnce({
      ...base(),
      url: `https://example.com/?key=${API_KEY}`,
      lookup: async () => [{ address: '10.0.0.1', family: 4 }],
    }),
  ]
  for (const result of results) t.notMatch(result.error ?? '', API_KEY, `${result.outcome}: no API key`)
})

t.test('caller mistakes throw', async (t) => {
  await t.rejects(deliverOnce({ ...base(), url: url('/ok'), eventId: '' }), TypeError)
  await t.rejects(deliverOnce({ ...base(), url: url('/ok'), eventId: 'has space' }), TypeError)
  await t.rejects(deliverOnce({ ...base(), url: url('/ok'), eventId: 'x'.repeat(129) }), TypeError)
  await t.rejects(deliverOnce({ ...base(), url: url('/ok'), timeoutMs: 0 }), TypeError)
  t.same(received, [])
})

t.test('parseRetryAfter', async (t) => {
  t.equal(parseRetryAfter(undefined, NOW), undefined)
  t.equal(parseRetryAfter('7', NOW), 7000)
  t.equal(parseRetryAfter(' 120 ', NOW), 120_000)
  t.equal(parseRetryAfter('0', NOW), 0)
  t.equal(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW), 90_000)
  t.equal(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', NOW), 0, 'a past date means now')
  t.equal(parseRetryAfter('-5', NOW), undefined)
  t.equal(parseRetryAfter('1.5', NOW), undefined)
  t.equal(parseRetryAfter('soon', NOW), undefined)
  t.equal(parseRetryAfter('', NOW), undefined)
})
