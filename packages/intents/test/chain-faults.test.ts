/**
 * The lifecycle under chain faults on the EVM devnet (real anvil, real PostgreSQL, HTTP only),
 * caused through the devnet's fault powers (packages/devnet/src/faults.ts).
 */
import type { IntentsApi } from '@pontis/core'
import { type DevnetChain, startDevnet, USERS } from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  type PublicClient,
  parseTransaction,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { FORGED_HASH, lyingNode } from '../../../test/helpers/lying-node.js'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import type { IntentsService } from '../src/index.js'
import {
  failingNode,
  faultHarness,
  fillJob,
  type ReorgDetails,
  seen,
  settled,
  statusOf,
} from './fixtures/chain-faults.js'
import { evmBalance, freshIndexerPass } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
const NATIVE = '0x0000000000000000000000000000000000000000'

t.setTimeout(4 * PROCESS_START_BOUND_MS)

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const [origin, destination] = devnet.chains as [DevnetChain, DevnetChain]
const originClient = createPublicClient({
  chain: origin.chain,
  transport: http(origin.rpcUrl),
}) as PublicClient
const destinationClient = createPublicClient({
  chain: destination.chain,
  transport: http(destination.rpcUrl),
}) as PublicClient
// The two EVM chains only, with the chain entries each test sets.
const harness = await faultHarness(t, {
  devnet,
  chainIds: [origin.chainId, destination.chainId],
  suite: 'faults',
})
const { loaded, configure, start } = harness

async function quoteNative(client: TestClient, user: (typeof USERS)[number], recipient: Address) {
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: origin.chainId,
    destinationChainId: destination.chainId,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '50000000000000000',
    tradeType: 'EXACT_INPUT',
  })
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  return { quote, requestId: quote.steps.at(-1)?.requestId as string }
}

/** Sends the quote's transactions from `user`, as a wallet does; answers the last one's block. */
async function deposit(quote: Quote, user: (typeof USERS)[number]): Promise<bigint> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(user.privateKey as Hex),
    chain: origin.chain,
    transport: http(origin.rpcUrl),
  })
  let block: bigint | undefined
  for (const step of quote.steps) {
    for (const item of step.items) {
      const data = item.data as { format: string; to: Address; data: Hex; value: string; gas?: string }
      const hash = await wallet.sendTransaction({
        to: data.to,
        data: data.data,
        value: BigInt(data.value),
        // The step's limit, as the Relay SDK sends it: a bare estimate runs out of gas when a
        // repayment empties the depository's balance first.
        ...(data.gas ? { gas: BigInt(data.gas) } : {}),
      })
      block = (await originClient.waitForTransactionReceipt({ hash })).blockNumber
    }
  }
  if (block === undefined) throw new Error('the quote has no transaction')
  return block
}

t.test('a deposit made before the first start is found from the configured start block', async (t) => {
  await configure({})
  // The first start only quotes: no watcher has run, so it has no cursor yet.
  const quoting = await start({ workers: false })
  t.teardown(() => quoting.close())
  const user = USERS[0]!
  const recipient = USERS[3]!.address
  const { quote, requestId } = await quoteNative(
    createTestClient(t, quoting.url, loaded.document),
    user,
    recipient,
  )
  const depositBlock = await deposit(quote, user)
  // More blocks after the deposit: a watcher starting at the head would never see it.
  await origin.faults.mine(3)

  await configure({ [origin.chainId]: { indexer: { startBlock: String(depositBlock) } } })
  const service = await start({ workers: true })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const before = await evmBalance(destinationClient, recipient, NATIVE)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success', 'filled without a manual /transactions/index')
  t.equal(
    (await evmBalance(destinationClient, recipient, NATIVE)) - before,
    BigInt(quote.details.currencyOut.amount),
    'the recipient got the quoted output',
  )
})

/**
 * Quotes and deposits with destination mining paused, so the fill stays unmined; `fault` then acts
 * on the broadcast fill. Checks the request ends `success`, the recipient paid exactly once, by a
 * replacement with the same nonce and higher fees.
 */
