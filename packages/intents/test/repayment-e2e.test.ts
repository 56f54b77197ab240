/**
 * The solver is paid back for its fills (issue 22), on the devnet with the real depository:
 * two bridges in two currencies are filled, then one repayment pass pays both back to the solver
 * in one allocator-signed depository `execute` (a leg per currency), exactly; the depository keeps
 * nothing of filled requests; a second pass pays nothing. A request paid through a strict deposit
 * address keeps its excess refund, and is then swept to the solver with the sweep's fee recorded.
 * A deposit address whose request has an app fee is swept to the depository instead: the solver is
 * repaid the rest from there and the fee's claim is paid out of it, leaving the depository whole.
 * Every answer, the admin view included, is checked against openapi/intents.yaml.
 */
import { createPontisClient } from '@pontis/client'
import { type IntentsApi, silentLogger } from '@pontis/core'
import {
  DEPOSITORY_ADDRESS,
  devnetEnvironment,
  SOLVER,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import { type Address, createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { evmBalance, executeEvmSteps } from './fixtures/e2e.js'
import { nativeBridgeWithAppFee } from './fixtures/service-process.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const ADMIN_TOKEN = 'repayment-e2e-admin-token-0123456789abcdef'
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
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off', ADMIN_TOKEN },
  port: 0,
  logger: silentLogger,
  document: loaded,
  indexerIntervalMs: 150,
  solverIntervalMs: 100,
  // The repayment pass runs once at start-up, then only when the test runs it.
  repaymentIntervalMs: 3_600_000,
})
t.teardown(() => service.close())
const [chainA] = devnet.chains as [(typeof devnet.chains)[0]]
const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) }) as PublicClient

const quoteBody = (user: Address, recipient: Address, currency: string, amount: string) => ({
  user,
  recipient,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: currency,
  destinationCurrency: currency,
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

/** Quotes, deposits and indexes a bridge of `amount` from 31337 to 31338; answers once it is filled. */
async function bridge(
  client: TestClient,
  userIndex: number,
  currency: string,
  amount: string,
): Promise<Quote> {
  const user = USERS[userIndex]!
  const quote = (await client.post('/quote/v2', quoteBody(user.address, USERS[3]!.address, currency, amount)))
    .body as Quote
  const txHash = await executeEvmSteps(chainA, quote, user.privateKey)
  await client.post('/transactions/index', { txHash, chainId: '31337' })
  const done = await settle(client, quote.steps.at(-1)!.requestId as string)
  if (done.status !== 'success') throw new Error(`the bridge ended ${done.status} (${done.failReason})`)
  return quote
}

const books = async (client: TestClient): Promise<Books> =>
  (await client.get('/admin/repayments', auth)).body as Books

/** Solver jobs of `kind`, with what they sent. */
async function jobsOfKind(kind: string) {
  const { rows } = await service.store.client.query<{
    state: string
    transaction_id: string | null
    payload: object
  }>('SELECT state, transaction_id, payload FROM solver_jobs WHERE kind = $1 ORDER BY id', [kind])
  return rows
}

/** What a transaction cost its sender in gas, from its receipt. */
async function gasCost(hash: string): Promise<bigint> {
  const receipt = await clientA.getTransactionReceipt({ hash: hash as Hex })
  return receipt.gasUsed * receipt.effectiveGasPrice
}

t.test('one repayment pass pays two fills back to the solver out of the depository, once', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  t.equal((await client.get('/admin/repayments')).status, 401, 'the admin token is required')
  const depositoryNative = await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)
  const depositoryUsdc = await evmBalance(clientA, DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS)

  const native = await bridge(client, 0, NATIVE, '100000000000000000')
  const usdc = await bridge(client, 1, STABLECOIN_ADDRESS, '25000000')
  const nativeIn = BigInt(native.details.currencyIn.amount)
  const usdcIn = BigInt(usdc.details.currencyIn.amount)
  const owed = await books(client)
  t.same(
    owed.repayments.map((line) => [line.currency.toLowerCase(), line.state, line.count, line.amount]).sort(),
    [
      [NATIVE, 'owed', 1, nativeIn.toString()],
      [STABLECOIN_ADDRESS.toLowerCase(), 'owed', 1, usdcIn.toString()],
    ].sort(),
    'each filled request owes the solver its deposit',
  )
  t.equal(
    (await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)) - depositoryNative,
    nativeIn,
    'the depository holds the native deposit until the repayment',
  )

  const solverNative = await evmBalance(clientA, SOLVER.address, NATIVE)
  const solverUsdc = await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)
  t.equal(await service.repayments.tick(), 1, 'one job repays both requests')
  const paid = await waitFor('both repayments to be paid', () => books(client), {
    until: (seen) => seen.repayments.every((line) => line.state === 'paid'),
    describe: (seen) => seen?.repayments,
  })
  t.same(
    paid.repayments.map((line) => line.count),
    [1, 1],
  )
  const [job, ...more] = await jobsOfKind('repayment')
  t.equal(more.length, 0, 'a single repayment transaction')
  t.same((job!.payload as { legs: unknown[] }).legs.length, 2, 'one leg per currency in the same execute')
  const gas = await gasCost(job!.transaction_id!)
  t.equal(
    (await evmBalance(clientA, SOLVER.address, NATIVE)) - solverNative + gas,
    nativeIn,
    'the solver got the native deposit back exactly (less the gas it paid to submit the repayment)',
  )
  t.equal(
    (await evmBalance(clientA, SOLVER.address, STABLECOIN_ADDRESS)) - solverUsdc,
    usdcIn,
    'the solver got the USDC deposit back exactly',
  )
  t.equal(
    await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE),
    depositoryNative,
    'the depository holds nothing of filled requests (native)',
  )
  t.equal(
    await evmBalance(clientA, DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS),
    depositoryUsdc,
    'the depository holds nothing of filled requests (USDC)',
  )

  const afterNative = await evmBalance(clientA, SOLVER.address, NATIVE)
  t.equal(await service.repayments.tick(), 0, 'a second pass queues nothing')
  t.equal((await jobsOfKind('repayment')).length, 1, 'no second repayment job')
  t.equal(await evmBalance(clientA, SOLVER.address, NATIVE), afterNative, 'and pays nothing')
  const metrics = await service.metrics.registry.metrics()
  t.match(
    metrics,
    /pontis_solver_repayments_total\{kind="repayment",state="paid"\} 2/,
    'the counter says 2 paid',
  )
})

