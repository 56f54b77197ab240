/**
 * The lifecycle under Tron chain faults (the Tron simulator behind its node API, anvil the other
 * side, HTTP only), caused through the Tron devnet's fault powers (packages/devnet/src/tron/faults.ts):
 * a deposit in a block forked away before it is solid is never acted on; one acted on before it is
 * solid (a lowered `slowConfirmations`) and then forked away cancels its queued fill, or is recorded
 * and counted when the fill went out; a fill forked away before it is solid, evicted from the
 * pool, or signed before a crash and not sent, is broadcast again as the same transaction and paid
 * once; one that expired (evicted, or signed before a crash and not sent) is signed again only once
 * a solid block is past its expiration; one whose node is unreachable for longer than `maxAttempts`
 * passes is never given up; two workers on one database fill at once, each request paid once; a node
 * lying about a block id is outvoted by two honest ones, and alone against one, nothing is trusted.
 */
import { type IntentsApi, type Logger, silentLogger } from '@pontis/core'
import {
  devnetEnvironment,
  STABLECOIN_ADDRESS,
  startDevnet,
  TRON_DEVNET_CHAIN_ID,
  TRON_SOLID_CONFIRMATIONS,
  TRON_SOLVER,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  type TronTransactionJson,
  tronSignTransaction,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import { type Address, createPublicClient, http, type PublicClient } from 'viem'
import { disagreements, FORGED_HASH, lyingNode } from '../../../test/helpers/lying-node.js'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { chainConfig } from './fixtures/chain-config.js'
import {
  failingNode,
  fillJob,
  type ReorgDetails,
  seen,
  settled,
  statusOf,
  warningsLogger,
} from './fixtures/chain-faults.js'
import { evmBalance, executeEvmSteps, freshIndexerPass } from './fixtures/e2e.js'
import { openTestSchema, querySchema, TEST_DATABASE_URL } from './fixtures/postgres.js'
import { processEnvironment, startServiceProcess } from './fixtures/service-process.js'

type Quote = IntentsApi.QuoteResponse
const TRON = TRON_DEVNET_CHAIN_ID
const EVM = 31337

t.setTimeout(6 * PROCESS_START_BOUND_MS)

const devnet = await startDevnet({
  chains: [{ chainId: EVM, port: 0 }],
  tron: { port: 0, blockIntervalMs: 0 },
})
t.teardown(() => devnet.stop())
const tron = devnet.tron as NonNullable<typeof devnet.tron>
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const evmChain = devnet.chains[0]!
const evmClient = createPublicClient({
  chain: evmChain.chain,
  transport: http(evmChain.rpcUrl),
}) as PublicClient
const evmUsdcBalance = (owner: Address): Promise<bigint> => evmBalance(evmClient, owner, STABLECOIN_ADDRESS)

const database = await openTestSchema(t, 'faultstron')
const { configDir, configure } = await chainConfig(t, 'pontis-faults-tron-')

/** The intent service on the configured chains and the shared PostgreSQL schema. */
const startOn = (workers: boolean, options: { solverIntervalMs?: number; logger?: Logger } = {}) =>
  startIntentsService({
    configDir,
    env: {
      ...devnetEnvironment(devnet),
      RATE_LIMITS: 'off',
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_SCHEMA: database.schema,
    },
    port: 0,
    logger: options.logger ?? silentLogger,
    document: loaded,
    workers,
    indexerIntervalMs: 150,
    solverIntervalMs: options.solverIntervalMs ?? 100,
    reorgCheckMs: 200,
  })

/** Quotes `amount` of Tron USDT to EVM USDC from bob, signs and broadcasts the deposit; answers its txID. */
async function depositFromTron(client: TestClient, amount: bigint) {
  const res = await client.post('/quote/v2', {
    user: TRON_USERS.bob.address,
    recipient: USERS[2]!.address,
    originChainId: TRON,
    destinationChainId: EVM,
    originCurrency: TRON_USDT_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: amount.toString(),
    tradeType: 'EXACT_INPUT',
  })
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  const item = quote.steps[0]?.items[0]?.data as unknown as { transaction: TronTransactionJson }
  const signed = tronSignTransaction(TRON_USERS.bob.privateKey, item.transaction)
  const accepted = (await fetch(`${tron.url}/wallet/broadcasttransaction`, {
    method: 'POST',
    body: JSON.stringify(signed),
  }).then((answer) => answer.json())) as { result?: boolean }
  if (accepted.result !== true) throw new Error(`broadcast refused: ${JSON.stringify(accepted)}`)
  return { quote, requestId: quote.steps[0]?.requestId as string, txId: signed.txID }
}

t.test(
  'a Tron deposit in a block forked away before it is solid: not acted on, waiting, then DEPOSIT_REORGED after the TTL',
  async (t) => {
    let clockOffset = 0
    const service = await startIntentsService({
      env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
      port: 0,
      logger: silentLogger,
      document: loaded,
      indexerIntervalMs: 150,
      solverIntervalMs: 100,
      reorgCheckMs: 200,
      now: () => Date.now() + clockOffset,
    })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const res = await client.post('/quote/v2', {
      user: TRON_USERS.bob.address,
      recipient: USERS[2]!.address,
      originChainId: TRON,
      destinationChainId: EVM,
      originCurrency: TRON_USDT_ADDRESS,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '30000000',
      tradeType: 'EXACT_INPUT',
    })
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    const transaction = quote.steps[0]?.items[0]?.data as unknown as { transaction: TronTransactionJson }
    const signed = tronSignTransaction(TRON_USERS.bob.privateKey, transaction.transaction)
    const accepted = await fetch(`${tron.url}/wallet/broadcasttransaction`, {
      method: 'POST',
      body: JSON.stringify(signed),
    }).then((answer) => answer.json() as Promise<{ result?: boolean }>)
    t.equal(accepted.result, true, 'broadcast')
    await tron.faults.mine(1)
    const indexed = await client.post('/transactions/index', { chainId: String(TRON), txHash: signed.txID })
    t.equal(indexed.status, 200, 'recorded in its block')
    // Forked away one block after it, well before it is solid.
    await tron.faults.mine(1)
    await tron.faults.reorg(2)
    const noted = await waitFor(
      'the record to note the forked-away deposit',
      () => statusOf(client, requestId),
      {
        until: (record) => (record.details as ReorgDetails | null)?.depositReorged !== undefined,
        describe: (record) => record && { status: record.status, details: record.details },
      },
    )
    t.equal(noted.status, 'waiting', 'the request waits again')
    t.equal((noted.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    // The replacing blocks become solid: still nothing to act on.
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    await freshIndexerPass(service)
    const { rows } = await service.store.client.query<{ fills: number }>(
      'SELECT count(*)::int AS fills FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.equal(rows[0]?.fills, 0, 'no fill queued')
    t.equal((await statusOf(client, requestId)).status, 'waiting')
    clockOffset = 2 * 86_400_000
    const failed = await waitFor('the request to fail', () => statusOf(client, requestId), {
      until: (record) => record.status === 'failure',
    })
    t.equal(failed.failReason, 'DEPOSIT_REORGED', 'after the TTL: failed, saying why')
  },
)

t.test('a Tron deposit above the high-value threshold waits for the deeper confirmation rule', async (t) => {
  const deeper = TRON_SOLID_CONFIRMATIONS + 4
  await configure([EVM, TRON], {
    [TRON]: {
      finality: {
        highValue: [{ currency: TRON_USDT_ADDRESS, above: '20000000', confirmations: deeper }],
      },
    },
  })
  const service = await startOn(true)
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const { requestId, txId } = await depositFromTron(client, 25_000_000n)
  await tron.faults.mine(1)
  t.equal((await client.post('/transactions/index', { chainId: String(TRON), txHash: txId })).status, 200)
  // Solid (19 blocks): enough for an ordinary deposit, not for this one.
  await tron.faults.mine(TRON_SOLID_CONFIRMATIONS - 1)
  await freshIndexerPass(service)
  t.equal((await statusOf(client, requestId)).status, 'waiting', 'solid, below the high-value depth: waiting')
  t.equal((await seen(service, requestId)).fills, 0, 'not acted on')
  await tron.faults.mine(deeper - TRON_SOLID_CONFIRMATIONS - 1)
  await freshIndexerPass(service)
  t.equal((await seen(service, requestId)).fills, 0, 'one block short: still not acted on')
  await tron.faults.mine(1)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success', 'acted on at the high-value depth')
})

t.test('a Tron deposit made before the first start is found from the configured start block', async (t) => {
  await configure([EVM, TRON])
  // The first start only quotes: no watcher has run, so it has no cursor yet.
  const quoting = await startOn(false)
  t.teardown(() => quoting.close())
  const { quote, requestId, txId } = await depositFromTron(
    createTestClient(t, quoting.url, loaded.document),
    12_000_000n,
  )
  await tron.faults.mine(1)
  const block = await tron.faults.head()
  await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 2)
  await quoting.close()
  await configure([EVM, TRON], { [TRON]: { indexer: { startBlock: String(block) } } })
  const service = await startOn(true)
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success', 'filled without a manual /transactions/index')
  t.ok(done.inTxHashes.includes(txId), 'from the deposit made before the start')
  t.ok(BigInt(quote.details.currencyOut.amount) > 0n)
})

/** Quotes EVM USDC to Tron USDT for `recipient` (alice), deposits as `user` on the EVM chain and indexes it. */
async function bridgeToTron(
  client: TestClient,
  user: (typeof USERS)[number],
  recipient: string = TRON_USERS.alice.address,
) {
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: EVM,
    destinationChainId: TRON,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: TRON_USDT_ADDRESS,
    amount: '25000000',
    tradeType: 'EXACT_INPUT',
  })
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  const txHash = await executeEvmSteps(evmChain, quote, user.privateKey)
  const indexed = await client.post('/transactions/index', { chainId: String(EVM), txHash })
  if (indexed.status !== 200) throw new Error(`index answered ${indexed.status}`)
  return { quote, requestId: quote.steps.at(-1)?.requestId as string }
}

/** Whether `txId` is in a block of the simulator's chain (not only in its pool). */
async function inBlock(txId: string): Promise<boolean> {
  const answer = (await fetch(`${tron.url}/wallet/gettransactioninfobyid`, {
    method: 'POST',
    body: JSON.stringify({ value: txId }),
  }).then((response) => response.json())) as { blockNumber?: number }
  return answer.blockNumber !== undefined
}

t.test(
  'a Tron fill forked away before it is solid is sent again, the same signed bytes, and paid once',
  async (t) => {
    await configure([EVM, TRON])
    const service = await startOn(true)
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = TRON_USERS.alice.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[0]!)
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    // No block timer: the fill waits in the pool until the test produces blocks.
    await waitFor('the fill to reach the pool', async () => (await tron.faults.pool()).includes(fill))
    await tron.faults.mine(2)
    t.ok(await inBlock(fill), 'the fill is in a block')
    t.equal((await statusOf(client, requestId)).status, 'submitted', 'two blocks of 19: not solid, submitted')
    // The fill's block and the one after it are replaced by a fork of two empty blocks.
    await tron.faults.reorg(2)
    t.notOk(await inBlock(fill), 'the fill is gone from the chain')
    t.equal(tron.usdtBalance(recipient) - before, 0n, 'and so is the payment')
    await waitFor('the solver to send the fill again', async () => (await tron.faults.pool()).includes(fill))
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.same(done.txHashes, [fill], 'the same signed bytes, in a block again')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

t.test(
  'a Tron fill forked away after it counted as final (a lowered slowConfirmations): recorded, counted, sent again, paid once',
  async (t) => {
    // Only below the default 19 can a block a fill counted in fork: here 1, final in its own block.
    await configure([EVM, TRON], { [TRON]: { plugin: { slowConfirmations: 1 } } })
    const service = await startOn(true)
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = TRON_USERS.bob.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[3]!, recipient)
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    await waitFor('the fill to reach the pool', async () => (await tron.faults.pool()).includes(fill))
    await tron.faults.mine(1)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'final in its own block')
    await tron.faults.reorg(1)
    t.notOk(await inBlock(fill), 'the fill is gone from the chain')
    t.equal(tron.usdtBalance(recipient) - before, 0n, 'and so is the payment')
    const noted = await waitFor(
      'the request to record the fill that went',
      () => statusOf(client, requestId),
      {
        until: (status) => (status.details as { fillReorged?: unknown } | null)?.fillReorged !== undefined,
      },
    )
    t.equal(noted.status, 'success', 'the status stays success')
    t.match(noted.details, { fillReorged: { transactionId: fill } }, 'details.fillReorged names the fill')
    await waitFor('the solver to send the same fill again', async () =>
      (await tron.faults.pool()).includes(fill),
    )
    await tron.faults.mine(1)
    t.ok(await inBlock(fill), 'the same signed bytes, in a block again')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
    t.match(
      (await client.get('/metrics')).text,
      new RegExp(`pontis_settled_transaction_reorgs_total\\{chain="${TRON}",kind="fill"\\} 1\\b`),
      'counted once',
    )
  },
)

