/**
 * The lifecycle under chain faults on the Bitcoin devnet (the regtest simulator behind its Esplora
 * API, an anvil chain, real PostgreSQL, HTTP only), caused through the simulator's fault powers
 * (packages/devnet/src/bitcoin/faults.ts): mempool deposits dropped or replaced by fee after their
 * request moved to `pending`, a deposit reorganised away before its confirmations, after it was
 * acted on (the queued fill cancelled) and after its fill, a stuck fill replaced by fee up to its
 * cap, a fill reorganised away (sent again), a service process killed between signing and sending a
 * fill, a broadcast fill's node unreachable for longer than `maxAttempts` passes (never given up),
 * the per-currency high-value confirmation rule, and an Esplora node lying about a block hash
 * (outvoted by two honest ones; alone against one, nothing is trusted).
 */
import type { IntentsApi } from '@pontis/core'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_USERS,
  type BitcoinDevAccount,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import * as btc from '@scure/btc-signer'
import t, { type Test } from 'tap'
import { createPublicClient, http, type PublicClient } from 'viem'
import { disagreements, FORGED_HASH, lyingNode } from '../../../test/helpers/lying-node.js'
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
  warningsLogger,
} from './fixtures/chain-faults.js'
import { evmBalance, executeEvmSteps, freshIndexerPass } from './fixtures/e2e.js'
import { openTestSchema, querySchema } from './fixtures/postgres.js'
import {
  finalStatus,
  indexBeforeFailpoint,
  processEnvironment,
  startServiceProcess,
} from './fixtures/service-process.js'

type Quote = IntentsApi.QuoteResponse
const BTC = BITCOIN_DEVNET_CHAIN_ID
const EVM = 31337

t.setTimeout(4 * PROCESS_START_BOUND_MS)

const devnet = await startDevnet({ chains: [{ chainId: EVM, port: 0 }], bitcoin: { port: 0 } })
t.teardown(() => devnet.stop())
const bitcoin = devnet.bitcoin
if (!bitcoin) throw new Error('the devnet was started without Bitcoin')
const evmChain = devnet.chains[0] as (typeof devnet.chains)[0]
const evmClient = createPublicClient({
  chain: evmChain.chain,
  transport: http(evmChain.rpcUrl),
}) as PublicClient
const { loaded, configure, start } = await faultHarness(t, {
  devnet,
  chainIds: [EVM, BTC],
  suite: 'faults_btc',
})

async function quoteToEvm(client: TestClient, user: BitcoinDevAccount, amount: bigint) {
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient: USERS[0]!.address,
    originChainId: BTC,
    destinationChainId: EVM,
    originCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: amount.toString(),
    tradeType: 'EXACT_INPUT',
  })
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  return { quote, requestId: quote.steps[0]?.requestId as string }
}

/**
 * Signs the quoted deposit PSBT as `user`'s P2WPKH wallet and broadcasts it; `extraFee` sat taken
 * off its change makes another transaction spending the same coins (a replacement by fee).
 */
async function deposit(quote: Quote, user: BitcoinDevAccount, extraFee = 0n): Promise<string> {
  const data = quote.steps[0]?.items[0]?.data as { psbt: string }
  const transaction = btc.Transaction.fromPSBT(Buffer.from(data.psbt, 'hex'), { allowUnknownOutputs: true })
  if (extraFee > 0n) {
    const userScript = Buffer.from(user.outputScript).toString('hex')
    const change = Array.from({ length: transaction.outputsLength }, (_, index) => index).find(
      (index) => Buffer.from(transaction.getOutput(index).script ?? []).toString('hex') === userScript,
    )
    if (change === undefined) throw new Error('the deposit has no change to pay a higher fee from')
    const amount = transaction.getOutput(change).amount as bigint
    transaction.updateOutput(change, { amount: amount - extraFee })
  }
  transaction.sign(user.keypair.privateKey as Uint8Array)
  transaction.finalize()
  const answer = await fetch(`${bitcoin?.url}/tx`, { method: 'POST', body: transaction.hex })
  const text = await answer.text()
  if (!answer.ok) throw new Error(`broadcast refused: ${text}`)
  return text
}

