/**
 * The lifecycle under SVM chain faults (LiteSVM behind the devnet's Solana RPC, anvil the other
 * side, HTTP only), caused through the SVM devnet's fault powers (packages/devnet/src/svm/faults.ts):
 * a fill whose blockhash expires before it lands is signed again with a fresh blockhash, and only
 * once the old one has provably expired, so it is never paid twice; a fill rolled back before it is
 * finalized, or signed before a crash and not sent, is sent again as the same bytes and paid once;
 * a landed fill whose node is unreachable for longer than `maxAttempts` passes is never given up;
 * a deposit above a high-value threshold waits past finalization for the deeper rule; a node lying
 * about a slot's blockhash is outvoted by two honest ones, and alone against one, nothing is trusted.
 */
import { type IntentsApi, type Logger, silentLogger } from '@pontis/core'
import {
  devnetEnvironment,
  STABLECOIN_ADDRESS,
  SVM_DEVNET_CHAIN_ID,
  SVM_STABLECOIN,
  SVM_USERS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import { erc20Abi } from '@pontis/plugin-evm'
import { getAssociatedTokenAddressSync } from '@solana/spl-token'
import { Connection, PublicKey, VersionedTransaction } from '@solana/web3.js'
import t from 'tap'
import { type Address, createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { disagreements, FORGED_HASH, lyingNode } from '../../../test/helpers/lying-node.js'
import { PROCESS_START_BOUND_MS, waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, type IntentsService, startIntentsService } from '../src/index.js'
import { chainConfig } from './fixtures/chain-config.js'
import {
  failingNode,
  type ReorgDetails,
  seen,
  settled,
  statusOf,
  warningsLogger,
} from './fixtures/chain-faults.js'
import { freshIndexerPass } from './fixtures/e2e.js'
import { openTestSchema, querySchema, TEST_DATABASE_URL } from './fixtures/postgres.js'
import { processEnvironment, startServiceProcess } from './fixtures/service-process.js'

type Quote = IntentsApi.QuoteResponse
const SVM = SVM_DEVNET_CHAIN_ID
const EVM = 31337

t.setTimeout(6 * PROCESS_START_BOUND_MS)

// No slot timer: slots come only with transactions and the fault powers, so a blockhash expires
// exactly when the test says.
const devnet = await startDevnet({ chains: [{ chainId: EVM, port: 0 }], svm: { port: 0, routesPort: 0 } })
t.teardown(() => devnet.stop())
const svm = devnet.svm as NonNullable<typeof devnet.svm>
const { faults } = svm
const { ledger } = svm.chain
const connection = new Connection(svm.rpcUrl, 'confirmed')
const evmChain = devnet.chains[0] as (typeof devnet.chains)[0]
const evmClient = createPublicClient({
  chain: evmChain.chain,
  transport: http(evmChain.rpcUrl),
}) as PublicClient
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const evmUsdcBalance = (owner: Address): Promise<bigint> =>
  evmClient.readContract({
    address: STABLECOIN_ADDRESS,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  })

async function start(env: Record<string, string> = {}): Promise<IntentsService> {
  return startIntentsService({
    env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off', ...env },
    port: 0,
    logger: silentLogger,
    document: loaded,
    indexerIntervalMs: 150,
    solverIntervalMs: 100,
  })
}

async function svmTokenBalance(owner: string): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(
    new PublicKey(SVM_STABLECOIN.address),
    new PublicKey(owner),
    true,
  )
  const info = ledger.getAccount(account)
  if (!info) return 0n
  return BigInt((await connection.getTokenAccountBalance(account, 'processed')).value.amount)
}

/** Quotes EVM USDC to SVM USDC for `recipient`, deposits as the wallet of `user` and indexes it. */
async function bridgeToSvm(client: TestClient, user: (typeof USERS)[number], recipient: string) {
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: EVM,
    destinationChainId: SVM,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: SVM_STABLECOIN.address,
    amount: '30000000',
    tradeType: 'EXACT_INPUT',
  })
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${res.text}`)
  const quote = res.body as Quote
  const wallet = createWalletClient({
    account: privateKeyToAccount(user.privateKey as Hex),
    chain: evmChain.chain,
    transport: http(evmChain.rpcUrl),
  })
  let txHash: Hex | undefined
  for (const step of quote.steps) {
    for (const item of step.items) {
      const data = item.data as { to: Address; data: Hex; value: string; gas?: string }
      txHash = await wallet.sendTransaction({
        to: data.to,
        data: data.data,
        value: BigInt(data.value),
        // The step's limit, as the Relay SDK sends it: a bare estimate runs out of gas when a
        // repayment empties the depository's balance first.
        ...(data.gas ? { gas: BigInt(data.gas) } : {}),
      })
      await evmClient.waitForTransactionReceipt({ hash: txHash })
    }
  }
  const indexed = await client.post('/transactions/index', { chainId: EVM, txHash })
  if (indexed.status !== 200) throw new Error(`index answered ${indexed.status}`)
  return { quote, requestId: quote.steps.at(-1)?.requestId as string }
}

/**
 * The fill job of `requestId`: its current transaction, the ones it replaced, its stored validity,
 * its state, how often a worker took it (`attempts`) and who holds it now.
 */
async function fillJob(service: IntentsService, requestId: string) {
  const { rows } = await service.store.client.query<{
    raw: string | null
    transaction_id: string | null
    replaced: Array<{ transactionId: string; raw: string }>
    valid_through: string | null
    state: string
    attempts: number
    lease_owner: string | null
  }>(
    `SELECT raw, transaction_id, replaced, valid_through, state, attempts, lease_owner
       FROM solver_jobs WHERE job_key = $1`,
    [`fill:${requestId.toLowerCase()}`],
  )
  return rows[0]
}

const blockhashOf = (raw: string): string =>
  VersionedTransaction.deserialize(Buffer.from(raw, 'base64')).message.recentBlockhash

t.test(
  'a stuck SVM fill is re-signed with a fresh blockhash only once the old one has provably expired, and paid once',
  async (t) => {
    const service = await start({ SOLVER_REPLACE_AFTER_MS: '200' })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = SVM_USERS[1]!.address
    const before = await svmTokenBalance(recipient)
    await faults.pauseMining()
    t.teardown(() => faults.resumeMining())
    const { quote, requestId } = await bridgeToSvm(client, USERS[2]!, recipient)
    const submitted = await settled(client, requestId, ['submitted'])
    const first = submitted.txHashes[0] as string
    t.same(await faults.waiting(), [first], 'the fill waits for a slot')
    const job = await fillJob(service, requestId)
    const blockhash = blockhashOf(job?.raw as string)
    const { lastValidBlockHeight } = ledger.latestBlockhash()
    t.ok(job?.valid_through !== null && BigInt(job?.valid_through as string) <= BigInt(lastValidBlockHeight))
    const validThrough = BigInt(job?.valid_through as string)

    // Evicted while its blockhash is valid: the same bytes come back, nothing is signed again.
    await faults.dropTransaction(first)
    await waitFor('the same fill to be sent again', async () => (await faults.waiting()).includes(first))
    t.same((await fillJob(service, requestId))?.replaced, [], 'not re-signed while the blockhash is valid')

    // Evicted again and its blockhash expires (block height past lastValidBlockHeight), but the
    // finalized height is not past it yet: nothing proves it yet, so still nothing is signed.
    await faults.dropTransaction(first)
    const head = await faults.expireBlockhash(blockhash)
    t.ok(head > validThrough, 'the processed height is past lastValidBlockHeight')
    t.ok(BigInt(ledger.slotAt('finalized')) <= validThrough, 'the finalized one is not')
    const attempts = async (): Promise<number> =>
      (
        await service.store.client.query<{ attempts: number }>(
          'SELECT attempts FROM solver_jobs WHERE job_key = $1',
          [`fill:${requestId.toLowerCase()}`],
        )
      ).rows[0]?.attempts ?? 0
    // Two more passes over the job: each sent the bytes again, was refused, and asked for a replacement.
    const passes = await attempts()
    await waitFor(
      'the refused re-broadcast to be followed twice',
      async () => (await attempts()) >= passes + 2,
    )
    t.same((await fillJob(service, requestId))?.replaced, [], 'not re-signed before the expiry is final')

    // Finalized past it: provably expired, signed again with a fresh blockhash.
    await faults.mine(ledger.finalizedDepth)
    const replaced = (await waitFor('the fill to be re-signed', async () => {
      const current = await fillJob(service, requestId)
      return current && current.replaced.length > 0 ? current : undefined
    })) as NonNullable<Awaited<ReturnType<typeof fillJob>>>
    t.equal(replaced.replaced[0]?.transactionId, first, 'the expired one is the replaced one')
    t.not(blockhashOf(replaced.raw as string), blockhash, 'a fresh blockhash')
    t.ok(BigInt(replaced.valid_through as string) > validThrough, 'valid for longer')
    await waitFor('the new fill to be sent', async () =>
      (await faults.waiting()).includes(replaced.transaction_id as string),
    )
    await faults.resumeMining()
    await faults.mine(ledger.finalizedDepth)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.ok(done.txHashes.includes(replaced.transaction_id as string), 'the status shows the landed fill')
    t.equal(ledger.transaction(first), undefined, 'the expired one never landed')
    t.equal(
      (await svmTokenBalance(recipient)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

t.test(
  'an SVM deposit rolled back before it is final: no fill, waiting, then DEPOSIT_REORGED after the TTL',
  async (t) => {
    let clockOffset = 0
    const service = await startIntentsService({
      env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
      port: 0,
      logger: silentLogger,
      document: loaded,
      indexerIntervalMs: 150,
      solverIntervalMs: 100,
      reorgCheckMs: 200,
      now: () => Date.now() + clockOffset,
    })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const user = SVM_USERS[2]!
    const res = await client.post('/quote/v2', {
      user: user.address,
      recipient: USERS[3]!.address,
      originChainId: SVM,
      destinationChainId: EVM,
      originCurrency: SVM_STABLECOIN.address,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '20000000',
      tradeType: 'EXACT_INPUT',
    })
    t.equal(res.status, 200)
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    const item = quote.steps[0]?.items[0]?.data as unknown as { transaction: string }
    const deposit = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
    deposit.sign([user.keypair])
    // The deposit lands in a slot of its own and no slot follows: it is confirmed, not finalized.
    const signature = await connection.sendRawTransaction(deposit.serialize())
    t.ok(ledger.transaction(signature), 'landed')
    const indexed = await client.post('/transactions/index', { chainId: SVM, txHash: signature })
    t.equal(indexed.status, 200)
    await faults.rollback(1)
    t.equal(ledger.transaction(signature), undefined, 'rolled back')
    const noted = await waitFor(
      'the record to note the rolled-back deposit',
      () => statusOf(client, requestId),
      {
        until: (record) => (record.details as ReorgDetails | null)?.depositReorged !== undefined,
        describe: (record) => record && { status: record.status, details: record.details },
      },
    )
    t.equal(noted.status, 'waiting', 'the request waits again')
    t.equal((noted.details as ReorgDetails).depositReorged?.stage, 'before_fill')
    t.equal((noted.details as ReorgDetails).depositReorged?.transactionId, signature)
    await faults.mine(ledger.finalizedDepth + 1)
    const { rows } = await service.store.client.query<{ fills: number }>(
      'SELECT count(*)::int AS fills FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.equal(rows[0]?.fills, 0, 'no fill queued')
    t.equal((await statusOf(client, requestId)).status, 'waiting', 'more slots change nothing')
    clockOffset = 2 * 86_400_000
    const failed = await settled(client, requestId, ['failure'])
    t.equal(failed.failReason, 'DEPOSIT_REORGED', 'after the TTL: failed, saying why')
  },
)

t.test('an SVM deposit made before the first start is found from the configured start slot', async (t) => {
  const database = await openTestSchema(t, 'faultssvm')
  const { configDir, configure } = await chainConfig(t, 'pontis-faults-svm-')
  const startWith = (workers: boolean) =>
    startIntentsService({
      configDir,
      env: {
        ...devnetEnvironment(devnet),
        RATE_LIMITS: 'off',
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: database.schema,
      },
      port: 0,
      logger: silentLogger,
      document: loaded,
      workers,
      indexerIntervalMs: 150,
      solverIntervalMs: 100,
    })
  await configure([EVM, SVM])
  // The first start only quotes: no watcher has run, so it has no cursor yet.
  const quoting = await startWith(false)
  t.teardown(() => quoting.close())
  const user = SVM_USERS[3] ?? SVM_USERS[0]!
  const recipient = USERS[1]!.address
  const res = await createTestClient(t, quoting.url, loaded.document).post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: SVM,
    destinationChainId: EVM,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '15000000',
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const item = quote.steps[0]?.items[0]?.data as unknown as { transaction: string }
  const deposit = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
  deposit.sign([user.keypair])
  const signature = await connection.sendRawTransaction(deposit.serialize())
  const depositSlot = ledger.transaction(signature)?.slot as number
  // More slots after it. A watcher starting at the head takes the deposit as the newest signature
  // already seen, and would never read it.
  await faults.mine(ledger.finalizedDepth + 3)
  await quoting.close()

  await configure([EVM, SVM], { [SVM]: { indexer: { startBlock: String(depositSlot) } } })
  const service = await startWith(true)
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const before = await evmUsdcBalance(recipient)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success', 'filled without a manual /transactions/index')
  t.ok(done.inTxHashes.includes(signature), 'from the deposit made before the start')
  t.equal(
    (await evmUsdcBalance(recipient)) - before,
    BigInt(quote.details.currencyOut.amount),
    'the recipient got the quoted output',
  )
})

t.test(
  'an SVM fill signed before a crash, whose blockhash expired before it was sent, is signed again after the restart and paid once',
  async (t) => {
    const database = await openTestSchema(t, 'crashsvm')
    const env = processEnvironment(devnet, database.schema)
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill:after-sign' })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const recipient = SVM_USERS[2]!.address
    const before = await svmTokenBalance(recipient)
    const { quote, requestId } = await bridgeToSvm(client, USERS[3]!, recipient)
    t.equal(await first.exited(), 'SIGKILL', 'the service died right after signing the fill')
    const [stored] = await querySchema<{ raw: string; transaction_id: string; valid_through: string }>(
      database.schema,
      'SELECT raw, transaction_id, valid_through FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.ok(stored?.raw, 'the signed fill was stored before the crash')
    const signed = stored as NonNullable<typeof stored>
    // While the service is down, the fill's blockhash expires, and the expiry becomes final.
    await faults.expireBlockhash(blockhashOf(signed.raw))
    await faults.mine(ledger.finalizedDepth)
    t.ok(BigInt(ledger.slotAt('finalized')) > BigInt(signed.valid_through), 'provably expired')

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const again = createTestClient(t, second.url, loaded.document)
    const landed = await waitFor('a fill to land', async () => {
      const record = await statusOf(again, requestId)
      return record.txHashes.find((hash) => ledger.transaction(hash) !== undefined)
    })
    await faults.mine(ledger.finalizedDepth)
    const done = await settled(again, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'the request survived the crash and was filled')
    t.not(landed, signed.transaction_id, 'by a fill signed again')
    t.equal(ledger.transaction(signed.transaction_id), undefined, 'the expired one never landed')
    t.equal(
      (await svmTokenBalance(recipient)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

t.test(
  'an SVM fill rolled back before it is finalized is sent again, the same signed bytes, and paid once',
  async (t) => {
    const service = await start()
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = SVM_USERS[0]!.address
    const before = await svmTokenBalance(recipient)
    const { quote, requestId } = await bridgeToSvm(client, USERS[0]!, recipient)
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    // No slot timer: the fill's slot stays confirmed, not finalized, until the test opens more.
    const slot = (await waitFor('the fill to land', async () => ledger.transaction(fill)?.slot)) as number
    t.ok(ledger.slotAt('finalized') < slot, 'landed, not finalized')
    t.equal((await statusOf(client, requestId)).status, 'submitted', 'not final: still submitted')
    await faults.rollback(ledger.slot - slot + 1)
    t.equal(ledger.transaction(fill), undefined, 'the fill is gone from the ledger')
    t.equal((await svmTokenBalance(recipient)) - before, 0n, 'and so is the payment')
    await waitFor('the solver to send the fill again', async () => ledger.transaction(fill) !== undefined)
    await faults.mine(ledger.finalizedDepth)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.same(done.txHashes, [fill], 'the same signed bytes landed again')
    t.same((await fillJob(service, requestId))?.replaced, [], 'nothing was signed again')
    t.equal(
      (await svmTokenBalance(recipient)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

t.test(
  'an SVM fill signed before a crash and not sent: the restarted service sends the same bytes, paid once',
  async (t) => {
    const database = await openTestSchema(t, 'crashsvmsend')
    const env = processEnvironment(devnet, database.schema)
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'fill:after-sign' })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const recipient = SVM_USERS[3]!.address
    const before = await svmTokenBalance(recipient)
    const { quote, requestId } = await bridgeToSvm(client, USERS[1]!, recipient)
    t.equal(await first.exited(), 'SIGKILL', 'the service died right after signing the fill')
    const [stored] = await querySchema<{ transaction_id: string }>(
      database.schema,
      'SELECT transaction_id FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    const signed = stored?.transaction_id as string
    t.ok(signed, 'the signed fill was stored before the crash')
    t.equal(ledger.transaction(signed), undefined, 'nothing was sent before the crash')
    t.equal((await svmTokenBalance(recipient)) - before, 0n, 'nothing paid before the crash')

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const again = createTestClient(t, second.url, loaded.document)
    await waitFor('the stored fill to land', async () => ledger.transaction(signed) !== undefined)
    await faults.mine(ledger.finalizedDepth)
    const done = await settled(again, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'the request survived the crash and was filled')
    t.same(done.txHashes, [signed], 'by the bytes signed before the crash')
    const [job] = await querySchema<{ replaced: unknown[] }>(
      database.schema,
      'SELECT replaced FROM solver_jobs WHERE job_key = $1',
      [`fill:${requestId.toLowerCase()}`],
    )
    t.same(job?.replaced, [], 'nothing was signed again')
    t.equal(
      (await svmTokenBalance(recipient)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)

t.test('an SVM deposit above the high-value threshold waits for the deeper confirmation rule', async (t) => {
  const database = await openTestSchema(t, 'highvaluesvm')
  const { configDir, configure } = await chainConfig(t, 'pontis-highvalue-svm-')
  // Finalized (the family's rule) is reached first; the high-value depth is four slots deeper.
  const deeper = ledger.finalizedDepth + 1 + 4
  await configure([EVM, SVM], {
    [SVM]: {
      finality: {
        highValue: [{ currency: SVM_STABLECOIN.address, above: '10000000', confirmations: deeper }],
      },
    },
  })
  const service = await startIntentsService({
    configDir,
    env: {
      ...devnetEnvironment(devnet),
      RATE_LIMITS: 'off',
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_SCHEMA: database.schema,
    },
    port: 0,
    logger: silentLogger,
    document: loaded,
    indexerIntervalMs: 150,
    solverIntervalMs: 100,
  })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const user = SVM_USERS[0]!
  const recipient = USERS[2]!.address
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: SVM,
    destinationChainId: EVM,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '12000000',
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const item = quote.steps[0]?.items[0]?.data as unknown as { transaction: string }
  const deposit = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
  deposit.sign([user.keypair])
  const signature = await connection.sendRawTransaction(deposit.serialize())
  const slot = ledger.transaction(signature)?.slot as number
  t.equal((await client.post('/transactions/index', { chainId: SVM, txHash: signature })).status, 200)
  const fills = async (): Promise<number> =>
    (
      await service.store.client.query<{ fills: number }>(
        'SELECT count(*)::int AS fills FROM solver_jobs WHERE job_key = $1',
        [`fill:${requestId.toLowerCase()}`],
      )
    ).rows[0]?.fills ?? 0
  // Finalized, one slot short of the high-value depth.
  await faults.mine(slot + deeper - 2 - ledger.slot)
  t.ok(ledger.slotAt('finalized') >= slot, 'the deposit is finalized')
  await freshIndexerPass(service)
  t.equal(await fills(), 0, 'finalized, one slot short of the high-value depth: not acted on')
  t.equal((await statusOf(client, requestId)).status, 'waiting')
  const before = await evmUsdcBalance(recipient)
  await faults.mine(1)
  const done = await settled(client, requestId, ['success', 'failure', 'refund'])
  t.equal(done.status, 'success', 'acted on at the high-value depth')
  t.equal(
    (await evmUsdcBalance(recipient)) - before,
    BigInt(quote.details.currencyOut.amount),
    'the recipient got the quoted output',
  )
})

t.test(
  'an SVM node lying about a blockhash: one to one nothing is trusted (waiting, no fill); two honest nodes outvote it, it is reported, the deposit is filled',
  async (t) => {
    // Another blockhash for every block it is asked for.
    const liar = await lyingNode(t, svm.rpcUrl, (call) => {
      const request = JSON.parse(call.body || '{}') as { method?: string }
      if (request.method !== 'getBlock') return undefined
      const answer = JSON.parse(call.answer) as { result?: { blockhash?: string } | null }
      if (!answer.result?.blockhash) return undefined
      return JSON.stringify({ ...answer, result: { ...answer.result, blockhash: FORGED_HASH } })
    })
    const database = await openTestSchema(t, 'liarsvm')
    const { configDir, configure } = await chainConfig(t, 'pontis-liar-svm-')
    const startWith = (logger: Logger) =>
      startIntentsService({
        configDir,
        env: {
          ...devnetEnvironment(devnet),
          RATE_LIMITS: 'off',
          DATABASE_URL: TEST_DATABASE_URL,
          DATABASE_SCHEMA: database.schema,
        },
        port: 0,
        logger,
        document: loaded,
        indexerIntervalMs: 150,
        solverIntervalMs: 100,
      })
    await configure([EVM, SVM], { [SVM]: { rpc: { url: svm.rpcUrl, fallbackUrls: [liar.url] } } })
    const oneToOne = warningsLogger()
    const twoNodes = await startWith(oneToOne.logger)
    t.teardown(() => twoNodes.close())
    const client = createTestClient(t, twoNodes.url, loaded.document)
    // The deposit comes after where the scan stands, so the scan records it.
    await waitFor('the SVM scan to stand somewhere', () => twoNodes.lifecycle.cursor(SVM))
    const user = SVM_USERS[1]!
    const res = await client.post('/quote/v2', {
      user: user.address,
      recipient: USERS[1]!.address,
      originChainId: SVM,
      destinationChainId: EVM,
      originCurrency: SVM_STABLECOIN.address,
      destinationCurrency: STABLECOIN_ADDRESS,
      amount: '15000000',
      tradeType: 'EXACT_INPUT',
    })
    t.equal(res.status, 200)
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    const item = quote.steps[0]?.items[0]?.data as unknown as { transaction: string }
    const deposit = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
    deposit.sign([user.keypair])
    const signature = await connection.sendRawTransaction(deposit.serialize())
    // Finalized: the deposit would be acted on, were its block vouched for.
    await faults.mine(ledger.finalizedDepth + 1)
    t.equal(ledger.commitmentOf(ledger.transaction(signature)?.slot as number), 'finalized')
    await waitFor('the deposit to be recorded', async () => (await seen(twoNodes, requestId)).deposits === 1)
    await waitFor('the liar to be counted', async () => {
      return disagreements((await client.get('/metrics')).text, SVM) > 0
    })
    await freshIndexerPass(twoNodes)
    t.same(
      await seen(twoNodes, requestId),
      { deposits: 1, fills: 0 },
      'one honest node of two is no majority: no fill',
    )
    t.equal((await statusOf(client, requestId)).status, 'waiting')
    const read = await twoNodes.registry.chain(SVM).adapter.reading?.readDeposits(signature, { fresh: true })
    t.match(read, { state: 'pending', final: false, facts: [] }, 'the deposit reads as not confirmed yet')
    const warned = oneToOne.warnings.find((line) => line.message.includes('another block hash'))
    t.equal(warned?.fields.node, new URL(liar.url).host, 'the log names the node by its host')
    t.notMatch(JSON.stringify(warned), /http:/, 'and not by its URL')
    await twoNodes.close()

    // A third node, honest: two of three agree, and the deposit is acted on.
    const honest = await lyingNode(t, svm.rpcUrl, () => undefined)
    await configure([EVM, SVM], {
      [SVM]: { rpc: { url: svm.rpcUrl, fallbackUrls: [liar.url, honest.url] } },
    })
    const before = await evmUsdcBalance(USERS[1]!.address)
    const threeNodes = await startWith(silentLogger)
    t.teardown(() => threeNodes.close())
    const api = createTestClient(t, threeNodes.url, loaded.document)
    const done = await settled(api, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success', 'filled once a majority vouches for the block')
    t.same(await seen(threeNodes, requestId), { deposits: 1, fills: 1 }, 'filled once')
    t.equal(
      (await evmUsdcBalance(USERS[1]!.address)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient got the quoted output',
    )
    t.ok(disagreements((await api.get('/metrics')).text, SVM) > 0, 'the outvoted liar is counted')
  },
)

t.test(
  'a landed SVM fill followed for many passes is never given up when its node is unreachable: no refund, paid once',
  async (t) => {
    const node = await failingNode(t, svm.rpcUrl)
    const service = await start({ LOCAL_SVM_RPC_URL: node.url })
    t.teardown(() => service.close())
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = SVM_USERS[1]!.address
    const before = await svmTokenBalance(recipient)
    const { quote, requestId } = await bridgeToSvm(client, USERS[3]!, recipient)
    const fill = (await settled(client, requestId, ['submitted'])).txHashes[0] as string
    // No slot timer: the fill's slot stays confirmed, not finalized, so the job is followed.
    await waitFor('the fill to land', async () => ledger.transaction(fill) !== undefined)
    // The node fails every call; the job has passed as often as a fill followed for a minute does
    // (every pass counts), more than `maxAttempts`.
    node.failing = true
    const jobKey = `fill:${requestId.toLowerCase()}`
    await service.store.client.query('UPDATE solver_jobs SET attempts = 100 WHERE job_key = $1', [jobKey])
    const failed = await waitFor(
      'a pass of the job with the node failing',
      () => fillJob(service, requestId),
      {
        until: (job) => job !== undefined && job.attempts > 100 && job.lease_owner === null,
      },
    )
    t.equal(failed?.state, 'broadcast', 'the job is still followed, not given up')
    t.equal((await statusOf(client, requestId)).status, 'submitted', 'no failure, no refund')
    node.failing = false
    // The failed pass put the next one off (backoff); bring it forward.
    await service.store.client.query('UPDATE solver_jobs SET not_before = 0 WHERE job_key = $1', [jobKey])
    await faults.mine(ledger.finalizedDepth)
    const done = await settled(client, requestId, ['success', 'failure', 'refund'])
    t.equal(done.status, 'success')
    t.same(done.txHashes, [fill], 'the fill that landed before the node failed')
    t.equal(
      (await svmTokenBalance(recipient)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient is paid once, the quoted output',
    )
  },
)
