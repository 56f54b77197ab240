/**
 * Same-chain swaps the user executes, on the stack `npm start` serves: the devnet's real Uniswap v3
 * deployment (QuoterV2 prices, SwapRouter swaps), driven by the partner client (`packages/client`)
 * and by the public Relay SDK 7.0.3, unmodified. Each swap must reach a fresh recipient with at least
 * the quote's `minimumAmount`, and exactly what the swap transaction's own logs say it paid. Then
 * the refusals: a thin-pool trade above the impact limit (SWAP_IMPACT_TOO_HIGH, lifted by
 * `overridePriceImpact`) and source filters that leave no source (NO_SWAP_ROUTES_FOUND). Every
 * answer of the service read here is checked against the document.
 */
import { createPontisClient, type QuoteResponse, viemWalletAdapter } from '@pontis/client'
import { THIN_TOKEN_ADDRESS, USERS, WETH_ADDRESS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import { INTENTS_DOCUMENT_PATH } from '@pontis/intents'
import t from 'tap'
import { type Address, erc20Abi, type Hash, parseAbi, parseEventLogs } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_NATIVE, EVM_USDC, relay, type SdkStack, startSdkStack } from './fixtures/sdk-stack.js'

t.setTimeout(300_000)

const CHAIN = 31337
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address
const eventsAbi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Withdrawal(address indexed src, uint256 wad)',
])

// Many quotes from one loopback client: keyless rate limits are not what this file tests.
process.env.RATE_LIMITS = 'off'
const sdk = await startSdkStack(t)
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)

/** What the swap transaction paid `recipient`: its token Transfer logs, or the WETH it unwrapped for native output. */
async function paidBySwap(stack: SdkStack, txHash: Hash, recipient: Address, currency: Address) {
  const receipt = await stack.publicClient(CHAIN).getTransactionReceipt({ hash: txHash })
  const logs = parseEventLogs({ abi: eventsAbi, logs: receipt.logs })
  if (currency === EVM_NATIVE) {
    // The router unwraps exactly what the swap bought and sends all of it on to the recipient.
    return logs
      .filter(
        (log) => log.eventName === 'Withdrawal' && log.address.toLowerCase() === WETH_ADDRESS.toLowerCase(),
      )
      .reduce((sum, log) => sum + (log.args as { wad: bigint }).wad, 0n)
  }
  return logs
    .filter(
      (log) =>
        log.eventName === 'Transfer' &&
        log.address.toLowerCase() === currency.toLowerCase() &&
        (log.args as { to: Address }).to.toLowerCase() === recipient.toLowerCase(),
    )
    .reduce((sum, log) => sum + (log.args as { value: bigint }).value, 0n)
}

const balanceOf = (owner: Address, currency: Address) =>
  currency === EVM_NATIVE
    ? sdk.nativeBalance(CHAIN, owner)
    : sdk
        .publicClient(CHAIN)
        .readContract({ address: currency, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })

/** The quote's promises, read as the document shapes them. */
function promised(quote: Pick<QuoteResponse, 'details'>) {
  return {
    amount: BigInt(quote.details.currencyOut.amount),
    minimum: BigInt(quote.details.currencyOut.minimumAmount),
  }
}

const swaps = [
  { name: 'ETH → USDC', from: EVM_NATIVE, to: EVM_USDC, amount: '50000000000000000', steps: ['swap'] },
  { name: 'USDC → ETH', from: EVM_USDC, to: EVM_NATIVE, amount: '120000000', steps: ['approve', 'swap'] },
] as const
const exactOutput = {
  name: 'ETH → exactly 75 USDC',
  from: EVM_NATIVE,
  to: EVM_USDC,
  amount: '75000000',
  steps: ['swap'],
  tradeType: 'EXACT_OUTPUT',
} as const

