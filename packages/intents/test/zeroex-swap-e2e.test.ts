/**
 * Same-chain swaps through the aggregator source `zeroex` (the 0x Swap API v2 shape), end to end over
 * HTTP: anvil 31337 with the devnet's Uniswap v3 pools, the devnet's 0x simulator (quotes from those
 * pools, transactions through their SwapRouter), and the intent service with both sources. The request
 * picks the aggregator with `includedSwapSources`; the partner client and the public Relay SDK execute
 * the steps; the recipient must get at least `minimumAmount`, and exactly what the swap transaction's
 * logs paid. With both sources allowed the better output wins and the route names it. A simulator that
 * errs, answers garbage or is down leaves quoting to Uniswap, or answers NO_SWAP_ROUTES_FOUND when only
 * it is allowed. Every answer read through the test client is checked against the document.
 */

import { createPontisClient, viemWalletAdapter } from '@pontis/client'
import type { IntentsApi } from '@pontis/core'
import { STABLECOIN_ADDRESS, UNISWAP_V3_SWAP_ROUTER_ADDRESS, USERS } from '@pontis/devnet'
import { createClient, getClient } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import t, { type Test } from 'tap'
import { type Address, createWalletClient, erc20Abi, type Hash, http, parseEventLogs } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { evmBalance, startE2e } from './fixtures/e2e.js'

t.setTimeout(300_000)

type Quote = IntentsApi.QuoteResponse
const CHAIN = 31337
const NATIVE: Address = '0x0000000000000000000000000000000000000000'
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address

const e2e = await startE2e(
  t,
  { zeroEx: { apiKey: `e2e-${crypto.randomUUID()}` } },
  { otherEvmChains: [31338] },
)
const simulator = e2e.devnet.zeroEx as NonNullable<typeof e2e.devnet.zeroEx>
const { client: chainClient, chain } = e2e.evm

const swapBody = (user: Address, recipient: Address, from: Address, to: Address, amount: string) => ({
  user,
  recipient,
  originChainId: CHAIN,
  destinationChainId: CHAIN,
  originCurrency: from,
  destinationCurrency: to,
  amount,
  tradeType: 'EXACT_INPUT' as const,
})

/** What the swap transaction paid `recipient` in `currency`: Transfer logs, or the router's unwrapped ETH. */
async function paidBySwap(hash: Hash, recipient: Address, currency: Address): Promise<bigint> {
  if (currency === NATIVE) {
    // The recipient is fresh: its whole balance is what the router sent it.
    return chainClient.getBalance({ address: recipient })
  }
  const receipt = await chainClient.getTransactionReceipt({ hash })
  return parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: 'Transfer' })
    .filter(
      (log) =>
        log.address.toLowerCase() === currency.toLowerCase() &&
        log.args.to.toLowerCase() === recipient.toLowerCase(),
    )
    .reduce((sum, log) => sum + log.args.value, 0n)
}

/** ETH → USDC on 31337 by USERS[2] to a fresh recipient. */
const ethToUsdc = (amount: string) =>
  swapBody(USERS[2]?.address as Address, freshAddress(), NATIVE, STABLECOIN_ADDRESS, amount)

/** With the aggregator failing: only it allowed answers NO_SWAP_ROUTES_FOUND, both allowed quote through Uniswap. */
async function expectFallback(t: Test, body: ReturnType<typeof ethToUsdc>, label: string) {
  const api = e2e.client(t)
  const only = await api.post('/quote/v2', { ...body, includedSwapSources: ['zeroex'] })
  t.equal(only.status, 400, `${label}, only zeroex allowed`)
  t.match(only.body, { errorCode: 'NO_SWAP_ROUTES_FOUND', message: /zeroex/ })
  const either = await api.post('/quote/v2', body)
  t.equal(either.status, 200, `${label}, both allowed: quoted`)
  t.equal((either.body as Quote).details.route?.origin?.router, 'uniswap-v3', 'through the other source')
}

