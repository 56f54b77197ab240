/**
 * Rebalancing moves executed (issue 22) on the two-anvil devnet: two intent services, the "market"
 * (its own solver key, allocator and depositories, and its own inventory) and ours, whose USDC band
 * on chain B starts below its minimum and whose solver settings point `rebalance.apiUrl` at the
 * market. Our rebalancer plans a move in from chain A, quotes it at the market as a user of it (our
 * solver's accounts as user and recipient), sends the quote's origin steps from our solver's
 * account through our solver's jobs (`rebalance_step`), and follows the market's request to
 * `success`: the move is `done`, chain B's balance is back in its band by what the market filled,
 * chain A's went down by the deposit, and the budget caps the move. A quote the market refuses and
 * one dearer than `rebalance.maxFeeBps` fail the move and give its budget back (the band then waits
 * before another move). A move out of the SVM chain is executed too: the market's deposit item is
 * compiled again and signed by our solver's SVM key, which pays its fee, and the market fills it on
 * chain B. A move out of a venue (Lighter), whose plugin cannot send another API's step, stays
 * planned and says why. Every answer of `GET /admin/rebalances` is checked against
 * openapi/intents.yaml.
 */
import type { IntentsApi } from '@pontis/core'
import {
  devnetEnvironment,
  LIGHTER_DEVNET_CHAIN_ID,
  LIGHTER_USDC_CURRENCY_ID,
  SOLVER,
  STABLECOIN_ADDRESS,
  SVM_DEVNET_CHAIN_ID,
  SVM_SOLVER,
  SVM_STABLECOIN,
  svmAssociatedTokenAddress,
} from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import { Connection, PublicKey } from '@solana/web3.js'
import t from 'tap'
import { createIntentsRuntime } from '../src/index.js'
import { evmBalance } from './fixtures/e2e.js'
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

const ADMIN_TOKEN = 'rebalance-exec-admin-token-0123456789abcdef'
type Rebalances = IntentsApi.SolverRebalances

const { devnet, loaded, clientA, clientB } = await startRebalanceDevnet(t, {
  // A move out of the SVM chain (executed), and one out of a venue (not executable).
  svm: { port: 0, routesPort: 0, slotIntervalMs: 40 },
  lighter: { port: 0 },
})

const { lines, recording } = recordingLogs()

const market = await startRebalanceMarket(t, devnet, {
  document: loaded,
  logger: recording('market'),
  svm: true,
})
const configWith = (inventory: unknown[], rebalance: Record<string, unknown>): Promise<string> =>
  solverConfigWith(t, inventory, rebalance)

const usdcA0 = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
const usdcB0 = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
const marketB0 = await evmBalance(clientB, MARKET_SOLVER.address, STABLECOIN_ADDRESS)
// The move: what the budget allows, a tenth of what either side can spare.
const MOVE = (usdcA0 < marketB0 ? usdcA0 : marketB0) / 10n
const bands = [
  {
    chainId: 31337,
    currency: STABLECOIN_ADDRESS,
    minAmount: '0',
    targetAmount: '0',
    maxAmount: (usdcA0 * 4n).toString(),
  },
  {
    chainId: 31338,
    currency: STABLECOIN_ADDRESS,
    // Below its minimum by half a move; its target is two moves up, the budget one move.
    minAmount: (usdcB0 + MOVE / 2n).toString(),
    targetAmount: (usdcB0 + 2n * MOVE).toString(),
    maxAmount: (usdcB0 * 4n + 4n * MOVE).toString(),
    rebalanceBudget: MOVE.toString(),
    rebalancePeriodSeconds: 3600,
  },
]

const rebalances = (client: TestClient): Promise<Rebalances> => rebalancesOf(client, ADMIN_TOKEN)
const bandOf = (seen: Rebalances, chainId: number) => seen.bands.find((band) => band.chainId === chainId)