t.test('a strict deposit address keeps its excess refund, then is swept to the solver', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[2]!
  const quote = (
    await client.post('/quote/v2', {
      ...quoteBody(user.address, USERS[3]!.address, NATIVE, '50000000000000000'),
      useDepositAddress: true,
      strict: true,
      refundTo: user.address,
    })
  ).body as Quote
  const address = quote.steps[0]!.depositAddress as Address
  const requestId = quote.steps[0]!.requestId as string
  const amountIn = BigInt(quote.details.currencyIn.amount)
  const excess = 10_000_000_000_000_000n
  const payer = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
  await clientA.waitForTransactionReceipt({
    hash: await payer.sendTransaction({ to: address, value: amountIn + excess }),
  })
  t.equal((await settle(client, requestId)).status, 'success', 'filled')

  const solverBefore = await evmBalance(clientA, SOLVER.address, NATIVE)
  // The sweep waits until the excess refund out of the same address is done.
  await waitFor('the excess refund to confirm', () => jobsOfKind('excess_refund'), {
    until: (jobs) => jobs.length === 1 && jobs[0]!.state === 'confirmed',
    describe: (jobs) => jobs?.map((job) => job.state),
  })
  t.equal(await service.repayments.tick(), 1, 'the sweep is queued')
  const swept = await waitFor('the sweep to confirm', () => books(client), {
    until: (seen) => seen.sweeps.some((line) => line.state === 'swept'),
    describe: (seen) => seen?.sweeps,
  })
  const line = swept.sweeps[0]!
  t.equal(line.amount, amountIn.toString(), 'the sweep takes what the request credited, not the excess')
  const fee = BigInt(line.fee ?? '-1')
  t.ok(fee > 0n, 'the sweep fee is recorded')
  t.equal(
    (await evmBalance(clientA, SOLVER.address, NATIVE)) - solverBefore,
    amountIn - fee,
    'the solver received the credited amount less the recorded fee, exactly',
  )
  const [sweep] = await jobsOfKind('sweep')
  t.ok(
    (await gasCost(sweep!.transaction_id!)) <= fee,
    'the recorded fee covers what the transfer cost on chain',
  )
  t.ok((await evmBalance(clientA, address, NATIVE)) < fee * 2n, 'the address keeps only fee dust')
  t.equal(await service.repayments.tick(), 0, 'a second pass sweeps nothing')
  t.equal((await jobsOfKind('sweep')).length, 1)
})

