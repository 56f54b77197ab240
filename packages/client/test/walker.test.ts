/**
 * Unit tests of the step walker (`executeQuote`) and the typed calls against a stand-in service on
 * loopback (test/fixtures/stand-in-service.ts, not the real service), a stand-in EVM wallet that
 * records what it is asked to send, and stand-in adapters of a made-up `toy-transfer` format. The
 * real service and chains run in execute.test.ts and venues.test.ts.
 */
import t from 'tap'
import {
  claimsFormat,
  createPontisClient,
  type EvmTransactionRequest,
  type EvmWallet,
  type ExecutionProgress,
  evmWalletAdapter,
  type ItemContext,
  PontisApiError,
  PontisExecutionError,
  type QuoteResponse,
  type Step,
  type StepItem,
  type WalletAdapter,
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

const CHECK = { endpoint: `/intents/status?requestId=${REQUEST_ID}`, method: 'GET' as const }

function evmItem(to: string, data: string, withCheck: boolean, chainId = 31337) {
  return {
    status: 'incomplete' as const,
    data: { format: 'evm-transaction' as const, to, data, value: '0', chainId, gas: '60000' },
    ...(withCheck ? { check: { ...CHECK } } : {}),
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

const PERMIT = {
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

/** A quote whose one step is an EIP-712 permit to sign and post to /execute/permits. */
function permitQuote(): QuoteResponse {
  return {
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
              post: { endpoint: '/execute/permits', method: 'POST', body: PERMIT },
            },
          },
        ],
        'signature',
      ),
    ],
  } as unknown as QuoteResponse
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
    const result = await client.executeQuote(quote, [evmWalletAdapter(wallet)], {
      pollIntervalMs: 40,
      onProgress: (event) => events.push(event),
    })

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
        .executeQuote(approveThenDeposit(), [evmWalletAdapter(standInWallet([], 1))], { pollIntervalMs: 10 })
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
  const started = performance.now()
  const error = await client
    .executeQuote(approveThenDeposit(), [evmWalletAdapter(standInWallet([], 1))], {
      pollIntervalMs: 20,
      timeoutMs: 300,
    })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    )
  const elapsed = performance.now() - started
  t.ok(error instanceof PontisExecutionError)
  t.equal((error as PontisExecutionError).kind, 'timeout')
  t.equal((error as PontisExecutionError).status?.status, 'pending', 'the last record seen is attached')
  // The status stays pending, so only the deadline ends it; how long after it is the machine's.
  t.ok(elapsed >= 290, `not before the deadline (${Math.round(elapsed)} ms)`)
  // Reads are at least pollIntervalMs apart; a slow machine only makes them fewer.
  const reads = service.requests.filter((request) => request.url.startsWith('/intents/status')).length
  t.ok(reads >= 1 && reads <= 300 / 20 + 1, `no read after the deadline (${reads} reads)`)
})

t.test(
  'stand-in service: a status read that never answers is aborted at the deadline, its connection closed',
  async (t) => {
    const service = await startStandInService((request) =>
      request.url.startsWith('/intents/status') ? 'hang' : undefined,
    )
    t.teardown(() => service.close())
    const error = await createPontisClient({ baseUrl: service.url })
      .executeQuote(approveThenDeposit(), [evmWalletAdapter(standInWallet([], 1))], {
        pollIntervalMs: 20,
        timeoutMs: 300,
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      )
    t.equal((error as PontisExecutionError).kind, 'timeout')
    // Bounded by tap's file timeout: before the fix the read stayed open for undici's 300 s.
    await service.hungRequestClosed
    t.pass('the pending status read was aborted and its connection closed')
  },
)

t.test(
  'stand-in service: aborting the execution aborts the pending status read, its connection closed',
  async (t) => {
    const controller = new AbortController()
    const service = await startStandInService((request) => {
      if (!request.url.startsWith('/intents/status')) return undefined
      // Aborted once the status read is pending at the service (an event, not a delay).
      controller.abort()
      return 'hang'
    })
    t.teardown(() => service.close())
    const execution = createPontisClient({ baseUrl: service.url }).executeQuote(
      approveThenDeposit(),
      [evmWalletAdapter(standInWallet([], 1))],
      { pollIntervalMs: 20, signal: controller.signal },
    )
    const error = await execution.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.equal((error as Error).name, 'AbortError', "rejects with the signal's reason")
    await service.hungRequestClosed
    t.pass('the pending status read was aborted and its connection closed')
  },
)

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
    [evmWalletAdapter(standInWallet([], 1))],
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
    [evmWalletAdapter(standInWallet(log, 50))],
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
    const quote = permitQuote()
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      quote,
      [evmWalletAdapter(standInWallet(log, 1))],
      { pollIntervalMs: 10 },
    )
    t.equal(
      posted?.url,
      `/execute/permits?signature=0x${'11'.repeat(65)}`,
      'the signature is the query parameter',
    )
    t.same(posted?.body, PERMIT, 'the issued body is posted unchanged')
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

