/**
 * The `zeroex` swap source (0x Swap API v2 shape) against the devnet's 0x simulator on a real anvil:
 * the simulator validates what it is sent and answers in the API's shapes; the source's quotes match
 * what the devnet's Uniswap pools give, its swap transactions run on anvil and pay the recipient at
 * least the quoted minimum; a simulator that errs, answers garbage, is unreachable or lies about the
 * transaction yields "no route" (never a broken quote), and the API key is sent but never logged.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type ChainEntry,
  createRegistry,
  isPontisError,
  type Logger,
  type QuotingCapability,
  type SwapQuoteRequest,
  type SwapSource,
} from '@pontis/core'
import {
  type DevAccount,
  type DevnetChain,
  STABLECOIN_ADDRESS,
  startDevnet,
  UNISWAP_V3_SWAP_ROUTER_ADDRESS,
  USERS,
  ZEROEX_NATIVE_TOKEN,
  ZEROEX_QUOTE_PATH,
} from '@pontis/devnet'
import t from 'tap'
import { type Address, createPublicClient, createWalletClient, erc20Abi, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import evmPlugin, { EVM_NATIVE_CURRENCY_ID } from '../src/index.js'

t.setTimeout(240_000)

const NATIVE = EVM_NATIVE_CURRENCY_ID as Address
const API_KEY = `zx-test-${crypto.randomUUID()}`

const devnet = await startDevnet({ chains: [{ chainId: 31337, port: 0 }], zeroEx: { apiKey: API_KEY } })
t.teardown(() => devnet.stop())
const chain = devnet.chains[0] as DevnetChain
const simulator = devnet.zeroEx as NonNullable<typeof devnet.zeroEx>
const [alice] = USERS as [DevAccount]
const publicClient = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })

/** Every log line the plugin writes, to show the key never appears in one. */
const logged: string[] = []
const capture = (level: string) => (message: string, fields?: Record<string, unknown>) =>
  logged.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`)
const logger: Logger = {
  debug: capture('debug'),
  info: capture('info'),
  warn: capture('warn'),
  error: capture('error'),
}

/** `server` listening on a free loopback port. */
async function listening(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** Chain 31337 of configs/chains.local.json (defaults resolved), pointed at this devnet. */
function entryFor(plugin: Record<string, unknown>, contracts: Record<string, unknown> = {}): ChainEntry {
  const config = readFileSync(new URL('../../../configs/chains.local.json', import.meta.url), 'utf8')
  const resolved = config.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')
  const entries = (JSON.parse(resolved) as { chains: Array<Record<string, unknown>> }).chains
  const entry = entries.find((candidate) => candidate.id === 31337) as Record<string, unknown>
  return {
    ...entry,
    httpRpcUrl: chain.rpcUrl,
    rpc: { url: chain.rpcUrl },
    plugin: { ...(entry.plugin as object), readCacheSeconds: 0, ...plugin },
    contracts: { ...(entry.contracts as object), ...contracts },
  } as unknown as ChainEntry
}

async function sourcesFor(zeroEx: Record<string, unknown>, plugin: Record<string, unknown> = {}) {
  const registry = createRegistry({ logger })
  registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  t.teardown(() => registry.close())
  const [added] = await registry.addChains([entryFor({ zeroEx, ...plugin })])
  const quoting = added?.adapter.quoting as QuotingCapability
  const byName = (name: string) => quoting.swapSources?.find((source) => source.name === name) as SwapSource
  return { quoting, zeroex: byName('zeroex'), uniswap: byName('uniswap-v3') }
}

const { quoting, zeroex, uniswap } = await sourcesFor({ apiUrl: simulator.url, apiKey: API_KEY })

const request = (overrides: Partial<SwapQuoteRequest> = {}): SwapQuoteRequest => ({
  user: alice.address,
  fromCurrency: NATIVE,
  toCurrency: STABLECOIN_ADDRESS,
  tradeType: 'EXACT_INPUT',
  amount: 10n ** 17n,
  slippageBps: 50,
  filter: {},
  options: {},
  ...overrides,
})

/** A raw request to the simulator, as any 0x API client would send it. */
async function ask(query: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${simulator.url}${ZEROEX_QUOTE_PATH}?${new URLSearchParams(query)}`, {
    headers: { '0x-version': 'v2', '0x-api-key': API_KEY, ...headers },
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const validQuery = {
  chainId: '31337',
  sellToken: ZEROEX_NATIVE_TOKEN,
  buyToken: STABLECOIN_ADDRESS,
  sellAmount: String(10n ** 17n),
  taker: alice.address,
  slippageBps: '50',
}

/** The fields a 400 answer's `data.details` names. */
const fieldsOf = (body: Record<string, unknown>) =>
  ((body.data as { details?: Array<{ field: string }> }).details ?? []).map((detail) => detail.field).sort()

t.test('the simulator validates what it is sent, in the API error shape', async (t) => {
  const missing = await ask({ chainId: '31337' })
  t.equal(missing.status, 400)
  t.equal(missing.body.name, 'INPUT_INVALID')
  t.same(
    fieldsOf(missing.body),
    ['buyToken', 'sellAmount', 'sellToken', 'taker'],
    'every missing parameter named',
  )
  t.match(missing.body.data, { zid: /^0x[0-9a-f]{24}$/ })

  const wrongChain = await ask({ ...validQuery, chainId: '1' })
  t.equal(wrongChain.status, 400)
  t.same(fieldsOf(wrongChain.body), ['chainId'], 'a chain it does not serve')

  const badValues = await ask({ ...validQuery, taker: '0x1234', sellAmount: '-5', slippageBps: '20000' })
  t.equal(badValues.status, 400)
  t.same(fieldsOf(badValues.body), ['sellAmount', 'slippageBps', 'taker'])

  const buyAmount = await ask({ ...validQuery, buyAmount: '1000000' })
  t.same(fieldsOf(buyAmount.body), ['buyAmount'], 'exact output is refused as unsupported')

  const noVersion = await ask(validQuery, { '0x-version': 'v1' })
  t.same(fieldsOf(noVersion.body), ['0x-version'], 'the v2 header is required')

  const unknownToken = await ask({
    ...validQuery,
    buyToken: privateKeyToAccount(generatePrivateKey()).address,
  })
  t.equal(unknownToken.status, 400)
  t.equal(unknownToken.body.name, 'TOKEN_NOT_SUPPORTED', 'an address with no code on the chain')

  const keyless = await fetch(`${simulator.url}${ZEROEX_QUOTE_PATH}?${new URLSearchParams(validQuery)}`, {
    headers: { '0x-version': 'v2' },
  })
  t.equal(keyless.status, 401, 'the configured API key is required')

  // A contract with code but no pool (the depository): 200 without liquidity, as the API answers.
  const noPool = await ask({ ...validQuery, buyToken: chain.contracts.depository })
  t.equal(noPool.status, 200)
  t.same(noPool.body.liquidityAvailable, false)

  const ok = await ask(validQuery)
  t.equal(ok.status, 200)
  t.match(ok.body, {
    liquidityAvailable: true,
    sellToken: ZEROEX_NATIVE_TOKEN,
    buyToken: STABLECOIN_ADDRESS,
    sellAmount: validQuery.sellAmount,
    buyAmount: /^[1-9][0-9]*$/,
    minBuyAmount: /^[1-9][0-9]*$/,
    allowanceTarget: null,
    route: {
      fills: [
        { from: ZEROEX_NATIVE_TOKEN, to: STABLECOIN_ADDRESS, source: 'Uniswap_V3', proportionBps: '10000' },
      ],
    },
    transaction: { to: UNISWAP_V3_SWAP_ROUTER_ADDRESS, value: validQuery.sellAmount },
    issues: { allowance: null, balance: null },
  })
  const buy = BigInt(ok.body.buyAmount as string)
  t.equal(
    BigInt(ok.body.minBuyAmount as string),
    (buy * 9950n) / 10_000n,
    'minBuyAmount is buyAmount less 50 bps',
  )

  const tokenSell = await ask({
    ...validQuery,
    sellToken: STABLECOIN_ADDRESS,
    buyToken: ZEROEX_NATIVE_TOKEN,
    sellAmount: '50000000',
    taker: privateKeyToAccount(generatePrivateKey()).address,
  })
  t.match(tokenSell.body, {
    allowanceTarget: UNISWAP_V3_SWAP_ROUTER_ADDRESS,
    issues: {
      allowance: { actual: '0', spender: UNISWAP_V3_SWAP_ROUTER_ADDRESS },
      balance: { token: STABLECOIN_ADDRESS, actual: '0', expected: '50000000' },
      simulationIncomplete: true,
    },
    transaction: { value: '0' },
  })
})

t.test(
  'quotes: the same output as the pools give, the minimum from the asked slippage, sources named',
  async (t) => {
    t.equal(zeroex.usableInDeposits, false, 'not offered for origin swaps inside a deposit')
    t.equal(quoting.swapSources?.length, 2, 'both sources on the chain')
    const [viaZeroEx, viaUniswap] = await Promise.all([zeroex.quote(request()), uniswap.quote(request())])
    t.equal(viaZeroEx.source, 'zeroex')
    t.same(viaZeroEx.sources, ['zeroex'])
    t.equal(viaZeroEx.amountOut, viaUniswap.amountOut, 'the simulator prices through the same pools')
    t.equal(viaZeroEx.minimumAmountOut, (viaZeroEx.amountOut * 9950n) / 10_000n)
    t.equal(viaZeroEx.toDecimals, 6)
    t.ok(viaZeroEx.priceImpactBps >= 5, "impact against the pools' mid price includes the 0.05 % fee")
    t.equal(
      viaZeroEx.priceImpactBps,
      viaUniswap.priceImpactBps,
      'the same impact as the same trade through Uniswap',
    )
    const last = simulator.requests.at(-1)
    t.equal(last?.apiKeyPresented, true, 'the key went in its header')
    t.match(last?.query, {
      chainId: '31337',
      sellToken: ZEROEX_NATIVE_TOKEN,
      taker: alice.address,
      slippageBps: '50',
    })

    const oneHop = await zeroex.quote(request({ toCurrency: chain.dex.thinToken, amount: 10n ** 15n }))
    t.equal(oneHop.hops, 1, 'ETH → THIN is one pool')
    const thinToUsdc = zeroex.quote(
      request({ fromCurrency: chain.dex.thinToken, toCurrency: STABLECOIN_ADDRESS, amount: 10n ** 18n }),
    )
    t.same((await thinToUsdc).sources, ['zeroex', 'zeroex'], 'THIN → WETH → USDC: one label per fill')

    for (const [name, refused] of [
      ['exact output', request({ tradeType: 'EXACT_OUTPUT', amount: 1_000_000n })],
      ['excluded by the filter', request({ filter: { excluded: ['ZeroEx'] } })],
      ['another source only', request({ filter: { included: ['uniswap-v3'] } })],
      ['a pair with no pool', request({ toCurrency: chain.contracts.depository })],
    ] as const) {
      await t.rejects(zeroex.quote(refused), { code: 'NO_SWAP_ROUTES_FOUND' }, name)
    }
  },
)

async function send(
  account: DevAccount,
  steps: Awaited<ReturnType<NonNullable<SwapSource['buildSwapSteps']>>>,
) {
  const wallet = createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: chain.chain,
    transport: http(chain.rpcUrl),
  })
  let receipt: Awaited<ReturnType<typeof publicClient.waitForTransactionReceipt>> | undefined
  for (const step of steps) {
    const item = step.items[0]?.data as { to: Address; data: `0x${string}`; value: string; gas: string }
    const hash = await wallet.sendTransaction({
      to: item.to,
      data: item.data,
      value: BigInt(item.value),
      gas: BigInt(item.gas),
    })
    receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new Error(`step ${step.id} reverted`)
  }
  return receipt
}

