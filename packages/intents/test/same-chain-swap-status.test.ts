/**
 * Status, history and webhooks of same-chain swaps the user executes (issue 21), on the real devnet
 * over HTTP: the quote stores the request (`waiting`), the user sends the quoted swap transaction
 * (the request id appended to the router call), and the indexer recognises it by that id and by its
 * payment to the recipient, found by its own scan (no `/transactions/index`). The request reaches
 * `success` with the swap as its in and out transaction, the partner's webhook is delivered signed
 * with that status, and `/requests/v3` lists it. A reverted swap, indexed from its hash, fails with
 * `TRANSACTION_REVERTED`. Every answer is checked against openapi/intents.yaml.
 */
import { createServer } from 'node:http'
import type { IntentsApi } from '@pontis/core'
import { STABLECOIN_ADDRESS, USERS } from '@pontis/devnet'
import t from 'tap'
import { type Address, createWalletClient, type Hex, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { evmBalance, startE2e } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
const NATIVE = '0x0000000000000000000000000000000000000000'
const ADMIN_TOKEN = 'swap-status-admin-token-0123456789abcdef'

const e2e = await startE2e(t, {}, { env: { ADMIN_TOKEN, WEBHOOKS_ALLOW_HTTP_LOOPBACK: 'true' } })
const chain = e2e.evm.chain

// The partner's webhook receiver: every event as it arrived.
const events: Array<{ requestId: string; status: string; signed: boolean }> = []
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString()) as {
      data: { requestId: string; status: string }
    }
    const signed = typeof req.headers['x-signature-sha256'] === 'string'
    events.push({ requestId: body.data.requestId.toLowerCase(), status: body.data.status, signed })
    res.writeHead(200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }
const created = await e2e
  .client(t)
  .post('/admin/keys', { label: 'swapper', webhook: { enabled: true, url: hookUrl } }, admin)
const apiKey = { headers: { 'x-api-key': (created.body as { secret: string }).secret } }

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address
const swapBody = (user: Address, recipient: Address, from: string, to: string, amount: bigint) => ({
  user,
  recipient,
  originChainId: 31337,
  destinationChainId: 31337,
  originCurrency: from,
  destinationCurrency: to,
  amount: amount.toString(),
  tradeType: 'EXACT_INPUT',
})

const requestIdOf = (quote: Quote) => String(quote.steps.at(-1)?.requestId).toLowerCase()

t.test('ETH → USDC: waiting, then success with the swap, a webhook and a history item', async (t) => {
  const client = e2e.client(t)
  const user = USERS[0]!
  const recipient = fresh()
  const res = await client.post(
    '/quote/v2',
    swapBody(user.address, recipient, NATIVE, STABLECOIN_ADDRESS, 5n * 10n ** 16n),
    apiKey,
  )
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.same(
    quote.steps.map((step) => step.id),
    ['swap'],
  )
  const requestId = requestIdOf(quote)
  const before = await e2e.statusOf(client, requestId)
  t.equal(before.status, 'waiting', 'the quote stored the request')
  t.equal(before.originChainId, 31337)
  t.equal(before.destinationChainId, 31337)

  const hash = await e2e.evm.execute(quote, user.privateKey)
  // Found by the indexer's own scan: nobody reports the hash.
  const done = await e2e.waitForStatus(client, requestId)
  t.same(done.inTxHashes, [hash], 'the swap is the in transaction')
  t.same(done.txHashes, [hash], 'and the out transaction')
  const received = await evmBalance(e2e.evm.client, recipient, STABLECOIN_ADDRESS)
  t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), 'the recipient got at least the minimum')
  t.equal(
    (done.details as { swapOutput?: { amount: string } }).swapOutput?.amount,
    received.toString(),
    'the record says what the swap paid the recipient',
  )

  await waitFor(
    'the success webhook',
    () => Promise.resolve(events.filter((e) => e.requestId === requestId)),
    {
      until: (seen) => seen.some((event) => event.status === 'success'),
    },
  )
  const mine = events.filter((event) => event.requestId === requestId)
  t.ok(
    mine.every((event) => event.signed),
    'signed',
  )
  t.same(
    mine.map((event) => event.status),
    ['pending', 'submitted', 'success'],
    'one webhook per status, in order',
  )

  const history = await client.get(`/requests/v3?id=${requestId}`)
  t.equal(history.status, 200)
  const [item] = (history.body as IntentsApi.RequestsPageV3).requests
  t.equal(item?.status, 'success', '/requests/v3 lists it')
  t.same(
    item?.data.inTxs.map((tx) => tx.txHash),
    [hash],
  )
  t.equal(item?.data.route?.quoted.destination.outputCurrency.amount, quote.details.currencyOut.amount)
  const byUser = await client.get(`/requests/v3?user=${user.address}`)
  t.ok(
    (byUser.body as IntentsApi.RequestsPageV3).requests.some((entry) => entry.id.toLowerCase() === requestId),
    'and by its user',
  )
})

