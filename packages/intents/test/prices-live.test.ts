/**
 * Live prices: the devnet's Chainlink-interface feeds read through the EVM plugin (real anvil), the
 * Hermes-shaped HTTP API (the devnet's SIMULATOR of Pyth Hermes), a Uniswap v3 pool's spot, the
 * composite's freshness and agreement rules, the cache, and the 503 PRICE_FETCH_FAILED a quote gets
 * over HTTP when no fresh agreeing price is left.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, type CurrencyEntry, loadRegistry, silentLogger } from '@pontis/core'
import {
  DEVNET_FEEDS,
  devnetEnvironment,
  mockV3AggregatorAbi,
  STABLECOIN_ADDRESS,
  startDevnet,
  startHermesSimulator,
  USERS,
  WETH_ADDRESS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { REPO_CONFIG_DIR } from '../../../test/helpers/environments.js'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import {
  CompositePrice,
  feedReader,
  LivePriceSource,
  loadPriceSource,
  type PriceSourceReader,
  poolReader,
  pythReader,
  staticReader,
} from '../src/quote/prices.js'

const ETH_FEED_ID = `0x${'ff61491a931112ddf1bd8147cd1b641375f79f5825126d665480874634fd0ace'}`
const USD = (whole: bigint) => whole * 10n ** 18n
const eth: CurrencyEntry = { id: 'eth', symbol: 'ETH', name: 'Ether', address: '0x0', decimals: 18 }

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
const hermes = await startHermesSimulator({
  prices: {
    [ETH_FEED_ID]: { price: 300_000_000_000n, expo: -8, publishTime: Math.floor(Date.now() / 1000) },
  },
})
t.teardown(async () => {
  await hermes.stop()
  await devnet.stop()
})
const env = { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' }
const registry = await loadRegistry({ env, logger: silentLogger })
t.teardown(() => registry.close())
const chain = devnet.chains[0]
if (!chain) throw new Error('no devnet chain')
const publicClient = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })
// MockV3Aggregator's setters are open: any funded account may move a feed.
const feedAdmin = createWalletClient({
  chain: chain.chain,
  transport: http(chain.rpcUrl),
  account: privateKeyToAccount((USERS[3] ?? USERS[0])!.privateKey),
})

/** Sets a feed's latest round (answer ×1e8, updated `ageSeconds` before the chain's latest block). */
async function setFeed(feed: `0x${string}`, answer: bigint, ageSeconds = 0) {
  const block = await publicClient.getBlock()
  const [roundId] = await publicClient.readContract({
    address: feed,
    abi: mockV3AggregatorAbi,
    functionName: 'latestRoundData',
  })
  const updatedAt = block.timestamp - BigInt(ageSeconds)
  const hash = await feedAdmin.writeContract({
    address: feed,
    abi: mockV3AggregatorAbi,
    functionName: 'updateRoundData',
    args: [roundId + 1n, answer, updatedAt, updatedAt],
  })
  await publicClient.waitForTransactionReceipt({ hash })
}

const rules = { maxAgeSeconds: 3600, maxDeviationBps: 100, minSources: 1 }

t.test('a devnet feed read through the EVM plugin: the seeded price, fresh', async (t) => {
  const reading = await feedReader(registry, 31337, DEVNET_FEEDS.eth).read()
  t.equal(reading.usd, USD(3000n))
  t.ok(reading.ageSeconds >= 0 && reading.ageSeconds < 3600, `age ${reading.ageSeconds} s`)
  const round = await registry.chain(31337).adapter.marketData?.readPriceFeed(DEVNET_FEEDS.trx)
  t.equal(round?.decimals, 8)
  t.equal(round?.answer, 25_000_000n, 'TRX at 0.25')
  await t.rejects(
    async () => {
      await registry.chain(31337).adapter.marketData?.readPriceFeed(STABLECOIN_ADDRESS)
    },
    { code: 'PRICE_FETCH_FAILED', message: /did not answer/ },
    'a contract that is no feed is a price failure',
  )
})

t.test(
  'a feed that goes stale, or answers zero, is left out; with nothing else the price fails',
  async (t) => {
    await setFeed(DEVNET_FEEDS.sol, 150_00000000n, 7200)
    const stale = new CompositePrice(
      { id: 'sol', symbol: 'SOL' },
      [feedReader(registry, 31337, DEVNET_FEEDS.sol)],
      rules,
    )
    await t.rejects(stale.read(), {
      code: 'PRICE_FETCH_FAILED',
      message:
        /No fresh agreeing USD price for SOL \(id "sol"\): feed 31337:0x\S+ is stale \(\d+ s old, limit 3600 s\)/,
    })
    // With a fresh second source the stale one is simply not counted.
    const withHttp = new CompositePrice(
      { id: 'sol', symbol: 'SOL' },
      [feedReader(registry, 31337, DEVNET_FEEDS.sol), staticReader('151')],
      rules,
    )
    t.equal(await withHttp.read(), USD(151n))
    await setFeed(DEVNET_FEEDS.btc, 0n)
    await t.rejects(
      new CompositePrice(
        { id: 'btc', symbol: 'BTC' },
        [feedReader(registry, 31337, DEVNET_FEEDS.btc)],
        rules,
      ).read(),
      { code: 'PRICE_FETCH_FAILED', message: /answer 0 is not positive/ },
    )
    // Fresh again: the same feed answers.
    await setFeed(DEVNET_FEEDS.sol, 150_00000000n)
    t.equal(await stale.read(), USD(150n))
  },
)

