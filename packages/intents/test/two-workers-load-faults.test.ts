/**
 * The two-worker load (two-workers-load.test.ts) with every fault power applied while the requests
 * run: two worker processes on one PostgreSQL fill Bitcoin and EVM requests while a fault driver
 * reorganises and rolls back blocks, pauses and resumes mining, drops mempool transactions and
 * spikes the EVM base fee, on the origin (EVM), the EVM destination and Bitcoin.
 *
 * What each fault may undo, and so what the test asserts:
 * - EVM destination (fills): `finality.confirmations` 3, and the latest block (depth 1 < 3) is
 *   rolled back, then the new latest one (depth 2 of the old chain, still < 3) reorganised, whatever they hold: a fill in it is sent again; pending fills are
 *   dropped, and priced out by a base-fee spike (to 20 gwei), then replaced.
 * - EVM origin (deposits, 1 confirmation) and Bitcoin (fills, 1 confirmation): mining is paused, one
 *   block is mined and reorganised or rolled back only when it holds no transaction of ours (a
 *   deposit or fill already final is not undone; the outcomes of those are chain-faults*.test.ts's);
 *   on Bitcoin a mempool fill (and its descendants) is dropped while the timer is paused.
 * Every request must still end `success`, with one mined fill each, no coin or nonce spent twice,
 * every EVM recipient paid exactly its quoted outputs, and the solver's EVM balance down by exactly
 * the outputs plus the gas of its mined fills.
 *
 * LOAD_REQUESTS sets how many (half to each chain; default 16). `npm run load:two-workers:faults`
 * runs 200.
 */

import type { IntentsApi } from '@pontis/core'
import { BITCOIN_DEVNET_CHAIN_ID, type DevnetChain, SOLVER, startDevnet, USERS } from '@pontis/devnet'
import t from 'tap'
import { type Address, createPublicClient, type Hex, http, type PublicClient } from 'viem'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import { chainConfig } from './fixtures/chain-config.js'
import { evmBalance } from './fixtures/e2e.js'
import { dropSchema, querySchema, uniqueSchema } from './fixtures/postgres.js'
import {
  processEnvironment,
  serviceWorkingDirectory,
  startServiceProcess,
} from './fixtures/service-process.js'
import { requestsPerUser, type SentRequest, sendLoad, slowBroadcasts } from './fixtures/two-workers.js'

type Status = IntentsApi.StatusRecordV3
const NATIVE = '0x0000000000000000000000000000000000000000'
const BTC = BITCOIN_DEVNET_CHAIN_ID
const TOTAL = Number(process.env.LOAD_REQUESTS ?? 16)
if (!Number.isSafeInteger(TOTAL) || TOTAL < 2)
  throw new Error(`LOAD_REQUESTS must be at least 2, got ${TOTAL}`)
const FILL_CONFIRMATIONS = 3
const SPIKE_BASE_FEE = 20n * 10n ** 9n

t.setTimeout(Math.max(6 * PROCESS_START_BOUND_MS, TOTAL * 10_000))

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
const originClient = createPublicClient({
  chain: origin.chain,
  transport: http(origin.rpcUrl),
}) as PublicClient
const destinationClient = createPublicClient({
  chain: evmDestination.chain,
  transport: http(evmDestination.rpcUrl),
}) as PublicClient
const schema = uniqueSchema('two_workers_faults')
t.teardown(() => dropSchema(schema))

/**
 * The worker processes find `configs/` from their working directory: a temporary one holding the
 * test's chains file (the EVM destination at 3 confirmations) and the repository's node_modules.
 */
async function workingDirectory(): Promise<string> {
  const { configDir, configure } = await chainConfig(t, 'pontis-load-faults-')
  await configure([origin.chainId, evmDestination.chainId, BTC], {
    [evmDestination.chainId]: { finality: { confirmations: FILL_CONFIRMATIONS } },
  })
  return serviceWorkingDirectory(t, configDir)
}