for (const [index, swap] of [...swaps, exactOutput].entries()) {
  t.test(`partner client: ${swap.name} on ${CHAIN}, executed by the user`, async (t) => {
    const user = USERS[index] as (typeof USERS)[0]
    const recipient = freshAddress()
    const body = {
      user: user.address,
      recipient,
      originChainId: CHAIN,
      destinationChainId: CHAIN,
      originCurrency: swap.from,
      destinationCurrency: swap.to,
      amount: swap.amount,
      tradeType: 'tradeType' in swap ? swap.tradeType : 'EXACT_INPUT',
      // Exactly the amount: without it the swap surplus is swept to the recipient (same-chain-swap-status).
      ...('tradeType' in swap ? { enableTrueExactOutput: true } : {}),
    } as const
    // The document's shape first (the conformance checker fails the test on any mismatch).
    const checked = await createTestClient(t, sdk.baseApiUrl, loaded.document).post('/quote/v2', body)
    t.equal(checked.status, 200)
    const pontis = createPontisClient({ baseUrl: sdk.baseApiUrl })
    const quote = await pontis.getQuote(body)
    t.same(
      quote.steps.map((step) => step.id),
      swap.steps,
      'the user approves an ERC-20 input, then swaps',
    )
    t.equal(quote.details.operation, 'swap')
    t.match(quote.details.route?.origin, { includedSwapSources: ['uniswap-v3'], router: 'uniswap-v3' })
    t.ok(Number(quote.details.swapImpact?.percent) < 0, 'the deep pool still costs its fee')
    t.ok(Number(quote.details.swapImpact?.percent) > -1, 'but less than 1 %')
    t.ok(BigInt(quote.fees.gas.amount) > 0n, 'the user pays the swap gas')
    const { amount, minimum } = promised(quote)
    if (body.tradeType === 'EXACT_OUTPUT') {
      t.equal(minimum, BigInt(swap.amount), 'exact output: the minimum is the amount asked for')
    } else t.ok(minimum > 0n && minimum < amount, 'slippage sets the minimum below the expected output')

    const result = await pontis.executeQuote(quote, [viemWalletAdapter(sdk.walletClient(user, CHAIN))], {
      pollIntervalMs: 200,
      timeoutMs: 120_000,
    })
    t.equal(result.status.status, 'success', 'done once the swap is mined')
    const swapHash = result.txHashes.at(-1) as Hash
    const received = await balanceOf(recipient, swap.to)
    t.ok(received >= minimum, `the recipient got ${received}, at least the minimum ${minimum}`)
    t.equal(received, await paidBySwap(sdk, swapHash, recipient, swap.to), 'exactly what the swap paid')
    if (body.tradeType === 'EXACT_OUTPUT')
      t.equal(received, BigInt(swap.amount), 'exactly the amount asked for')
  })
}

