/**
 * verifyWebhook against signatures computed independently here with node:crypto (not with the
 * service's signer), plus every rejection path.
 */
import { createHmac } from 'node:crypto'
import t from 'tap'
import { constantTimeEqual, verifyWebhook, type WebhookPayload } from '../src/index.js'

const API_KEY = 'pk_test_4f9c2a7e1b'
const NOW = 1_767_225_600_123
const now = (): number => NOW

const payload: WebhookPayload = {
  event: 'request.status.updated',
  timestamp: NOW - 100,
  data: {
    status: 'success',
    inTxHashes: ['0x92a2f476f3b832ec2eb22252001c940b7c8c7b1296f3f1703765121cdf8cc352'],
    txHashes: ['0xc1652bcccf77542578a9e6d24b376629ba26871561cabebba7d1ff0287e895d9'],
    updatedAt: NOW - 200,
    originChainId: 8453,
    destinationChainId: 42161,
    depositAddress: null,
    requestId: '0x58996a9d6f25c081df05b335921e58cfe6cb540ab9444e8a0b3add4a7796b302',
    referrer: 'pontis-docs — ünïcode',
    details: null,
    failReason: 'N/A',
    refundFailReason: 'N/A',
  },
}
const BODY = JSON.stringify(payload)

/** The receiver recipe from the contract, written out with node:crypto. */
function independentSignature(timestamp: string, body: string | Uint8Array, key = API_KEY): string {
  return createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(body)]))
    .digest('hex')
}

interface SignedHeaders extends Record<string, string> {
  'x-signature-timestamp': string
  'x-signature-sha256': string
  'x-event-id': string
}

function signedHeaders(timestampMs = NOW, body: string | Uint8Array = BODY): SignedHeaders {
  const timestamp = String(timestampMs)
  return {
    'x-signature-timestamp': timestamp,
    'x-signature-sha256': independentSignature(timestamp, body),
    'x-event-id': 'evt_1',
  }
}

t.test('accepts an independently computed signature', async (t) => {
  t.same(await verifyWebhook(signedHeaders(), BODY, API_KEY, { now }), { ok: true, timestamp: NOW })
})

t.test('header names are case-insensitive, in records and in Fetch Headers', async (t) => {
  const lower = signedHeaders()
  const mixed = {
    'X-Signature-Timestamp': lower['x-signature-timestamp'],
    'X-SIGNATURE-SHA256': lower['x-signature-sha256'],
  }
  t.same(await verifyWebhook(mixed, BODY, API_KEY, { now }), { ok: true, timestamp: NOW })
  const fetchHeaders = new Headers(mixed)
  t.same(await verifyWebhook(fetchHeaders, BODY, API_KEY, { now }), { ok: true, timestamp: NOW })
  // Node's IncomingHttpHeaders may hold single values in arrays.
  const arrays = {
    'x-signature-timestamp': [String(NOW)],
    'x-signature-sha256': [lower['x-signature-sha256']],
  }
  t.same(await verifyWebhook(arrays, BODY, API_KEY, { now }), { ok: true, timestamp: NOW })
})

t.test('a Uint8Array body verifies like its string form', async (t) => {
  const bytes = new TextEncoder().encode(BODY)
  t.same(await verifyWebhook(signedHeaders(), bytes, API_KEY, { now }), { ok: true, timestamp: NOW })
})

t.test('an uppercase hex signature is the same signature', async (t) => {
  const headers = signedHeaders()
  headers['x-signature-sha256'] = headers['x-signature-sha256'].toUpperCase()
  t.same(await verifyWebhook(headers, BODY, API_KEY, { now }), { ok: true, timestamp: NOW })
})

t.test('rejects one flipped byte anywhere in the body', async (t) => {
  const bytes = new TextEncoder().encode(BODY)
  for (const index of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
    const tampered = Uint8Array.from(bytes)
    tampered[index] = (tampered[index] ?? 0) ^ 0x01
    t.same(
      await verifyWebhook(signedHeaders(), tampered, API_KEY, { now }),
      { ok: false, reason: 'bad-signature' },
      `byte ${index}`,
    )
  }
  const string = BODY.replace('"success"', '"failure"')
  t.same(await verifyWebhook(signedHeaders(), string, API_KEY, { now }), {
    ok: false,
    reason: 'bad-signature',
  })
  t.same(await verifyWebhook(signedHeaders(), `${BODY} `, API_KEY, { now }), {
    ok: false,
    reason: 'bad-signature',
  })
})

t.test('rejects a wrong key and a tampered signature or timestamp', async (t) => {
  t.same(await verifyWebhook(signedHeaders(), BODY, `${API_KEY}x`, { now }), {
    ok: false,
    reason: 'bad-signature',
  })
  const flippedSignature = signedHeaders()
  const signature = flippedSignature['x-signature-sha256']
  flippedSignature['x-signature-sha256'] = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0')
  t.same(await verifyWebhook(flippedSignature, BODY, API_KEY, { now }), {
    ok: false,
    reason: 'bad-signature',
  })
  // The timestamp is part of the signed string: moving it breaks the signature.
  const movedTimestamp = { ...signedHeaders(), 'x-signature-timestamp': String(NOW + 1) }
  t.same(await verifyWebhook(movedTimestamp, BODY, API_KEY, { now }), { ok: false, reason: 'bad-signature' })
})