async function stuckFill(
  t: Test,
  user: (typeof USERS)[number],
  recipient: Address,
  fault: (fill: Hex, service: IntentsService, requestId: string) => Promise<void>,
): Promise<void> {
  await configure({})
  const service = await start({ workers: true, env: { SOLVER_REPLACE_AFTER_MS: '1500' } })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  await destination.faults.pauseMining()
  t.teardown(() => destination.faults.resumeMining())
  const before = await evmBalance(destinationClient, recipient, NATIVE)
  const { quote, requestId } = await quoteNative(client, user, recipient)
  await deposit(quote, user)
  const submitted = await settled(client, requestId, ['submitted'])
  const fill = submitted.txHashes[0] as Hex
  await fault(fill, service, requestId)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success', 'the request succeeds')
  const job = await fillJob(service, requestId)
  t.ok(job.replaced.length >= 1, 'the fill was replaced')
  t.equal(job.replaced[0]?.transactionId, fill, 'the first one broadcast is among the replaced')
  const mined = parseTransaction(job.raw as Hex)
  for (const earlier of job.replaced) {
    const replaced = parseTransaction(earlier.raw as Hex)
    t.equal(replaced.nonce, mined.nonce, 'the same nonce: only one of them can be mined')
    t.ok((mined.maxFeePerGas ?? 0n) > (replaced.maxFeePerGas ?? 0n), 'the mined one pays more per gas')
    t.equal(
      await destinationClient.request({
        method: 'eth_getTransactionReceipt',
        params: [earlier.transactionId as Hex],
      }),
      null,
      'a replaced one is not mined',
    )
  }
  t.ok(done.txHashes.includes(job.transaction_id), 'the status shows the mined fill')
  t.equal(
    (await evmBalance(destinationClient, recipient, NATIVE)) - before,
    BigInt(quote.details.currencyOut.amount),
    'the recipient is paid once, the quoted output',
  )
}

t.test('a fill priced out by a base-fee spike is replaced with higher fees and paid once', async (t) => {
  await stuckFill(t, USERS[1]!, USERS[2]!.address, async () => {
    // Mined into a block whose base fee the fill's max fee is below: anvil evicts the fill, and
    // sending the same bytes again is refused.
    await destination.faults.spikeBaseFee(500n * 10n ** 9n)
    await destination.faults.mine()
    await destination.faults.resumeMining()
  })
})

t.test('a fill dropped from the mempool and left unmined is sent again, then repriced', async (t) => {
  await stuckFill(t, USERS[2]!, USERS[1]!.address, async (fill, service, requestId) => {
    await destination.faults.dropTransaction(fill)
    // Mining stays paused: the same bytes go back to the mempool and stay there, until the solver
    // replaces them (SOLVER_REPLACE_AFTER_MS) …
    await waitFor(
      'the fill to be replaced',
      async () => (await fillJob(service, requestId)).replaced.length > 0,
    )
    // … and the replacement is what the next block takes.
    await destination.faults.resumeMining()
  })
})

