/**
 * `explicitDeposit: false` (what the public swap widget sends for a plain-account wallet) on the real
 * devnet, through HTTP only: the quote serves the direct deposit form, a wallet sends it, the
 * transaction is indexed from `{chainId, txHash}` alone and the request reaches `success`, with the
 * recipient paid the quoted amount. Deposits of the wrong amount or currency in the direct form are
 * refunded as explicit ones are. Every answer is checked against openapi/intents.yaml.
 */
import { type IntentsApi, silentLogger } from '@pontis/core'
import {
  DEPOSIT_RECEIVER_ADDRESS,
  DEPOSITORY_ADDRESS,
  devnetEnvironment,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import { depositoryAbi, erc20Abi } from '@pontis/plugin-evm'
import t, { type Test } from 'tap'
import {
  type Address,
  concat,
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  http,
  type PublicClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { evmBalance } from './fixtures/e2e.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
type TransactionItem = Extract<
  IntentsApi.QuoteResponse['steps'][number]['items'][number]['data'],
  { format: 'evm-transaction' }
>

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: loaded,
  indexerIntervalMs: 150,
  solverIntervalMs: 100,
})
t.teardown(() => service.close())
const [chainA, chainB] = devnet.chains as [(typeof devnet.chains)[0], (typeof devnet.chains)[0]]
const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) }) as PublicClient
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) }) as PublicClient

const balance = evmBalance

const wallet = (privateKey: Hex) =>
  createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })

const quoteBody = (user: Address, recipient: Address, currency: string, amount: string) => ({
  user,
  recipient,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: currency,
  destinationCurrency: currency,
  amount,
  tradeType: 'EXACT_INPUT',
})

/** The quote's only step, its only item: the transaction a wallet sends. */
function onlyTransaction(t: Test, quote: Quote): TransactionItem {
  t.same(
    quote.steps.map((step) => step.id),
    ['deposit'],
    'one deposit step, no approval',
  )
  const items = quote.steps[0]!.items
  t.equal(items.length, 1)
  const data = items[0]!.data
  if (data.format !== 'evm-transaction') throw new Error(`unexpected ${data.format}`)
  return data
}

async function send(privateKey: Hex, item: { to: string; data: string; value: string }): Promise<Hex> {
  const hash = await wallet(privateKey).sendTransaction({
    to: item.to as Address,
    data: item.data as Hex,
    value: BigInt(item.value),
  })
  const receipt = await clientA.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error(`${hash} reverted`)
  return hash
}

async function settle(client: TestClient, requestId: string): Promise<Status> {
  return waitFor(
    `request ${requestId} to be final`,
    async () => (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as Status,
    {
      until: (record) => ['success', 'failure', 'refund'].includes(record.status),
      describe: (record) => record && { status: record.status, failReason: record.failReason },
    },
  )
}

/** What the widget does after broadcast: `{chainId, txHash}` only, no request id. */
async function indexOnly(t: Test, client: TestClient, txHash: Hex, requestId: string): Promise<void> {
  const indexed = await client.post('/transactions/index', { chainId: 31337, txHash })
  t.equal(indexed.status, 200, 'indexed')
  t.equal(
    (indexed.body as { requestId?: string }).requestId,
    requestId,
    'matched to its request from the transaction alone',
  )
}

t.test(
  'native, explicitDeposit: false: a transfer carrying the request id, through the deposit receiver',
  async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    const user = USERS[0]!
    const recipient = USERS[3]!.address
    const res = await client.post('/quote/v2', {
      ...quoteBody(user.address, recipient, NATIVE, '100000000000000000'),
      explicitDeposit: false,
    })
    t.equal(res.status, 200)
    const quote = res.body as Quote
    const requestId = quote.steps[0]!.requestId as string
    const item = onlyTransaction(t, quote)
    t.equal(item.to, DEPOSIT_RECEIVER_ADDRESS, 'sent to the chain record’s relayReceiver')
    t.equal(item.data, requestId, 'the calldata is the request id')
    t.equal(item.value, quote.details.currencyIn.amount, 'the value is the quoted input')
    t.ok(BigInt(item.gas ?? '0') > 21_000n, 'gas covers the forward into the depository')

    const chains = (await client.get('/chains')).body as {
      chains: Array<{ id: number; contracts?: Record<string, string> }>
    }
    t.equal(
      chains.chains.find((chain) => chain.id === 31337)?.contracts?.relayReceiver,
      DEPOSIT_RECEIVER_ADDRESS,
      '/chains lists the receiver',
    )

    const depositoryBefore = await balance(clientA, DEPOSITORY_ADDRESS, NATIVE)
    const before = await balance(clientB, recipient, NATIVE)
    const txHash = await send(user.privateKey, item)
    t.equal(
      (await balance(clientA, DEPOSITORY_ADDRESS, NATIVE)) - depositoryBefore,
      BigInt(quote.details.currencyIn.amount),
      'the depository holds the deposit',
    )
    await indexOnly(t, client, txHash, requestId)
    const done = await settle(client, requestId)
    t.equal(done.status, 'success')
    t.ok(done.inTxHashes.includes(txHash), 'inTxHashes has the direct deposit')
    t.equal((await balance(clientB, recipient, NATIVE)) - before, BigInt(quote.details.currencyOut.amount))
  },
)

