import { fileURLToPath } from 'node:url'
import { PontisError, silentLogger } from '@pontis/core'
import { Registry } from 'prom-client'
import t, { type Test } from 'tap'
import { createApiApp, type HandlerMap, listen, loadOpenApiDocument } from '../src/index.js'
import { createTestClient, errorDataOf } from '../src/testing.js'

const fixture = fileURLToPath(new URL('./fixtures/widgets.yaml', import.meta.url))

async function start(t: Test, handlers: HandlerMap, bodyLimitBytes?: number) {
  const loaded = await loadOpenApiDocument(fixture)
  const { koa, operationIds } = await createApiApp({ loaded, handlers, logger: silentLogger, bodyLimitBytes })
  const server = await listen(koa, { port: 0 })
  t.teardown(() => server.close())
  return { client: createTestClient(t, server.url, loaded.document), url: server.url, operationIds }
}

const handlers: HandlerMap = {
  createWidget: (request) => ({
    status: 201,
    body: { id: 7, name: (request.body as { name: string }).name },
  }),
  createGadget: (request) => ({ status: 200, body: request.body }),
  getWidget: (request) => {
    const id = request.path.widgetId as number
    if (id === 404) throw new PontisError('REQUEST_NOT_FOUND', 'No widget 404.')
    if (id === 500) throw new Error('database password=hunter2 leaked?')
    return { status: 200, body: { id, name: `w${id}` }, headers: { 'x-widget-version': '3' } }
  },
}

t.test('routes every operation of the document and validates bodies', async (t) => {
  const { client, operationIds } = await start(t, handlers)
  t.same([...operationIds].sort(), [
    'createGadget',
    'createWidget',
    'getDocumentation',
    'getWidget',
    'searchWidgets',
    'unbuilt',
  ])
  const created = await client.post('/widgets', { name: 'gear', size: '3' })
  t.equal(created.status, 201)
  t.same(created.body, { id: 7, name: 'gear' })
  const found = await client.get('/widgets/12?verbose=true')
  t.equal(found.status, 200)
  t.equal((found.body as { id: number }).id, 12, 'path parameter is coerced to an integer')
})

t.test('a bad field answers 400 INVALID_REQUEST naming the field', async (t) => {
  const { client } = await start(t, handlers)
  const cases: Array<[unknown, string, string]> = [
    [{ size: '3' }, 'name', 'is required'],
    [{ name: 'x', size: '1.5' }, 'size', 'must match the pattern'],
    [{ name: 'x', size: '1', color: 'green' }, 'color', 'must be one of "red", "blue"'],
    [{ name: 'x', size: '1', strict: true }, 'refundTo', 'is required when `strict` is set'],
    [{ name: 'x', size: '1', parts: [{ to: '0x12' }] }, 'parts[0].to', 'must match the pattern'],
  ]
  for (const [body, field, phrase] of cases) {
    const res = await client.post('/widgets', body)
    t.equal(res.status, 400, `${field}: status`)
    const error = res.body as { errorCode: string; message: string }
    const details = errorDataOf(res.body) as { errors: Array<{ field: string }> }
    t.equal(error.errorCode, 'INVALID_REQUEST')
    t.match(error.message, `\`${field}\``, `${field}: message names the field`)
    t.match(error.message, phrase)
    t.ok(
      details.errors.some((problem) => problem.field === field),
      `${field}: errorData lists the field`,
    )
  }
  const badPath = await client.get('/widgets/0')
  t.equal(badPath.status, 400)
  t.match((badPath.body as { message: string }).message, '`widgetId` (path)')
})