t.test('rejects malformed signatures', async (t) => {
  for (const bad of ['abc', 'z'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), `sha256=${'a'.repeat(64)}`]) {
    const headers = { ...signedHeaders(), 'x-signature-sha256': bad }
    t.same(await verifyWebhook(headers, BODY, API_KEY, { now }), { ok: false, reason: 'bad-signature' }, bad)
  }
})

t.test('stale timestamps are refused both ways; the tolerance edge is accepted', async (t) => {
  const tolerance = 300_000
  for (const [offset, expected] of [
    [-tolerance - 1, 'stale'],
    [tolerance + 1, 'stale'],
    [-24 * 3_600_000, 'stale'],
    [-tolerance, 'ok'],
    [tolerance, 'ok'],
  ] as const) {
    const signedAt = NOW + offset
    const result = await verifyWebhook(signedHeaders(signedAt), BODY, API_KEY, { now })
    t.same(
      result,
      expected === 'ok' ? { ok: true, timestamp: signedAt } : { ok: false, reason: 'stale' },
      `${offset}`,
    )
  }
  const result = await verifyWebhook(signedHeaders(NOW - 20_000), BODY, API_KEY, {
    now,
    toleranceSeconds: 10,
  })
  t.same(result, { ok: false, reason: 'stale' }, 'custom tolerance')
})

t.test('the default clock is Date.now', async (t) => {
  const result = await verifyWebhook(signedHeaders(Date.now()), BODY, API_KEY)
  t.equal(result.ok, true)
  t.same(await verifyWebhook(signedHeaders(NOW - 3_600_000), BODY, API_KEY), { ok: false, reason: 'stale' })
})

t.test('missing headers', async (t) => {
  const full = signedHeaders()
  const cases: Array<[string, Record<string, string | string[] | undefined>]> = [
    ['none', {}],
    ['no signature', { 'x-signature-timestamp': full['x-signature-timestamp'] }],
    ['no timestamp', { 'x-signature-sha256': full['x-signature-sha256'] }],
    ['empty values', { 'x-signature-timestamp': '', 'x-signature-sha256': ' ' }],
    [
      'undefined values',
      { 'x-signature-timestamp': undefined, 'x-signature-sha256': full['x-signature-sha256'] },
    ],
    ['empty array', { 'x-signature-timestamp': [], 'x-signature-sha256': full['x-signature-sha256'] }],
  ]
  for (const [name, headers] of cases) {
    t.same(
      await verifyWebhook(headers, BODY, API_KEY, { now }),
      { ok: false, reason: 'missing-headers' },
      name,
    )
  }
  t.same(await verifyWebhook(new Headers(), BODY, API_KEY, { now }), { ok: false, reason: 'missing-headers' })
})

t.test('non-numeric or ambiguous timestamps', async (t) => {
  for (const bad of [
    'abc',
    '1767225600.123',
    '-1767225600123',
    '1.767e12',
    '0x1f',
    '12345678901234567',
    'NaN',
  ]) {
    // A well-formed signature over the bad value: the format check, not the MAC, must reject it.
    const headers = { 'x-signature-timestamp': bad, 'x-signature-sha256': independentSignature(bad, BODY) }
    t.same(await verifyWebhook(headers, BODY, API_KEY, { now }), { ok: false, reason: 'bad-timestamp' }, bad)
  }
  const repeated = { ...signedHeaders(), 'x-signature-timestamp': [String(NOW), String(NOW)] }
  t.same(
    await verifyWebhook(repeated, BODY, API_KEY, { now }),
    { ok: false, reason: 'bad-timestamp' },
    'repeated',
  )
  // Fetch joins a repeated header with ", ".
  const joined = new Headers(signedHeaders())
  joined.append('X-Signature-Timestamp', String(NOW))
  t.same(
    await verifyWebhook(joined, BODY, API_KEY, { now }),
    { ok: false, reason: 'bad-timestamp' },
    'joined',
  )
})

t.test('misuse throws', async (t) => {
  await t.rejects(verifyWebhook(signedHeaders(), BODY, '', { now }), TypeError)
  await t.rejects(verifyWebhook(signedHeaders(), BODY, API_KEY, { now, toleranceSeconds: -1 }), TypeError)
  await t.rejects(
    verifyWebhook(signedHeaders(), BODY, API_KEY, { now, toleranceSeconds: Number.NaN }),
    TypeError,
  )
})

t.test('constantTimeEqual', async (t) => {
  const a = Uint8Array.from([1, 2, 3, 4])
  t.equal(constantTimeEqual(a, Uint8Array.from([1, 2, 3, 4])), true)
  t.equal(constantTimeEqual(a, Uint8Array.from([1, 2, 3, 5])), false)
  t.equal(constantTimeEqual(a, Uint8Array.from([0, 2, 3, 4])), false)
  t.equal(constantTimeEqual(a, Uint8Array.from([1, 2, 3])), false)
  t.equal(constantTimeEqual(a, Uint8Array.from([1, 2, 3, 4, 0])), false)
  t.equal(constantTimeEqual(new Uint8Array(0), new Uint8Array(0)), true)
})

t.test('the browser entry imports no Node built-in', async (t) => {
  const { readFile } = await import('node:fs/promises')
  for (const file of ['index.ts', 'webhook.ts']) {
    const source = await readFile(new URL(`../src/${file}`, import.meta.url), 'utf8')
    t.notMatch(source, /from\s+['"](node:|crypto|buffer|fs|http)/, file)
  }
})