t.test(
  'the Hermes-shaped HTTP API (simulator): price × 10^expo, aged by publish_time, down is a failure',
  async (t) => {
    const reader = pythReader(hermes.url, ETH_FEED_ID)
    const reading = await reader.read()
    t.equal(reading.usd, USD(3000n))
    const old = Math.floor(Date.now() / 1000) - 600
    hermes.setPrice(ETH_FEED_ID, { price: 3_001_50n, expo: -2, publishTime: old })
    const aged = await reader.read()
    t.equal(aged.usd, 300_150n * 10n ** 16n, '3001.50 from expo -2')
    t.ok(aged.ageSeconds >= 600, `age ${aged.ageSeconds} s`)
    const strict = new CompositePrice({ id: 'eth', symbol: 'ETH' }, [reader], { ...rules, maxAgeSeconds: 60 })
    await t.rejects(strict.read(), { code: 'PRICE_FETCH_FAILED', message: /pyth \S+ is stale/ })
    hermes.setDown(true)
    t.teardown(() => hermes.setDown(false))
    await t.rejects(reader.read(), /HTTP 503/)
    hermes.setDown(false)
    hermes.setPrice(ETH_FEED_ID, {
      price: 300_000_000_000n,
      expo: -8,
      publishTime: Math.floor(Date.now() / 1000),
    })
    // The simulator validates what it is sent, as Hermes does.
    const missing = await fetch(`${hermes.url}/v2/updates/price/latest`)
    t.equal(missing.status, 400)
    const malformed = await fetch(`${hermes.url}/v2/updates/price/latest?ids[]=0x12`)
    t.equal(malformed.status, 400)
    const unknown = await fetch(`${hermes.url}/v2/updates/price/latest?ids[]=${'ab'.repeat(32)}`)
    t.equal(unknown.status, 404)
  },
)

t.test(
  'the composite: median of fresh sources, a disagreeing one left out, two that disagree fail',
  async (t) => {
    const feed = feedReader(registry, 31337, DEVNET_FEEDS.eth)
    const pyth = pythReader(hermes.url, ETH_FEED_ID)
    const three = new CompositePrice(
      { id: 'eth', symbol: 'ETH' },
      [feed, pyth, staticReader('3300', 'outlier')],
      rules,
    )
    t.equal(await three.read(), USD(3000n), 'the outlier (10 % off) is outvoted')
    const near = new CompositePrice({ id: 'eth', symbol: 'ETH' }, [feed, staticReader('3002')], rules)
    t.equal(await near.read(), USD(3001n), 'two agreeing sources: their median')
    const split = new CompositePrice(
      { id: 'eth', symbol: 'ETH' },
      [feed, staticReader('3300', 'other')],
      rules,
    )
    await t.rejects(split.read(), {
      code: 'PRICE_FETCH_FAILED',
      message: /disagrees \(more than 100 bps from the median\)/,
    })
    hermes.setDown(true)
    t.teardown(() => hermes.setDown(false))
    const oneDown = new CompositePrice({ id: 'eth', symbol: 'ETH' }, [feed, pyth], rules)
    t.equal(await oneDown.read(), USD(3000n), 'a source that is down is left out')
    await t.rejects(
      new CompositePrice({ id: 'eth', symbol: 'ETH' }, [feed, pyth], { ...rules, minSources: 2 }).read(),
      { code: 'PRICE_FETCH_FAILED', message: /pyth \S+ failed \(HTTP 503\)/ },
      'below minSources',
    )
  },
)

