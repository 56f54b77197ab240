/**
 * The SQL rate limiter: exact fixed-window counting on PGlite and PostgreSQL (where two limiter
 * instances on two connection pools share one limit), cleanup, fallback, the policy and its
 * `RATE_LIMITS` overrides, and route classes. The in-memory limiter and the client-address helpers
 * are tested with their code in packages/http/test/ratelimit.test.ts.
 */
import crypto from 'node:crypto'
import t from 'tap'
import {
  DEFAULT_RATE_LIMIT_POLICY,
  parseRateLimitPolicy,
  type RateLimiter,
  rateLimitPolicyFromEnv,
  routeClassOf,
  SqlRateLimiter,
} from '../src/ratelimit/index.js'
import { createPgClient, createPgliteClient, RequestStore, type SqlClient } from '../src/store/index.js'
import { openTestSchema, TEST_DATABASE_URL } from './fixtures/postgres.js'

// A window boundary for 60 s windows, so the arithmetic below is easy to follow.
const T0 = 1_767_225_600_000

function manualClock(start = T0) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) }
}

/** Counts `n` hits and returns how many were allowed. */
async function allowedOf(limiter: RateLimiter, bucket: string, limit: number, windowMs: number, n: number) {
  let allowed = 0
  for (let i = 0; i < n; i++) if ((await limiter.hit(bucket, limit, windowMs)).allowed) allowed++
  return allowed
}

type Clock = ReturnType<typeof manualClock>
type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

/** What every limiter must do, given a fresh one on `clock`. */
function windowSuite(t: TapTest, make: (clock: Clock) => Promise<RateLimiter>) {
  t.test('limit N: N allowed, N+1 refused, counts and reset exact', async (t) => {
    const clock = manualClock()
    const limiter = await make(clock)
    const bucket = `b-${crypto.randomBytes(4).toString('hex')}`
    clock.advance(15_000)
    for (let i = 1; i <= 5; i++) {
      t.same(
        await limiter.hit(bucket, 5, 60_000),
        { allowed: true, remaining: 5 - i, resetMs: 45_000 },
        `hit ${i}`,
      )
    }
    t.same(await limiter.hit(bucket, 5, 60_000), { allowed: false, remaining: 0, resetMs: 45_000 }, 'hit 6')
    clock.advance(44_999)
    t.same(
      await limiter.hit(bucket, 5, 60_000),
      { allowed: false, remaining: 0, resetMs: 1 },
      'last ms of the window',
    )
    clock.advance(1)
    t.same(
      await limiter.hit(bucket, 5, 60_000),
      { allowed: true, remaining: 4, resetMs: 60_000 },
      'a new window starts from zero',
    )
  })

  t.test('buckets and windows are independent', async (t) => {
    const clock = manualClock()
    const limiter = await make(clock)
    const id = crypto.randomBytes(4).toString('hex')
    t.equal(await allowedOf(limiter, `a-${id}`, 3, 1000, 5), 3)
    t.equal(await allowedOf(limiter, `b-${id}`, 3, 1000, 5), 3, 'another bucket has its own count')
    t.equal(await allowedOf(limiter, `c-${id}`, 10, 60_000, 12), 10)
    clock.advance(1000)
    t.equal(await allowedOf(limiter, `a-${id}`, 3, 1000, 5), 3, 'the 1 s window rolled over')
    t.equal(await allowedOf(limiter, `c-${id}`, 10, 60_000, 1), 0, 'the 60 s window did not')
  })

  t.test('bad arguments are refused', async (t) => {
    const limiter = await make(manualClock())
    await t.rejects(limiter.hit('x', 0, 1000), RangeError)
    await t.rejects(limiter.hit('x', 1, 0), RangeError)
    await t.rejects(limiter.hit('x', 1.5, 1000), RangeError)
  })
}

interface Database {
  connect(): Promise<SqlClient>
}

const backends = {
  'pglite-memory': async (t: TapTest): Promise<Database> => {
    const client = await createPgliteClient()
    t.teardown(() => client.close())
    await new RequestStore(client).migrate()
    return { connect: async () => client }
  },
  postgres: async (t: TapTest): Promise<Database> => {
    const database = await openTestSchema(t, 'ratelimit')
    const connect = async () =>
      database.own(await createPgClient({ databaseUrl: TEST_DATABASE_URL, schema: database.schema }))
    await new RequestStore(await connect()).migrate()
    return { connect }
  },
}

