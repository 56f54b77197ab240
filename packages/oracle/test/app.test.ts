import { networkInterfaces } from 'node:os'
import { loadRegistry, silentLogger } from '@pontis/core'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import {
  createOracleApp,
  createOracleMetrics,
  createSigner,
  DEFAULT_ORACLE_APP_CONFIG,
  ORACLE_DOCUMENT_PATH,
  resolveOraclePort,
} from '../src/index.js'

const loaded = await loadOpenApiDocument(ORACLE_DOCUMENT_PATH)
const registry = await loadRegistry({ env: {}, logger: silentLogger })
// Anvil's published account #0: a test key with a known address.
const TEST_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const TEST_SIGNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const signer = await createSigner({ module: 'raw-private-key', privateKey: TEST_KEY })
const app = await createOracleApp({
  registry,
  signer,
  logger: silentLogger,
  // Rate limiting has its own tests; here it would only get in the way.
  config: { ...DEFAULT_ORACLE_APP_CONFIG, rateLimit: { max: 10_000, windowMs: 1000 } },
  document: loaded,
})
const { operationIds } = app
// As the service serves it: the attestation routes without Koa.
const server = await listen(app, { port: 0 })
t.teardown(() => server.close())

type ErrorAnswer = { message: string; errorCode: string }

t.test('every operation of the document is routed', async (t) => {
  t.same([...operationIds].sort(), [
    'attestDepositoryDeposits',
    'attestDepositoryWithdrawals',
    'attestSolverFills',
    'attestSolverRefunds',
    'attestWithdrawalInitiated',
    'attestWithdrawalInitiation',
    'getDocumentation',
    'getLives',
    'getMetrics',
    'getOracleChains',
    'getReadyz',
  ])
})

t.test('/lives/v1 and /chains/v1', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const lives = await client.get('/lives/v1')
  t.equal(lives.status, 200)
  t.same(lives.body, { status: 'ok' })
  const chains = await client.get('/chains/v1')
  t.equal(chains.status, 200)
  const body = chains.body as {
    chains: Array<{
      id: number
      vmType: string
      depository?: string
      finality: { slowConfirmations: number }
    }>
    hub: { chainId: number; domain: { verifyingContract: string; chainId: number } }
    signer: string
  }
  t.same(
    body.chains.map((chain) => [chain.id, chain.vmType]),
    [
      [1337, 'hypevm'],
      [31337, 'evm'],
      [31338, 'evm'],
      [3586256, 'lvm'],
      [8253038, 'bvm'],
      [728126428, 'tvm'],
      [792703809, 'svm'],
    ],
  )
  t.same(
    [...new Set(body.chains.map((chain) => chain.vmType))].sort(),
    ['bvm', 'evm', 'hypevm', 'lvm', 'svm', 'tvm'],
    'six VM families behind one API',
  )
  t.equal(body.chains[1]?.depository, registry.chain(31337).record.protocol?.v2?.depository)
  t.equal(body.chains[1]?.finality.slowConfirmations, 1, 'finality comes from the chain adapter')
  t.equal(
    body.chains.find((chain) => chain.id === 728126428)?.finality.slowConfirmations,
    19,
    'Tron waits for solidity',
  )
  t.equal(body.signer, TEST_SIGNER, 'the signer address is derived from ECDSA_PRIVATE_KEY')
  t.equal(body.hub.domain.chainId, body.hub.chainId)
  t.equal(body.hub.domain.verifyingContract, registry.hub()?.oracleContract)
})

t.test('attestation routes validate their bodies before reading any chain', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const badMode = await client.post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: `0x${'12'.repeat(32)}`,
    mode: 'turbo',
  })
  t.equal(badMode.status, 400)
  t.match((badMode.body as ErrorAnswer).message, '`mode` (body)')
  const missing = await client.post('/attestations/solver-fills/v1', {})
  t.equal(missing.status, 400)
  t.match((missing.body as ErrorAnswer).message, '`order` (body) is required')
  const unknownChain = await client.post('/attestations/depository-deposits/v1', {
    chainId: 999,
    transactionId: `0x${'12'.repeat(32)}`,
  })
  t.equal(unknownChain.status, 400)
  t.equal((unknownChain.body as ErrorAnswer).errorCode, 'UNSUPPORTED_CHAIN')
  const badHash = await client.post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: '0x1234',
  })
  t.equal(badHash.status, 400)
  t.equal((badHash.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
  t.match((badHash.body as ErrorAnswer).message, 'not a transaction hash')
  const docs = await client.get('/documentation')
  t.equal(docs.status, 200)
  t.match(docs.headers['content-type'], 'text/html')
})

