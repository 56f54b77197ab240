/**
 * The lifecycle under faults on the two venue families, Lighter (3586256) and Hyperliquid core
 * (1337), each its devnet simulator behind its own API with anvil the other side, HTTP only. A venue
 * has no blocks to reorganise and no mempool (an accepted action is executed), so the faults that
 * apply are the process's and the node's:
 * - a fill signed before a crash and not sent: the restarted service sends the stored action, the
 *   same hash, and the recipient is paid once (the venue takes a nonce once);
 * - a fill sent, then the venue API failing every call for longer than a job's `maxAttempts`: the
 *   job is still followed, never given up (no refund), and reaches `success` once the API answers,
 *   paid once;
 * - a deposit made on Lighter before the service's first start is found from `indexer.startBlock`;
 * - two workers on one database fill requests into the venue at once: the solver's venue nonces are
 *   allocated in the store, so none is refused and each request is paid once.
 */
import type { IntentsApi } from '@pontis/core'
import {
  HYPERLIQUID_DEVNET_CHAIN_ID,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_USERS,
  LIGHTER_DEVNET_CHAIN_ID,
  LIGHTER_USDC_CURRENCY_ID,
  LIGHTER_USERS,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH } from '../src/index.js'
import { failingNode, faultHarness, fillJob, settled, statusOf } from './fixtures/chain-faults.js'
import { executeEvmSteps } from './fixtures/e2e.js'
import { type LighterTransferItem, sendLighterTransfer } from './fixtures/lighter.js'
import { openTestSchema, querySchema } from './fixtures/postgres.js'
import { processEnvironment, startServiceProcess } from './fixtures/service-process.js'

type Quote = IntentsApi.QuoteResponse
const EVM = 31337
const LIGHTER = LIGHTER_DEVNET_CHAIN_ID
const HYPERLIQUID = HYPERLIQUID_DEVNET_CHAIN_ID

t.setTimeout(8 * PROCESS_START_BOUND_MS)

const devnet = await startDevnet({
  chains: [{ chainId: EVM, port: 0 }],
  lighter: { port: 0 },
  hyperliquid: { port: 0 },
})
t.teardown(() => devnet.stop())
const lighter = devnet.lighter as NonNullable<typeof devnet.lighter>
const hyperliquid = devnet.hyperliquid as NonNullable<typeof devnet.hyperliquid>
const evmChain = devnet.chains[0] as (typeof devnet.chains)[number]
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)

