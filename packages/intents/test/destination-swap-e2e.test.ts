/**
 * EVM destination swaps (issue 21) on the real devnet, through HTTP only: a bridge from 31337 whose
 * output on 31338 is a token the solver does not pay out itself. The solver fills in its inventory
 * currency (USDC for a USDC input, ETH for an ETH input) and the fill transaction swaps it through the
 * devnet's Uniswap v3 router into the requested token, paid straight to the recipient, with the
 * quote's `minimumAmount` as the router's `amountOutMinimum`. Checked against what the chain moved:
 * the recipient's balance grew by exactly what the fill's own logs show (token `Transfer`s, or WETH's
 * `Withdrawal` for native output), at least `minimumAmount`, and the plugin's fill reading (what the
 * oracle attests) reports the same payout. A swap whose minimum the pool can no longer meet reverts
 * the fill, and the deposit is refunded on the origin. Every answer is checked against
 * openapi/intents.yaml.
 */
import { createPontisClient, viemWalletAdapter } from '@pontis/client'
import { type IntentsApi, loadRegistry, silentLogger } from '@pontis/core'
import {
  DEX_DEPLOYER,
  devnetEnvironment,
  ORACLE_SIGNER,
  STABLECOIN_ADDRESS,
  THIN_TOKEN_ADDRESS,
  UNISWAP_V3_SWAP_ROUTER_ADDRESS,
  USERS,
  WETH_ADDRESS,
} from '@pontis/devnet'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import {
  createOracleApp,
  createSigner,
  DEFAULT_ORACLE_APP_CONFIG,
  ORACLE_DOCUMENT_PATH,
} from '@pontis/oracle'
import { erc20Abi } from '@pontis/plugin-evm'
import t from 'tap'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodePacked,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  parseAbi,
  type TransactionReceipt,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { evmBalance, startE2e } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
const NATIVE = '0x0000000000000000000000000000000000000000'
const USDC = (whole: number) => BigInt(whole) * 1_000_000n

const e2e = await startE2e(t, {}, { otherEvmChains: [31338] })
const { service } = e2e
const chainB = e2e.devnet.chains[1] as (typeof e2e.devnet.chains)[0]
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) }) as PublicClient
const wethAbi = parseAbi(['event Withdrawal(address indexed src, uint256 wad)'])

// An oracle on the same chains, to attest a swap fill as the settlement does.
const oracleRegistry = await loadRegistry({ env: devnetEnvironment(e2e.devnet), logger: silentLogger })
t.teardown(() => oracleRegistry.close())
const oracleDocument = await loadOpenApiDocument(ORACLE_DOCUMENT_PATH)
const oracle = await listen(
  await createOracleApp({
    registry: oracleRegistry,
    signer: await createSigner({ module: 'raw-private-key', privateKey: ORACLE_SIGNER.privateKey }),
    logger: silentLogger,
    document: oracleDocument,
    config: { ...DEFAULT_ORACLE_APP_CONFIG, rateLimit: { max: 100_000, windowMs: 1000 } },
  }),
  { port: 0 },
)
t.teardown(() => oracle.close())
type Attested = { messages: Array<{ result: Record<string, unknown> }> }

/** The `Transfer`s of `token` to `to` in `receipt`, summed. */
function transferredTo(receipt: TransactionReceipt, token: Address, to: Address): bigint {
  let sum = 0n
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, token)) continue
    const event = decodeEventLog({ abi: erc20Abi, data: log.data, topics: log.topics, strict: false })
    if (event.eventName !== 'Transfer' || !event.args.to || !isAddressEqual(event.args.to, to)) continue
    sum += event.args.value ?? 0n
  }
  return sum
}

/** What WETH unwrapped for the router in `receipt` (the native output it then sends on). */
function unwrapped(receipt: TransactionReceipt): bigint {
  let sum = 0n
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, WETH_ADDRESS) || log.topics[0] === undefined) continue
    try {
      const event = decodeEventLog({ abi: wethAbi, data: log.data, topics: log.topics })
      if (isAddressEqual(event.args.src, UNISWAP_V3_SWAP_ROUTER_ADDRESS)) sum += event.args.wad
    } catch {
      // Another WETH event.
    }
  }
  return sum
}

/** A bridge from 31337 into `destinationCurrency` on 31338. */
const bridge = (
  from: Address,
  to: Address,
  originCurrency: string,
  destinationCurrency: string,
  amount: bigint,
  extra: Record<string, unknown> = {},
) => ({
  user: from,
  recipient: to,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency,
  destinationCurrency,
  amount: amount.toString(),
  tradeType: 'EXACT_INPUT' as 'EXACT_INPUT' | 'EXACT_OUTPUT',
  ...extra,
})

