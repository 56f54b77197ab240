/**
 * The rate-limit middleware over real HTTP on loopback, in `createApiApp` with the intents
 * document (every answer is checked against it): exact counting and headers, per-key and per-address
 * buckets, route classes, exempt paths, X-Forwarded-For only with proxy trust, 401 for unknown and
 * revoked keys, and two service instances sharing one limit through PostgreSQL.
 */
import crypto from 'node:crypto'
import { type Logger, PontisError, silentLogger } from '@pontis/core'
import { createApiApp, listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, errorDataOf } from '@pontis/http/testing'
import type Koa from 'koa'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/app.js'
import { ApiKeyStore, createAdminHandlers } from '../src/keys/index.js'
import {
  apiKeyIdOf,
  createRateLimitGate,
  MemoryRateLimiter,
  parseRateLimitPolicy,
  type RateLimiter,
  type RateLimitPolicy,
  SqlRateLimiter,
} from '../src/ratelimit/index.js'
import { createPgClient, createPgliteClient, RequestStore } from '../src/store/index.js'
import { openTestSchema, TEST_DATABASE_URL } from './fixtures/postgres.js'

const T0 = 1_767_225_600_000
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'
const QUOTE = {
  user: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: '0x0000000000000000000000000000000000000000',
  destinationCurrency: '0x0000000000000000000000000000000000000000',
  amount: '1000000000000000',
  tradeType: 'EXACT_INPUT',
}

// Small limits so the tests count to them quickly.
const POLICY = parseRateLimitPolicy({
  anonymous: { quote: { limit: 3 }, other: { limit: 5 } },
  public: { quote: { limit: 3 }, other: { limit: 5 } },
  standard: { quote: { limit: 4 }, other: { limit: 6 } },
  elevated: { quote: { limit: 10 }, other: { limit: 12 } },
})

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const pglite = await createPgliteClient()
await new RequestStore(pglite).migrate()
t.teardown(() => pglite.close())
const keys = new ApiKeyStore(pglite)

function manualClock(start = T0) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

interface AppOptions {
  readonly limiter: RateLimiter
  readonly trustProxy?: boolean
  readonly keys?: ApiKeyStore
  readonly logger?: Logger
  readonly policy?: RateLimitPolicy | null
}