const usdcOf = (owner: Address) =>
  publicClient.readContract({
    address: STABLECOIN_ADDRESS,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  })

t.test(
  'swaps run on anvil through the devnet pools and pay the recipient at least the minimum',
  async (t) => {
    const recipient = privateKeyToAccount(generatePrivateKey()).address
    const quote = await zeroex.quote(request())
    const deadline = Math.floor(Date.now() / 1000) + 600
    const stepsRequest = {
      quote,
      user: alice.address,
      recipient,
      requestId: `0x${'11'.repeat(32)}`,
      deadline,
    }
    const cost = await zeroex.estimateSwapCost?.(stepsRequest)
    t.ok((cost?.units ?? 0n) > 21_000n, 'a swap costs gas')
    const steps = (await zeroex.buildSwapSteps?.(stepsRequest)) ?? []
    t.same(
      steps.map((step) => step.id),
      ['swap'],
      'native input needs no approval',
    )
    t.match(simulator.requests.at(-1)?.query, { recipient }, 'asked again with the recipient')
    t.equal((steps[0]?.items[0]?.data as { to?: string } | undefined)?.to, UNISWAP_V3_SWAP_ROUTER_ADDRESS)
    await send(alice, steps)
    const received = await usdcOf(recipient)
    t.ok(received >= quote.minimumAmountOut, `recipient got ${received} >= minimum ${quote.minimumAmountOut}`)
    t.equal(received, quote.amountOut, 'exactly the quoted output: the pools did not move in between')

    // USDC → ETH: approve the allowance target (the router), then swap; native output is unwrapped.
    const ethRecipient = privateKeyToAccount(generatePrivateKey()).address
    const back = await zeroex.quote(
      request({ fromCurrency: STABLECOIN_ADDRESS, toCurrency: NATIVE, amount: 120_000_000n }),
    )
    const backSteps =
      (await zeroex.buildSwapSteps?.({
        quote: back,
        user: alice.address,
        recipient: ethRecipient,
        requestId: `0x${'22'.repeat(32)}`,
        deadline,
      })) ?? []
    t.same(
      backSteps.map((step) => step.id),
      ['approve', 'swap'],
    )
    const approve = backSteps[0]?.items[0]?.data as { to: string; data: string }
    t.equal(approve.to, STABLECOIN_ADDRESS)
    t.ok(
      approve.data.toLowerCase().includes(UNISWAP_V3_SWAP_ROUTER_ADDRESS.slice(2).toLowerCase()),
      'approves the router',
    )
    await send(alice, backSteps)
    const eth = await publicClient.getBalance({ address: ethRecipient })
    t.ok(eth >= back.minimumAmountOut, `recipient got ${eth} wei >= minimum ${back.minimumAmountOut}`)
    t.equal(eth, back.amountOut, 'exactly the quoted output, unwrapped')
  },
)