/** The fill of a successful request, with what the plugin's fill reading (the oracle's) reports. */
async function fillOf(status: Pick<IntentsApi.StatusRecordV3, 'txHashes'>, requestId: string) {
  const hash = status.txHashes.at(-1) as Hex
  const receipt = await clientB.getTransactionReceipt({ hash })
  const reading = service.registry.chain(31338).adapter.reading
  const facts = (await reading?.readFills?.(hash))?.facts ?? []
  const paid = (recipient: Address, currency: string) =>
    facts
      .filter(
        (fact) =>
          fact.orderId.toLowerCase() === requestId.toLowerCase() &&
          isAddressEqual(fact.recipient as Address, recipient) &&
          fact.currencyId.toLowerCase() === currency.toLowerCase(),
      )
      .reduce((sum, fact) => sum + fact.amount, 0n)
  return { receipt, paid }
}

t.test(
  'USDC on 31337 → THIN on 31338: the fill buys THIN for the recipient in its own transaction',
  async (t) => {
    const user = USERS[0]!
    const recipient = USERS[1]!.address
    const client = e2e.client(t)
    const body = bridge(user.address, recipient, STABLECOIN_ADDRESS, THIN_TOKEN_ADDRESS, USDC(30), {
      includeProtocolData: true,
    })
    const res = await client.post('/quote/v2', body)
    t.equal(res.status, 200, 'quoted')
    const quote = res.body as Quote
    const { details } = quote
    t.equal(details.operation, 'swap')
    t.equal(details.currencyOut.currency.address.toLowerCase(), THIN_TOKEN_ADDRESS.toLowerCase(), 'pays THIN')
    const destination = details.route?.destination
    t.same(destination?.includedSwapSources, ['uniswap-v3', 'uniswap-v3'], 'USDC → WETH → THIN on 31338')
    t.equal(destination?.router, 'uniswap-v3 > uniswap-v3')
    t.equal(
      destination?.inputCurrency?.currency?.address?.toLowerCase(),
      STABLECOIN_ADDRESS.toLowerCase(),
      'the solver pays its USDC into the swap',
    )
    const minimum = BigInt(details.currencyOut.minimumAmount ?? '0')
    const expected = BigInt(details.currencyOut.amount ?? '0')
    t.ok(minimum > 0n && minimum < expected, `the swap guarantees ${minimum} of an expected ${expected}`)
    t.ok(Number(details.swapImpact?.usd) < 0, `the swap's impact is real: ${details.swapImpact?.usd} USD`)
    t.ok(Number(details.expandedPriceImpact?.swap?.usd) < 0, 'and shows in expandedPriceImpact.swap')
    t.ok(BigInt(details.slippageTolerance?.destination?.value ?? '0') > 0n, 'slippage on the swap leg')

    const requestId = quote.steps.at(-1)?.requestId as Hex
    const before = await evmBalance(clientB, recipient, THIN_TOKEN_ADDRESS)
    await e2e.evm.execute(quote, user.privateKey)
    const done = await e2e.waitForStatus(client, requestId)
    const { receipt, paid } = await fillOf(done, requestId)
    const received = (await evmBalance(clientB, recipient, THIN_TOKEN_ADDRESS)) - before
    t.ok(received >= minimum, `the recipient got ${received} THIN, at least minimumAmount ${minimum}`)
    t.equal(
      received,
      transferredTo(receipt, THIN_TOKEN_ADDRESS, recipient),
      'exactly what the fill logs show',
    )
    t.ok(receipt.logs.length > 0 && receipt.to && isAddressEqual(receipt.to, chainB.contracts.multicaller))
    t.ok(
      receipt.transactionHash &&
        (await clientB.getTransaction({ hash: receipt.transactionHash })).input.endsWith(requestId.slice(2)),
      'the fill is tagged with the request id',
    )
    t.equal(
      paid(recipient, THIN_TOKEN_ADDRESS),
      received,
      'the fill reading (what the oracle attests) reports it',
    )
    t.equal(
      await evmBalance(clientB, UNISWAP_V3_SWAP_ROUTER_ADDRESS, STABLECOIN_ADDRESS),
      0n,
      'nothing is left with the router',
    )
    t.equal(
      (quote.protocol?.v2?.orderData.output.payments[0]?.currency ?? '').toLowerCase(),
      THIN_TOKEN_ADDRESS.toLowerCase(),
      "the order promises THIN, the swap's output",
    )

    // The oracle attests the fill: the order's THIN payment, read from the swap's logs, is paid in full.
    const attest = createTestClient(t, oracle.url, oracleDocument.document)
    const deposit = await attest.post('/attestations/depository-deposits/v1', {
      chainId: 31337,
      transactionId: done.inTxHashes[0],
    })
    t.equal(deposit.status, 200, 'the deposit is attested')
    const onchainId = (deposit.body as Attested).messages[0]?.result.onchainId
    const order = quote.protocol?.v2?.orderData
    const fill = await attest.post('/attestations/solver-fills/v1', {
      // The quote's order as it is: its salt is hex, which the oracle takes as well as decimal.
      order,
      orderSignature: quote.protocol?.v2?.orderSignature,
      inputs: [{ transactionId: done.inTxHashes[0], onchainId, inputIndex: 0 }],
      fill: { transactionId: receipt.transactionHash },
    })
    t.equal(fill.status, 200, `the fill is attested ${fill.status === 200 ? '' : JSON.stringify(fill.body)}`)
    t.same(
      (fill.body as Attested).messages[0]?.result,
      { orderId: requestId, status: 1, totalWeightedInputPaymentBpsDiff: '0' },
      'SUCCESSFUL: the recipient got at least the minimum in THIN',
    )
  },
)