const env = {
  ...processEnvironment(devnet, schema),
  LOCAL_BTC_ESPLORA_URL: await slowBroadcasts(t, bitcoin.url, 400),
  // A fill priced out or dropped is repriced soon.
  SOLVER_REPLACE_AFTER_MS: '1500',
}
const cwd = await workingDirectory()
const workerA = await startServiceProcess(env, { cwd })
const workerB = await startServiceProcess(env, { cwd })
t.teardown(() => Promise.all([workerA.stop(), workerB.stop()]).then(() => undefined))
const workers = [workerA, workerB]

const sendAll = (userIndex: number, count: number): Promise<SentRequest[]> =>
  sendLoad({ workers, origin, evmDestination, userIndex, count })

/** What the fault driver did, by fault. */
const applied: Record<string, number> = {}
const count = (fault: string, by = 1) => {
  applied[fault] = (applied[fault] ?? 0) + by
}
/** Fills (EVM hashes, Bitcoin txids) the driver removed from a chain or a mempool. */
const undone = new Set<string>()

const blockTransactions = async (client: PublicClient): Promise<Hex[]> =>
  (await client.getBlock({ blockTag: 'latest' })).transactions as Hex[]

/** Pending transactions of `from` in anvil's mempool. */
async function pendingOf(rpcUrl: string, from: Address): Promise<Hex[]> {
  const client = createPublicClient({ transport: http(rpcUrl) })
  const content = (await client.request({ method: 'txpool_content' } as never)) as {
    pending: Record<string, Record<string, { hash: Hex }>>
  }
  const mine = Object.entries(content.pending).find(
    ([address]) => address.toLowerCase() === from.toLowerCase(),
  )
  return mine ? Object.values(mine[1]).map((tx) => tx.hash) : []
}

/** Set once every request is final: the driver stops, and nothing waits for a fill any more. */
let allFinal = false

/** A solver transaction pending on the EVM destination (mining paused), if one comes within 5 s. */
async function nextPendingFill(): Promise<Hex | undefined> {
  const found = await waitFor(
    'a pending fill on the EVM destination',
    () => pendingOf(evmDestination.rpcUrl, SOLVER.address),
    { until: (pending) => pending.length > 0 || allFinal, timeoutMs: 5_000 },
  ).catch(() => [] as Hex[])
  return found[0]
}

