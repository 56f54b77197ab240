import { type ConfigError, silentLogger } from '@pontis/core'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import {
  createIntentsApp,
  createIntentsRuntime,
  INTENTS_DOCUMENT_PATH,
  readIntentsEnvironment,
  resolveIntentsPort,
} from '../src/index.js'

// Chain RPCs point at a closed port: this file checks the HTTP contract, not quoting (see quote-e2e).
const CLOSED = 'http://127.0.0.1:9'
const env = { LOCAL_A_RPC_URL: CLOSED, LOCAL_B_RPC_URL: CLOSED, RATE_LIMITS: 'off' }
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const runtime = await createIntentsRuntime({ env, logger: silentLogger })
const { registry, store } = runtime
const { koa, operationIds } = await createIntentsApp({ ...runtime, document: loaded })
const server = await listen(koa, { port: 0 })
t.teardown(async () => {
  await server.close()
  await store.close()
  await registry.close()
})

const USER = '0x03508bB71268BBA25ECaCC8F620e01866650532c'
const NATIVE = '0x0000000000000000000000000000000000000000'
const quote = {
  user: USER,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: NATIVE,
  destinationCurrency: NATIVE,
  amount: '1000000000000000',
  tradeType: 'EXACT_INPUT',
}

type ErrorAnswer = { message: string; errorCode: string; errorData?: string }

t.test('every operation of the document is routed', async (t) => {
  t.same([...operationIds].sort(), [
    'claimAppFees',
    'createApiKey',
    'deleteApiKeyWebhook',
    'executeAppFeeClaim',
    'executePermit',
    'getApiKey',
    'getAppFeeBalances',
    'getAppFeeClaims',
    'getChains',
    'getDashboard',
    'getDashboardAsset',
    'getDocumentation',
    'getHealthz',
    'getIcon',
    'getIntentStatus',
    'getIntentStatusV3',
    'getMetrics',
    'getPartnerKey',
    'getPartnerUsage',
    'getPrice',
    'getQuote',
    'getQuoteV2',
    'getRateLimitPolicy',
    'getReadyz',
    'getRequestsV2',
    'getRequestsV3',
    'getSolverInventory',
    'getSolverRebalances',
    'getSolverRepayments',
    'getSquareIcon',
    'getTokenPrice',
    'getTrendingCurrencies',
    'indexSameChainTransaction',
    'indexTransaction',
    'listApiKeys',
    'listCurrencies',
    'listPartnerWebhookEvents',
    'listWebhookDeadLetters',
    'redeliverPartnerWebhookEvent',
    'redeliverWebhookEvent',
    'revokeApiKey',
    'rotateApiKey',
    'sendPartnerTestWebhook',
    'setApiKeyWebhook',
    'setPartnerWebhook',
  ])
})

t.test('GET /chains answers the configured chains without private config', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const res = await client.get('/chains')
  t.equal(res.status, 200)
  const { chains } = res.body as { chains: Array<Record<string, unknown>> }
  t.same(
    chains.map((chain) => [chain.id, chain.vmType]),
    [
      [31337, 'evm'],
      [31338, 'evm'],
      [792703809, 'svm'],
      [8253038, 'bvm'],
      [3586256, 'lvm'],
      [1337, 'hypevm'],
      [728126428, 'tvm'],
    ],
  )
  t.same(
    [...new Set(chains.map((chain) => chain.vmType))].sort(),
    ['bvm', 'evm', 'hypevm', 'lvm', 'svm', 'tvm'],
    'six VM families behind one API',
  )
  for (const chain of chains) {
    t.notOk('rpc' in chain, `chain ${chain.id}: rpc settings stay private`)
    t.notOk('plugin' in chain, `chain ${chain.id}: plugin options stay private`)
    t.equal(typeof chain.id, 'number', 'chain ids are JSON numbers')
    t.type((chain.currency as { address: string }).address, 'string', 'every chain has a currency object')
  }
  const filtered = await client.get('/chains?includeChains=31338,999')
  t.same(
    (filtered.body as { chains: Array<{ id: number }> }).chains.map((chain) => chain.id),
    [31338],
  )
  const byFamily = await client.get('/chains?vmType=svm')
  t.same(
    (byFamily.body as { chains: Array<{ id: number }> }).chains.map((chain) => chain.id),
    [792703809],
  )
  const venue = await client.get('/chains?vmType=lvm')
  t.same(
    (venue.body as { chains: Array<{ id: number }> }).chains.map((chain) => chain.id),
    [3586256],
  )
  const noFamily = await client.get('/chains?vmType=tonvm')
  t.same((noFamily.body as { chains: unknown[] }).chains, [])
  const badFilter = await client.get('/chains?includeChains=base')
  t.equal(badFilter.status, 400)
  t.match((badFilter.body as ErrorAnswer).message, '`includeChains` (query)')
})

