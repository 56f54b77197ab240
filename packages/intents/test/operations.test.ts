/**
 * Operating the intent service: `GET /metrics` counts a real bridge on the devnet in every family
 * it touches, and `GET /readyz` follows a chain's RPC and the database going away and coming back.
 * The chain RPC of 31338 and PostgreSQL are reached through loopback TCP relays the test stops and
 * restarts on the same port: the real anvil and the real PostgreSQL stay up for the other tests.
 */
import { once } from 'node:events'
import type { IntentsApi } from '@pontis/core'
import { silentLogger } from '@pontis/core'
import { devnetEnvironment, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import WebSocket from 'ws'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService, WS_SERVICE_RESTART } from '../src/index.js'
import { localConfigWith, metricSample as sample, startRelay } from './fixtures/operations.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'
import { sendDepositStep, startProcessDevnet } from './fixtures/service-process.js'

const NATIVE = '0x0000000000000000000000000000000000000000'

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const devnet = await startProcessDevnet(t)
const [chainA, chainB] = devnet.chains as [(typeof devnet.chains)[0], (typeof devnet.chains)[0]]
const rpcRelay = await startRelay({ host: '127.0.0.1', port: chainB.port })
const database = new URL(TEST_DATABASE_URL)
const dbRelay = await startRelay({ host: database.hostname, port: Number(database.port || 5432) })
t.teardown(() => Promise.all([rpcRelay.stop(), dbRelay.stop()]).then(() => undefined))
const relayedDatabase = new URL(TEST_DATABASE_URL)
relayedDatabase.port = String(dbRelay.port)
const schema = uniqueSchema('ops')
t.teardown(() => dropSchema(schema))

// The two EVM chains of the devnet only: the other families' chains are not started here.
const configDir = await localConfigWith(t, [31337, 31338])

const service = await startIntentsService({
  configDir,
  env: {
    ...devnetEnvironment(devnet),
    LOCAL_B_RPC_URL: `http://127.0.0.1:${rpcRelay.port}`,
    DATABASE_URL: relayedDatabase.toString(),
    DATABASE_SCHEMA: schema,
    RATE_LIMITS: 'off',
    READINESS_TIMEOUT_MS: '1000',
  },
  port: 0,
  document: loaded,
  logger: silentLogger,
  solverIntervalMs: 100,
  indexerIntervalMs: 200,
})
t.teardown(() => service.close())

const scrape = async (t: Test): Promise<string> => {
  const res = await createTestClient(t, service.url, loaded.document).get('/metrics')
  t.equal(res.status, 200, 'the loopback scraper is answered')
  return res.text
}

t.test('a bridge moves every family it touches, by the expected amounts', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const socket = new WebSocket(`${service.url.replace('http', 'ws')}/intents/ws`)
  await once(socket, 'open')
  const before = await scrape(t)
  t.equal(sample(before, 'pontis_websocket_clients'), 1, 'the open websocket is counted')

  const user = USERS[0]!
  const quote = await client.post('/quote/v2', {
    user: user.address,
    recipient: USERS[1]!.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '50000000000000000',
    tradeType: 'EXACT_INPUT',
  })
  t.equal(quote.status, 200)
  const refused = await client.post('/quote/v2', {
    user: user.address,
    recipient: user.address,
    originChainId: 999_999,
    destinationChainId: 31338,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '50000000000000000',
    tradeType: 'EXACT_INPUT',
  })
  const refusedCode = (refused.body as { errorCode: string }).errorCode
  t.equal(refused.status >= 400 && refused.status < 500, true, 'an unknown chain is a 4xx')
  const body = quote.body as IntentsApi.QuoteResponse
  const requestId = body.steps[0]!.requestId as string
  await sendDepositStep(chainA, user, body)
  let polls = 0
  await waitFor(
    'the request to succeed',
    async () => {
      polls++
      return (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as IntentsApi.StatusRecordV3
    },
    { until: (record) => record.status === 'success', describe: (record) => record?.status },
  )
  socket.close()
  await once(socket, 'close')
  const after = await waitFor('the websocket to be dropped from the count', () => scrape(t), {
    until: (text) => sample(text, 'pontis_websocket_clients') === 0,
  })
  const moved = (name: string, labels: Record<string, string> = {}) =>
    sample(after, name, labels) - sample(before, name, labels)

  t.equal(moved('pontis_http_requests_total', { operation: 'getQuoteV2', status: '200', error_code: '' }), 1)
  t.equal(
    moved('pontis_http_requests_total', {
      operation: 'getQuoteV2',
      status: String(refused.status),
      error_code: refusedCode,
    }),
    1,
    'the refusal is counted with its errorCode',
  )
  t.equal(
    moved('pontis_http_requests_total', { operation: 'getIntentStatusV3', status: '200', error_code: '' }),
    polls,
    'every status poll is counted on the direct path',
  )
  t.equal(moved('pontis_http_request_duration_seconds_count', { operation: 'getQuoteV2', status: '200' }), 1)
  t.equal(
    moved('pontis_quotes_total', {
      origin_chain: '31337',
      destination_chain: '31338',
      kind: 'quote',
      outcome: 'ok',
    }),
    1,
  )
  t.equal(
    moved('pontis_quotes_total', {
      origin_chain: 'other',
      destination_chain: '31338',
      kind: 'quote',
      outcome: refusedCode,
    }),
    1,
    'an unconfigured chain id never becomes a label',
  )
  t.equal(moved('pontis_requests', { status: 'success' }), 1)
  t.equal(moved('pontis_request_transitions_total', { from: 'waiting', to: 'pending' }), 1)
  t.equal(moved('pontis_request_transitions_total', { from: 'pending', to: 'submitted' }), 1)
  t.equal(moved('pontis_request_transitions_total', { from: 'submitted', to: 'success' }), 1)
  t.equal(moved('pontis_request_state_seconds_count', { status: 'waiting' }), 1)
  t.equal(moved('pontis_request_state_seconds_count', { status: 'submitted' }), 1)
  t.equal(moved('pontis_solver_jobs_total', { kind: 'fill', outcome: 'confirmed' }), 1)
  t.equal(moved('pontis_fill_seconds_count'), 1)
  t.ok(moved('pontis_rpc_calls_total', { chain: '31337', outcome: 'ok' }) > 0, 'calls to 31337 counted')
  t.ok(moved('pontis_rpc_calls_total', { chain: '31338', outcome: 'ok' }) > 0, 'calls to 31338 counted')
  t.ok(moved('pontis_rpc_call_duration_seconds_count', { chain: '31338' }) > 0)
  t.equal(sample(after, 'pontis_webhook_backlog'), 0, 'no webhook is waiting')
  t.notMatch(after, requestId.slice(2, 18), 'no request id in any label')
  t.notMatch(after.toLowerCase(), user.address.slice(2).toLowerCase(), 'no address in any label')
})

