/**
 * The shared rate-limit pieces: exact fixed-window counting in memory, bucket eviction, the
 * client address (socket peer or trusted X-Forwarded-For entry, over real HTTP), IPv6 /64
 * buckets, path normalisation and the RateLimit headers.
 */
import Koa from 'koa'
import t, { type Test } from 'tap'
import {
  addressBucket,
  clientAddressFrom,
  fixedWindowOf,
  listen,
  MemoryRateLimiter,
  normaliseRoutePath,
  type RateLimiter,
  rateLimitHeaders,
} from '../src/index.js'

// A window boundary for 60 s windows, so the arithmetic below is easy to follow.
const T0 = 1_767_225_600_000

function manualClock(start = T0) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

/** Counts `n` hits and returns how many were allowed. */
async function allowedOf(limiter: RateLimiter, bucket: string, limit: number, windowMs: number, n: number) {
  let allowed = 0
  for (let i = 0; i < n; i++) if ((await limiter.hit(bucket, limit, windowMs)).allowed) allowed++
  return allowed
}

t.test('memory limiter: limit N allows N, refuses N+1, counts and reset exact', async (t) => {
  const clock = manualClock()
  const limiter = new MemoryRateLimiter({ now: clock.now })
  clock.advance(15_000)
  for (let i = 1; i <= 5; i++) {
    t.same(
      await limiter.hit('b', 5, 60_000),
      { allowed: true, remaining: 5 - i, resetMs: 45_000 },
      `hit ${i}`,
    )
  }
  t.same(await limiter.hit('b', 5, 60_000), { allowed: false, remaining: 0, resetMs: 45_000 }, 'hit 6')
  clock.advance(44_999)
  t.same(
    await limiter.hit('b', 5, 60_000),
    { allowed: false, remaining: 0, resetMs: 1 },
    'last ms of the window',
  )
  clock.advance(1)
  t.same(
    await limiter.hit('b', 5, 60_000),
    { allowed: true, remaining: 4, resetMs: 60_000 },
    'a new window starts from zero',
  )
})

t.test('memory limiter: buckets and windows are independent', async (t) => {
  const clock = manualClock()
  const limiter = new MemoryRateLimiter({ now: clock.now })
  t.equal(await allowedOf(limiter, 'a', 3, 1000, 5), 3)
  t.equal(await allowedOf(limiter, 'b', 3, 1000, 5), 3, 'another bucket has its own count')
  t.equal(await allowedOf(limiter, 'c', 10, 60_000, 12), 10)
  clock.advance(1000)
  t.equal(await allowedOf(limiter, 'a', 3, 1000, 5), 3, 'the 1 s window rolled over')
  t.equal(await allowedOf(limiter, 'c', 10, 60_000, 1), 0, 'the 60 s window did not')
})

t.test('memory limiter: bad arguments are refused', async (t) => {
  const limiter = new MemoryRateLimiter()
  await t.rejects(limiter.hit('x', 0, 1000), RangeError)
  await t.rejects(limiter.hit('x', 1, 0), RangeError)
  await t.rejects(limiter.hit('x', 1.5, 1000), RangeError)
})

t.test('memory limiter forgets the least recently used bucket beyond maxBuckets', async (t) => {
  const limiter = new MemoryRateLimiter({ now: manualClock().now, maxBuckets: 2 })
  await limiter.hit('a', 1, 60_000)
  await limiter.hit('b', 1, 60_000)
  t.equal((await limiter.hit('a', 1, 60_000)).allowed, false, 'a is counted and now the most recent')
  await limiter.hit('c', 1, 60_000)
  t.equal((await limiter.hit('a', 1, 60_000)).allowed, false, 'a was kept')
  t.equal((await limiter.hit('b', 1, 60_000)).allowed, true, 'b, the least recent, was forgotten')
})

t.test('fixed windows start at multiples of the window length', async (t) => {
  t.same(fixedWindowOf(T0 + 1_234, 1000), { start: T0 + 1_000, end: T0 + 2_000 })
  t.same(fixedWindowOf(T0 + 999, 1000), { start: T0, end: T0 + 1_000 })
})