t.test('the attestation routes answer without Koa exactly what the Koa path answers', async (t) => {
  const viaKoa = await listen(app.koa, { port: 0 })
  t.teardown(() => viaKoa.close())
  const direct = createTestClient(t, server.url, loaded.document)
  const koa = createTestClient(t, viaKoa.url, loaded.document)
  const hash = `0x${'12'.repeat(32)}`
  const json = { 'content-type': 'application/json' }
  const cases: Array<[string, string, { rawBody: string; headers: Record<string, string> }]> = [
    [
      'bad mode',
      '/attestations/depository-deposits/v1',
      { rawBody: JSON.stringify({ chainId: 31337, transactionId: hash, mode: 'turbo' }), headers: json },
    ],
    ['missing order', '/attestations/solver-fills/v1', { rawBody: '{}', headers: json }],
    [
      'unknown chain',
      '/attestations/depository-deposits/v1',
      { rawBody: JSON.stringify({ chainId: 999, transactionId: hash }), headers: json },
    ],
    [
      'not a transaction hash',
      '/attestations/depository-deposits/v1',
      { rawBody: JSON.stringify({ chainId: 31337, transactionId: '0x1234' }), headers: json },
    ],
    [
      'unknown member',
      '/attestations/depository-withdrawals/v1',
      { rawBody: JSON.stringify({ chainId: 999, transactionId: hash, colour: 'red' }), headers: json },
    ],
    ['malformed JSON', '/attestations/withdrawal-initiation/v1', { rawBody: '{"chainId":', headers: json }],
    ['no body', '/attestations/withdrawal-initiated/v1', { rawBody: '', headers: json }],
    [
      'text/plain',
      '/attestations/solver-refunds/v1',
      { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
    ],
    [
      'over 256 KiB',
      '/attestations/depository-deposits/v1',
      { rawBody: JSON.stringify({ pad: 'x'.repeat(300_000) }), headers: json },
    ],
    [
      'trailing slash (Koa on both)',
      '/attestations/depository-deposits/v1/',
      { rawBody: '{}', headers: json },
    ],
  ]
  for (const [name, path, options] of cases) {
    const headers = { ...options.headers, 'x-request-id': `same-${name.replaceAll(/[^a-z]/g, '')}` }
    const [a, b] = await Promise.all([
      direct.request('POST', path, { ...options, headers }),
      koa.request('POST', path, { ...options, headers }),
    ])
    // One rate limiter counts both requests: its remaining count differs by one, so only its presence is compared.
    const comparable = (answer: typeof a) => ({
      status: answer.status,
      text: answer.text,
      headers: Object.fromEntries(
        Object.entries(answer.headers)
          .map(([header, value]) =>
            header === 'ratelimit' ? [header, value.replace(/;r=\d+/, ';r=N')] : [header, value],
          )
          .filter(([header]) => !['date', 'connection', 'keep-alive'].includes(header!)),
      ),
    })
    t.same(comparable(a), comparable(b), name)
    t.ok(a.status >= 400 && a.status < 500, `${name}: ${a.status}, a 4xx with a catalogued code`)
  }
})

t.test('port: HTTP_PORT, then PORT, then 3000', async (t) => {
  t.equal(resolveOraclePort({}), 3000)
  t.equal(resolveOraclePort({ PORT: '3100' }), 3100)
  t.equal(resolveOraclePort({ HTTP_PORT: '3200', PORT: '3100' }), 3200)
  t.throws(() => resolveOraclePort({ HTTP_PORT: '', PORT: '3100' }), /HTTP_PORT is set but empty/)
  t.throws(() => resolveOraclePort({ HTTP_PORT: 'x' }), /HTTP_PORT must be a port number/)
  t.throws(() => resolveOraclePort({ PORT: '-1' }), /PORT must be a port number/)
})

/** A non-loopback address of this host, to reach a server bound to every interface from outside loopback. */
function externalAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && !entry.internal)
  if (address === undefined) throw new Error('this test needs a network interface besides loopback')
  return address.family === 'IPv6' ? `[${address.address}]` : address.address
}