t.test(
  'ERC-20, explicitDeposit: false: transfer(depository, amount) with the request id appended',
  async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    const user = USERS[1]!
    const recipient = USERS[2]!.address
    // A fresh allowance of zero: the explicit form would need an approval first.
    const allowance = await clientA.readContract({
      address: STABLECOIN_ADDRESS,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [user.address, DEPOSITORY_ADDRESS],
    })
    t.equal(allowance, 0n, 'no allowance to the depository')
    const res = await client.post('/quote/v2', {
      ...quoteBody(user.address, recipient, STABLECOIN_ADDRESS, '25000000'),
      explicitDeposit: false,
    })
    t.equal(res.status, 200)
    const quote = res.body as Quote
    const requestId = quote.steps[0]!.requestId as Hex
    const item = onlyTransaction(t, quote)
    const amountIn = BigInt(quote.details.currencyIn.amount)
    t.equal(item.to, STABLECOIN_ADDRESS, 'sent to the token')
    t.equal(item.value, '0')
    t.equal(
      item.data,
      concat([
        encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [DEPOSITORY_ADDRESS, amountIn] }),
        requestId,
      ]),
      'transfer(depository, amountIn) followed by the request id',
    )

    const depositoryBefore = await balance(clientA, DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS)
    const before = await balance(clientB, recipient, STABLECOIN_ADDRESS)
    const txHash = await send(user.privateKey, item)
    t.equal((await balance(clientA, DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS)) - depositoryBefore, amountIn)
    await indexOnly(t, client, txHash, requestId)
    const done = await settle(client, requestId)
    t.equal(done.status, 'success')
    t.ok(done.inTxHashes.includes(txHash))
    t.equal(
      (await balance(clientB, recipient, STABLECOIN_ADDRESS)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient got the quoted output',
    )
  },
)

t.test('explicitDeposit: true and absent serve the same depository call as before', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[2]!
  for (const currency of [NATIVE, STABLECOIN_ADDRESS]) {
    const amount = currency === NATIVE ? '50000000000000000' : '5000000'
    const absent = (await client.post('/quote/v2', quoteBody(user.address, user.address, currency, amount)))
      .body as Quote
    const explicit = (
      await client.post('/quote/v2', {
        ...quoteBody(user.address, user.address, currency, amount),
        explicitDeposit: true,
      })
    ).body as Quote
    t.same(
      explicit.steps.map((step) => step.id),
      absent.steps.map((step) => step.id),
      `${currency}: same steps`,
    )
    const deposit = (quote: Quote) => quote.steps.at(-1)!.items[0]!.data as TransactionItem
    t.equal(deposit(explicit).to, DEPOSITORY_ADDRESS, `${currency}: to the depository`)
    const call = decodeFunctionData({ abi: depositoryAbi, data: deposit(explicit).data as Hex })
    t.equal(call.functionName, currency === NATIVE ? 'depositNative' : 'depositErc20')
    t.equal(
      decodeFunctionData({ abi: depositoryAbi, data: deposit(absent).data as Hex }).functionName,
      call.functionName,
    )
  }
})