const swaps = [
  { name: 'ETH → USDC', from: NATIVE, to: STABLECOIN_ADDRESS, amount: '50000000000000000', steps: ['swap'] },
  {
    name: 'USDC → ETH',
    from: STABLECOIN_ADDRESS,
    to: NATIVE,
    amount: '120000000',
    steps: ['approve', 'swap'],
  },
] as const

for (const [index, swap] of swaps.entries()) {
  t.test(`${swap.name} through zeroex (includedSwapSources), executed by the user`, async (t) => {
    const user = USERS[index] as (typeof USERS)[0]
    const recipient = freshAddress()
    const body = {
      ...swapBody(user.address, recipient, swap.from, swap.to, swap.amount),
      includedSwapSources: ['zeroex'],
    }
    const asked = simulator.requests.length
    const checked = await e2e.client(t).post('/quote/v2', body)
    t.equal(checked.status, 200, 'quoted (the answer matches the document)')
    const quote = checked.body as Quote
    t.match(
      quote.details.route?.origin,
      { router: 'zeroex', includedSwapSources: ['zeroex'] },
      'the route names the source',
    )
    t.same(
      quote.steps.map((step) => step.id),
      swap.steps,
    )
    t.ok(simulator.requests.length > asked, 'the service asked the 0x API')
    t.ok(
      simulator.requests.slice(asked).every((request) => request.apiKeyPresented),
      'with the configured key',
    )
    const swapItem = quote.steps.at(-1)?.items[0]?.data as { to: string }
    t.equal(
      swapItem.to,
      UNISWAP_V3_SWAP_ROUTER_ADDRESS,
      "the API's transaction: the allowance holder (the router)",
    )
    const minimum = BigInt(quote.details.currencyOut.minimumAmount)
    t.ok(minimum > 0n && minimum < BigInt(quote.details.currencyOut.amount), 'slippage sets the minimum')

    const wallet = createWalletClient({
      account: privateKeyToAccount(user.privateKey),
      chain: chain.chain,
      transport: http(chain.rpcUrl),
    })
    const pontis = createPontisClient({ baseUrl: e2e.service.url })
    const result = await pontis.executeQuote(quote, [viemWalletAdapter(wallet)], {
      pollIntervalMs: 200,
      timeoutMs: 120_000,
    })
    t.equal(result.status.status, 'success', 'done once the swap is mined')
    const received = await evmBalance(chainClient, recipient, swap.to)
    t.ok(received >= minimum, `the recipient got ${received}, at least the minimum ${minimum}`)
    t.equal(
      received,
      await paidBySwap(result.txHashes.at(-1) as Hash, recipient, swap.to),
      'what the swap paid',
    )
  })
}

t.test(
  'Relay SDK: ETH → USDC through zeroex (options.includedSwapSources), executed by the user',
  async (t) => {
    // The public SDK, unmodified, pointed at this service as its documentation says.
    createClient({ baseApiUrl: e2e.service.url, source: 'pontis-zeroex-e2e', pollingInterval: 1000 })
    await configureDynamicChains()
    const user = USERS[3] as (typeof USERS)[0]
    const recipient = freshAddress()
    const wallet = createWalletClient({
      account: privateKeyToAccount(user.privateKey),
      chain: chain.chain,
      transport: http(chain.rpcUrl),
    })
    const quote = await getClient().actions.getQuote(
      {
        chainId: CHAIN,
        toChainId: CHAIN,
        currency: NATIVE,
        toCurrency: STABLECOIN_ADDRESS,
        amount: '40000000000000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
        options: { includedSwapSources: ['zeroex'] },
      },
      true,
    )
    t.match(quote.details?.route?.origin, { router: 'zeroex' }, 'the route names the aggregator')
    t.same(
      quote.steps.map((step) => step.id),
      ['swap'],
    )
    const minimum = BigInt(quote.details?.currencyOut?.minimumAmount ?? '0')
    t.ok(minimum > 0n)
    const txHashes: Hash[] = []
    await getClient().actions.execute({
      quote,
      wallet,
      onProgress(progress) {
        for (const { txHash } of progress.txHashes ?? [])
          if (!txHashes.includes(txHash as Hash)) txHashes.push(txHash as Hash)
      },
    })
    const received = await evmBalance(chainClient, recipient, STABLECOIN_ADDRESS)
    t.ok(received >= minimum, `the recipient got ${received}, at least the minimum ${minimum}`)
    t.equal(
      received,
      await paidBySwap(txHashes.at(-1) as Hash, recipient, STABLECOIN_ADDRESS),
      'what the swap paid',
    )
  },
)