/** A service whose clock can be moved past every quote's TTL (at most 86 400 s). */
async function startWithClock(t: Test, extra: Record<number, Record<string, unknown>> = {}) {
  await configure(extra)
  let offset = 0
  const service = await start({ workers: true, now: () => Date.now() + offset })
  t.teardown(() => service.close())
  return {
    service,
    client: createTestClient(t, service.url, loaded.document),
    pastTtl: () => (offset = 2 * 86_400_000),
  }
}

async function noteGone(client: TestClient, requestId: string) {
  return waitFor('the record to note the deposit that went', () => statusOf(client, requestId), {
    until: (record) => (record.details as ReorgDetails | null)?.depositReorged !== undefined,
    describe: (record) => record && { status: record.status, details: record.details },
  })
}

t.test(
  'a mempool deposit dropped after its request moved to pending: waiting again, no fill, DEPOSIT_REORGED after the TTL',
  async (t) => {
    const { service, client, pastTtl } = await startWithClock(t)
    const user = BITCOIN_USERS.p2wpkh
    const { quote, requestId } = await quoteToEvm(client, user, 3_000_000n)
    const txid = await deposit(quote, user)
    const pending = await settled(client, requestId, ['pending'])
    t.same(pending.inTxHashes, [txid], 'pending from the mempool')
    await bitcoin.faults.dropTransaction(txid)
    const noted = await noteGone(client, requestId)
    t.equal(noted.status, 'waiting', 'back to waiting')
    t.equal((noted.details as ReorgDetails).depositReorged?.transactionId, txid)
    t.equal((noted.details as ReorgDetails).depositReorged?.amount, quote.details.currencyIn.amount)
    await bitcoin.faults.mine(2)
    await freshIndexerPass(service)
    t.same(await seen(service, requestId), { deposits: 0, fills: 0 }, 'no deposit kept, no fill queued')
    t.equal((await statusOf(client, requestId)).status, 'waiting', 'blocks change nothing')
    pastTtl()
    const failed = await settled(client, requestId, ['failure'])
    t.equal(failed.failReason, 'DEPOSIT_REORGED', 'after the TTL: failed, saying why')
    t.equal(await seen(service, requestId).then((found) => found.fills), 0, 'never filled')
  },
)

t.test(
  'a mempool deposit replaced by fee: the replacement paying the same request is its deposit, filled once',
  async (t) => {
    await configure({})
    const service = await start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const user = BITCOIN_USERS.p2wpkh
    const { quote, requestId } = await quoteToEvm(client, user, 2_500_000n)
    const first = await deposit(quote, user)
    await settled(client, requestId, ['pending'])
    const replacement = await deposit(quote, user, 5_000n)
    t.not(replacement, first, 'another transaction')
    t.notOk(bitcoin.chain.transaction(first), 'the node took the replacement instead')
    const moved = await waitFor('the request to follow the replacement', () => statusOf(client, requestId), {
      until: (record) => record.status === 'pending' && record.inTxHashes.includes(replacement),
      describe: (record) => record && { status: record.status, inTxHashes: record.inTxHashes },
    })
    t.equal(
      (moved.details as ReorgDetails).depositReorged?.transactionId,
      first,
      'the record says which one went',
    )
    bitcoin.mine(1)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'filled, not refunded as a second deposit')
    const { rows } = await service.store.client.query<{ transaction_id: string; outcome: string }>(
      'SELECT transaction_id, outcome FROM deposits WHERE request_id = $1',
      [requestId.toLowerCase()],
    )
    t.same(rows, [{ transaction_id: replacement, outcome: 'matched' }], 'one deposit: the replacement')
    t.same(await seen(service, requestId), { deposits: 1, fills: 1 }, 'one fill')
  },
)

