/**
 * The shared browser set-up: headless Chromium from npm launches, and `recordTraffic` reports what the
 * browser tests fail on. A page on one loopback origin calls an "API" on another (a 2xx, a 404 with an
 * error body, a request refused by CORS) and shows an image from the API, one from a host outside
 * loopback and one from a data: URL; the recorder must list each where it belongs.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { describeExchange, launchChromium, recordTraffic } from './browser.js'
import { waitFor } from './wait.js'

t.setTimeout(300_000)

async function serve(t: Test, handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server: Server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

// A one-pixel PNG.
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
)

t.test('headless Chromium records what a page asks of the API and of the outside', async (t) => {
  const api = await serve(t, (request, response) => {
    const cors = { 'access-control-allow-origin': '*' }
    if (request.method === 'OPTIONS' && request.url !== '/no-cors') {
      response.writeHead(204, { ...cors, 'access-control-allow-headers': 'content-type' }).end()
      return
    }
    if (request.url === '/ok')
      response.writeHead(200, { ...cors, 'content-type': 'application/json' }).end('{"ok":true}')
    else if (request.url === '/icon.png')
      response.writeHead(200, { ...cors, 'content-type': 'image/png' }).end(PIXEL)
    // No CORS header: the browser refuses the answer, so the page sees no answer at all.
    else if (request.url === '/no-cors')
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    else
      response
        .writeHead(404, { ...cors, 'content-type': 'application/json' })
        .end('{"errorCode":"ROUTE_NOT_FOUND","message":"no such route"}')
  })
  const page$ = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><body>
      <img src="${api}/icon.png"><img src="https://assets.example.invalid/logo.png"><img src="data:image/png;base64,${PIXEL.toString('base64')}">
      <script>
        window.done = Promise.allSettled([
          fetch('${api}/ok'),
          fetch('${api}/missing', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"term":"ETH"}' }),
          fetch('${api}/no-cors'),
        ]).then(() => true)
      </script></body>`)
  })

  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const traffic = recordTraffic(page, [api])
  await page.goto(page$)
  await page.waitForFunction(() => (window as unknown as { done: Promise<boolean> }).done)
  await waitFor('the refused CORS request to be reported', () => traffic.apiFailures.length > 0)
  await waitFor('the outside image to be tried', () => traffic.offsite.length > 0)
  await traffic.settled()

  const answers = traffic.api
    .map((exchange) => `${exchange.method} ${exchange.path} ${exchange.status}`)
    .sort()
  t.same(
    answers,
    ['GET /icon.png 200', 'GET /ok 200', 'POST /missing 404'],
    'every answer of the API is recorded',
  )
  const missing = traffic.api.find((exchange) => exchange.path === '/missing')
  t.same(missing?.body, { errorCode: 'ROUTE_NOT_FOUND', message: 'no such route' }, 'an error body is parsed')
  t.equal(
    missing && describeExchange(missing),
    'POST /missing → 404 ROUTE_NOT_FOUND: no such route sent {"term":"ETH"}',
    'a refused answer is described with its code and what the page sent',
  )
  t.same(
    traffic.apiFailures.map((failure) => `${failure.method} ${failure.url}`),
    ['GET /no-cors'],
    'a request refused by CORS is a request without an answer',
  )
  t.same(
    traffic.foreignImages.map((image) => image.url),
    ['https://assets.example.invalid/logo.png'],
    'only the image from outside the API is foreign (data: URLs belong to the page)',
  )
  t.same(
    traffic.offsite.map((request) => `${request.resourceType} ${request.url}`),
    ['image https://assets.example.invalid/logo.png'],
    'the request that left loopback is reported',
  )
})