t.test(
  'quote requests are validated by the document, rules included, and each failure names the field',
  async (t) => {
    const client = createTestClient(t, server.url, loaded.document)
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['missing user', { ...quote, user: undefined }, 'user'],
      ['amount with decimals', { ...quote, amount: '1.5' }, 'amount'],
      ['unknown trade type', { ...quote, tradeType: 'EXACT' }, 'tradeType'],
      ['chain id as text', { ...quote, originChainId: '31337' }, 'originChainId'],
      ['slippage above 10000 bps', { ...quote, slippageTolerance: '10001' }, 'slippageTolerance'],
      [
        'late slippage not a number',
        { ...quote, latePaymentSlippageTolerance: 'abc' },
        'latePaymentSlippageTolerance',
      ],
      ['strict without refundTo', { ...quote, useDepositAddress: true, strict: true }, 'refundTo'],
      ['recoveryAddress without useDepositAddress', { ...quote, recoveryAddress: USER }, 'useDepositAddress'],
      [
        'recoveryAddress with useDepositAddress false',
        { ...quote, recoveryAddress: USER, useDepositAddress: false },
        'useDepositAddress',
      ],
      ['topupGasAmount without topupGas', { ...quote, topupGasAmount: '5000000' }, 'topupGas'],
      [
        'sponsoredFeeComponents without subsidizeFees',
        { ...quote, sponsoredFeeComponents: ['execution'] },
        'subsidizeFees',
      ],
      [
        'maxSubsidizationAmount without subsidizeFees',
        { ...quote, maxSubsidizationAmount: '1000000' },
        'subsidizeFees',
      ],
      [
        'duplicate sponsored components',
        { ...quote, subsidizeFees: true, sponsoredFeeComponents: ['swap', 'swap'] },
        'sponsoredFeeComponents',
      ],
      [
        'empty sponsored components',
        { ...quote, subsidizeFees: true, sponsoredFeeComponents: [] },
        'sponsoredFeeComponents',
      ],
      ['bad txs target', { ...quote, txs: [{ to: '0x12', value: '0', data: '0x' }] }, 'txs[0].to'],
      ['negative app fee', { ...quote, appFees: [{ recipient: USER, fee: '-5' }] }, 'appFees[0].fee'],
    ]
    for (const path of ['/quote/v2', '/quote', '/price']) {
      for (const [name, body, field] of cases) {
        const res = await client.post(path, JSON.parse(JSON.stringify(body)))
        t.equal(res.status, 400, `${path} ${name}: 400`)
        const error = res.body as ErrorAnswer
        t.equal(error.errorCode, 'INVALID_REQUEST', `${path} ${name}: error code`)
        t.match(error.message, `\`${field}\``, `${path} ${name}: the message names ${field}`)
      }
      // A misspelled member is not refused: ignored, and named so the caller sees the typo.
      const typo = await client.post(path, { ...quote, refundTO: USER })
      t.equal(typo.status, 503, `${path} misspelled field: answered as if absent (the RPC is closed here)`)
      t.equal(typo.headers['ignored-members'], 'body.refundTO', `${path} misspelled field: named`)
    }
  },
)