t.test('a direct deposit of the wrong amount or currency is refunded like an explicit one', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[3]!

  // Too little: the token transfer carries the request id but less than the quoted amount.
  const low = (
    await client.post('/quote/v2', {
      ...quoteBody(user.address, user.address, STABLECOIN_ADDRESS, '20000000'),
      explicitDeposit: false,
    })
  ).body as Quote
  const lowId = low.steps[0]!.requestId as Hex
  const before = await balance(clientA, user.address, STABLECOIN_ADDRESS)
  const short = BigInt(low.details.currencyIn.amount) - 1_000_000n
  const underpaid = await send(user.privateKey, {
    to: STABLECOIN_ADDRESS,
    value: '0',
    data: concat([
      encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [DEPOSITORY_ADDRESS, short] }),
      lowId,
    ]),
  })
  await indexOnly(t, client, underpaid, lowId)
  const refunded = await settle(client, lowId)
  t.equal(refunded.status, 'refund')
  t.equal(refunded.failReason, 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL')
  await waitFor(
    `the depositor's stablecoin back at ${before}`,
    () => balance(clientA, user.address, STABLECOIN_ADDRESS),
    {
      until: (now) => now === before,
    },
  )
  t.equal(await balance(clientA, user.address, STABLECOIN_ADDRESS), before, 'the whole deposit came back')

  // Wrong currency: native value through the receiver, tagged with a stablecoin request's id.
  const token = (
    await client.post('/quote/v2', {
      ...quoteBody(user.address, user.address, STABLECOIN_ADDRESS, '20000000'),
      explicitDeposit: false,
    })
  ).body as Quote
  const tokenId = token.steps[0]!.requestId as Hex
  const wrong = await send(user.privateKey, {
    to: DEPOSIT_RECEIVER_ADDRESS,
    value: '10000000000000000',
    data: tokenId,
  })
  await indexOnly(t, client, wrong, tokenId)
  const wrongDone = await settle(client, tokenId)
  t.equal(wrongDone.status, 'refund')
  t.equal(wrongDone.failReason, 'INCORRECT_DEPOSIT_CURRENCY')
})

t.test('transfers that are not direct deposits are not attributed', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[2]!
  // A token transfer to the depository without a request id, and one with an id but to someone else.
  const untagged = await send(user.privateKey, {
    to: STABLECOIN_ADDRESS,
    value: '0',
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [DEPOSITORY_ADDRESS, 1n] }),
  })
  const elsewhere = await send(user.privateKey, {
    to: STABLECOIN_ADDRESS,
    value: '0',
    data: concat([
      encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [USERS[0]!.address, 1n] }),
      `0x${'ab'.repeat(32)}`,
    ]),
  })
  for (const [name, txHash] of [
    ['untagged', untagged],
    ['to someone else', elsewhere],
  ] as const) {
    const res = await client.post('/transactions/index', { chainId: 31337, txHash })
    t.equal(res.status, 400, `${name}: not a deposit`)
    t.equal((res.body as { errorCode: string }).errorCode, 'NOT_A_DEPOSIT', name)
  }
})

t.test('the watcher finds a direct ERC-20 deposit that nobody indexed', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[0]!
  const recipient = USERS[1]!.address
  const res = await client.post('/quote/v2', {
    ...quoteBody(user.address, recipient, STABLECOIN_ADDRESS, '7000000'),
    explicitDeposit: false,
  })
  const quote = res.body as Quote
  const requestId = quote.steps[0]!.requestId as string
  const before = await balance(clientB, recipient, STABLECOIN_ADDRESS)
  const txHash = await send(user.privateKey, onlyTransaction(t, quote))
  const done = await settle(client, requestId)
  t.equal(done.status, 'success', 'found by the depository scan, no /transactions/index call')
  t.ok(done.inTxHashes.includes(txHash))
  t.equal(
    (await balance(clientB, recipient, STABLECOIN_ADDRESS)) - before,
    BigInt(quote.details.currencyOut.amount),
  )
})
