/**
 * Direct operations (`createApiApp({ directOperations })`) answer without Koa: every request here
 * is sent over loopback both to the app's own listener (direct) and to its Koa app alone, and the
 * two answers must be the same (status, body, headers), each checked against the document.
 */
import { request as httpRequest } from 'node:http'
import { fileURLToPath } from 'node:url'
import { type Logger, PontisError, silentLogger } from '@pontis/core'
import t, { type Test } from 'tap'
import { createApiApp, type GateRequest, type HandlerMap, listen, loadOpenApiDocument } from '../src/index.js'
import { createTestClient, type TestResponse } from '../src/testing.js'

const fixture = fileURLToPath(new URL('./fixtures/widgets.yaml', import.meta.url))

const handlers: HandlerMap = {
  searchWidgets: (request) => {
    const query = request.query as { name: string; limit?: number; tag?: string[] }
    if (query.name === 'missing') throw new PontisError('REQUEST_NOT_FOUND', 'No widget named missing.')
    if (query.name === 'boom') throw new Error('secret=hunter2 in a stack')
    if (query.name === 'badheader')
      return {
        status: 200,
        body: query,
        headers: { 'x-fine': 'yes', 'x-bad': 'line\nbreak' } as Record<string, string>,
      }
    return {
      status: 200,
      body: query,
      headers: { 'x-seen-by': request.operationId, 'x-client-ip': request.clientIp },
    }
  },
  createWidget: (request) => {
    const body = request.body as { name: string; size: string }
    if (body.name === 'missing') throw new PontisError('REQUEST_NOT_FOUND', 'No widget named missing.')
    if (body.name === 'boom') throw new Error('secret=hunter2 in a stack')
    return {
      status: 201,
      body: { id: Number(body.size), name: body.name },
      headers: { 'x-seen-by': request.operationId, 'x-raw-length': String(request.rawBody?.length) },
    }
  },
  createGadget: (request) => ({ status: 200, body: request.body as object }),
  getWidget: (request) => ({
    status: 200,
    body: { id: request.path.widgetId as number, name: 'w' },
    headers: { 'x-widget-version': '1' },
  }),
}

async function start(t: Test, trustProxy = false) {
  const loaded = await loadOpenApiDocument(fixture)
  const gateCalls: GateRequest[] = []
  const errors: unknown[] = []
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (message, fields) => errors.push({ message, fields }),
  }
  const app = await createApiApp({
    loaded,
    handlers,
    logger,
    trustProxy,
    gate: async (request) => {
      gateCalls.push(request)
      const headers = { 'x-gate': 'seen' }
      if (request.headers['x-refuse'] !== undefined)
        return { headers, refusal: new PontisError('RATE_LIMITED', 'Slow down.', { retryAfterSeconds: 7 }) }
      return { headers }
    },
    directOperations: ['searchWidgets', 'createWidget', 'createGadget'],
    bodyLimitBytes: 1024,
  })
  const direct = await listen(app, { port: 0 })
  const viaKoa = await listen(app.koa, { port: 0 })
  t.teardown(async () => {
    await direct.close()
    await viaKoa.close()
  })
  return {
    directUrl: direct.url,
    viaKoaUrl: viaKoa.url,
    direct: createTestClient(t, direct.url, loaded.document),
    viaKoa: createTestClient(t, viaKoa.url, loaded.document),
    gateCalls,
    errors,
  }
}

const VARYING = new Set(['date', 'connection', 'keep-alive'])

function comparable(response: TestResponse): {
  status: number
  headers: Record<string, string>
  text: string
} {
  const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !VARYING.has(name)))
  return { status: response.status, headers, text: response.text }
}