t.test('a simulator that errs or answers garbage yields no route; the key is never logged', async (t) => {
  t.teardown(() => simulator.setFault('none'))
  for (const fault of ['error', 'garbage'] as const) {
    simulator.setFault(fault)
    const failure = await zeroex.quote(request()).catch((error: unknown) => error)
    t.ok(isPontisError(failure) && failure.code === 'NO_SWAP_ROUTES_FOUND', `${fault}: NO_SWAP_ROUTES_FOUND`)
    t.notOk(String((failure as Error).message).includes(API_KEY), `${fault}: the message has no key`)
  }
  simulator.setFault('none')
  t.ok((await zeroex.quote(request())).amountOut > 0n, 'quotes again once it behaves')
  t.ok(
    logged.some((line) => line.startsWith('warn the 0x API gave no usable quote')),
    'the failures were logged',
  )
  t.notOk(
    logged.some((line) => line.includes(API_KEY)),
    'no log line carries the key',
  )
})

t.test('an unreachable API, and a lying one, yield no route', async (t) => {
  // A port that was just closed: nothing listens there.
  const closed = await listening(createServer())
  await closed.close()
  const down = await sourcesFor({ apiUrl: `http://127.0.0.1:${closed.port}`, timeoutMs: 1000 })
  await t.rejects(down.zeroex.quote(request()), { code: 'NO_SWAP_ROUTES_FOUND' }, 'unreachable')
  t.ok((await down.uniswap.quote(request())).amountOut > 0n, 'the other source still quotes')

  // A real HTTP server that forwards to the simulator and changes one thing in its answer.
  const tamper = { field: 'to' as 'to' | 'minBuyAmount' }
  const lying = await listening(
    createServer(async (incoming, response) => {
      const upstream = await fetch(`${simulator.url}${incoming.url}`, {
        headers: { '0x-version': 'v2', '0x-api-key': API_KEY },
      })
      const body = (await upstream.json()) as { transaction: { to: string }; minBuyAmount: string }
      if (tamper.field === 'to') body.transaction.to = privateKeyToAccount(generatePrivateKey()).address
      else body.minBuyAmount = '1'
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(body))
    }),
  )
  t.teardown(() => lying.close())
  const liar = await sourcesFor({ apiUrl: `http://127.0.0.1:${lying.port}`, apiKey: API_KEY })
  await t.rejects(
    liar.zeroex.quote(request()),
    { code: 'NO_SWAP_ROUTES_FOUND' },
    'a transaction to another contract',
  )
  tamper.field = 'minBuyAmount'
  await t.rejects(
    liar.zeroex.quote(request()),
    { code: 'NO_SWAP_ROUTES_FOUND' },
    'a minimum below the asked slippage',
  )
})