t.test(
  'a deposit address with an app fee is swept to the depository; the solver is repaid the rest and the claim pays the fee',
  async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    const user = USERS[0]!
    const app = privateKeyToAccount(USERS[1]!.privateKey)
    const payee = USERS[2]!.address
    const depositoryBefore = await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)
    const quote = (
      await client.post('/quote/v2', {
        ...nativeBridgeWithAppFee(user.address, app.address, '150'),
        recipient: USERS[3]!.address,
        useDepositAddress: true,
        refundTo: user.address,
      })
    ).body as Quote
    const address = quote.steps[0]!.depositAddress as Address
    const requestId = quote.steps[0]!.requestId as string
    const amountIn = BigInt(quote.details.currencyIn.amount)
    const appFee = BigInt(quote.fees.app.amount)
    t.ok(appFee > 0n, 'the quote charges an app fee')
    const payer = createWalletClient({
      account: privateKeyToAccount(user.privateKey),
      chain: chainA.chain,
      transport: http(chainA.rpcUrl),
    })
    await clientA.waitForTransactionReceipt({
      hash: await payer.sendTransaction({ to: address, value: amountIn }),
    })
    t.equal((await settle(client, requestId)).status, 'success', 'filled')

    const solverBefore = await evmBalance(clientA, SOLVER.address, NATIVE)
    t.equal(await service.repayments.tick(), 1, 'the sweep is queued')
    const sweepRow = async () =>
      (
        await service.store.client.query<{ state: string; destination: string; swept_amount: string | null }>(
          'SELECT state, destination, swept_amount::text AS swept_amount FROM deposit_address_sweeps WHERE request_id = $1',
          [requestId],
        )
      ).rows[0]
    const swept = await waitFor('the sweep to confirm', sweepRow, {
      until: (row) => row?.state === 'swept' || row?.state === 'failed',
      describe: (row) => row,
    })
    t.equal(swept?.state, 'swept')
    t.equal(swept?.destination, 'depository', 'the request had an app fee: swept to the depository')
    const sweptAmount = BigInt(swept?.swept_amount ?? -1)
    t.ok(
      sweptAmount > appFee && sweptAmount < amountIn,
      'the address paid its transfer fee out of the amount',
    )
    t.equal(
      (await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)) - depositoryBefore,
      sweptAmount,
      'the depository received the swept amount, exactly',
    )
    t.equal(
      await evmBalance(clientA, SOLVER.address, NATIVE),
      solverBefore,
      'the sweep paid the solver nothing',
    )
    const owed = (
      await service.store.client.query<{ amount: string; state: string }>(
        'SELECT amount::text AS amount, state FROM repayments WHERE request_id = $1',
        [requestId],
      )
    ).rows[0]
    t.same(owed, { amount: (sweptAmount - appFee).toString(), state: 'owed' }, 'the solver is owed the rest')
    t.equal(
      (await books(client)).repayments.some((line) => line.state === 'owed'),
      true,
      'and the admin view shows it owed',
    )

    t.equal(await service.repayments.tick(), 1, 'the repayment is batched')
    await waitFor('the repayment to be paid', async () => (await books(client)).repayments, {
      until: (lines) => lines.every((line) => line.state === 'paid'),
      describe: (lines) => lines,
    })
    const jobs = await jobsOfKind('repayment')
    const repaymentGas = await gasCost(jobs.at(-1)!.transaction_id!)
    t.equal(
      (await evmBalance(clientA, SOLVER.address, NATIVE)) - solverBefore + repaymentGas,
      sweptAmount - appFee,
      'the solver got the swept amount less the app fee (less the repayment gas)',
    )
    t.equal(
      (await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)) - depositoryBefore,
      appFee,
      'the depository keeps exactly the unclaimed app fee',
    )

    const pontis = createPontisClient({ baseUrl: service.url })
    t.same(
      (await pontis.getAppFeeBalances(app.address)).balances.map((balance) => balance.amount),
      [appFee.toString()],
      'the recipient can claim the fee',
    )
    const payeeBefore = await evmBalance(clientA, payee, NATIVE)
    const claim = await pontis.claimAppFees(
      app.address,
      { chainId: 31337, currency: NATIVE, recipient: payee },
      (message) => app.signMessage({ message }),
    )
    t.equal(claim.amount, appFee.toString())
    await waitFor('the claim payout to confirm', () => jobsOfKind('app_fee_claim'), {
      until: (rows) => rows.length === 1 && ['confirmed', 'reverted', 'failed'].includes(rows[0]!.state),
      describe: (rows) => rows?.map((row) => row.state),
    })
    t.equal((await jobsOfKind('app_fee_claim'))[0]!.state, 'confirmed', 'the payout confirmed')
    t.equal(
      (await evmBalance(clientA, payee, NATIVE)) - payeeBefore,
      appFee,
      'the claim paid exactly the fee',
    )
    t.equal(
      await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE),
      depositoryBefore,
      'the depository is back where it was: it was never short',
    )
  },
)
