import { ConfigError, type IntentsApi, type LogFields, type Logger, startupFailure } from '@pontis/core'
import { devnetEnvironment, SOLVER, STABLECOIN_ADDRESS, USERS } from '@pontis/devnet'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import { createIntentsRuntime, startIntentsService } from '../src/index.js'
import { evmBalance, executeEvmSteps } from './fixtures/e2e.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'
import { solverConfigWith, startRebalanceDevnet } from './fixtures/rebalance-market.js'

const ADMIN_TOKEN = 'rebalance-admin-token-0123456789abcdef'
const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }
type Rebalances = IntentsApi.SolverRebalances

const { devnet, loaded, chainA, clientA, clientB } = await startRebalanceDevnet(t)
const usdcA0 = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
const usdcB0 = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
const userUsdc = await evmBalance(clientA, USERS[0]!.address, STABLECOIN_ADDRESS)
// A fill the user can pay for (fees included) and the solver can make.
const FILL = (userUsdc < usdcB0 ? userUsdc : usdcB0) / 4n
// The destination's band: one fill of FILL takes it below its minimum. Its budget is half a fill.
const BUDGET = FILL / 2n

const configWith = (inventory: unknown[]): Promise<string> => solverConfigWith(t, inventory)

const lines: Array<{ level: string; message: string; fields: LogFields | undefined }> = []
const recording: Logger = {
  debug: () => {},
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  error: (message, fields) => lines.push({ level: 'error', message, fields }),
}

const configDir = await configWith([
  {
    chainId: 31337,
    currency: STABLECOIN_ADDRESS,
    minAmount: '0',
    targetAmount: (usdcA0 / 2n).toString(),
    maxAmount: (usdcA0 * 4n).toString(),
  },
  {
    chainId: 31338,
    currency: STABLECOIN_ADDRESS,
    minAmount: (usdcB0 - FILL / 2n).toString(),
    targetAmount: usdcB0.toString(),
    maxAmount: (usdcB0 * 2n).toString(),
    rebalanceBudget: BUDGET.toString(),
    rebalancePeriodSeconds: 3600,
  },
])
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off', ADMIN_TOKEN },
  configDir,
  port: 0,
  logger: recording,
  document: loaded,
  indexerIntervalMs: 150,
  solverIntervalMs: 100,
  // The pass runs once at start-up, then only when the test runs it.
  rebalanceIntervalMs: 3_600_000,
})
t.teardown(() => service.close())

const rebalances = async (client: ReturnType<typeof createTestClient>): Promise<Rebalances> =>
  (await client.get('/admin/rebalances', auth)).body as Rebalances
const bandOf = (seen: Rebalances, chainId: number) => seen.bands.find((band) => band.chainId === chainId)

