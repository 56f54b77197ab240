/**
 * The routes token selectors call (issue 26): `POST /currencies/v2`, `GET /currencies/trending`,
 * `GET /currencies/token/price`, and the icons `/chains` and the currency lists point at, over real
 * HTTP on loopback with every answer checked against openapi/intents.yaml. The bodies are the ones
 * `@relayprotocol/relay-kit-ui` 8.0.12 (through relay-kit-hooks) sends.
 *
 * No chain is read here (the RPCs point at a closed port): lists, search and icons come from the
 * chain config and the plugins' identities. Token prices come from the devnet's seeded prices through a
 * switchable wrapper, a stand-in for a live feed (none runs here), so the test can move a price
 * and take the source down.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { type CurrencyEntry, PontisError, type RegisteredChain, silentLogger } from '@pontis/core'
import { DEVNET_USD_PRICES } from '@pontis/devnet'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient, errorDataOf, type TestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import { REPO_CONFIG_DIR } from '../../../test/helpers/environments.js'
import {
  createIntentsApp,
  createIntentsRuntime,
  INTENTS_DOCUMENT_PATH,
  type PriceSource,
  readIntentsEnvironment,
} from '../src/index.js'
import { StaticPriceSource } from '../src/quote/prices.js'

const CLOSED = 'http://127.0.0.1:9'
const env = { LOCAL_A_RPC_URL: CLOSED, LOCAL_B_RPC_URL: CLOSED, RATE_LIMITS: 'off' }

/** The local price table, with prices the test can move and an outage it can switch on. */
class SwitchablePrices implements PriceSource {
  down = false
  readonly moved = new Map<string, bigint>()
  asked = 0
  constructor(readonly table: PriceSource) {}
  async usdPrice(currency: CurrencyEntry): Promise<bigint> {
    this.asked++
    if (this.down) throw new PontisError('PRICE_FETCH_FAILED', `the price feed is down (${currency.symbol})`)
    return this.moved.get(currency.id) ?? this.table.usdPrice(currency)
  }
}

// The devnet's seeded prices as a table: the test's chains are unreachable, so the live feeds are not read.
const prices = new SwitchablePrices(
  new StaticPriceSource({ ...DEVNET_USD_PRICES, wsol: DEVNET_USD_PRICES.sol }),
)
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)

type Runtime = Awaited<ReturnType<typeof createIntentsRuntime>>

async function serve(
  options: { configDir?: string; publicBaseUrl?: string; trustProxy?: boolean; runtime?: Runtime } = {},
) {
  const runtime =
    options.runtime ??
    (await createIntentsRuntime({
      env,
      logger: silentLogger,
      prices,
      ...(options.configDir ? { configDir: options.configDir } : {}),
    }))
  const { koa } = await createIntentsApp({
    ...runtime,
    document: loaded,
    ...(options.publicBaseUrl ? { publicBaseUrl: options.publicBaseUrl } : {}),
    ...(options.trustProxy ? { trustProxy: true } : {}),
  })
  const server = await listen(koa, { port: 0 })
  t.teardown(async () => {
    await server.close()
    if (options.runtime) return
    await runtime.store.close()
    await runtime.registry.close()
  })
  return { server, registry: runtime.registry, runtime }
}

const { server, registry, runtime } = await serve()
const base = server.url.replace(/\/$/, '')

interface Item {
  chainId: number
  address: string
  symbol: string
  name: string
  decimals: number
  vmType: string
  metadata: { logoURI: string; verified: boolean; isNative: boolean }
}
type ChainRecord = {
  id: number
  vmType: string
  iconUrl: string
  currency: CurrencyEntry
  featuredTokens?: CurrencyEntry[]
  erc20Currencies?: CurrencyEntry[]
  solverCurrencies?: CurrencyEntry[]
}

/** What the chain config says each chain routes: its native currency and its bridgeable `currencies`. */
function configured(chain: RegisteredChain): Array<{ entry: CurrencyEntry; address: string }> {
  const { identity } = chain.adapter
  return [chain.entry.currency, ...(chain.entry.currencies ?? [])]
    .filter((entry) => entry.supportsBridging !== false)
    .map((entry, index) => ({
      entry,
      address: index === 0 ? identity.nativeCurrencyId : identity.normalizeCurrency(entry.address),
    }))
}