t.test('partner client: exactly 20 THIN on 31338 bought with ETH on 31337 (exact output)', async (t) => {
  const buyer = USERS[2]!
  const receiver = USERS[3]!.address
  const wanted = 20n * 10n ** 18n
  const body = bridge(buyer.address, receiver, NATIVE, THIN_TOKEN_ADDRESS, wanted, {
    tradeType: 'EXACT_OUTPUT',
  })
  t.equal((await e2e.client(t).post('/quote/v2', body)).status, 200, 'the document shape first')
  const pontis = createPontisClient({ baseUrl: service.url })
  const quote = await pontis.getQuote(body)
  t.equal(quote.details.currencyOut.amount, wanted.toString(), 'the amount asked for')
  t.equal(quote.details.currencyOut.minimumAmount, wanted.toString(), 'guaranteed on chain')
  t.same(quote.details.route?.destination?.includedSwapSources, ['uniswap-v3'], 'WETH → THIN, one pool')
  t.equal(quote.details.route?.destination?.inputCurrency?.currency?.address, NATIVE, 'the solver pays ETH')
  const before = await evmBalance(clientB, receiver, THIN_TOKEN_ADDRESS)
  const wallet = createWalletClient({
    account: privateKeyToAccount(buyer.privateKey),
    chain: e2e.evm.chain.chain,
    transport: http(e2e.evm.chain.rpcUrl),
  })
  const result = await pontis.executeQuote(quote, [viemWalletAdapter(wallet)], {
    pollIntervalMs: 200,
    timeoutMs: 120_000,
  })
  t.equal(result.status.status, 'success')
  const requestId = quote.steps.at(-1)?.requestId as Hex
  const { receipt, paid } = await fillOf(result.status, requestId)
  const received = (await evmBalance(clientB, receiver, THIN_TOKEN_ADDRESS)) - before
  t.ok(received >= wanted, `the recipient got ${received} THIN, at least the ${wanted} asked for`)
  t.equal(received, transferredTo(receipt, THIN_TOKEN_ADDRESS, receiver), 'exactly what the fill logs show')
  t.equal(paid(receiver, THIN_TOKEN_ADDRESS), received, 'the fill reading reports it')
})

t.test('USDC on 31337 → ETH on 31338 bought through includedDestinationSwapSources', async (t) => {
  const user = USERS[1]!
  const recipient = privateKeyToAccount(`0x${'5e'.repeat(32)}`).address
  const client = e2e.client(t)
  const plain = await client.post(
    '/quote/v2',
    bridge(user.address, recipient, STABLECOIN_ADDRESS, NATIVE, USDC(50)),
  )
  t.equal(plain.status, 200)
  t.equal(
    (plain.body as Quote).details.route?.destination?.router,
    'pontis-solver',
    'without it, the solver pays ETH out of its own stock',
  )
  const res = await client.post(
    '/quote/v2',
    bridge(user.address, recipient, STABLECOIN_ADDRESS, NATIVE, USDC(50), {
      includedDestinationSwapSources: ['uniswap-v3'],
    }),
  )
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.same(quote.details.route?.destination?.includedSwapSources, ['uniswap-v3'], 'USDC → WETH, one pool')
  const minimum = BigInt(quote.details.currencyOut.minimumAmount ?? '0')
  const requestId = quote.steps.at(-1)?.requestId as Hex
  await e2e.evm.execute(quote, user.privateKey)
  const done = await e2e.waitForStatus(client, requestId)
  const { receipt, paid } = await fillOf(done, requestId)
  const received = await evmBalance(clientB, recipient, NATIVE)
  t.ok(received >= minimum, `a fresh recipient got ${received} wei, at least minimumAmount ${minimum}`)
  t.equal(received, unwrapped(receipt), "exactly what WETH's Withdrawal in the fill shows")
  t.equal(paid(recipient, NATIVE), received, 'the fill reading reports it in the native currency')
})