t.test('address buckets: IPv4 as is, IPv6 per /64', async (t) => {
  t.equal(addressBucket('203.0.113.7'), '203.0.113.7')
  t.equal(addressBucket('::ffff:203.0.113.7'), '203.0.113.7', 'IPv4-mapped is the IPv4 address')
  t.equal(addressBucket('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64', 'IPv6 per /64')
  t.equal(addressBucket('2001:db8:1:2::9'), '2001:db8:1:2::/64', 'one /64, one bucket')
  t.not(addressBucket('2001:db8:1:3::9'), addressBucket('2001:db8:1:2::9'), 'the next /64 is another')
  t.equal(addressBucket('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(addressBucket('::1'), '0:0:0:0::/64')
  t.equal(addressBucket('fe80::1%eth0'), 'fe80:0:0:0::/64')
  t.equal(addressBucket('64:ff9b::192.0.2.33'), '64:ff9b:0:0::/64')
})

t.test('route paths: case-insensitive, trailing slashes ignored', async (t) => {
  t.equal(normaliseRoutePath('/Lives/V1/'), '/lives/v1')
  t.equal(normaliseRoutePath('/documentation//'), '/documentation')
  t.equal(normaliseRoutePath('///'), '/')
  t.equal(normaliseRoutePath(''), '/')
})

/** A Koa app on loopback answering the client address and the RateLimit headers it computed. */
async function addressServer(t: Test, proxy: boolean, proxyHops?: number) {
  const koa = new Koa()
  koa.use((ctx) => {
    const { headers, resetSeconds } = rateLimitHeaders(
      { name: 'p', limit: 5, windowSeconds: 60 },
      { allowed: true, remaining: 4, resetMs: 1_001 },
    )
    ctx.set(headers)
    const address = clientAddressFrom(ctx.req.socket.remoteAddress ?? '', ctx.req.headers, proxy, proxyHops)
    ctx.body = { address, resetSeconds }
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  return async (forwardedFor?: string) => {
    const headers: Record<string, string> =
      forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }
    const response = await fetch(server.url, { headers })
    const body = (await response.json()) as { address: string; resetSeconds: number }
    return { ...body, headers: response.headers }
  }
}

t.test('client address without proxy trust is the socket peer', async (t) => {
  const addressOf = await addressServer(t, false)
  t.equal((await addressOf()).address, '127.0.0.1')
  t.equal((await addressOf('198.51.100.1')).address, '127.0.0.1', 'X-Forwarded-For is ignored')
})

t.test('client address with proxy trust is the entry proxyHops from the right', async (t) => {
  const oneHop = await addressServer(t, true)
  t.equal((await oneHop()).address, '127.0.0.1', 'no header: the peer')
  t.equal((await oneHop('203.0.113.9, 198.51.100.1')).address, '198.51.100.1', 'the rightmost entry')
  t.equal((await oneHop('[2001:db8::7]:443')).address, '2001:db8::7', 'brackets and port stripped')
  t.equal((await oneHop('198.51.100.1:8080')).address, '198.51.100.1', 'IPv4 port stripped')
  t.equal((await oneHop('not-an-address')).address, '127.0.0.1', 'garbage falls back to the peer')
  const twoHops = await addressServer(t, true, 2)
  t.equal((await twoHops('203.0.113.9, 198.51.100.1, 192.0.2.5')).address, '198.51.100.1')
  t.equal((await twoHops('192.0.2.5')).address, '192.0.2.5', 'fewer entries than hops: the leftmost')
})

t.test('RateLimit headers follow draft-ietf-httpapi-ratelimit-headers-10', async (t) => {
  const { headers, resetSeconds } = await (await addressServer(t, false))()
  t.equal(headers.get('ratelimit-policy'), '"p";q=5;w=60')
  t.equal(headers.get('ratelimit'), '"p";r=4;t=2', 'reset rounded up to whole seconds')
  t.equal(resetSeconds, 2, 'the reset seconds are returned for Retry-After')
})
