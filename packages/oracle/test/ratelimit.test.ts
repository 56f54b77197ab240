/**
 * The oracle's unauthenticated rate limit over real HTTP on loopback: exact fixed windows on an
 * injected clock, the RateLimit headers and the 429 answer (every answer checked against
 * openapi/oracle.yaml by the test client), exempt paths, API keys, and the trusted-proxy client
 * address. Also the constant-time API key verifier.
 */
import { fileURLToPath } from 'node:url'
import { type Logger, silentLogger } from '@pontis/core'
import { createApiApp, listen, loadOpenApiDocument, MemoryRateLimiter, type RateLimiter } from '@pontis/http'
import { createTestClient, errorDataOf, type TestResponse } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import {
  createApiKeyVerifier,
  createOracleRateLimit,
  DEFAULT_UNAUTHENTICATED_RATE_LIMIT_MAX,
  DEFAULT_UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS,
} from '../src/ratelimit.js'

const loaded = await loadOpenApiDocument(
  fileURLToPath(new URL('../../../openapi/oracle.yaml', import.meta.url)),
)

// A multiple of every window length used below, so window starts are easy to follow.
const T0 = 1_767_225_600_000
const KEYS = new Map([
  ['partner-secret-key-1', 'partner'],
  ['peer-secret-key-2', 'peer-b'],
])

const chainsBody = {
  chains: [],
  hub: {
    chainId: 1,
    name: 'ethereum',
    oracleContract: '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0',
    domain: {
      name: 'PontisOracle',
      version: '1',
      chainId: 1,
      verifyingContract: '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0',
    },
  },
  signer: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
}

function manualClock(start = T0) {
  let now = start
  return { now: () => now, set: (ms: number) => (now = ms) }
}

interface StartOptions {
  readonly max?: number
  readonly windowMs?: number
  readonly limiter?: RateLimiter
  readonly trustProxy?: boolean
  readonly proxyHops?: number
  readonly logger?: Logger
}

async function startOracle(t: Test, options: StartOptions = {}) {
  const { koa } = await createApiApp({
    loaded,
    handlers: {
      getLives: () => ({ status: 200, body: { status: 'ok' } }),
      getOracleChains: () => ({ status: 200, body: chainsBody }),
    },
    logger: silentLogger,
    trustProxy: options.trustProxy ?? false,
    gate: createOracleRateLimit({
      max: options.max ?? DEFAULT_UNAUTHENTICATED_RATE_LIMIT_MAX,
      windowMs: options.windowMs ?? DEFAULT_UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS,
      apiKeys: KEYS,
      logger: options.logger ?? silentLogger,
      limiter: options.limiter,
      proxyHops: options.proxyHops,
    }),
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  return createTestClient(t, server.url, loaded.document)
}

type RateLimitedAnswer = {
  message: string
  errorCode: string
  errorData: string
  requestId: string
}

/** Asserts a counted, allowed answer with `remaining` and `reset` in its RateLimit header. */
function assertAllowed(t: Test, res: TestResponse, policy: string, remaining: number, reset: number) {
  t.equal(res.status, 200, `allowed (r=${remaining})`)
  t.equal(res.headers['ratelimit-policy'], `"unauthenticated";${policy}`)
  t.equal(res.headers.ratelimit, `"unauthenticated";r=${remaining};t=${reset}`)
  t.equal(res.headers['retry-after'], undefined, 'no Retry-After while allowed')
}

/** Asserts the 429 answer: headers named by the document and the RATE_LIMITED body. */
function assertLimited(
  t: Test,
  res: TestResponse,
  policy: string,
  reset: number,
  max: number,
  windowMs: number,
) {
  t.equal(res.status, 429, 'over the limit')
  t.equal(res.headers['retry-after'], String(reset))
  t.equal(res.headers['ratelimit-policy'], `"unauthenticated";${policy}`)
  t.equal(res.headers.ratelimit, `"unauthenticated";r=0;t=${reset}`)
  t.match(res.headers['access-control-expose-headers'], /retry-after, ratelimit, ratelimit-policy/)
  const body = res.body as RateLimitedAnswer
  t.equal(body.errorCode, 'RATE_LIMITED')
  t.same(errorDataOf(body), { retryAfterSeconds: reset, limit: max, windowMs })
  t.match(body.message, /retry in \d+ seconds? or use an API key/)
  t.equal(body.requestId, res.headers['x-request-id'])
}

t.test('the defaults are 2 requests per 1000 ms', async (t) => {
  t.equal(DEFAULT_UNAUTHENTICATED_RATE_LIMIT_MAX, 2)
  t.equal(DEFAULT_UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS, 1000)
})

t.test('defaults: 2 per window pass, the 3rd is refused until the next window', async (t) => {
  const clock = manualClock(T0 + 250)
  const client = await startOracle(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 1)
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 0, 1)
  assertLimited(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 2, 1000)
  clock.set(T0 + 999)
  assertLimited(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 2, 1000)
  const attest = await client.post('/attestations/depository-deposits/v1', {
    chainId: 1,
    transactionId: `0x${'12'.repeat(32)}`,
    mode: 'fast',
  })
  assertLimited(t, attest, 'q=2;w=1', 1, 2, 1000)
  clock.set(T0 + 1000)
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 1)
})