t.test('a band below its minimum is filled by a move quoted and executed at the market', async (t) => {
  const ours = await startRebalancingService(t, devnet, {
    configDir: await configWith(bands, { apiUrl: market.url }),
    adminToken: ADMIN_TOKEN,
    document: loaded,
    logger: recording('ours'),
  })
  const client = createTestClient(t, ours.url, loaded.document)
  const marketClient = createTestClient(t, market.url, loaded.document)

  const requested = await moveRequested('the start-up pass to request the move at the market', () =>
    rebalances(client),
  )
  t.same(requested.execution, { enabled: true, reason: null }, 'moves are executed')
  t.equal(
    bandOf(requested, 31338)?.status,
    'move_planned',
    'the start-up pass found the band below its minimum',
  )
  t.equal(bandOf(requested, 31338)?.balance, usdcB0.toString(), 'as it read the balance')
  const [move, ...others] = requested.moves
  t.equal(others.length, 0, 'one move')
  t.match(move, {
    fromChainId: 31337,
    toChainId: 31338,
    amount: MOVE.toString(),
    fromBalance: usdcA0.toString(),
    toBalance: usdcB0.toString(),
    state: 'requested',
    reason: null,
    received: null,
  })
  const moveId = move?.id as string
  const requestId = move?.requestId as string
  t.match(requestId, /^0x[0-9a-f]{64}$/, 'the market answered a request id')
  const planned = lines.find((line) => line.service === 'ours' && line.message === 'rebalance: move planned')
  const request = lines.find(
    (line) => line.service === 'ours' && line.message === 'rebalance: move requested',
  )
  t.equal(planned?.fields?.id, moveId, 'the move was planned first (logged)')
  t.match(request?.fields, { id: moveId, requestId, amountIn: MOVE.toString() }, 'then requested (logged)')
  const atMarket = (await marketClient.get(`/intents/status/v3?requestId=${requestId}`))
    .body as IntentsApi.StatusRecordV3
  t.equal(atMarket.originChainId, 31337, 'the request is the market’s')

  const done = await moveEnded(
    'the move to be done',
    () => rebalances(client),
    () => ours.rebalancer.tick(),
  )
  const finished = done.moves[0]
  t.equal(finished?.state, 'done', 'the market filled it')
  t.equal(done.moves.length, 1, 'still one move')
  const received = BigInt(finished?.received ?? '0')
  t.ok(received > 0n && received <= MOVE, 'what arrived: the move less the market’s fees')
  t.ok(received >= MOVE - MOVE / 100n, 'within rebalance.maxFeeBps (default 100)')

  const status = (await marketClient.get(`/intents/status/v3?requestId=${requestId}`))
    .body as IntentsApi.StatusRecordV3
  t.equal(status.status, 'success', 'the market says success')
  t.same(finished?.outTxHashes, status.txHashes, 'the move records the market’s fill')
  t.ok(
    status.inTxHashes.some((hash) => hash.toLowerCase() === finished?.inTxHashes.at(-1)?.toLowerCase()),
    'the market saw our deposit, the last transaction the move sent',
  )

  const usdcA = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
  const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
  t.equal(usdcA, usdcA0 - MOVE, 'the donor chain went down by the deposit')
  t.equal(usdcB, usdcB0 + received, 'the short chain went up by what arrived')
  t.ok(usdcB >= BigInt(bands[1]!.minAmount), 'and is back in its band')
  t.equal(
    await evmBalance(clientB, MARKET_SOLVER.address, STABLECOIN_ADDRESS),
    marketB0 - received,
    'paid by the market’s solver',
  )

  const { rows: jobs } = await ours.store.client.query<{ state: string; transaction_id: string }>(
    `SELECT state, transaction_id FROM solver_jobs WHERE kind = 'rebalance_step' ORDER BY id`,
  )
  t.equal(jobs.length, 2, 'the approval and the deposit went through our solver’s jobs')
  t.same(
    jobs.map((job) => job.state),
    jobs.map(() => 'confirmed'),
    'every step confirmed',
  )
  t.same(
    jobs.map((job) => job.transaction_id.toLowerCase()),
    finished?.inTxHashes.map((hash) => hash.toLowerCase()),
    'the move lists them in order',
  )
  t.ok(
    lines.some(
      (line) =>
        line.service === 'ours' && line.message === 'rebalance: move done' && line.fields?.id === moveId,
    ),
    'done is logged',
  )

  // The budget: the move took all of it (its target was two moves up); the band is in it now anyway.
  await ours.rebalancer.tick()
  const after = await rebalances(client)
  t.equal(bandOf(after, 31338)?.budgetUsed, MOVE.toString(), 'the move used the whole budget, no more')
  t.equal(bandOf(after, 31338)?.status, 'in_band', 'the band is back in it')
  t.equal(after.moves.length, 1, 'no second move')
})

