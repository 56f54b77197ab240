/**
 * App fees end to end on the devnet (two anvil chains, the service with its workers): a filled
 * request with `appFees` records the fee for its recipient (`GET /app-fees/{wallet}/balances`), the
 * recipient claims it through the Relay SDK's routes (`POST /app-fees/{wallet}/claim`, then the
 * signature step's post), a signature by anyone else is refused, and the payout is an on-chain
 * transfer of exactly the balance, made once: posting the signature again or claiming again pays
 * nothing more; `GET /app-fees/{wallet}/claims` lists the claims with their payouts. Every answer is
 * checked against openapi/intents.yaml.
 */
import { createPontisClient } from '@pontis/client'
import { type IntentsApi, silentLogger } from '@pontis/core'
import { DEPOSITORY_ADDRESS, devnetEnvironment, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import { type Address, createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { nativeBridgeWithAppFee, sendDepositStep, startProcessDevnet } from './fixtures/service-process.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const devnet = await startProcessDevnet(t)
const [chainA] = devnet.chains as [(typeof devnet.chains)[0]]
const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) })
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: loaded,
  indexerIntervalMs: 100,
  solverIntervalMs: 100,
})
t.teardown(() => service.close())

const user = USERS[0]!
const app = USERS[1]!
const appAccount = privateKeyToAccount(app.privateKey)
const payee = USERS[2]!.address