for (const [index, swap] of swaps.entries()) {
  t.test(`Relay SDK: ${swap.name} on ${CHAIN}, executed by the user`, async (t) => {
    const user = USERS[index + 2] as (typeof USERS)[0]
    const recipient = freshAddress()
    const wallet = sdk.walletClient(user, CHAIN)
    const quote = await relay().actions.getQuote(
      {
        chainId: CHAIN,
        toChainId: CHAIN,
        currency: swap.from,
        toCurrency: swap.to,
        amount: swap.amount,
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    t.same(
      quote.steps.map((step) => step.id),
      swap.steps,
    )
    const minimum = BigInt(quote.details?.currencyOut?.minimumAmount ?? '0')
    t.ok(minimum > 0n)
    const txHashes: Hash[] = []
    const { data } = await relay().actions.execute({
      quote,
      wallet,
      onProgress(progress) {
        for (const { txHash } of progress.txHashes ?? [])
          if (!txHashes.includes(txHash as Hash)) txHashes.push(txHash as Hash)
      },
    })
    t.same(
      data.steps.flatMap((step) => (step.items ?? []).map((item) => item.status)),
      swap.steps.map(() => 'complete'),
      'every step item is complete',
    )
    const received = await balanceOf(recipient, swap.to)
    t.ok(received >= minimum, `the recipient got ${received}, at least the minimum ${minimum}`)
    t.equal(
      received,
      await paidBySwap(sdk, txHashes.at(-1) as Hash, recipient, swap.to),
      'exactly what the swap paid',
    )
  })
}

t.test('two hops through WETH: exactly 5 THIN bought with USDC (reversed path, exactOutput)', async (t) => {
  const user = USERS[3] as (typeof USERS)[0]
  const recipient = freshAddress()
  const pontis = createPontisClient({ baseUrl: sdk.baseApiUrl })
  const body = {
    user: user.address,
    recipient,
    originChainId: CHAIN,
    destinationChainId: CHAIN,
    originCurrency: EVM_USDC,
    destinationCurrency: THIN_TOKEN_ADDRESS,
    amount: '5000000000000000000',
    tradeType: 'EXACT_OUTPUT',
    enableTrueExactOutput: true,
  } as const
  t.equal((await createTestClient(t, sdk.baseApiUrl, loaded.document).post('/quote/v2', body)).status, 200)
  const quote = await pontis.getQuote(body)
  t.same(quote.details.route?.origin?.includedSwapSources, ['uniswap-v3', 'uniswap-v3'], 'USDC → WETH → THIN')
  t.equal(quote.details.currencyOut.currency.address.toLowerCase(), THIN_TOKEN_ADDRESS.toLowerCase())
  t.ok(Number(quote.details.currencyOut.amountUsd) > 0, 'THIN, which has no feed, is valued through the swap')
  const maxIn = BigInt(quote.details.currencyIn.amount)
  const usdcBefore = await balanceOf(user.address, EVM_USDC)
  const result = await pontis.executeQuote(quote, [viemWalletAdapter(sdk.walletClient(user, CHAIN))], {
    pollIntervalMs: 200,
    timeoutMs: 120_000,
  })
  t.equal(result.status.status, 'success')
  const received = await balanceOf(recipient, THIN_TOKEN_ADDRESS)
  t.equal(received, 5n * 10n ** 18n, 'exactly the amount asked for')
  t.equal(received, await paidBySwap(sdk, result.txHashes.at(-1) as Hash, recipient, THIN_TOKEN_ADDRESS))
  const spent = usdcBefore - (await balanceOf(user.address, EVM_USDC))
  t.ok(spent > 0n && spent <= maxIn, `the user paid ${spent}, no more than the quoted ${maxIn}`)
})

t.test('a thin-pool swap above the impact limit is refused unless the request overrides it', async (t) => {
  const api = createTestClient(t, sdk.baseApiUrl, loaded.document)
  const body = {
    user: USERS[0]?.address,
    originChainId: CHAIN,
    destinationChainId: CHAIN,
    originCurrency: EVM_NATIVE,
    destinationCurrency: THIN_TOKEN_ADDRESS,
    amount: '200000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  const refused = await api.post('/quote/v2', body)
  t.equal(refused.status, 400)
  t.match(refused.body, { errorCode: 'SWAP_IMPACT_TOO_HIGH', message: /overridePriceImpact/ })
  const small = await api.post('/quote/v2', { ...body, amount: '1000000000000000' })
  t.equal(small.status, 200, 'a small trade through the same pool passes')
  const taken = await api.post('/quote/v2', { ...body, overridePriceImpact: true })
  t.equal(taken.status, 200, 'overridePriceImpact accepts it')
  const details = (taken.body as QuoteResponse).details
  t.ok(Number(details.swapImpact?.percent) <= -3, `the impact is reported (${details.swapImpact?.percent} %)`)
  t.equal(details.expandedPriceImpact?.swap?.usd, details.swapImpact?.usd)
  t.ok(Number(details.swapImpact?.usd) < 0)
})

t.test('source filters that leave no source answer NO_SWAP_ROUTES_FOUND', async (t) => {
  const api = createTestClient(t, sdk.baseApiUrl, loaded.document)
  const body = {
    user: USERS[0]?.address,
    originChainId: CHAIN,
    destinationChainId: CHAIN,
    originCurrency: EVM_NATIVE,
    destinationCurrency: EVM_USDC,
    amount: '10000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  for (const filter of [
    { excludedSwapSources: ['uniswap-v3'] },
    { includedSwapSources: ['curve'] },
    { includedOriginSwapSources: ['curve'], includedSwapSources: ['uniswap-v3'] },
  ]) {
    const answer = await api.post('/quote/v2', { ...body, ...filter })
    t.equal(answer.status, 400, JSON.stringify(filter))
    t.match(answer.body, { errorCode: 'NO_SWAP_ROUTES_FOUND', message: /uniswap-v3/ })
  }
  const named = await api.post('/quote/v2', { ...body, includedSwapSources: ['Uniswap-V3'] })
  t.equal(named.status, 200, 'names compare without regard to case')
  const price = await api.post('/price', body)
  t.equal(price.status, 200, '/price prices the same swap, without steps')
  t.equal(
    (price.body as QuoteResponse).details.currencyOut.minimumAmount,
    (named.body as QuoteResponse).details.currencyOut.minimumAmount,
  )
  // What a swap without deposit or solver cannot honour is refused, never ignored.
  for (const [member, code] of [
    [{ usePermit: true }, 'UNSUPPORTED_EXECUTION_TYPE'],
    [{ appFees: [{ recipient: USERS[1]?.address, fee: '25' }] }, 'UNSUPPORTED_EXECUTION_TYPE'],
    [{ maxRouteLength: 2 }, 'UNSUPPORTED_ROUTE'],
  ] as const) {
    const refused = await api.post('/quote/v2', { ...body, ...member })
    t.match(refused.body, { errorCode: code, message: /remove it/ }, JSON.stringify(member))
  }
  const solver = await api.post('/quote/v2', { ...body, forceSolverExecution: true })
  t.equal(solver.status, 200, 'forceSolverExecution still has the solver fill it')
  t.same(
    (solver.body as QuoteResponse).steps.map((step) => step.id),
    ['deposit'],
  )
})