const key = (item: { chainId: number; address: string }) => `${item.chainId}:${item.address}`
const everyConfigured = registry
  .chains()
  .flatMap((chain) => configured(chain).map(({ address }) => key({ chainId: chain.id, address })))

async function list(client: TestClient, body: unknown): Promise<Item[]> {
  const answer = await client.post('/currencies/v2', body)
  if (answer.status !== 200) throw new Error(`POST /currencies/v2 ${answer.status}: ${answer.text}`)
  return answer.body as Item[]
}

t.test('POST /currencies/v2 lists every currency of every chain in the config, natives first', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  t.ok(everyConfigured.length > 10, `the local config routes ${everyConfigured.length} currencies`)
  const all = await list(client, { limit: 100 })
  t.same(all.map(key).sort(), [...everyConfigured].sort(), 'exactly the configured currencies')
  const firstToken = all.findIndex((item) => !item.metadata.isNative)
  t.ok(
    all.slice(firstToken).every((item) => !item.metadata.isNative),
    'native currencies come first',
  )
  t.equal(
    all.filter((item) => item.metadata.isNative).length,
    registry.chains().length,
    'one native per chain',
  )
  for (const item of all) {
    const chain = registry.chain(item.chainId)
    t.equal(item.vmType, chain.record.vmType, `${key(item)}: vmType of its chain`)
    t.equal(item.metadata.verified, true, `${key(item)}: configured currencies are verified`)
  }
  const defaults = await list(client, {})
  t.equal(defaults.length, Math.min(20, everyConfigured.length), 'the default limit is 20')
  const empty = await client.request('POST', '/currencies/v2')
  t.equal(empty.status, 200, 'a request without a body lists too')
  t.same((empty.body as Item[]).map(key), defaults.map(key))
})

t.test('the widget token selector bodies are answered in full, nothing ignored', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const chainIds = registry.chains().map((chain) => chain.id)
  // TokenSelector.js: the main list with an empty search...
  const main = await client.post('/currencies/v2', {
    chainIds,
    term: '',
    defaultList: true,
    limit: 12,
    depositAddressOnly: false,
    referrer: 'relay.link',
  })
  t.equal(main.status, 200)
  t.equal((main.body as Item[]).length, 12, 'limit 12')
  t.equal(main.headers['ignored-members'], undefined, 'every member is a known one')
  // ...the external search beside it, and the user's tokens by chain:address.
  const external = await client.post('/currencies/v2', {
    chainIds,
    term: 'eth',
    defaultList: false,
    limit: 12,
    useExternalSearch: true,
    referrer: 'relay.link',
  })
  t.equal(external.status, 200)
  t.same(
    (external.body as Item[]).slice(0, 2).map((item) => item.symbol),
    ['ETH', 'ETH'],
    'the search without a third-party source answers from the deployment, exact symbols first',
  )
  t.same(
    (external.body as Item[]).slice(2).map((item) => item.name),
    ['Tether USD (devnet)'],
    'then names containing the term',
  )
  const usdc = configured(registry.chain(31337))[1]!.address
  const tokens = await list(client, {
    tokens: [`31337:${usdc.toLowerCase()}`, '792703809:11111111111111111111111111111111', '999:0x01'],
    limit: 100,
    depositAddressOnly: false,
    referrer: 'relay.link',
  })
  t.same(
    tokens.map(key).sort(),
    [`31337:${usdc}`, '792703809:11111111111111111111111111111111'].sort(),
    'the listed tokens this deployment routes; others are left out, not refused',
  )
  const extra = await client.post('/currencies/v2', { term: 'usdc', utm_source: 'partner' })
  t.equal(extra.status, 200, 'a member the document does not list is accepted')
  t.equal(extra.headers['ignored-members'], 'body.utm_source', 'and named')
  const bad = await client.post('/currencies/v2', { limit: 0 })
  t.equal(bad.status, 400)
  t.equal((bad.body as { errorCode: string }).errorCode, 'INVALID_REQUEST', 'a limit below 1 is refused')
  const badToken = await client.post('/currencies/v2', { tokens: ['usdc'] })
  t.equal((badToken.body as { errorCode: string }).errorCode, 'INVALID_REQUEST', 'a token without chainId:')
})