t.test('typed calls: bodies on 2xx, PontisApiError with the code otherwise', async (t) => {
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
  const offline = createPontisClient({ baseUrl: 'http://127.0.0.1:9' })
  const network = await offline.getChains().then(
    () => undefined,
    (caught: unknown) => caught,
  )
  t.equal((network as PontisApiError).status, 0, 'a network failure is a PontisApiError with status 0')
})

/** A transfer of a made-up chain family: a format no type of the client knows. */
interface ToyTransfer {
  format: 'toy-transfer'
  chainId: number
  to: string
  amount: string
}

const TOY_CHAIN_ID = 4242

/** A step item of the toy format, as a newer service would send it (the generated types do not know it). */
function toyItem(to: string, withCheck: boolean): StepItem {
  const data: ToyTransfer = { format: 'toy-transfer', chainId: TOY_CHAIN_ID, to, amount: '7' }
  return { status: 'incomplete', data, ...(withCheck ? { check: { ...CHECK } } : {}) } as unknown as StepItem
}

/** A third-party adapter for `toy-transfer`, written against the public interface only; records what it ran. */
function toyAdapter(): WalletAdapter<ToyTransfer> & {
  ran: Array<{ data: ToyTransfer; context: ItemContext }>
} {
  const ran: Array<{ data: ToyTransfer; context: ItemContext }> = []
  return {
    ran,
    name: 'toy wallet',
    claims: claimsFormat<ToyTransfer>('toy-transfer', [TOY_CHAIN_ID]),
    async execute(data, context) {
      ran.push({ data, context })
      return { chainId: data.chainId, txHash: `toy-${ran.length}` }
    },
  }
}

t.test(
  'stand-in service: a third-party adapter executes a format the client does not know (toy-transfer)',
  async (t) => {
    const service = await startStandInService(scriptedStatuses(['pending', 'success']))
    t.teardown(() => service.close())
    const log: string[] = []
    const wallet = standInWallet(log, 1)
    const toy = toyAdapter()
    const events: ExecutionProgress[] = []
    const quote = { steps: [step('deposit', [toyItem('toy-depository', true)])] } as unknown as QuoteResponse
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      quote,
      [evmWalletAdapter(wallet), toy],
      { pollIntervalMs: 10, onProgress: (event) => events.push(event) },
    )
    t.equal(result.status.status, 'success', 'its check was followed to success')
    t.same(
      toy.ran.map(({ data }) => data),
      [{ format: 'toy-transfer', chainId: TOY_CHAIN_ID, to: 'toy-depository', amount: '7' }],
      'the toy adapter got the item data as quoted',
    )
    t.equal(toy.ran[0]?.context.step.id, 'deposit', 'the context names the step')
    t.equal(toy.ran[0]?.context.requestId, REQUEST_ID, 'and the request')
    t.same(log, [], 'the EVM adapter before it in the list did not claim it')
    t.same(result.txHashes, ['toy-1'])
    t.same(
      events.filter((event) => event.type === 'transaction'),
      [{ type: 'transaction', stepIndex: 0, itemIndex: 0, chainId: TOY_CHAIN_ID, txHash: 'toy-1' }],
    )
    const index = service.requests.filter((request) => request.url === '/transactions/index')
    t.same(
      index.map((request) => request.body),
      [{ chainId: TOY_CHAIN_ID, txHash: 'toy-1', requestId: REQUEST_ID }],
      'the deposit on the toy chain is indexed like any other',
    )
  },
)