t.test(
  'unknown query parameters and body members are ignored, left out and reported in Ignored-Members',
  async (t) => {
    const { client } = await start(t, handlers)
    const query = await client.get('/widgets/12?verbose=true&referrer=relay.link&utm_source=x')
    t.equal(query.status, 200, 'an unknown query parameter is answered normally')
    t.equal(query.headers['ignored-members'], 'query.referrer, query.utm_source')

    const known = await client.post('/widgets', { name: 'gear', size: '3' })
    t.equal(known.headers['ignored-members'], undefined, 'nothing ignored, no header')

    const typo = await client.post('/gadgets', {
      kind: 'lever',
      length: 3,
      lenght: 4,
      parts: [{ to: 'a', too: 'b' }],
    })
    t.equal(typo.status, 200)
    t.same(typo.body, { kind: 'lever', length: 3, parts: [{ to: 'a' }] }, 'the handler never sees them')
    t.equal(typo.headers['ignored-members'], 'body.lenght, body.parts[0].too', 'nested members are named')

    // The branch that matches decides what is known: `teeth` is the other kind's member, so unknown here.
    const otherKind = await client.post('/gadgets', { kind: 'lever', length: 3, teeth: 9 })
    t.same(otherKind.body, { kind: 'lever', length: 3 })
    t.equal(otherKind.headers['ignored-members'], 'body.teeth')

    const stillInvalid = await client.post('/widgets', { name: 'x', size: '1.5', colour: 'red' })
    t.equal(stillInvalid.status, 400, 'every other rule still refuses')
    const message = (stillInvalid.body as { message: string }).message
    t.match(message, '`size` (body) must match the pattern')
    t.notMatch(message, 'colour', 'an unknown member is not reported as the problem')
    const crossField = await client.post('/widgets', { name: 'x', size: '1', strict: true, colour: 'red' })
    t.equal(crossField.status, 400, 'cross-field rules still refuse')
    t.match((crossField.body as { message: string }).message, 'is required when `strict` is set')

    const odd = await client.post('/gadgets', { kind: 'cog', teeth: 1, 'naïve\n€': 1, 'a b': 2 })
    t.equal(odd.status, 200)
    t.equal(
      odd.headers['ignored-members'],
      'body["na\\u00efve\\n\\u20ac"], body["a b"]',
      'names that are not identifiers are quoted, in printable ASCII',
    )
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`extra${i}`, i]))
    const crowded = await client.post('/gadgets', { kind: 'cog', teeth: 1, ...many })
    t.equal(crowded.status, 200)
    t.match(
      crowded.headers['ignored-members'],
      /^body\.extra0, .*body\.extra19, and 5 more$/,
      'at most 20 are listed',
    )
  },
)

t.test('transport failures answer the error body with the right status', async (t) => {
  const { client } = await start(t, handlers, 64)
  const malformed = await client.request('POST', '/widgets', {
    rawBody: '{"name": ',
    headers: { 'content-type': 'application/json' },
  })
  t.equal(malformed.status, 400)
  t.equal((malformed.body as { errorCode: string }).errorCode, 'MALFORMED_JSON')

  const big = await client.post('/widgets', { name: 'x'.repeat(100), size: '1' })
  t.equal(big.status, 413)
  t.equal((big.body as { errorCode: string }).errorCode, 'PAYLOAD_TOO_LARGE')

  const form = await client.request('POST', '/widgets', {
    rawBody: 'name=x',
    headers: { 'content-type': 'text/plain' },
  })
  t.equal(form.status, 415)
  t.equal((form.body as { errorCode: string }).errorCode, 'UNSUPPORTED_MEDIA_TYPE')

  const missing = await client.get('/nowhere')
  t.equal(missing.status, 404)
  t.equal((missing.body as { errorCode: string }).errorCode, 'ROUTE_NOT_FOUND')
  t.match((missing.body as { message: string }).message, 'GET /nowhere')

  const wrongMethod = await client.request('DELETE', '/widgets')
  t.equal(wrongMethod.status, 405)
  t.equal((wrongMethod.body as { errorCode: string }).errorCode, 'METHOD_NOT_ALLOWED')
  t.equal(wrongMethod.headers.allow, 'POST')

  const unbuilt = await client.get('/unbuilt')
  t.equal(unbuilt.status, 501)
  t.equal((unbuilt.body as { errorCode: string }).errorCode, 'NOT_IMPLEMENTED')
  t.match((unbuilt.body as { message: string }).message, 'unbuilt (GET /unbuilt)')
})

t.test(
  'handler errors: catalogued codes keep their status, anything else is a 500 that leaks nothing',
  async (t) => {
    const { client } = await start(t, handlers)
    const notFound = await client.get('/widgets/404')
    t.equal(notFound.status, 404)
    t.same(notFound.body, {
      message: 'No widget 404.',
      errorCode: 'REQUEST_NOT_FOUND',
      requestId: notFound.headers['x-request-id'],
    })
    const crash = await client.get('/widgets/500')
    t.equal(crash.status, 500)
    t.equal((crash.body as { errorCode: string }).errorCode, 'UNKNOWN_ERROR')
    t.notMatch(crash.text, 'hunter2', 'internal error text is not sent to the client')
  },
)

