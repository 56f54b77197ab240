/**
 * Quotes reserve the solver's liquidity, over HTTP on the real devnet: twenty concurrent
 * EXACT_OUTPUT stablecoin quotes against the solver's balance on the destination issue exactly as
 * many as that balance covers and refuse the rest with 400 INSUFFICIENT_LIQUIDITY, on one service
 * with PGlite and across two services sharing one PostgreSQL schema. When the quotes expire their
 * liquidity is available again. `GET /admin/inventory` and the `pontis_solver_liquidity` gauge show
 * balance, committed and available. Every answer is checked against openapi/intents.yaml.
 */
import type { IntentsApi } from '@pontis/core'
import { devnetEnvironment, SOLVER, STABLECOIN_ADDRESS, startDevnet, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestResponse } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import { createPublicClient, erc20Abi, http } from 'viem'
import { INTENTS_DOCUMENT_PATH, type IntentsService, startIntentsService } from '../src/index.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const ADMIN_TOKEN = 'liquidity-admin-token-0123456789'
const METRICS_TOKEN = 'liquidity-metrics-token-0123456789'
const TTL_SECONDS = 60
// The services' clock; moved forward to let the quotes lapse.
let skewMs = 0
const now = () => Date.now() + skewMs
const baseEnv = { ...devnetEnvironment(devnet), RATE_LIMITS: 'off', ADMIN_TOKEN, METRICS_TOKEN }
const start = (env: Record<string, string>): Promise<IntentsService> =>
  startIntentsService({ env, port: 0, document: loaded, workers: false, now })

const destination = devnet.chains[1]!
const solverBalance = await createPublicClient({ transport: http(destination.rpcUrl) }).readContract({
  address: STABLECOIN_ADDRESS,
  abi: erc20Abi,
  functionName: 'balanceOf',
  args: [SOLVER.address],
})
// Each quote pays out 15% of the solver's balance: six fit, the seventh would not.
const amount = (solverBalance * 15n) / 100n
const quoteBody = {
  user: USERS[0]!.address,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: STABLECOIN_ADDRESS,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: amount.toString(),
  tradeType: 'EXACT_OUTPUT',
  ttl: TTL_SECONDS,
}

type Client = ReturnType<typeof createTestClient>

/** Twenty quotes at once, spread over the services' clients; answers the issued and the refused. */
async function twentyQuotes(clients: readonly Client[]) {
  const answers: TestResponse[] = await Promise.all(
    Array.from({ length: 20 }, (_, index) => clients[index % clients.length]!.post('/quote/v2', quoteBody)),
  )
  const issued = answers
    .filter((answer) => answer.status === 200)
    .map((answer) => answer.body as IntentsApi.QuoteResponse)
  const refused = answers
    .filter((answer) => answer.status !== 200)
    .map((answer) => answer.body as IntentsApi.ErrorBody)
  return { issued, refused, answers }
}

async function scenario(t: Test, services: readonly IntentsService[]) {
  const clients = services.map((service) => createTestClient(t, service.url, loaded.document))
  const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }
  const { issued, refused, answers } = await twentyQuotes(clients)
  const paidOut = BigInt(issued[0]?.details.currencyOut.amount ?? '0')
  t.ok(paidOut >= amount, 'an EXACT_OUTPUT quote pays out at least the amount asked')
  const fitting = Number(solverBalance / paidOut)
  t.equal(fitting, 6, 'the balance covers six payouts')
  t.equal(issued.length, fitting, 'exactly the fitting number issued')
  t.same(
    refused.map((body) => body.errorCode),
    Array(20 - fitting).fill('INSUFFICIENT_LIQUIDITY'),
    'the rest refused with INSUFFICIENT_LIQUIDITY',
  )
  t.ok(
    answers.every((answer) => answer.status === 200 || answer.status === 400),
    'refusals are 400s',
  )
  t.match(refused[0]?.message, /promised to quotes and requests in flight/)

  const inventory = await clients[0]!.get('/admin/inventory', admin)
  t.equal(inventory.status, 200)
  const position = (inventory.body as IntentsApi.SolverInventory).positions.find(
    (one) => one.chainId === 31338 && one.currency.toLowerCase() === STABLECOIN_ADDRESS.toLowerCase(),
  )
  t.same(
    position && { balance: position.balance, committed: position.committed, available: position.available },
    {
      balance: solverBalance.toString(),
      committed: (paidOut * BigInt(fitting)).toString(),
      available: (solverBalance - paidOut * BigInt(fitting)).toString(),
    },
  )
  const unauthorized = await clients[0]!.get('/admin/inventory')
  t.equal(unauthorized.status, 401, 'operators only')

  const metrics = await clients
    .at(-1)!
    .get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  t.match(
    metrics.text,
    new RegExp(
      `pontis_solver_liquidity\\{chain="31338",currency="${position?.currency}",part="committed"\\} ${Number(paidOut * BigInt(fitting))}`,
    ),
    'the gauge shows the committed liquidity (read from the shared store by any instance)',
  )

  skewMs += TTL_SECONDS * 1000 + 1000
  const again = await twentyQuotes(clients)
  t.equal(again.issued.length, fitting, 'once the quotes expired, their liquidity is available again')
}

t.test('one service on PGlite', async (t) => {
  const service = await start(baseEnv)
  t.teardown(() => service.close())
  await scenario(t, [service])
})

t.test('two services on one PostgreSQL schema', async (t) => {
  const schema = uniqueSchema('liquidity_http')
  t.teardown(() => dropSchema(schema))
  const env = { ...baseEnv, DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema }
  // One first, so migrations run once.
  const first = await start(env)
  t.teardown(() => first.close())
  const second = await start(env)
  t.teardown(() => second.close())
  await scenario(t, [first, second])
})