t.test('the last millisecond of a window still counts in it', async (t) => {
  const clock = manualClock(T0)
  const client = await startOracle(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 1)
  clock.set(T0 + 999)
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 0, 1)
  assertLimited(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 2, 1000)
  clock.set(T0 + 1000)
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 1)
})

t.test('a custom limit: 5 per 250 ms', async (t) => {
  const clock = manualClock(T0 + 100)
  const client = await startOracle(t, {
    max: 5,
    windowMs: 250,
    limiter: new MemoryRateLimiter({ now: clock.now }),
  })
  for (let remaining = 4; remaining >= 0; remaining--) {
    assertAllowed(t, await client.get('/chains/v1'), 'q=5;w=1', remaining, 1)
  }
  assertLimited(t, await client.get('/chains/v1'), 'q=5;w=1', 1, 5, 250)
  clock.set(T0 + 249)
  t.equal((await client.get('/chains/v1')).status, 429, 'still the same 250 ms window')
  clock.set(T0 + 250)
  assertAllowed(t, await client.get('/chains/v1'), 'q=5;w=1', 4, 1)
})

t.test('a long window: w and t are whole seconds rounded up', async (t) => {
  const clock = manualClock(T0 + 2_500)
  const client = await startOracle(t, {
    max: 1,
    windowMs: 10_000,
    limiter: new MemoryRateLimiter({ now: clock.now }),
  })
  assertAllowed(t, await client.get('/chains/v1'), 'q=1;w=10', 0, 8)
  assertLimited(t, await client.get('/chains/v1'), 'q=1;w=10', 8, 1, 10_000)
})

t.test('without an injected limiter it counts in this process', async (t) => {
  // A day-long window so the real clock cannot start a new one during the test.
  const client = await startOracle(t, { max: 2, windowMs: 86_400_000 })
  t.equal((await client.get('/chains/v1')).status, 200)
  t.equal((await client.get('/chains/v1')).status, 200)
  t.equal((await client.get('/chains/v1')).status, 429)
})

t.test('/, /documentation and /lives with every sub-path are never counted', async (t) => {
  const clock = manualClock()
  const client = await startOracle(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  const exempt = [
    '/lives/v1',
    '/LIVES/V1/',
    '/lives',
    '/lives/other',
    '/documentation',
    '/Documentation/',
    '/documentation/openapi.json',
    '/documentation/assets/init.js',
    '/',
  ]
  for (let round = 0; round < 3; round++) {
    for (const path of exempt) {
      const res = await client.get(path)
      t.not(res.status, 429, `${path} is not limited`)
      t.equal(res.headers.ratelimit, undefined, `${path} has no RateLimit header`)
    }
  }
  t.equal((await client.get('/lives/v1')).status, 200)
  t.equal((await client.get('/documentation')).status, 200)
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 1, 1)
  t.equal(
    (await client.get('/livesx')).headers.ratelimit,
    '"unauthenticated";r=0;t=1',
    'a lookalike is counted',
  )
})