t.test('request ids and CORS', async (t) => {
  const { client, url } = await start(t, handlers)
  const echoed = await client.get('/widgets/5', { headers: { 'x-request-id': 'trace-abc.1' } })
  t.equal(echoed.headers['x-request-id'], 'trace-abc.1')
  const generated = await client.get('/widgets/5', { headers: { 'x-request-id': 'bad id with spaces' } })
  t.match(generated.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.equal(generated.headers['access-control-allow-origin'], '*')
  const preflight = await fetch(`${url}/widgets`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://app.example',
      'access-control-request-method': 'POST',
      // What the public swap widget's quote call sends (relay-kit-hooks' useQuote).
      'access-control-request-headers': 'content-type,relay-kit-ui-version,relay-sdk-version',
    },
  })
  t.equal(preflight.status, 204)
  const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').split(/,\s*/)
  for (const header of ['content-type', 'relay-sdk-version', 'relay-kit-ui-version'])
    t.ok(allowed.includes(header), `a preflight allows the ${header} header`)
})

t.test('documentation is served from installed packages', async (t) => {
  const { client } = await start(t, handlers)
  const page = await client.get('/documentation')
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], 'text/html')
  t.match(page.text, '/documentation/assets/swagger-ui-bundle.js')
  t.notMatch(page.text, /https?:\/\//, 'the page loads nothing from another origin')
  const bundle = await client.get('/documentation/assets/swagger-ui-bundle.js')
  t.equal(bundle.status, 200)
  t.ok(bundle.text.length > 100_000, 'the UI bundle is the real one')
  const init = await client.get('/documentation/assets/init.js')
  t.match(init.text, "url: '/documentation/openapi.json'")
  const json = await client.get('/documentation/openapi.json')
  t.equal((json.body as { info: { title: string } }).info.title, 'Widgets (test fixture)')
  const typeSync = await client.get('/documentation/json')
  t.equal(typeSync.status, 200, 'also where type-sync scripts fetch it')
  t.match(typeSync.headers['content-type'], 'application/json')
  t.same(typeSync.body, json.body)
  const yaml = await client.get('/documentation/openapi.yaml')
  t.match(yaml.text, 'openapi: 3.1.0')
  const traversal = await client.get('/documentation/assets/..%2f..%2fpackage.json')
  t.equal(traversal.status, 404, 'only the listed UI files are served')
})

t.test('start-up refuses handlers for operations the document does not have', async (t) => {
  const loaded = await loadOpenApiDocument(fixture)
  await t.rejects(
    createApiApp({
      loaded,
      logger: silentLogger,
      handlers: { deleteWidget: () => ({ status: 200, body: null }) },
    }),
    /handlers for operations not in .*: deleteWidget/,
  )
})

t.test('start-up refuses a document that is not valid OpenAPI 3.1', async (t) => {
  const { assertValidOpenApi31 } = await import('../src/document.js')
  await t.rejects(
    assertValidOpenApi31({ openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {} }, 'old.yaml'),
    /expected an OpenAPI 3.1 document/,
  )
  await t.rejects(
    assertValidOpenApi31({ openapi: '3.1.0', info: { title: 'x' } as never, paths: {} }, 'broken.yaml'),
    /broken.yaml is not a valid OpenAPI 3.1 document/,
  )
})

t.test('two apps on one metrics registry count into the same families', async (t) => {
  const loaded = await loadOpenApiDocument(fixture)
  const metrics = new Registry()
  const servers = []
  for (let i = 0; i < 2; i++) {
    const { koa } = await createApiApp({ loaded, handlers, logger: silentLogger, metrics })
    const server = await listen(koa, { port: 0 })
    t.teardown(() => server.close())
    servers.push(server)
  }
  for (const server of servers) {
    t.equal((await createTestClient(t, server.url, loaded.document).get('/widgets/12')).status, 200)
  }
  const counted = (await metrics.getSingleMetricAsString('pontis_http_requests_total'))
    .split('\n')
    .find((line) => line.startsWith('pontis_http_requests_total{operation="getWidget",status="200"'))
  t.match(counted, / 2$/, 'both apps counted their request in one family')
})

t.test(
  "an idle keep-alive connection outlives the clients' own idle timeout (the client closes first)",
  async (t) => {
    const { url } = await start(t, handlers)
    const { Agent, request } = await import('node:http')
    // A client keeping sockets longer than undici (4 s) and Node's old server default (5 s) do.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.teardown(() => agent.destroy())
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request(`${url}/widgets/1`, { agent }, (res) => {
          res.resume()
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }))
        })
        req.on('error', reject)
        req.end()
      })
    t.same(await get(), { status: 200, reused: false })
    await new Promise((resolve) => setTimeout(resolve, 7_000))
    t.same(await get(), { status: 200, reused: true }, 'the same socket still serves after 7 s idle')
  },
)