/** One round of every fault power, on the three chains. */
async function faultRound(): Promise<void> {
  const destination = evmDestination.faults
  // EVM destination: the latest block reorganised, then rolled back, whatever fills it holds.
  await destination.pauseMining()
  try {
    for (const kind of ['rollback', 'reorg'] as const) {
      const fills = await blockTransactions(destinationClient)
      await (kind === 'reorg' ? destination.reorg(1) : destination.rollback(1))
      for (const fill of fills) undone.add(fill)
      count(`evm destination ${kind} (1 block)`)
      count(`evm destination ${kind}: fills undone`, fills.length)
    }
    // A pending fill dropped, when one comes while blocks are held back.
    const pending = await nextPendingFill()
    if (pending) {
      await destination.dropTransaction(pending)
      undone.add(pending)
      count('evm destination drop pending fill')
    }
    const priced = await nextPendingFill()
    if (priced) count('evm destination fills pending at the spike', 1)
    // The next block's base fee at 20 gwei (anvil's starts at 1 and falls on empty blocks): what
    // is pending is priced out, yet quotes still cover the fees of an output worth 0.01 ETH.
    await destination.spikeBaseFee(SPIKE_BASE_FEE)
    await destination.mine()
    count('evm destination base-fee spike')
  } finally {
    await destination.resumeMining()
    count('evm destination pause/resume mining')
  }
  // EVM origin: one block of our own, reorganised then rolled back when it holds no deposit.
  await origin.faults.pauseMining()
  try {
    for (const kind of ['reorg', 'rollback'] as const) {
      await origin.faults.mine()
      if ((await blockTransactions(originClient)).length > 0) {
        count(`evm origin ${kind} skipped (deposit in the block)`)
        continue
      }
      await (kind === 'reorg' ? origin.faults.reorg(1) : origin.faults.rollback(1))
      count(`evm origin ${kind} (1 empty block)`)
    }
  } finally {
    await origin.faults.resumeMining()
    count('evm origin pause/resume mining')
  }
  // Bitcoin: the timer held back, a mempool fill dropped, an empty block reorganised and rolled back.
  const chain = bitcoin!.chain
  await bitcoin!.faults.pauseMining()
  try {
    // The timer was held from the start until a fill is dropped once, so one is always there to drop.
    const waiting =
      (applied['bitcoin drop mempool fill'] ?? 0) > 0
        ? chain.mempoolTransactions()
        : await waitFor('a Bitcoin fill in the mempool, to drop', async () => chain.mempoolTransactions(), {
            until: (transactions) => transactions.length > 0,
            timeoutMs: TOTAL * 6_000,
          })
    if (waiting[0]) {
      const evicted = chain.drop(waiting[0].txid)
      for (const txid of evicted) undone.add(txid)
      count('bitcoin drop mempool fill')
      count('bitcoin drop: transactions evicted', evicted.length)
    }
    for (const kind of ['reorg', 'rollback'] as const) {
      await bitcoin!.faults.mine()
      if (chain.tip.txids.length > 1) {
        count(`bitcoin ${kind} skipped (fill in the block)`)
        continue
      }
      await (kind === 'reorg' ? bitcoin!.faults.reorg(1) : bitcoin!.faults.rollback(1))
      count(`bitcoin ${kind} (1 empty block)`)
    }
  } finally {
    await bitcoin!.faults.resumeMining()
    count('bitcoin pause/resume timer')
  }
}

async function statuses(sent: readonly SentRequest[]): Promise<Status[]> {
  return Promise.all(
    sent.map(async ({ requestId }, index) => {
      const res = await fetch(`${workers[index % 2]!.url}/intents/status/v3?requestId=${requestId}`)
      return (await res.json()) as Status
    }),
  )
}

