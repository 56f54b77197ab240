/**
 * Repayment through the settlement hub (issue 22, item 1, second path), on the devnet: two anvil
 * chains with the real PontisOracleHub bytecode (hub on chain 31337), the oracle service over HTTP,
 * and the intent service with `repayment.path: "hub"`. A fill is repaid through the hub: the
 * oracle's deposit and fill attestations are relayed to the hub (the solver is credited there), the
 * solver's withdrawal is initiated on the hub, withdrawal-initiated is attested, checked and
 * recorded, and the withdrawal is paid out of the origin depository. The solver gets exactly what it
 * is owed, the depository loses exactly that, and a second pass pays nothing. A second case kills
 * the service (SIGKILL) after the initiation was relayed and attested but before the payout was
 * queued: the restarted service pays once.
 */
import { createLogger, type IntentsApi, silentLogger } from '@pontis/core'
import {
  DEPOSITORY_ADDRESS,
  devnetEnvironment,
  HUB_ORACLE_ADDRESS,
  ORACLE_SIGNER,
  pontisOracleHubAbi,
  SOLVER,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import { hubAccountKey, hubAssetKey, startOracleService, withdrawalAddressOf } from '@pontis/oracle'
import t from 'tap'
import { type Address, createPublicClient, type Hex, http, type PublicClient } from 'viem'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { evmBalance, executeEvmSteps } from './fixtures/e2e.js'
import { dropSchema, querySchema, uniqueSchema } from './fixtures/postgres.js'
import {
  indexBeforeFailpoint,
  processEnvironment,
  sendDepositStep,
  startServiceProcess,
} from './fixtures/service-process.js'

t.setTimeout(300_000)

const NATIVE = '0x0000000000000000000000000000000000000000'
const ADMIN_TOKEN = 'repayment-hub-e2e-admin-token-0123456789abcdef'
const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }
type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
type Books = IntentsApi.SolverRepayments

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const devnetEnv = devnetEnvironment(devnet)
const oracle = await startOracleService({
  env: {
    ...devnetEnv,
    ECDSA_PRIVATE_KEY: ORACLE_SIGNER.privateKey,
    UNAUTHENTICATED_RATE_LIMIT_MAX: '100000',
  },
  port: 0,
  host: '127.0.0.1',
  logger: silentLogger,
})
t.teardown(() => oracle.close())
const hubEnv = { REPAYMENT_PATH: 'hub', REPAYMENT_ORACLE_URL: oracle.url }
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const [chainA] = devnet.chains as [(typeof devnet.chains)[0]]
const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) }) as PublicClient

const quoteBody = (user: Address, amount: string) => ({
  user,
  recipient: USERS[3]!.address,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: NATIVE,
  destinationCurrency: NATIVE,
  amount,
  tradeType: 'EXACT_INPUT',
})