t.test('search by symbol, name and address on every chain of the config', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const families = new Set<string>()
  for (const chain of registry.chains()) {
    families.add(chain.record.vmType)
    for (const { entry, address } of configured(chain)) {
      const wanted = key({ chainId: chain.id, address })
      const bySymbol = await list(client, { chainIds: [chain.id], term: entry.symbol.toLowerCase() })
      const exact = bySymbol.filter((item) => item.symbol === entry.symbol)
      t.same(bySymbol.slice(0, exact.length), exact, `${chain.id} ${entry.symbol}: exact symbols first`)
      t.ok(exact.map(key).includes(wanted), `${chain.id} ${entry.symbol}: found by symbol`)
      const byName = await list(client, { term: entry.name.toUpperCase(), limit: 100 })
      t.ok(byName.map(key).includes(wanted), `${chain.id} ${entry.symbol}: found by name "${entry.name}"`)
      const byAddress = await list(client, { address, limit: 100 })
      t.ok(byAddress.map(key).includes(wanted), `${chain.id} ${entry.symbol}: found by address ${address}`)
      t.ok(
        byAddress.every((item) => item.address === address),
        `${chain.id} ${entry.symbol}: the address search lists nothing else`,
      )
      const byTerm = await list(client, { chainIds: [chain.id], term: address })
      t.same(byTerm.map(key), [wanted], `${chain.id} ${entry.symbol}: an address typed as the term`)
    }
  }
  t.same([...families].sort(), ['bvm', 'evm', 'hypevm', 'lvm', 'svm', 'tvm'], 'every family was searched')
})

t.test("addresses follow their family's rule: EVM in any case, base58 exactly", async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const usdc = configured(registry.chain(31337))[1]!.address
  for (const variant of [usdc.toLowerCase(), `0x${usdc.slice(2).toUpperCase()}`]) {
    const found = await list(client, { chainIds: [31337], address: variant })
    t.same(found.map(key), [`31337:${usdc}`], `EVM ${variant} finds the token`)
  }
  const mint = configured(registry.chain(792703809))[1]!.address
  const swapped = [...mint].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')
  t.same(await list(client, { chainIds: [792703809], address: mint }), [
    ...(await list(client, { tokens: [`792703809:${mint}`] })),
  ])
  t.same(await list(client, { address: swapped }), [], 'an SVM mint in another case is another key: no match')
  t.same(await list(client, { term: swapped }), [], 'also as a term')
})

t.test('filters: chains, currency id, all chains, verified, deposit addresses', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const svm = await list(client, { chainIds: [792703809], limit: 100 })
  t.same(
    svm.map(key).sort(),
    configured(registry.chain(792703809))
      .map(({ address }) => key({ chainId: 792703809, address }))
      .sort(),
    'only the SVM chain',
  )
  t.same(await list(client, { chainIds: [999] }), [], 'a chain the deployment does not serve matches nothing')
  const usdcEverywhere = await list(client, { currencyId: 'usdc', limit: 100 })
  const usdcConfigured = registry.chains().flatMap((chain) =>
    configured(chain)
      .filter(({ entry }) => entry.id === 'usdc')
      .map(({ address }) => key({ chainId: chain.id, address })),
  )
  t.same(
    usdcEverywhere.map(key).sort(),
    usdcConfigured.sort(),
    'currencyId: the same currency on every chain',
  )
  const usdc = configured(registry.chain(31337))[1]!.address
  const allChains = await list(client, {
    chainIds: [31337],
    address: usdc,
    includeAllChains: true,
    limit: 100,
  })
  t.equal(key(allChains[0]!), `31337:${usdc}`, 'includeAllChains: the match first')
  t.same(allChains.map(key).sort(), usdcConfigured.sort(), 'then the same currency on the other chains')
  t.equal((await list(client, { verified: true, limit: 100 })).length, everyConfigured.length)
  const depositAddress = await list(client, { depositAddressOnly: true, limit: 100 })
  const withDepositAddresses = registry
    .chains()
    .filter((chain) => chain.adapter.quoting?.createDepositAddress !== undefined)
    .map((chain) => chain.id)
  t.ok(withDepositAddresses.length > 0 && withDepositAddresses.length < registry.chains().length)
  t.same(
    [...new Set(depositAddress.map((item) => item.chainId))].sort(),
    [...withDepositAddresses].sort(),
    'depositAddressOnly: the chains whose family takes deposit addresses',
  )
})