for (const [name, create] of Object.entries(backends)) {
  t.test(`sql limiter on ${name}`, async (t) => {
    let db: Database
    try {
      db = await create(t)
    } catch (error) {
      t.fail((error as Error).message)
      return
    }
    const client = await db.connect()
    windowSuite(t, async (clock) => new SqlRateLimiter(client, { now: clock.now, fallback: false }))

    t.test('two instances on separate connections share one limit', async (t) => {
      const clock = manualClock()
      const [a, b] = [
        new SqlRateLimiter(await db.connect(), { now: clock.now, fallback: false }),
        new SqlRateLimiter(await db.connect(), { now: clock.now, fallback: false }),
      ]
      const bucket = `shared-${crypto.randomBytes(4).toString('hex')}`
      // 60 concurrent hits against a limit of 25, alternating instances: exactly 25 get through.
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).hit(bucket, 25, 60_000)),
      )
      t.equal(results.filter((result) => result.allowed).length, 25, 'the limit holds across instances')
      t.same(
        results
          .map((result) => result.remaining)
          .filter((remaining) => remaining > 0)
          .sort((x, y) => y - x),
        Array.from({ length: 24 }, (_, i) => 24 - i),
        'every count was seen exactly once (no lost increments)',
      )
      const { rows } = await client.query<{ count: number }>(
        'SELECT count FROM rate_limit_windows WHERE bucket = $1',
        [bucket],
      )
      t.same(rows, [{ count: 60 }])
    })

    t.test('cleanup deletes windows that ended, keeps current ones', async (t) => {
      const clock = manualClock()
      const limiter = new SqlRateLimiter(client, { now: clock.now, fallback: false, cleanupIntervalMs: 0 })
      const id = crypto.randomBytes(4).toString('hex')
      await limiter.hit(`old-${id}`, 5, 1000)
      await limiter.hit(`long-${id}`, 5, 3_600_000)
      clock.advance(1000)
      await limiter.hit(`new-${id}`, 5, 1000)
      t.ok((await limiter.cleanup()) >= 1, 'the ended window is deleted')
      const { rows } = await client.query<{ bucket: string }>(
        'SELECT bucket FROM rate_limit_windows WHERE bucket LIKE $1 ORDER BY bucket',
        [`%-${id}`],
      )
      t.same(
        rows.map((row) => row.bucket),
        [`long-${id}`, `new-${id}`],
      )
    })

    t.test('cleanup runs by itself every interval', async (t) => {
      const clock = manualClock()
      const limiter = new SqlRateLimiter(client, {
        now: clock.now,
        fallback: false,
        cleanupIntervalMs: 10_000,
      })
      const bucket = `auto-${crypto.randomBytes(4).toString('hex')}`
      await limiter.hit(bucket, 5, 1000)
      clock.advance(10_000)
      await limiter.hit(`${bucket}-later`, 5, 1000)
      await limiter.idle()
      const { rows } = await client.query('SELECT 1 FROM rate_limit_windows WHERE bucket = $1', [bucket])
      t.same(rows, [], 'the ended window is gone')
    })
  })
}

t.test('sql limiter falls back to counting in memory when the database fails', async (t) => {
  const client = await createPgliteClient()
  await new RequestStore(client).migrate()
  const lines: string[] = []
  const logger = {
    debug: () => {},
    info: () => {},
    warn: (message: string) => lines.push(message),
    error: () => {},
  }
  const clock = manualClock()
  const limiter = new SqlRateLimiter(client, { now: clock.now, logger })
  await client.close()
  t.equal(await allowedOf(limiter, 'down', 3, 60_000, 5), 3, 'limits still hold')
  t.equal(lines.length, 1, 'one warning, not one per request')
  const strict = new SqlRateLimiter(client, { now: clock.now, fallback: false })
  await t.rejects(strict.hit('down', 3, 60_000), 'without a fallback the failure surfaces')
})

t.test('policy: defaults and RATE_LIMITS overrides', async (t) => {
  t.same(DEFAULT_RATE_LIMIT_POLICY.standard, {
    quote: { limit: 50, windowSeconds: 60 },
    other: { limit: 200, windowSeconds: 60 },
  })
  t.same(DEFAULT_RATE_LIMIT_POLICY.elevated.quote, { limit: 600, windowSeconds: 60 }, '10 per second')
  t.ok(
    DEFAULT_RATE_LIMIT_POLICY.anonymous.quote.limit < DEFAULT_RATE_LIMIT_POLICY.standard.quote.limit,
    'anonymous calls get the lower public limit',
  )
  t.same(rateLimitPolicyFromEnv({}), DEFAULT_RATE_LIMIT_POLICY)
  t.equal(rateLimitPolicyFromEnv({ RATE_LIMITS: 'off' }), null, 'RATE_LIMITS=off: no limits')
  t.same(rateLimitPolicyFromEnv({ RATE_LIMITS: '{"standard":{"quote":{"limit":7}}}' })?.standard.quote, {
    limit: 7,
    windowSeconds: 60,
  })
  const custom = parseRateLimitPolicy(
    '{"anonymous":{"quote":{"limit":5}},"elevated":{"other":{"windowSeconds":1}}}',
  )
  t.same(custom.anonymous.quote, { limit: 5, windowSeconds: 60 })
  t.same(custom.anonymous.other, DEFAULT_RATE_LIMIT_POLICY.anonymous.other)
  t.same(custom.elevated.other, { limit: 1200, windowSeconds: 1 })
  t.same(custom.standard, DEFAULT_RATE_LIMIT_POLICY.standard)
  for (const [bad, message] of [
    ['{', /not valid JSON/],
    ['[]', /JSON object/],
    ['{"anon":{}}', /RATE_LIMITS.anon is unknown/],
    ['{"standard":{"quotes":{}}}', /RATE_LIMITS.standard.quotes is unknown/],
    ['{"standard":{"quote":{"limit":0}}}', /limit must be an integer/],
    ['{"standard":{"quote":{"limit":"50"}}}', /limit must be an integer/],
    ['{"standard":{"quote":{"windowSeconds":0.5}}}', /windowSeconds must be an integer/],
    ['{"standard":{"quote":{"max":5}}}', /max is unknown/],
  ] as const) {
    t.throws(() => parseRateLimitPolicy(bad), message, bad)
  }
})

t.test('route classes', async (t) => {
  for (const path of ['/quote', '/quote/v2', '/price', '/QUOTE/V2/', '/price/']) {
    t.equal(routeClassOf('POST', path), 'quote', `POST ${path}`)
  }
  t.equal(routeClassOf('GET', '/quote/v2'), 'other')
  t.equal(routeClassOf('POST', '/transactions/index'), 'other')
  t.equal(routeClassOf('GET', '/chains'), 'other')
})
