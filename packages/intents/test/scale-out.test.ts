/**
 * Scale-out on one PostgreSQL: two intent-service processes both run indexer and solver loops and
 * never fill a request twice; a third, API-only process streams over its websocket the status
 * changes the others make (LISTEN/NOTIFY across processes).
 */
import type { IntentsApi } from '@pontis/core'
import { devnetEnvironment, USERS } from '@pontis/devnet'
import t from 'tap'
import { type Address, createPublicClient, http } from 'viem'
import WebSocket from 'ws'
import { deferred, waitFor, within } from '../../../test/helpers/wait.js'
import {
  dropSchema,
  querySchema,
  TEST_DATABASE_URL,
  uniqueSchema,
  unsentSolverTransactions,
} from './fixtures/postgres.js'
import { sendDepositStep, startProcessDevnet, startServiceProcess } from './fixtures/service-process.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const schema = uniqueSchema('scale')
t.teardown(() => dropSchema(schema))
const devnet = await startProcessDevnet(t)
const [chainA, chainB] = devnet.chains as [(typeof devnet.chains)[0], (typeof devnet.chains)[0]]
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) })
const env = {
  ...devnetEnvironment(devnet),
  DATABASE_URL: TEST_DATABASE_URL,
  DATABASE_SCHEMA: schema,
  SOLVER_LEASE_MS: '3000',
  RATE_LIMITS: 'off',
  ADMIN_TOKEN: 'scale-out-admin-token-0123456789abc',
  WEBHOOKS_ALLOW_HTTP_LOOPBACK: 'true',
}

// One process first, so migrations run once; the others find them applied.
const workerA = await startServiceProcess(env)
const [workerB, apiOnly] = await Promise.all([
  startServiceProcess(env),
  startServiceProcess({ ...env, PONTIS_WORKERS: 'off' }),
])
t.teardown(() => Promise.all([workerA.stop(), workerB.stop(), apiOnly.stop()]).then(() => undefined))

async function post(base: string, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return res.json()
}

t.test('requests filled by two competing workers are each paid exactly once', async (t) => {
  const recipients = USERS.map((user) => user.address)
  const before = await Promise.all(
    recipients.map((address) => clientB.getBalance({ address: address as Address })),
  )
  const quotes: Array<{ requestId: string; out: bigint; recipientIndex: number }> = []
  for (const [index, user] of USERS.entries()) {
    const recipientIndex = (index + 1) % USERS.length
    const quote = (await post(index % 2 ? workerA.url : workerB.url, '/quote/v2', {
      user: user.address,
      recipient: recipients[recipientIndex],
      originChainId: 31337,
      destinationChainId: 31338,
      originCurrency: NATIVE,
      destinationCurrency: NATIVE,
      amount: '50000000000000000',
      tradeType: 'EXACT_INPUT',
    })) as IntentsApi.QuoteResponse
    const hash = await sendDepositStep(chainA, user, quote)
    // Both workers are told about every deposit, as racing clients would.
    await Promise.all([
      post(workerA.url, '/transactions/index', { txHash: hash, chainId: '31337' }),
      post(workerB.url, '/transactions/index', { txHash: hash, chainId: 31337 }),
    ])
    quotes.push({
      requestId: quote.steps[0]!.requestId as string,
      out: BigInt(quote.details.currencyOut.amount),
      recipientIndex,
    })
  }
  const records = await waitFor(
    'every request to be final',
    () =>
      Promise.all(
        quotes.map(
          async ({ requestId }) =>
            (await (
              await fetch(`${apiOnly.url}/intents/status/v3?requestId=${requestId}`)
            ).json()) as IntentsApi.StatusRecordV3,
        ),
      ),
    {
      until: (seen) => seen.every((record) => ['success', 'failure', 'refund'].includes(record.status)),
      describe: (seen) => seen?.map((record) => `${record.requestId.slice(0, 10)} ${record.status}`),
    },
  )
  for (const record of records) {
    t.equal(record.status, 'success', `${record.requestId.slice(0, 10)} succeeded`)
    t.equal(record.txHashes.length, 1, 'one fill transaction')
  }
  // A fill signed twice would be on chain B already, or signed and still to land.
  t.equal(
    await unsentSolverTransactions(schema, 31338, (address) => clientB.getTransactionCount({ address })),
    0n,
    'nothing either worker signed is still to land',
  )
  const after = await Promise.all(
    recipients.map((address) => clientB.getBalance({ address: address as Address })),
  )
  for (const { out, recipientIndex } of quotes) {
    t.equal(
      after[recipientIndex]! - before[recipientIndex]!,
      out,
      `recipient ${recipientIndex} was paid exactly once`,
    )
  }
  const [jobs] = await querySchema<{ fills: number }>(
    schema,
    "SELECT count(*)::int AS fills FROM solver_jobs WHERE kind = 'fill'",
  )
  t.equal(jobs?.fills, quotes.length, 'one fill job per request')
})