t.test('a valid API key bypasses the limit; an unknown key is limited like none', async (t) => {
  const clock = manualClock()
  const lines: string[] = []
  const capture = (level: string) => (message: string, fields?: object) =>
    lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`)
  const logger: Logger = {
    debug: capture('debug'),
    info: capture('info'),
    warn: capture('warn'),
    error: capture('error'),
  }
  const client = await startOracle(t, { limiter: new MemoryRateLimiter({ now: clock.now }), logger })
  for (const [key] of KEYS) {
    for (let i = 0; i < 6; i++) {
      const res = await client.get('/chains/v1', { headers: { 'x-api-key': key } })
      t.equal(res.status, 200, 'a keyed call is served')
      t.equal(res.headers.ratelimit, undefined, 'and not counted')
    }
  }
  const unknown = { headers: { 'x-api-key': 'partner-secret-key-' } }
  assertAllowed(t, await client.get('/chains/v1', unknown), 'q=2;w=1', 1, 1)
  assertAllowed(t, await client.get('/chains/v1'), 'q=2;w=1', 0, 1)
  const refused = await client.get('/chains/v1', unknown)
  t.not(refused.status, 401, 'an unknown key is not refused as unauthorised')
  assertLimited(t, refused, 'q=2;w=1', 1, 2, 1000)
  t.equal(
    (await client.get('/chains/v1', { headers: { 'x-api-key': 'partner-secret-key-1' } })).status,
    200,
    'a valid key still passes while the address is limited',
  )
  t.ok(
    lines.some((line) => line.includes('rate limited')),
    'the refusal is logged',
  )
  for (const line of lines) t.notMatch(line, /secret-key/, 'no key value in the logs')
})

t.test('with proxy trust the rightmost X-Forwarded-For entry is the client', async (t) => {
  const clock = manualClock()
  const client = await startOracle(t, {
    limiter: new MemoryRateLimiter({ now: clock.now }),
    trustProxy: true,
  })
  const from = (forwardedFor: string) => ({ headers: { 'x-forwarded-for': forwardedFor } })
  assertAllowed(t, await client.get('/chains/v1', from('192.0.2.1, 198.51.100.1')), 'q=2;w=1', 1, 1)
  assertAllowed(t, await client.get('/chains/v1', from('192.0.2.2, 198.51.100.1')), 'q=2;w=1', 0, 1)
  const spoofed = await client.get('/chains/v1', from('192.0.2.3, 198.51.100.1'))
  assertLimited(t, spoofed, 'q=2;w=1', 1, 2, 1000)
  assertAllowed(t, await client.get('/chains/v1', from('192.0.2.1, 198.51.100.2')), 'q=2;w=1', 1, 1)
  t.equal(
    (await client.get('/chains/v1')).headers.ratelimit,
    '"unauthenticated";r=1;t=1',
    'no header: the peer',
  )
  // IPv6 clients share one window per /64.
  assertAllowed(t, await client.get('/chains/v1', from('2001:db8:1:2::1')), 'q=2;w=1', 1, 1)
  assertAllowed(t, await client.get('/chains/v1', from('2001:db8:1:2::ffff')), 'q=2;w=1', 0, 1)
  t.equal((await client.get('/chains/v1', from('2001:db8:1:2:3:4:5:6'))).status, 429, 'same /64')
  assertAllowed(t, await client.get('/chains/v1', from('2001:db8:1:3::1')), 'q=2;w=1', 1, 1)
})

t.test('with proxy trust and two hops the second entry from the right is the client', async (t) => {
  const clock = manualClock()
  const client = await startOracle(t, {
    limiter: new MemoryRateLimiter({ now: clock.now }),
    trustProxy: true,
    proxyHops: 2,
  })
  const from = (forwardedFor: string) => ({ headers: { 'x-forwarded-for': forwardedFor } })
  assertAllowed(
    t,
    await client.get('/chains/v1', from('192.0.2.9, 198.51.100.1, 203.0.113.1')),
    'q=2;w=1',
    1,
    1,
  )
  assertAllowed(t, await client.get('/chains/v1', from('198.51.100.1, 203.0.113.2')), 'q=2;w=1', 0, 1)
  assertAllowed(t, await client.get('/chains/v1', from('198.51.100.2, 203.0.113.1')), 'q=2;w=1', 1, 1)
})

t.test('without proxy trust X-Forwarded-For is ignored', async (t) => {
  const clock = manualClock()
  const client = await startOracle(t, { limiter: new MemoryRateLimiter({ now: clock.now }) })
  const from = (forwardedFor: string) => ({ headers: { 'x-forwarded-for': forwardedFor } })
  assertAllowed(t, await client.get('/chains/v1', from('198.51.100.1')), 'q=2;w=1', 1, 1)
  assertAllowed(t, await client.get('/chains/v1', from('198.51.100.2')), 'q=2;w=1', 0, 1)
  assertLimited(t, await client.get('/chains/v1', from('198.51.100.3')), 'q=2;w=1', 1, 2, 1000)
})

t.test('a limit that is not a positive integer fails at construction', async (t) => {
  for (const [max, windowMs] of [
    [0, 1000],
    [2, 0],
    [1.5, 1000],
    [2, Number.NaN],
  ] as const) {
    t.throws(
      () => createOracleRateLimit({ max, windowMs, apiKeys: KEYS, logger: silentLogger }),
      RangeError,
      `max ${max}, windowMs ${windowMs}`,
    )
  }
})

t.test('API key verifier: label of a configured key, undefined otherwise', async (t) => {
  const verify = createApiKeyVerifier(KEYS)
  t.equal(verify('partner-secret-key-1'), 'partner')
  t.equal(verify('peer-secret-key-2'), 'peer-b')
  t.equal(verify(undefined), undefined, 'no header')
  t.equal(verify(''), undefined, 'an empty header')
  t.equal(verify('partner-secret-key-'), undefined, 'a prefix of a key')
  t.equal(verify('partner-secret-key-12'), undefined, 'a key with more after it')
  t.equal(verify('PARTNER-SECRET-KEY-1'), undefined, 'keys are case-sensitive')
  t.equal(verify(' partner-secret-key-1'), undefined, 'no trimming')
  t.equal(createApiKeyVerifier(new Map())('partner-secret-key-1'), undefined, 'no keys configured')
  t.equal(
    createApiKeyVerifier(new Map([['', 'empty']]))(''),
    undefined,
    'an empty configured key never matches',
  )
  const sameLabel = createApiKeyVerifier(
    new Map([
      ['a-key', 'shared'],
      ['b-key', 'shared'],
    ]),
  )
  t.equal(sameLabel('b-key'), 'shared', 'a key after the first entry matches')
})