t.test('a fill drives a band below its minimum; one move is planned in, within the budget', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  t.equal((await client.get('/admin/rebalances')).status, 401, 'the admin token is required')
  const first = await waitFor('the start-up pass', () => rebalances(client), {
    until: (seen) => seen.bands.length === 2,
    describe: (seen) => seen?.bands,
  })
  t.same(
    first.bands.map((band) => [band.chainId, band.status]),
    [
      [31337, 'in_band'],
      [31338, 'in_band'],
    ],
    'both balances start inside their bands',
  )
  t.same(first.moves, [], 'no move')

  const user = USERS[0]!
  const quote = (
    await client.post('/quote/v2', {
      user: user.address,
      recipient: USERS[3]!.address,
      originChainId: 31337,
      destinationChainId: 31338,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: FILL.toString(),
      tradeType: 'EXACT_OUTPUT',
    })
  ).body as IntentsApi.QuoteResponse
  const txHash = await executeEvmSteps(chainA, quote, user.privateKey)
  await client.post('/transactions/index', { txHash, chainId: '31337' })
  const requestId = quote.steps.at(-1)!.requestId as string
  await waitFor(
    'the bridge to be filled',
    async () =>
      (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as IntentsApi.StatusRecordV3,
    { until: (record) => record.status === 'success', describe: (record) => record?.status },
  )
  const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
  t.equal(usdcB, usdcB0 - FILL, 'the fill took USDC out of the destination')
  const usdcA = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)

  t.equal(await service.rebalancer.tick(), 1, 'one move planned')
  const planned = await rebalances(client)
  t.equal(bandOf(planned, 31338)?.status, 'move_planned')
  t.equal(bandOf(planned, 31338)?.balance, usdcB.toString(), 'the band shows the balance it read')
  t.equal(bandOf(planned, 31337)?.status, 'in_band', 'the donor stays in its band')
  const [move, ...others] = planned.moves
  t.equal(others.length, 0)
  t.match(move, {
    fromChainId: 31337,
    toChainId: 31338,
    state: 'planned',
    requestId: null,
    fromBalance: usdcA.toString(),
    toBalance: usdcB.toString(),
  })
  t.equal(move?.fromCurrency.toLowerCase(), STABLECOIN_ADDRESS.toLowerCase())
  t.same(
    planned.execution,
    { enabled: false, reason: 'not executed: the solver settings name no rebalance.apiUrl' },
    'moves are not executed without rebalance.apiUrl, and the answer says so',
  )
  t.equal(move?.reason, planned.execution.reason, 'the move says why it stays planned')
  t.equal(
    move?.amount,
    BUDGET.toString(),
    'what would bring it back to its target (a whole fill), capped by the budget (half a fill)',
  )
  t.equal(bandOf(planned, 31338)?.budgetUsed, BUDGET.toString(), 'the move took the whole budget')
  t.ok(
    lines.some((line) => line.message === 'rebalance: move planned' && line.fields?.id === move?.id),
    'the move is logged',
  )

  t.equal(await service.rebalancer.tick(), 0, 'a second pass plans nothing')
  const exhausted = await rebalances(client)
  t.equal(bandOf(exhausted, 31338)?.status, 'budget_exhausted', 'and says the budget is spent')
  t.equal(exhausted.moves.length, 1, 'still one move')
  const warning = lines.find((line) => line.message === 'rebalance: budget exhausted, no move')
  t.match(warning?.fields, { chainId: 31338, budget: BUDGET.toString(), used: BUDGET.toString() }, 'logged')
  const { rows } = await service.store.client.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM rebalances',
  )
  t.equal(rows[0]?.count, 1, 'one row in the books')
})

t.test("two instances sharing PostgreSQL plan a band's move once between them", async (t) => {
  const schema = uniqueSchema('rebalance')
  t.teardown(() => dropSchema(schema))
  const usdcA = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
  const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
  // The destination's minimum is above its balance: both instances see it below its band.
  const dir = await configWith([
    {
      chainId: 31337,
      currency: STABLECOIN_ADDRESS,
      minAmount: '0',
      targetAmount: '0',
      maxAmount: usdcA.toString(),
    },
    {
      chainId: 31338,
      currency: STABLECOIN_ADDRESS,
      minAmount: (usdcB + 1n).toString(),
      targetAmount: (usdcB + 1000n).toString(),
      maxAmount: (usdcB * 2n).toString(),
      rebalanceBudget: usdcB.toString(),
    },
  ])
  const env = {
    ...devnetEnvironment(devnet),
    RATE_LIMITS: 'off',
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
  }
  const first = await createIntentsRuntime({ env, configDir: dir, logger: recording })
  t.teardown(() => Promise.allSettled([first.store.close(), first.registry.close()]))
  const second = await createIntentsRuntime({ env, configDir: dir, logger: recording })
  t.teardown(() => Promise.allSettled([second.store.close(), second.registry.close()]))
  const planned = await Promise.all([
    first.rebalancer.tick(),
    second.rebalancer.tick(),
    first.rebalancer.tick(),
  ])
  t.equal(
    planned.reduce((sum, count) => sum + count, 0),
    1,
    'three concurrent passes of two instances plan one move',
  )
  const moves = await second.rebalancer.moves()
  t.equal(moves.length, 1)
  t.equal(moves[0]?.amount, 1000n, 'for what brings the band back to its target')
  t.same(await Promise.all([first.rebalancer.tick(), second.rebalancer.tick()]), [0, 0], 'no more later')
  t.same(
    [first, second].map(
      (runtime) => runtime.rebalancer.bands().find((band) => band.chainId === 31338)?.status,
    ),
    ['move_open', 'move_open'],
    'both see the move open',
  )
})

