/**
 * EVM origin swaps (issue 21) on the real devnet, through HTTP only: THIN, a token the depository
 * does not take, bridged from 31337 to USDC on 31338. The quote swaps it into the depository's USDC
 * inside the deposit transaction (Uniswap v3 `exactOutput` paying the depository, the request id
 * appended); the user approves the router and sends that one transaction, which is indexed from
 * `{chainId, txHash}` alone, and the request reaches `success`. Balances are checked exactly against
 * what the chain moved: the depository holds exactly the swap's guaranteed output, the user keeps the
 * input the swap did not need, and the recipient gets at least `minimumAmount`. A native-settled
 * origin swap buys WETH, which the router unwraps straight into the depository, attributed by the tag.
 * Every answer is checked against openapi/intents.yaml.
 */
import { createPontisClient, viemWalletAdapter } from '@pontis/client'
import type { IntentsApi } from '@pontis/core'
import {
  DEPOSITORY_ADDRESS,
  DEX_DEPLOYER,
  STABLECOIN_ADDRESS,
  THIN_TOKEN_ADDRESS,
  UNISWAP_V3_SWAP_ROUTER_ADDRESS,
  USERS,
  WETH_ADDRESS,
} from '@pontis/devnet'
import { erc20Abi } from '@pontis/plugin-evm'
import t from 'tap'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  parseAbi,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { evmBalance, startE2e } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
type TransactionItem = Extract<Quote['steps'][number]['items'][number]['data'], { format: 'evm-transaction' }>
const NATIVE = '0x0000000000000000000000000000000000000000'
const THIN_IN = 10n * 10n ** 18n
const wethEvents = parseAbi(['event Withdrawal(address indexed src, uint256 wad)'])

const e2e = await startE2e(t, {}, { otherEvmChains: [31338] })
const { service } = e2e
const [chainA, chainB] = e2e.devnet.chains as [(typeof e2e.devnet.chains)[0], (typeof e2e.devnet.chains)[0]]
const clientA = e2e.evm.client
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) }) as PublicClient

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

const user = USERS[2]!
const recipient = USERS[3]!.address

