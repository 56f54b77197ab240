/**
 * The admin API over real HTTP on loopback: `createApiApp` with the intents document, the admin
 * handlers and the rate-limit middleware, every answer checked against the document by the test
 * client. Bearer checks, the disabled API, the whole key lifecycle, 404s and 400s, and that no
 * secret (nor the admin token) ever reaches a log line. Webhook URLs are public IP literals: the
 * store checks where they point, and names would need public DNS.
 */
import crypto from 'node:crypto'
import type { Logger } from '@pontis/core'
import { createApiApp, listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, errorDataOf } from '@pontis/http/testing'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/app.js'
import { ApiKeyStore, createAdminHandlers, resolveAdminToken } from '../src/keys/index.js'
import { createRateLimitGate, DEFAULT_RATE_LIMIT_POLICY, MemoryRateLimiter } from '../src/ratelimit/index.js'
import { createPgliteClient, RequestStore } from '../src/store/index.js'

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const client = await createPgliteClient()
await new RequestStore(client).migrate()
t.teardown(() => client.close())
const keys = new ApiKeyStore(client)

/** Every log line of every level, as the JSON a real logger would print. */
const lines: string[] = []
const capturing: Logger = {
  debug: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
  info: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
  warn: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
  error: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
}

async function startAdmin(adminToken: string | undefined) {
  const { koa } = await createApiApp({
    loaded,
    logger: capturing,
    handlers: createAdminHandlers({ keys, adminToken, logger: capturing }),
    gate: createRateLimitGate({ limiter: new MemoryRateLimiter(), keys, logger: capturing }),
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  return server.url
}

const url = await startAdmin(ADMIN_TOKEN)
const disabledUrl = await startAdmin(undefined)
const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }
const UNKNOWN_ID = 'key_000000000000000000000000'

type KeyBody = {
  id: string
  label: string
  tier: string
  keyPrefix: string
  webhook: unknown
  rotatedAt: number | null
  revokedAt: number | null
}
type SecretBody = { key: KeyBody; secret: string }
type ErrorBody = { message: string; errorCode: string; errorData?: string }

const secrets: string[] = []

t.test('bearer token: missing, wrong, other schemes are 401; the right one passes', async (t) => {
  const api = createTestClient(t, url, loaded.document)
  const missing = await api.get('/admin/keys')
  t.equal(missing.status, 401)
  t.match(missing.body, { errorCode: 'UNAUTHORIZED', message: /Bearer/ })
  for (const authorization of [
    'Bearer wrong-token-0123456789abcdef0123',
    `Bearer ${ADMIN_TOKEN}x`,
    `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
    `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
    ADMIN_TOKEN,
    'Bearer',
  ]) {
    const res = await api.get('/admin/keys', { headers: { authorization } })
    t.equal(res.status, 401, authorization.slice(0, 20))
    t.equal((res.body as ErrorBody).errorCode, 'UNAUTHORIZED')
    t.notOk(res.text.includes(ADMIN_TOKEN), 'the token is not echoed')
  }
  t.equal((await api.get('/admin/keys', auth)).status, 200)
  t.equal(
    (await api.get('/admin/keys', { headers: { authorization: `bearer ${ADMIN_TOKEN}` } })).status,
    200,
    'the scheme is case-insensitive',
  )
  const compared = t.capture(crypto, 'timingSafeEqual', crypto.timingSafeEqual)
  await api.get('/admin/keys', { headers: { authorization: 'Bearer x' } })
  t.equal(compared().length, 1, 'even a short token is compared in constant time')
})

t.test('without ADMIN_TOKEN the admin API is disabled: 403 everywhere', async (t) => {
  const api = createTestClient(t, disabledUrl, loaded.document)
  const calls = [
    api.post('/admin/keys', { label: 'x' }, auth),
    api.get('/admin/keys', auth),
    api.get(`/admin/keys/${UNKNOWN_ID}`, auth),
    api.post(`/admin/keys/${UNKNOWN_ID}/rotate`, undefined, auth),
    api.request('DELETE', `/admin/keys/${UNKNOWN_ID}`, auth),
    api.request('PUT', `/admin/keys/${UNKNOWN_ID}/webhook`, { ...auth, json: { enabled: false } }),
    api.request('DELETE', `/admin/keys/${UNKNOWN_ID}/webhook`, auth),
    api.get('/admin/keys'),
  ]
  for (const res of await Promise.all(calls)) {
    t.equal(res.status, 403)
    t.same(
      { message: (res.body as ErrorBody).message, errorCode: (res.body as ErrorBody).errorCode },
      {
        message: 'admin API disabled: set ADMIN_TOKEN',
        errorCode: 'FORBIDDEN',
      },
    )
  }
})

t.test('key lifecycle through the admin API', async (t) => {
  const api = createTestClient(t, url, loaded.document)
  const created = await api.post(
    '/admin/keys',
    {
      label: 'Acme backend',
      tier: 'elevated',
      webhook: {
        enabled: true,
        url: 'https://93.184.215.14/pontis',
        headers: { 'X-Acme-Route': 'pontis' },
      },
    },
    auth,
  )
  t.equal(created.status, 201)
  const { key, secret } = created.body as SecretBody
  secrets.push(secret)
  t.match(key, {
    label: 'Acme backend',
    tier: 'elevated',
    keyPrefix: secret.slice(0, 8),
    webhook: {
      enabled: true,
      url: 'https://93.184.215.14/pontis',
      headers: { 'X-Acme-Route': 'pontis' },
    },
    rotatedAt: null,
    revokedAt: null,
  })

  const minimal = await api.post('/admin/keys', { label: 'Acme wallet' }, auth)
  t.equal(minimal.status, 201)
  t.equal((minimal.body as SecretBody).key.tier, 'standard', 'standard by default')
  secrets.push((minimal.body as SecretBody).secret)

  const listed = await api.get('/admin/keys', auth)
  t.same(
    (listed.body as { keys: KeyBody[] }).keys.map((listedKey) => listedKey.id),
    [key.id, (minimal.body as SecretBody).key.id],
  )
  t.notOk(listed.text.includes(secret), 'listing never shows a secret')
  const got = await api.get(`/admin/keys/${key.id}`, auth)
  t.same(got.body, key)
  t.notOk(got.text.includes(secret))

  // The secret works on the public API (no handler here: 501, but authenticated and counted per key).
  const used = await api.get('/chains', { headers: { 'x-api-key': secret } })
  t.equal(used.headers['ratelimit-policy'], '"other";q=1200;w=60', 'elevated limits apply')

  const rotated = await api.post(`/admin/keys/${key.id}/rotate`, undefined, auth)
  t.equal(rotated.status, 200)
  const next = rotated.body as SecretBody
  secrets.push(next.secret)
  t.not(next.secret, secret)
  t.equal(next.key.id, key.id)
  t.equal(next.key.keyPrefix, next.secret.slice(0, 8))
  t.type(next.key.rotatedAt, 'number')
  t.equal((await api.get('/chains', { headers: { 'x-api-key': secret } })).status, 401, 'old secret refused')
  t.equal(
    (await api.get('/chains', { headers: { 'x-api-key': next.secret } })).status,
    501,
    'new one accepted',
  )

  const paused = await api.request('PUT', `/admin/keys/${key.id}/webhook`, {
    ...auth,
    json: { enabled: false },
  })
  t.equal(paused.status, 200)
  t.same((paused.body as KeyBody).webhook, {
    enabled: false,
    url: 'https://93.184.215.14/pontis',
    headers: { 'X-Acme-Route': 'pontis' },
  })
  const replaced = await api.request('PUT', `/admin/keys/${key.id}/webhook`, {
    ...auth,
    json: { enabled: true, url: 'https://93.184.215.15/hook' },
  })
  t.same((replaced.body as KeyBody).webhook, { enabled: true, url: 'https://93.184.215.15/hook' })
  const removed = await api.request('DELETE', `/admin/keys/${key.id}/webhook`, auth)
  t.equal((removed.body as KeyBody).webhook, null)
  const pausedNothing = await api.request('PUT', `/admin/keys/${key.id}/webhook`, {
    ...auth,
    json: { enabled: false },
  })
  t.equal((pausedNothing.body as KeyBody).webhook, null, 'pausing no webhook leaves none')

  const revoked = await api.request('DELETE', `/admin/keys/${key.id}`, auth)
  t.equal(revoked.status, 200)
  t.type((revoked.body as KeyBody).revokedAt, 'number')
  t.equal(
    (await api.get('/chains', { headers: { 'x-api-key': next.secret } })).status,
    401,
    'revoked: refused',
  )
  const again = await api.request('DELETE', `/admin/keys/${key.id}`, auth)
  t.equal((again.body as KeyBody).revokedAt, (revoked.body as KeyBody).revokedAt, 'revoking is idempotent')
  const rotateRevoked = await api.post(`/admin/keys/${key.id}/rotate`, undefined, auth)
  t.equal(rotateRevoked.status, 400)
  t.match(rotateRevoked.body, { errorCode: 'INVALID_REQUEST', message: /revoked/ })
  t.same(errorDataOf(rotateRevoked.body), { keyId: key.id })
  const hookRevoked = await api.request('PUT', `/admin/keys/${key.id}/webhook`, {
    ...auth,
    json: { enabled: true, url: 'https://93.184.215.16/' },
  })
  t.equal(hookRevoked.status, 400)
  t.equal((await api.get(`/admin/keys/${key.id}`, auth)).status, 200, 'a revoked key can still be read')
})

t.test('unknown keys are 404, malformed ids and bodies 400', async (t) => {
  const api = createTestClient(t, url, loaded.document)
  for (const res of [
    await api.get(`/admin/keys/${UNKNOWN_ID}`, auth),
    await api.post(`/admin/keys/${UNKNOWN_ID}/rotate`, undefined, auth),
    await api.request('DELETE', `/admin/keys/${UNKNOWN_ID}`, auth),
    await api.request('PUT', `/admin/keys/${UNKNOWN_ID}/webhook`, { ...auth, json: { enabled: false } }),
    await api.request('PUT', `/admin/keys/${UNKNOWN_ID}/webhook`, {
      ...auth,
      json: { enabled: true, url: 'https://93.184.215.16/' },
    }),
    await api.request('DELETE', `/admin/keys/${UNKNOWN_ID}/webhook`, auth),
  ]) {
    t.equal(res.status, 404)
    t.match(res.body, { errorCode: 'ROUTE_NOT_FOUND' })
    t.same(errorDataOf(res.body), { keyId: UNKNOWN_ID })
  }
  t.equal((await api.get('/admin/keys/nonsense', auth)).status, 400, 'malformed id')
  const bad: unknown[] = [
    {},
    { label: '' },
    { label: 'x', tier: 'gold' },
    { label: 'x', webhook: { enabled: true } },
    { label: 'x', webhook: { enabled: true, url: 'ftp://93.184.215.16/' } },
    { label: 'x', webhook: { enabled: true, url: 'https://93.184.215.16/', headers: { 'Bad Name': 'v' } } },
  ]
  for (const body of bad) {
    const res = await api.post('/admin/keys', body, auth)
    t.equal(res.status, 400, JSON.stringify(body))
    t.equal((res.body as ErrorBody).errorCode, 'INVALID_REQUEST')
  }
  // A member the document does not list is ignored and named: a caller cannot choose its own secret.
  const chosen = await api.post('/admin/keys', { label: 'x', secret: 'pk_mine' }, auth)
  t.equal(chosen.status, 201, 'the key is made')
  t.not((chosen.body as SecretBody).secret, 'pk_mine', 'with a secret of the service, not the caller')
  secrets.push((chosen.body as SecretBody).secret)
  t.equal(chosen.headers['ignored-members'], 'body.secret', 'and the ignored member is named')
  const reserved = await api.post(
    '/admin/keys',
    {
      label: 'x',
      webhook: { enabled: true, url: 'https://93.184.215.16/', headers: { 'X-Signature-SHA256': 'v' } },
    },
    auth,
  )
  t.equal(reserved.status, 400, 'the store refuses the service-owned headers')
  t.match(reserved.body, { errorCode: 'INVALID_REQUEST', message: /set by the service/ })
  const credentials = await api.post(
    '/admin/keys',
    { label: 'x', webhook: { enabled: true, url: 'https://user:pw@93.184.215.16/' } },
    auth,
  )
  t.equal(credentials.status, 400)
  t.match(credentials.body, { errorCode: 'INVALID_WEBHOOK_URL' })
  t.match(errorDataOf(credentials.body), { reason: 'credentials' })
  t.notMatch(credentials.text, 'pw@', 'URL credentials are not echoed')
  const webhookBody = await api.request('PUT', `/admin/keys/${UNKNOWN_ID}/webhook`, {
    ...auth,
    json: { enabled: true },
  })
  t.equal(webhookBody.status, 400, 'enabling needs a url')
  const headersAlone = await api.request('PUT', `/admin/keys/${UNKNOWN_ID}/webhook`, {
    ...auth,
    json: { enabled: false, headers: { 'X-A': 'b' } },
  })
  t.equal(headersAlone.status, 400, 'headers need a url')
})

t.test('nothing ever logs a secret or the admin token', async (t) => {
  const api = createTestClient(t, url, loaded.document)
  // The failure paths as well: unknown keys, near misses of real ones, a wrong bearer.
  const created = (await api.post('/admin/keys', { label: 'logged?' }, auth)).body as SecretBody
  secrets.push(created.secret)
  const nearMiss = `${created.secret.slice(0, -2)}zz`
  await api.get('/chains', { headers: { 'x-api-key': nearMiss } })
  await api.get('/chains', { headers: { 'x-api-key': created.secret } })
  await api.get('/admin/keys', { headers: { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` } })
  const rotated = (await api.post(`/admin/keys/${created.key.id}/rotate`, undefined, auth)).body as SecretBody
  secrets.push(rotated.secret)
  await api.request('DELETE', `/admin/keys/${created.key.id}`, auth)
  await api.get('/chains', { headers: { 'x-api-key': rotated.secret } })

  const log = lines.join('\n')
  t.ok(lines.length > 0, 'something was logged')
  t.match(log, /API key created/)
  t.match(log, /API key rotated/)
  t.match(log, /API key revoked/)
  for (const secret of [...secrets, nearMiss]) {
    // Any 12-character window of the secret's random part would be a leak.
    const random = secret.slice(3)
    for (let i = 0; i + 12 <= random.length; i += 6) {
      if (log.includes(random.slice(i, i + 12)))
        t.fail(`a log line contains part of a secret: ${random.slice(i, i + 12)}`)
    }
  }
  t.notOk(log.includes(ADMIN_TOKEN.slice(0, 16)), 'the admin token is not logged')
  t.notOk(log.includes(crypto.createHash('sha256').update(rotated.secret).digest('hex')), 'nor secret hashes')
})

t.test('ADMIN_TOKEN setting', async (t) => {
  t.equal(resolveAdminToken({}), undefined)
  t.equal(resolveAdminToken({ ADMIN_TOKEN: '' }), undefined)
  t.equal(resolveAdminToken({ ADMIN_TOKEN }), ADMIN_TOKEN)
  t.throws(() => resolveAdminToken({ ADMIN_TOKEN: 'short' }), /at least 24 characters/)
  t.throws(() => resolveAdminToken({ ADMIN_TOKEN: 'has a space in it 0123456789' }), /without spaces/)
})

t.test('GET /admin/rate-limits: the policy the gate applies, behind the admin token', async (t) => {
  const api = createTestClient(t, url, loaded.document)
  t.equal((await api.get('/admin/rate-limits')).status, 401)
  const answer = await api.get('/admin/rate-limits', auth)
  t.equal(answer.status, 200)
  t.same(answer.body, { policy: DEFAULT_RATE_LIMIT_POLICY })
})