t.test(
  'quotes the market refuses or that cost too much fail the move and give the budget back',
  async (t) => {
    const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
    const usdcA = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
    const short = (amount: bigint, budget: bigint) => [
      { ...bands[0], maxAmount: (usdcA * 4n).toString() },
      {
        chainId: 31338,
        currency: STABLECOIN_ADDRESS,
        minAmount: (usdcB + 1n).toString(),
        targetAmount: (usdcB + amount).toString(),
        maxAmount: (usdcB * 4n + amount).toString(),
        rebalanceBudget: budget.toString(),
      },
    ]
    const cases = [
      // One smallest unit is worth less than the market quotes (AMOUNT_TOO_LOW).
      {
        name: 'refused',
        inventory: short(1n, 1n),
        rebalance: { apiUrl: market.url },
        reason: /^quote refused: 4\d\d /,
      },
      // No fee at all allowed: every quote is too dear.
      {
        name: 'too dear',
        inventory: short(MOVE, MOVE),
        rebalance: { apiUrl: market.url, maxFeeBps: 0 },
        reason: /^quote not taken: .*rebalance\.maxFeeBps/,
      },
    ]
    for (const { name, inventory, rebalance, reason } of cases) {
      const runtime = await createIntentsRuntime({
        env: devnetEnvironment(devnet),
        configDir: await configWith(inventory, rebalance),
        logger: recording(name),
      })
      t.teardown(() => Promise.allSettled([runtime.store.close(), runtime.registry.close()]))
      t.equal(await runtime.rebalancer.tick(), 1, `${name}: one move planned`)
      const [move] = await runtime.rebalancer.moves()
      t.equal(move?.state, 'failed', `${name}: the move failed`)
      t.match(move?.reason, reason, `${name}: with the reason`)
      t.equal(move?.requestId, null, `${name}: nothing requested`)
      const { rows } = await runtime.store.client.query<{ keeps_budget: boolean }>(
        'SELECT keeps_budget FROM rebalances',
      )
      t.same(rows, [{ keeps_budget: false }], `${name}: nothing left the origin`)
      t.equal(await runtime.rebalancer.tick(), 0, `${name}: the next pass plans nothing at once`)
      const band = runtime.rebalancer.bands().find((candidate) => candidate.chainId === 31338)
      // The budget is one move: had the failed move kept it, the band would show it spent.
      t.equal(band?.budgetUsed, 0n, `${name}: the budget came back`)
      t.equal(band?.status, 'retry_later', `${name}: the band waits before another move`)
      t.ok(
        lines.some((line) => line.service === name && line.message === 'rebalance: move failed'),
        `${name}: logged`,
      )
    }
  },
)