t.test(`${TOTAL} requests worked by two workers on one PostgreSQL, every fault power applied`, async (t) => {
  const started = Date.now()
  const solverBefore = await evmBalance(destinationClient, SOLVER.address, NATIVE)
  const solverNonceBefore = await destinationClient.getTransactionCount({ address: SOLVER.address })
  const recipients = new Set(USERS.map((user) => user.address))
  const recipientsBefore = new Map<string, bigint>()
  for (const address of recipients)
    recipientsBefore.set(address, await evmBalance(destinationClient, address, NATIVE))

  const perUser = requestsPerUser(TOTAL)
  // Held until the first round drops a Bitcoin fill (on a quiet machine they are mined at once).
  await bitcoin!.faults.pauseMining()
  const sending = Promise.all(perUser.map((count, index) => sendAll(index, count)))
  // The driver: rounds of faults, one after the other, until every request is final.
  let rounds = 0
  const driver = (async () => {
    while (!allFinal) {
      await faultRound()
      rounds++
    }
  })()
  const sent = (await sending).flat()
  t.equal(sent.length, TOTAL)

  // Empty blocks besides, so the last fills reach their confirmations.
  const finals = await waitFor(
    'every request to be final',
    async () => {
      await evmDestination.faults.mine()
      return statuses(sent)
    },
    {
      until: (records) => records.every((record) => ['success', 'failure', 'refund'].includes(record.status)),
      describe: (records) => {
        const counts: Record<string, number> = {}
        for (const record of records ?? []) counts[record.status] = (counts[record.status] ?? 0) + 1
        return counts
      },
      timeoutMs: TOTAL * 6_000,
    },
  )
  allFinal = true
  await driver
  const seconds = (Date.now() - started) / 1000
  t.comment(`${TOTAL} requests final in ${seconds.toFixed(1)} s; ${rounds} fault rounds`)
  t.comment(`faults applied: ${JSON.stringify(applied)}`)
  t.same(
    finals.filter((record) => record.status !== 'success').map((record) => record.failReason),
    [],
    'every request succeeded',
  )
  for (const fault of [
    'evm destination reorg (1 block)',
    'evm destination rollback (1 block)',
    'evm destination base-fee spike',
    'evm destination drop pending fill',
    'bitcoin drop mempool fill',
    'evm destination pause/resume mining',
    'evm origin pause/resume mining',
    'bitcoin pause/resume timer',
  ])
    t.ok((applied[fault] ?? 0) > 0, `applied: ${fault}`)

  const jobs = await querySchema<{
    chain_id: string
    transaction_id: string
    state: string
    replaced: Array<{ transactionId: string }>
  }>(schema, `SELECT chain_id, transaction_id, state, replaced FROM solver_jobs WHERE kind = 'fill'`)
  t.equal(jobs.length, TOTAL, 'one fill job per request')
  t.same(
    jobs.filter((job) => job.state !== 'confirmed'),
    [],
    'every fill confirmed',
  )
  const replacedCount = jobs.reduce((sum, job) => sum + (job.replaced?.length ?? 0), 0)
  const resent = jobs.filter((job) => undone.has(job.transaction_id)).length
  t.comment(
    `fills replaced: ${replacedCount}; fills undone by the driver and mined again as the same bytes: ${resent}`,
  )

  // Bitcoin: every fill mined, inputs all distinct.
  const bitcoinFills = jobs.filter((job) => Number(job.chain_id) === BTC)
  const inputs = bitcoinFills.flatMap((job) => {
    const record = bitcoin.chain.transaction(job.transaction_id)
    t.ok(record?.block, `Bitcoin fill ${job.transaction_id} is mined`)
    return (record?.tx.ins ?? []).map(
      (input) => `${Buffer.from(input.hash).reverse().toString('hex')}:${input.index}`,
    )
  })
  t.equal(new Set(inputs).size, inputs.length, `${bitcoinFills.length} Bitcoin fills spend distinct coins`)

  // EVM: each fill mined and successful, nonces distinct, recipients paid once, the solver's balance exact.
  const evmFills = jobs.filter((job) => Number(job.chain_id) === evmDestination.chainId)
  let gas = 0n
  const nonces = await Promise.all(
    evmFills.map(async (job) => {
      const hash = job.transaction_id as Hex
      const receipt = await destinationClient.getTransactionReceipt({ hash }).catch(() => undefined)
      t.equal(receipt?.status, 'success', `EVM fill ${hash} mined and successful`)
      gas += receipt ? receipt.gasUsed * receipt.effectiveGasPrice : 0n
      return (await destinationClient.getTransaction({ hash })).nonce
    }),
  )
  t.equal(new Set(nonces).size, nonces.length, `${evmFills.length} EVM fills use distinct nonces`)
  const solverNonceAfter = await destinationClient.getTransactionCount({ address: SOLVER.address })
  t.equal(
    solverNonceAfter - solverNonceBefore,
    evmFills.length,
    'the solver sent nothing else on the destination',
  )
  const evmSent = sent.filter((one) => one.destination === evmDestination.chainId)
  const payouts = evmSent.reduce((sum, one) => sum + one.output, 0n)
  t.equal(
    solverBefore - (await evmBalance(destinationClient, SOLVER.address, NATIVE)),
    payouts + gas,
    "the solver's balance fell by the outputs and the mined fills' gas, exactly",
  )
  for (const address of recipients) {
    const expected = evmSent
      .filter((one) => one.recipient === address)
      .reduce((sum, one) => sum + one.output, 0n)
    t.equal(
      (await evmBalance(destinationClient, address, NATIVE)) - (recipientsBefore.get(address) ?? 0n),
      expected,
      `${address} paid exactly its quoted outputs, once`,
    )
  }
  for (const worker of workers) t.notMatch(worker.output(), /"level":"fatal"|FATAL/, 'no worker crashed')
})