t.test(
  'stand-in service: an item no adapter claims fails naming its format and chain, before anything is sent',
  async (t) => {
    const service = await startStandInService(scriptedStatuses(['success']))
    t.teardown(() => service.close())
    const log: string[] = []
    const quote = {
      steps: [
        step('approve', [evmItem(TOKEN, '0x095ea7b3', false)]),
        step('deposit', [toyItem('toy', true)]),
      ],
    } as unknown as QuoteResponse
    const client = createPontisClient({ baseUrl: service.url })
    await t.rejects(
      client.executeQuote(quote, [evmWalletAdapter(standInWallet(log, 1))], { pollIntervalMs: 10 }),
      new TypeError(
        `no wallet adapter claims the toy-transfer item on chain ${TOY_CHAIN_ID} of step deposit (adapters given: evm wallet)`,
      ),
    )
    t.same(log, [], 'the approval was not sent: no funds move for a quote that cannot finish')
    t.same(service.requests, [], 'nothing reached the service')
    await t.rejects(
      client.executeQuote(approveThenDeposit(), [], { pollIntervalMs: 10 }),
      /no wallet adapter claims the evm-transaction item on chain 31337 of step approve \(adapters given: none\)/,
    )
    // A wallet without signTypedData does not claim an EIP-712 signature item.
    const { sendTransaction } = standInWallet(log, 1)
    await t.rejects(
      client.executeQuote(permitQuote(), [evmWalletAdapter({ sendTransaction }), toyAdapter()]),
      /no wallet adapter claims the signature item of step authorize \(adapters given: evm wallet, toy wallet\)/,
    )
  },
)

t.test(
  'stand-in service: each item goes to the first adapter that claims it (one EVM adapter per chain)',
  async (t) => {
    const service = await startStandInService(scriptedStatuses(['success']))
    t.teardown(() => service.close())
    const [on31338, on31337, anyChain] = [[], [], []] as string[][]
    const quote = {
      steps: [
        step('approve', [evmItem(TOKEN, '0x01', false, 31337)]),
        step('deposit', [evmItem(DEPOSITORY, '0x02', true, 31338)]),
      ],
    } as QuoteResponse
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      quote,
      [
        evmWalletAdapter(standInWallet(on31338 as string[], 1), { chainIds: [31338] }),
        evmWalletAdapter(standInWallet(on31337 as string[], 1), { chainIds: [31337] }),
        evmWalletAdapter(standInWallet(anyChain as string[], 1)),
      ],
      { pollIntervalMs: 10 },
    )
    t.equal(result.status.status, 'success')
    t.same(on31337, [`send ${TOKEN}`, 'mined 1'], 'the chain-31337 adapter sent the approval')
    t.same(on31338, [`send ${DEPOSITORY}`, 'mined 1'], 'the chain-31338 adapter sent the deposit')
    t.same(anyChain, [], 'the catch-all adapter after them was never asked')
  },
)

t.test(
  'stand-in service: check.finalStatuses [submitted, success] ends the check at submitted, whatever the chain',
  async (t) => {
    const service = await startStandInService(scriptedStatuses(['pending', 'submitted', 'success']))
    t.teardown(() => service.close())
    const quote = approveThenDeposit()
    const deposit = quote.steps[1]?.items[0]
    if (deposit?.check) deposit.check.finalStatuses = ['submitted', 'success']
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      quote,
      [evmWalletAdapter(standInWallet([], 1))],
      { pollIntervalMs: 10 },
    )
    t.equal(result.status.status, 'submitted', 'submitted is final for this item (destination 31338)')
    t.equal(result.status.destinationChainId, 31338)
    t.equal(service.requests.filter((request) => request.url.startsWith('/intents/status')).length, 2)
  },
)

t.test(
  'stand-in service: without finalStatuses only success ends a check, even for a Bitcoin destination',
  async (t) => {
    let reads = 0
    const service = await startStandInService((request) => {
      if (!request.url.startsWith('/intents/status'))
        return { status: 200, body: { message: 'ok', indexed: true } }
      const status = reads++ === 0 ? 'submitted' : 'success'
      return { status: 200, body: statusRecord(REQUEST_ID, status, { destinationChainId: 8253038 }) }
    })
    t.teardown(() => service.close())
    const statuses: string[] = []
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      approveThenDeposit(),
      [evmWalletAdapter(standInWallet([], 1))],
      {
        pollIntervalMs: 10,
        onProgress: (event) => event.type === 'status' && statuses.push(event.status.status),
      },
    )
    t.same(
      statuses,
      ['submitted', 'success'],
      'the client keeps no chain-id list: the check says where to stop',
    )
    t.equal(result.status.status, 'success')
  },
)