t.test('both sources allowed: the better output wins and the route says which', async (t) => {
  const api = e2e.client(t)
  const body = ethToUsdc('30000000000000000')
  // /price: the same pricing without steps, so nothing between the three answers changes the pools.
  const [both, zeroex, uniswap] = await Promise.all([
    api.post('/price', body),
    api.post('/price', { ...body, includedSwapSources: ['zeroex'] }),
    api.post('/price', { ...body, excludedSwapSources: ['zeroex'] }),
  ])
  for (const answer of [both, zeroex, uniswap]) t.equal(answer.status, 200)
  const minimumOf = (answer: typeof both) => BigInt((answer.body as Quote).details.currencyOut.minimumAmount)
  const routerOf = (answer: typeof both) => (answer.body as Quote).details.route?.origin?.router
  t.equal(routerOf(zeroex), 'zeroex')
  t.equal(routerOf(uniswap), 'uniswap-v3')
  // On the devnet both price through the same pools, so they tie and the first listed (uniswap-v3) keeps it.
  const best = minimumOf(zeroex) > minimumOf(uniswap) ? zeroex : uniswap
  t.equal(minimumOf(both), minimumOf(best), 'the unfiltered quote has the better minimum')
  t.equal(routerOf(both), routerOf(best), `and names its source (${routerOf(best)})`)
})

t.test('an aggregator that errs or answers garbage does not break quoting', async (t) => {
  t.teardown(() => simulator.setFault('none'))
  const body = ethToUsdc('20000000000000000')
  for (const fault of ['error', 'garbage'] as const) {
    simulator.setFault(fault)
    await expectFallback(t, body, fault)
  }
  simulator.setFault('none')
  const back = await e2e.client(t).post('/quote/v2', { ...body, includedSwapSources: ['zeroex'] })
  t.equal(back.status, 200, 'quoted through zeroex again once it behaves')
})

t.test('an origin swap never goes through the aggregator', async (t) => {
  // THIN is not a depository currency: a bridge of it to 31338 swaps inside the deposit, which only
  // the Uniswap router can do. Asking for zeroex alone leaves no route, and the API is not asked.
  const api = e2e.client(t)
  const body = {
    user: USERS[2]?.address,
    recipient: freshAddress(),
    originChainId: CHAIN,
    destinationChainId: 31338,
    originCurrency: e2e.devnet.chains[0]?.dex.thinToken,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '1000000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  const asked = simulator.requests.length
  const only = await api.post('/price', { ...body, includedSwapSources: ['zeroex'] })
  t.equal(only.status, 400)
  t.match(only.body, { errorCode: 'NO_SWAP_ROUTES_FOUND' })
  const either = await api.post('/price', body)
  t.equal(either.status, 200, 'both allowed: priced')
  t.same((either.body as Quote).details.route?.origin?.includedSwapSources, ['uniswap-v3', 'uniswap-v3'])
  t.equal(simulator.requests.length, asked, 'the 0x API was not asked for an origin swap')
})

t.test('an aggregator that is down does not break quoting', async (t) => {
  await simulator.stop()
  await expectFallback(t, ethToUsdc('25000000000000000'), 'down')
})