t.test('valid requests reach their operation', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const withRules = {
    ...quote,
    useDepositAddress: true,
    strict: true,
    refundTo: USER,
    recoveryAddress: USER,
    subsidizeFees: true,
    sponsoredFeeComponents: ['execution', 'rent'],
    maxSubsidizationAmount: '1000000',
    slippageTolerance: '10000',
  }
  for (const [path, body] of [
    ['/quote/v2', withRules],
    ['/quote', quote],
    ['/price', quote],
  ] as const) {
    const res = await client.post(path, body)
    t.equal(res.status, 503, `${path}: an unreachable chain RPC is a 503, not a 500`)
    const error = res.body as ErrorAnswer
    // The USD prices are read first, from the local feeds on chain 31337: with its RPC down no fresh
    // price is left, and the message says which source failed and why.
    t.equal(error.errorCode, 'PRICE_FETCH_FAILED')
    t.match(error.message, /Pontis Local [AB] \(3133[78]\)/, 'the message names the chain')
  }
  const requestId = '0x5e1f3b0f2f0e4f6b9c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f70819'
  for (const path of [
    `/intents/status/v3?requestId=${requestId}&referrer=app`,
    `/intents/status?requestId=${requestId}`,
  ]) {
    const res = await client.get(path)
    t.equal(res.status, 404, path)
    t.equal((res.body as ErrorAnswer).errorCode, 'REQUEST_NOT_FOUND')
  }
  const index = await client.post('/transactions/index', {
    txHash: `0x${'ab'.repeat(32)}`,
    chainId: '31337',
    referrer: 'app',
  })
  t.equal(index.status, 503, '/transactions/index on an unreachable chain is a 503')
  t.equal((index.body as ErrorAnswer).errorCode, 'RPC_HTTP_ERROR')
  const unknownChain = await client.post('/transactions/index', {
    txHash: `0x${'ab'.repeat(32)}`,
    chainId: 999,
  })
  t.equal(unknownChain.status, 400)
  t.equal((unknownChain.body as ErrorAnswer).errorCode, 'UNSUPPORTED_CHAIN')
})

t.test('transport-level mistakes', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const wrongMethod = await client.get('/quote/v2')
  t.equal(wrongMethod.status, 405)
  t.equal(wrongMethod.headers.allow, 'POST')
  const missingQuery = await client.get('/intents/status/v3')
  t.equal(missingQuery.status, 400)
  t.match((missingQuery.body as ErrorAnswer).message, '`requestId` (query) is required')
  const malformed = await client.request('POST', '/quote/v2', {
    rawBody: '{"user":',
    headers: { 'content-type': 'application/json' },
  })
  t.equal(malformed.status, 400)
  t.equal((malformed.body as ErrorAnswer).errorCode, 'MALFORMED_JSON')
  const huge = await client.post('/quote/v2', { ...quote, referrer: 'x'.repeat(300_000) })
  t.equal(huge.status, 413)
  const unknown = await client.get('/quotes')
  t.equal(unknown.status, 404)
  t.equal((unknown.body as ErrorAnswer).errorCode, 'ROUTE_NOT_FOUND')
  const docs = await client.get('/documentation')
  t.equal(docs.status, 200)
  t.match(docs.text, 'swagger-ui')
})

