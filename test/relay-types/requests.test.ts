/**
 * Requests typed from Relay's published API types are accepted by the running service, not only by
 * the types (issue 18): every member of Relay's quote request, one at a time on a native bridge
 * between the devnet's anvil chains, on `/quote/v2`, `/quote` and `/price`; Relay's bodies for
 * `/transactions/index` and `/execute/permits`; every member of Relay's currency-route requests (issue
 * 26), with what relay-kit-ui 8.0.12 adds; the query parameters existing clients add. Each
 * answer is checked against openapi/intents.yaml; none may be a schema refusal (`INVALID_REQUEST`)
 * or name the member in `Ignored-Members`.
 */
import { silentLogger } from '@pontis/core'
import { devnetEnvironment, STABLECOIN_ADDRESS, startDevnet, USERS } from '@pontis/devnet'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestResponse } from '@pontis/http/testing'
import type { paths } from '@relayprotocol/relay-sdk'
import t from 'tap'
import {
  createIntentsApp,
  createIntentsRuntime,
  INTENTS_DOCUMENT_PATH,
} from '../../packages/intents/src/index.js'

type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never
type RelayBody<Path extends keyof paths> = paths[Path] extends { post: { requestBody?: infer Body } }
  ? JsonOf<NonNullable<Body>>
  : never