t.test(
  'a deposit reorganised away before its confirmations: no fill, waiting, then DEPOSIT_REORGED after the TTL',
  async (t) => {
    await configure({ [origin.chainId]: { finality: { confirmations: 3 } } })
    let clockOffset = 0
    const service = await start({ workers: true, now: () => Date.now() + clockOffset })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const user = USERS[3]!
    const { quote, requestId } = await quoteNative(client, user, USERS[0]!.address)
    const depositBlock = await deposit(quote, user)
    await waitFor('the deposit to be recorded', async () => (await seen(service, requestId)).deposits === 1)
    // Short of the three confirmations the chain entry asks for, the deposit's block goes, with any
    // block mined after it (the solver's repayments of earlier tests' fills mine some): mining is
    // paused while the depth is read, so no new block slips in between.
    await origin.faults.pauseMining()
    try {
      // Uncached: viem keeps a block number for a few seconds.
      const depth = (await originClient.getBlockNumber({ cacheTime: 0 })) - depositBlock + 1n
      await origin.faults.rollback(Number(depth))
    } finally {
      await origin.faults.resumeMining()
    }
    const noted = await waitFor(
      'the record to note the reorganised deposit',
      () => statusOf(client, requestId),
      {
        until: (record) => (record.details as ReorgDetails | null)?.depositReorged !== undefined,
      },
    )
    t.equal(noted.status, 'waiting', 'the request waits again')
    t.equal((noted.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    t.equal((noted.details as ReorgDetails).depositReorged?.amount, quote.details.currencyIn.amount)
    await origin.faults.mine(4)
    await freshIndexerPass(service)
    t.same(await seen(service, requestId), { deposits: 0, fills: 0 }, 'no deposit kept, no fill queued')
    t.equal((await statusOf(client, requestId)).status, 'waiting', 'more blocks change nothing')

    // Past any quote lifetime (at most 86400 s).
    clockOffset = 2 * 86_400_000
    const failed = await settled(client, requestId, ['failure'])
    t.equal(failed.failReason, 'DEPOSIT_REORGED', 'after the TTL: failed, saying why')
  },
)

t.test('a deposit reorganised away after its fill: recorded on the request and counted', async (t) => {
  await configure({})
  const service = await start({ workers: true })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[0]!
  const { quote, requestId } = await quoteNative(client, user, USERS[2]!.address)
  const depositBlock = await deposit(quote, user)
  t.equal((await settled(client, requestId, ['success', 'failure', 'refund'])).status, 'success')
  await origin.faults.reorg(Number((await origin.faults.head()) - depositBlock + 1n))
  const noted = await waitFor(
    'the record to note the reorganised deposit',
    () => statusOf(client, requestId),
    {
      until: (record) => (record.details as ReorgDetails | null)?.depositReorged !== undefined,
    },
  )
  t.equal(noted.status, 'success', 'the fill was paid: the status stays')
  t.equal(
    (noted.details as ReorgDetails).depositReorged?.stage,
    'after_fill',
    'the record says the fill went out',
  )
  t.equal((noted.details as ReorgDetails).depositReorged?.transactionId, noted.inTxHashes[0])
  const metrics = await client.get('/metrics')
  t.match(
    metrics.text,
    new RegExp(`pontis_deposit_reorgs_total\\{chain="${origin.chainId}",stage="after_fill"\\} 1\\b`),
    'the operator sees it counted',
  )
})

t.test(
  'a deposit reorganised away after it was acted on, before the fill went out: the fill is cancelled',
  async (t) => {
    await configure({})
    // The solver passes once at start and then not for an hour: the fill stays queued.
    const service = await start({ workers: true, solverIntervalMs: 3_600_000 })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const user = USERS[3]!
    const recipient = USERS[1]!.address
    const before = await evmBalance(destinationClient, recipient, NATIVE)
    const { quote, requestId } = await quoteNative(client, user, recipient)
    const depositBlock = await deposit(quote, user)
    await settled(client, requestId, ['pending'])
    t.same(await seen(service, requestId), { deposits: 1, fills: 1 }, 'acted on: the fill is queued')
    await origin.faults.reorg(Number((await origin.faults.head()) - depositBlock + 1n))
    const failed = await settled(client, requestId, ['failure', 'success', 'refund'])
    t.equal(failed.status, 'failure')
    t.equal(failed.failReason, 'DEPOSIT_REORGED')
    t.equal((failed.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    const { rows } = await service.store.client.query<{ state: string }>(
      'SELECT state FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.equal(rows[0]?.state, 'failed', 'the fill job is cancelled')
    await service.solver.tick()
    t.equal(await evmBalance(destinationClient, recipient, NATIVE), before, 'nothing was paid')
    const metrics = await client.get('/metrics')
    t.match(
      metrics.text,
      new RegExp(`pontis_deposit_reorgs_total\\{chain="${origin.chainId}",stage="before_fill"\\} [1-9]`),
    )
  },
)

t.test('a fill reorganised away before its confirmations is sent again and paid once', async (t) => {
  await configure({ [destination.chainId]: { finality: { confirmations: 3 } } })
  const service = await start({ workers: true })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[1]!
  const recipient = USERS[3]!.address
  const before = await evmBalance(destinationClient, recipient, NATIVE)
  const { quote, requestId } = await quoteNative(client, user, recipient)
  await deposit(quote, user)
  const submitted = await settled(client, requestId, ['submitted'])
  const fill = submitted.txHashes[0] as Hex
  const receipt = () =>
    destinationClient.request({ method: 'eth_getTransactionReceipt', params: [fill] }) as Promise<unknown>
  await waitFor('the fill to be mined', receipt)
  t.equal((await statusOf(client, requestId)).status, 'submitted', 'one block of three: not final yet')
  await destination.faults.rollback(1)
  t.equal(await receipt(), null, 'the fill is gone from the chain')
  await waitFor('the solver to send the fill again', receipt)
  await destination.faults.mine(2)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success')
  t.same(done.txHashes, [fill], 'the same signed bytes, mined again')
  t.equal(
    (await evmBalance(destinationClient, recipient, NATIVE)) - before,
    BigInt(quote.details.currencyOut.amount),
    'the recipient is paid once',
  )
})

t.test(
  'a fill reorganised away after it counted as final: recorded, counted, sent again, paid once',
  async (t) => {
    await configure({ [destination.chainId]: { finality: { confirmations: 1 } } })
    const service = await start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const user = USERS[0]!
    const recipient = USERS[2]!.address
    const before = await evmBalance(destinationClient, recipient, NATIVE)
    const { quote, requestId } = await quoteNative(client, user, recipient)
    await deposit(quote, user)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'final at one confirmation')
    const fill = done.txHashes[0] as Hex
    const paid = BigInt(quote.details.currencyOut.amount)
    t.equal((await evmBalance(destinationClient, recipient, NATIVE)) - before, paid, 'paid')
    // A reorganisation deeper than the chain's rule: every block from the fill's on is rolled back.
    const mined = await destinationClient.getTransactionReceipt({ hash: fill })
    const head = await destinationClient.getBlockNumber({ cacheTime: 0 })
    await destination.faults.rollback(Number(head - mined.blockNumber + 1n))
    t.equal((await evmBalance(destinationClient, recipient, NATIVE)) - before, 0n, 'the payment is undone')
    const noted = await waitFor(
      'the request to record the fill that was reorganised away',
      () => statusOf(client, requestId),
      {
        until: (status) =>
          (status.details as { fillReorged?: unknown } | undefined)?.fillReorged !== undefined,
      },
    )
    t.equal(noted.status, 'success', 'the status stays success')
    t.match(noted.details, { fillReorged: { transactionId: fill } }, 'details.fillReorged names the fill')
    await waitFor('the same fill to be mined again', () =>
      destinationClient.request({ method: 'eth_getTransactionReceipt', params: [fill] }),
    )
    t.equal(
      (await evmBalance(destinationClient, recipient, NATIVE)) - before,
      paid,
      'the same signed bytes paid the recipient once',
    )
    t.same((await statusOf(client, requestId)).txHashes, [fill], 'no other fill')
    const metrics = await client.get('/metrics')
    t.match(
      metrics.text,
      new RegExp(
        `pontis_settled_transaction_reorgs_total\\{chain="${destination.chainId}",kind="fill"\\} 1\\b`,
      ),
      'counted once',
    )
  },
)

/**
 * A JSON-RPC node in front of `target` that answers another hash for every block from `lieFrom.block`
 * on (once set); everything else passes through unchanged.
 */
function lyingEvmNode(t: Test, target: string, lieFrom: { block?: bigint }) {
  return lyingNode(t, target, (call) => {
    const request = JSON.parse(call.body || '{}') as { method?: string; params?: unknown[] }
    const asked = request.params?.[0]
    const lied =
      lieFrom.block !== undefined &&
      request.method === 'eth_getBlockByNumber' &&
      typeof asked === 'string' &&
      asked.startsWith('0x') &&
      BigInt(asked) >= lieFrom.block
    const reply = JSON.parse(call.answer) as { result?: { hash?: string } }
    if (!lied || !reply.result) return undefined
    return JSON.stringify({ ...reply, result: { ...reply.result, hash: `0x${FORGED_HASH}` } })
  })
}

t.test(
  'a node lying about a block hash is reported and outvoted; alone against one honest node, nothing is trusted',
  async (t) => {
    const lieFrom: { block?: bigint } = {}
    const liar = await lyingEvmNode(t, origin.rpcUrl, lieFrom)
    const user = USERS[2]!
    const recipient = USERS[0]!.address
    await configure({ [origin.chainId]: { rpc: { url: origin.rpcUrl, fallbackUrls: [liar.url] } } })
    const twoNodes = await start({ workers: true })
    t.teardown(() => twoNodes.close())
    const client = createTestClient(t, twoNodes.url, loaded.document)
    const { quote, requestId } = await quoteNative(client, user, recipient)
    // Every block from the next one on: the solver's repayments of earlier fills may mine one first.
    lieFrom.block = (await origin.faults.head()) + 1n
    t.ok((await deposit(quote, user)) >= lieFrom.block, 'the deposit is in a block the node lies about')
    await waitFor('the deposit to be recorded', async () => (await seen(twoNodes, requestId)).deposits === 1)
    await freshIndexerPass(twoNodes)
    t.same(
      await seen(twoNodes, requestId),
      { deposits: 1, fills: 0 },
      'one honest node of two is no majority: no fill',
    )
    t.equal((await statusOf(client, requestId)).status, 'waiting')
    const metrics = await client.get('/metrics')
    t.match(
      metrics.text,
      new RegExp(`pontis_rpc_calls_total\\{chain="${origin.chainId}",outcome="disagreement"\\} [1-9]`),
      'the disagreement is counted',
    )
    await twoNodes.close()

    // A third node, honest: two of three agree, and the deposit is acted on.
    const honest = await lyingNode(t, origin.rpcUrl, () => undefined)
    await configure({
      [origin.chainId]: { rpc: { url: origin.rpcUrl, fallbackUrls: [liar.url, honest.url] } },
    })
    const threeNodes = await start({ workers: true })
    t.teardown(() => threeNodes.close())
    const api = createTestClient(t, threeNodes.url, loaded.document)
    const done = await settled(api, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'filled once a majority vouches for the block')
  },
)

t.test(
  'a broadcast fill followed for many passes is never given up when a step fails: no refund, paid once',
  async (t) => {
    const node = await failingNode(t, destination.rpcUrl)
    await configure({ [destination.chainId]: { rpc: { url: node.url } } })
    const service = await start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    await destination.faults.pauseMining()
    t.teardown(() => destination.faults.resumeMining())
    const user = USERS[2]!
    const recipient = USERS[0]!.address
    const before = await evmBalance(destinationClient, recipient, NATIVE)
    const { quote, requestId } = await quoteNative(client, user, recipient)
    await deposit(quote, user)
    await settled(client, requestId, ['submitted'])
    const jobKey = `fill:${requestId.toLowerCase()}`
    const job = async () =>
      (
        await service.store.client.query<{ state: string; attempts: number; lease_owner: string | null }>(
          'SELECT state, attempts, lease_owner FROM solver_jobs WHERE job_key = $1',
          [jobKey],
        )
      ).rows[0]
    // The node fails every call; the job has passed as often as a fill followed for a minute does
    // (every pass counts), more than `maxAttempts`.
    node.failing = true
    await service.store.client.query('UPDATE solver_jobs SET attempts = 100 WHERE job_key = $1', [jobKey])
    const failed = await waitFor('a pass of the job with the node failing', job, {
      until: (row) => row !== undefined && row.attempts > 100 && row.lease_owner === null,
    })
    t.equal(failed?.state, 'broadcast', 'the job is still followed, not given up')
    t.equal((await statusOf(client, requestId)).status, 'submitted', 'no failure, no refund')
    node.failing = false
    // The failed pass put the next one off (backoff); bring it forward.
    await service.store.client.query('UPDATE solver_jobs SET not_before = 0 WHERE job_key = $1', [jobKey])
    await destination.faults.resumeMining()
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.equal(
      (await evmBalance(destinationClient, recipient, NATIVE)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once',
    )
  },
)