t.test('a Uniswap v3 pool spot through the plugin, priced in USDC', async (t) => {
  const usdc = new CompositePrice(
    { id: 'usdc', symbol: 'USDC' },
    [feedReader(registry, 31337, DEVNET_FEEDS.usdc)],
    rules,
  )
  const pool = poolReader(
    registry,
    { chainId: 31337, pool: chain.dex.pools.wethUsdc, token: WETH_ADDRESS },
    { currencyId: 'usdc', price: () => usdc.read() },
  )
  const reading = await pool.read()
  const distance = reading.usd > USD(3000n) ? reading.usd - USD(3000n) : USD(3000n) - reading.usd
  t.ok(distance * 1_000_000n < USD(3000n), `pool spot ${reading.usd} within 1 ppm of 3000`)
  const twap = await registry.chain(31337).adapter.marketData?.readPoolPrice?.({
    pool: chain.dex.pools.wethUsdc,
    base: STABLECOIN_ADDRESS,
  })
  t.equal(twap?.quote, WETH_ADDRESS, 'USDC is priced in WETH when it is the base')
  t.equal(twap?.baseDecimals, 6)
  t.equal(twap?.quoteDecimals, 18)
  // TWAP (the pool's observe): let a minute pass on the chain, then average the last 30 s.
  await publicClient.request({ method: 'evm_increaseTime' as never, params: [60] as never })
  await publicClient.request({ method: 'evm_mine' as never, params: [] as never })
  const averaged = await poolReader(
    registry,
    { chainId: 31337, pool: chain.dex.pools.wethUsdc, token: WETH_ADDRESS, twapSeconds: 30 },
    { currencyId: 'usdc', price: () => usdc.read() },
  ).read()
  // The mean tick is the current one (no trade since): the price at that tick, within 1 bp of spot.
  const off = averaged.usd > reading.usd ? averaged.usd - reading.usd : reading.usd - averaged.usd
  t.ok(off * 10_000n <= reading.usd, `TWAP ${averaged.usd} within 1 bp of spot ${reading.usd}`)
})

t.test('cached for the TTL: one read for concurrent and repeated asks, a new read after it', async (t) => {
  let reads = 0
  const counting: PriceSourceReader = {
    label: 'counting',
    read: async () => {
      reads += 1
      return { usd: USD(3000n), ageSeconds: 0 }
    },
  }
  const ttlMs = 300
  const live = new LivePriceSource([new CompositePrice({ id: 'eth', symbol: 'ETH' }, [counting], rules)], {
    cacheMs: ttlMs,
  })
  const started = performance.now()
  const answers = await Promise.all(Array.from({ length: 10 }, () => live.usdPrice(eth)))
  t.same(new Set(answers), new Set([USD(3000n)]))
  t.equal(reads, 1, 'ten concurrent asks: one read (single-flight)')
  await live.usdPrice(eth)
  // Still inside the TTL unless this machine stalled for longer than it.
  if (performance.now() - started < ttlMs) t.equal(reads, 1, 'a repeat inside the TTL reads nothing')
  await waitFor(
    'a read after the TTL',
    async () => {
      await live.usdPrice(eth)
      return reads
    },
    { until: (count) => count === 2 },
  )
  t.ok(performance.now() - started >= ttlMs, 'the second read came only after the TTL')

  let failing = 0
  const down = new LivePriceSource(
    [
      new CompositePrice(
        { id: 'eth', symbol: 'ETH' },
        [
          {
            label: 'down',
            read: async () => {
              failing += 1
              throw new Error('connection refused')
            },
          },
        ],
        rules,
      ),
    ],
    { cacheMs: 60_000 },
  )
  await t.rejects(down.usdPrice(eth), { code: 'PRICE_FETCH_FAILED' })
  await t.rejects(down.usdPrice(eth), { code: 'PRICE_FETCH_FAILED' })
  t.equal(failing, 2, 'a failure is not cached: the next ask reads again')
})

/** A copy of the repo configs with `prices.local.json` replaced. */
async function configWith(t: Test, prices: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pontis-prices-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp(REPO_CONFIG_DIR, dir, { recursive: true })
  await writeFile(join(dir, 'prices.local.json'), JSON.stringify(prices))
  return dir
}