t.test(
  "a move out of the SVM chain: the market's deposit item signed by our solver, filled on B",
  async (t) => {
    const connection = new Connection(devnet.svm?.rpcUrl as string, 'confirmed')
    const svmUsdc = async () => {
      const account = new PublicKey(svmAssociatedTokenAddress(SVM_SOLVER.address, SVM_STABLECOIN.address))
      return BigInt((await connection.getTokenAccountBalance(account)).value.amount)
    }
    const svmUsdc0 = await svmUsdc()
    const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
    const marketB = await evmBalance(clientB, MARKET_SOLVER.address, STABLECOIN_ADDRESS)
    const move = 50_000_000n
    const ours = await startRebalancingService(t, devnet, {
      configDir: await configWith(
        [
          // The only donor: the solver's SVM USDC, all of it above its target.
          {
            chainId: SVM_DEVNET_CHAIN_ID,
            currency: SVM_STABLECOIN.address,
            minAmount: '0',
            targetAmount: '0',
            maxAmount: (svmUsdc0 * 2n).toString(),
          },
          {
            chainId: 31338,
            currency: STABLECOIN_ADDRESS,
            minAmount: (usdcB + 1n).toString(),
            targetAmount: (usdcB + move).toString(),
            maxAmount: (usdcB * 4n).toString(),
            rebalanceBudget: move.toString(),
          },
        ],
        // An SVM deposit pays the market's origin costs too: a wider fee bound than an EVM move's.
        { apiUrl: market.url, maxFeeBps: 300 },
      ),
      adminToken: ADMIN_TOKEN,
      document: loaded,
      logger: recording('ours-svm'),
    })
    const client = createTestClient(t, ours.url, loaded.document)
    const done = await moveEnded(
      'the SVM move to be done',
      () => rebalances(client),
      () => ours.rebalancer.tick(),
    )
    const [finished, ...others] = done.moves
    t.equal(others.length, 0, 'one move')
    t.match(finished, {
      fromChainId: SVM_DEVNET_CHAIN_ID,
      toChainId: 31338,
      amount: move.toString(),
      state: 'done',
    })
    t.equal(finished?.inTxHashes.length, 1, 'one transaction sent on the SVM chain: the deposit')
    const received = BigInt(finished?.received ?? '0')
    t.ok(
      received > 0n && received >= move - (move * 300n) / 10_000n,
      'what arrived, within rebalance.maxFeeBps',
    )

    const signature = finished?.inTxHashes[0] as string
    const deposit = await connection.getTransaction(signature, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    })
    t.equal(deposit?.meta?.err, null, 'the deposit succeeded')
    t.equal(
      deposit?.transaction.message.staticAccountKeys[0]?.toBase58(),
      SVM_SOLVER.address,
      'our SVM solver paid its fee and signed it',
    )
    t.equal(await svmUsdc(), svmUsdc0 - move, 'the SVM chain went down by the deposit')
    t.equal(
      await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS),
      usdcB + received,
      'chain B up by what arrived',
    )
    t.equal(
      await evmBalance(clientB, MARKET_SOLVER.address, STABLECOIN_ADDRESS),
      marketB - received,
      'paid by the market’s solver',
    )
    const status = (
      await createTestClient(t, market.url, loaded.document).get(
        `/intents/status/v3?requestId=${finished?.requestId}`,
      )
    ).body as IntentsApi.StatusRecordV3
    t.match(status, { status: 'success', originChainId: SVM_DEVNET_CHAIN_ID }, 'the market says success')
    t.ok(status.inTxHashes.includes(signature), 'it saw our deposit')
    const { rows: jobs } = await ours.store.client.query<{ chain_id: number; state: string }>(
      `SELECT chain_id, state FROM solver_jobs WHERE kind = 'rebalance_step'`,
    )
    t.same(jobs, [{ chain_id: SVM_DEVNET_CHAIN_ID, state: 'confirmed' }], 'sent through our solver’s jobs')
  },
)

t.test(
  "a move out of a chain whose plugin cannot send a quote's step stays planned and says why",
  async (t) => {
    const usdcB = await evmBalance(clientB, SOLVER.address, STABLECOIN_ADDRESS)
    const runtime = await createIntentsRuntime({
      env: devnetEnvironment(devnet),
      configDir: await configWith(
        [
          // The only donor: the solver's USDC on the venue, all of it above its target.
          {
            chainId: LIGHTER_DEVNET_CHAIN_ID,
            currency: LIGHTER_USDC_CURRENCY_ID,
            minAmount: '0',
            targetAmount: '0',
            maxAmount: '1',
          },
          {
            chainId: 31338,
            currency: STABLECOIN_ADDRESS,
            minAmount: (usdcB + 1n).toString(),
            targetAmount: (usdcB + 1000n).toString(),
            maxAmount: (usdcB * 4n).toString(),
            rebalanceBudget: '1000',
          },
        ],
        { apiUrl: market.url },
      ),
      logger: recording('venue'),
    })
    t.teardown(() => Promise.allSettled([runtime.store.close(), runtime.registry.close()]))
    const marketRequests = async () =>
      (await market.store.client.query('SELECT id FROM requests')).rows.length
    const requestsBefore = await marketRequests()
    t.equal(await runtime.rebalancer.tick(), 1, 'a move is planned out of the venue')
    await runtime.rebalancer.tick()
    const [move] = await runtime.rebalancer.moves()
    t.match(move, {
      fromChainId: LIGHTER_DEVNET_CHAIN_ID,
      toChainId: 31338,
      state: 'planned',
      requestId: null,
    })
    t.equal(
      move?.reason,
      `not executed: the lvm plugin of chain ${LIGHTER_DEVNET_CHAIN_ID} cannot send a quote's step with the solver's key`,
      'it stays planned, saying why',
    )
    t.same(runtime.rebalancer.execution, { enabled: true, reason: null }, 'execution itself is on')
    t.equal(await marketRequests(), requestsBefore, 'the market was not asked for a quote')
  },
)