/** One service instance: the middleware, a `/chains` stub, the admin API. */
async function startApp(t: TapTest, options: AppOptions) {
  const store = options.keys ?? keys
  const seen: Array<string | undefined> = []
  const capture: Koa.Middleware = async (ctx, next) => {
    seen.push(apiKeyIdOf(ctx.state))
    await next()
  }
  const { koa } = await createApiApp({
    loaded,
    logger: options.logger ?? silentLogger,
    trustProxy: options.trustProxy ?? false,
    handlers: {
      getChains: () => ({ status: 200, body: { chains: [] } }),
      ...createAdminHandlers({ keys: store, adminToken: ADMIN_TOKEN }),
    },
    gate: createRateLimitGate({
      limiter: options.limiter,
      keys: store,
      policy: options.policy === undefined ? POLICY : options.policy,
      logger: options.logger ?? silentLogger,
    }),
    middleware: [capture],
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  return { client: createTestClient(t, server.url, loaded.document), seen, url: server.url }
}

const withKey = (secret: string) => ({ headers: { 'x-api-key': secret } })

t.test(
  'anonymous calls: exact count, headers on every answer, 429 with Retry-After, new window',
  async (t) => {
    const clock = manualClock()
    clock.advance(15_000)
    const { client } = await startApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
    for (let i = 1; i <= 5; i++) {
      const res = await client.get('/chains')
      t.equal(res.status, 200, `call ${i} allowed`)
      t.equal(res.headers['ratelimit-policy'], '"other";q=5;w=60')
      t.equal(res.headers.ratelimit, `"other";r=${5 - i};t=45`)
    }
    const limited = await client.get('/chains')
    t.equal(limited.status, 429, 'call 6 is over the limit')
    t.equal(limited.headers['retry-after'], '45')
    t.equal(limited.headers.ratelimit, '"other";r=0;t=45')
    t.equal(limited.headers['ratelimit-policy'], '"other";q=5;w=60')
    t.match(limited.body, { message: 'Too many requests, retry in 45 seconds', errorCode: 'RATE_LIMITED' })
    t.same(errorDataOf(limited.body), { retryAfterSeconds: 45, limit: 5, windowSeconds: 60 })
    t.match(limited.headers['access-control-expose-headers'], /ratelimit/, 'browsers may read the headers')
    clock.advance(45_000)
    const next = await client.get('/chains')
    t.equal(next.status, 200, 'the next window starts from zero')
    t.equal(next.headers.ratelimit, '"other";r=4;t=60')
  },
)

t.test('quote routes share their own, lower limit', async (t) => {
  const clock = manualClock()
  const { client } = await startApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  // No quote handler here: the answer is 501, but the call was counted before routing.
  t.equal((await client.post('/quote/v2', QUOTE)).status, 501)
  t.equal((await client.post('/quote', QUOTE)).status, 501)
  const third = await client.post('/price', QUOTE)
  t.equal(third.status, 501)
  t.equal(third.headers['ratelimit-policy'], '"quote";q=3;w=60')
  t.equal(third.headers.ratelimit, '"quote";r=0;t=60')
  const over = await client.post('/quote/v2', QUOTE)
  t.equal(over.status, 429, '/quote, /quote/v2 and /price count together')
  t.equal((await client.post('/quote/v2', { not: 'a quote' })).status, 429, 'before validation, too')
  t.equal((await client.get('/chains')).status, 200, 'other routes have their own bucket')
})

t.test('documentation and / are not limited', async (t) => {
  const clock = manualClock()
  const { client } = await startApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  for (let i = 0; i < 8; i++) {
    const res = await client.get('/documentation')
    t.equal(res.status, 200)
    t.equal(res.headers.ratelimit, undefined)
  }
  const root = await client.get('/')
  t.equal(root.headers.ratelimit, undefined, '/ has no limit headers')
  t.equal((await client.get('/chains')).headers.ratelimit, '"other";r=4;t=60', 'none of that was counted')
})

t.test('per key and per address buckets; tiers', async (t) => {
  const clock = manualClock()
  const { client, seen } = await startApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  const standard = await keys.create({ label: 'standard' })
  const other = await keys.create({ label: 'other standard' })
  const elevated = await keys.create({ label: 'elevated', tier: 'elevated' })
  const publicKey = await keys.create({ label: 'public', tier: 'public' })
  for (let i = 0; i < 5; i++) await client.get('/chains')
  t.equal((await client.get('/chains')).status, 429, 'the address is exhausted')
  for (let i = 1; i <= 6; i++) {
    const res = await client.get('/chains', withKey(standard.secret))
    t.equal(res.status, 200, `standard key call ${i} counts in its own bucket`)
    t.equal(res.headers['ratelimit-policy'], '"other";q=6;w=60')
  }
  t.equal((await client.get('/chains', withKey(standard.secret))).status, 429, 'standard limit reached')
  t.equal((await client.get('/chains', withKey(other.secret))).status, 200, 'another key is independent')
  let elevatedAllowed = 0
  for (let i = 0; i < 13; i++)
    if ((await client.get('/chains', withKey(elevated.secret))).status === 200) elevatedAllowed++
  t.equal(elevatedAllowed, 12, 'elevated keys get the elevated limit')
  let publicAllowed = 0
  for (let i = 0; i < 7; i++)
    if ((await client.get('/chains', withKey(publicKey.secret))).status === 200) publicAllowed++
  t.equal(publicAllowed, 5, 'public keys get the anonymous limit, per key')
  t.ok(seen.includes(standard.key.id), 'ctx.state carries the authenticated key for later middleware')
  t.ok(seen.includes(undefined), 'and nothing for anonymous calls')
})

t.test('unknown and revoked keys: 401 UNAUTHORIZED, counted against the address', async (t) => {
  const clock = manualClock()
  const { client } = await startApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  const unknown = `pk_${crypto.randomBytes(48).toString('base64url')}`
  const res = await client.get('/chains', withKey(unknown))
  t.equal(res.status, 401)
  t.equal((res.body as { errorCode: string }).errorCode, 'UNAUTHORIZED')
  t.notOk(res.text.includes(unknown.slice(3, 11)), 'the answer does not echo the key')
  t.equal((await client.get('/chains', withKey('garbage'))).status, 401, 'a malformed key too')

  const { key, secret } = await keys.create({ label: 'soon revoked' })
  t.equal((await client.get('/chains', withKey(secret))).status, 200)
  const revoke = await client.request('DELETE', `/admin/keys/${key.id}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
  t.equal(revoke.status, 200)
  const refused = await client.get('/chains', withKey(secret))
  t.equal(refused.status, 401, 'a revoked key is refused at once')
  t.equal((refused.body as { errorCode: string }).errorCode, 'UNAUTHORIZED')
  t.equal((await client.post('/quote/v2', QUOTE, withKey(secret))).status, 401, 'on quote routes too')

  // 3 refusals so far on `other` (unknown, garbage, revoked): two more, then 429 instead of 401.
  await client.get('/chains', withKey(unknown))
  await client.get('/chains', withKey(unknown))
  t.equal((await client.get('/chains', withKey(unknown))).status, 429, 'guessing keys is rate limited')
})

t.test('RATE_LIMITS=off (policy null): nothing counted, keys still checked', async (t) => {
  const { client, seen } = await startApp(t, { limiter: new MemoryRateLimiter(), policy: null })
  for (let i = 0; i < 8; i++) {
    const res = await client.get('/chains')
    t.equal(res.status, 200)
    t.equal(res.headers.ratelimit, undefined, 'no limit headers')
  }
  const { key, secret } = await keys.create({ label: 'unlimited' })
  t.equal((await client.get('/chains', withKey(secret))).status, 200)
  t.equal(seen.at(-1), key.id, 'the key is still tied to the request')
  const unknown = await client.get('/chains', withKey(`pk_${crypto.randomBytes(48).toString('base64url')}`))
  t.equal(unknown.status, 401, 'an unknown key is still refused')
})

t.test('X-Forwarded-For is ignored without proxy trust', async (t) => {
  const clock = manualClock()
  const { client } = await startApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  for (let i = 0; i < 5; i++) {
    t.equal((await client.get('/chains', { headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status, 200)
  }
  const res = await client.get('/chains', { headers: { 'x-forwarded-for': '198.51.100.99' } })
  t.equal(res.status, 429, 'a forged header does not buy a fresh bucket')
})

t.test('X-Forwarded-For is believed with proxy trust (the entry the proxy appended)', async (t) => {
  const clock = manualClock()
  const { client } = await startApp(t, {
    limiter: new MemoryRateLimiter({ now: clock.now }),
    trustProxy: true,
  })
  const from = (xff: string) => client.get('/chains', { headers: { 'x-forwarded-for': xff } })
  for (let i = 0; i < 5; i++) t.equal((await from('203.0.113.1')).status, 200)
  t.equal((await from('203.0.113.1')).status, 429, 'one client address, one bucket')
  t.equal((await from('203.0.113.2')).status, 200, 'another client behind the proxy has its own')
  t.equal(
    (await from('192.0.2.77, 203.0.113.1')).status,
    429,
    'what the client wrote before the proxy entry proves nothing',
  )
  t.equal((await from('2001:db8:1:2::1')).status, 200)
  for (let i = 0; i < 4; i++) await from(`2001:db8:1:2::${i + 2}`)
  t.equal((await from('2001:db8:1:2:ffff::1')).status, 429, 'IPv6 counts per /64')
  t.equal((await client.get('/chains')).status, 200, 'without the header: the socket address')
})

t.test('two instances on one PostgreSQL share the limit', async (t) => {
  const database = await openTestSchema(t, 'ratelimit_http')
  const connect = async () =>
    database.own(await createPgClient({ databaseUrl: TEST_DATABASE_URL, schema: database.schema }))
  const first = await connect()
  await new RequestStore(first).migrate()
  const second = await connect()
  const clock = manualClock()
  const instances = [
    await startApp(t, {
      limiter: new SqlRateLimiter(first, { now: clock.now, fallback: false }),
      keys: new ApiKeyStore(first),
    }),
    await startApp(t, {
      limiter: new SqlRateLimiter(second, { now: clock.now, fallback: false }),
      keys: new ApiKeyStore(second),
    }),
  ]
  const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]]
  const created = await a.client.post(
    '/admin/keys',
    { label: 'shared' },
    { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
  )
  const { secret } = created.body as { secret: string }
  const statuses: number[] = []
  for (let i = 0; i < 8; i++)
    statuses.push((await (i % 2 ? b : a).client.get('/chains', withKey(secret))).status)
  t.same(statuses, [200, 200, 200, 200, 200, 200, 429, 429], 'six in total, whichever instance answers')
  const anonymous = await Promise.all(
    Array.from({ length: 10 }, (_, i) => (i % 2 ? b : a).client.get('/chains')),
  )
  // The admin call above was anonymous too: 4 of the address's 5 are left, across both instances.
  t.equal(anonymous.filter((res) => res.status === 200).length, 4, 'concurrent anonymous calls too')
})

/** The service's way: status polls as direct operations (no Koa), the gate in front of both paths. */
async function startDirectApp(t: TapTest, options: AppOptions) {
  const store = options.keys ?? keys
  const app = await createApiApp({
    loaded,
    logger: silentLogger,
    trustProxy: options.trustProxy ?? false,
    handlers: {
      getChains: () => ({ status: 200, body: { chains: [] } }),
      getIntentStatusV3: ({ query }) => {
        throw new PontisError('REQUEST_NOT_FOUND', `No request ${String(query.requestId)}.`)
      },
    },
    gate: createRateLimitGate({
      limiter: options.limiter,
      keys: store,
      policy: POLICY,
      logger: silentLogger,
    }),
    directOperations: ['getIntentStatusV3'],
  })
  const server = await listen(app, { port: 0 })
  t.teardown(() => server.close())
  return createTestClient(t, server.url, loaded.document)
}

t.test('status polls answered without Koa are authenticated and counted like every route', async (t) => {
  const clock = manualClock()
  clock.advance(15_000)
  const client = await startDirectApp(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  const poll = (headers: Record<string, string> = {}) =>
    client.get(`/intents/status/v3?requestId=0x${'ab'.repeat(32)}`, { headers })
  for (let i = 1; i <= 4; i++) {
    const res = await poll()
    t.equal(res.status, 404, `poll ${i} reaches the handler`)
    t.equal(res.headers.ratelimit, `"other";r=${5 - i};t=45`)
    t.equal(res.headers['ratelimit-policy'], '"other";q=5;w=60')
  }
  t.equal((await client.get('/chains')).status, 200, 'Koa routes count in the same bucket (5th call)')
  const limited = await poll()
  t.equal(limited.status, 429, 'the 6th call of the address is refused')
  t.equal(limited.headers['retry-after'], '45')
  t.equal(limited.headers.ratelimit, '"other";r=0;t=45')

  const unknown = await poll({ 'x-api-key': `pk_${crypto.randomBytes(48).toString('base64url')}` })
  t.equal(unknown.status, 429, 'an unknown key is counted against the address first')
  clock.advance(45_000)
  const refused = await poll({ 'x-api-key': 'garbage' })
  t.equal(refused.status, 401, 'then refused')
  t.equal((refused.body as { errorCode: string }).errorCode, 'UNAUTHORIZED')
  const { secret } = await keys.create({ label: 'direct poller', tier: 'standard' })
  const keyed = await poll({ 'x-api-key': secret })
  t.equal(keyed.status, 404)
  t.equal(keyed.headers.ratelimit, '"other";r=5;t=60', "a key's polls count in the key's bucket and tier")
})

t.test('status polls answered without Koa follow X-Forwarded-For only with proxy trust', async (t) => {
  const poll = (client: Awaited<ReturnType<typeof startDirectApp>>, xff: string) =>
    client.get(`/intents/status/v3?requestId=0x${'cd'.repeat(32)}`, { headers: { 'x-forwarded-for': xff } })
  const untrusting = await startDirectApp(t, { limiter: new MemoryRateLimiter({ now: manualClock().now }) })
  for (let i = 0; i < 5; i++) t.equal((await poll(untrusting, `198.51.100.${i}`)).status, 404)
  t.equal((await poll(untrusting, '198.51.100.99')).status, 429, 'a forged header does not buy a bucket')
  const trusting = await startDirectApp(t, {
    limiter: new MemoryRateLimiter({ now: manualClock().now }),
    trustProxy: true,
  })
  for (let i = 0; i < 5; i++) t.equal((await poll(trusting, '203.0.113.1')).status, 404)
  t.equal((await poll(trusting, '203.0.113.1')).status, 429, 'one client behind the proxy, one bucket')
  t.equal((await poll(trusting, '203.0.113.2')).status, 404, 'another client has its own')
})
