/**
 * Unit tests of the step walker (`executeQuote`) and the typed calls against a stand-in service on
 * loopback (test/fixtures/stand-in-service.ts, not the real service) and a stand-in EVM wallet that
 * records what it is asked to send. The real service and chains run in execute.test.ts.
 */
import t from 'tap'
import {
  createPontisClient,
  type EvmTransactionRequest,
  type EvmWallet,
  type ExecutionProgress,
  PontisApiError,
  PontisExecutionError,
  type QuoteResponse,
  type Step,
} from '../src/index.js'
import {
  type RecordedRequest,
  type StandInRoute,
  startStandInService,
  statusRecord,
} from './fixtures/stand-in-service.js'

const REQUEST_ID = `0x${'ab'.repeat(32)}`
const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const DEPOSITORY = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512'

function evmItem(to: string, data: string, withCheck: boolean) {
  return {
    status: 'incomplete' as const,
    data: { format: 'evm-transaction' as const, to, data, value: '0', chainId: 31337, gas: '60000' },
    ...(withCheck
      ? { check: { endpoint: `/intents/status?requestId=${REQUEST_ID}`, method: 'GET' as const } }
      : {}),
  }
}

function step(id: Step['id'], items: Step['items'], kind: Step['kind'] = 'transaction'): Step {
  return { id, action: 'Confirm', description: id, kind, requestId: REQUEST_ID, depositAddress: '', items }
}

/** An approval then a deposit, as the EVM plugin quotes an ERC-20 deposit without allowance. */
function approveThenDeposit(): QuoteResponse {
  return {
    steps: [
      step('approve', [evmItem(TOKEN, '0x095ea7b3', false)]),
      step('deposit', [evmItem(DEPOSITORY, '0xd0e30db0', true)]),
    ],
  } as QuoteResponse
}

/** A stand-in wallet: records each transaction and how long it waited for inclusion. */
function standInWallet(log: string[], inclusionMs = 30): EvmWallet & { sent: EvmTransactionRequest[] } {
  const sent: EvmTransactionRequest[] = []
  return {
    sent,
    async sendTransaction(transaction) {
      sent.push(transaction)
      log.push(`send ${transaction.to}`)
      return `0x${String(sent.length).padStart(64, '0')}`
    },
    async waitForTransaction(hash) {
      await new Promise((resolve) => setTimeout(resolve, inclusionMs))
      log.push(`mined ${hash.slice(-1)}`)
    },
    async signTypedData(payload) {
      log.push(`sign ${payload.primaryType}`)
      return `0x${'11'.repeat(65)}`
    },
  }
}

/** Routes of a stand-in whose status walks through `statuses`, one per status read (the last repeats). */
function scriptedStatuses(statuses: string[]): StandInRoute {
  let reads = 0
  return (request: RecordedRequest) => {
    if (request.url.startsWith('/intents/status')) {
      const status = statuses[Math.min(reads++, statuses.length - 1)] as string
      return { status: 200, body: statusRecord(REQUEST_ID, status) }
    }
    if (request.url === '/transactions/index') {
      return { status: 200, body: { message: 'indexed', indexed: true, requestId: REQUEST_ID } }
    }
    return undefined
  }
}

