/**
 * The simulators' HTTP plumbing over real HTTP on loopback: the body reader (text within the limit;
 * past it the rejection the caller chose while the answer, a 413, still reaches the client), and
 * listening on a free port with an idempotent close.
 */
import { createServer } from 'node:http'
import t from 'tap'
import { listenOn, readRequestText } from '../src/simulator-http.js'

const server = createServer(async (request, response) => {
  try {
    const text = await readRequestText(request, 16, () => new RangeError('too large'))
    response.writeHead(200).end(`got ${text}`)
  } catch (error) {
    response.writeHead(413).end(String(error))
  }
})
const listening = await listenOn(server, '127.0.0.1', 0)
t.teardown(() => listening.close())
const url = `http://127.0.0.1:${listening.port}/`

t.test('a body within the limit is read whole, as UTF-8', async (t) => {
  const response = await fetch(url, { method: 'POST', body: 'héllo' })
  t.equal(response.status, 200)
  t.equal(await response.text(), 'got héllo')
})

t.test('past the limit the reader rejects with the chosen error and the answer still arrives', async (t) => {
  const response = await fetch(url, { method: 'POST', body: 'x'.repeat(100_000) })
  t.equal(response.status, 413)
  t.equal(await response.text(), 'RangeError: too large')
})

t.test('listenOn: a free port, a refused busy one, and a close that can be called twice', async (t) => {
  t.ok(listening.port > 0)
  await t.rejects(listenOn(createServer(), '127.0.0.1', listening.port), { code: 'EADDRINUSE' })
  const other = await listenOn(createServer(), '127.0.0.1', 0)
  await Promise.all([other.close(), other.close()])
  await t.rejects(fetch(`http://127.0.0.1:${other.port}/`), 'closed')
})