t.test(
  'a deposit reorganised away before its confirmations: no fill, waiting, then DEPOSIT_REORGED after the TTL',
  async (t) => {
    const { service, client, pastTtl } = await startWithClock(t, {
      [BTC]: { finality: { confirmations: 3 } },
    })
    const user = BITCOIN_USERS.p2wpkh
    const { quote, requestId } = await quoteToEvm(client, user, 2_000_000n)
    const txid = await deposit(quote, user)
    await settled(client, requestId, ['pending'])
    bitcoin.mine(1)
    t.ok(bitcoin.chain.transaction(txid)?.block, 'in a block: one confirmation of three')
    await freshIndexerPass(service)
    t.same(await seen(service, requestId), { deposits: 1, fills: 0 }, 'not acted on yet')
    await bitcoin.faults.reorg(1)
    t.notOk(bitcoin.chain.transaction(txid), 'the deposit is gone from the chain')
    const noted = await noteGone(client, requestId)
    t.equal(noted.status, 'waiting', 'the request waits again')
    t.equal((noted.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    await bitcoin.faults.mine(3)
    await freshIndexerPass(service)
    t.same(await seen(service, requestId), { deposits: 0, fills: 0 }, 'no deposit kept, no fill queued')
    pastTtl()
    const failed = await settled(client, requestId, ['failure'])
    t.equal(failed.failReason, 'DEPOSIT_REORGED')
  },
)

/** sat/vB of a transaction the devnet holds, rounded up as the plugin rounds it. */
function rateOf(txid: string): bigint {
  const record = bitcoin?.chain.transaction(txid)
  if (!record) throw new Error(`${txid} is not on the devnet`)
  const vsize = BigInt(record.vsize)
  return (record.fee + vsize - 1n) / vsize
}

t.test('a stuck Bitcoin fill is replaced by fee up to the configured cap, and paid once', async (t) => {
  const cap = 30n
  await configure({ [BTC]: { plugin: { maxReplacementFeeRate: Number(cap) } } })
  const service: IntentsService = await start({ workers: true, env: { SOLVER_REPLACE_AFTER_MS: '300' } })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const recipient = BITCOIN_USERS.p2pkh
  const res = await client.post('/quote/v2', {
    user: USERS[2]!.address,
    recipient: recipient.address,
    originChainId: EVM,
    destinationChainId: BTC,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    amount: '2000000000',
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 200, res.text.slice(0, 300))
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const before = bitcoin.chain.balance(recipient.outputScript)
  const hash = await executeEvmSteps(evmChain, quote, USERS[2]!.privateKey)
  await client.post('/transactions/index', { chainId: EVM, txHash: hash })
  const submitted = await settled(client, requestId, ['submitted'])
  const first = submitted.txHashes[0] as string
  // No block comes: the solver replaces the fill, 25 % more each time, until the next step would
  // pass the cap.
  const next = (rate: bigint) => (rate * 5n + 3n) / 4n
  const capped = await waitFor('the fill to be replaced up to the cap', () => fillJob(service, requestId), {
    // A replacement is stored before it is broadcast: until then it is not on the devnet.
    until: (job) =>
      job.replaced.length > 0 &&
      bitcoin.chain.transaction(job.transaction_id) !== undefined &&
      next(rateOf(job.transaction_id)) > cap,
    describe: (job) => job && { replaced: job.replaced.length, current: job.transaction_id },
  })
  t.equal(capped.replaced[0]?.transactionId, first, 'the first one broadcast was replaced')
  t.ok(capped.replaced.length >= 2, `replaced ${capped.replaced.length} times`)
  t.ok(rateOf(capped.transaction_id) <= cap, 'within the cap')
  for (const earlier of capped.replaced)
    t.notOk(bitcoin.chain.transaction(earlier.transactionId), 'a replaced fill is gone from the mempool')
  bitcoin.mine(2)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success')
  const job = await fillJob(service, requestId)
  t.equal(job.transaction_id, capped.transaction_id, 'the last replacement is the one mined')
  t.ok(done.txHashes.includes(job.transaction_id), 'the status shows the mined fill')
  const paid = bitcoin.chain.balance(recipient.outputScript).confirmed - before.confirmed
  t.ok(paid >= BigInt(quote.details.currencyOut.minimumAmount), `paid ${paid} sat`)
  const mined = bitcoin.chain.transaction(job.transaction_id)
  const toRecipient = mined?.tx.outs
    .filter((out) => Buffer.from(out.script).equals(Buffer.from(recipient.outputScript)))
    .reduce((sum, out) => sum + out.value, 0n)
  t.equal(paid, toRecipient, 'paid once: exactly the mined fill’s payment')
})

t.test('the per-currency high-value rule of the chain entry: more blocks above the amount', async (t) => {
  await configure({
    [BTC]: {
      finality: {
        confirmations: 1,
        highValue: [{ currency: BITCOIN_NATIVE_CURRENCY_ID, above: '3000000', confirmations: 3 }],
      },
    },
  })
  const service = await start({ workers: true })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  // One after the other: each quote's deposit spends the user's coins the previous one left.
  const low = await quoteToEvm(client, BITCOIN_USERS.p2wpkh, 2_000_000n)
  await deposit(low.quote, BITCOIN_USERS.p2wpkh)
  await settled(client, low.requestId, ['pending'])
  const high = await quoteToEvm(client, BITCOIN_USERS.p2wpkh, 4_000_000n)
  t.ok(high.quote.details.timeEstimate > low.quote.details.timeEstimate, 'the quote says it waits longer')
  await deposit(high.quote, BITCOIN_USERS.p2wpkh)
  await settled(client, high.requestId, ['pending'])
  bitcoin.mine(1)
  t.equal((await settled(client, low.requestId, ['success', 'failure', 'refund'])).status, 'success')
  await freshIndexerPass(service)
  t.equal((await seen(service, high.requestId)).fills, 0, 'above the threshold: one block is not enough')
  bitcoin.mine(1)
  await freshIndexerPass(service)
  t.equal((await seen(service, high.requestId)).fills, 0, 'nor two')
  bitcoin.mine(1)
  t.equal((await settled(client, high.requestId, ['success', 'failure', 'refund'])).status, 'success')
})

/** A quote paying `recipient` on Bitcoin for 2 000 stablecoins `user` deposits on the EVM chain. */
async function quoteToBitcoin(
  client: TestClient,
  user: (typeof USERS)[number],
  recipient: BitcoinDevAccount,
) {
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient: recipient.address,
    originChainId: EVM,
    destinationChainId: BTC,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    amount: '2000000000',
    tradeType: 'EXACT_INPUT',
  })
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  return { quote, requestId: quote.steps[0]?.requestId as string }
}

/** Satoshi `txid` (on the devnet) pays `recipient`. */
function paidBy(txid: string, recipient: BitcoinDevAccount): bigint {
  const record = bitcoin?.chain.transaction(txid)
  if (!record) throw new Error(`${txid} is not on the devnet`)
  return record.tx.outs
    .filter((out) => Buffer.from(out.script).equals(Buffer.from(recipient.outputScript)))
    .reduce((sum, out) => sum + out.value, 0n)
}

const depositReorgs = (metrics: string, stage: string): number =>
  Number(
    new RegExp(`pontis_deposit_reorgs_total\\{chain="${BTC}",stage="${stage}"\\} (\\d+)`).exec(
      metrics,
    )?.[1] ?? 0,
  )

t.test('a Bitcoin fill reorganised away before its confirmations is sent again and paid once', async (t) => {
  await configure({ [BTC]: { finality: { confirmations: 3 } } })
  const service = await start({ workers: true })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const recipient = BITCOIN_USERS['p2sh-p2wpkh']
  const before = bitcoin.chain.balance(recipient.outputScript)
  const { quote, requestId } = await quoteToBitcoin(client, USERS[1]!, recipient)
  const hash = await executeEvmSteps(evmChain, quote, USERS[1]!.privateKey)
  await client.post('/transactions/index', { chainId: EVM, txHash: hash })
  const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
  await waitFor('the fill to reach the mempool', () => bitcoin.chain.transaction(fill))
  bitcoin.mine(1)
  t.ok(bitcoin.chain.transaction(fill)?.block, 'in a block: one confirmation of three')
  await freshIndexerPass(service)
  t.equal((await statusOf(client, requestId)).status, 'submitted', 'not final yet')
  await bitcoin.faults.reorg(1)
  t.notOk(bitcoin.chain.transaction(fill), 'the fill is gone from the chain (not back in the mempool)')
  await waitFor('the solver to send the fill again', () => bitcoin.chain.transaction(fill))
  await bitcoin.faults.mine(3)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success')
  t.same(done.txHashes, [fill], 'the same signed bytes, mined again')
  const paid = bitcoin.chain.balance(recipient.outputScript).confirmed - before.confirmed
  t.ok(paid >= BigInt(quote.details.currencyOut.minimumAmount), `paid ${paid} sat`)
  t.equal(paid, paidBy(fill, recipient), 'paid once')
})

t.test(
  'a Bitcoin fill reorganised away after it counted as final: recorded, counted, sent again, paid once',
  async (t) => {
    await configure()
    const service = await start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = BITCOIN_USERS['p2sh-p2wpkh']
    const before = bitcoin.chain.balance(recipient.outputScript)
    const { quote, requestId } = await quoteToBitcoin(client, USERS[2]!, recipient)
    const hash = await executeEvmSteps(evmChain, quote, USERS[2]!.privateKey)
    await client.post('/transactions/index', { chainId: EVM, txHash: hash })
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    await waitFor('the fill to reach the mempool', () => bitcoin.chain.transaction(fill))
    // A fill's amount is not at hand when its outcome is read: the plugin's high-value rule (two
    // blocks) applies to it.
    bitcoin.mine(2)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'final at two confirmations')
    // A reorganisation deeper than the chain's rule: both blocks replaced.
    await bitcoin.faults.reorg(2)
    t.notOk(bitcoin.chain.transaction(fill), 'the fill is gone from the chain (not back in the mempool)')
    const noted = await waitFor(
      'the request to record the fill that went',
      () => statusOf(client, requestId),
      {
        until: (status) => (status.details as { fillReorged?: unknown } | null)?.fillReorged !== undefined,
      },
    )
    t.equal(noted.status, 'success', 'the status stays success')
    t.match(noted.details, { fillReorged: { transactionId: fill } }, 'details.fillReorged names the fill')
    await waitFor('the solver to send the same fill again', () => bitcoin.chain.transaction(fill))
    await bitcoin.faults.mine(1)
    const paid = bitcoin.chain.balance(recipient.outputScript).confirmed - before.confirmed
    t.ok(paid >= BigInt(quote.details.currencyOut.minimumAmount), `paid ${paid} sat`)
    t.equal(paid, paidBy(fill, recipient), 'paid once, by the same signed bytes')
    t.same((await statusOf(client, requestId)).txHashes, [fill], 'no other fill')
    const metrics = await client.get('/metrics')
    t.match(
      metrics.text,
      new RegExp(`pontis_settled_transaction_reorgs_total\\{chain="${BTC}",kind="fill"\\} 1\\b`),
      'counted once',
    )
  },
)

