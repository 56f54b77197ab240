/**
 * SIGKILL between the steps of recording a fill: the service (its own process, on PostgreSQL) dies
 * after the request's success and its app fee are written but before they commit. The restarted
 * service follows the fill again and records it once: the request is filled, the fee counted exactly
 * once, and the recipient's balance is that one fee.
 */
import type { IntentsApi } from '@pontis/core'
import { devnetEnvironment, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/index.js'
import { dropSchema, querySchema, TEST_DATABASE_URL, uniqueSchema } from './fixtures/postgres.js'
import {
  finalStatus,
  indexBeforeFailpoint,
  nativeBridgeWithAppFee,
  sendDepositStep,
  startProcessDevnet,
  startServiceProcess,
} from './fixtures/service-process.js'

// The service is started twice as its own process (TypeScript compiled at start-up) around a fill.
t.setTimeout(300_000)

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const devnet = await startProcessDevnet(t)
const [chainA] = devnet.chains as [(typeof devnet.chains)[0]]

t.test('SIGKILL before the fill and its app fee commit: the fee is counted once after restart', async (t) => {
  const schema = uniqueSchema('app_fee_crash')
  t.teardown(() => dropSchema(schema))
  const env = {
    ...devnetEnvironment(devnet),
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    SOLVER_LEASE_MS: '2000',
    RATE_LIMITS: 'off',
  }
  const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill-recorded' })
  t.teardown(() => first.stop())
  const client = createTestClient(t, first.url, loaded.document)
  const user = USERS[0]!
  const app = USERS[1]!.address
  const quote = (await client.post('/quote/v2', nativeBridgeWithAppFee(user.address, app, '200')))
    .body as IntentsApi.QuoteResponse
  const requestId = quote.steps[0]!.requestId as string
  const hash = await sendDepositStep(chainA, user, quote)
  await indexBeforeFailpoint(client, hash)

  t.equal(await first.exited(), 'SIGKILL', 'the service died with the fill recorded but not committed')
  const [stored] = await querySchema<{ status: string }>(
    schema,
    'SELECT status FROM requests WHERE id = $1',
    [requestId.toLowerCase()],
  )
  t.equal(stored?.status, 'submitted', 'nothing of the success was committed')
  const [job] = await querySchema<{ state: string }>(
    schema,
    `SELECT state FROM solver_jobs WHERE request_id = $1 AND kind = 'fill'`,
    [requestId.toLowerCase()],
  )
  t.equal(
    job?.state,
    'broadcast',
    'the fill job is still to be followed, not confirmed with nothing recorded',
  )

  const second = await startServiceProcess(env)
  t.teardown(() => second.stop())
  const again = createTestClient(t, second.url, loaded.document)
  const record = await finalStatus(again, requestId)
  t.equal(record.status, 'success')
  const accruals = await querySchema<{ amount: string }>(
    schema,
    'SELECT amount FROM app_fee_accruals WHERE request_id = $1',
    [requestId.toLowerCase()],
  )
  t.same(accruals, [{ amount: quote.fees.app.amount }], 'the fee is recorded exactly once')
  const balances = (await again.get(`/app-fees/${app}/balances`)).body as IntentsApi.AppFeeBalances
  t.same(
    balances.balances.map((balance) => balance.amount),
    [quote.fees.app.amount],
    'the balance is that one fee',
  )
})
