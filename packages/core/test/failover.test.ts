/** fetchWithFailover over real HTTP on loopback: which source answers, what is sent, what fails. */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { type FailoverTarget, fetchWithFailover, isPontisError, unexpectedAnswer } from '../src/index.js'

const target: FailoverTarget = {
  apiName: 'Test API',
  label: { id: 7, displayName: 'Testnet' },
  timeoutMs: 500,
  headers: { 'x-key': 'k' },
}

/** A server answering `status`, remembering what it was sent; its base URL. */
async function source(t: Test, status: number, delayMs = 0) {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      setTimeout(
        () => res.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`),
        delayMs,
      )
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
  t.equal(await response.text(), 'status 404')
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
  const slow = await source(t, 200, 2_000)
  const closed = 'http://127.0.0.1:9'
  const error = await fetchWithFailover([broken.url, slow.url, closed], '/', {}, target).catch(
    (e: unknown) => e,
  )
  t.ok(isPontisError(error))
  if (!isPontisError(error)) return
  t.equal(error.code, 'RPC_HTTP_ERROR')
  t.equal(error.message, 'The Test API of Testnet (7) is unreachable or failing; retry shortly.')
  t.same(error.errorData, { chainId: 7 })
  t.equal(slow.seen.length, 1, 'a source slower than the timeout counts as failing')
})

t.test('unexpectedAnswer names the status, the path and the start of the body', async (t) => {
  const error = unexpectedAnswer(target, '/tx', 418, 'x'.repeat(500))
  t.equal(error.code, 'RPC_HTTP_ERROR')
  t.equal(error.message, `The Test API of Testnet (7) answered 418 to /tx: ${'x'.repeat(200)}`)
  t.same(error.errorData, { chainId: 7, status: 418 })
})