t.test('a direct operation answers exactly what the Koa path answers', async (t) => {
  const { direct, viaKoa } = await start(t)
  const cases: Array<[string, string, Record<string, string>?]> = [
    ['valid, coerced, repeated array', '/search?name=gear&limit=5&tag=a&tag=b'],
    ['a lone array value', '/search?name=gear&tag=a'],
    ['escaped values', '/search?name=gear&tag=a%20b&tag=%E2%82%AC'],
    ['pattern mismatch', '/search?name=GEAR'],
    ['missing required', '/search?limit=3'],
    ['no query at all', '/search'],
    ['unknown parameter', '/search?name=gear&colour=red'],
    ['repeated scalar', '/search?name=a&name=b'],
    ['not an integer', '/search?name=gear&limit=five'],
    ['out of range', '/search?name=gear&limit=51'],
    ['handler refuses', '/search?name=missing'],
    ['handler fails', '/search?name=boom'],
    ['handler sets a header Node refuses', '/search?name=badheader'],
    ['gate refuses', '/search?name=gear', { 'x-refuse': '1' }],
    ['trailing slash (Koa on both)', '/search/?name=gear'],
    ['other case (Koa on both)', '/SEARCH?name=gear'],
  ]
  for (const [name, path, headers] of cases) {
    const requestHeaders = { 'x-request-id': `case-${name.replaceAll(/[^a-z]/g, '')}`, ...headers }
    const [a, b] = await Promise.all([
      direct.get(path, { headers: requestHeaders }),
      viaKoa.get(path, { headers: requestHeaders }),
    ])
    t.same(comparable(a), comparable(b), name)
  }
  const valid = await direct.get('/search?name=gear&limit=5&tag=a&tag=b')
  t.same(valid.body, { name: 'gear', limit: 5, tag: ['a', 'b'] }, 'limit coerced to a number, tags as sent')
  t.equal(valid.headers['x-seen-by'], 'searchWidgets')
  t.equal(valid.headers['x-gate'], 'seen', 'the gate ran and its headers were sent')
  t.equal(valid.headers['content-type'], 'application/json; charset=utf-8')
  t.match(valid.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'a request id is made when none is sent')
  const refused = await direct.get('/search?name=gear', { headers: { 'x-refuse': '1' } })
  t.equal(refused.status, 429)
  t.equal(refused.headers['retry-after'], '7')
  t.equal((refused.body as { errorCode: string }).errorCode, 'RATE_LIMITED')
  const badHeader = await direct.get('/search?name=badheader')
  t.equal(badHeader.status, 500, 'a header Node refuses fails the answer as on the Koa path')
  t.equal((badHeader.body as { errorCode: string }).errorCode, 'UNKNOWN_ERROR')
  const invalidId = await direct.get('/search?name=gear', {
    headers: { 'x-request-id': 'no spaces allowed' },
  })
  t.not(invalidId.headers['x-request-id'], 'no spaces allowed', 'an implausible request id is replaced')
})

/** One POST over node:http with exactly these headers and body text (fetch would fix some of them). */
function rawPost(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
  chunked = false,
): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, baseUrl), { method: 'POST', headers }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => {
        const answerHeaders: Record<string, string> = {}
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') answerHeaders[name] = value
        const isJson = (answerHeaders['content-type'] ?? '').includes('json')
        const parsed = text !== '' && isJson ? (JSON.parse(text) as unknown) : text
        resolve({
          status: response.statusCode ?? 0,
          headers: answerHeaders,
          body: parsed,
          text,
          operationId: undefined,
        })
      })
    })
    request.on('error', reject)
    if (chunked && body !== undefined) {
      // Two writes before end: Node sends the body chunked, without Content-Length.
      request.write(body.slice(0, 3))
      request.end(body.slice(3))
    } else request.end(body)
  })
}