async function settle(client: TestClient, requestId: string): Promise<Status> {
  return waitFor(
    `request ${requestId} to be final`,
    async () => (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as Status,
    {
      until: (record) => ['success', 'failure', 'refund'].includes(record.status),
      describe: (record) => record && { status: record.status, failReason: record.failReason },
    },
  )
}

/** What the solver paid in gas on chain 31337 for the transactions `hashes`. */
async function gasOf(hashes: readonly string[]): Promise<bigint> {
  let total = 0n
  for (const hash of hashes) {
    const receipt = await clientA.getTransactionReceipt({ hash: hash as Hex })
    total += receipt.gasUsed * receipt.effectiveGasPrice
  }
  return total
}

const hubExecuted = (key: Hex) =>
  clientA.readContract({
    address: HUB_ORACLE_ADDRESS,
    abi: pontisOracleHubAbi,
    functionName: 'executed',
    args: [key],
  })

const hubBalance = (account: Hex, asset: Hex) =>
  clientA.readContract({
    address: HUB_ORACLE_ADDRESS,
    abi: pontisOracleHubAbi,
    functionName: 'balanceOf',
    args: [account, asset],
  })

/** The hub keys of the solver's account and of chain A's native currency (protocol chain ids from /chains). */
async function hubKeys(client: TestClient): Promise<{ solver: Hex; asset: Hex }> {
  const chains = (await client.get('/chains')).body as {
    chains: Array<{ id: number; name: string; protocol?: { v2?: { chainId?: string } } }>
  }
  const a = chains.chains.find((chain) => chain.id === 31337)!
  const protocolChainId = (a.protocol?.v2?.chainId ?? a.name) as string
  return {
    solver: hubAccountKey(protocolChainId, SOLVER.address.toLowerCase() as Hex),
    asset: hubAssetKey(protocolChainId, NATIVE),
  }
}

t.test('a fill is repaid through the hub: exactly what is owed, once', async (t) => {
  const service = await startIntentsService({
    env: { ...devnetEnv, ...hubEnv, RATE_LIMITS: 'off', ADMIN_TOKEN },
    port: 0,
    logger: process.env.DEBUG_HUB ? createLogger('intents') : silentLogger,
    document: loaded,
    indexerIntervalMs: 150,
    solverIntervalMs: 100,
    repaymentIntervalMs: 200,
  })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await service.close()
  }
  t.teardown(close)
  const client = createTestClient(t, service.url, loaded.document)
  const jobs = async (kind?: string) =>
    (
      await service.store.client.query<{ kind: string; state: string; transaction_id: string | null }>(
        `SELECT kind, state, transaction_id FROM solver_jobs WHERE chain_id = 31337 ${kind ? 'AND kind = $1' : ''} ORDER BY id`,
        kind ? [kind] : [],
      )
    ).rows

  const solverBefore = await evmBalance(clientA, SOLVER.address, NATIVE)
  const depositoryBefore = await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)
  const user = USERS[0]!
  const quote = (await client.post('/quote/v2', quoteBody(user.address, '100000000000000000'))).body as Quote
  const requestId = quote.steps.at(-1)!.requestId as string
  const amountIn = BigInt(quote.details.currencyIn.amount)
  const txHash = await executeEvmSteps(chainA, quote, user.privateKey)
  await client.post('/transactions/index', { txHash, chainId: '31337' })
  t.equal((await settle(client, requestId)).status, 'success', 'filled')
  t.equal(
    (await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)) - depositoryBefore,
    amountIn,
    'the depository holds the deposit',
  )

  const paid = await waitFor('the hub repayment to be paid', () => client.get('/admin/repayments', auth), {
    until: (answer) => (answer.body as Books).repayments.some((line) => line.state === 'paid'),
    describe: (answer) => answer?.body,
    timeoutMs: Number(process.env.DEBUG_HUB_TIMEOUT ?? 120_000),
  })
  const [line] = (paid.body as Books).repayments
  t.same(
    [line!.state, line!.count, line!.amount],
    ['paid', 1, amountIn.toString()],
    'the admin view says paid',
  )
  const [row] = (
    await service.store.client.query<{ path: string; hub_step: string; withdrawal_id: string }>(
      'SELECT path, hub_step, withdrawal_id FROM repayments WHERE request_id = $1',
      [requestId],
    )
  ).rows
  t.same([row!.path, row!.hub_step], ['hub', 'credited'], 'repaid through the hub')
  const [withdrawal] = (
    await service.store.client.query<{
      state: string
      request_hash: Hex
      initiated: { result: { withdrawalRequestHash: string; balance: string }; signatures: unknown[] }
    }>('SELECT state, request_hash, initiated FROM hub_withdrawals WHERE id = $1', [row!.withdrawal_id])
  ).rows
  t.ok(['paid', 'closed'].includes(withdrawal!.state), 'the withdrawal is paid')
  t.equal(
    withdrawal!.initiated.result.withdrawalRequestHash,
    withdrawal!.request_hash,
    'withdrawal-initiated is recorded',
  )
  t.equal(
    BigInt(withdrawal!.initiated.result.balance),
    amountIn,
    'the hub held the amount for the withdrawal',
  )
  t.equal(withdrawal!.initiated.signatures.length, 1, 'with the oracle signature that was checked')
  t.ok(await hubExecuted(withdrawal!.request_hash), 'the hub applied the initiation')
  const cleared = await waitFor(
    'the hub to clear the paid withdrawal',
    () =>
      service.store.client.query<{ state: string }>('SELECT state FROM hub_withdrawals WHERE id = $1', [
        row!.withdrawal_id,
      ]),
    { until: (result) => result.rows[0]?.state === 'closed', describe: (result) => result?.rows },
  )
  t.equal(cleared.rows[0]!.state, 'closed', 'the executed withdrawal was attested and relayed')
  // The hub applies a relay when it is mined; its job confirms once the relay is final.
  const relays = await waitFor('the relays to confirm', () => jobs('hub_relay'), {
    until: (seen) => seen.length === 4 && seen.every((job) => job.state === 'confirmed'),
    describe: (seen) => seen?.map((job) => job.state),
  })
  t.same(
    relays.map((job) => job.state),
    ['confirmed', 'confirmed', 'confirmed', 'confirmed'],
    'four relays: the deposit, the fill, the withdrawal initiation and the executed withdrawal',
  )
  const { solver, asset } = await hubKeys(client)
  t.equal(await hubBalance(solver, asset), 0n, "the solver's hub credit is all withdrawn")
  const withdrawalAccount = hubAccountKey(
    'pontis-local-a',
    withdrawalAddressOf(withdrawal!.request_hash).toLowerCase() as Hex,
  )
  t.equal(
    await hubBalance(withdrawalAccount, asset),
    0n,
    'the hub burnt what it held for the paid withdrawal',
  )

  const all = await jobs()
  t.equal(all.filter((job) => job.kind === 'repayment').length, 1, 'one depository payout')
  const gas = await gasOf(all.map((job) => job.transaction_id!))
  t.equal(
    (await evmBalance(clientA, SOLVER.address, NATIVE)) - solverBefore + gas,
    amountIn,
    "the solver's balance on the origin chain rose by exactly what it was owed (less the gas of its relays and payout)",
  )
  t.equal(
    await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE),
    depositoryBefore,
    'the depository paid out exactly that',
  )

  const solverAfter = await evmBalance(clientA, SOLVER.address, NATIVE)
  await service.repayments.tick()
  await service.repayments.tick()
  t.same((await jobs()).length, all.length, 'further passes queue nothing')
  t.equal(await evmBalance(clientA, SOLVER.address, NATIVE), solverAfter, 'and pay nothing')
  // Its solver key is the crash test's: nothing of this service may send beside it.
  await close()
})