type RelayQuoteRequest = RelayBody<'/quote/v2'>
type RelayQuery<Path extends keyof paths> = paths[Path] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
const env = { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' }
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const runtime = await createIntentsRuntime({ env, logger: silentLogger })
const { koa } = await createIntentsApp({ ...runtime, document: loaded })
const server = await listen(koa, { port: 0 })
t.teardown(async () => {
  await server.close()
  await runtime.store.close()
  await runtime.registry.close()
  await devnet.stop()
})

const NATIVE = '0x0000000000000000000000000000000000000000'
const user = USERS[0]!.address
const minimal = {
  user,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: NATIVE,
  destinationCurrency: NATIVE,
  amount: '100000000000000000',
  tradeType: 'EXACT_INPUT',
} satisfies RelayQuoteRequest

/**
 * One value of Relay's type for every member of its quote request (`Required` makes the compiler
 * refuse a member left out), with the members a cross-field rule of the specs needs beside it.
 */
const everyMember: {
  [K in keyof Required<RelayQuoteRequest>]: [RelayQuoteRequest[K], Partial<RelayQuoteRequest>?]
} = {
  user: [user],
  recipient: [USERS[1]!.address],
  originChainId: [31337],
  destinationChainId: [31338],
  originCurrency: [NATIVE],
  destinationCurrency: [NATIVE],
  amount: ['100000000000000000'],
  tradeType: ['EXACT_OUTPUT'],
  txs: [[{ to: USERS[2]!.address, value: '0', data: '0x' }]],
  txsGasLimit: [100000, { txs: [{ to: USERS[2]!.address, value: '0', data: '0x' }] }],
  authorizationList: [
    [
      {
        chainId: 31338,
        address: USERS[2]!.address,
        nonce: 0,
        yParity: 1,
        r: '0x1b5e176d927f8e9ab405058b2d2457392da3e20f328b16ddabcebc33eaac5fea',
        s: '0x4ba69724e8f69de52f0125ad8b3c5c2cef33019bac3249e2c0a2192766d1721c',
      },
    ],
  ],
  additionalData: [{ userPublicKey: `02${'11'.repeat(32)}` }],
  referrer: ['relay.link/swap'],
  referrerAddress: [USERS[3]!.address],
  refundTo: [user],
  recoveryAddress: [user, { useDepositAddress: true }],
  refundOnOrigin: [true],
  topupGas: [false],
  topupGasAmount: ['2000000'],
  enableTrueExactOutput: [false],
  explicitDeposit: [true],
  useExternalLiquidity: [false],
  useFallbacks: [false],
  usePermit: [false],
  permitExpiry: [
    900,
    {
      usePermit: true,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '100000000',
    },
  ],
  includeProtocolData: [true],
  useDepositAddress: [true],
  strict: [true, { refundTo: user, useDepositAddress: true }],
  slippageTolerance: ['50'],
  latePaymentSlippageTolerance: ['100'],
  appFees: [[{ recipient: USERS[3]!.address, fee: '25' }]],
  gasLimitForDepositSpecifiedTxs: [100000],
  forceSolverExecution: [false],
  subsidizeFees: [false],
  sponsoredFeeComponents: [['execution', 'swap', 'relay', 'app'], { subsidizeFees: true }],
  maxSubsidizationAmount: ['5000000', { subsidizeFees: true }],
  subsidizeRent: [false],
  includedSwapSources: [['uniswap']],
  excludedSwapSources: [['curve']],
  includedOriginSwapSources: [['uniswap']],
  includedDestinationSwapSources: [['uniswap']],
  originGasOverhead: [
    50000,
    {
      usePermit: true,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '100000000',
    },
  ],
  depositFeePayer: [user],
  maxRouteLength: [3],
  useSharedAccounts: [false],
  includeComputeUnitLimit: [false],
  overridePriceImpact: [false],
  disableSwapProviderPreference: [false],
  disableOriginSwaps: [false],
  fixedRate: ['1'],
  ttl: [600],
}

/**
 * Members that this route cannot honour are refused with a catalogued code that says so (never
 * ignored, never a schema error): these are the codes each may get on an EVM native bridge.
 */
const REFUSED_ON_THIS_ROUTE: Partial<Record<keyof RelayQuoteRequest, string>> = {
  additionalData: 'UNSUPPORTED_ROUTE', // Bitcoin-origin data
  gasLimitForDepositSpecifiedTxs: 'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS', // no deposit-specified txs
  // Options of the SVM origin family.
  depositFeePayer: 'UNSUPPORTED_ROUTE',
  maxRouteLength: 'UNSUPPORTED_ROUTE',
  useSharedAccounts: 'UNSUPPORTED_ROUTE',
  includeComputeUnitLimit: 'UNSUPPORTED_ROUTE',
  // A same-asset bridge has no destination swap whose sources it could choose (a destination swap
  // fills another asset or an unlisted token: destination-swap-e2e.test.ts); the origin's sources
  // filter by includedSwapSources and the others, accepted wherever the origin has swap sources.
  includedDestinationSwapSources: 'UNSUPPORTED_ROUTE',
}

function codeOf(response: TestResponse): string | undefined {
  return (response.body as { errorCode?: string }).errorCode
}

for (const path of ['/quote/v2', '/quote', '/price'] as const) {
  t.test(`${path}: every member of Relay's quote request is accepted`, async (t) => {
    const client = createTestClient(t, server.url, loaded.document)
    for (const [member, [value, companions]] of Object.entries(everyMember)) {
      const body = { ...minimal, ...companions, [member]: value }
      const answer = await client.post(path, body)
      const code = codeOf(answer)
      t.not(code, 'INVALID_REQUEST', `${member}: not a schema refusal (${answer.status} ${code ?? ''})`)
      t.notMatch(answer.headers['ignored-members'] ?? '', member, `${member}: not ignored`)
      const refusal = REFUSED_ON_THIS_ROUTE[member as keyof RelayQuoteRequest]
      if (refusal) t.equal(code, refusal, `${member}: refused on this route with ${refusal}, as documented`)
      else
        t.equal(
          answer.status,
          200,
          `${member}: answered 200 (${code ?? ''} ${(answer.body as { message?: string }).message ?? ''})`,
        )
    }
  })
}

t.test("Relay's bodies for the index and execute routes, and the query members clients add", async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const quote = await client.post('/quote/v2', { ...minimal, referrer: 'relay.link' })
  t.equal(quote.status, 200)
  const requestId = (quote.body as { steps: Array<{ requestId: string }> }).steps[0]!.requestId

  const index = {
    chainId: '31337',
    txHash: `0x${'ab'.repeat(32)}`,
    requestId,
  } satisfies RelayBody<'/transactions/index'>
  const indexed = await client.post('/transactions/index', { ...index, referrer: 'relay.link' })
  t.not(
    codeOf(indexed),
    'INVALID_REQUEST',
    "Relay's index body (chain id as a string, request id) is accepted",
  )
  t.equal(indexed.headers['ignored-members'], undefined, 'and nothing of it is ignored')

  // Relay's execute body for a request that issued no permit: refused for what it is, not its shape.
  const permit = { kind: 'eip3009', requestId, api: 'bridge' } satisfies RelayBody<'/execute/permits'>
  const executed = await client.post(`/execute/permits?signature=0x${'11'.repeat(65)}`, {
    ...permit,
    referrer: 'relay.link',
  })
  t.equal(codeOf(executed), 'UNSUPPORTED_EXECUTION_TYPE', 'a kind the request did not issue is named as such')
  t.equal(
    executed.headers['ignored-members'],
    'body.referrer',
    "the SDK's own `referrer` is ignored and named",
  )

  const chains = await client.get('/chains?referrer=relay.link&includeChains=31337,31338')
  t.equal(chains.status, 200, "the SDK's chain loader: /chains?referrer=")
  t.equal((chains.body as { chains: unknown[] }).chains.length, 2)
  const status = await client.get(`/intents/status/v3?requestId=${requestId}&referrer=relay.link`)
  t.equal(status.status, 200, 'a check endpoint with the referrer the SDK appends')
  const unknown = await client.get(`/intents/status/v3?requestId=${requestId}&utm_source=partner`)
  t.equal(unknown.status, 200, 'an unknown query parameter is answered normally')
  t.equal(unknown.headers['ignored-members'], 'query.utm_source')
})

