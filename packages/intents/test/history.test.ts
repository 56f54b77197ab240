/**
 * Request history (`GET /requests/v3`, deprecated `GET /requests/v2`) over real HTTP on loopback,
 * on PGlite and on real PostgreSQL: the service's own runtime and app, requests stored by the store
 * and moved by the lifecycle store (deposit recorded, fill job signed and confirmed), every answer
 * checked against the document by the test client. Chain RPCs point at a closed port: nothing here
 * reads a chain.
 */
import crypto from 'node:crypto'
import { silentLogger } from '@pontis/core'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import type { paths } from '@relayprotocol/relay-sdk'
import t, { type Test } from 'tap'
import { getAddress } from 'viem'
import { createIntentsApp, createIntentsRuntime, INTENTS_DOCUMENT_PATH } from '../src/index.js'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import type { NewRequest, RequestStore } from '../src/store/index.js'
import { openTestSchema, TEST_DATABASE_URL } from './fixtures/postgres.js'

const CLOSED = 'http://127.0.0.1:9'
const ADMIN_TOKEN = 'history-admin-token-0123456789abcdef'
const NATIVE = '0x0000000000000000000000000000000000000000'
const USER_1 = '0x03508bB71268BBA25ECaCC8F620e01866650532c'
// Stored as the quote stores it: the EVM plugin's canonical (EIP-55) form.
const USER_2 = getAddress('0x1acffa0e66fbc4405270b0c1eca2dcd3e2bf4b2e')
const SVM_USER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'
const REFERRER_ADDRESS = getAddress('0x2546bcd3c84621e976d8185a91a922ae77ecec30')
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)

type Item = Record<string, unknown> & {
  id: string
  status: string
  user: string
  recipient: string
  createdAt: string
  updatedAt: string
  data: Record<string, unknown> & {
    inTxs: Array<Record<string, unknown>>
    outTxs: Array<Record<string, unknown>>
  }
}
type Page = { requests: Item[]; continuation?: string }
type ErrorBody = { message: string; errorCode: string }
type RelayQuery<Path extends '/requests/v2' | '/requests/v3'> = Required<
  NonNullable<paths[Path]['get']['parameters']['query']>
>

/** Every query member of Relay's published types at once (the compiler keeps the list complete). */
function relayQueries(id: string): { v3: RelayQuery<'/requests/v3'>; v2: RelayQuery<'/requests/v2'> } {
  const shared = {
    limit: 20,
    continuation: '',
    user: USER_1,
    id,
    orderId: id,
    originChainId: 31337,
    destinationChainId: 31338,
    privateChainsToInclude: 'none',
    depositAddress: '',
    includeChildRequests: true,
    includeAuthenticatedData: true,
    status: 'success' as const,
    apiKey: 'someone-elses-key',
    sortBy: 'createdAt' as const,
    sortDirection: 'desc' as const,
    startTimestamp: 0,
    endTimestamp: 4_000_000_000,
    startBlock: 0,
    endBlock: 99_999_999,
  }
  return {
    v3: {
      ...shared,
      includeTotal: true,
      term: 'eth',
      depositTxHash: '',
      fillTxHash: '',
      refundTxHash: '',
      chainId: 31337,
      recipient: USER_1,
      failReason: 'N/A',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
      requestType: 'bridge',
      currencyInChainId: 31337,
      currencyOutChainId: 31338,
      currencyInAddress: NATIVE,
      currencyOutAddress: NATIVE,
      currencyInSymbol: 'ETH',
      currencyOutSymbol: 'ETH',
      amountUsdMin: 0,
      amountUsdMax: 1_000_000,
      appFeesAmountUsdMin: 0,
      appFeesAmountUsdMax: 1_000_000,
      fillTimeMin: 0,
      fillTimeMax: 1_000_000,
      features: 'fast_fill',
      filters: '{}',
    },
    v2: {
      ...shared,
      hash: '',
      includeOrderData: true,
      chainId: '31337',
      referrer: '',
    },
  }
}

/** A query string of `members`, leaving out empty strings (what a client sends for "no value"). */
function queryString(members: Record<string, unknown>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(members)) if (value !== '') params.set(name, String(value))
  return params.toString()
}