t.test('the config is validated at start-up, naming the file and the key', async (t) => {
  const bad = await configWith(t, {
    source: 'live',
    currencies: { eth: { sources: [{ type: 'feed', chainId: 999, address: DEVNET_FEEDS.eth }] } },
  })
  const error = await loadPriceSource({ env, configDir: bad, registry }).catch((caught: unknown) => caught)
  t.ok(error instanceof ConfigError)
  t.match(String((error as Error).message), /prices\.local\.json/)
  t.match(
    JSON.stringify((error as ConfigError).issues),
    /currencies\.eth\.sources\[0\]\.chainId.*chain 999 is not configured/,
  )
  // A schema mistake is one issue naming its key (the source kinds are told apart by `type`).
  const typo = await configWith(t, {
    source: 'live',
    currencies: { eth: { sources: [{ type: 'feed', chainId: 31337, address: '0x12' }] } },
  })
  const typoError = await loadPriceSource({ env, configDir: typo, registry }).catch(
    (caught: unknown) => caught,
  )
  t.equal((typoError as ConfigError).issues.length, 1, 'one issue')
  t.match((typoError as ConfigError).issues[0]?.message, /currencies\.eth\.sources\[0\]\.address/)
  const cyclic = await configWith(t, {
    source: 'live',
    currencies: {
      eth: {
        sources: [
          {
            type: 'pool',
            chainId: 31337,
            pool: chain.dex.pools.wethUsdc,
            token: WETH_ADDRESS,
            quoteCurrency: 'eth',
          },
        ],
      },
    },
  })
  const cycle = await loadPriceSource({ env, configDir: cyclic, registry }).catch((caught: unknown) => caught)
  t.match(JSON.stringify((cycle as ConfigError).issues), /quoteCurrency.*itself priced through a pool/)
  // The repository's local config loads and answers the seeded prices from the devnet feeds.
  const local = await loadPriceSource({ env, registry })
  t.equal(await local.usdPrice(eth), USD(3000n))
  t.equal(await local.usdPrice({ ...eth, id: 'trx', symbol: 'TRX' }), 25n * 10n ** 16n)
  const repo = JSON.parse(await readFile(join(REPO_CONFIG_DIR, 'prices.local.json'), 'utf8')) as {
    source: string
  }
  t.equal(repo.source, 'live', 'local uses the devnet feeds by default')
  for (const environment of ['testnet', 'mainnet']) {
    const file = await loadPriceSource({
      environment,
      env: { ETH_USD_PRICE: '3000', SOL_USD_PRICE: '150', BTC_USD_PRICE: '60000', TRX_USD_PRICE: '0.25' },
    }).catch((caught: unknown) => caught)
    t.notOk(file instanceof Error, `${environment} config stays valid`)
  }
})

t.test('all sources down: /quote/v2 and /price answer 503 PRICE_FETCH_FAILED over HTTP', async (t) => {
  const configDir = await configWith(t, {
    source: 'live',
    cacheMilliseconds: 0,
    maxAgeSeconds: 3600,
    currencies: {
      eth: {
        sources: [
          { type: 'feed', chainId: 31337, address: DEVNET_FEEDS.eth },
          { type: 'pyth', url: hermes.url, id: ETH_FEED_ID },
        ],
      },
      usdc: { sources: [{ type: 'feed', chainId: 31337, address: DEVNET_FEEDS.usdc }] },
    },
  })
  const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
  const service = await startIntentsService({
    env,
    configDir,
    port: 0,
    logger: silentLogger,
    document: loaded,
    workers: false,
  })
  t.teardown(() => service.close())
  const client = createTestClient(t, service.url, loaded.document)
  const body = {
    user: USERS[0]?.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: '0x0000000000000000000000000000000000000000',
    destinationCurrency: '0x0000000000000000000000000000000000000000',
    amount: '100000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  const priced = await client.post('/price', body)
  t.equal(priced.status, 200, `both sources up: priced ${JSON.stringify(priced.body).slice(0, 300)}`)
  // The same request on the old static table answers the same amounts: the feeds hold those prices.
  const staticDir = await configWith(t, { source: 'static', usd: { eth: '3000', usdc: '1' } })
  const staticService = await startIntentsService({
    env,
    configDir: staticDir,
    port: 0,
    logger: silentLogger,
    document: loaded,
    workers: false,
  })
  t.teardown(() => staticService.close())
  const staticPriced = await createTestClient(t, staticService.url, loaded.document).post('/price', body)
  type Amounts = { details: { currencyOut: { amount: string; amountUsd: string } } }
  t.equal(
    (priced.body as Amounts).details.currencyOut.amount,
    (staticPriced.body as Amounts).details.currencyOut.amount,
    'live and static prices quote the same output',
  )
  t.equal(
    (priced.body as Amounts).details.currencyOut.amountUsd,
    (staticPriced.body as Amounts).details.currencyOut.amountUsd,
  )
  // The HTTP API goes down and the feed goes stale: no fresh price is left.
  hermes.setDown(true)
  t.teardown(() => hermes.setDown(false))
  await setFeed(DEVNET_FEEDS.eth, 3000_00000000n, 7200)
  t.teardown(() => setFeed(DEVNET_FEEDS.eth, 3000_00000000n))
  for (const path of ['/quote/v2', '/price']) {
    const res = await client.post(path, body)
    t.equal(res.status, 503, `${path}: 503`)
    const answer = res.body as { errorCode: string; message: string }
    t.equal(answer.errorCode, 'PRICE_FETCH_FAILED', `${path}: PRICE_FETCH_FAILED`)
    t.match(answer.message, /No fresh agreeing USD price for ETH .*is stale.*failed \(HTTP 503\)/)
  }
  // One source back: quotes again, from the fresh one only.
  hermes.setDown(false)
  const back = await client.post('/quote/v2', body)
  t.equal(back.status, 200, 'the HTTP source alone prices it')
})
