/**
 * Issue 21's "Done when", on the stack `npm start` serves (its own process, as start.test.ts runs
 * it), over HTTP against the URLs it prints: a same-chain ETH → USDC swap, an origin swap (THIN on
 * 31337 → USDC on 31338) and a destination swap (USDC on 31337 → THIN on 31338) each reach a fresh
 * recipient with at least the quote's `minimumAmount` (read on chain), through the partner client
 * and through the unmodified Relay SDK 7.0.3; a thin-pool trade above the impact limit answers
 * SWAP_IMPACT_TOO_HIGH; and when every price source of the `local` environment (the devnet's
 * Chainlink-interface feeds) stops updating past its age limit, a quote answers 503
 * PRICE_FETCH_FAILED, never a stale price, until the feeds publish a new round. Every answer of the
 * service checked here is checked against the document.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createPontisClient, type QuoteResponse, viemWalletAdapter } from '@pontis/client'
import {
  DEVNET_FEEDS,
  DEX_DEPLOYER,
  type DevAccount,
  mockV3AggregatorAbi,
  THIN_TOKEN_ADDRESS,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import { INTENTS_DOCUMENT_PATH } from '@pontis/intents'
import { createClient, type Execute, getClient } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import t, { type Test } from 'tap'
import {
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  erc20Abi,
  type Hash,
  http,
  type PublicClient,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startNpmStart } from './helpers/npm-start.js'
import { waitFor, within } from './helpers/wait.js'
import { EVM_NATIVE, EVM_USDC, requestIdOf } from './relay-sdk/fixtures/sdk-stack.js'

t.setTimeout(900_000)

const repoRoot = fileURLToPath(new URL('..', import.meta.url))
const FINAL_STATUSES = new Set(['success', 'failure', 'refund', 'fallback'])

const dataDir = await mkdtemp(join(tmpdir(), 'pontis-start-swaps-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
let stopping: Promise<string> | undefined
const stack = await startNpmStart(
  {
    // SIGTERM first, so npm start stops its devnets itself; the helper's SIGKILL only if it hangs.
    teardown: (kill) =>
      t.teardown(async () => {
        if (stopping)
          await within('npm start to stop', stopping, { timeoutMs: 30_000 }).catch(() => undefined)
        await kill()
      }),
  },
  {
    cwd: repoRoot,
    env: {
      INTENTS_PORT: '0',
      HTTP_PORT: '0',
      DEVNET_PORTS: '0',
      RATE_LIMITS: 'off',
      PONTIS_DATA_DIR: dataDir,
      ENVIRONMENT: 'local',
      LOG_LEVEL: 'info',
      ADMIN_TOKEN: '',
    },
  },
)
t.teardown(() => {
  stopping ??= stack.stop()
})
const { intents } = stack.urls
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)

// The devnet chains, as npm start prints them.
const rpcUrls = new Map<number, string>()
for (const [, id, url] of stack.output().matchAll(/devnet chain (\d+)\s+(http:\/\/[^\s"]+)/g))
  rpcUrls.set(Number(id), url as string)
const chains = new Map<number, { chain: Chain; client: PublicClient }>()
for (const id of [31337, 31338]) {
  const url = rpcUrls.get(id)
  if (!url) throw new Error(`npm start printed no devnet chain ${id}:\n${stack.output()}`)
  const chain = defineChain({
    id,
    name: `devnet ${id}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  })
  chains.set(id, {
    chain,
    client: createPublicClient({ chain, transport: http(url), pollingInterval: 100 }) as PublicClient,
  })
}
const chainOf = (id: number) => chains.get(id) as { chain: Chain; client: PublicClient }
const walletOf = (account: DevAccount, chainId: number) =>
  createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: chainOf(chainId).chain,
    transport: http(chainOf(chainId).chain.rpcUrls.default.http[0]),
  })
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address
const balanceOf = (chainId: number, owner: Address, currency: Address) =>
  currency === EVM_NATIVE
    ? chainOf(chainId).client.getBalance({ address: owner })
    : chainOf(chainId).client.readContract({
        address: currency,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
      })

/** THIN for `owner` on 31337, from the deployer that minted it. */
async function fundThin(owner: Address, amount: bigint) {
  const hash = await walletOf(DEX_DEPLOYER, 31337).writeContract({
    address: THIN_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [owner, amount],
  })
  await chainOf(31337).client.waitForTransactionReceipt({ hash })
}

/** `/intents/status/v3` of `requestId` once final (the last answer checked against the document). */
async function finalStatus(t: Test, requestId: string) {
  await waitFor(
    `request ${requestId} to be final`,
    async () => {
      const answer = await fetch(`${intents}/intents/status/v3?requestId=${requestId}`)
      return answer.ok ? ((await answer.json()) as { status: string }).status : `HTTP ${answer.status}`
    },
    { timeoutMs: 180_000, intervalMs: 250, until: (status) => FINAL_STATUSES.has(status) },
  )
  const checked = await createTestClient(t, intents, loaded.document).get(
    `/intents/status/v3?requestId=${requestId}`,
  )
  return checked.body as { status: string }
}