t.test('source filters and the impact limit hold for the destination leg', async (t) => {
  const user = USERS[0]!
  const client = e2e.client(t)
  const thin = (amount: bigint, extra: Record<string, unknown>) =>
    client.post(
      '/quote/v2',
      bridge(user.address, user.address, STABLECOIN_ADDRESS, THIN_TOKEN_ADDRESS, amount, extra),
    )
  for (const extra of [
    { excludedSwapSources: ['uniswap-v3'] },
    { includedDestinationSwapSources: ['no-such-source'] },
  ]) {
    const res = await thin(USDC(10), extra)
    t.equal(res.status, 400, JSON.stringify(extra))
    t.equal((res.body as { errorCode?: string }).errorCode, 'NO_SWAP_ROUTES_FOUND')
    t.match((res.body as { message?: string }).message, Object.keys(extra)[0] as string, 'naming the member')
  }
  t.equal(
    (await thin(USDC(10), { includedDestinationSwapSources: ['uniswap-v3'] })).status,
    200,
    'named: quoted',
  )
  // About two thirds of the thin pool's WETH: far above the 3 % limit.
  const big = await thin(USDC(2000), {})
  t.equal(big.status, 400)
  t.equal((big.body as { errorCode?: string }).errorCode, 'SWAP_IMPACT_TOO_HIGH')
  const overridden = await thin(USDC(2000), { overridePriceImpact: true })
  t.equal(overridden.status, 200, 'overridePriceImpact lifts it')
  t.ok(Number((overridden.body as Quote).details.swapImpact?.percent) < -3, 'and the impact shows')
  const same = await client.post(
    '/quote/v2',
    bridge(user.address, user.address, STABLECOIN_ADDRESS, STABLECOIN_ADDRESS, USDC(10), {
      includedDestinationSwapSources: ['uniswap-v3'],
    }),
  )
  t.equal(same.status, 400, 'a same-asset bridge has no destination swap')
  t.equal((same.body as { errorCode?: string }).errorCode, 'UNSUPPORTED_ROUTE')
})

t.test('a swap the pool can no longer meet reverts the fill, and the deposit is refunded', async (t) => {
  const user = USERS[3]!
  const client = e2e.client(t)
  const res = await client.post(
    '/quote/v2',
    bridge(user.address, user.address, STABLECOIN_ADDRESS, THIN_TOKEN_ADDRESS, USDC(20), {
      slippageTolerance: '50',
    }),
  )
  t.equal(res.status, 200)
  const quote = res.body as Quote
  const requestId = quote.steps.at(-1)?.requestId as Hex
  // Someone buys most of the thin pool's THIN first: the quoted minimum is now impossible.
  const deployer = createWalletClient({
    account: privateKeyToAccount(DEX_DEPLOYER.privateKey),
    chain: chainB.chain,
    transport: http(chainB.rpcUrl),
  })
  const routerAbi = parseAbi([
    'struct ExactInputParams { bytes path; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; }',
    'function exactInput(ExactInputParams params) payable returns (uint256 amountOut)',
  ])
  const moved = await deployer.writeContract({
    address: UNISWAP_V3_SWAP_ROUTER_ADDRESS,
    abi: routerAbi,
    functionName: 'exactInput',
    args: [
      {
        path: encodePacked(['address', 'uint24', 'address'], [WETH_ADDRESS, 3000, THIN_TOKEN_ADDRESS]),
        recipient: DEX_DEPLOYER.address,
        deadline: 2n ** 32n,
        amountIn: 10n ** 18n,
        amountOutMinimum: 0n,
      },
    ],
    value: 10n ** 18n,
  })
  t.equal((await clientB.waitForTransactionReceipt({ hash: moved })).status, 'success', 'the pool moved')

  const usdcBefore = await e2e.evm.usdcBalance(user.address)
  const thinBefore = await evmBalance(clientB, user.address, THIN_TOKEN_ADDRESS)
  await e2e.evm.execute(quote, user.privateKey)
  const refunded = await waitFor(
    `request ${requestId} to be refunded`,
    async () =>
      (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as IntentsApi.StatusRecordV3,
    { until: (seen) => seen.status === 'refund' || seen.status === 'success' },
  )
  t.equal(refunded.status, 'refund', 'refunded, not filled')
  t.equal(refunded.failReason, 'EXECUTION_REVERTED', 'because the fill reverted')
  t.equal(await e2e.evm.usdcBalance(user.address), usdcBefore, 'the user has every USDC back on 31337')
  t.equal(await evmBalance(clientB, user.address, THIN_TOKEN_ADDRESS), thinBefore, 'and no THIN on 31338')
})