t.test('GET /currencies/trending', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const widget = await client.get('/currencies/trending?referrer=relay.link')
  t.equal(widget.status, 200, 'the widget call')
  t.equal(widget.headers['ignored-members'], undefined)
  const trending = widget.body as Item[]
  t.equal(trending.length, Math.min(20, everyConfigured.length))
  t.ok(
    trending.slice(0, registry.chains().length).every((item) => item.metadata.isNative),
    'without featured tokens in the config, natives come first',
  )
  const one = await client.get('/currencies/trending?chainId=728126428&sortBy=relay24hBuyUsdVolume&limit=1')
  t.equal(one.status, 200)
  t.same(
    (one.body as Item[]).map((item) => [item.chainId, item.symbol]),
    [[728126428, 'TRX']],
    'chainId and limit',
  )
  const unknown = await client.get('/currencies/trending?utm_source=partner')
  t.equal(unknown.status, 200, 'an unknown query parameter is accepted')
  t.equal(unknown.headers['ignored-members'], 'query.utm_source')
})

t.test('GET /currencies/token/price: the quote price source, asked afresh', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const price = async (query: string) => client.get(`/currencies/token/price?${query}`)
  const native = await price(
    'address=0x0000000000000000000000000000000000000000&chainId=31337&referrer=relay.link',
  )
  t.equal(native.status, 200)
  t.same(native.body, { price: 3000 }, 'ETH from the local price table')
  t.equal(native.headers['ignored-members'], undefined, "the widget's referrer is known")
  const usdc = configured(registry.chain(31338))[1]!.address
  t.same((await price(`address=${usdc.toLowerCase()}&chainId=31338`)).body, { price: 1 }, 'EVM in any case')
  t.same(
    (await price('address=T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb&chainId=728126428')).body,
    { price: 0.25 },
    'Tron',
  )
  t.same((await price('address=11111111111111111111111111111111&chainId=792703809')).body, { price: 150 })

  prices.moved.set('eth', 3123_450000000000000000n)
  const asked = prices.asked
  const moved = await price('address=0x0000000000000000000000000000000000000000&chainId=31338')
  t.same(moved.body, { price: 3123.45 }, 'a moved price is answered at once, nothing cached')
  t.equal(prices.asked, asked + 1, 'the source was asked')
  prices.moved.clear()

  prices.down = true
  t.teardown(() => {
    prices.down = false
  })
  const down = await price('address=0x0000000000000000000000000000000000000000&chainId=31337')
  t.equal(down.status, 503, 'the price source down is a 503')
  t.equal((down.body as { errorCode: string }).errorCode, 'PRICE_FETCH_FAILED')
  prices.down = false

  const unknownToken = await price('address=0x1111111111111111111111111111111111111111&chainId=31337')
  t.equal(unknownToken.status, 400)
  t.equal((unknownToken.body as { errorCode: string }).errorCode, 'UNSUPPORTED_CURRENCY')
  t.match((unknownToken.body as { message: string }).message, /routes: ETH .*USDC/, 'naming what it routes')
  t.same(errorDataOf(unknownToken.body), {
    chainId: 31337,
    currency: '0x1111111111111111111111111111111111111111',
  })
  const wrongFamily = await price('address=0x0000000000000000000000000000000000000000&chainId=792703809')
  t.equal((wrongFamily.body as { errorCode: string }).errorCode, 'UNSUPPORTED_CURRENCY', 'an EVM id on SVM')
  const unknownChain = await price('address=0x0000000000000000000000000000000000000000&chainId=999')
  t.equal(unknownChain.status, 400)
  t.equal((unknownChain.body as { errorCode: string }).errorCode, 'UNSUPPORTED_CHAIN')
  const missing = await price('chainId=31337')
  t.equal((missing.body as { errorCode: string }).errorCode, 'INVALID_REQUEST', 'address is required')
})

const GENERIC_SVG = await readFile(
  join(
    dirname(createRequire(import.meta.url).resolve('cryptocurrency-icons/package.json')),
    'svg/color/generic.svg',
  ),
  'utf8',
)