t.test('SIGKILL after the initiation is relayed, before the payout is queued: paid once', async (t) => {
  const schema = uniqueSchema('hub_repay_crash')
  t.teardown(() => dropSchema(schema))
  const env = { ...processEnvironment(devnet, schema), ...hubEnv }
  const solverBefore = await evmBalance(clientA, SOLVER.address, NATIVE)
  const depositoryBefore = await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)
  const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'hub_withdrawal:withdrawal-initiated' })
  t.teardown(() => first.stop())
  const client = createTestClient(t, first.url, loaded.document)
  const user = USERS[1]!
  const quote = (await client.post('/quote/v2', quoteBody(user.address, '50000000000000000'))).body as Quote
  const amountIn = BigInt(quote.details.currencyIn.amount)
  const hash = await sendDepositStep(chainA, user, quote)
  await indexBeforeFailpoint(client, hash)

  t.equal(await first.exited(), 'SIGKILL', 'the service died between the relay and the withdrawal')
  const [before] = await querySchema<{ state: string; request_hash: Hex; initiated: unknown }>(
    schema,
    'SELECT state, request_hash, initiated FROM hub_withdrawals',
  )
  t.equal(before!.state, 'initiating', 'the withdrawal was not moved on')
  t.equal(before!.initiated, null, 'nothing recorded yet')
  t.ok(await hubExecuted(before!.request_hash), 'but the hub already locked the amount for it')
  t.same(
    await querySchema(schema, `SELECT id FROM solver_jobs WHERE kind = 'repayment'`),
    [],
    'no payout was queued',
  )

  const second = await startServiceProcess(env)
  t.teardown(() => second.stop())
  await waitFor(
    'the repayment to be paid and the hub cleared after the restart',
    () =>
      querySchema<{ state: string; withdrawal: string }>(
        schema,
        'SELECT r.state, w.state AS withdrawal FROM repayments r JOIN hub_withdrawals w ON w.id = r.withdrawal_id',
      ),
    {
      until: (rows) => rows.length === 1 && rows[0]!.state === 'paid' && rows[0]!.withdrawal === 'closed',
      describe: (rows) => rows,
      timeoutMs: 120_000,
    },
  )
  const withdrawals = await querySchema<{ state: string; request_hash: Hex }>(
    schema,
    'SELECT state, request_hash FROM hub_withdrawals',
  )
  t.same(
    withdrawals.map((row) => [row.state, row.request_hash]),
    [['closed', before!.request_hash]],
    'the same withdrawal request was paid, no second one was made',
  )
  const jobs = await querySchema<{ kind: string; transaction_id: string }>(
    schema,
    `SELECT kind, transaction_id FROM solver_jobs WHERE chain_id = 31337 ORDER BY id`,
  )
  t.same(
    jobs.map((job) => job.kind),
    ['hub_relay', 'hub_relay', 'hub_relay', 'repayment', 'hub_relay'],
    'each relay once, one payout',
  )
  const gas = await gasOf(jobs.map((job) => job.transaction_id))
  t.equal(
    (await evmBalance(clientA, SOLVER.address, NATIVE)) - solverBefore + gas,
    amountIn,
    'the solver was repaid exactly once',
  )
  t.equal(await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE), depositoryBefore, 'the depository paid once')
})