t.test('answers are reused for the read-cache period; failures are not', async (t) => {
  const cached = await sourcesFor({ apiUrl: simulator.url, apiKey: API_KEY }, { readCacheSeconds: 30 })
  const ask = request({ amount: 7n * 10n ** 16n })
  simulator.setFault('error')
  await t.rejects(cached.zeroex.quote(ask), { code: 'NO_SWAP_ROUTES_FOUND' }, 'a failure')
  simulator.setFault('none')
  const before = simulator.requests.length
  const [first, second] = [await cached.zeroex.quote(ask), await cached.zeroex.quote(ask)]
  t.equal(simulator.requests.length, before + 1, 'asked once after the failure, then served from the cache')
  t.equal(second.amountOut, first.amountOut)
})

t.test('configuration: an API URL without the allowance holder contract stops the chain', async (t) => {
  const registry = createRegistry({ logger })
  registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  t.teardown(() => registry.close())
  const entry = entryFor({ zeroEx: { apiUrl: simulator.url } })
  const { zeroExAllowanceHolder: _dropped, ...contracts } = entry.contracts as Record<string, unknown>
  const failure = await registry
    .addChains([{ ...entry, contracts } as ChainEntry])
    .catch((error: unknown) => error)
  t.match(String(failure), /contracts\.zeroExAllowanceHolder/)
  const off = await sourcesFor({ apiUrl: '' })
  t.same(
    off.quoting.swapSources?.map((source) => source.name),
    ['uniswap-v3'],
    'an empty apiUrl: the source is off',
  )
})