t.test(
  'stand-in service: approve is mined before the deposit, the deposit is indexed, checks run to success',
  async (t) => {
    const service = await startStandInService(
      scriptedStatuses(['waiting', 'pending', 'submitted', 'success']),
    )
    t.teardown(() => service.close())
    const log: string[] = []
    const wallet = standInWallet(log)
    const events: ExecutionProgress[] = []
    const client = createPontisClient({ baseUrl: service.url, apiKey: 'pk_test_key' })
    const quote = approveThenDeposit()
    const result = await client.executeQuote(
      quote,
      { evm: wallet },
      { pollIntervalMs: 40, onProgress: (event) => events.push(event) },
    )

    t.equal(result.status.status, 'success')
    t.equal(result.requestId, REQUEST_ID)
    t.same(
      log,
      [`send ${TOKEN}`, 'mined 1', `send ${DEPOSITORY}`, 'mined 2'],
      'the approval is mined before the deposit is sent',
    )
    t.same(
      wallet.sent.map((tx) => [tx.value, tx.chainId, tx.gas]),
      [
        [0n, 31337, 60000n],
        [0n, 31337, 60000n],
      ],
      'amounts become bigints',
    )
    t.same(result.txHashes.length, 2)
    t.ok(
      result.steps.every((s) => s.items.every((item) => item.status === 'complete')),
      'every item is complete',
    )
    t.equal(quote.steps[0]?.items[0]?.status, 'incomplete', "the caller's quote is left as it was")

    const index = service.requests.filter((request) => request.url === '/transactions/index')
    t.equal(index.length, 1, 'only the deposit is indexed, not the approval')
    t.same(index[0]?.body, { chainId: 31337, txHash: result.txHashes[1], requestId: REQUEST_ID })
    const reads = service.requests.filter((request) => request.url.startsWith('/intents/status'))
    t.equal(reads.length, 4, 'the check is read until success')
    t.ok(
      reads.every((read) => read.url === `/intents/status?requestId=${REQUEST_ID}`),
      'the check endpoint is used as given',
    )
    const gaps = reads.slice(1).map((read, i) => read.at - (reads[i] as RecordedRequest).at)
    t.ok(
      gaps.every((gap) => gap >= 35),
      `reads are spaced by pollIntervalMs (${gaps.join(', ')} ms)`,
    )
    t.ok(
      service.requests.every((request) => request.headers['x-api-key'] === 'pk_test_key'),
      'every call carries the API key',
    )
    t.same(
      events
        .filter((event) => event.type === 'status')
        .map((event) => (event.type === 'status' ? event.status.status : '')),
      ['waiting', 'pending', 'submitted', 'success'],
      'onProgress reports every status read',
    )
    t.same(
      events
        .filter((event) => event.type === 'step')
        .map((event) => (event.type === 'step' ? event.step.id : '')),
      ['approve', 'deposit'],
    )
    t.ok(
      events.some((event) => event.type === 'indexed'),
      'the index answer is reported',
    )
  },
)

for (const [status, kind] of [
  ['failure', 'failure'],
  ['refund', 'refund'],
  ['fallback', 'failure'],
] as const) {
  t.test(
    `stand-in service: a request ending in ${status} throws PontisExecutionError ${kind} with the record`,
    async (t) => {
      const service = await startStandInService(scriptedStatuses(['pending', status]))
      t.teardown(() => service.close())
      const client = createPontisClient({ baseUrl: service.url })
      const error = await client
        .executeQuote(approveThenDeposit(), { evm: standInWallet([], 1) }, { pollIntervalMs: 10 })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        )
      t.ok(error instanceof PontisExecutionError, 'a typed error')
      const typed = error as PontisExecutionError
      t.equal(typed.kind, kind)
      t.equal(typed.status?.status, status, 'the status record is attached')
      t.equal(typed.requestId, REQUEST_ID)
      t.match(typed.message, status)
    },
  )
}

t.test('stand-in service: a request that stays pending times out with the last record', async (t) => {
  const service = await startStandInService(scriptedStatuses(['pending']))
  t.teardown(() => service.close())
  const client = createPontisClient({ baseUrl: service.url })
  const started = Date.now()
  const error = await client
    .executeQuote(approveThenDeposit(), { evm: standInWallet([], 1) }, { pollIntervalMs: 20, timeoutMs: 300 })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    )
  const elapsed = Date.now() - started
  t.ok(error instanceof PontisExecutionError)
  t.equal((error as PontisExecutionError).kind, 'timeout')
  t.equal((error as PontisExecutionError).status?.status, 'pending', 'the last record seen is attached')
  t.ok(elapsed >= 280 && elapsed < 1500, `stopped at the deadline (${elapsed} ms)`)
})

t.test('stand-in service: transient status errors are retried until the check succeeds', async (t) => {
  let reads = 0
  const service = await startStandInService((request) => {
    if (!request.url.startsWith('/intents/status'))
      return { status: 200, body: { message: 'ok', indexed: true } }
    reads++
    if (reads === 1) return { status: 404, body: { message: 'not yet', errorCode: 'REQUEST_NOT_FOUND' } }
    if (reads === 2) return { status: 503, body: { message: 'busy', errorCode: 'SERVICE_UNAVAILABLE' } }
    return { status: 200, body: statusRecord(REQUEST_ID, 'success') }
  })
  t.teardown(() => service.close())
  const failures: unknown[] = []
  const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
    approveThenDeposit(),
    { evm: standInWallet([], 1) },
    { pollIntervalMs: 10, onProgress: (event) => event.type === 'poll-failed' && failures.push(event.error) },
  )
  t.equal(result.status.status, 'success')
  t.equal(failures.length, 2, 'both failed reads are reported')
  t.ok(failures[0] instanceof PontisApiError && failures[0].errorCode === 'REQUEST_NOT_FOUND')
})

