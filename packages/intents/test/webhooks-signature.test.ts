/**
 * signWebhook: a known-answer vector (computed with `openssl dgst -sha256 -hmac`), an independent
 * node:crypto computation, and a round trip through the receiver-side verifyWebhook of @pontis/client.
 */
import { createHmac } from 'node:crypto'
import { verifyWebhook } from '@pontis/client'
import t from 'tap'
import { signWebhook } from '../src/webhooks/signature.js'

const API_KEY = 'pk_test_key'
const TIMESTAMP = 1_767_225_600_123

t.test('known-answer vector', async (t) => {
  t.same(signWebhook('{"event":"request.status.updated"}', API_KEY, TIMESTAMP), {
    'X-Signature-Timestamp': '1767225600123',
    'X-Signature-SHA256': '8c51fcbb7ebdac76d86f50773fd19a7b03cd7dcad94db83b0ae9ac995308507a',
  })
})

t.test('matches an independent HMAC over `<timestamp>.<body>`, strings as UTF-8', async (t) => {
  const body = JSON.stringify({ referrer: 'ünïcode ✓', n: 1 })
  const expected = createHmac('sha256', API_KEY).update(`${TIMESTAMP}.${body}`).digest('hex')
  t.equal(signWebhook(body, API_KEY, TIMESTAMP)['X-Signature-SHA256'], expected)
  t.same(signWebhook(Buffer.from(body, 'utf8'), API_KEY, TIMESTAMP), signWebhook(body, API_KEY, TIMESTAMP))
  t.not(signWebhook(body, API_KEY, TIMESTAMP + 1)['X-Signature-SHA256'], expected, 'the timestamp is signed')
})

t.test('verifyWebhook (@pontis/client) accepts what signWebhook produces', async (t) => {
  const body = JSON.stringify({
    event: 'request.status.updated',
    timestamp: TIMESTAMP,
    data: { status: 'pending' },
  })
  const headers = signWebhook(body, API_KEY, TIMESTAMP)
  const now = (): number => TIMESTAMP + 1000
  t.same(await verifyWebhook(headers, body, API_KEY, { now }), { ok: true, timestamp: TIMESTAMP })
  t.same(await verifyWebhook(new Headers(headers), new TextEncoder().encode(body), API_KEY, { now }), {
    ok: true,
    timestamp: TIMESTAMP,
  })
  t.same(await verifyWebhook(headers, body, 'another-key', { now }), { ok: false, reason: 'bad-signature' })
})

t.test('refuses bad input without echoing the key', async (t) => {
  for (const bad of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
    t.throws(() => signWebhook('{}', API_KEY, bad), RangeError, String(bad))
  }
  t.throws(() => signWebhook('{}', '', TIMESTAMP), TypeError)
  try {
    signWebhook('{}', API_KEY, -1)
  } catch (error) {
    t.notMatch((error as Error).message, API_KEY)
  }
})