t.test("a status change made by a worker reaches the API-only process's websocket", async (t) => {
  const user = USERS[0]!
  const quote = (await post(workerA.url, '/quote/v2', {
    user: user.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '40000000000000000',
    tradeType: 'EXACT_INPUT',
  })) as IntentsApi.QuoteResponse
  const requestId = quote.steps[0]!.requestId as string
  const socket = new WebSocket(`${apiOnly.url.replace('http', 'ws')}/intents/ws`)
  t.teardown(() => socket.terminate())
  const seen: string[] = []
  const subscribed = deferred()
  const succeeded = deferred()
  socket.on('message', (raw) => {
    const message = JSON.parse(String(raw)) as { type?: string; event?: string; data?: { status?: string } }
    if (message.type === 'connection') {
      socket.send(
        JSON.stringify({ type: 'subscribe', event: 'request.status.updated', filters: { id: requestId } }),
      )
    }
    if (message.event === 'request.status.updated' && message.data?.status) {
      seen.push(message.data.status)
      // The current status comes right after the subscription is in place.
      subscribed.resolve()
      if (message.data.status === 'success') succeeded.resolve()
    }
  })
  await within('the subscription and its current status', subscribed.promise)
  const hash = await sendDepositStep(chainA, user, quote)
  await post(workerA.url, '/transactions/index', { txHash: hash, chainId: 31337 })
  await within('the success on the websocket', succeeded.promise, { lastSeen: () => seen.join(' → ') })
  t.same(seen[0], 'waiting', 'the current status comes first')
  t.ok(
    seen.includes('pending') || seen.includes('submitted'),
    `intermediate statuses were streamed (${seen.join(' → ')})`,
  )
  t.equal(seen.at(-1), 'success')
})

t.test('two delivery workers never send the same webhook twice', async (t) => {
  const { createServer } = await import('node:http')
  const deliveries = new Map<string, number>()
  const statuses: string[] = []
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const eventId = String(req.headers['x-event-id'])
      deliveries.set(eventId, (deliveries.get(eventId) ?? 0) + 1)
      statuses.push(
        (JSON.parse(Buffer.concat(chunks).toString()) as { data: { status: string } }).data.status,
      )
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  const port = (receiver.address() as { port: number }).port
  const created = (await (
    await fetch(`${workerA.url}/admin/keys`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer scale-out-admin-token-0123456789abc',
      },
      body: JSON.stringify({
        label: 'scale',
        webhook: { enabled: true, url: `http://127.0.0.1:${port}/hook` },
      }),
    })
  ).json()) as { secret: string }
  const requestIds: string[] = []
  for (const user of USERS.slice(0, 3)) {
    const quote = (await (
      await fetch(`${workerB.url}/quote/v2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': created.secret },
        body: JSON.stringify({
          user: user.address,
          originChainId: 31337,
          destinationChainId: 31338,
          originCurrency: NATIVE,
          destinationCurrency: NATIVE,
          amount: '20000000000000000',
          tradeType: 'EXACT_INPUT',
        }),
      })
    ).json()) as IntentsApi.QuoteResponse
    const hash = await sendDepositStep(chainA, user, quote)
    await post(workerA.url, '/transactions/index', { txHash: hash, chainId: 31337 })
    requestIds.push(quote.steps[0]!.requestId as string)
  }
  // Every event marked delivered: a worker sends before it marks, so all sends have arrived.
  await waitFor(
    'every webhook event to be marked delivered',
    () =>
      querySchema<{ state: string; events: number }>(
        schema,
        'SELECT state, count(*)::int AS events FROM webhook_events WHERE request_id = ANY($1) GROUP BY state',
        [requestIds],
      ),
    {
      until: (rows) =>
        rows.length === 1 && rows[0]?.state === 'delivered' && rows[0].events === requestIds.length * 3,
    },
  )
  t.equal(
    statuses.filter((status) => status === 'success').length,
    requestIds.length,
    'every request reported success',
  )
  t.equal(deliveries.size, requestIds.length * 3, 'pending, submitted and success for each request')
  t.ok(
    [...deliveries.values()].every((count) => count === 1),
    'each event was sent exactly once',
  )
})