t.test('stand-in service: items of one step run together', async (t) => {
  const service = await startStandInService(scriptedStatuses(['success']))
  t.teardown(() => service.close())
  const log: string[] = []
  const quote = {
    steps: [step('deposit', [evmItem(TOKEN, '0x01', false), evmItem(DEPOSITORY, '0x02', false)])],
  } as QuoteResponse
  const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
    quote,
    { evm: standInWallet(log, 50) },
    { pollIntervalMs: 10 },
  )
  t.same(
    log.slice(0, 2),
    [`send ${TOKEN}`, `send ${DEPOSITORY}`],
    'the second item is sent before the first is mined',
  )
  t.equal(
    result.status.status,
    'success',
    'without a check the request is still followed on /intents/status/v3',
  )
  t.ok(service.requests.some((request) => request.url === `/intents/status/v3?requestId=${REQUEST_ID}`))
})

t.test(
  'stand-in service: a signature step is signed, posted with ?signature=, and added steps run',
  async (t) => {
    const permit = {
      kind: 'eip3009-receive' as const,
      requestId: REQUEST_ID,
      chainId: 31337,
      currency: TOKEN,
      from: TOKEN,
      to: DEPOSITORY,
      value: '1',
      validAfter: '0',
      validBefore: '9',
      nonce: REQUEST_ID,
    }
    let posted: RecordedRequest | undefined
    const statuses = scriptedStatuses(['depositing', 'success'])
    const service = await startStandInService((request) => {
      if (request.url.startsWith('/execute/permits')) {
        posted = request
        return {
          status: 200,
          body: {
            requestId: REQUEST_ID,
            status: 'depositing',
            steps: [step('send', [evmItem(TOKEN, '0x03', false)])],
          },
        }
      }
      return statuses(request)
    })
    t.teardown(() => service.close())
    const log: string[] = []
    const quote = {
      steps: [
        step(
          'authorize',
          [
            {
              status: 'incomplete',
              data: {
                format: 'signature',
                sign: {
                  signatureKind: 'eip712',
                  domain: { name: 'PontisUSD', chainId: 31337 },
                  types: {},
                  primaryType: 'ReceiveWithAuthorization',
                  value: {},
                },
                post: { endpoint: '/execute/permits', method: 'POST', body: permit },
              },
            },
          ],
          'signature',
        ),
      ],
    } as unknown as QuoteResponse
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      quote,
      { evm: standInWallet(log, 1) },
      { pollIntervalMs: 10 },
    )
    t.equal(
      posted?.url,
      `/execute/permits?signature=0x${'11'.repeat(65)}`,
      'the signature is the query parameter',
    )
    t.same(posted?.body, permit, 'the issued body is posted unchanged')
    t.same(
      log,
      ['sign ReceiveWithAuthorization', `send ${TOKEN}`, 'mined 1'],
      'the step the answer added ran',
    )
    t.same(
      result.steps.map((s) => s.id),
      ['authorize', 'send'],
    )
    t.equal(result.status.status, 'success')
  },
)

t.test(
  'typed calls: bodies on 2xx, PontisApiError with the code otherwise; missing wallets are refused',
  async (t) => {
    const service = await startStandInService((request) => {
      if (request.url === '/quote/v2')
        return { status: 400, body: { message: 'amount: must match', errorCode: 'INVALID_REQUEST' } }
      if (request.url.startsWith('/chains')) return { status: 200, body: { chains: [] } }
      if (request.url.startsWith('/intents/status/v3'))
        return { status: 200, body: statusRecord(REQUEST_ID, 'waiting') }
      return undefined
    })
    t.teardown(() => service.close())
    const client = createPontisClient({ baseUrl: `${service.url}/` })
    const error = await client.getQuote({ amount: 'x' } as never).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.ok(error instanceof PontisApiError)
    t.equal((error as PontisApiError).status, 400)
    t.equal((error as PontisApiError).errorCode, 'INVALID_REQUEST')
    t.same(await client.getChains({ vmType: 'evm' }), { chains: [] })
    t.equal(service.requests.at(-1)?.url, '/chains?vmType=evm')
    t.equal((await client.getStatus(REQUEST_ID)).status, 'waiting')
    t.notOk(
      service.requests.some((request) => 'x-api-key' in request.headers),
      'no key, no header',
    )
    await t.rejects(client.executeQuote(approveThenDeposit(), {}), TypeError, 'no evm wallet')
    const offline = createPontisClient({ baseUrl: 'http://127.0.0.1:9' })
    const network = await offline.getChains().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.equal((network as PontisApiError).status, 0, 'a network failure is a PontisApiError with status 0')
  },
)
