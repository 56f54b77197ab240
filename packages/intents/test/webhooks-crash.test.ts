/**
 * SIGKILL of the service with a webhook delivery in flight, then a restart: every event of the
 * request is delivered, none lost (the outbox is durable and the dead worker's lease runs out).
 */
import { createServer, type ServerResponse } from 'node:http'
import type { IntentsApi } from '@pontis/core'
import { devnetEnvironment, USERS } from '@pontis/devnet'
import t from 'tap'
import { deferred, within } from '../../../test/helpers/wait.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'
import { sendDepositStep, startProcessDevnet, startServiceProcess } from './fixtures/service-process.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const ADMIN_TOKEN = 'webhooks-crash-admin-token-0123456789'
const schema = uniqueSchema('hookcrash')
t.teardown(() => dropSchema(schema))

const devnet = await startProcessDevnet(t)
const chainA = devnet.chains[0]!

// The receiver holds the first request open (the delivery is in flight), answers the rest at once.
const delivered = new Map<string, string>()
const held: ServerResponse[] = []
const firstArrived = deferred()
const successArrived = deferred()
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const eventId = String(req.headers['x-event-id'])
    if (held.length === 0 && delivered.size === 0) {
      held.push(res)
      firstArrived.resolve()
      return
    }
    const status = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { status: string } }).data.status
    delivered.set(eventId, status)
    res.writeHead(200).end()
    if (status === 'success') successArrived.resolve()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  for (const res of held) res.destroy()
  return new Promise<void>((resolve) => receiver.close(() => resolve()))
})

/**
 * The end of a service's output without its deposit scans of the chains this devnet does not run
 * (the local config's other families fail every pass, and would fill any tail of the output).
 */
const telling = (output: string) =>
  output
    .split('\n')
    .filter((line) => !line.includes('"msg":"deposit scan failed"'))
    .join('\n')
    .slice(-3000)

t.test('events survive a SIGKILL mid-delivery', async (t) => {
  const env = {
    ...devnetEnvironment(devnet),
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    RATE_LIMITS: 'off',
    ADMIN_TOKEN,
    WEBHOOKS_ALLOW_HTTP_LOOPBACK: 'true',
    WEBHOOK_LEASE_MS: '2000',
    WEBHOOK_TIMEOUT_MS: '60000',
    // The killed worker may hold the fill job too: its lease must run out before the restarted
    // service can fill, and the default (30 s) would make the test wait that long for nothing.
    SOLVER_LEASE_MS: '2000',
  }
  const first = await startServiceProcess(env)
  t.teardown(() => first.stop())
  const post = async (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    (
      await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json()
  const port = (receiver.address() as { port: number }).port
  const { secret } = (await post(
    first.url,
    '/admin/keys',
    { label: 'crash', webhook: { enabled: true, url: `http://127.0.0.1:${port}/hook` } },
    {
      authorization: `Bearer ${ADMIN_TOKEN}`,
    },
  )) as { secret: string }
  const user = USERS[0]!
  const quote = (await post(
    first.url,
    '/quote/v2',
    {
      user: user.address,
      originChainId: 31337,
      destinationChainId: 31338,
      originCurrency: NATIVE,
      destinationCurrency: NATIVE,
      amount: '30000000000000000',
      tradeType: 'EXACT_INPUT',
    },
    { 'x-api-key': secret },
  )) as IntentsApi.QuoteResponse
  const requestId = quote.steps[0]!.requestId as string
  const hash = await sendDepositStep(chainA, user, quote)
  await post(first.url, '/transactions/index', { txHash: hash, chainId: 31337 })

  await within('the first webhook delivery (the request going pending)', firstArrived.promise, {
    lastSeen: () => `service output:\n${telling(first.output())}`,
  })
  first.child.kill('SIGKILL')
  t.equal(await first.exited(), 'SIGKILL', 'killed with the first delivery in flight')

  const second = await startServiceProcess(env)
  t.teardown(() => second.stop())
  const statusNow = async () =>
    (
      (await (
        await fetch(`${second.url}/intents/status/v3?requestId=${requestId}`)
      ).json()) as IntentsApi.StatusRecordV3
    ).status
  await within("the webhook of the request's success, from the restarted service", successArrived.promise, {
    // What the service itself says tells a stuck fill from a stuck delivery.
    lastSeen: async () =>
      `delivered ${[...delivered.values()].join(', ') || 'nothing'}; the request is ${await statusNow()}; ` +
      `service output:\n${telling(second.output())}`,
  })
  const statuses = [...delivered.values()]
  t.ok(statuses.includes('pending'), 'the event in flight at the crash was delivered after the restart')
  t.ok(statuses.includes('success'), `the request's later events arrived too (${statuses.join(', ')})`)
  t.equal(await statusNow(), 'success')
})
