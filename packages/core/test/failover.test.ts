/**
 * timedFetch and fetchWithFailover over real HTTP on loopback: which source answers, what is sent,
 * what fails, and that a call ends on time (gc() included) and closes its socket.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t, { type Test } from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  type FailoverTarget,
  FetchTimeoutError,
  fetchWithFailover,
  isPontisError,
  timedFetch,
  unexpectedAnswer,
} from '../src/index.js'

// As `node --expose-gc`: a collection while a call is pending must not cancel its deadline.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const target: FailoverTarget = {
  apiName: 'Test API',
  label: { id: 7, displayName: 'Testnet' },
  // Sources that answer must never be cut off, even when a busy machine pauses this process (it
  // runs both ends); only the case about a source that never answers waits a timeout out.
  timeoutMs: 30_000,
  headers: { 'x-key': 'k' },
}

/** A server answering `status` (or never, when `status` is 'never'), remembering what it was sent; its base URL. */
async function source(t: Test, status: number | 'never') {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      if (status !== 'never') res.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

t.test('the first source that answers other than 429 or 5xx wins, whatever its status', async (t) => {
  const busy = await source(t, 429)
  const broken = await source(t, 503)
  const missing = await source(t, 404)
  const never = await source(t, 200)
  const response = await fetchWithFailover(
    [busy.url, broken.url, missing.url, never.url],
    '/x?y=1',
    {},
    target,
  )
  t.equal(response.status, 404)
  t.equal(response.text, 'status 404')
  t.same(
    [busy, broken, missing, never].map((s) => s.seen.length),
    [1, 1, 1, 0],
    'tried in order, stopping at the answer',
  )
  t.equal(missing.seen[0]!.url, '/x?y=1')
  t.equal(missing.seen[0]!.headers['x-key'], 'k', 'the target headers are sent')
  t.equal(missing.seen[0]!.headers['content-type'], undefined, 'no content type without a body')
})

t.test('a body is sent with its content type (JSON unless told)', async (t) => {
  const ok = await source(t, 200)
  await fetchWithFailover([ok.url], '/p', { method: 'POST', body: '{"a":1}' }, target)
  await fetchWithFailover([ok.url], '/p', { method: 'POST', body: 'ab', contentType: 'text/plain' }, target)
  t.same(
    ok.seen.map((seen) => [seen.method, seen.headers['content-type'], seen.body]),
    [
      ['POST', 'application/json', '{"a":1}'],
      ['POST', 'text/plain', 'ab'],
    ],
  )
})

t.test('every source failing is the transient RPC_HTTP_ERROR naming the API and chain', async (t) => {
  const broken = await source(t, 500)
  const slow = await source(t, 'never')
  const closed = 'http://127.0.0.1:9'
  const error = await fetchWithFailover(
    [broken.url, slow.url, closed],
    '/',
    {},
    { ...target, timeoutMs: 1000 },
  ).catch((e: unknown) => e)
  t.ok(isPontisError(error))
  if (!isPontisError(error)) return
  t.equal(error.code, 'RPC_HTTP_ERROR')
  t.equal(error.message, 'The Test API of Testnet (7) is unreachable or failing; retry shortly.')
  t.same(error.errorData, { chainId: 7 })
  // Its request was sent before the timeout; the server may read it only now, if this process was paused.
  await waitFor('the request at the source that never answers', () => slow.seen.length, {
    until: (n) => n > 0,
  })
  t.equal(slow.seen.length, 1, 'a source slower than the timeout counts as failing')
})

t.test('unexpectedAnswer names the status, the path and the start of the body', async (t) => {
  const error = unexpectedAnswer(target, '/tx', 418, 'x'.repeat(500))
  t.equal(error.code, 'RPC_HTTP_ERROR')
  t.equal(error.message, `The Test API of Testnet (7) answered 418 to /tx: ${'x'.repeat(200)}`)
  t.same(error.errorData, { chainId: 7, status: 418 })
})

/** A server that sends its headers and part of the body, then stalls; hands over each stalled answer. */
async function stallingSource(t: Test) {
  const stalled: ServerResponse[] = []
  let onStall: (response: ServerResponse) => void = () => {}
  const server = createServer((req, res) => {
    req.resume()
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"partial":')
    stalled.push(res)
    onStall(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const nextStall = () =>
    new Promise<ServerResponse>((resolve) => {
      onStall = resolve
    })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stalled, nextStall }
}

t.test('timedFetch reads the whole answer', async (t) => {
  const ok = await source(t, 201)
  const answer = await timedFetch(`${ok.url}/a`, { method: 'POST', body: 'x' }, { timeoutMs: 5_000 })
  t.same([answer.status, answer.ok, answer.text], [201, true, 'status 201'])
  t.equal(answer.headers.get('content-type'), 'text/plain')
})

t.test(
  'timedFetch: a body that stalls past the deadline, gc() while pending, times out and closes the socket',
  async (t) => {
    const stalling = await stallingSource(t)
    const stall = stalling.nextStall()
    const call = timedFetch(stalling.url, {}, { timeoutMs: 500 }).catch((error: unknown) => error)
    const response = await stall
    const closed = once(response, 'close')
    gc()
    const error = await call
    t.ok(error instanceof FetchTimeoutError, 'rejects with FetchTimeoutError')
    t.equal((error as Error).name, 'TimeoutError')
    t.equal((error as Error).message, 'timed out after 500 ms')
    // Bounded by tap's file timeout; without the deadline the body would wait for undici's 300 s.
    await closed
    t.pass('the stalled connection was closed')
  },
)

t.test("timedFetch: the caller's signal aborts the call and closes its socket", async (t) => {
  const stalling = await stallingSource(t)
  const stall = stalling.nextStall()
  const controller = new AbortController()
  const call = timedFetch(stalling.url, {}, { timeoutMs: 600_000, signal: controller.signal }).catch(
    (error: unknown) => error,
  )
  const response = await stall
  const closed = once(response, 'close')
  gc()
  controller.abort(new Error('not needed any more'))
  t.equal(((await call) as Error).message, 'not needed any more', "rejects with the signal's reason")
  await closed
  t.pass('the connection was closed')
  const already = await timedFetch(stalling.url, {}, { timeoutMs: 1_000, signal: controller.signal }).catch(
    (error: unknown) => error,
  )
  t.equal((already as Error).message, 'not needed any more', 'an already aborted signal fails at once')
})

t.test('fetchWithFailover: a source whose body stalls past the timeout makes way for the next', async (t) => {
  const stalling = await stallingSource(t)
  const ok = await source(t, 200)
  const answer = await fetchWithFailover([stalling.url, ok.url], '/b', {}, target)
  t.equal(answer.text, 'status 200')
  t.equal(stalling.stalled.length, 1, 'the stalling source was asked first')
})