t.test(
  'a Tron fill signed before a crash and not sent: the restarted service sends the same bytes, paid once',
  async (t) => {
    const crashDatabase = await openTestSchema(t, 'crashtron')
    const env = processEnvironment(devnet, crashDatabase.schema)
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill:after-sign' })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const recipient = TRON_USERS.alice.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[1]!)
    t.equal(await first.exited(), 'SIGKILL', 'the service died right after signing the fill')
    const [stored] = await querySchema<{ transaction_id: string }>(
      crashDatabase.schema,
      'SELECT transaction_id FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    const signed = stored?.transaction_id as string
    t.ok(signed, 'the signed fill was stored before the crash')
    t.notOk((await tron.faults.pool()).includes(signed), 'nothing was sent before the crash')

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const again = createTestClient(t, second.url, loaded.document)
    await waitFor('the stored fill to be sent', async () => (await tron.faults.pool()).includes(signed))
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    const done = await settled(again, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'the request survived the crash and was filled')
    t.same(done.txHashes, [signed], 'by the bytes signed before the crash')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

// Tron blocks fork only while they are not solid (19 blocks). A deposit is acted on once solid by
// default, so it can be forked away after it was acted on only where an operator lowers
// `plugin.slowConfirmations`: here 1, acted on in its own block.
const actOnInclusion = { [TRON]: { plugin: { slowConfirmations: 1 } } }

t.test(
  'a Tron deposit acted on before it is solid (slowConfirmations 1), forked away before the fill went out: the fill is cancelled',
  async (t) => {
    await configure([EVM, TRON], actOnInclusion)
    // The solver passes once at start and then not for an hour: the fill stays queued.
    const service = await startOn(true, { solverIntervalMs: 3_600_000 })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = USERS[2]!.address
    const { requestId, txId } = await depositFromTron(client, 10_000_000n)
    await tron.faults.mine(1)
    t.equal((await client.post('/transactions/index', { chainId: String(TRON), txHash: txId })).status, 200)
    await settled(client, requestId, ['pending'])
    t.equal((await seen(service, requestId)).fills, 1, 'acted on: the fill is queued')
    const before = await evmUsdcBalance(recipient)
    await tron.faults.reorg(1)
    const failed = await settled(client, requestId, ['failure', 'success', 'refund'])
    t.equal(failed.status, 'failure')
    t.equal(failed.failReason, 'DEPOSIT_REORGED')
    t.equal((failed.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    t.equal((failed.details as ReorgDetails).depositReorged?.transactionId, txId)
    const { rows } = await service.store.client.query<{ state: string }>(
      'SELECT state FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.equal(rows[0]?.state, 'failed', 'the fill job is cancelled')
    await service.solver.tick()
    t.equal(await evmUsdcBalance(recipient), before, 'nothing was paid')
    const metrics = await client.get('/metrics')
    t.match(
      metrics.text,
      new RegExp(`pontis_deposit_reorgs_total\\{chain="${TRON}",stage="before_fill"\\} [1-9]`),
    )
  },
)

t.test(
  'a Tron deposit acted on before it is solid (slowConfirmations 1), forked away after its fill: recorded and counted',
  async (t) => {
    await configure([EVM, TRON], actOnInclusion)
    const service = await startOn(true)
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const { requestId, txId } = await depositFromTron(client, 10_000_000n)
    await tron.faults.mine(1)
    const depositBlock = await tron.faults.head()
    t.equal((await client.post('/transactions/index', { chainId: String(TRON), txHash: txId })).status, 200)
    t.equal((await settled(client, requestId, ['success', 'failure', 'refund'])).status, 'success')
    await tron.faults.reorg(Number((await tron.faults.head()) - depositBlock + 1n))
    const noted = await waitFor(
      'the record to note the forked-away deposit',
      () => statusOf(client, requestId),
      {
        until: (record) => (record.details as ReorgDetails | null)?.depositReorged !== undefined,
        describe: (record) => record && { status: record.status, details: record.details },
      },
    )
    t.equal(noted.status, 'success', 'the fill was paid: the status stays')
    t.equal(
      (noted.details as ReorgDetails).depositReorged?.stage,
      'after_fill',
      'the record says the fill went out',
    )
    t.equal((noted.details as ReorgDetails).depositReorged?.transactionId, txId)
    const metrics = await client.get('/metrics')
    t.match(
      metrics.text,
      new RegExp(`pontis_deposit_reorgs_total\\{chain="${TRON}",stage="after_fill"\\} 1\\b`),
      'the operator sees it counted',
    )
  },
)

t.test(
  'a Tron fill evicted from the pool is broadcast again, the same transaction, and paid once',
  async (t) => {
    await configure([EVM, TRON])
    const service = await startOn(true)
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = TRON_USERS.alice.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[3]!)
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    await waitFor('the fill to reach the pool', async () => (await tron.faults.pool()).includes(fill))
    await tron.faults.dropTransaction(fill)
    t.equal(tron.usdtBalance(recipient) - before, 0n, 'evicted: nothing paid')
    await waitFor('the solver to broadcast the fill again', async () =>
      (await tron.faults.pool()).includes(fill),
    )
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.same(done.txHashes, [fill], 'the same transaction, in a block')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

t.test(
  'a Tron node lying about a block id: one to one nothing is trusted (waiting, no fill); two honest nodes outvote it, it is reported, the deposit is filled',
  async (t) => {
    // Another id for every block it is asked for by number.
    const liar = await lyingNode(t, tron.url, (call) => {
      if (!call.path.endsWith('/getblockbynum')) return undefined
      const block = JSON.parse(call.answer) as { blockID?: string }
      return block.blockID === undefined ? undefined : JSON.stringify({ ...block, blockID: FORGED_HASH })
    })
    await configure([EVM, TRON], { [TRON]: { rpc: { url: tron.url, fallbackUrls: [liar.url] } } })
    const oneToOne = warningsLogger()
    const twoNodes = await startOn(true, { logger: oneToOne.logger })
    t.teardown(() => twoNodes.close())
    const client = createTestClient(t, twoNodes.url, loaded.document)
    // The deposit's block comes after where the scan stands, so the scan records it.
    await waitFor('the Tron scan to stand somewhere', () => twoNodes.lifecycle.cursor(TRON))
    const { requestId, txId } = await depositFromTron(client, 11_000_000n)
    // Solid: the deposit would be acted on, were its block vouched for.
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    t.ok(await inBlock(txId), 'the deposit is in a block')
    await waitFor('the deposit to be recorded', async () => (await seen(twoNodes, requestId)).deposits === 1)
    await waitFor('the liar to be counted', async () => {
      return disagreements((await client.get('/metrics')).text, TRON) > 0
    })
    await freshIndexerPass(twoNodes)
    t.same(
      await seen(twoNodes, requestId),
      { deposits: 1, fills: 0 },
      'one honest node of two is no majority: no fill',
    )
    t.equal((await statusOf(client, requestId)).status, 'waiting')
    const read = await twoNodes.registry.chain(TRON).adapter.reading?.readDeposits(txId, { fresh: true })
    t.match(read, { state: 'pending', final: false, facts: [] }, 'the deposit reads as not in a block yet')
    const warned = oneToOne.warnings.find((line) => line.message.includes('another block hash'))
    t.equal(warned?.fields.node, new URL(liar.url).host, 'the log names the node by its host')
    t.notMatch(JSON.stringify(warned), /http:/, 'and not by its URL')
    await twoNodes.close()

    // A third node, honest: two of three agree, and the deposit is acted on.
    const honest = await lyingNode(t, tron.url, () => undefined)
    await configure([EVM, TRON], {
      [TRON]: { rpc: { url: tron.url, fallbackUrls: [liar.url, honest.url] } },
    })
    const threeNodes = await startOn(true)
    t.teardown(() => threeNodes.close())
    const api = createTestClient(t, threeNodes.url, loaded.document)
    const done = await settled(api, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'filled once a majority vouches for the block')
    t.same(await seen(threeNodes, requestId), { deposits: 1, fills: 1 }, 'filled once')
    t.ok(disagreements((await api.get('/metrics')).text, TRON) > 0, 'the outvoted liar is counted')
  },
)

t.test(
  'two workers on one database fill Tron requests at once: no nonce or coin to share, every request success, each paid once',
  async (t) => {
    await configure([EVM, TRON])
    // The first one runs the migrations; the second finds them applied.
    const first = await startOn(true)
    t.teardown(() => first.close())
    const second = await startOn(true)
    t.teardown(() => second.close())
    const workers = [first, second].map((worker) => createTestClient(t, worker.url, loaded.document))
    // Blocks on a timer, as on a live chain, while both solvers sign and send.
    await tron.faults.intervalMining(100)
    t.teardown(() => tron.faults.intervalMining(0))
    // The cases before this one share its database: their requests' repayments (paid to the solver
    // on Tron) are these workers' work too, and must land before the solver's balance is read.
    await waitFor('the earlier cases to be repaid', async () => {
      const { rows } = await first.store.client.query<{ open: number }>(
        "SELECT count(*)::int AS open FROM repayments WHERE state <> 'paid'",
      )
      return rows[0]?.open === 0
    })
    const recipients = [TRON_USERS.alice.address, TRON_USERS.bob.address]
    const before = recipients.map((recipient) => tron.usdtBalance(recipient))
    const solverBefore = tron.usdtBalance(TRON_SOLVER.address)
    // Each user's requests one after the other (its EVM nonces are its own), quoted at alternate
    // workers; both workers are told about each deposit, as racing clients would.
    const sent = (
      await Promise.all(
        USERS.map(async (user, userIndex) => {
          const mine: Array<{ requestId: string; recipient: string; output: bigint }> = []
          for (let index = 0; index < 2; index++) {
            const recipient = recipients[(userIndex + index) % 2] as string
            const res = await workers[(userIndex + index) % 2]!.post('/quote/v2', {
              user: user.address,
              recipient,
              originChainId: EVM,
              destinationChainId: TRON,
              originCurrency: STABLECOIN_ADDRESS,
              destinationCurrency: TRON_USDT_ADDRESS,
              amount: '20000000',
              tradeType: 'EXACT_INPUT',
            })
            if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
            const quote = res.body as Quote
            const txHash = await executeEvmSteps(evmChain, quote, user.privateKey)
            await Promise.all(
              workers.map((worker) => worker.post('/transactions/index', { chainId: String(EVM), txHash })),
            )
            mine.push({
              requestId: quote.steps.at(-1)?.requestId as string,
              recipient,
              output: BigInt(quote.details.currencyOut.amount),
            })
          }
          return mine
        }),
      )
    ).flat()
    const finals = await Promise.all(
      sent.map(({ requestId }, index) =>
        settled(workers[index % 2]!, requestId, ['success', 'failure', 'refund']),
      ),
    )
    t.same(
      finals.filter((record) => record.status !== 'success').map((record) => record.failReason),
      [],
      'every request succeeded',
    )
    const { rows: jobs } = await first.store.client.query<{
      transaction_id: string
      state: string
      replaced: unknown[]
    }>('SELECT transaction_id, state, replaced FROM solver_jobs WHERE job_key = ANY($1)', [
      sent.map(({ requestId }) => `fill:${requestId.toLowerCase()}`),
    ])
    t.equal(jobs.length, sent.length, 'one fill job per request')
    t.same(
      jobs.filter((job) => job.state !== 'confirmed' || job.replaced.length > 0),
      [],
      'every fill confirmed as first signed: none refused, none signed again',
    )
    t.equal(new Set(jobs.map((job) => job.transaction_id)).size, jobs.length, 'distinct transactions')
    for (const job of jobs)
      t.ok(await inBlock(job.transaction_id), `fill ${job.transaction_id} is in a block`)
    recipients.forEach((recipient, index) => {
      const owed = sent
        .filter((request) => request.recipient === recipient)
        .reduce((sum, request) => sum + request.output, 0n)
      t.equal(
        tron.usdtBalance(recipient) - (before[index] as bigint),
        owed,
        'each recipient paid once per request',
      )
    })
    t.equal(
      solverBefore - tron.usdtBalance(TRON_SOLVER.address),
      sent.reduce((sum, request) => sum + request.output, 0n),
      "the solver's USDT went down by exactly the outputs: nothing paid twice",
    )
  },
)

t.test(
  'a broadcast Tron fill followed for many passes is never given up when its node is unreachable: no refund, paid once',
  async (t) => {
    const node = await failingNode(t, tron.url)
    await configure([EVM, TRON], { [TRON]: { rpc: { url: node.url } } })
    const service = await startOn(true)
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = TRON_USERS.alice.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[0]!)
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    // No block timer: the fill waits in the pool, followed every pass.
    await waitFor('the fill to reach the pool', async () => (await tron.faults.pool()).includes(fill))
    // The node fails every call; the job has passed as often as a fill followed for a minute does
    // (every pass counts), more than `maxAttempts`.
    node.failing = true
    const jobKey = `fill:${requestId.toLowerCase()}`
    await service.store.client.query('UPDATE solver_jobs SET attempts = 100 WHERE job_key = $1', [jobKey])
    const failed = await waitFor(
      'a pass of the job with the node failing',
      () => fillJob(service, requestId),
      {
        until: (job) => job.attempts > 100 && job.lease_owner === null,
      },
    )
    t.equal(failed.state, 'broadcast', 'the job is still followed, not given up')
    t.equal((await statusOf(client, requestId)).status, 'submitted', 'no failure, no refund')
    node.failing = false
    // The failed pass put the next one off (backoff); bring it forward.
    await service.store.client.query('UPDATE solver_jobs SET not_before = 0 WHERE job_key = $1', [jobKey])
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.same(done.txHashes, [fill], 'the fill broadcast before the node failed')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

const expirationOf = (raw: string): number =>
  (JSON.parse(raw) as { raw_data: { expiration: number } }).raw_data.expiration

// Last: the clock it moves ahead stays ahead for the devnet's later blocks.
t.test(
  'an evicted Tron fill is signed again with a fresh reference block only once a solid block is past its expiration, and paid once',
  async (t) => {
    await configure([EVM, TRON], { [TRON]: { plugin: { expirationSeconds: 60 } } })
    const service = await startOn(true)
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = TRON_USERS.alice.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[2]!)
    const first = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    await waitFor('the fill to reach the pool', async () => (await tron.faults.pool()).includes(first))
    const expiration = expirationOf((await fillJob(service, requestId)).raw)

    // Evicted before it expires: the same transaction comes back, nothing is signed again.
    await tron.faults.dropTransaction(first)
    await waitFor('the same fill to be broadcast again', async () =>
      (await tron.faults.pool()).includes(first),
    )
    t.same((await fillJob(service, requestId)).replaced, [], 'not signed again before it expires')

    // Evicted again, and a block stamped past its expiration, in one turn of the event loop (the
    // in-process chain's methods are synchronous): the solver cannot send it again in between.
    tron.chain.dropTransaction(first)
    tron.chain.advanceClock(expiration - tron.chain.head.timestamp + 1000)
    tron.chain.mine(1)
    t.ok(tron.chain.head.timestamp >= expiration, 'the head block is stamped past the expiration')
    // A pass after that: the fill is refused as expired, but that block is not solid: nothing
    // proves it can never land, so nothing is signed.
    const passes = (await fillJob(service, requestId)).attempts
    await waitFor('a pass over the expired fill', () => fillJob(service, requestId), {
      until: (job) => job.attempts > passes && job.lease_owner === null,
    })
    t.same((await fillJob(service, requestId)).replaced, [], 'not signed again before the expiry is solid')
    t.notOk((await tron.faults.pool()).includes(first), 'the expired one is refused')
    t.equal((await statusOf(client, requestId)).status, 'submitted', 'still submitted')

    // The block past the expiration becomes solid: provably expired, signed again.
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS - 1)
    // The refused pass put the next one off (backoff); bring it forward.
    await service.store.client.query('UPDATE solver_jobs SET not_before = 0 WHERE job_key = $1', [
      `fill:${requestId.toLowerCase()}`,
    ])
    const replaced = await waitFor('the fill to be signed again', () => fillJob(service, requestId), {
      until: (job) => job.replaced.length > 0,
    })
    const second = replaced.transaction_id
    t.same(
      replaced.replaced.map((earlier) => earlier.transactionId),
      [first],
      'the expired one is the replaced one',
    )
    t.not(second, first, 'a new transaction')
    t.ok(expirationOf(replaced.raw) > tron.chain.head.timestamp, 'with a fresh expiration')
    // Stored, broadcast, then recorded on the request: the status shows it last.
    const resubmitted = await waitFor('the status to show the new txID', () => statusOf(client, requestId), {
      until: (record) => record.txHashes.includes(second),
      describe: (record) => record && { status: record.status, txHashes: record.txHashes },
    })
    t.equal(resubmitted.status, 'submitted', 'submitted with the new txID')
    t.ok((await tron.faults.pool()).includes(second), 'the new fill waits in the pool')
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.ok(done.txHashes.includes(second), 'filled by the new transaction')
    t.ok(await inBlock(second), 'the new one is in a block')
    t.notOk(await inBlock(first), 'the expired one never landed')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

// Last too: it moves the clock ahead again.
t.test(
  'a Tron fill signed before a crash, expired before it was sent: signed again after the restart, paid once',
  async (t) => {
    const crashDatabase = await openTestSchema(t, 'crashtronexpired')
    const env = processEnvironment(devnet, crashDatabase.schema)
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill:after-sign' })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const recipient = TRON_USERS.bob.address
    const before = tron.usdtBalance(recipient)
    const { quote, requestId } = await bridgeToTron(client, USERS[1]!, recipient)
    t.equal(await first.exited(), 'SIGKILL', 'the service died right after signing the fill')
    const [stored] = await querySchema<{ raw: string; transaction_id: string }>(
      crashDatabase.schema,
      'SELECT raw, transaction_id FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.ok(stored?.raw, 'the signed fill was stored before the crash')
    const signed = stored as NonNullable<typeof stored>
    t.notOk((await tron.faults.pool()).includes(signed.transaction_id), 'nothing was sent before the crash')
    // While the service is down, a block is stamped past the fill's expiration and becomes solid.
    await tron.faults.advanceClock(expirationOf(signed.raw) - tron.chain.head.timestamp + 1000)
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS)
    t.ok(
      (tron.chain.block(tron.chain.head.number - TRON_SOLID_CONFIRMATIONS + 1)?.timestamp ?? 0) >=
        expirationOf(signed.raw),
      'a solid block is stamped past the expiration',
    )

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const again = createTestClient(t, second.url, loaded.document)
    const resigned = await waitFor('a fill signed again to reach the pool', async () => {
      const record = await statusOf(again, requestId)
      const pool = await tron.faults.pool()
      return record.txHashes.find((hash) => hash !== signed.transaction_id && pool.includes(hash))
    })
    t.equal((await statusOf(again, requestId)).status, 'submitted', 'submitted with the new txID')
    await tron.faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
    const done = await settled(again, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'the request survived the crash and was filled')
    t.ok(await inBlock(resigned as string), 'by the fill signed again')
    t.notOk(await inBlock(signed.transaction_id), 'the expired one never landed')
    t.equal(
      tron.usdtBalance(recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)
