import { PontisError } from '@pontis/core/plugin'
import t from 'tap'
import { HttpRequestError, TimeoutError } from 'viem'
import { isTransportFailure, ReadCache } from '../src/index.js'
import { rpc, toTransientError } from '../src/rpc.js'

const chain = { id: 31337, displayName: 'Pontis Local A' }

t.test('the read cache shares one load between concurrent readers and keeps it for its TTL', async (t) => {
  // A TTL no pause of a busy machine can outlast, for what must be read within it.
  const cache = new ReadCache({ ttlMs: 600_000 })
  let loads = 0
  const load = async () => {
    loads++
    await new Promise((resolve) => setTimeout(resolve, 10))
    return 42n
  }
  const [a, b] = await Promise.all([cache.read('k', load), cache.read('k', load)])
  t.equal(a, 42n)
  t.equal(b, 42n)
  t.equal(loads, 1, 'concurrent reads share the round trip')
  await cache.read('k', load)
  t.equal(loads, 1, 'a read within the TTL is free')
  await cache.read('other', load)
  t.equal(loads, 2, 'another key loads')

  const short = new ReadCache({ ttlMs: 50 })
  let shortLoads = 0
  const loadShort = async () => ++shortLoads
  await short.read('k', loadShort)
  // Waiting out a TTL: time that must pass, which a slow machine can only lengthen.
  await new Promise((resolve) => setTimeout(resolve, 60))
  t.equal(await short.read('k', loadShort), 2, 'after the TTL the value is read again')
})

t.test('failures are not cached', async (t) => {
  const cache = new ReadCache({ ttlMs: 10_000 })
  let calls = 0
  const flaky = async () => {
    calls++
    if (calls === 1) throw new Error('boom')
    return 'ok'
  }
  await t.rejects(cache.read('k', flaky), /boom/)
  t.equal(await cache.read('k', flaky), 'ok', 'the next read retries')
})

t.test('transport failures become transient 503 codes naming the chain; reverts pass through', async (t) => {
  const http = new HttpRequestError({ url: 'http://127.0.0.1:9', details: 'fetch failed' })
  t.ok(isTransportFailure(http))
  t.ok(isTransportFailure(new Error('wrapped', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') })))
  t.notOk(isTransportFailure(new Error('execution reverted: insufficient allowance')))
  const mapped = toTransientError(http, chain)
  t.equal(mapped.code, 'RPC_HTTP_ERROR')
  t.equal(mapped.status, 503)
  t.ok(mapped.retryable)
  t.match(mapped.message, 'Pontis Local A (31337)')
  const timeout = toTransientError(new TimeoutError({ body: {}, url: 'http://127.0.0.1:9' }), chain)
  t.equal(timeout.code, 'REQUEST_TIMED_OUT')
  await t.rejects(
    rpc(chain, () => Promise.reject(http)),
    { code: 'RPC_HTTP_ERROR' },
  )
  const revert = await rpc(chain, () => Promise.reject(new Error('execution reverted'))).catch(
    (error: unknown) => error,
  )
  t.notOk(revert instanceof PontisError, 'a revert is not an RPC failure')
  t.match(revert, { message: 'execution reverted' })
})

t.test('a failing primary RPC falls back to the next endpoint', async (t) => {
  const { createServer } = await import('node:http')
  const { createRpcClient } = await import('../src/rpc.js')
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 0, result: '0x7a69' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const good = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const client = createRpcClient({ url: 'http://127.0.0.1:9', fallbackUrls: [good], timeoutMs: 2000 })
  t.equal(await client.getChainId(), 31337)
})

t.test('a TTL of 0 means no caching (not "never expires")', async (t) => {
  const cache = new ReadCache({ ttlMs: 0 })
  let loads = 0
  const load = async () => ++loads
  t.equal(await cache.read('k', load), 1)
  t.equal(await cache.read('k', load), 2, 'read again')
  const timed = new ReadCache({ ttlMs: 10_000 })
  await timed.read('k', load)
  t.equal(await timed.read('k', load, 0), 4, 'a per-read TTL of 0 skips the cache too')
})
