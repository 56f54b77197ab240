/**
 * Two worker processes on one PostgreSQL under load: requests filled on Bitcoin (the solver's coins,
 * held in the store: migration 016) and on EVM (the solver's nonces, allocated in the store), quoted
 * at both workers and worked by both solvers at once. Every request succeeds, no coin and no nonce is
 * spent twice, and no signed fill is ever refused by its chain (a double spend would be).
 *
 * LOAD_REQUESTS sets how many (half to each chain; default 16). `npm run load:two-workers` runs 200.
 */
import type { IntentsApi } from '@pontis/core'
import { BITCOIN_DEVNET_CHAIN_ID, type DevnetChain, startDevnet } from '@pontis/devnet'
import t from 'tap'
import { createPublicClient, type Hex, http } from 'viem'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import { dropSchema, querySchema, uniqueSchema } from './fixtures/postgres.js'
import { processEnvironment, startServiceProcess } from './fixtures/service-process.js'
import { requestsPerUser, type SentRequest, sendLoad, slowBroadcasts } from './fixtures/two-workers.js'

type Status = IntentsApi.StatusRecordV3
const BTC = BITCOIN_DEVNET_CHAIN_ID
const TOTAL = Number(process.env.LOAD_REQUESTS ?? 16)
if (!Number.isSafeInteger(TOTAL) || TOTAL < 2)
  throw new Error(`LOAD_REQUESTS must be at least 2, got ${TOTAL}`)

t.setTimeout(Math.max(4 * PROCESS_START_BOUND_MS, TOTAL * 6_000))

// Blocks every half second on Bitcoin, so change outputs confirm and mempool chains stay short.
const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
  bitcoin: { port: 0, blockIntervalMs: 500 },
})
t.teardown(() => devnet.stop())
const bitcoin = devnet.bitcoin
if (!bitcoin) throw new Error('the devnet was started without Bitcoin')
const [origin, evmDestination] = devnet.chains as [DevnetChain, DevnetChain]
const destinationClient = createPublicClient({
  chain: evmDestination.chain,
  transport: http(evmDestination.rpcUrl),
})
const schema = uniqueSchema('two_workers')
t.teardown(() => dropSchema(schema))

const env = {
  ...processEnvironment(devnet, schema),
  LOCAL_BTC_ESPLORA_URL: await slowBroadcasts(t, bitcoin.url, 400),
}
// One process first, so migrations run once; the other finds them applied.
const workerA = await startServiceProcess(env)
const workerB = await startServiceProcess(env)
t.teardown(() => Promise.all([workerA.stop(), workerB.stop()]).then(() => undefined))
const workers = [workerA, workerB]

const sendAll = (userIndex: number, count: number): Promise<SentRequest[]> =>
  sendLoad({ workers, origin, evmDestination, userIndex, count })

t.test(`${TOTAL} requests (Bitcoin and EVM fills) worked by two workers on one PostgreSQL`, async (t) => {
  const started = Date.now()
  const perUser = requestsPerUser(TOTAL)
  const sent = (await Promise.all(perUser.map((count, index) => sendAll(index, count)))).flat()
  t.equal(sent.length, TOTAL)
  const finals = await waitFor(
    'every request to be final',
    async () =>
      Promise.all(
        sent.map(async ({ requestId }, index) => {
          const res = await fetch(`${workers[index % 2]!.url}/intents/status/v3?requestId=${requestId}`)
          return (await res.json()) as Status
        }),
      ),
    {
      until: (records) => records.every((record) => ['success', 'failure', 'refund'].includes(record.status)),
      describe: (records) => {
        const counts: Record<string, number> = {}
        for (const record of records ?? []) counts[record.status] = (counts[record.status] ?? 0) + 1
        return counts
      },
      timeoutMs: TOTAL * 5_000,
    },
  )
  const seconds = (Date.now() - started) / 1000
  t.comment(`${TOTAL} requests final in ${seconds.toFixed(1)} s`)
  t.same(
    finals.filter((record) => record.status !== 'success').map((record) => record.failReason),
    [],
    'every request succeeded',
  )

  const jobs = await querySchema<{ chain_id: string; transaction_id: string; raw: string; state: string }>(
    schema,
    `SELECT chain_id, transaction_id, raw, state FROM solver_jobs WHERE kind = 'fill'`,
  )
  t.equal(jobs.length, TOTAL, 'one fill job per request')
  t.same(
    jobs.filter((job) => job.state !== 'confirmed'),
    [],
    'every fill confirmed',
  )

  // Bitcoin: every fill mined, their inputs all distinct (a coin spent twice would have failed a fill).
  const bitcoinFills = jobs.filter((job) => Number(job.chain_id) === BTC)
  const inputs = bitcoinFills.flatMap((job) => {
    const record = bitcoin.chain.transaction(job.transaction_id)
    t.ok(record?.block, `Bitcoin fill ${job.transaction_id} is mined`)
    return (record?.tx.ins ?? []).map(
      (input) => `${Buffer.from(input.hash).reverse().toString('hex')}:${input.index}`,
    )
  })
  t.equal(
    new Set(inputs).size,
    inputs.length,
    `${bitcoinFills.length} Bitcoin fills spend ${inputs.length} distinct coins`,
  )

  // EVM: one nonce per fill, all distinct, each fill mined.
  const evmFills = jobs.filter((job) => Number(job.chain_id) === evmDestination.chainId)
  const nonces = await Promise.all(
    evmFills.map(async (job) => {
      const mined = await destinationClient.getTransaction({ hash: job.transaction_id as Hex })
      return mined.nonce
    }),
  )
  t.equal(
    new Set(nonces).size,
    nonces.length,
    `${evmFills.length} EVM fills use ${nonces.length} distinct nonces`,
  )

  for (const worker of workers)
    t.notMatch(
      worker.output(),
      /solver job step failed/,
      'no solver step failed (no fill was refused by its chain)',
    )
})
