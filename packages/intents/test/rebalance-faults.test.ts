import type { IntentsApi } from '@pontis/core'
import { SOLVER, STABLECOIN_ADDRESS } from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import type { Hex } from 'viem'
import { PROCESS_START_BOUND_MS, within } from '../../../test/helpers/wait.js'
import { evmBalance } from './fixtures/e2e.js'
import { dropSchema, querySchema, uniqueSchema } from './fixtures/postgres.js'
import {
  MARKET_SOLVER,
  moveEnded,
  moveRequested,
  rebalancesOf,
  recordingLogs,
  solverConfigWith,
  startRebalanceDevnet,
  startRebalanceMarket,
  startRebalancingService,
} from './fixtures/rebalance-market.js'
import {
  processEnvironment,
  serviceWorkingDirectory,
  startServiceProcess,
} from './fixtures/service-process.js'

const ADMIN_TOKEN = 'rebalance-faults-admin-token-0123456789abcdef'
const NATIVE = '0x0000000000000000000000000000000000000000'
type Rebalances = IntentsApi.SolverRebalances

const { devnet, loaded, clientA, clientB } = await startRebalanceDevnet(t)

const { lines, recording } = recordingLogs()

// The market's clock: the refund test moves it past the quote's expiry.
let marketClockSkewMs = 0
const market = await startRebalanceMarket(t, devnet, {
  document: loaded,
  logger: recording('market'),
  now: () => Date.now() + marketClockSkewMs,
})
const marketClient = createTestClient(t, market.url, loaded.document)
const rebalances = (client: TestClient): Promise<Rebalances> => rebalancesOf(client, ADMIN_TOKEN)

/** Chain A (31337) gives, chain B (31338) is short of `currency` by half a move; the budget is one move. */
function bandsFor(currency: string, balanceA: bigint, balanceB: bigint, move: bigint) {
  return [
    { chainId: 31337, currency, minAmount: '0', targetAmount: '0', maxAmount: (balanceA * 4n).toString() },
    {
      chainId: 31338,
      currency,
      minAmount: (balanceB + move / 2n).toString(),
      targetAmount: (balanceB + 2n * move).toString(),
      maxAmount: (balanceB * 4n + 4n * move).toString(),
      rebalanceBudget: move.toString(),
      rebalancePeriodSeconds: 3600,
    },
  ]
}

t.test(
  'a SIGKILL right after the move’s deposit was sent: the restart finishes it, one deposit',
  async (t) => {
    const schema = uniqueSchema('rebalance_crash')
    t.teardown(() => dropSchema(schema))
    const move = 10n ** 18n
    const ethA0 = await clientA.getBalance({ address: SOLVER.address })
    const ethB0 = await clientB.getBalance({ address: SOLVER.address })
    const nonceA0 = await clientA.getTransactionCount({ address: SOLVER.address })

    const configDir = await solverConfigWith(t, bandsFor(NATIVE, ethA0, ethB0, move), { apiUrl: market.url })
    const root = await serviceWorkingDirectory(t, configDir)
    const env = { ...processEnvironment(devnet, schema), ADMIN_TOKEN }

    // The start-up pass plans the move, quotes it at the market and queues its one step (the deposit
    // of native ETH); the solver signs and stores it, sends it, and the process dies before recording
    // that it did.
    const first = await startServiceProcess(
      { ...env, PONTIS_FAILPOINT: 'rebalance_step:after-send' },
      { cwd: root },
    )
    t.teardown(() => first.stop())
    t.equal(
      await within('the first process to die at the failpoint', first.exited(), {
        timeoutMs: PROCESS_START_BOUND_MS,
        lastSeen: () => first.output(),
      }),
      'SIGKILL',
      'the process was killed after the deposit was sent',
    )
    const [moveRow] = await querySchema<{ id: string; state: string; request_id: string }>(
      schema,
      'SELECT id, state, request_id FROM rebalances',
    )
    t.equal(moveRow?.state, 'requested', 'the move was requested at the market before the crash')
    const [stepJob] = await querySchema<{ state: string; transaction_id: Hex }>(
      schema,
      `SELECT state, transaction_id FROM solver_jobs WHERE kind = 'rebalance_step'`,
    )
    t.equal(stepJob?.state, 'signed', 'the deposit was stored signed; its broadcast was never recorded')
    const sentBeforeCrash = stepJob?.transaction_id as Hex
    const receipt = await clientA.waitForTransactionReceipt({ hash: sentBeforeCrash })
    t.equal(receipt.status, 'success', 'yet it reached the chain')

    const second = await startServiceProcess(env, { cwd: root })
    t.teardown(() => second.stop())
    const client = createTestClient(t, second.url, loaded.document)
    const done = await moveEnded('the restarted service to finish the move', () => rebalances(client))
    const [finished, ...others] = done.moves
    t.equal(others.length, 0, 'one move')
    t.match(
      finished,
      { id: moveRow?.id, state: 'done', requestId: moveRow?.request_id, reason: null },
      'the same move, done',
    )
    t.same(
      finished?.inTxHashes.map((hash) => hash.toLowerCase()),
      [sentBeforeCrash.toLowerCase()],
      'the move lists the deposit signed before the crash, and nothing else',
    )
    const jobs = await querySchema<{ state: string; transaction_id: string }>(
      schema,
      `SELECT state, transaction_id FROM solver_jobs WHERE kind = 'rebalance_step'`,
    )
    t.same(
      jobs,
      [{ state: 'confirmed', transaction_id: sentBeforeCrash }],
      'its job confirmed, never signed again',
    )
    t.equal(
      await clientA.getTransactionCount({ address: SOLVER.address }),
      nonceA0 + 1,
      'the solver sent exactly one transaction on the donor chain',
    )
    const status = (await marketClient.get(`/intents/status/v3?requestId=${moveRow?.request_id}`))
      .body as IntentsApi.StatusRecordV3
    t.equal(status.status, 'success', 'the market filled the request')
    t.same(
      status.inTxHashes.map((hash) => hash.toLowerCase()),
      [sentBeforeCrash.toLowerCase()],
      'from the one deposit',
    )
    const received = BigInt(finished?.received ?? '0')
    t.ok(received > 0n && received >= move - move / 100n, 'what arrived: the move less at most 1 % of fees')
    t.equal(
      await clientB.getBalance({ address: SOLVER.address }),
      ethB0 + received,
      'the short chain went up by what arrived, once',
    )
    t.ok(
      (await clientA.getBalance({ address: SOLVER.address })) <= ethA0 - move,
      'the donor chain went down by the deposit (and its gas)',
    )
  },
)