t.test(
  'USDC → ETH (native output, unwrapped by the router): success; /transactions/single indexes it',
  async (t) => {
    const client = e2e.client(t)
    const user = USERS[1]!
    const recipient = fresh()
    const quote = (
      await client.post(
        '/quote/v2',
        swapBody(user.address, recipient, STABLECOIN_ADDRESS, NATIVE, 100_000_000n),
        apiKey,
      )
    ).body as Quote
    const requestId = requestIdOf(quote)
    const hash = await e2e.evm.execute(quote, user.privateKey)
    // What the Relay SDK posts after a same-chain transaction: the step item as JSON, with its hash.
    const item = quote.steps.at(-1)?.items[0]?.data as Record<string, unknown>
    const single = await client.post('/transactions/single', {
      tx: JSON.stringify({ ...item, txHash: hash }),
      chainId: '31337',
      requestId,
    })
    t.equal(single.status, 200)
    t.equal(
      (single.body as { requestId?: string }).requestId?.toLowerCase(),
      requestId,
      'the swap names its request',
    )
    const malformed = await client.post('/transactions/single', { tx: '{"to":"0x"}', chainId: 31337 })
    t.equal(malformed.status, 400)
    t.equal((malformed.body as { errorCode?: string }).errorCode, 'INVALID_REQUEST', 'no hash in tx')
    const done = await e2e.waitForStatus(client, requestId)
    t.same(done.txHashes, [hash])
    const received = await evmBalance(e2e.evm.client, recipient, NATIVE)
    t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), 'at least the minimum, in ETH')
    t.equal((done.details as { swapOutput?: { amount: string } }).swapOutput?.amount, received.toString())
  },
)

t.test('a reverted swap fails with TRANSACTION_REVERTED', async (t) => {
  const client = e2e.client(t)
  const user = USERS[2]!
  const quote = (
    await client.post('/quote/v2', swapBody(user.address, fresh(), NATIVE, STABLECOIN_ADDRESS, 10n ** 16n))
  ).body as Quote
  const requestId = requestIdOf(quote)
  const item = quote.steps.at(-1)?.items[0]?.data as { to: Address; data: Hex; value: string }
  const wallet = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: chain.chain,
    transport: http(chain.rpcUrl),
  })
  // Too little gas for the swap: mined, and reverted.
  const hash = await wallet.sendTransaction({
    to: item.to,
    data: item.data,
    value: BigInt(item.value),
    gas: 60_000n,
  })
  const receipt = await e2e.evm.client.waitForTransactionReceipt({ hash })
  t.equal(receipt.status, 'reverted')
  const indexed = await client.post('/transactions/index', { chainId: 31337, txHash: hash })
  t.equal(indexed.status, 200)
  const failed = await e2e.waitForStatus(client, requestId, { wanted: 'failure' })
  t.equal(failed.failReason, 'TRANSACTION_REVERTED')
  t.same(failed.inTxHashes, [hash])
})

t.test('a swap quoted without steps (/price) stores nothing', async (t) => {
  const client = e2e.client(t)
  const res = await client.post(
    '/price',
    swapBody(USERS[3]!.address, fresh(), NATIVE, STABLECOIN_ADDRESS, 10n ** 16n),
  )
  t.equal(res.status, 200)
  const { rows } = await e2e.service.store.client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM requests WHERE quote ->> 'kind' = 'self-swap' AND user_address = $1`,
    [USERS[3]!.address.toLowerCase()],
  )
  t.equal(rows[0]?.n, 0)
})

t.test('exact output: the surplus goes to the recipient unless enableTrueExactOutput', async (t) => {
  const client = e2e.client(t)
  const user = USERS[3]!
  const asked = 30_000_000n
  const body = (recipient: Address, enableTrueExactOutput?: boolean) => ({
    ...swapBody(user.address, recipient, NATIVE, STABLECOIN_ADDRESS, asked),
    tradeType: 'EXACT_OUTPUT',
    ...(enableTrueExactOutput === undefined ? {} : { enableTrueExactOutput }),
  })
  /** Sends the quote's swap; answers what the recipient got and the ETH the swap took (gas aside). */
  const run = async (quote: Quote, recipient: Address) => {
    const before = await evmBalance(e2e.evm.client, user.address, NATIVE)
    const hash = await e2e.evm.execute(quote, user.privateKey)
    const receipt = await e2e.evm.client.getTransactionReceipt({ hash })
    const after = await evmBalance(e2e.evm.client, user.address, NATIVE)
    await e2e.waitForStatus(client, requestIdOf(quote))
    return {
      received: await evmBalance(e2e.evm.client, recipient, STABLECOIN_ADDRESS),
      spent: before - after - receipt.gasUsed * receipt.effectiveGasPrice,
    }
  }

  // Both quoted at one block, before either swap moves the pool.
  const sweptTo = fresh()
  const exactTo = fresh()
  const swept = (await client.post('/quote/v2', body(sweptTo))).body as Quote
  const exact = (await client.post('/quote/v2', body(exactTo, true))).body as Quote
  t.equal(BigInt(swept.details.currencyOut.minimumAmount), asked, 'at least the amount asked for')
  t.ok(BigInt(swept.details.currencyOut.amount) > asked, 'and the surplus on top, by default')
  const sweptRun = await run(swept, sweptTo)
  t.ok(sweptRun.received > asked, `the recipient got ${sweptRun.received}, more than ${asked}`)
  t.equal(sweptRun.spent, BigInt(swept.details.currencyIn.amount), 'the whole quoted input was swapped')

  t.equal(exact.details.currencyOut.amount, asked.toString(), 'true exact output: the amount, no surplus')
  t.equal(BigInt(exact.details.currencyOut.minimumAmount), asked)
  t.equal(exact.details.currencyIn.amount, swept.details.currencyIn.amount, 'the same input bound')
  const exactRun = await run(exact, exactTo)
  t.equal(exactRun.received, asked, 'the recipient got exactly the amount')
  t.ok(
    exactRun.spent < BigInt(exact.details.currencyIn.amount),
    `the router took ${exactRun.spent}, less than the bound: the rest went back to the user`,
  )
})