t.test('GET /metrics without METRICS_TOKEN: served to direct loopback connections only', async (t) => {
  const metrics = createOracleMetrics({ peers: ['http://peer.example'], paths: ['/attestations/x/v1'] })
  metrics.payloadDisagreement('/attestations/x/v1', 'local_outvoted')
  const app = await createOracleApp({
    registry,
    signer,
    logger: silentLogger,
    // One request per window: /metrics must not count against it.
    config: { ...DEFAULT_ORACLE_APP_CONFIG, rateLimit: { max: 1, windowMs: 60_000 } },
    document: loaded,
    metrics,
  })
  const everywhere = await listen(app, { port: 0, host: '0.0.0.0' })
  t.teardown(() => everywhere.close())
  const loopback = createTestClient(t, `http://127.0.0.1:${everywhere.port}`, loaded.document)
  for (let attempt = 0; attempt < 3; attempt++) {
    const scrape = await loopback.get('/metrics')
    t.equal(scrape.status, 200, `scrape ${attempt + 1} (exempt from the rate limit of 1)`)
    t.match(scrape.headers['content-type'], /^text\/plain; version=0\.0\.4/)
    t.match(
      scrape.text,
      'pontis_oracle_payload_disagreements_total{path="/attestations/x/v1",resolution="local_outvoted"} 1',
    )
    t.match(scrape.text, 'pontis_oracle_peer_responses_total{peer="http://peer.example",outcome="timeout"} 0')
    t.match(scrape.text, /process_cpu_seconds_total/, 'with the process metrics')
  }
  for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
    const proxied = await loopback.get('/metrics', { headers: { [header]: '203.0.113.7' } })
    t.equal(proxied.status, 404, `through a proxy (${header}): as if there were no such route`)
    t.equal((proxied.body as ErrorAnswer).errorCode, 'ROUTE_NOT_FOUND')
  }
  const outside = createTestClient(t, `http://${externalAddress()}:${everywhere.port}`, loaded.document)
  const remote = await outside.get('/metrics')
  t.equal(remote.status, 404, 'from a non-loopback address')
  t.equal(
    (remote.body as ErrorAnswer).message,
    'No route for GET /metrics. The API reference is at /documentation.',
    'the words of any unknown path',
  )
})

t.test(
  'GET /metrics with METRICS_TOKEN: the bearer token, compared in constant time, from anywhere',
  async (t) => {
    const token = 'metrics-token-0123456789abcdef'
    const app = await createOracleApp({
      registry,
      signer,
      logger: silentLogger,
      config: { ...DEFAULT_ORACLE_APP_CONFIG, metricsToken: token },
      document: loaded,
    })
    const running = await listen(app, { port: 0 })
    t.teardown(() => running.close())
    const client = createTestClient(t, running.url, loaded.document)
    const missing = await client.get('/metrics')
    t.equal(missing.status, 401, 'no token: 401 even on loopback')
    t.equal((missing.body as ErrorAnswer).errorCode, 'UNAUTHORIZED')
    t.equal((missing.body as ErrorAnswer).message, '/metrics needs Authorization: Bearer <METRICS_TOKEN>.')
    const wrong = await client.get('/metrics', { headers: { authorization: `Bearer ${token}x` } })
    t.equal(wrong.status, 401)
    t.equal((wrong.body as ErrorAnswer).message, 'The metrics token is wrong.')
    t.notMatch(JSON.stringify(wrong.body), token, 'the token is never echoed')
    const right = await client.get('/metrics', {
      headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.7' },
    })
    t.equal(right.status, 200, 'the right token is served whatever the route to it')
    t.match(right.text, /pontis_oracle_payload_disagreements_total/)
  },
)
