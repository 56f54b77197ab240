/**
 * SIGTERM on a real service process: a slow request in flight (a readiness probe waiting on a chain
 * node that accepts connections and never answers) still gets its answer, new connections are
 * refused, websocket clients get close code 1012 (service restart), and the process exits 0 within
 * SHUTDOWN_TIMEOUT_MS.
 */
import { once } from 'node:events'
import { createServer, type Socket } from 'node:net'
import { devnetEnvironment } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import WebSocket from 'ws'
import { waitFor, within } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, WS_SERVICE_RESTART } from '../src/index.js'
import { startProcessDevnet, startServiceProcess } from './fixtures/service-process.js'

const SHUTDOWN_TIMEOUT_MS = 15_000
const READINESS_TIMEOUT_MS = 4_000

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const devnet = await startProcessDevnet(t)
// A node that takes connections and never answers: a readiness probe of it waits its whole bound.
const held = new Set<Socket>()
const silentNode = createServer((socket) => {
  held.add(socket)
  socket.on('error', () => undefined)
})
silentNode.listen(0, '127.0.0.1')
await once(silentNode, 'listening')
t.teardown(() => {
  for (const socket of held) socket.destroy()
  silentNode.close()
})
const silentPort = (silentNode.address() as { port: number }).port

const service = await startServiceProcess({
  ...devnetEnvironment(devnet),
  LOCAL_B_RPC_URL: `http://127.0.0.1:${silentPort}`,
  RATE_LIMITS: 'off',
  PONTIS_WORKERS: 'off',
  READINESS_TIMEOUT_MS: String(READINESS_TIMEOUT_MS),
  SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
})
t.teardown(() => service.stop())

t.test('SIGTERM drains a slow request, refuses new ones, sends 1012 and exits 0 in time', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const socket = new WebSocket(`${service.url.replace('http', 'ws')}/intents/ws`)
  await once(socket, 'open')
  const wsClosed = once(socket, 'close') as Promise<[number, Buffer]>

  const connectionsBefore = held.size
  const slow = client.get('/readyz')
  await waitFor('the readiness probe to reach the silent node', () => held.size, {
    until: (size) => size > connectionsBefore,
  })
  const signalledAt = Date.now()
  service.child.kill('SIGTERM')

  await waitFor(
    'new connections to be refused',
    () =>
      fetch(`${service.url}/healthz`).then(
        () => 'accepted',
        (error: Error) => String((error.cause as { code?: string } | undefined)?.code ?? error.message),
      ),
    { until: (outcome) => outcome === 'ECONNREFUSED' },
  )
  const answer = await slow
  t.equal(answer.status, 503, 'the request in flight got its whole answer')
  t.equal((answer.body as { status: string }).status, 'not_ready')

  const [code, reason] = await within('the websocket close frame', wsClosed, { timeoutMs: 10_000 })
  t.equal(code, WS_SERVICE_RESTART, 'websocket clients are told to reconnect (1012)')
  t.equal(reason.toString(), 'service restart')

  const how = await within('the process to exit', service.exited(), { timeoutMs: SHUTDOWN_TIMEOUT_MS + 5000 })
  t.equal(how, '0', 'exit code 0')
  t.ok(Date.now() - signalledAt < SHUTDOWN_TIMEOUT_MS, 'within SHUTDOWN_TIMEOUT_MS')
  t.match(service.output(), /SIGTERM: shutting down/)
})
