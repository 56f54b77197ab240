/**
 * Two worker processes on one PostgreSQL under load: requests filled on Bitcoin (the solver's coins,
 * held in the store: migration 016) and on EVM (the solver's nonces, allocated in the store), quoted
 * at both workers and worked by both solvers at once. Every request succeeds, no coin and no nonce is
 * spent twice, and no signed fill is ever refused by its chain (a double spend would be).
 *
 * LOAD_REQUESTS sets how many (half to each chain; default 16). `npm run load:two-workers` runs 200.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { IntentsApi } from '@pontis/core'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_USERS,
  type DevnetChain,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import t from 'tap'
import { createPublicClient, type Hex, http } from 'viem'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import { executeEvmSteps } from './fixtures/e2e.js'
import { dropSchema, querySchema, uniqueSchema } from './fixtures/postgres.js'
import { processEnvironment, startServiceProcess } from './fixtures/service-process.js'

type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
const NATIVE = '0x0000000000000000000000000000000000000000'
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

/**
 * The workers reach Esplora through a loopback proxy that holds every broadcast back a while, as a
 * slow node would: a fill signed by one worker is then still unspent on chain while the other signs,
 * so only holds both workers see keep them off its coins.
 */
async function slowBroadcasts(target: string, delayMs: number): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      if (req.method === 'POST' && req.url === '/tx')
        await new Promise((resolve) => setTimeout(resolve, delayMs))
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
      })
      const body = Buffer.from(await answer.arrayBuffer())
      res
        .writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
        .end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
const env = {
  ...processEnvironment(devnet, schema),
  LOCAL_BTC_ESPLORA_URL: await slowBroadcasts(bitcoin.url, 400),
}
// One process first, so migrations run once; the other finds them applied.
const workerA = await startServiceProcess(env)
const workerB = await startServiceProcess(env)
t.teardown(() => Promise.all([workerA.stop(), workerB.stop()]).then(() => undefined))
const workers = [workerA, workerB]

async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

interface Sent {
  readonly requestId: string
  readonly destination: number
}

/** One user's requests, one after the other (its EVM nonces are its own), alternating chains and workers. */
async function sendAll(userIndex: number, count: number): Promise<Sent[]> {
  const user = USERS[userIndex]!
  const sent: Sent[] = []
  for (let index = 0; index < count; index++) {
    const toBitcoin = (index + userIndex) % 2 === 0
    const worker = workers[(index + userIndex) % 2]!
    const res = await post(
      worker.url,
      '/quote/v2',
      toBitcoin
        ? {
            user: user.address,
            recipient: Object.values(BITCOIN_USERS)[userIndex % 4]!.address,
            originChainId: origin.chainId,
            destinationChainId: BTC,
            originCurrency: STABLECOIN_ADDRESS,
            destinationCurrency: BITCOIN_NATIVE_CURRENCY_ID,
            amount: '40000000',
            tradeType: 'EXACT_INPUT',
          }
        : {
            user: user.address,
            recipient: USERS[(userIndex + 1) % USERS.length]!.address,
            originChainId: origin.chainId,
            destinationChainId: evmDestination.chainId,
            originCurrency: NATIVE,
            destinationCurrency: NATIVE,
            amount: '10000000000000000',
            tradeType: 'EXACT_INPUT',
          },
    )
    if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${JSON.stringify(res.body)}`)
    const quote = res.body as Quote
    const hash = await executeEvmSteps(origin, quote, user.privateKey)
    // Both workers are told about the deposit, as racing clients would.
    await Promise.all(
      workers.map((one) => post(one.url, '/transactions/index', { chainId: origin.chainId, txHash: hash })),
    )
    sent.push({
      requestId: quote.steps.at(-1)?.requestId as string,
      destination: toBitcoin ? BTC : evmDestination.chainId,
    })
  }
  return sent
}

t.test(`${TOTAL} requests (Bitcoin and EVM fills) worked by two workers on one PostgreSQL`, async (t) => {
  const started = Date.now()
  const perUser = USERS.map(
    (_, index) => Math.floor(TOTAL / USERS.length) + (index < TOTAL % USERS.length ? 1 : 0),
  )
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