t.test('a direct POST answers exactly what the Koa path answers', async (t) => {
  const { direct, viaKoa, directUrl, viaKoaUrl } = await start(t)
  const json = { 'content-type': 'application/json' }
  const cases: Array<[string, string, Record<string, string>, string | undefined, boolean?]> = [
    ['valid', '/widgets', json, '{"name":"gear","size":"7"}'],
    ['valid with a query nobody declared', '/widgets?colour=red', json, '{"name":"gear","size":"7"}'],
    ['unknown members ignored and named', '/gadgets', json, '{"kind":"cog","teeth":3,"extra":1}'],
    [
      'oneOf branch with a nested unknown member',
      '/gadgets',
      json,
      '{"kind":"lever","length":2,"parts":[{"to":"a","x":1}]}',
    ],
    ['schema refusal', '/widgets', json, '{"name":"","size":"x"}'],
    ['dependentRequired', '/widgets', json, '{"name":"gear","size":"7","strict":true}'],
    ['malformed JSON', '/widgets', json, '{"name":'],
    ['empty body', '/widgets', json, ''],
    ['no body, no content type', '/widgets', {}, undefined],
    [
      'a body in another media type',
      '/widgets',
      { 'content-type': 'text/plain' },
      '{"name":"gear","size":"7"}',
    ],
    [
      'a +json media type with parameters',
      '/widgets',
      { 'content-type': 'application/vnd.w+json; charset=utf-8' },
      '{"name":"gear","size":"7"}',
    ],
    ['chunked, no Content-Length, no content type', '/widgets', {}, '{"name":"gear","size":"7"}', true],
    ['chunked JSON', '/widgets', json, '{"name":"gear","size":"7"}', true],
    ['over the body limit', '/widgets', json, JSON.stringify({ name: 'x'.repeat(2000), size: '1' })],
    [
      'over the body limit, chunked',
      '/widgets',
      json,
      JSON.stringify({ name: 'x'.repeat(2000), size: '1' }),
      true,
    ],
    [
      'not UTF-8 by its charset',
      '/widgets',
      { 'content-type': 'application/json; charset=latin1' },
      '{"name":"gear","size":"7"}',
    ],
    ['handler refuses', '/widgets', json, '{"name":"missing","size":"7"}'],
    ['handler fails', '/widgets', json, '{"name":"boom","size":"7"}'],
    ['gate refuses', '/widgets', { ...json, 'x-refuse': '1' }, '{"name":"gear","size":"7"}'],
    ['trailing slash (Koa on both)', '/widgets/', json, '{"name":"gear","size":"7"}'],
  ]
  for (const [name, path, headers, body, chunked] of cases) {
    const requestHeaders = { 'x-request-id': `post-${name.replaceAll(/[^a-z]/g, '')}`, ...headers }
    const [a, b] = await Promise.all([
      rawPost(directUrl, path, requestHeaders, body, chunked),
      rawPost(viaKoaUrl, path, requestHeaders, body, chunked),
    ])
    t.same(comparable(a), comparable(b), name)
  }
  // The same through the conformance-checking client: every answer is checked against the document.
  const created = await direct.post('/widgets', { name: 'gear', size: '7' })
  t.equal(created.status, 201)
  t.same(created.body, { id: 7, name: 'gear' }, 'the handler saw the parsed body')
  t.equal(created.headers['x-seen-by'], 'createWidget', 'answered by the direct route')
  t.equal(
    created.headers['x-raw-length'],
    String(JSON.stringify({ name: 'gear', size: '7' }).length),
    'with its raw text',
  )
  t.equal(created.headers['x-gate'], 'seen', 'after the gate')
  const gadget = await direct.post('/gadgets', { kind: 'cog', teeth: 3, extra: 1 })
  t.same(gadget.body, { kind: 'cog', teeth: 3 }, 'unknown members are stripped before the handler')
  t.equal(gadget.headers['ignored-members'], 'body.extra', 'and named in Ignored-Members')
  const invalid = await direct.post('/widgets', { name: '', size: 'x' })
  t.equal(invalid.status, 400)
  t.equal((invalid.body as { errorCode: string }).errorCode, 'INVALID_REQUEST')
  const same = await viaKoa.post('/widgets', { name: '', size: 'x' })
  t.same((invalid.body as { message: string }).message, (same.body as { message: string }).message)
  const large = await direct.request('POST', '/widgets', {
    rawBody: JSON.stringify({ name: 'x'.repeat(2000), size: '1' }),
    headers: json,
  })
  t.equal(large.status, 413, 'the body limit holds on the direct path')
  const media = await direct.request('POST', '/widgets', {
    rawBody: '{}',
    headers: { 'content-type': 'text/plain' },
  })
  t.equal(media.status, 415)
  t.equal((media.body as { errorCode: string }).errorCode, 'UNSUPPORTED_MEDIA_TYPE')
})

t.test('a direct POST keeps the connection usable after every kind of answer', async (t) => {
  const { directUrl } = await start(t)
  const { Agent } = await import('node:http')
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const post = (body: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        new URL('/widgets', directUrl),
        { method: 'POST', headers, agent },
        (response) => {
          response.resume()
          response.on('end', () => resolve(response.statusCode ?? 0))
        },
      )
      request.on('error', reject)
      request.end(body)
    })
  const json = { 'content-type': 'application/json' }
  // Refusals before the body is read (gate, media type) leave it unread: the next request must still parse.
  const statuses = [
    await post('{"name":"gear","size":"7"}', { ...json, 'x-refuse': '1' }),
    await post('{"name":"gear","size":"7"}', { 'content-type': 'text/plain' }),
    await post('{"name":', json),
    await post('{"name":"gear","size":"7"}', json),
  ]
  t.same(statuses, [429, 415, 400, 201], 'each answered on one kept-alive connection')
})

t.test('a direct operation logs a failure without leaking it, like the Koa path', async (t) => {
  const { direct, errors } = await start(t)
  const failed = await direct.get('/search?name=boom')
  t.equal(failed.status, 500)
  t.notMatch(failed.text, /hunter2/, 'the cause stays out of the answer')
  t.equal(errors.length, 1, 'and goes to the log once')
})

