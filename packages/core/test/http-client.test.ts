/**
 * keepAliveFetch against real HTTP servers on loopback: what fetch answers, it answers (status,
 * headers, body, redirects, decoding, errors, abort), over reused keep-alive connections.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { keepAliveFetch } from '../src/index.js'

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  readonly body: string
  readonly socket: Socket
}

/** A server answering with `route`; every request is kept with the socket it came on. */
async function server(t: Test, route: (request: Seen, response: ServerResponse) => void) {
  const seen: Seen[] = []
  const http = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body,
        socket: request.socket,
      }
      seen.push(entry)
      route(entry, response)
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    http.closeAllConnections()
    http.close()
  })
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, seen }
}

t.test('status, headers and body as fetch gives them; the connection is reused', async (t) => {
  const { url, seen } = await server(t, (request, response) => {
    response.setHeader('set-cookie', ['a=1', 'b=2'])
    response.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-echo': request.body })
    response.end('{"ok":true}')
  })
  const first = await keepAliveFetch(`${url}/p?q=1`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'x-key': 'k' },
    body: 'hello',
  })
  t.equal(first.status, 201)
  t.equal(first.statusText, 'Made')
  t.equal(first.ok, true)
  t.equal(first.headers.get('x-echo'), 'hello')
  t.same(first.headers.getSetCookie(), ['a=1', 'b=2'])
  t.same(await first.json(), { ok: true })
  t.same(
    [seen[0]!.method, seen[0]!.url, seen[0]!.headers['x-key'], seen[0]!.body],
    ['POST', '/p?q=1', 'k', 'hello'],
  )
  t.equal(seen[0]!.headers['content-length'], '5', 'the body is sent with its length')
  const second = await keepAliveFetch(new URL(`${url}/again`), {
    body: new TextEncoder().encode('bytes'),
    method: 'PUT',
  })
  await second.text()
  t.equal(seen[1]!.body, 'bytes', 'a byte body')
  t.equal(seen[1]!.socket, seen[0]!.socket, 'the same keep-alive connection')
})

t.test('statuses without a body answer an empty one', async (t) => {
  const { url } = await server(t, (_request, response) => response.writeHead(204).end())
  const answer = await keepAliveFetch(url)
  t.equal(answer.status, 204)
  t.equal(await answer.text(), '')
})

t.test(
  'redirects: followed by default (303 and POST 301/302 become GET), refused with error, kept with manual',
  async (t) => {
    const target = await server(t, (request, response) => response.end(`${request.method} ${request.body}`))
    const { url, seen } = await server(t, (request, response) => {
      const status = Number(request.url.slice(1, 4))
      const to = request.url.includes('away') ? `${target.url}/there` : '/final'
      if (request.url === '/final') return response.end(`${request.method} ${request.body}`)
      response.writeHead(status, { location: to }).end()
    })
    for (const [status, method] of [
      [301, 'GET'],
      [302, 'GET'],
      [303, 'GET'],
      [307, 'POST'],
      [308, 'POST'],
    ] as const) {
      const answer = await keepAliveFetch(`${url}/${status}`, { method: 'POST', body: 'b' })
      t.equal(await answer.text(), `${method} ${method === 'POST' ? 'b' : ''}`, `${status} after a POST`)
    }
    const crossOrigin = await keepAliveFetch(`${url}/302-away`, {
      headers: { authorization: 'Bearer secret' },
    })
    t.equal(await crossOrigin.text(), 'GET ', 'followed to another origin')
    t.equal(target.seen[0]!.headers.authorization, undefined, 'without the credentials of the first origin')
    t.equal(seen.at(-1)!.headers.authorization, 'Bearer secret')
    const refused = await keepAliveFetch(`${url}/302`, { redirect: 'error' }).catch((error: unknown) => error)
    t.ok(
      refused instanceof TypeError && refused.message === 'fetch failed',
      'redirect: error fails as fetch does',
    )
    const manual = await keepAliveFetch(`${url}/302`, { redirect: 'manual' })
    t.equal(manual.status, 302)
    t.equal(manual.headers.get('location'), '/final')
  },
)

t.test('a gzip body is decoded, as fetch decodes it', async (t) => {
  const { url } = await server(t, (_request, response) => {
    response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('squeezed'))
  })
  t.equal(await (await keepAliveFetch(url)).text(), 'squeezed')
})

t.test(
  "network errors are TypeError('fetch failed'); an abort rejects with the signal's reason and closes the socket",
  async (t) => {
    let onRequest: (request: Seen) => void = () => {}
    const arrived = new Promise<Seen>((resolve) => {
      onRequest = resolve
    })
    // Reads the request and never answers.
    const hung = await server(t, (request) => onRequest(request))
    const error = await keepAliveFetch('http://127.0.0.1:9/').catch((caught: unknown) => caught)
    t.ok(error instanceof TypeError, 'a TypeError')
    t.equal((error as Error).message, 'fetch failed')
    t.ok((error as Error).cause, 'with the cause')

    const controller = new AbortController()
    const pending = keepAliveFetch(hung.url, { signal: controller.signal }).catch((caught: unknown) => caught)
    const socketClosed = once((await arrived).socket, 'close')
    controller.abort(new Error('stop'))
    t.equal(((await pending) as Error).message, 'stop')
    await socketClosed
    t.pass('the hung request was closed')
    const already = await keepAliveFetch(hung.url, { signal: controller.signal }).catch(
      (caught: unknown) => caught,
    )
    t.equal((already as Error).message, 'stop', 'an aborted signal fails at once')
  },
)

t.test('an answer cut off mid-body rejects as fetch does, never hangs', async (t) => {
  const { url } = await server(t, (request, response) => {
    response.writeHead(200, { 'content-length': '100' })
    response.write('only part', () => request.socket.destroy())
  })
  const error = await keepAliveFetch(url).catch((caught: unknown) => caught)
  t.ok(error instanceof TypeError, 'a TypeError')
  t.equal((error as Error).message, 'fetch failed')
})

t.test(
  'a request on a kept-alive socket the server has closed goes again on a new connection; a new connection closed before an answer does not',
  async (t) => {
    const answeredOn = new Set<Socket>()
    const { url, seen } = await server(t, (request, response) => {
      // A second request on one connection is dropped unanswered, as when the server's idle
      // timeout closes the socket just as the client reuses it.
      if (answeredOn.has(request.socket)) {
        request.socket.destroy()
        return
      }
      answeredOn.add(request.socket)
      response.end(`answer ${seen.length}`)
    })
    t.equal(await (await keepAliveFetch(`${url}/a`)).text(), 'answer 1')
    const second = await keepAliveFetch(`${url}/b`, { method: 'POST', body: 'x' })
    t.equal(await second.text(), 'answer 3', 'answered on a fresh connection')
    t.same(
      seen.map((request) => request.url),
      ['/a', '/b', '/b'],
      'the dropped request was sent once more',
    )
    t.not(seen[2]!.socket, seen[0]!.socket)

    const { url: dropping, seen: dropped } = await server(t, (request) => request.socket.destroy())
    const error = await keepAliveFetch(`${dropping}/c`).catch((caught: unknown) => caught)
    t.ok(error instanceof TypeError && error.message === 'fetch failed', 'fails as fetch does')
    t.equal(dropped.length, 1, 'a request on a fresh connection is never sent twice')
  },
)