/** Fetches an image URL of the deployment: 200, an SVG, cacheable. */
async function image(t: Test, client: TestClient, url: string, what: string): Promise<string> {
  t.ok(url.startsWith(`${base}/icons/`), `${what}: ${url} is on the deployment`)
  const answer = await client.get(url.slice(base.length))
  t.equal(answer.status, 200, `${what}: 200`)
  t.equal(answer.headers['content-type'], 'image/svg+xml', `${what}: an image`)
  t.equal(answer.headers['cache-control'], 'public, max-age=86400')
  t.match(answer.text, /^<svg /, `${what}: an SVG`)
  return answer.text
}

t.test('every chain has an iconUrl and every currency a logoURI that answer images', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const { chains } = (await client.get('/chains')).body as { chains: ChainRecord[] }
  t.equal(chains.length, registry.chains().length)
  for (const chain of chains) {
    const icon = await image(t, client, chain.iconUrl, `chain ${chain.id}`)
    // relay-kit-ui's ChainIcon asks for the square variant by inserting square/ after /icons/.
    const square = await image(t, client, chain.iconUrl.replace('/icons/', '/icons/square/'), 'square')
    t.equal(square, icon, `chain ${chain.id}: the square variant is the same image`)
    const lists = [[chain.currency], chain.featuredTokens, chain.erc20Currencies, chain.solverCurrencies]
    for (const currency of lists.flatMap((items) => items ?? []))
      await image(t, client, currency.metadata?.logoURI ?? '', `chain ${chain.id} ${currency.symbol}`)
  }
  const eth = await client.get('/icons/chains/31337.svg')
  t.not(eth.text, GENERIC_SVG, 'a chain whose native currency has an icon gets it')
  t.equal(
    (await client.get('/icons/currencies/ETH')).text,
    eth.text,
    'by symbol, any case, with or without .svg',
  )
  for (const item of await list(client, { limit: 100 }))
    await image(t, client, item.metadata.logoURI, `currency ${key(item)}`)
  for (const item of (await client.get('/currencies/trending')).body as Item[])
    await image(t, client, item.metadata.logoURI, `trending ${key(item)}`)
  for (const unknown of ['/icons/currencies/no-such-coin.svg', '/icons/chains/424242.svg', '/icons/chains/x'])
    t.equal(
      await image(t, client, `${base}${unknown}`, unknown),
      GENERIC_SVG,
      `${unknown}: the generic coin, not 404`,
    )
  const badKind = await client.get('/icons/tokens/eth.svg')
  t.equal(badKind.status, 400, 'a kind that does not exist is named')
  const svgHeaders = await client.get('/icons/currencies/eth.svg')
  t.equal(svgHeaders.headers['x-content-type-options'], 'nosniff')
  t.match(
    svgHeaders.headers['content-security-policy'],
    /default-src 'none'/,
    'an SVG opened alone runs nothing',
  )
})

t.test('URLs start with PUBLIC_BASE_URL, or the origin a trusted proxy forwarded', async (t) => {
  const withBase = await serve({ publicBaseUrl: 'https://pontis.example/api', runtime })
  const client = createTestClient(t, withBase.server.url, loaded.document)
  const { chains } = (await client.get('/chains')).body as { chains: ChainRecord[] }
  t.equal(chains[0]!.iconUrl, 'https://pontis.example/api/icons/chains/31337.svg', 'PUBLIC_BASE_URL')
  t.equal(chains[0]!.currency.metadata?.logoURI, 'https://pontis.example/api/icons/currencies/eth.svg')

  const forwarded = { 'x-forwarded-host': 'swap.example.org', 'x-forwarded-proto': 'https' }
  const direct = createTestClient(t, server.url, loaded.document)
  const untrusted = (await direct.get('/chains?includeChains=31337', { headers: forwarded })).body as {
    chains: ChainRecord[]
  }
  t.equal(untrusted.chains[0]!.iconUrl, `${base}/icons/chains/31337.svg`, 'without proxy trust, the Host')
  const proxied = await serve({ trustProxy: true, runtime })
  const behind = createTestClient(t, proxied.server.url, loaded.document)
  const trusted = (await behind.post('/currencies/v2', { currencyId: 'eth' }, { headers: forwarded }))
    .body as Item[]
  t.equal(
    trusted[0]!.metadata.logoURI,
    'https://swap.example.org/icons/currencies/eth.svg',
    'with TRUST_PROXY, the forwarded origin',
  )
})