t.test(
  'a band above its maximum moves its excess out to the band with the most room below its target',
  async (t) => {
    const usdcA = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
    const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
    const runtimeWith = async (room: bigint, budget: bigint) => {
      const runtime = await createIntentsRuntime({
        env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
        configDir: await configWith([
          // Chain A: 5 000 above its maximum, 10 000 above its target.
          {
            chainId: 31337,
            currency: STABLECOIN_ADDRESS,
            minAmount: '0',
            targetAmount: (usdcA - 10_000n).toString(),
            maxAmount: (usdcA - 5_000n).toString(),
          },
          // Chain B: inside its band, `room` below its target.
          {
            chainId: 31338,
            currency: STABLECOIN_ADDRESS,
            minAmount: '0',
            targetAmount: (usdcB + room).toString(),
            maxAmount: (usdcB * 2n + room).toString(),
            rebalanceBudget: budget.toString(),
          },
        ]),
        logger: recording,
      })
      t.teardown(() => Promise.allSettled([runtime.store.close(), runtime.registry.close()]))
      return runtime
    }
    const statuses = (runtime: Awaited<ReturnType<typeof runtimeWith>>) =>
      runtime.rebalancer.bands().map((band) => [band.chainId, band.status])

    const roomy = await runtimeWith(3_000n, 1_000_000n)
    t.equal(await roomy.rebalancer.tick(), 1, 'one move planned out of the band above its maximum')
    const [move, ...others] = await roomy.rebalancer.moves()
    t.equal(others.length, 0)
    t.match(move, {
      fromChainId: 31337,
      toChainId: 31338,
      amount: 3_000n,
      fromBalance: usdcA,
      toBalance: usdcB,
      state: 'planned',
      reason: 'not executed: the solver settings name no rebalance.apiUrl',
    })
    t.same(
      statuses(roomy),
      [
        [31337, 'move_planned'],
        [31338, 'in_band'],
      ],
      'for what takes the receiver to its target, less than the excess',
    )
    t.equal(await roomy.rebalancer.tick(), 0, 'no second move while it is open')
    t.same(statuses(roomy)[0], [31337, 'move_open'])

    const capped = await runtimeWith(30_000n, 2_000n)
    t.equal(await capped.rebalancer.tick(), 1)
    t.equal((await capped.rebalancer.moves())[0]?.amount, 2_000n, "capped by the receiver's budget")

    const closed = await runtimeWith(3_000n, 0n)
    t.equal(await closed.rebalancer.tick(), 0, 'a receiver without budget takes nothing')
    t.same(statuses(closed)[0], [31337, 'budget_exhausted'], 'and the band says so')

    const full = await runtimeWith(0n, 1_000_000n)
    t.equal(await full.rebalancer.tick(), 0, 'no chain below its target: nothing to move to')
    t.same(statuses(full), [
      [31337, 'above'],
      [31338, 'in_band'],
    ])
  },
)

t.test('a band that cannot hold stops start-up naming the entry', async (t) => {
  const dir = await configWith([
    { chainId: 31338, currency: STABLECOIN_ADDRESS, minAmount: '10', targetAmount: '5', maxAmount: '20' },
  ])
  const error = await createIntentsRuntime({
    env: devnetEnvironment(devnet),
    configDir: dir,
    logger: recording,
  }).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  t.type(error, ConfigError)
  t.match(startupFailure(error), /inventory\[0\] needs minAmount <= targetAmount <= maxAmount/)
  const half = await configWith([
    { chainId: 31338, currency: STABLECOIN_ADDRESS, targetAmount: '5', minAmount: '1' },
  ])
  const halfError = await createIntentsRuntime({
    env: devnetEnvironment(devnet),
    configDir: half,
    logger: recording,
  }).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  t.type(halfError, ConfigError, 'minAmount without maxAmount is refused')
})