async function filledWithAppFee(client: TestClient): Promise<IntentsApi.QuoteResponse> {
  const quote = (await client.post('/quote/v2', nativeBridgeWithAppFee(user.address, app.address, '150')))
    .body as IntentsApi.QuoteResponse
  const requestId = quote.steps[0]!.requestId as string
  const hash = await sendDepositStep(chainA, user, quote)
  await client.post('/transactions/index', { txHash: hash, chainId: '31337' })
  await waitFor(
    `request ${requestId} to be filled`,
    async () =>
      (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as IntentsApi.StatusRecordV3,
    { until: (seen) => seen.status === 'success', describe: (seen) => seen?.status },
  )
  return quote
}

const balancesOf = async (client: TestClient, wallet: string) =>
  ((await client.get(`/app-fees/${wallet}/balances`)).body as IntentsApi.AppFeeBalances).balances

t.test('a filled request records its app fee; the recipient claims it once, by signature', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  t.same(await balancesOf(client, app.address), [], 'nothing before any fill')
  const quote = await filledWithAppFee(client)
  const fee = BigInt(quote.fees.app.amount)
  t.ok(fee > 0n, 'the quote charged an app fee')
  const [balance] = await balancesOf(client, app.address.toLowerCase())
  t.equal(
    balance?.amount,
    fee.toString(),
    'the whole fee is the recipient’s balance (any case of the address)',
  )
  t.equal(balance?.currency.chainId, 31337)
  t.equal(balance?.currency.address, NATIVE)
  t.same(await balancesOf(client, user.address), [], 'the user has no app fees')

  const offered = await client.post(`/app-fees/${app.address}/claim`, {
    chainId: 31337,
    currency: NATIVE,
    recipient: payee,
  })
  t.equal(offered.status, 200)
  const { steps, claim } = offered.body as IntentsApi.AppFeeClaimSteps
  t.equal(claim.amount, fee.toString(), 'the claim is for the exact balance')
  t.equal(claim.status, 'offered')
  const item = steps[0]!.items[0]!
  const message = item.data.sign.message
  t.match(message, new RegExp(`Amount: ${fee}`))
  t.notMatch(message, /0x[0-9a-fA-F]{64}/, 'the SDK signs it as text, not as a hash')
  t.same(await balancesOf(client, app.address), [balance], 'an offer takes nothing from the balance')

  // The SDK appends the signature to post.endpoint as `signature` (and adds `referrer` to the body).
  const post = (signature: string) =>
    client.post(`${item.data.post.endpoint}?signature=${signature}`, {
      ...item.data.post.body,
      referrer: 'sdk',
    })
  const stranger = await post(await privateKeyToAccount(user.privateKey).signMessage({ message }))
  t.equal(stranger.status, 400)
  t.equal(
    (stranger.body as IntentsApi.ErrorBody).errorCode,
    'INVALID_SIGNATURE',
    'only the recipient can claim',
  )

  const before = await clientA.getBalance({ address: payee as Address })
  const signature = await appAccount.signMessage({ message })
  const accepted = await post(signature)
  t.equal(accepted.status, 200)
  t.equal((accepted.body as IntentsApi.AppFeeClaim).status, 'authorized')
  t.same(await balancesOf(client, app.address), [], 'the claimed amount left the balance at once')
  const secondClaim = await client.post(`/app-fees/${app.address}/claim`, {
    chainId: 31337,
    currency: NATIVE,
    recipient: payee,
  })
  t.equal(secondClaim.status, 400)
  t.equal(
    (secondClaim.body as IntentsApi.ErrorBody).errorCode,
    'INSUFFICIENT_FUNDS',
    'a second claim finds nothing',
  )

  const paid = await waitFor(
    'the payout to be confirmed',
    async () => (await post(signature)).body as IntentsApi.AppFeeClaim,
    { until: (seen) => seen.status === 'paid' || seen.status === 'failed', describe: (seen) => seen },
  )
  t.equal(paid.status, 'paid')
  t.match(paid.txHash, /^0x[0-9a-f]{64}$/)
  t.equal(
    (await clientA.getBalance({ address: payee as Address })) - before,
    fee,
    'the payee got exactly the fee',
  )
  const { rows } = await service.store.client.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM solver_jobs WHERE kind = 'app_fee_claim'`,
  )
  t.equal(rows[0]?.count, 1, 'one payout, however often the signature was posted')
})

t.test('bad claims are clear 4xx answers', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const unknownChain = await client.post(`/app-fees/${app.address}/claim`, {
    chainId: 999,
    currency: NATIVE,
    recipient: payee,
  })
  t.equal(unknownChain.status, 400)
  const badAddress = await client.post(`/app-fees/${app.address}/claim`, {
    chainId: 31337,
    currency: NATIVE,
    recipient: 'alice',
  })
  t.equal(badAddress.status, 400)
  const unknownClaim = await client.post(`/app-fees/${app.address}/claim/execute?signature=0x1234`, {
    claimId: `clm_${'0'.repeat(32)}`,
  })
  t.equal(unknownClaim.status, 404)
})

t.test(
  'the solver is repaid the deposit less the app fee, which stays in the depository for its claim',
  async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    // Earlier fills are repaid first, so that the depository moves only by this request.
    await waitFor('earlier repayments to be paid', async () => {
      const { rows } = await service.store.client.query<{ open: number }>(
        "SELECT count(*)::int AS open FROM repayments WHERE state <> 'paid'",
      )
      return rows[0]?.open === 0
    })
    const depositoryBefore = await clientA.getBalance({ address: DEPOSITORY_ADDRESS })
    const quote = await filledWithAppFee(client)
    const requestId = quote.steps[0]!.requestId as string
    const amountIn = BigInt(quote.details.currencyIn.amount)
    const fee = BigInt(quote.fees.app.amount)
    // The service's repayment pass runs every 2 s: wait for this request's repayment to be paid.
    const repaid = await waitFor(
      `the repayment of ${requestId} to be paid`,
      async () =>
        (
          await service.store.client.query<{ amount: string; state: string }>(
            'SELECT amount::text AS amount, state FROM repayments WHERE request_id = $1',
            [requestId],
          )
        ).rows[0],
      { until: (seen) => seen?.state === 'paid', describe: (seen) => seen },
    )
    t.equal(BigInt(repaid?.amount ?? -1), amountIn - fee, 'the solver is owed the deposit less the app fee')
    t.equal(
      (await clientA.getBalance({ address: DEPOSITORY_ADDRESS })) - depositoryBefore,
      fee,
      'the depository keeps exactly the unclaimed fee',
    )
    const [balance] = await balancesOf(client, app.address)
    t.equal(balance?.amount, fee.toString(), 'the recipient can claim it')
  },
)

t.test('the partner client reads the balance and claims it, signing with the wallet', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const quote = await filledWithAppFee(client)
  const fee = BigInt(quote.fees.app.amount)
  const pontis = createPontisClient({ baseUrl: service.url })
  const { balances } = await pontis.getAppFeeBalances(app.address)
  t.same(
    balances.map((balance) => balance.amount),
    [(fee * 2n).toString()],
    'the fees of the two unclaimed fills: the first one was claimed',
  )
  const claim = await pontis.claimAppFees(
    app.address,
    { chainId: 31337, currency: NATIVE, recipient: payee },
    (message) => appAccount.signMessage({ message }),
  )
  t.equal(claim.status, 'authorized')
  t.equal(claim.amount, (fee * 2n).toString())
  t.same((await pontis.getAppFeeBalances(app.address)).balances, [])
  await t.rejects(
    pontis.claimAppFees(app.address, { chainId: 31337, currency: NATIVE, recipient: payee }, (message) =>
      appAccount.signMessage({ message }),
    ),
    { status: 400, errorCode: 'INSUFFICIENT_FUNDS' } as Error & { status: number; errorCode: string },
    'nothing is left to claim',
  )
})

t.test('the claims history lists each claim with its amount, status and payout, newest first', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  type History = IntentsApi.AppFeeClaimHistory
  const history = async (query = '') =>
    (await client.get(`/app-fees/${app.address}/claims${query}`)).body as History
  // The partner client's claim above may still be on its way: wait until both payouts are confirmed.
  const all = await waitFor('both claims to be paid', () => history(), {
    until: (seen) => seen.claims.length === 2 && seen.claims.every((claim) => claim.status === 'paid'),
    describe: (seen) => seen?.claims.map((claim) => claim.status),
  })
  const { rows } = await service.store.client.query<{ id: string; amount: string; transaction_id: string }>(
    `SELECT c.id, c.amount::text AS amount, j.transaction_id FROM app_fee_claims c
     JOIN solver_jobs j ON j.job_key = 'app-fee-claim:' || c.id ORDER BY c.created_at DESC, c.id DESC`,
  )
  t.same(
    all.claims.map((claim) => [claim.claimId, claim.currency.amount, claim.txHash]),
    rows.map((row) => [row.id, row.amount, row.transaction_id]),
    'every claim, newest first, with its amount and its payout transaction',
  )
  const [newest, oldest] = all.claims as [IntentsApi.AppFeeClaimRecord, IntentsApi.AppFeeClaimRecord]
  t.equal(
    BigInt(newest.currency.amount),
    BigInt(oldest.currency.amount) * 2n,
    'the second claim took two fees',
  )
  t.equal(newest.currency.currency.chainId, 31337)
  t.equal(newest.currency.currency.address, NATIVE)
  t.equal(newest.recipient.toLowerCase(), payee.toLowerCase())
  t.ok(Date.parse(newest.createdAt) >= Date.parse(oldest.createdAt), 'createdAt orders them')
  t.equal(all.continuation, undefined, 'one page holds them all')

  const first = await history('?limit=1')
  t.same(first.claims, [newest], 'a page of one')
  t.type(first.continuation, 'string', 'says more may follow')
  const second = await history(`?limit=1&continuation=${first.continuation}`)
  t.same(second.claims, [oldest], 'the continuation gives the next one')
  t.equal(second.continuation, undefined, 'and nothing after it')

  const altered = await client.get(`/app-fees/${app.address}/claims?continuation=x${first.continuation}`)
  t.equal(altered.status, 400)
  t.equal((altered.body as IntentsApi.ErrorBody).errorCode, 'INVALID_CONTINUATION')
  const elsewhere = await client.get(`/app-fees/${user.address}/claims?continuation=${first.continuation}`)
  t.equal(elsewhere.status, 400, "another wallet's cursor is refused")
  t.equal((elsewhere.body as IntentsApi.ErrorBody).errorCode, 'INVALID_CONTINUATION')
  const badLimit = await client.get(`/app-fees/${app.address}/claims?limit=0`)
  t.equal(badLimit.status, 400)
  t.equal((badLimit.body as IntentsApi.ErrorBody).errorCode, 'INVALID_REQUEST')
  t.same(
    ((await client.get(`/app-fees/${user.address}/claims`)).body as History).claims,
    [],
    'a wallet that made no claim has none',
  )
  t.same(
    await history(),
    (await client.get(`/app-fees/${app.address.toLowerCase()}/claims`)).body as History,
    'any case of the address',
  )

  const pontis = createPontisClient({ baseUrl: service.url })
  t.same(await pontis.getAppFeeClaims(app.address), all, 'the partner client reads the same history')
  t.same((await pontis.getAppFeeClaims(app.address, { limit: 1 })).claims, [newest])
})