t.test('a move the market refunds fails, gives its budget back, and the deposit comes back', async (t) => {
  const usdcA0 = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
  const usdcB0 = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
  const marketB0 = await evmBalance(clientB, MARKET_SOLVER.address, STABLECOIN_ADDRESS)
  // What either side can spare a tenth of (the market refuses what its solver cannot fill).
  const move = (usdcA0 < marketB0 ? usdcA0 : marketB0) / 10n
  const ours = await startRebalancingService(t, devnet, {
    configDir: await solverConfigWith(t, bandsFor(STABLECOIN_ADDRESS, usdcA0, usdcB0, move), {
      apiUrl: market.url,
    }),
    adminToken: ADMIN_TOKEN,
    document: loaded,
    logger: recording('ours'),
  })
  const client = createTestClient(t, ours.url, loaded.document)
  const requested = await moveRequested('the start-up pass to request the move', () => rebalances(client))
  const requestId = requested.moves[0]?.requestId as string
  t.equal(requested.moves[0]?.state, 'requested', 'quoted at the market')
  // From now on the market's clock is past the quote's expiry: our deposit is late there.
  marketClockSkewMs = 2 * 3_600_000
  t.teardown(() => {
    marketClockSkewMs = 0
  })

  const ended = await moveEnded(
    'the move to end',
    () => rebalances(client),
    () => ours.rebalancer.tick(),
  )
  const failed = ended.moves[0]
  t.equal(failed?.state, 'failed', 'the move failed')
  t.match(failed?.reason, /^the request was refunded: TTL_EXPIRED/, 'naming the market’s refund')
  t.equal(failed?.inTxHashes.length, 2, 'after its approval and deposit were sent')

  const status = (await marketClient.get(`/intents/status/v3?requestId=${requestId}`))
    .body as IntentsApi.StatusRecordV3
  t.equal(status.status, 'refund', 'the market refunded the request')
  t.equal(status.failReason, 'TTL_EXPIRED', 'because the deposit came after its expiry')
  t.equal(
    await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS),
    usdcA0,
    'the deposit is back on the donor chain, to the unit',
  )
  t.equal(
    await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS),
    usdcB0,
    'nothing arrived on the short chain',
  )
  const [stored] = await ours.store.client
    .query<{ keeps_budget: boolean }>('SELECT keeps_budget FROM rebalances')
    .then(({ rows }) => rows)
  t.equal(stored?.keeps_budget, false, 'the deposit came back, so the move keeps no budget')

  await ours.rebalancer.tick()
  const after = await rebalances(client)
  const band = after.bands.find((candidate) => candidate.chainId === 31338)
  t.equal(band?.budgetUsed, '0', 'the budget came back')
  t.equal(band?.status, 'retry_later', 'the band waits before another move')
  t.equal(after.moves.length, 1, 'no second move at once')
  t.ok(
    lines.some(
      (line) =>
        line.service === 'ours' &&
        line.message === 'rebalance: move failed' &&
        line.fields?.id === failed?.id &&
        line.fields?.budgetGivenBack === true,
    ),
    'the failure is logged, budget given back',
  )
})