t.test(
  'a Bitcoin deposit reorganised away after it was acted on, before the fill went out: the fill is cancelled',
  async (t) => {
    await configure({})
    // The solver passes once at start and then not for an hour: the fill stays queued.
    const service = await start({ workers: true, solverIntervalMs: 3_600_000 })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = USERS[1]!.address
    const before = await evmBalance(evmClient, recipient, STABLECOIN_ADDRESS)
    const user = BITCOIN_USERS.p2wpkh
    const { quote, requestId } = await quoteToEvm(client, user, 1_500_000n)
    const txid = await deposit(quote, user)
    await settled(client, requestId, ['pending'])
    bitcoin.mine(1)
    await waitFor('the fill to be queued', async () => (await seen(service, requestId)).fills === 1)
    await bitcoin.faults.reorg(1)
    t.notOk(bitcoin.chain.transaction(txid), 'the deposit is gone from the chain')
    const failed = await settled(client, requestId, ['failure', 'success', 'refund'])
    t.equal(failed.status, 'failure')
    t.equal(failed.failReason, 'DEPOSIT_REORGED')
    t.equal((failed.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    t.equal((failed.details as ReorgDetails).depositReorged?.transactionId, txid)
    const { rows } = await service.store.client.query<{ state: string }>(
      'SELECT state FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.equal(rows[0]?.state, 'failed', 'the fill job is cancelled')
    await service.solver.tick()
    t.equal(await evmBalance(evmClient, recipient, STABLECOIN_ADDRESS), before, 'nothing was paid')
    t.ok(depositReorgs((await client.get('/metrics')).text, 'before_fill') >= 1, 'counted')
  },
)

t.test(
  'a Bitcoin deposit reorganised away after its fill: recorded on the request and counted',
  async (t) => {
    await configure({})
    const service = await start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const user = BITCOIN_USERS.p2wpkh
    const { quote, requestId } = await quoteToEvm(client, user, 1_500_000n)
    const txid = await deposit(quote, user)
    await settled(client, requestId, ['pending'])
    bitcoin.mine(1)
    t.equal((await settled(client, requestId, ['success', 'failure', 'refund'])).status, 'success')
    const block = bitcoin.chain.transaction(txid)?.block
    if (!block) throw new Error('the deposit is not in a block')
    await bitcoin.faults.reorg(bitcoin.chain.height - block.height + 1)
    t.notOk(bitcoin.chain.transaction(txid), 'the deposit is gone from the chain')
    const noted = await noteGone(client, requestId)
    t.equal(noted.status, 'success', 'the fill was paid: the status stays')
    t.equal(
      (noted.details as ReorgDetails).depositReorged?.stage,
      'after_fill',
      'the record says the fill went out',
    )
    t.equal((noted.details as ReorgDetails).depositReorged?.transactionId, txid)
    t.equal(
      depositReorgs((await client.get('/metrics')).text, 'after_fill'),
      1,
      'the operator sees it counted',
    )
  },
)

t.test(
  'an Esplora node lying about a block hash: one to one nothing is trusted (pending, no fill); two honest nodes outvote it, it is reported, the deposit is filled',
  async (t) => {
    // Another hash for every block height it is asked about.
    const liar = await lyingNode(t, bitcoin.url, (call) =>
      call.method === 'GET' && /^\/block-height\/\d+$/.test(call.path) && call.status === 200
        ? FORGED_HASH
        : undefined,
    )
    await configure({ [BTC]: { rpc: { url: bitcoin.url, fallbackUrls: [liar.url] } } })
    const oneToOne = warningsLogger()
    const twoNodes = await start({ workers: true, logger: oneToOne.logger })
    t.teardown(() => twoNodes.close())
    const client = createTestClient(t, twoNodes.url, loaded.document)
    const user = BITCOIN_USERS.p2wpkh
    const { quote, requestId } = await quoteToEvm(client, user, 1_000_000n)
    const txid = await deposit(quote, user)
    await settled(client, requestId, ['pending'])
    bitcoin.mine(1)
    t.ok(bitcoin.chain.transaction(txid)?.block, 'the deposit is in a block')
    await waitFor('the liar to be counted', async () => {
      return disagreements((await client.get('/metrics')).text, BTC) > 0
    })
    await freshIndexerPass(twoNodes)
    t.same(
      await seen(twoNodes, requestId),
      { deposits: 1, fills: 0 },
      'one honest node of two is no majority: no fill',
    )
    t.equal((await statusOf(client, requestId)).status, 'pending', 'seen in the mempool, never acted on')
    const read = await twoNodes.registry.chain(BTC).adapter.reading?.readDeposits(txid, { fresh: true })
    t.match(read, { state: 'pending', final: false, facts: [] }, 'the deposit reads as not mined yet')
    const warned = oneToOne.warnings.find((line) => line.message.includes('another block hash'))
    t.equal(warned?.fields.node, new URL(liar.url).host, 'the log names the node by its host')
    t.notMatch(JSON.stringify(warned), /http:/, 'and not by its URL')
    await twoNodes.close()

    // A third node, honest: two of three agree, and the deposit is acted on.
    const honest = await lyingNode(t, bitcoin.url, () => undefined)
    await configure({ [BTC]: { rpc: { url: bitcoin.url, fallbackUrls: [liar.url, honest.url] } } })
    const threeNodes = await start({ workers: true })
    t.teardown(() => threeNodes.close())
    const api = createTestClient(t, threeNodes.url, loaded.document)
    const done = await settled(api, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'filled once a majority vouches for the block')
    t.same(await seen(threeNodes, requestId), { deposits: 1, fills: 1 }, 'filled once')
    t.ok(disagreements((await api.get('/metrics')).text, BTC) > 0, 'the outvoted liar is counted')
  },
)

t.test(
  'SIGKILL between signing and sending a Bitcoin fill: the restarted service sends the stored bytes, paid once',
  async (t) => {
    const database = await openTestSchema(t, 'crashbtc')
    const env = processEnvironment(devnet, database.schema)
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill:after-sign' })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const recipient = BITCOIN_USERS.p2tr
    const before = bitcoin.chain.balance(recipient.outputScript)
    const { quote, requestId } = await quoteToBitcoin(client, USERS[3]!, recipient)
    const hash = await executeEvmSteps(evmChain, quote, USERS[3]!.privateKey)
    await indexBeforeFailpoint(client, hash, String(EVM))
    t.equal(await first.exited(), 'SIGKILL', 'the service died right after signing the fill')
    const [stored] = await querySchema<{ raw: string; transaction_id: string }>(
      database.schema,
      'SELECT raw, transaction_id FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.ok(stored?.raw, 'the signed fill was stored before the crash')
    const signed = stored?.transaction_id as string
    t.notOk(bitcoin.chain.transaction(signed), 'nothing was broadcast before the crash')

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const again = createTestClient(t, second.url, loaded.document)
    await waitFor('the stored fill to be sent', () => bitcoin.chain.transaction(signed))
    // A fill counts as final at the plugin's `highValueConfirmations` (default 2) blocks.
    bitcoin.mine(2)
    const done = await finalStatus(again, requestId)
    t.equal(done.status, 'success', 'the request survived the crash and was filled')
    t.same(done.txHashes, [signed], 'by the bytes signed before the crash')
    t.same(
      bitcoin.chain.mempoolTransactions().filter((record) => paidBy(record.txid, recipient) > 0n),
      [],
      'no second fill waits in the mempool',
    )
    const paid = bitcoin.chain.balance(recipient.outputScript).confirmed - before.confirmed
    t.ok(paid >= BigInt(quote.details.currencyOut.minimumAmount), `paid ${paid} sat`)
    t.equal(paid, paidBy(signed, recipient), 'paid exactly once')
  },
)

t.test(
  'a broadcast Bitcoin fill followed for many passes is never given up when its node is unreachable: no refund, paid once',
  async (t) => {
    const node = await failingNode(t, bitcoin.url)
    await configure({ [BTC]: { rpc: { url: node.url } } })
    const service = await start({ workers: true })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = BITCOIN_USERS.p2pkh
    const before = bitcoin.chain.balance(recipient.outputScript)
    const { quote, requestId } = await quoteToBitcoin(client, USERS[0]!, recipient)
    const hash = await executeEvmSteps(evmChain, quote, USERS[0]!.privateKey)
    await client.post('/transactions/index', { chainId: EVM, txHash: hash })
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    // No block comes: the fill waits in the mempool, followed every pass.
    await waitFor('the fill to reach the mempool', () => bitcoin.chain.transaction(fill))
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
    // A fill counts as final at the plugin's `highValueConfirmations` (default 2) blocks.
    bitcoin.mine(2)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.same(done.txHashes, [fill], 'the fill broadcast before the node failed')
    const paid = bitcoin.chain.balance(recipient.outputScript).confirmed - before.confirmed
    t.ok(paid >= BigInt(quote.details.currencyOut.minimumAmount), `paid ${paid} sat`)
    t.equal(paid, paidBy(fill, recipient), 'paid once')
  },
)