const randomId = () => `0x${crypto.randomBytes(32).toString('hex')}`

const fee = (chainId: number, amount: string, usd: string) => ({
  currency: {
    chainId,
    address: NATIVE,
    symbol: 'ETH',
    name: 'Ether',
    decimals: 18,
    metadata: { isNative: true },
  },
  amount,
  amountFormatted: (Number(amount) / 1e18).toString(),
  amountUsd: usd,
  minimumAmount: amount,
})

interface Seeded {
  readonly id: string
  readonly keyId: string | null
  readonly originChainId: number
  readonly destinationChainId: number
  readonly user: string
  readonly referrer: string | null
  readonly referrerAddress: string | null
  readonly createdAt: number
}

/** One backend's service with keys A and B and requests of A, B and nobody. */
async function scenario(t: Test, backend: 'pglite' | 'postgres') {
  let clock = 1_767_225_600_000
  const now = () => clock
  const env: Record<string, string> = {
    LOCAL_A_RPC_URL: CLOSED,
    LOCAL_B_RPC_URL: CLOSED,
    RATE_LIMITS: 'off',
    ADMIN_TOKEN,
  }
  if (backend === 'postgres') {
    const database = await openTestSchema(t, 'history')
    env.DATABASE_URL = TEST_DATABASE_URL
    env.DATABASE_SCHEMA = database.schema
  }
  const runtime = await createIntentsRuntime({ env, logger: silentLogger, now })
  const { koa } = await createIntentsApp({ ...runtime, document: loaded })
  const server = await listen(koa, { port: 0 })
  t.teardown(async () => {
    await server.close()
    await runtime.store.close()
    await runtime.registry.close()
  })
  const keyA = await runtime.keys.create({ label: 'partner A' })
  const keyB = await runtime.keys.create({ label: 'partner B' })
  const lifecycle = new LifecycleStore(runtime.store, now)
  const seeded: Seeded[] = []

  const insert = async (
    store: RequestStore,
    overrides: Partial<NewRequest> & { keyId?: string | null; referrerAddress?: string } = {},
  ): Promise<Seeded> => {
    clock += 1000
    const { keyId = null, referrerAddress, ...rest } = overrides
    const request: NewRequest = {
      id: randomId(),
      originChainId: 31337,
      destinationChainId: 31338,
      userAddress: USER_1,
      recipient: USER_1,
      refundTo: USER_1,
      originCurrency: NATIVE,
      destinationCurrency: NATIVE,
      tradeType: 'EXACT_INPUT',
      amountIn: 10_000_000_000_000_000n,
      amountOut: 9_974_000_000_000_000n,
      minimumAmountOut: 9_924_130_000_000_000n,
      ...(keyId ? { apiKeyId: keyId } : {}),
      expiresAt: clock + 600_000,
      quote: {
        fees: {
          gas: fee(31337, '0', '0'),
          relayer: fee(31337, '26000000000000', '0.078'),
          relayerGas: fee(31337, '21000000000000', '0.063'),
          relayerService: fee(31337, '5000000000000', '0.015'),
          app: fee(31337, '0', '0'),
          subsidized: fee(31337, '0', '0'),
        },
        slippageBps: 50,
        ...(referrerAddress ? { request: { referrerAddress } } : {}),
        currencyIn: fee(31337, '10000000000000000', '30'),
        currencyOut: { ...fee(31338, '9974000000000000', '29.922'), minimumAmount: '9924130000000000' },
      },
      ...rest,
    }
    await store.insertRequest(request)
    const entry = {
      id: request.id,
      keyId,
      originChainId: request.originChainId,
      destinationChainId: request.destinationChainId,
      user: request.userAddress,
      referrer: request.referrer ?? null,
      referrerAddress: referrerAddress ?? null,
      createdAt: clock,
    }
    seeded.push(entry)
    return entry
  }

  // Partner A: 24 requests over two routes, two users and two referrers; B: 5; nobody: 3.
  for (let i = 0; i < 24; i++) {
    await insert(runtime.store, {
      keyId: keyA.key.id,
      ...(i % 3 === 0 ? { originChainId: 31338, destinationChainId: 31337 } : {}),
      ...(i % 4 === 0 ? { userAddress: USER_2, recipient: USER_2, refundTo: USER_2 } : {}),
      referrer: i % 2 === 0 ? 'app-even' : 'app-odd',
      ...(i % 5 === 0 ? { referrerAddress: REFERRER_ADDRESS } : {}),
    })
  }
  for (let i = 0; i < 5; i++) await insert(runtime.store, { keyId: keyB.key.id, referrer: 'app-b' })
  for (let i = 0; i < 3; i++)
    await insert(runtime.store, { userAddress: USER_2, recipient: USER_2, refundTo: USER_2 })

  // One of A's requests goes the whole way: deposit indexed, fill signed, submitted and confirmed.
  const filled = seeded[5]!
  const depositHash = `0x${crypto.randomBytes(32).toString('hex')}`
  const fillHash = `0x${crypto.randomBytes(32).toString('hex')}`
  clock += 3000
  await lifecycle.recordDeposit({
    chainId: 31337,
    transactionId: depositHash,
    index: 0,
    depositId: filled.id,
    depositor: USER_1,
    currency: NATIVE,
    amount: 10_000_000_000_000_000n,
    blockNumber: 12n,
    requestId: filled.id,
    outcome: 'matched',
  })
  await lifecycle.transition(filled.id, { to: 'pending', inTxHash: depositHash })
  await lifecycle.enqueue({
    jobKey: `fill:${filled.id}`,
    requestId: filled.id,
    kind: 'fill',
    chainId: 31338,
    payload: {},
  })
  const [job] = await lifecycle.claimJobs('test', 60_000, 1)
  clock += 2000
  t.ok(await lifecycle.storeSigned(job!.id, 'test', { transactionId: fillHash, raw: '0x00', amount: 1n }))
  await lifecycle.transition(filled.id, { to: 'submitted', txHash: fillHash })
  // Another of A's requests is only submitted (v2 shows it as pending).
  const submitted = seeded[7]!
  await lifecycle.transition(submitted.id, { to: 'pending', inTxHash: `0x${'ab'.repeat(32)}` })
  await lifecycle.transition(submitted.id, { to: 'submitted', txHash: `0x${'cd'.repeat(32)}` })
  clock += 1000
  await lifecycle.setJobState(job!.id, 'confirmed')
  await lifecycle.transition(filled.id, { to: 'success' })

  const api = createTestClient(t, server.url, loaded.document)
  return {
    api,
    runtime,
    seeded,
    keyA,
    keyB,
    filled,
    submitted,
    depositHash,
    fillHash,
    insert,
    tick: (ms: number) => {
      clock += ms
    },
    asA: { headers: { 'x-api-key': keyA.secret } },
    asB: { headers: { 'x-api-key': keyB.secret } },
    asOperator: { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
  }
}

type Scenario = Awaited<ReturnType<typeof scenario>>

/** Every page of a query, following `continuation`; fails on a page that is not 200. */
async function walk(
  t: Test,
  api: TestClient,
  path: string,
  options: { headers?: Record<string, string> } = {},
  between?: () => Promise<void>,
): Promise<Item[]> {
  const items: Item[] = []
  let continuation: string | undefined
  for (let pages = 0; pages < 100; pages++) {
    const separator = path.includes('?') ? '&' : '?'
    const url = continuation ? `${path}${separator}continuation=${encodeURIComponent(continuation)}` : path
    const res = await api.get(url, options)
    t.equal(res.status, 200, `${url.slice(0, 80)} answers 200`)
    const page = res.body as Page
    items.push(...page.requests)
    continuation = page.continuation
    if (!continuation) return items
    await between?.()
  }
  throw new Error(`${path}: more than 100 pages`)
}

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id)
const newestFirst = (seeded: readonly Seeded[]) =>
  [...seeded].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))

