/**
 * EVM origin swaps (issue 21) on the real devnet, through HTTP only: THIN, a token the depository
 * does not take, bridged from 31337 to USDC on 31338. The quote swaps it into the depository's USDC
 * inside the deposit transaction (Uniswap v3 `exactOutput` paying the depository, the request id
 * appended); the user approves the router and sends that one transaction, which is indexed from
 * `{chainId, txHash}` alone, and the request reaches `success`. Balances are checked exactly against
 * what the chain moved: the depository holds exactly the swap's guaranteed output, the user keeps the
 * input the swap did not need, and the recipient gets at least `minimumAmount`. A native-settled
 * origin swap is refused with a catalogued 4xx. Every answer is checked against openapi/intents.yaml.
 */
import { type IntentsApi, silentLogger } from '@pontis/core'
import {
  DEPOSITORY_ADDRESS,
  DEX_DEPLOYER,
  devnetEnvironment,
  STABLECOIN_ADDRESS,
  startDevnet,
  THIN_TOKEN_ADDRESS,
  UNISWAP_V3_SWAP_ROUTER_ADDRESS,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import { erc20Abi } from '@pontis/plugin-evm'
import t from 'tap'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodeFunctionData,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  type TransactionReceipt,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { evmBalance } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
type TransactionItem = Extract<Quote['steps'][number]['items'][number]['data'], { format: 'evm-transaction' }>
const NATIVE = '0x0000000000000000000000000000000000000000'
const THIN_IN = 10n * 10n ** 18n

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

async function send(
  privateKey: Hex,
  item: { to: string; data: string; value: string },
): Promise<TransactionReceipt> {
  const account = privateKeyToAccount(privateKey)
  const wallet = createWalletClient({ account, chain: chainA.chain, transport: http(chainA.rpcUrl) })
  const hash = await wallet.sendTransaction({
    to: item.to as Address,
    data: item.data as Hex,
    value: BigInt(item.value),
  })
  const receipt = await clientA.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error(`${hash} reverted`)
  return receipt
}

/** The `Transfer`s of `token` in `receipt` matching `from` and `to` (either side any when absent), summed. */
function transferred(receipt: TransactionReceipt, token: Address, sides: { from?: Address; to?: Address }) {
  let sum = 0n
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, token)) continue
    const event = decodeEventLog({ abi: erc20Abi, data: log.data, topics: log.topics, strict: false })
    if (event.eventName !== 'Transfer' || !event.args.from || !event.args.to) continue
    if (sides.from && !isAddressEqual(event.args.from, sides.from)) continue
    if (sides.to && !isAddressEqual(event.args.to, sides.to)) continue
    sum += event.args.value ?? 0n
  }
  return sum
}

/** A step's only item: the transaction a wallet sends. */
function transactionOf(step: Quote['steps'][number]): TransactionItem {
  const data = step.items.length === 1 ? step.items[0]?.data : undefined
  if (data?.format !== 'evm-transaction') throw new Error(`step ${step.id} is not one EVM transaction`)
  return data
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

const user = USERS[2]!
const recipient = USERS[3]!.address

// The user's THIN, from the deployer that minted it.
await send(DEX_DEPLOYER.privateKey, {
  to: THIN_TOKEN_ADDRESS,
  value: '0',
  data: encodeFunctionData({
    abi: erc20Abi,
    functionName: 'transfer',
    args: [user.address, THIN_IN],
  }),
})

t.test('THIN on 31337 → USDC on 31338: swapped into USDC and deposited in one transaction', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: THIN_TOKEN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: THIN_IN.toString(),
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 200, 'quoted')
  const quote = res.body as Quote
  const origin = quote.details.route?.origin
  t.same(origin?.includedSwapSources, ['uniswap-v3', 'uniswap-v3'], 'THIN → WETH → USDC')
  t.equal(origin?.outputCurrency?.currency?.address?.toLowerCase(), STABLECOIN_ADDRESS.toLowerCase())
  const guaranteed = BigInt(origin?.outputCurrency?.minimumAmount ?? '0')
  t.ok(guaranteed > 0n, 'the swap guarantees an output')
  t.same(
    quote.steps.map((step) => step.id),
    ['approve', 'deposit'],
    'approve the router, then swap and deposit',
  )
  const requestId = quote.steps.at(-1)?.requestId as Hex
  const [approve, deposit] = quote.steps.map(transactionOf) as [TransactionItem, TransactionItem]
  t.equal(approve.to.toLowerCase(), THIN_TOKEN_ADDRESS.toLowerCase(), 'the approval is of THIN')
  t.equal(deposit.to.toLowerCase(), UNISWAP_V3_SWAP_ROUTER_ADDRESS.toLowerCase(), 'one router transaction')
  t.ok(deposit.data.toLowerCase().endsWith(requestId.slice(2).toLowerCase()), 'tagged with the request id')

  const thinBefore = await evmBalance(clientA, user.address, THIN_TOKEN_ADDRESS)
  const depositoryBefore = await evmBalance(clientA, DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS)
  const recipientBefore = await evmBalance(clientB, recipient, STABLECOIN_ADDRESS)
  await send(user.privateKey, approve)
  const receipt = await send(user.privateKey, deposit)

  const paidIn = thinBefore - (await evmBalance(clientA, user.address, THIN_TOKEN_ADDRESS))
  t.equal(
    paidIn,
    transferred(receipt, THIN_TOKEN_ADDRESS, { from: user.address }),
    'THIN left only through the swap',
  )
  t.ok(
    paidIn > 0n && paidIn <= THIN_IN,
    `the swap took ${paidIn} of at most ${THIN_IN} THIN; the user keeps the rest`,
  )
  t.equal(
    await evmBalance(clientA, UNISWAP_V3_SWAP_ROUTER_ADDRESS, THIN_TOKEN_ADDRESS),
    0n,
    'nothing is left with the router',
  )
  const deposited = transferred(receipt, STABLECOIN_ADDRESS, { to: DEPOSITORY_ADDRESS })
  t.equal(deposited, guaranteed, 'the depository was paid exactly the guaranteed output')
  t.equal(
    (await evmBalance(clientA, DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS)) - depositoryBefore,
    deposited,
    'and holds it',
  )

  const indexed = await client.post('/transactions/index', {
    chainId: 31337,
    txHash: receipt.transactionHash,
  })
  t.equal(indexed.status, 200, 'indexed')
  t.equal(
    (indexed.body as { requestId?: string }).requestId,
    requestId,
    'matched to its request from the transaction alone',
  )
  const done = await settle(client, requestId)
  t.equal(done.status, 'success')
  t.ok(done.inTxHashes.includes(receipt.transactionHash), 'inTxHashes has the swap deposit')
  const received = (await evmBalance(clientB, recipient, STABLECOIN_ADDRESS)) - recipientBefore
  t.equal(received, BigInt(quote.details.currencyOut.amount), 'the recipient got the quoted output')
  t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), 'at least minimumAmount')
})

t.test('an origin swap into the native currency is refused with a catalogued 4xx', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: THIN_TOKEN_ADDRESS,
    destinationCurrency: NATIVE,
    amount: THIN_IN.toString(),
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 400)
  t.equal((res.body as { errorCode?: string }).errorCode, 'NO_SWAP_ROUTES_FOUND')
  t.match((res.body as { message?: string }).message, /USDC/, 'the message names what to ask for instead')
})