/** THIN for `owner`, from the deployer that minted it. */
async function fundThin(owner: Address, amount: bigint) {
  const deployer = createWalletClient({
    account: privateKeyToAccount(DEX_DEPLOYER.privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
  const hash = await deployer.writeContract({
    address: THIN_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [owner, amount],
  })
  await clientA.waitForTransactionReceipt({ hash })
}
await fundThin(user.address, THIN_IN)

/** A bridge of THIN on 31337 into `destinationCurrency` on 31338. */
const thinBridge = (
  from: Address,
  to: Address,
  destinationCurrency: string,
  amount: bigint,
  tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT' = 'EXACT_INPUT',
) => ({
  user: from,
  recipient: to,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: THIN_TOKEN_ADDRESS,
  destinationCurrency,
  amount: amount.toString(),
  tradeType,
})

t.test('THIN on 31337 → USDC on 31338: swapped into USDC and deposited in one transaction', async (t) => {
  const client = e2e.client(t)
  const res = await client.post('/quote/v2', thinBridge(user.address, recipient, STABLECOIN_ADDRESS, THIN_IN))
  t.equal(res.status, 200, 'quoted')
  const quote = res.body as Quote
  const origin = quote.details.route?.origin
  t.same(origin?.includedSwapSources, ['uniswap-v3', 'uniswap-v3'], 'THIN → WETH → USDC')
  t.equal(origin?.outputCurrency?.currency?.address?.toLowerCase(), STABLECOIN_ADDRESS.toLowerCase())
  const guaranteed = BigInt(origin?.outputCurrency?.minimumAmount ?? '0')
  t.ok(guaranteed > 0n, 'the swap guarantees an output')
  t.ok(
    guaranteed < BigInt(origin?.outputCurrency?.amount ?? '0'),
    'below the expected output: a market trade gets the cross-asset slippage even when both ends are USDC',
  )
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
  const receipt = await clientA.getTransactionReceipt({
    hash: await e2e.evm.execute(quote, user.privateKey),
  })

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
  const done = await e2e.waitForStatus(client, requestId)
  t.ok(done.inTxHashes.includes(receipt.transactionHash), 'inTxHashes has the swap deposit')
  const received = (await evmBalance(clientB, recipient, STABLECOIN_ADDRESS)) - recipientBefore
  t.equal(received, BigInt(quote.details.currencyOut.amount), 'the recipient got the quoted output')
  t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), 'at least minimumAmount')
})

t.test('partner client: exactly 15 USDC on 31338 bought with THIN on 31337 (exact output)', async (t) => {
  const buyer = USERS[1]!
  const receiver = USERS[0]!.address
  await fundThin(buyer.address, 2n * THIN_IN)
  const body = thinBridge(buyer.address, receiver, STABLECOIN_ADDRESS, 15_000_000n, 'EXACT_OUTPUT')
  // The document's shape first (the conformance checker fails the test on any mismatch).
  t.equal((await e2e.client(t).post('/quote/v2', body)).status, 200)
  const pontis = createPontisClient({ baseUrl: service.url })
  const quote = await pontis.getQuote(body)
  const maxIn = BigInt(quote.details.route?.origin?.inputCurrency?.amount ?? '0')
  const guaranteed = BigInt(quote.details.route?.origin?.outputCurrency?.minimumAmount ?? '0')
  t.ok(maxIn > 0n && maxIn <= 2n * THIN_IN, `at most ${maxIn} THIN`)
  const thinBefore = await evmBalance(clientA, buyer.address, THIN_TOKEN_ADDRESS)
  const receiverBefore = await evmBalance(clientB, receiver, STABLECOIN_ADDRESS)
  const wallet = createWalletClient({
    account: privateKeyToAccount(buyer.privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
  // No /transactions/index here: the indexer finds the tagged router transfer on its own.
  const result = await pontis.executeQuote(quote, [viemWalletAdapter(wallet)], {
    pollIntervalMs: 200,
    timeoutMs: 120_000,
  })
  t.equal(result.status.status, 'success')
  const receipt = await clientA.getTransactionReceipt({ hash: result.txHashes.at(-1) as Hex })
  const paidIn = thinBefore - (await evmBalance(clientA, buyer.address, THIN_TOKEN_ADDRESS))
  t.equal(
    paidIn,
    transferred(receipt, THIN_TOKEN_ADDRESS, { from: buyer.address }),
    'THIN left only through the swap',
  )
  t.ok(paidIn <= maxIn, `the swap took ${paidIn} THIN, within the quoted ${maxIn}`)
  // From the receipt: the depository's balance also moves with the solver's repayment of the first request.
  t.equal(
    transferred(receipt, STABLECOIN_ADDRESS, { to: DEPOSITORY_ADDRESS }),
    guaranteed,
    'the depository was paid exactly the swap output the quote priced',
  )
  t.equal(
    (await evmBalance(clientB, receiver, STABLECOIN_ADDRESS)) - receiverBefore,
    15_000_000n,
    'the recipient got exactly the amount asked for',
  )
})

t.test(
  'THIN on 31337 → ETH on 31338: swapped into WETH, unwrapped into the depository, found by the scan',
  async (t) => {
    const client = e2e.client(t)
    const buyer = USERS[0]!
    const receiver = privateKeyToAccount(generatePrivateKey()).address
    // Small: the earlier swaps moved the thin pool, and the impact limit must not answer first.
    const amount = THIN_IN / 10n
    await fundThin(buyer.address, amount)
    const res = await client.post('/quote/v2', thinBridge(buyer.address, receiver, NATIVE, amount))
    t.equal(res.status, 200, 'quoted: the depository takes ETH, so the swap buys ETH')
    const quote = res.body as Quote
    const origin = quote.details.route?.origin
    t.equal(origin?.outputCurrency?.currency?.address, NATIVE, 'the origin swap settles in ETH')
    t.same(origin?.includedSwapSources, ['uniswap-v3'], 'THIN → WETH, one hop')
    const guaranteed = BigInt(origin?.outputCurrency?.minimumAmount ?? '0')
    t.ok(guaranteed > 0n)
    const requestId = quote.steps.at(-1)?.requestId as Hex
    const deposit = transactionOf(quote.steps.at(-1)!)
    t.equal(deposit.to.toLowerCase(), UNISWAP_V3_SWAP_ROUTER_ADDRESS.toLowerCase(), 'one router transaction')
    t.equal(deposit.value, '0', 'no ETH sent: the input is THIN')

    const depositoryBefore = await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)
    const receiverBefore = await evmBalance(clientB, receiver, NATIVE)
    const hash = await e2e.evm.execute(quote, buyer.privateKey)
    const receipt = await clientA.getTransactionReceipt({ hash })
    const unwrapped = parseEventLogs({ abi: wethEvents, logs: receipt.logs })
      .filter((event) => isAddressEqual(event.address, WETH_ADDRESS))
      .reduce((sum, event) => sum + event.args.wad, 0n)
    t.equal(unwrapped, guaranteed, 'the router unwrapped exactly the guaranteed output')
    t.equal(
      (await evmBalance(clientA, DEPOSITORY_ADDRESS, NATIVE)) - depositoryBefore,
      guaranteed,
      'and the depository holds it',
    )
    t.equal(
      await evmBalance(clientA, UNISWAP_V3_SWAP_ROUTER_ADDRESS, NATIVE),
      0n,
      'nothing left with the router',
    )

    // No /transactions/index: the scan finds the router's swap and attributes the unwrapped ETH.
    const done = await e2e.waitForStatus(client, requestId)
    t.same(done.inTxHashes, [hash], 'inTxHashes has the swap deposit')
    const received = (await evmBalance(clientB, receiver, NATIVE)) - receiverBefore
    t.equal(received, BigInt(quote.details.currencyOut.amount), 'the recipient got the quoted ETH')
    t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), 'at least minimumAmount')
    const indexed = await client.post('/transactions/index', { chainId: 31337, txHash: hash })
    t.equal(indexed.status, 200)
    t.equal(
      (indexed.body as { requestId?: string }).requestId,
      requestId,
      'the transaction alone names the request',
    )
    t.equal(await e2e.jobsFor(requestId), 1, 'one fill, nothing refunded')
  },
)

t.test('an origin swap is a transaction the user sends: usePermit is refused', async (t) => {
  const res = await e2e.client(t).post('/quote/v2', {
    ...thinBridge(user.address, recipient, STABLECOIN_ADDRESS, THIN_IN / 10n),
    usePermit: true,
  })
  t.equal(res.status, 400)
  t.equal((res.body as { errorCode?: string }).errorCode, 'UNSUPPORTED_EXECUTION_TYPE')
  t.match((res.body as { message?: string }).message, 'remove usePermit', 'the message says what to change')
})