function suite(backend: 'pglite' | 'postgres') {
  t.test(backend, async (t) => {
    const s: Scenario = await scenario(t, backend)
    const { api } = s
    const ofA = s.seeded.filter((entry) => entry.keyId === s.keyA.key.id)

    t.test('access: operator sees all, a partner its own, anonymous only lookups', async (t) => {
      const all = await walk(t, api, '/requests/v3?limit=50', s.asOperator)
      t.same(ids(all), ids(newestFirst(s.seeded)), 'operator: every request, newest first')

      const a = await walk(t, api, '/requests/v3', s.asA)
      t.same(ids(a), ids(newestFirst(ofA)), 'partner A: exactly its own 24, newest first')
      const b = await walk(t, api, '/requests/v3', s.asB)
      t.equal(b.length, 5, 'partner B: its own 5')
      t.notOk(
        b.some((item) => ofA.some((entry) => entry.id === item.id)),
        'partner B sees none of A',
      )
      const bFiltered = await api.get(`/requests/v3?referrer=app-even`, s.asB)
      t.same((bFiltered.body as Page).requests, [], "a filter never widens a partner's scope")

      const anonymousList = await api.get('/requests/v3')
      t.equal(anonymousList.status, 401)
      t.equal((anonymousList.body as ErrorBody).errorCode, 'UNAUTHORIZED')
      t.match((anonymousList.body as ErrorBody).message, /x-api-key.*id, hash or user/)
      const anonymousByChain = await api.get('/requests/v3?originChainId=31337&status=success')
      t.equal(anonymousByChain.status, 401, 'anonymous browse by chain and status is refused')

      const byId = await api.get(`/requests/v3?id=${s.filled.id.toUpperCase().replace('0X', '0x')}`)
      t.equal(byId.status, 200, 'anonymous lookup by id (any case)')
      t.same(ids((byId.body as Page).requests), [s.filled.id])
      const byHash = await api.get(`/requests/v3?hash=${s.fillHash}`)
      t.same(ids((byHash.body as Page).requests), [s.filled.id], 'anonymous lookup by fill hash')
      const byUser = await api.get(`/requests/v3?user=${USER_2.toLowerCase()}&limit=50`)
      t.same(
        ids((byUser.body as Page).requests),
        ids(newestFirst(s.seeded.filter((entry) => entry.user === USER_2))),
        "anonymous lookup by user (lower-case form of a checksummed address) sees every party's requests",
      )
      const bLooksUp = await api.get(`/requests/v3?id=${s.filled.id}`, s.asB)
      t.same(ids((bLooksUp.body as Page).requests), [s.filled.id], 'a lookup is public for partners too')
      t.notOk(JSON.stringify(bLooksUp.body).includes(s.keyA.key.id), 'items never name the key')

      const wrongKey = await api.get('/requests/v3', { headers: { 'x-api-key': `pk_${'x'.repeat(64)}` } })
      t.equal(wrongKey.status, 401, 'unknown x-api-key')
      const wrongBearer = await api.get(`/requests/v3?id=${s.filled.id}`, {
        headers: { authorization: 'Bearer wrong-token-0123456789abcdef0123' },
      })
      t.equal(wrongBearer.status, 401, 'a wrong bearer token is 401 even on a lookup')
      t.equal((wrongBearer.body as ErrorBody).errorCode, 'UNAUTHORIZED')

      // The same runtime served without ADMIN_TOKEN: a bearer token is refused as on the admin API.
      const { koa } = await createIntentsApp({ ...s.runtime, adminToken: undefined, document: loaded })
      const disabled = await listen(koa, { port: 0 })
      t.teardown(() => disabled.close())
      const noOperator = createTestClient(t, disabled.url, loaded.document)
      const forbidden = await noOperator.get('/requests/v3', s.asOperator)
      t.equal(forbidden.status, 403, 'a bearer token while the admin API is disabled')
      t.equal((forbidden.body as ErrorBody).errorCode, 'FORBIDDEN')
      t.equal((await noOperator.get('/requests/v3', s.asA)).status, 200, 'partners are unaffected')
    })

    t.test('an item: status, timeline, transactions with chains and hashes, amounts, fees', async (t) => {
      const res = await api.get(`/requests/v3?id=${s.filled.id}`)
      const [item] = (res.body as Page).requests
      t.match(item, {
        id: s.filled.id,
        status: 'success',
        user: USER_1,
        recipient: USER_1,
        refundTo: USER_1,
        sender: USER_1,
        depositAddress: null,
        protocol: { orderId: s.filled.id },
        createdAt: new Date(s.filled.createdAt).toISOString(),
      })
      t.ok(Date.parse(item!.updatedAt) > s.filled.createdAt, 'updatedAt moved with the lifecycle')
      t.same(item!.data.inTxs, [
        {
          txHash: s.depositHash,
          chainId: 31337,
          type: 'onchain',
          timestamp: item!.data.inTxs[0]!.timestamp,
          block: 12,
        },
      ])
      t.match(item!.data.outTxs, [{ txHash: s.fillHash, chainId: 31338, type: 'onchain', status: 'success' }])
      t.ok(
        (item!.data.outTxs[0]!.timestamp as number) >= (item!.data.inTxs[0]!.timestamp as number),
        'the fill is recorded after the deposit (Unix seconds)',
      )
      t.match(item!.data, {
        failReason: 'N/A',
        refundFailReason: null,
        slippageTolerance: '50',
        referrer: s.filled.referrer,
        fees: {
          quoted: {
            execution: { amount: '21000000000000', usd: '0.063' },
            platform: { amount: '5000000000000' },
          },
          currency: { chainId: 31337, symbol: 'ETH' },
        },
        route: {
          quoted: {
            origin: { inputCurrency: { amount: '10000000000000000', currency: { chainId: 31337 } } },
            destination: {
              outputCurrency: { amount: '9974000000000000', minimumAmount: '9924130000000000' },
            },
          },
        },
      })
      const byDeposit = await api.get(`/requests/v3?depositTxHash=${s.depositHash}`)
      t.same(ids((byDeposit.body as Page).requests), [s.filled.id], 'depositTxHash')
      const byFill = await api.get(`/requests/v3?fillTxHash=${s.fillHash}`)
      t.same(ids((byFill.body as Page).requests), [s.filled.id], 'fillTxHash')
      const notRefund = await api.get(`/requests/v3?refundTxHash=${s.fillHash}`)
      t.same((notRefund.body as Page).requests, [], 'a fill hash is not a refund')
    })

    t.test('filters and sort orders', async (t) => {
      const check = async (query: string, expected: readonly Seeded[], what: string) => {
        const items = await walk(t, api, `/requests/v3?${query}`, s.asOperator)
        t.same(ids(items), ids(newestFirst(expected)), what)
      }
      await check(
        'originChainId=31338',
        s.seeded.filter((e) => e.originChainId === 31338),
        'originChainId',
      )
      await check(
        'destinationChainId=31337',
        s.seeded.filter((e) => e.destinationChainId === 31337),
        'destinationChainId',
      )
      await check('chainId=31338', s.seeded, 'chainId: either direction')
      await check(
        'chainId=31338&originChainId=31338',
        s.seeded.filter((e) => e.originChainId === 31338),
        'chainId yields to originChainId',
      )
      await check(
        'referrer=app-odd',
        s.seeded.filter((e) => e.referrer === 'app-odd'),
        'referrer',
      )
      const referred = s.seeded.filter((e) => e.referrerAddress === REFERRER_ADDRESS)
      t.ok(referred.length > 1, 'some requests were quoted with a referrerAddress')
      await check(
        `referrerAddress=${REFERRER_ADDRESS.toLowerCase()}`,
        referred,
        'referrerAddress, any letter case',
      )
      const shown = await walk(t, api, '/requests/v3?limit=50', s.asOperator)
      t.same(
        shown.map((item) => item.data.referrerAddress),
        newestFirst(s.seeded).map((e) => e.referrerAddress),
        'each item shows the referrerAddress it was quoted with, null when none',
      )
      await check('status=success', [s.filled], 'status')
      await check(`orderId=${s.filled.id}`, [s.filled], 'orderId is the request id')
      await check(
        `recipient=${USER_2}`,
        s.seeded.filter((e) => e.user === USER_2),
        'recipient',
      )
      const from = s.seeded[10]!.createdAt
      const to = s.seeded[20]!.createdAt
      await check(
        `startTimestamp=${from / 1000}&endTimestamp=${to / 1000}`,
        s.seeded.filter((e) => e.createdAt >= from && e.createdAt <= to + 999),
        'time range in Unix seconds, both ends inclusive',
      )
      await check(`user=${SVM_USER}`, [], 'a user of another family matches nothing here')
      const combined = s.seeded.filter(
        (e) => e.keyId === s.keyA.key.id && e.originChainId === 31338 && e.referrer === 'app-even',
      )
      const partnerCombined = await walk(t, api, '/requests/v3?originChainId=31338&referrer=app-even', s.asA)
      t.same(
        ids(partnerCombined),
        ids(newestFirst(combined)),
        "filters combine with AND within a partner's scope",
      )

      const ascending = await walk(t, api, '/requests/v3?sortDirection=asc&limit=7', s.asA)
      t.same(ids(ascending), ids(newestFirst(ofA)).reverse(), 'createdAt asc')
      const byUpdate = await walk(t, api, '/requests/v3?sortBy=updatedAt&limit=50', s.asA)
      t.equal(byUpdate[0]!.id, s.filled.id, 'updatedAt desc: the last request to change comes first')
      t.equal(byUpdate[1]!.id, s.submitted.id)
      const updatedTimes = byUpdate.map((item) => Date.parse(item.updatedAt))
      t.same(
        updatedTimes,
        [...updatedTimes].sort((a, b) => b - a),
        'updatedAt is non-increasing',
      )
      t.equal(new Set(ids(byUpdate)).size, ofA.length, 'every request once')
    })

    t.test("paging through a partner's requests while new ones arrive: no duplicate, no gap", async (t) => {
      const before = newestFirst(s.seeded.filter((entry) => entry.keyId === s.keyA.key.id))
      const arrived: Seeded[] = []
      const items = await walk(t, api, '/requests/v3?limit=5', s.asA, async () => {
        arrived.push(await s.insert(s.runtime.store, { keyId: s.keyA.key.id, referrer: 'late' }))
      })
      t.ok(arrived.length >= 4, `requests arrived between pages (${arrived.length})`)
      t.same(ids(items), ids(before), 'desc: exactly the requests that existed, in order, each once')
      const ascending = await walk(t, api, '/requests/v3?limit=6&sortDirection=asc', s.asA, async () => {
        arrived.push(await s.insert(s.runtime.store, { keyId: s.keyA.key.id, referrer: 'late' }))
      })
      const expected = ids(before).reverse()
      t.same(ids(ascending).slice(0, expected.length), expected, 'asc: the old ones first, in order')
      t.equal(new Set(ids(ascending)).size, ascending.length, 'asc: no duplicate')
      t.ok(ascending.length > expected.length, 'asc: requests that arrived during the walk follow at the end')
      // Leave the scenario as it was for the other subtests' expectations.
      for (const entry of arrived) s.seeded.splice(s.seeded.indexOf(entry), 1)
      await s.runtime.store.client.query('DELETE FROM requests WHERE referrer = $1', ['late'])
    })

    t.test(
      'bad cursor and bad filters are 400 with a catalogued code; unknown members are ignored',
      async (t) => {
        const first = await api.get('/requests/v3?limit=3', s.asA)
        const { continuation } = first.body as Page
        t.type(continuation, 'string')
        const decoded = JSON.parse(Buffer.from(continuation!, 'base64url').toString()) as Record<
          string,
          unknown
        >
        const cases: Array<[string, string]> = [
          ['not-a-cursor!', 'garbage'],
          ['eyJ2IjoxfQ', 'a cursor without a position'],
          [continuation!.slice(0, -4), 'a truncated cursor'],
          [
            Buffer.from(JSON.stringify({ ...decoded, q: '0'.repeat(32) })).toString('base64url'),
            'another query',
          ],
          [Buffer.from(JSON.stringify({ ...decoded, i: 'x' })).toString('base64url'), 'a malformed position'],
        ]
        for (const [cursor, what] of cases) {
          const res = await api.get(`/requests/v3?limit=3&continuation=${encodeURIComponent(cursor)}`, s.asA)
          t.equal(res.status, 400, what)
          t.equal((res.body as ErrorBody).errorCode, 'INVALID_CONTINUATION', what)
        }
        const otherFilters = await api.get(
          `/requests/v3?limit=3&referrer=app-odd&continuation=${continuation}`,
          s.asA,
        )
        t.equal(
          (otherFilters.body as ErrorBody).errorCode,
          'INVALID_CONTINUATION',
          'the cursor of another filter set',
        )
        const otherCaller = await api.get(`/requests/v3?limit=3&continuation=${continuation}`, s.asOperator)
        t.equal(
          (otherCaller.body as ErrorBody).errorCode,
          'INVALID_CONTINUATION',
          "a partner's cursor for the operator",
        )
        const otherDirection = await api.get(
          `/requests/v3?limit=3&sortDirection=asc&continuation=${continuation}`,
          s.asA,
        )
        t.equal((otherDirection.body as ErrorBody).errorCode, 'INVALID_CONTINUATION', 'another direction')

        for (const query of [
          'status=bogus',
          'limit=0',
          'startTimestamp=yesterday',
          'sortBy=amountUsd',
          'id=0x12',
        ]) {
          const res = await api.get(`/requests/v3?${query}`, s.asA)
          t.equal(res.status, 400, query)
          t.equal((res.body as ErrorBody).errorCode, 'INVALID_REQUEST', query)
        }
        const clamped = await api.get('/requests/v3?limit=500', s.asOperator)
        t.equal(clamped.status, 200, 'a limit above 50 is answered, not refused')
        t.equal((clamped.body as Page).requests.length, Math.min(50, s.seeded.length))

        const extra = await api.get(
          `/requests/v3?id=${s.filled.id}&includeChildRequests=true&privateChainsToInclude=x&term=y`,
        )
        t.equal(extra.status, 200, "parameters of Relay's that Pontis does not use are accepted")
        t.match(extra.headers['ignored-members'], /query\.includeChildRequests/)
      },
    )

    t.test("every query member of Relay's published types is accepted", async (t) => {
      const { v3, v2 } = relayQueries(s.filled.id)
      for (const [path, members] of [
        ['/requests/v3', v3],
        ['/requests/v2', v2],
      ] as const) {
        const res = await api.get(`${path}?${queryString(members)}`)
        t.equal(res.status, 200, `${path} with every member of Relay's query type`)
        t.same(
          ids((res.body as Page).requests),
          [s.filled.id],
          `${path}: the filters Pontis serves still apply`,
        )
        t.match(res.headers['ignored-members'], /query\.apiKey/, `${path}: the ignored ones are named`)
      }
    })

    t.test('v2: the swap widget lookup, older shape, deprecation headers', async (t) => {
      const res = await api.get(`/requests/v2?id=${s.filled.id}`)
      t.equal(res.status, 200, 'the widget calls it without a key')
      t.equal(res.headers.deprecation, '@1795737600', 'Deprecation: RFC 9745 date')
      t.match(res.headers.link, /<\/requests\/v3>; rel="successor-version"/)
      t.match(res.headers.link, /rel="deprecation"/)
      t.notOk(res.headers.sunset, 'no sunset date is set')
      const [item] = (res.body as Page).requests
      t.match(item, {
        id: s.filled.id,
        status: 'success',
        data: {
          inTxs: [{ hash: s.depositHash, chainId: 31337 }],
          outTxs: [{ hash: s.fillHash, chainId: 31338 }],
          fees: { gas: '21000000000000', price: '5000000000000' },
          metadata: {
            sender: USER_1,
            currencyIn: { amount: '10000000000000000', currency: { decimals: 18 } },
            currencyOut: { amount: '9974000000000000' },
          },
        },
      })
      t.notOk('refundFailReason' in item!.data, 'v2: no refundFailReason when no refund failed')
      const widget = await api.get(`/requests/v2?user=${USER_1}&hash=${s.depositHash}`)
      t.same(
        ids((widget.body as Page).requests),
        [s.filled.id],
        'the deposit-address modal lookup (user + hash)',
      )
      const submitted = await api.get(`/requests/v2?id=${s.submitted.id}`)
      t.equal(
        (submitted.body as Page).requests[0]!.status,
        'pending',
        'submitted is pending in the older shape',
      )
      const v3 = await api.get(`/requests/v3?id=${s.submitted.id}`)
      t.equal((v3.body as Page).requests[0]!.status, 'submitted')
      const pages = await walk(t, api, '/requests/v2?limit=4', s.asB)
      t.equal(pages.length, 5, 'v2 pages with the same cursor')
      const refused = await api.get('/requests/v2')
      t.equal(refused.status, 401)
    })
  })
}

suite('pglite')
suite('postgres')