t.test('the gate sees the same request on both paths', async (t) => {
  const { direct, viaKoa, gateCalls } = await start(t)
  await direct.get('/search?name=gear', { headers: { 'x-api-key': 'k' } })
  await viaKoa.get('/search?name=gear', { headers: { 'x-api-key': 'k' } })
  t.equal(gateCalls.length, 2)
  const [a, b] = gateCalls.map(({ headers, ...rest }) => ({ ...rest, key: headers['x-api-key'] }))
  t.same(a, b)
  t.same(a, { method: 'GET', path: '/search', peerAddress: '127.0.0.1', trustProxy: false, key: 'k' })
})

t.test('other methods and operations still go through Koa', async (t) => {
  const { direct } = await start(t)
  const post = await direct.post('/search', {})
  t.equal(post.status, 405, 'POST on a direct GET path is answered by the router')
  const get = await direct.get('/widgets')
  t.equal(get.status, 405, 'GET on a direct POST path is answered by the router')
  t.equal(get.headers.allow, 'POST')
  const widget = await direct.get('/widgets/3')
  t.equal(widget.status, 200)
  t.equal(widget.headers['x-gate'], 'seen', 'the gate runs on Koa routes as well')
})

t.test('direct operations are checked at start-up', async (t) => {
  const loaded = await loadOpenApiDocument(fixture)
  const logger = silentLogger
  await t.rejects(
    createApiApp({ loaded, handlers, logger, directOperations: ['getWidget'] }),
    /GET or POST with a fixed path/,
  )
  await t.rejects(
    createApiApp({ loaded, handlers, logger, directOperations: ['unbuilt'] }),
    /no operation or no handler/,
  )
  await t.rejects(
    createApiApp({
      loaded,
      handlers,
      logger,
      directOperations: ['searchWidgets'],
      middleware: [async (_, next) => next()],
    }),
    /cannot run Koa middleware/,
  )
})

t.test('both paths see the client address the same way', async (t) => {
  const plain = await start(t)
  const trusting = await start(t, true)
  const forwarded = { 'x-forwarded-for': '192.0.2.7, 203.0.113.9' }
  for (const client of [plain.direct, plain.viaKoa]) {
    const answer = await client.get('/search?name=gear', { headers: forwarded })
    t.equal(answer.headers['x-client-ip'], '127.0.0.1', 'without proxy trust: the socket peer')
  }
  for (const client of [trusting.direct, trusting.viaKoa]) {
    const answer = await client.get('/search?name=gear', { headers: forwarded })
    t.equal(answer.headers['x-client-ip'], '203.0.113.9', 'with proxy trust: the entry the proxy appended')
  }
  t.same(
    trusting.gateCalls.map((call) => call.trustProxy),
    [true, true],
    'the gate is told whether to trust the proxy',
  )
})

/** One request over node:http: fetch refuses TRACE, and PROPFIND is no method of its list either. */
function rawRequest(baseUrl: string, method: string, path: string): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const headers = { 'x-request-id': `raw-${method}-${path.replaceAll('/', '')}` }
    const request = httpRequest(new URL(path, baseUrl), { method, headers }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => {
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') headers[name] = value
        const body = text === '' ? undefined : (JSON.parse(text) as unknown)
        resolve({ status: response.statusCode ?? 0, headers, body, text, operationId: undefined })
      })
    })
    request.on('error', reject)
    request.end()
  })
}

t.test(
  'a method no route takes (TRACE, PROPFIND) answers 405 with Allow on a known path, 404 elsewhere, on both paths',
  async (t) => {
    const { directUrl, viaKoaUrl } = await start(t)
    const cases: Array<[string, string, number, string, string | undefined]> = [
      ['TRACE', '/search', 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['PROPFIND', '/search', 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['TRACE', '/widgets', 405, 'METHOD_NOT_ALLOWED', 'POST'],
      ['PROPFIND', '/widgets/3', 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['TRACE', '/nowhere', 404, 'ROUTE_NOT_FOUND', undefined],
      ['PROPFIND', '/nowhere', 404, 'ROUTE_NOT_FOUND', undefined],
    ]
    for (const [method, path, status, code, allowed] of cases) {
      const [direct, viaKoa] = await Promise.all([
        rawRequest(directUrl, method, path),
        rawRequest(viaKoaUrl, method, path),
      ])
      t.same(comparable(direct), comparable(viaKoa), `${method} ${path}: both paths answer the same`)
      t.equal(direct.status, status, `${method} ${path}: status`)
      const body = direct.body as { errorCode?: string; message?: string }
      t.equal(body.errorCode, code, `${method} ${path}: errorCode`)
      t.match(body.message, method, `${method} ${path}: the message names the method`)
      if (allowed === undefined) t.notOk('allow' in direct.headers, `${method} ${path}: no Allow header`)
      else t.match(direct.headers.allow, allowed, `${method} ${path}: Allow lists ${allowed}`)
    }
  },
)