t.test('icons named in the chain config win, on the deployment or elsewhere', async (t) => {
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-icons-'))
  t.teardown(() => rm(configDir, { recursive: true, force: true }))
  await cp(REPO_CONFIG_DIR, configDir, { recursive: true })
  const file = join(configDir, 'chains.local.json')
  const config = JSON.parse(await readFile(file, 'utf8')) as {
    chains: Array<{ id: number; iconUrl?: string; currencies?: Array<{ id: string; metadata?: object }> }>
  }
  for (const chain of config.chains) {
    if (chain.id === 31338) chain.iconUrl = '/icons/currencies/btc.svg'
    if (chain.id === 792703809) chain.iconUrl = 'https://images.operator.example/svm.png'
    if (chain.id === 31337)
      for (const token of chain.currencies ?? [])
        if (token.id === 'usdc') token.metadata = { logoURI: '/icons/currencies/dai.svg' }
  }
  await writeFile(file, JSON.stringify(config))
  const overridden = await serve({ configDir })
  const client = createTestClient(t, overridden.server.url, loaded.document)
  const origin = overridden.server.url.replace(/\/$/, '')
  const { chains } = (await client.get('/chains')).body as { chains: ChainRecord[] }
  const byId = new Map(chains.map((chain) => [chain.id, chain]))
  t.equal(byId.get(31338)!.iconUrl, `${origin}/icons/currencies/btc.svg`, 'a deployment path, made absolute')
  t.equal(
    (await client.get('/icons/currencies/btc.svg')).text,
    (await client.get(byId.get(31338)!.iconUrl.slice(origin.length))).text,
  )
  t.equal(byId.get(792703809)!.iconUrl, 'https://images.operator.example/svm.png', 'an absolute URL as given')
  t.equal(byId.get(31337)!.iconUrl, `${origin}/icons/chains/31337.svg`, 'chains without one keep the default')
  const usdc = byId.get(31337)!.erc20Currencies!.find((token) => token.id === 'usdc')!
  t.equal(usdc.metadata?.logoURI, `${origin}/icons/currencies/dai.svg`, "a currency's logoURI in /chains")
  const listed = await list(client, { chainIds: [31337], term: 'usdc' })
  t.equal(listed[0]!.metadata.logoURI, `${origin}/icons/currencies/dai.svg`, 'and in the currency list')
  const other = await list(client, { chainIds: [31338], term: 'usdc' })
  t.equal(other[0]!.metadata.logoURI, `${origin}/icons/currencies/usdc.svg`, 'other chains keep theirs')
})

/** GET with a Host header of the test's choosing (fetch always sends the URL's). */
function getWithHost(path: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { headers: { host } }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => resolve(text))
    })
    request.on('error', reject)
    request.end()
  })
}

t.test('a Host that cannot be part of a URL is never echoed into one', async (t) => {
  const answer = JSON.parse(await getWithHost('/chains?includeChains=31337', 'bad_host"><x')) as {
    chains: ChainRecord[]
  }
  t.equal(answer.chains[0]!.iconUrl, 'http://localhost/icons/chains/31337.svg')
  const named = JSON.parse(await getWithHost('/chains?includeChains=31337', 'pontis.internal:8080')) as {
    chains: ChainRecord[]
  }
  t.equal(
    named.chains[0]!.iconUrl,
    'http://pontis.internal:8080/icons/chains/31337.svg',
    'a plain host:port is',
  )
})

t.test('PUBLIC_BASE_URL is checked at start-up', async (t) => {
  t.equal(
    readIntentsEnvironment({ PUBLIC_BASE_URL: 'https://pontis.example/api/' }).publicBaseUrl,
    'https://pontis.example/api',
    'the trailing slash is dropped',
  )
  t.equal(readIntentsEnvironment({}).publicBaseUrl, undefined, 'unset: the request origin')
  for (const bad of [
    'pontis.example',
    'ftp://pontis.example',
    'https://pontis.example/?a=1',
    'https://u:p@x.example',
  ])
    t.throws(() => readIntentsEnvironment({ PUBLIC_BASE_URL: bad }), /PUBLIC_BASE_URL/, `${bad} is refused`)
})