t.test(
  'stand-in service: with no check left to run, the final follow stops where a check of the quote says',
  async (t) => {
    const service = await startStandInService(scriptedStatuses(['pending', 'submitted', 'success']))
    t.teardown(() => service.close())
    const approved = { ...evmItem(TOKEN, '0x01', false), status: 'complete' as const }
    const quote = {
      steps: [
        step('approve', [{ ...approved, check: { ...CHECK, finalStatuses: ['submitted', 'success'] } }]),
        step('deposit', [evmItem(DEPOSITORY, '0x02', false)]),
      ],
    } as QuoteResponse
    const log: string[] = []
    const result = await createPontisClient({ baseUrl: service.url }).executeQuote(
      quote,
      [evmWalletAdapter(standInWallet(log, 1))],
      { pollIntervalMs: 10 },
    )
    t.same(log, [`send ${DEPOSITORY}`, 'mined 1'], 'only the incomplete item ran')
    t.equal(result.status.status, 'submitted')
    t.same(
      service.requests
        .filter((request) => request.url.startsWith('/intents/status'))
        .map((request) => request.url),
      [`/intents/status/v3?requestId=${REQUEST_ID}`, `/intents/status/v3?requestId=${REQUEST_ID}`],
      'followed on /intents/status/v3 until submitted',
    )
  },
)

t.test("stand-in service: an adapter's context.signal aborts at the execution's deadline", async (t) => {
  const service = await startStandInService(scriptedStatuses(['success']))
  t.teardown(() => service.close())
  let aborted: unknown
  const stuck: WalletAdapter<ToyTransfer> = {
    name: 'stuck toy wallet',
    claims: claimsFormat<ToyTransfer>('toy-transfer'),
    execute: (_data, { signal }) =>
      new Promise((_resolve, reject) =>
        signal.addEventListener('abort', () => {
          aborted = signal.reason
          reject(signal.reason)
        }),
      ),
  }
  const quote = { steps: [step('deposit', [toyItem('toy', false)])] } as unknown as QuoteResponse
  const error = await createPontisClient({ baseUrl: service.url })
    .executeQuote(quote, [stuck], { timeoutMs: 200 })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    )
  t.equal((error as PontisExecutionError).kind, 'timeout')
  t.ok(aborted instanceof PontisExecutionError, 'the adapter saw the abort, with the timeout as its reason')
})

t.test('deprecated wallets object: still accepted, turned into the adapter list', async (t) => {
  const service = await startStandInService(scriptedStatuses(['success']))
  t.teardown(() => service.close())
  const log: string[] = []
  const client = createPontisClient({ baseUrl: service.url })
  const result = await client.executeQuote(
    approveThenDeposit(),
    { evm: standInWallet(log, 1) },
    { pollIntervalMs: 10 },
  )
  t.equal(result.status.status, 'success')
  t.same(log, [`send ${TOKEN}`, 'mined 1', `send ${DEPOSITORY}`, 'mined 2'])
  await t.rejects(
    client.executeQuote(approveThenDeposit(), {}),
    /no wallet adapter claims the evm-transaction item on chain 31337 of step approve/,
  )
})

t.test(
  'stand-in service: a same-chain swap without checks is done once mined; a bridge is still followed',
  async (t) => {
    const service = await startStandInService(scriptedStatuses(['success']))
    t.teardown(() => service.close())
    const currency = (chainId: number) => ({ currency: { chainId } })
    const swapQuote = (chainOut: number) =>
      ({
        steps: [
          step('approve', [evmItem(TOKEN, '0x095ea7b3', false)]),
          step('swap', [evmItem(DEPOSITORY, '0x5ae401dc', false)]),
        ],
        details: { currencyIn: currency(31337), currencyOut: currency(chainOut) },
      }) as unknown as QuoteResponse
    const client = createPontisClient({ baseUrl: service.url })
    const log: string[] = []
    const result = await client.executeQuote(swapQuote(31337), [evmWalletAdapter(standInWallet(log))], {
      pollIntervalMs: 10,
    })
    t.equal(result.status.status, 'success')
    t.same(result.status.inTxHashes, result.txHashes, 'the approval and the swap are its transactions')
    t.same(result.status.txHashes, result.txHashes.slice(-1), 'the swap paid the recipient')
    t.notOk(
      service.requests.some((request) => request.url.startsWith('/intents/status')),
      'no status is polled for it',
    )
    await client.executeQuote(swapQuote(31338), [evmWalletAdapter(standInWallet(log))], {
      pollIntervalMs: 10,
    })
    t.ok(
      service.requests.some((request) => request.url.startsWith('/intents/status/v3')),
      'across chains the request is followed',
    )
  },
)