// The Relay SDK as its documentation says: a base URL and a source, then the chains from our /chains.
createClient({ baseApiUrl: intents, source: 'pontis-start-swaps', pollingInterval: 1000 })
await configureDynamicChains()
const relay = () => getClient()

interface Flow {
  readonly name: string
  readonly from: { chainId: number; currency: Address }
  readonly to: { chainId: number; currency: Address }
  readonly amount: bigint
  /** THIN the payer needs first (the deployer holds it all). */
  readonly thin?: boolean
  /** What the quote must say about its swap legs. */
  readonly legs: (quote: Pick<QuoteResponse, 'details'>) => Record<string, unknown>
}

const flows: Flow[] = [
  {
    name: 'same-chain ETH → USDC on 31337',
    from: { chainId: 31337, currency: EVM_NATIVE },
    to: { chainId: 31337, currency: EVM_USDC },
    amount: 50_000_000_000_000_000n,
    legs: (quote) => ({ operation: quote.details.operation, origin: quote.details.route?.origin?.router }),
  },
  {
    name: 'origin swap: THIN on 31337 → USDC on 31338',
    from: { chainId: 31337, currency: THIN_TOKEN_ADDRESS },
    to: { chainId: 31338, currency: EVM_USDC },
    amount: 5n * 10n ** 18n,
    thin: true,
    legs: (quote) => ({ origin: quote.details.route?.origin?.includedSwapSources }),
  },
  {
    name: 'destination swap: USDC on 31337 → THIN on 31338',
    from: { chainId: 31337, currency: EVM_USDC },
    to: { chainId: 31338, currency: THIN_TOKEN_ADDRESS },
    amount: 25_000_000n,
    legs: (quote) => ({ destination: quote.details.route?.destination?.includedSwapSources }),
  },
]
/**
 * The SDK's amount: the partner client's own, quoted right after its swap moved the thin pool. Pool
 * reads are pinned to the head block, so the quote prices the moved pool and its fill meets the
 * minimum (a quote cached by path and amount alone promised the old one and the fill reverted).
 */
const sdkAmount = (flow: Flow) => flow.amount

const expectedLegs: Record<string, Record<string, unknown>> = {
  [flows[0]!.name]: { operation: 'swap', origin: 'uniswap-v3' },
  [flows[1]!.name]: { origin: ['uniswap-v3', 'uniswap-v3'] },
  [flows[2]!.name]: { destination: ['uniswap-v3', 'uniswap-v3'] },
}