t.test(
  'a quote with every documented default filled in is accepted, as a generated client sends it',
  async (t) => {
    const client = createTestClient(t, server.url, loaded.document)
    const withDefaults = {
      ...minimal,
      tradeType: 'EXACT_INPUT',
      topupGasAmount: '2000000',
      enableTrueExactOutput: false,
      explicitDeposit: true,
      permitExpiry: 600,
    } satisfies RelayQuoteRequest
    const answer = await client.post('/quote/v2', withDefaults)
    t.equal(
      answer.status,
      200,
      `${codeOf(answer) ?? ''} ${(answer.body as { message?: string }).message ?? ''}`,
    )
    const stablecoin = await client.post('/price', {
      ...withDefaults,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '100000000',
    })
    t.equal(stablecoin.status, 200)
    const other = await client.post('/quote/v2', { ...minimal, topupGasAmount: '5000000' })
    t.equal(other.status, 400, 'a topupGasAmount other than the default still needs topupGas: true')
    t.match((other.body as { message: string }).message, 'topupGas')
  },
)

t.test("every member of Relay's currency-route requests, and what relay-kit-ui adds", async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  type CurrenciesRequest = RelayBody<'/currencies/v2'>
  // `Required` makes the compiler refuse a member of Relay's type left out here.
  const everyCurrencyMember: { [K in keyof Required<CurrenciesRequest>]: CurrenciesRequest[K] } = {
    defaultList: true,
    chainIds: [31337, 31338],
    term: 'usd',
    address: STABLECOIN_ADDRESS.toLowerCase(),
    currencyId: 'usdc',
    tokens: [`31337:${STABLECOIN_ADDRESS}`],
    verified: true,
    limit: 12,
    includeAllChains: true,
    useExternalSearch: true,
    depositAddressOnly: false,
  }
  for (const [member, value] of Object.entries(everyCurrencyMember)) {
    const answer = await client.post('/currencies/v2', { [member]: value, referrer: 'relay.link' })
    t.equal(answer.status, 200, `/currencies/v2 ${member}: 200 (${codeOf(answer) ?? ''})`)
    t.equal(answer.headers['ignored-members'], undefined, `${member} and the widget's referrer: none ignored`)
    t.ok((answer.body as unknown[]).length > 0, `${member}: lists currencies`)
  }
  const everything = await client.post('/currencies/v2', { ...everyCurrencyMember, referrer: 'relay.link' })
  const found = (everything.body as Array<{ chainId: number; symbol: string }>).map(
    (item) => `${item.chainId} ${item.symbol}`,
  )
  t.equal(found[0], '31337 USDC', 'all of them at once: the token named on its chain')
  t.ok(found.includes('31338 USDC'), 'then the same currency on the other chains (includeAllChains)')
  t.ok(
    found.every((item) => item.endsWith(' USDC')),
    'and nothing else',
  )

  const trending = {
    chainId: 31337,
    sortBy: 'relay24hBuyTxCount',
    limit: 5,
  } satisfies Required<RelayQuery<'/currencies/trending'>>
  const trendingQuery = new URLSearchParams({
    ...trending,
    chainId: '31337',
    limit: '5',
    referrer: 'relay.link',
  })
  const trendingAnswer = await client.get(`/currencies/trending?${trendingQuery}`)
  t.equal(
    trendingAnswer.status,
    200,
    `/currencies/trending with every member (${codeOf(trendingAnswer) ?? ''})`,
  )
  t.equal(trendingAnswer.headers['ignored-members'], undefined, 'none ignored')

  const price = {
    address: NATIVE,
    chainId: 31337,
  } satisfies Required<RelayQuery<'/currencies/token/price'>>
  const priceAnswer = await client.get(
    `/currencies/token/price?address=${price.address}&chainId=${price.chainId}&referrer=relay.link`,
  )
  t.equal(
    priceAnswer.status,
    200,
    `/currencies/token/price as the widget asks (${codeOf(priceAnswer) ?? ''})`,
  )
  t.type((priceAnswer.body as { price: unknown }).price, 'number', 'the price is the number Relay types')
  t.equal(priceAnswer.headers['ignored-members'], undefined, 'none ignored')
})