/** Whether the Hyperliquid simulator executed the action with this hash (its explorer knows it). */
async function hyperliquidKnows(hash: string): Promise<boolean> {
  const response = await fetch(`${hyperliquid.url}/explorer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'txDetails', hash }),
  })
  return response.ok
}

/** One venue as these tests use it: the request that pays into it, and how to read the recipient. */
interface Venue {
  readonly name: string
  readonly chainId: number
  readonly request: (user: string) => Record<string, unknown>
  readonly received: () => bigint
  /** Whether the venue executed the fill with this id. */
  readonly executed: (fill: string) => Promise<boolean>
  /** The venue API: its base URL and the path a fill is sent to. */
  readonly api: () => { readonly url: string; readonly sendPath: string }
}

const ALICE_LIGHTER = LIGHTER_USERS.alice
const ALICE_HYPERLIQUID = HYPERLIQUID_USERS.alice
const venues: readonly Venue[] = [
  {
    name: 'Lighter',
    chainId: LIGHTER,
    request: (user) => ({
      user,
      recipient: String(ALICE_LIGHTER.index),
      originChainId: EVM,
      destinationChainId: LIGHTER,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: LIGHTER_USDC_CURRENCY_ID,
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
    }),
    received: () => lighter.balanceOf(ALICE_LIGHTER.index),
    executed: async (fill) => lighter.transaction(fill) !== undefined,
    api: () => ({ url: lighter.url, sendPath: '/api/v1/sendTx' }),
  },
  {
    name: 'Hyperliquid',
    chainId: HYPERLIQUID,
    request: (user) => ({
      user,
      recipient: ALICE_HYPERLIQUID.address,
      originChainId: EVM,
      destinationChainId: HYPERLIQUID,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: HYPERLIQUID_PERPS_USDC_ID,
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
    }),
    received: () => hyperliquid.balance(ALICE_HYPERLIQUID.address, HYPERLIQUID_PERPS_USDC_ID),
    executed: hyperliquidKnows,
    api: () => ({ url: hyperliquid.url, sendPath: '/exchange' }),
  },
]

/** Quotes `venue`'s request for `user`, deposits on EVM and indexes the deposit; answers the quote and request id. */
async function payIntoVenue(client: TestClient, venue: Venue, user: (typeof USERS)[number]) {
  const res = await client.post('/quote/v2', venue.request(user.address))
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  const txHash = await executeEvmSteps(evmChain, quote, user.privateKey)
  const indexed = await client.post('/transactions/index', { chainId: String(EVM), txHash })
  if (indexed.status !== 200) throw new Error(`index answered ${indexed.status}: ${indexed.text}`)
  return { quote, requestId: quote.steps.at(-1)?.requestId as string }
}

/** The EVM chain and `venue`'s only, on a schema of the test's own. */
const venueHarness = (t: Test, venue: Venue, suite: string) =>
  faultHarness(t, { devnet, chainIds: [EVM, venue.chainId], suite })

for (const [position, venue] of venues.entries()) {
  t.test(
    `${venue.name}: a fill signed before a crash and not sent is sent by the restarted service, paid once`,
    async (t) => {
      const database = await openTestSchema(t, `crashvenue${position}`)
      const env = processEnvironment(devnet, database.schema)
      const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill:after-sign' })
      t.teardown(() => first.stop())
      const client = createTestClient(t, first.url, loaded.document)
      const before = venue.received()
      const { quote, requestId } = await payIntoVenue(
        client,
        venue,
        USERS[position] as (typeof USERS)[number],
      )
      t.equal(await first.exited(), 'SIGKILL', 'the service died right after signing the fill')
      const [stored] = await querySchema<{ transaction_id: string }>(
        database.schema,
        'SELECT transaction_id FROM solver_jobs WHERE job_key = $1',
        [`fill:${requestId.toLowerCase()}`],
      )
      const signed = stored?.transaction_id as string
      t.ok(signed, 'the signed fill was stored before the crash')
      t.notOk(await venue.executed(signed), 'nothing was sent before the crash')
      t.equal(venue.received(), before, 'the recipient got nothing yet')

      const second = await startServiceProcess(env)
      t.teardown(() => second.stop())
      const again = createTestClient(t, second.url, loaded.document)
      const done = await settled(again, requestId, ['success', 'failure', 'refund'])
      t.equal(done.status, 'success', 'the request survived the crash and was filled')
      t.same(done.txHashes, [signed], 'by the action signed before the crash')
      t.ok(await venue.executed(signed), 'the venue executed it')
      t.equal(
        venue.received() - before,
        BigInt(quote.details.currencyOut.amount),
        'the recipient is paid once, the quoted output',
      )
    },
  )
}

for (const [position, venue] of venues.entries()) {
  t.test(
    `${venue.name}: a sent fill whose venue API then fails every call past maxAttempts is never given up`,
    async (t) => {
      const { url: upstream, sendPath } = venue.api()
      const api = await failingNode(t, upstream)
      const harness = await venueHarness(t, venue, `unreachablevenue${position}`)
      await harness.configure({ [venue.chainId]: { rpc: { url: api.url } } })
      const service = await harness.start({ workers: true })
      t.teardown(() => service.close())
      const client = createTestClient(t, service.url, loaded.document)
      const before = venue.received()
      // The venue accepts the fill's send; from then on its API fails every call.
      api.failAfter = sendPath
      const { quote, requestId } = await payIntoVenue(
        client,
        venue,
        USERS[2 + position] as (typeof USERS)[number],
      )
      const jobKey = `fill:${requestId.toLowerCase()}`
      await waitFor('the fill to be sent', async () => api.failing)
      t.ok(
        await venue.executed((await fillJob(service, requestId)).transaction_id),
        'the venue executed the fill',
      )
      // The job has passed as often as a fill followed for a minute does, more than `maxAttempts`.
      await service.store.client.query('UPDATE solver_jobs SET attempts = 100 WHERE job_key = $1', [jobKey])
      const failed = await waitFor(
        'a pass of the job with the API failing',
        () => fillJob(service, requestId),
        {
          until: (row) => row.attempts > 100 && row.lease_owner === null,
        },
      )
      t.equal(failed?.state, 'broadcast', 'the job is still followed, not given up')
      t.not((await statusOf(client, requestId)).status, 'refund', 'no refund')
      t.not((await statusOf(client, requestId)).status, 'failure', 'no failure')
      api.failing = false
      // The failed pass put the next one off (backoff); bring it forward.
      await service.store.client.query('UPDATE solver_jobs SET not_before = 0 WHERE job_key = $1', [jobKey])
      const done = await settled(client, requestId, ['success', 'failure', 'refund'])
      t.equal(done.status, 'success', 'followed to success once the API answers')
      t.same(done.txHashes, [failed?.transaction_id], 'the fill sent before the API failed, and no other')
      t.equal(
        venue.received() - before,
        BigInt(quote.details.currencyOut.amount),
        'the recipient is paid once',
      )
    },
  )
}

t.test(
  'a Lighter deposit made before the first start is found from the configured start block',
  async (t) => {
    const harness = await venueHarness(t, venues[0] as Venue, 'startvenue')
    await harness.configure()
    // The first start only quotes: no watcher has run, so it has no cursor yet.
    const quoting = await harness.start({ workers: false })
    t.teardown(() => quoting.close())
    const recipient = USERS[3]?.address as string
    const res = await createTestClient(t, quoting.url, loaded.document).post('/quote/v2', {
      user: String(ALICE_LIGHTER.index),
      recipient,
      originChainId: LIGHTER,
      destinationChainId: EVM,
      originCurrency: LIGHTER_USDC_CURRENCY_ID,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '20000000',
      tradeType: 'EXACT_INPUT',
    })
    t.equal(res.status, 200, `the withdrawal from the venue is quoted ${res.status === 200 ? '' : res.text}`)
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    const item = quote.steps[0]?.items[0]?.data as unknown as LighterTransferItem
    const hash = await sendLighterTransfer(lighter, ALICE_LIGHTER, item.action.parameters)
    const depositHeight = lighter.transaction(hash)?.blockHeight
    t.ok(depositHeight, 'the venue executed the deposit')
    // Later venue traffic, so the head the indexer would start from is past the deposit.
    await sendLighterTransfer(lighter, LIGHTER_USERS.bob, {
      ...item.action.parameters,
      toAccountIndex: LIGHTER_USERS.aliceSub.index,
      memo: `0x${'22'.repeat(32)}`,
    })
    t.ok(lighter.venue.height > (depositHeight as number), 'the head moved past the deposit')
    await quoting.close()

    await harness.configure({ [LIGHTER]: { indexer: { startBlock: String(depositHeight) } } })
    const service = await harness.start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'filled without a manual /transactions/index')
    t.ok(done.inTxHashes.includes(hash), 'from the deposit made before the start')
  },
)

for (const [position, venue] of venues.entries()) {
  t.test(
    `${venue.name}: two workers on one database fill at once, nonces allocated in the store, each request paid once`,
    async (t) => {
      const harness = await venueHarness(t, venue, `twovenue${position}`)
      await harness.configure()
      // The first one runs the migrations; the second finds them applied.
      const first = await harness.start({ workers: true })
      t.teardown(() => first.close())
      const second = await harness.start({ workers: true })
      t.teardown(() => second.close())
      const workers = [first, second].map((worker) => createTestClient(t, worker.url, loaded.document))
      const before = venue.received()
      // Each user's requests one after the other (its EVM nonces are its own), quoted at alternate
      // workers; both workers are told about each deposit, as racing clients would.
      const sent = (
        await Promise.all(
          USERS.map(async (user, userIndex) => {
            const mine: Array<{ requestId: string; output: bigint }> = []
            for (let index = 0; index < 2; index++) {
              const worker = workers[(userIndex + index) % 2] as TestClient
              const res = await worker.post('/quote/v2', venue.request(user.address))
              if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
              const quote = res.body as Quote
              const txHash = await executeEvmSteps(evmChain, quote, user.privateKey)
              await Promise.all(
                workers.map((each) => each.post('/transactions/index', { chainId: String(EVM), txHash })),
              )
              mine.push({
                requestId: quote.steps.at(-1)?.requestId as string,
                output: BigInt(quote.details.currencyOut.amount),
              })
            }
            return mine
          }),
        )
      ).flat()
      const finals = await Promise.all(
        sent.map(({ requestId }, index) =>
          settled(workers[index % 2] as TestClient, requestId, ['success', 'failure', 'refund']),
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
        attempts: number
        replaced: unknown[]
        lease_owner: string | null
      }>(
        'SELECT transaction_id, state, attempts, replaced, lease_owner FROM solver_jobs WHERE job_key = ANY($1)',
        [sent.map(({ requestId }) => `fill:${requestId.toLowerCase()}`)],
      )
      t.equal(jobs.length, sent.length, 'one fill job per request')
      t.same(
        jobs.filter((job) => job.state !== 'confirmed' || job.replaced.length > 0),
        [],
        'every fill confirmed as first signed: no nonce refused, none signed again',
      )
      t.equal(new Set(jobs.map((job) => job.transaction_id)).size, jobs.length, 'distinct transactions')
      for (const job of jobs)
        t.ok(await venue.executed(job.transaction_id), `the venue executed ${job.transaction_id}`)
      t.equal(
        venue.received() - before,
        sent.reduce((sum, { output }) => sum + output, 0n),
        'the recipient got every quoted output exactly once',
      )
    },
  )
}