t.test('a thin-pool swap above the impact limit answers SWAP_IMPACT_TOO_HIGH', async (t) => {
  const api = createTestClient(t, intents, loaded.document)
  const body = {
    user: USERS[0]?.address,
    originChainId: 31337,
    destinationChainId: 31337,
    originCurrency: EVM_NATIVE,
    destinationCurrency: THIN_TOKEN_ADDRESS,
    amount: '200000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  const refused = await api.post('/quote/v2', body)
  t.equal(refused.status, 400)
  t.match(refused.body, { errorCode: 'SWAP_IMPACT_TOO_HIGH', message: /overridePriceImpact/ })
  const small = await api.post('/quote/v2', { ...body, amount: '1000000000000000' })
  t.equal(small.status, 200, 'a small trade through the same pool is quoted')
})

for (const [index, flow] of flows.entries()) {
  t.test(`partner client: ${flow.name}`, async (t) => {
    const user = USERS[(2 * index) % USERS.length] as DevAccount
    if (flow.thin) await fundThin(user.address, flow.amount)
    const recipient = freshAddress()
    const body = {
      user: user.address,
      recipient,
      originChainId: flow.from.chainId,
      destinationChainId: flow.to.chainId,
      originCurrency: flow.from.currency,
      destinationCurrency: flow.to.currency,
      amount: flow.amount.toString(),
      tradeType: 'EXACT_INPUT',
    } as const
    // The document's shape first (the conformance checker fails the test on any mismatch).
    t.equal((await createTestClient(t, intents, loaded.document).post('/quote/v2', body)).status, 200)
    const pontis = createPontisClient({ baseUrl: intents })
    const quote = await pontis.getQuote(body)
    t.same(flow.legs(quote), expectedLegs[flow.name], 'the swap legs the quote routes through')
    const minimum = BigInt(quote.details.currencyOut.minimumAmount)
    t.ok(minimum > 0n, `the quote guarantees ${minimum}`)
    const before = await balanceOf(flow.to.chainId, recipient, flow.to.currency)
    const result = await pontis.executeQuote(quote, [viemWalletAdapter(walletOf(user, flow.from.chainId))], {
      pollIntervalMs: 250,
      timeoutMs: 180_000,
    })
    t.equal(result.status.status, 'success', 'the request reaches success')
    const received = (await balanceOf(flow.to.chainId, recipient, flow.to.currency)) - before
    t.ok(received >= minimum, `the recipient got ${received}, at least minimumAmount ${minimum}`)
  })

  t.test(`Relay SDK: ${flow.name}`, async (t) => {
    const user = USERS[(2 * index + 1) % USERS.length] as DevAccount
    if (flow.thin) await fundThin(user.address, sdkAmount(flow))
    const recipient = freshAddress()
    const wallet = walletOf(user, flow.from.chainId)
    const quote: Execute = await relay().actions.getQuote(
      {
        chainId: flow.from.chainId,
        toChainId: flow.to.chainId,
        currency: flow.from.currency,
        toCurrency: flow.to.currency,
        amount: sdkAmount(flow).toString(),
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    t.same(
      flow.legs(quote as unknown as Pick<QuoteResponse, 'details'>),
      expectedLegs[flow.name],
      'the swap legs the quote routes through',
    )
    const minimum = BigInt(quote.details?.currencyOut?.minimumAmount ?? '0')
    t.ok(minimum > 0n, `the quote guarantees ${minimum}`)
    const before = await balanceOf(flow.to.chainId, recipient, flow.to.currency)
    const txHashes: Hash[] = []
    const { data } = await relay()
      .actions.execute({
        quote,
        wallet,
        onProgress(progress) {
          for (const { txHash } of progress.txHashes ?? [])
            if (!txHashes.includes(txHash as Hash)) txHashes.push(txHash as Hash)
        },
      })
      .catch(async (error: unknown) => {
        // What the service said about the request, so a failure names its cause.
        const status = await fetch(`${intents}/intents/status/v3?requestId=${requestIdOf(quote)}`)
        throw new Error(`${String(error)}; the request's status: ${await status.text()}`)
      })
    t.ok(
      data.steps.every((step) => (step.items ?? []).every((item) => item.status === 'complete')),
      'the SDK completed every step item',
    )
    // The SDK stops once the swap is mined; the service follows it (a same-chain swap is stored too).
    const status = await finalStatus(t, requestIdOf(quote))
    t.equal(status.status, 'success', 'the request reaches success')
    const received = (await balanceOf(flow.to.chainId, recipient, flow.to.currency)) - before
    t.ok(received >= minimum, `the recipient got ${received}, at least minimumAmount ${minimum}`)
  })
}

t.test('every price source stopped: quotes answer 503 PRICE_FETCH_FAILED, never a stale price', async (t) => {
  const api = createTestClient(t, intents, loaded.document)
  const body = {
    user: USERS[0]?.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: EVM_NATIVE,
    destinationCurrency: EVM_NATIVE,
    amount: '100000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  t.equal((await api.post('/quote/v2', body)).status, 200, 'the feeds price it while they are fresh')
  // `local` prices every currency from the devnet's Chainlink-interface feeds on 31337, whose age
  // limit (configs/prices.local.json) is a year. The feeds stop updating and a year and a day passes.
  const { client } = chainOf(31337)
  await client.request({ method: 'evm_increaseTime' as never, params: [366 * 24 * 3600] as never })
  await client.request({ method: 'evm_mine' as never, params: [] as never })
  // Prices are cached for a couple of seconds at most; then no fresh price is left.
  const refused = await waitFor(
    'a quote to stop pricing from the stale feeds',
    () => api.post('/quote/v2', body),
    { timeoutMs: 30_000, intervalMs: 250, until: (answer) => answer.status !== 200 },
  )
  for (const [path, answer] of [
    ['/quote/v2', refused],
    ['/price', await api.post('/price', body)],
    ['/quote/v2 again', await api.post('/quote/v2', body)],
  ] as const) {
    t.equal(answer.status, 503, `${path}: 503`)
    t.match(
      answer.body,
      { errorCode: 'PRICE_FETCH_FAILED', message: /No fresh agreeing USD price for ETH .*is stale/ },
      `${path}: PRICE_FETCH_FAILED, naming the stale feed`,
    )
  }
  // The operator's feeds publish new rounds (the same answers, updated now): quotes work again.
  const admin = walletOf(USERS[3] as DevAccount, 31337)
  for (const feed of [DEVNET_FEEDS.eth, DEVNET_FEEDS.usdc]) {
    const [, answer] = await client.readContract({
      address: feed,
      abi: mockV3AggregatorAbi,
      functionName: 'latestRoundData',
    })
    const hash = await admin.writeContract({
      address: feed,
      abi: mockV3AggregatorAbi,
      functionName: 'updateAnswer',
      args: [answer],
    })
    await client.waitForTransactionReceipt({ hash })
  }
  const back = await waitFor(
    'a quote to price again from the fresh rounds',
    () => api.post('/quote/v2', body),
    { timeoutMs: 30_000, intervalMs: 250, until: (answer) => answer.status === 200 },
  )
  t.equal(back.status, 200, 'fresh rounds price quotes again')
})

t.test('npm start stops cleanly', async (t) => {
  stopping ??= stack.stop()
  const code = await within('npm start to exit after SIGTERM', stopping, {
    lastSeen: () => `output:\n${stack.output().slice(-4000)}`,
  })
  t.equal(code, '0')
})
