/**
 * The simulators' request-body reader over real HTTP on loopback: text within the limit, and past
 * it the rejection the caller chose while the answer (a 413) still reaches the client.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { readRequestText } from '../src/http-body.js'

const server = createServer(async (request, response) => {
  try {
    const text = await readRequestText(request, 16, () => new RangeError('too large'))
    response.writeHead(200).end(`got ${text}`)
  } catch (error) {
    response.writeHead(413).end(String(error))
  }
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise((resolve) => server.close(resolve)))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`

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