t.test('/metrics is for this host only without METRICS_TOKEN', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const proxied = await client.get('/metrics', { headers: { 'x-forwarded-for': '203.0.113.7' } })
  t.equal(proxied.status, 404, 'a request through a proxy sees no such route')
  t.equal((proxied.body as { errorCode: string }).errorCode, 'ROUTE_NOT_FOUND')
  const withBadKey = await client.get('/healthz', { headers: { 'x-api-key': 'pk_not-a-key' } })
  t.equal(withBadKey.status, 200, 'the probes take no API key, even a wrong one')
})

t.test('with METRICS_TOKEN, /metrics asks for the bearer token, from anywhere', async (t) => {
  const token = 'ops-test-metrics-token-0123456789'
  const guarded = await startIntentsService({
    configDir,
    env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off', METRICS_TOKEN: token },
    port: 0,
    document: loaded,
    logger: silentLogger,
    workers: false,
  })
  t.teardown(() => guarded.close())
  const client = createTestClient(t, guarded.url, loaded.document)
  const missing = await client.get('/metrics')
  t.equal(missing.status, 401)
  t.equal((missing.body as { errorCode: string }).errorCode, 'UNAUTHORIZED')
  const wrong = await client.get('/metrics', { headers: { authorization: `Bearer ${token}x` } })
  t.equal(wrong.status, 401)
  t.notMatch(wrong.text, token, 'the token is never echoed')
  const right = await client.get('/metrics', {
    headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.7' },
  })
  t.equal(right.status, 200, 'the right token is answered, through a proxy too')
  t.equal(
    sample(right.text, 'pontis_http_requests_total', {
      operation: 'getMetrics',
      status: '401',
      error_code: 'UNAUTHORIZED',
    }),
    2,
    'the two refused scrapes were counted',
  )
})

t.test('/readyz follows the chain RPC and the database', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const ready = await client.get('/readyz')
  t.equal(ready.status, 200)
  const readyBody = ready.body as IntentsApi.ReadinessResponse
  t.equal(readyBody.status, 'ready')
  t.same(
    readyBody.chains.map((chain) => [chain.chainId, chain.status]),
    [
      [31337, 'ok'],
      [31338, 'ok'],
    ],
  )
  t.match(readyBody.chains[0]?.head, /^[0-9]+$/, 'the EVM probe reports the block number')
  t.equal(readyBody.checks.migrations?.status, 'ok')

  await rpcRelay.stop()
  const stoppedAt = Date.now()
  const down = await waitFor('/readyz to answer 503', () => client.get('/readyz'), {
    until: (res) => res.status === 503,
  })
  t.ok(Date.now() - stoppedAt < 10_000, 'not ready within seconds of the RPC going away')
  const downBody = down.body as IntentsApi.ReadinessResponse
  t.equal(downBody.status, 'not_ready')
  t.equal(downBody.chains.find((chain) => chain.chainId === 31338)?.status, 'failing')
  t.equal(downBody.chains.find((chain) => chain.chainId === 31337)?.status, 'ok', 'the other chain is fine')
  t.notMatch(JSON.stringify(downBody), String(rpcRelay.port), 'the RPC URL is never shown')

  await rpcRelay.start()
  await waitFor('/readyz to answer 200 again', () => client.get('/readyz'), {
    until: (res) => res.status === 200,
  })

  await dbRelay.stop()
  const dbDown = await waitFor('/readyz to answer 503 without the database', () => client.get('/readyz'), {
    until: (res) => res.status === 503,
  })
  const dbBody = dbDown.body as IntentsApi.ReadinessResponse
  t.equal(dbBody.checks.database?.status, 'failing')
  t.equal(
    dbBody.chains.every((chain) => chain.status === 'ok'),
    true,
    'the chains are fine',
  )
  const live = await client.get('/healthz')
  t.equal(live.status, 200, 'the process is still live')

  await dbRelay.start()
  await waitFor('/readyz to answer 200 with the database back', () => client.get('/readyz'), {
    until: (res) => res.status === 200,
  })
})

t.test('shutdown: websocket clients are told to reconnect, then the port refuses', async (t) => {
  const socket = new WebSocket(`${service.url.replace('http', 'ws')}/intents/ws`)
  await once(socket, 'open')
  const closed = once(socket, 'close') as Promise<[number, Buffer]>
  t.equal(await service.shutdown({ timeoutMs: 10_000 }), true, 'finished within the bound')
  const [code, reason] = await closed
  t.equal(code, WS_SERVICE_RESTART, 'close code 1012')
  t.equal(reason.toString(), 'service restart')
  await t.rejects(fetch(`${service.url}/healthz`), 'a new connection is refused')
})