t.test(
  'GET /dashboard: the page, its bundle built on first use, a strict policy, and no other asset',
  async (t) => {
    const client = createTestClient(t, server.url, loaded.document)
    const page = await client.get('/dashboard')
    t.equal(page.status, 200)
    t.match(page.text, '<script type="module" src="/dashboard/assets/dashboard.js">')
    t.match(page.headers['content-security-policy'], "script-src 'self'")
    t.match(page.headers['content-security-policy'], "frame-ancestors 'none'")
    t.notOk(page.headers.ratelimit, 'the page itself is not rate limited')
    const script = await client.get('/dashboard/assets/dashboard.js')
    t.equal(script.status, 200)
    t.match(script.headers['content-type'], 'text/javascript')
    t.match(script.text, '/partner/webhook', 'the bundle is the dashboard’s')
    const styles = await client.get('/dashboard/assets/dashboard.css')
    t.match(styles.headers['content-type'], 'text/css')
    const other = await client.get('/dashboard/assets/..%2Fpackage.json')
    t.equal(other.status, 400, 'only the two assets are served')
    t.equal((other.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
  },
)

t.test('INTENTS_PORT decides the port', async (t) => {
  t.equal(resolveIntentsPort({}), 4000)
  t.equal(resolveIntentsPort({ INTENTS_PORT: '4100' }), 4100)
  t.throws(
    () => resolveIntentsPort({ INTENTS_PORT: 'http' }),
    /INTENTS_PORT must be a whole number from 0 to 65535/,
  )
  t.throws(() => resolveIntentsPort({ INTENTS_PORT: '70000' }), /INTENTS_PORT/)
})

t.test('the service variables are read once and every bad one is named', async (t) => {
  const read = readIntentsEnvironment({
    HOST: '0.0.0.0',
    TRUST_PROXY: 'true',
    DATABASE_URL: 'postgresql://pontis:secret@db:5432/pontis',
    DATABASE_SCHEMA: 'tenant_a',
    PONTIS_WORKERS: 'off',
    SOLVER_LEASE_MS: '2000',
    WEBHOOKS_ALLOW_HTTP_LOOPBACK: 'true',
    LOG_LEVEL: 'WARN',
    RATE_LIMITS: 'off',
  })
  t.match(read, {
    port: 4000,
    host: '0.0.0.0',
    trustProxy: true,
    databaseSchema: 'tenant_a',
    workers: false,
    solverLeaseMs: 2000,
    webhookLeaseMs: undefined,
    rateLimitPolicy: null,
    webhookPolicy: { allowHttpLoopback: true, allowPrivate: false },
  })
  const error = t.throws(() =>
    readIntentsEnvironment({ TRUST_PROXY: 'yes', WEBHOOK_TIMEOUT_MS: '0', DATABASE_URL: 'mysql://a@b/c' }),
  ) as ConfigError
  t.equal(error.name, 'ConfigError')
  t.match(
    error.oneLine(),
    /^3 settings of the intent service are invalid; TRUST_PROXY .*; DATABASE_URL .*; WEBHOOK_TIMEOUT_MS /,
  )
})

t.test('an unknown x-api-key is 401 UNAUTHORIZED, without echoing the key', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const res = await client.post('/quote/v2', quote, {
    headers: { 'x-api-key': 'pk_not-a-real-key-000000000000' },
  })
  t.equal(res.status, 401)
  t.equal((res.body as ErrorAnswer).errorCode, 'UNAUTHORIZED')
  t.notMatch(res.text, 'not-a-real-key')
})

t.test('rate limits are on by default: 429 with Retry-After and RateLimit headers', async (t) => {
  const limited = await createIntentsRuntime({
    env: { LOCAL_A_RPC_URL: CLOSED, LOCAL_B_RPC_URL: CLOSED },
    logger: silentLogger,
  })
  const app = await createIntentsApp({ ...limited, document: loaded })
  const limitedServer = await listen(app.koa, { port: 0 })
  t.teardown(async () => {
    await limitedServer.close()
    await limited.store.close()
    await limited.registry.close()
  })
  const client = createTestClient(t, limitedServer.url, loaded.document)
  let last = await client.get('/chains')
  t.match(last.headers.ratelimit, /r=\d+/, 'every limited answer carries RateLimit')
  t.ok(last.headers['ratelimit-policy'], 'and RateLimit-Policy')
  for (let count = 1; count < 200 && last.status !== 429; count++) last = await client.get('/chains')
  t.equal(last.status, 429, 'an anonymous caller is limited')
  t.ok(Number(last.headers['retry-after']) > 0, 'with Retry-After')
})
