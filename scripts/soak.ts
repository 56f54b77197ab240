/**
 * The soak run of issue 22 ("Proof: a soak run on the devnet"): the devnet (anvil 31337 and 31338,
 * the SVM chain, the Bitcoin regtest simulator) and the intent service as its own process on a
 * PostgreSQL schema, the solver starting from a modest EVM balance; then several hundred requests
 * across three families in both directions (EVM <-> EVM, EVM <-> SVM, EVM <-> Bitcoin), some with
 * app fees, some through deposit addresses, each executed as a user would with the partner client
 * (`@pontis/client`) and followed until it ends. Optionally the service is SIGKILLed halfway and
 * restarted on the same store and port.
 *
 * At the end it checks the books and prints what it found:
 * - every request ends in `success`, or its quote was refused with a catalogued errorCode (4xx);
 * - no quote was issued that the solver could not fill (every executed quote ended `success`);
 * - every filled request was repaid (or its deposit address swept), exactly `amountIn` less its app
 *   fees, and after the repayment passes the depositories hold only what is owed to open requests
 *   plus the unclaimed app fees;
 * - the solver holds exactly what it started with plus what it was repaid, less what it paid out
 *   and its gas (EVM: every solver transaction's receipt; SVM: the stablecoin; Bitcoin: the fees of
 *   the transactions it funded, from Esplora);
 * - the app-fee ledger equals the fees the quotes charged, and each recipient claims its exact
 *   balance once (a second claim finds nothing);
 * - the solver's balances end inside their bands. The solver settings carry USDC bands on both EVM
 *   chains and the SVM chain (`SOAK_BANDS`: chain B starts below its minimum, the routes drain it
 *   further, and the SVM chain gives), and moves are executed at a second intent service, the market
 *   (its own keys, depositories, SVM vault and PGlite store; EVM and SVM chains), as the rebalancer
 *   does for an operator: every move must end `done`, and the books above count what each move took
 *   from its donor chain and what arrived.
 *
 *   npm run soak -- [--requests 300] [--kill-at 150]
 *
 * Exits 1 on any violation. Needs PostgreSQL (TEST_DATABASE_URL, default the tests' database).
 */
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { parseArgs } from 'node:util'
import {
  createPontisClient,
  esploraBitcoinWallet,
  hexToBytes,
  PontisApiError,
  type PontisClient,
  PontisExecutionError,
  type QuoteRequest,
  type QuoteResponse,
  type StatusRecordV3,
  svmKeypairWallet,
  viemWalletAdapter,
} from '@pontis/client'
import type { IntentsApi, Logger } from '@pontis/core'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_SOLVER,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  DEPOSITORY_ADDRESS,
  type Devnet,
  type DevnetChain,
  SOLVER,
  STABLECOIN_ADDRESS,
  SVM_DEVNET_CHAIN_ID,
  SVM_FUNDING,
  SVM_SOLVER,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  startDevnet,
  svmAssociatedTokenAddress,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument, type OpenApiDocument } from '@pontis/http'
import { ConformanceChecker } from '@pontis/http/testing'
import { INTENTS_DOCUMENT_PATH } from '@pontis/intents'
import * as btc from '@scure/btc-signer'
import { Connection, PublicKey } from '@solana/web3.js'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  erc20Abi,
  type Hex,
  http,
  type PublicClient,
  parseEther,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { dropSchema, querySchema, uniqueSchema } from '../packages/intents/test/fixtures/postgres.js'
import {
  type MarketAccount,
  solverConfigWith,
  startRebalanceMarket,
} from '../packages/intents/test/fixtures/rebalance-market.js'
import {
  processEnvironment,
  type ServiceProcess,
  serviceWorkingDirectory,
  startServiceProcess,
} from '../packages/intents/test/fixtures/service-process.js'
import { waitFor } from '../test/helpers/wait.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const EVM_A = 31337
const EVM_B = 31338
const SVM = SVM_DEVNET_CHAIN_ID
const BTC = BITCOIN_DEVNET_CHAIN_ID

const USDC = (whole: number) => BigInt(whole) * 10n ** 6n

/** What the solver starts with on each EVM chain: modest, so liquidity limits are met on the way. */
export const SOAK_SOLVER_START = { native: parseEther('8'), stablecoin: 4_000n * 10n ** 6n } as const

/** One balance the books follow: a chain, a currency and an owner. */
export interface BookKey {
  readonly chainId: number
  readonly currency: string
}

/** One band of the solver settings' `inventory` (smallest units). */
export interface SoakBand {
  readonly chainId: number
  readonly currency: string
  readonly minAmount: bigint
  readonly targetAmount: bigint
  readonly maxAmount: bigint
  /** Most moved into the band per hour. */
  readonly rebalanceBudget: bigint
}

/**
 * The bands of the soak: USDC on both EVM chains and on the SVM chain. The SVM chain, where the
 * solver holds the devnet's 1 000 000 USDC, has the most above its target (5 000), so it is the
 * donor; chain A, which the routes fill up (its deposits are repaid there), may give what it holds
 * above 2 000. Chain B starts below its minimum and the routes drain it (more is filled there than
 * deposited), so moves into it happen from the first rebalancing pass on and again whenever it
 * falls below its minimum.
 */
export const SOAK_BANDS: readonly SoakBand[] = [
  {
    chainId: SVM,
    currency: SVM_STABLECOIN.address,
    minAmount: SVM_FUNDING.solverStablecoin - USDC(10_000),
    targetAmount: SVM_FUNDING.solverStablecoin - USDC(5_000),
    maxAmount: SVM_FUNDING.solverStablecoin + USDC(10_000),
    rebalanceBudget: 0n,
  },
  {
    chainId: EVM_A,
    currency: STABLECOIN_ADDRESS,
    minAmount: USDC(1_000),
    targetAmount: USDC(2_000),
    maxAmount: USDC(1_000_000),
    rebalanceBudget: 0n,
  },
  {
    chainId: EVM_B,
    currency: STABLECOIN_ADDRESS,
    minAmount: SOAK_SOLVER_START.stablecoin + USDC(1),
    targetAmount: SOAK_SOLVER_START.stablecoin + USDC(300),
    maxAmount: USDC(1_000_000),
    rebalanceBudget: USDC(5_000),
  },
]

/** The most the market may take out of a move (`rebalance.maxFeeBps`). */
const MOVE_MAX_FEE_BPS = 300

export interface SoakOptions {
  /** How many requests to send (default 300). */
  readonly requests?: number
  /** SIGKILL the service once this many requests were started, then restart it on the same store. */
  readonly killAt?: number
  /** Progress lines (default none). */
  readonly log?: (line: string) => void
  /** The solver's bands (default {@link SOAK_BANDS}); its balances must end inside them. */
  readonly bands?: readonly SoakBand[]
  /** How long to wait for the last repayments after the last request ended (default 300 s). */
  readonly settleTimeoutMs?: number
}

/** How one request ended. */
export interface SoakOutcome {
  readonly index: number
  readonly route: string
  /** `success`, `refused:<errorCode>`, `ended:<status>` or `error:<message>`. */
  readonly outcome: string
  readonly requestId?: string
  readonly quote?: QuoteResponse
  readonly appFee?: { recipient: Address; bps: string }
  readonly depositAddress?: boolean
}

/** One invariant and whether it held. */
export interface SoakCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface SoakReport {
  readonly requests: number
  readonly durationMs: number
  readonly killedAt: number | undefined
  readonly outcomes: Record<string, number>
  readonly byRoute: Record<string, Record<string, number>>
  readonly checks: SoakCheck[]
  readonly violations: string[]
  /** What the solver earned per chain and currency (repaid less paid out), before gas. */
  readonly solverEarned: Record<string, string>
  /** Gas (EVM, wei) and fees (Bitcoin, sats) the solver paid, per chain. */
  readonly solverGas: Record<string, string>
  /** App fees charged, per chain and currency. */
  readonly appFees: Record<string, string>
  /** The rebalancing moves, as `GET /admin/rebalances` answered them at the end. */
  readonly moves: readonly IntentsApi.SolverRebalanceMove[]
  /** The bands as the last rebalancing pass found them. */
  readonly bands: readonly IntentsApi.SolverRebalanceBand[]
  readonly results: readonly SoakOutcome[]
}

interface Route {
  readonly name: string
  readonly family: 'evm' | 'svm' | 'btc'
  readonly originChainId: number
  readonly destinationChainId: number
  readonly originCurrency: string
  readonly destinationCurrency: string
  readonly amount: (index: number) => bigint
  readonly appFee?: boolean
  readonly depositAddress?: boolean
}

const variation = (index: number) => BigInt(index % 5)

/** The routes, cycled in this order: 6 of 10 start on EVM, 2 on SVM, 1 on Bitcoin, both ways each. */
const ROUTES: readonly Route[] = [
  {
    name: 'evm-a ETH -> evm-b ETH (app fee)',
    family: 'evm',
    originChainId: EVM_A,
    destinationChainId: EVM_B,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: (i) => parseEther('0.05') + variation(i) * parseEther('0.01'),
    appFee: true,
  },
  {
    name: 'evm-b ETH -> evm-a ETH',
    family: 'evm',
    originChainId: EVM_B,
    destinationChainId: EVM_A,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: (i) => parseEther('0.06') + variation(i) * parseEther('0.01'),
  },
  {
    name: 'evm-a USDC -> svm USDC',
    family: 'evm',
    originChainId: EVM_A,
    destinationChainId: SVM,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: SVM_STABLECOIN.address,
    amount: (i) => USDC(20) + variation(i) * USDC(3),
  },
  {
    name: 'svm USDC -> evm-a USDC',
    family: 'svm',
    originChainId: SVM,
    destinationChainId: EVM_A,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: (i) => USDC(25) + variation(i) * USDC(2),
  },
  {
    name: 'evm-b USDC -> evm-a USDC (app fee)',
    family: 'evm',
    originChainId: EVM_B,
    destinationChainId: EVM_A,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: (i) => USDC(30) + variation(i) * USDC(5),
    appFee: true,
  },
  {
    name: 'evm-a USDC -> btc',
    family: 'evm',
    originChainId: EVM_A,
    destinationChainId: BTC,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    amount: (i) => USDC(300) + variation(i) * USDC(10),
  },
  {
    name: 'evm-a ETH -> evm-b ETH (deposit address)',
    family: 'evm',
    originChainId: EVM_A,
    destinationChainId: EVM_B,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: (i) => parseEther('0.04') + variation(i) * parseEther('0.01'),
    depositAddress: true,
  },
  {
    name: 'btc -> evm-a USDC',
    family: 'btc',
    originChainId: BTC,
    destinationChainId: EVM_A,
    originCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    destinationCurrency: STABLECOIN_ADDRESS,
    // About 180 to 250 USDC: less than the USDC -> btc route's, so the two together do not drain
    // the solver's USDC into bitcoin (no move across currencies could bring it back into its bands).
    amount: (i) => 300_000n + variation(i) * 30_000n,
  },
  {
    name: 'evm-a USDC -> evm-b USDC',
    family: 'evm',
    originChainId: EVM_A,
    destinationChainId: EVM_B,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: (i) => USDC(40) + variation(i) * USDC(4),
  },
  {
    name: 'svm USDC -> evm-b USDC',
    family: 'svm',
    originChainId: SVM,
    destinationChainId: EVM_B,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: (i) => USDC(15) + variation(i) * USDC(2),
  },
]

const SOAK_ADMIN_TOKEN = 'soak-admin-token-0123456789abcdef'

const keyOf = (chainId: number | string, currency: string) => `${chainId}:${currency.toLowerCase()}`

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * A fetch that checks every answer of the service against openapi/intents.yaml, as the tests' client
 * does; what does not conform is collected in `problems`.
 */
function conformingFetch(document: OpenApiDocument): {
  fetch: typeof fetch
  answers(): number
  problems: string[]
} {
  const checker = new ConformanceChecker(document)
  const problems: string[] = []
  let answers = 0
  const checked: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    const request = input instanceof Request ? input : undefined
    const url = new URL(request ? request.url : String(input))
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase()
    const text = await response.clone().text()
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    let body: unknown = text === '' ? undefined : text
    if ((headers['content-type'] ?? '').includes('json') && text !== '') body = JSON.parse(text)
    const { problems: found } = checker.check({
      method,
      path: url.pathname,
      status: response.status,
      headers,
      body,
    })
    answers += 1
    for (const problem of found) problems.push(`${method} ${url.pathname} ${response.status}: ${problem}`)
    return response
  }
  return { fetch: checked, answers: () => answers, problems }
}

/** The catalogued errorCodes of openapi/intents.yaml (the `ErrorCode` enum). */
function errorCatalogue(document: OpenApiDocument): Set<string> {
  const schemas = (document as { components?: { schemas?: Record<string, { enum?: string[] }> } }).components
    ?.schemas
  const codes = schemas?.ErrorCode?.enum
  if (!codes || codes.length === 0) throw new Error('openapi/intents.yaml has no ErrorCode enum')
  return new Set(codes)
}

/** Runs the soak; answers the report (its `violations` empty when every invariant held). */
export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const total = options.requests ?? 300
  const log = options.log ?? (() => {})
  const cleanups: Array<() => Promise<unknown> | unknown> = []
  try {
    return await soak(total, options, log, cleanups)
  } finally {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {})
  }
}

async function soak(
  total: number,
  options: SoakOptions,
  log: (line: string) => void,
  cleanups: Array<() => Promise<unknown> | unknown>,
): Promise<SoakReport> {
  const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
  const { document } = loaded
  const catalogue = errorCatalogue(document)
  const conformance = conformingFetch(document)
  const devnet = await startDevnet({
    chains: [
      { chainId: EVM_A, port: 0 },
      { chainId: EVM_B, port: 0 },
    ],
    svm: { port: 0, routesPort: 0, slotIntervalMs: 40 },
    bitcoin: { port: 0, blockIntervalMs: 500 },
  })
  cleanups.push(() => devnet.stop())
  const evmChains = new Map<number, DevnetChain>(devnet.chains.map((chain) => [chain.chainId, chain]))
  const evmClients = new Map<number, PublicClient>(
    devnet.chains.map((chain) => [
      chain.chainId,
      createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) }) as PublicClient,
    ]),
  )
  const svmRpcUrl = devnet.svm?.rpcUrl as string
  const esploraUrl = devnet.bitcoin?.url as string
  const connection = new Connection(svmRpcUrl, 'confirmed')

  // The market's keys are fresh: no devnet account it would share with the soak's users.
  const marketSolver = freshAccount()
  const marketAllocator = freshAccount()
  await modestSolver(devnet, marketSolver, marketAllocator)
  const teardown = { teardown: (cleanup: () => unknown) => void cleanups.push(cleanup) }
  const market = await startRebalanceMarket(teardown, devnet, {
    document: loaded,
    logger: prefixedLogger('market', log),
    solver: marketSolver,
    allocator: marketAllocator,
    svm: true,
  })
  log(`market on ${market.url}`)
  const bands = options.bands ?? SOAK_BANDS
  const configDir = await solverConfigWith(
    teardown,
    bands.map((band) => ({
      chainId: band.chainId,
      currency: band.currency,
      minAmount: band.minAmount.toString(),
      targetAmount: band.targetAmount.toString(),
      maxAmount: band.maxAmount.toString(),
      rebalanceBudget: band.rebalanceBudget.toString(),
      rebalancePeriodSeconds: 3600,
    })),
    { apiUrl: market.url, maxFeeBps: MOVE_MAX_FEE_BPS },
  )
  const workingDirectory = await serviceWorkingDirectory(teardown, configDir)

  // Balances and chain heads before the service starts (its first rebalancing pass moves funds).
  const startBlocks = new Map<number, bigint>()
  for (const [chainId, client] of evmClients)
    startBlocks.set(chainId, await client.getBlockNumber({ cacheTime: 0 }))
  const books = bookReader(evmClients, connection, esploraUrl)
  const solverStart = await books.solver()
  const depositoryStart = await books.depositories()

  const schema = uniqueSchema('soak')
  if (!process.env.SOAK_KEEP_SCHEMA) cleanups.push(() => dropSchema(schema))
  const port = await freePort()
  const env = {
    ...processEnvironment(devnet, schema),
    INTENTS_PORT: String(port),
    ADMIN_TOKEN: SOAK_ADMIN_TOKEN,
    REBALANCE_INTERVAL_MS: '2000',
  }
  let service: ServiceProcess = await startServiceProcess(env, { cwd: workingDirectory })
  const outputs: Array<() => string> = [() => service.output()]
  cleanups.push(() => service.stop())
  // SOAK_SERVICE_LOG=<file>: the service processes' logs, for a run that found something.
  const logFile = process.env.SOAK_SERVICE_LOG
  if (logFile)
    cleanups.push(() => writeFile(logFile, outputs.map((output) => output()).join('\n--- restart ---\n')))
  const baseUrl = service.url
  log(`service on ${baseUrl}, store schema ${schema}`)
  const pontis = createPontisClient({ baseUrl, fetch: conformance.fetch })

  // App-fee recipients: fresh keys, so their balances move only through their claims.
  const apps = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()))

  const plan = Array.from({ length: total }, (_, index) => ({ index, route: ROUTES[index % ROUTES.length]! }))
  const queues = {
    evm: plan.filter((item) => item.route.family === 'evm'),
    svm: plan.filter((item) => item.route.family === 'svm'),
    btc: plan.filter((item) => item.route.family === 'btc'),
  }
  const results: SoakOutcome[] = []
  let started = 0
  let killedAt: number | undefined
  let restart: Promise<void> | undefined
  const maybeKill = async () => {
    started += 1
    if (options.killAt === undefined || killedAt !== undefined || started < options.killAt) return
    killedAt = started
    log(`SIGKILL the service after ${started} requests started`)
    restart = (async () => {
      service.child.kill('SIGKILL')
      await service.exited()
      const first = service.output()
      outputs[0] = () => first
      service = await startServiceProcess(env, { cwd: workingDirectory })
      outputs.push(() => service.output())
      log(`service restarted on ${service.url}`)
    })()
    await restart
  }

  const began = Date.now()
  const lane = async (
    queue: { index: number; route: Route }[],
    run: (item: { index: number; route: Route }) => Promise<SoakOutcome>,
  ) => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      await maybeKill()
      const outcome = await run(item).catch(
        (error: unknown): SoakOutcome => ({
          index: item!.index,
          route: item!.route.name,
          outcome: `error:${(error as Error).message}`,
        }),
      )
      results.push(outcome)
      if (results.length % 25 === 0) log(`${results.length}/${total} requests ended`)
    }
  }
  const context: RunContext = { pontis, evmChains, evmClients, svmRpcUrl, esploraUrl, apps, catalogue }
  await Promise.all([
    ...USERS.map((user) => lane(queues.evm, (item) => runEvm(context, item, user.privateKey))),
    ...SVM_USERS.map((user, lane_) =>
      lane(queues.svm, (item) => runSvm(context, item, user.keypair, USERS[lane_ % USERS.length]!.address)),
    ),
    lane(queues.btc, (item) => runBtc(context, item)),
  ])
  await restart
  const durationMs = Date.now() - began
  log(`all ${total} requests ended in ${(durationMs / 1000).toFixed(1)} s`)

  // The books, once every repayment and sweep of a filled request has landed.
  const successes = results.filter((result) => result.outcome === 'success')
  const settled = await waitFor(
    'every filled request to be repaid or swept, and no solver job open',
    () =>
      querySchema<{ repaid: number; swept: number; open: number }>(
        schema,
        `SELECT (SELECT count(*)::int FROM repayments WHERE state = 'paid') AS repaid,
                (SELECT count(*)::int FROM deposit_address_sweeps WHERE state = 'swept') AS swept,
                (SELECT count(*)::int FROM solver_jobs WHERE state IN ('queued', 'signed', 'broadcast')) AS open`,
      ),
    {
      until: ([row]) => row !== undefined && row.repaid + row.swept === successes.length && row.open === 0,
      describe: (rows) => rows?.[0],
      timeoutMs: options.settleTimeoutMs ?? 300_000,
    },
  ).then(
    () => true,
    () => false,
  )
  // Then the rebalancer: no move open, and every band read by a pass that began after the last
  // repayment (from here on only moves change the solver's balances).
  const settledAt = Date.now()
  const readRebalances = async (): Promise<IntentsApi.SolverRebalances> => {
    const response = await conformance.fetch(`${baseUrl}/admin/rebalances`, {
      headers: { authorization: `Bearer ${SOAK_ADMIN_TOKEN}` },
    })
    if (!response.ok) throw new Error(`GET /admin/rebalances answered ${response.status}`)
    return (await response.json()) as IntentsApi.SolverRebalances
  }
  const rebalanced = await waitFor(
    'the rebalancer to leave no move open and every band checked',
    readRebalances,
    {
      until: (seen) =>
        seen.moves.every((move) => move.state === 'done' || move.state === 'failed') &&
        seen.bands.every(
          (band) =>
            band.checkedAt > settledAt && band.status !== 'move_planned' && band.status !== 'move_open',
        ),
      describe: (seen) =>
        seen && { bands: seen.bands, open: seen.moves.filter((move) => move.state !== 'done') },
      timeoutMs: options.settleTimeoutMs ?? 300_000,
    },
  ).catch(() => readRebalances())
  const unsettled = settled
    ? []
    : await querySchema<{ what: string }>(
        schema,
        `SELECT 'repayment ' || request_id || ' on ' || chain_id || ' ' || state AS what FROM repayments WHERE state <> 'paid'
         UNION ALL SELECT 'sweep ' || request_id || ' ' || state FROM deposit_address_sweeps WHERE state <> 'swept'
         UNION ALL SELECT kind || ' job ' || id || ' on ' || chain_id || ' ' || state || ' ' || coalesce(reason, '')
           FROM solver_jobs WHERE state NOT IN ('confirmed')`,
      )
  const checks: SoakCheck[] = []
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail })
  check(
    'every repayment and sweep finished, no solver job left open',
    settled,
    settled
      ? 'all paid'
      : unsettled.map((row) => row.what).join('; ') || 'nothing unfinished, but counts differ',
  )

  // 1. Every request ended in success or a catalogued refusal.
  const outcomes: Record<string, number> = {}
  const byRoute: Record<string, Record<string, number>> = {}
  for (const result of results) {
    outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1
    const route = byRoute[result.route] ?? {}
    byRoute[result.route] = route
    route[result.outcome] = (route[result.outcome] ?? 0) + 1
  }
  const bad = results.filter(
    (result) => result.outcome !== 'success' && !result.outcome.startsWith('refused:'),
  )
  check(
    'every request ends in success or a catalogued refusal',
    bad.length === 0 && results.length === total,
    bad.length === 0
      ? `${successes.length} success, ${total - successes.length} refused (${JSON.stringify(outcomes)})`
      : bad
          .slice(0, 5)
          .map((result) => `#${result.index} ${result.route}: ${result.outcome}`)
          .join('; '),
  )
  // 2. No quote issued that the solver could not fill.
  const issuedUnfilled = results.filter(
    (result) => result.quote !== undefined && result.outcome !== 'success',
  )
  check(
    'no quote was issued that the solver could not fill',
    issuedUnfilled.length === 0,
    `${results.filter((result) => result.quote).length} quotes issued, ${issuedUnfilled.length} not filled`,
  )

  // 3. Repayments: each filled request repaid amountIn less its app fees, or swept.
  const repayments = await querySchema<{
    request_id: string
    chain_id: string
    currency: string
    amount: string
  }>(schema, `SELECT request_id, chain_id::text, currency, amount::text FROM repayments WHERE state = 'paid'`)
  const sweeps = await querySchema<{ request_id: string; amount: string; swept_amount: string; fee: string }>(
    schema,
    `SELECT request_id, amount::text, swept_amount::text, fee::text FROM deposit_address_sweeps WHERE state = 'swept'`,
  )
  const accruals = await querySchema<{
    request_id: string
    recipient: string
    chain_id: string
    currency: string
    amount: string
  }>(schema, 'SELECT request_id, recipient, chain_id::text, currency, amount::text FROM app_fee_accruals')
  const fills = await querySchema<{ request_id: string; chain_id: string; amount: string | null }>(
    schema,
    `SELECT request_id, chain_id::text, amount::text FROM solver_jobs WHERE kind = 'fill' AND state = 'confirmed'`,
  )
  const repaidBy = new Map(repayments.map((row) => [row.request_id.toLowerCase(), row]))
  const sweptBy = new Map(sweeps.map((row) => [row.request_id.toLowerCase(), row]))
  const fillBy = new Map<string, (typeof fills)[number][]>()
  for (const fill of fills) {
    const id = fill.request_id.toLowerCase()
    fillBy.set(id, [...(fillBy.get(id) ?? []), fill])
  }
  const accruedBy = new Map<string, bigint>()
  for (const accrual of accruals)
    accruedBy.set(
      accrual.request_id.toLowerCase(),
      (accruedBy.get(accrual.request_id.toLowerCase()) ?? 0n) + BigInt(accrual.amount),
    )

  const inflow = new Map<string, bigint>()
  const outflow = new Map<string, bigint>()
  const add = (map: Map<string, bigint>, key: string, amount: bigint) =>
    map.set(key, (map.get(key) ?? 0n) + amount)
  const charged = new Map<string, bigint>()
  const repayProblems: string[] = []
  for (const result of successes) {
    const quote = result.quote as QuoteResponse
    const id = (result.requestId ?? '').toLowerCase()
    const amountIn = BigInt(quote.details.currencyIn.amount)
    const originKey = keyOf(
      quote.details.currencyIn.currency.chainId,
      quote.details.currencyIn.currency.address,
    )
    const appFee = result.appFee ? BigInt(quote.fees.app.amount) : 0n
    if (result.appFee)
      add(charged, keyOf(quote.fees.app.currency.chainId, quote.fees.app.currency.address), appFee)
    if (result.depositAddress) {
      const sweep = sweptBy.get(id)
      if (!sweep) repayProblems.push(`${id}: no sweep`)
      else {
        if (BigInt(sweep.amount) !== amountIn || BigInt(sweep.swept_amount) + BigInt(sweep.fee) !== amountIn)
          repayProblems.push(`${id}: swept ${sweep.swept_amount} + fee ${sweep.fee} for ${amountIn}`)
        add(inflow, originKey, BigInt(sweep.swept_amount))
      }
    } else {
      const repaid = repaidBy.get(id)
      const want = amountIn - (accruedBy.get(id) ?? 0n)
      if (!repaid) repayProblems.push(`${id}: no repayment`)
      else {
        if (BigInt(repaid.amount) !== want) repayProblems.push(`${id}: repaid ${repaid.amount}, owed ${want}`)
        add(inflow, originKey, BigInt(repaid.amount))
      }
    }
    const paid = fillBy.get(id) ?? []
    const out = BigInt(quote.details.currencyOut.amount)
    if (paid.length !== 1 || (paid[0]?.amount !== null && BigInt(paid[0]?.amount ?? 0) !== out))
      repayProblems.push(`${id}: fills ${JSON.stringify(paid)} for ${out}`)
    add(
      outflow,
      keyOf(quote.details.currencyOut.currency.chainId, quote.details.currencyOut.currency.address),
      out,
    )
  }
  // Rebalancing: what each move took from its donor chain and what arrived on the short one.
  const moveRows = await querySchema<{
    id: string
    from_chain_id: string
    from_currency: string
    to_chain_id: string
    to_currency: string
    state: string
    received: string | null
    amount_in: string | null
  }>(
    schema,
    `SELECT id, from_chain_id::text, from_currency, to_chain_id::text, to_currency, state, received::text,
            quote->>'amountIn' AS amount_in FROM rebalances`,
  )
  const rebalancedBy = new Map<string, bigint>()
  for (const move of moveRows.filter((row) => row.state === 'done')) {
    const sent = BigInt(move.amount_in ?? 0)
    const received = BigInt(move.received ?? 0)
    add(outflow, keyOf(move.from_chain_id, move.from_currency), sent)
    add(inflow, keyOf(move.to_chain_id, move.to_currency), received)
    add(rebalancedBy, keyOf(move.from_chain_id, move.from_currency), -sent)
    add(rebalancedBy, keyOf(move.to_chain_id, move.to_currency), received)
  }
  const notDone = moveRows.filter((row) => row.state !== 'done')
  check(
    'every rebalancing move ended done',
    notDone.length === 0,
    notDone.length === 0
      ? `${moveRows.length} moves done: ${describeAmounts(rebalancedBy)}`
      : notDone
          .slice(0, 5)
          .map((row) => `${row.id} ${row.state}`)
          .join('; '),
  )

  check(
    'every filled request was repaid exactly once: amountIn less its app fees (or swept, less the sweep fee)',
    repayProblems.length === 0 && repayments.length + sweeps.length === successes.length,
    repayProblems.length === 0
      ? `${repayments.length} repayments, ${sweeps.length} sweeps for ${successes.length} fills`
      : repayProblems.slice(0, 5).join('; '),
  )

  // 4. App-fee ledger totals equal the fees charged.
  const ledger = new Map<string, bigint>()
  for (const accrual of accruals)
    add(ledger, keyOf(accrual.chain_id, accrual.currency), BigInt(accrual.amount))
  const appFees: Record<string, string> = {}
  for (const [key, amount] of charged) appFees[key] = amount.toString()
  check(
    'app-fee ledger totals equal the fees charged',
    sameAmounts(ledger, charged),
    `ledger ${JSON.stringify(Object.fromEntries([...ledger].map(([k, v]) => [k, v.toString()])))}, charged ${JSON.stringify(appFees)}`,
  )

  // 5. The depositories hold only what open requests are owed plus the unclaimed app fees.
  const depositoryMid = await books.depositories()
  const open = await querySchema<{ n: number }>(
    schema,
    `SELECT count(*)::int AS n FROM requests WHERE status NOT IN ('success', 'failure', 'refund')`,
  ).catch(() => [{ n: -1 }])
  check(
    'after the repayment passes, the depositories hold only what open requests are owed plus unclaimed app fees',
    open[0]?.n === 0 && sameDelta(depositoryStart, depositoryMid, ledger),
    `open requests ${open[0]?.n}; held beyond the start: ${describeDelta(depositoryStart, depositoryMid)}`,
  )

  // 6. Each app-fee recipient claims its exact balance once.
  const claimProblems: string[] = []
  for (const app of apps) {
    const { balances } = await pontis.getAppFeeBalances(app.address)
    const expected = accruals.filter(
      (accrual) => accrual.recipient.toLowerCase() === app.address.toLowerCase(),
    )
    for (const balance of balances) {
      const owed = expected
        .filter(
          (row) =>
            keyOf(row.chain_id, row.currency) === keyOf(balance.currency.chainId, balance.currency.address),
        )
        .reduce((sum, row) => sum + BigInt(row.amount), 0n)
      if (BigInt(balance.amount) !== owed)
        claimProblems.push(`${app.address}: balance ${balance.amount}, ledger ${owed}`)
      const client = evmClients.get(balance.currency.chainId)
      if (!client) {
        claimProblems.push(`${app.address}: a balance on ${balance.currency.chainId}`)
        continue
      }
      const before = await books.evmBalance(client, app.address, balance.currency.address)
      const claim = await pontis.claimAppFees(
        app.address,
        { chainId: balance.currency.chainId, currency: balance.currency.address, recipient: app.address },
        (message) => app.signMessage({ message }),
      )
      const [paid] = await waitFor(
        `the claim ${claim.claimId} to be paid`,
        () =>
          querySchema<{ state: string }>(schema, 'SELECT state FROM app_fee_claims WHERE id = $1', [
            claim.claimId,
          ]),
        {
          until: (rows) => rows[0]?.state === 'paid' || rows[0]?.state === 'failed',
          describe: (rows) => rows,
        },
      )
      const got = (await books.evmBalance(client, app.address, balance.currency.address)) - before
      if (paid?.state !== 'paid' || got !== BigInt(balance.amount))
        claimProblems.push(`${app.address}: claim ${paid?.state}, got ${got} of ${balance.amount}`)
      const again = await pontis
        .claimAppFees(
          app.address,
          { chainId: balance.currency.chainId, currency: balance.currency.address, recipient: app.address },
          (message) => app.signMessage({ message }),
        )
        .then(
          () => 'paid again',
          (error: unknown) => (error instanceof PontisApiError ? error.errorCode : String(error)),
        )
      if (again !== 'INSUFFICIENT_FUNDS')
        claimProblems.push(`${app.address}: a second claim answered ${again}`)
    }
    if (balances.length === 0 && expected.length > 0)
      claimProblems.push(`${app.address}: no balance, ledger has fees`)
  }
  const depositoryEnd = await books.depositories()
  check(
    'each app-fee recipient claimed its exact balance once; the depositories are back where they started',
    claimProblems.length === 0 && sameDelta(depositoryStart, depositoryEnd, new Map()),
    claimProblems.length === 0
      ? `${accruals.length} fees claimed by ${apps.length} recipients; depositories beyond the start: ${describeDelta(depositoryStart, depositoryEnd)}`
      : claimProblems.slice(0, 5).join('; '),
  )

  // 7. The solver holds what it started with, plus what it was repaid, less what it paid out and its gas.
  const gas = new Map<string, bigint>()
  for (const [chainId, client] of evmClients)
    gas.set(
      keyOf(chainId, NATIVE),
      await evmGas(client, SOLVER.address, (startBlocks.get(chainId) ?? 0n) + 1n),
    )
  // Bitcoin: the fees of the transactions the solver funded (fills), and of its repayments, whose
  // fee comes out of the repaid leg (the vault pays it from what it hands back).
  const btcRepayments = await querySchema<{ transaction_id: string }>(
    schema,
    `SELECT DISTINCT transaction_id FROM repayments WHERE state = 'paid' AND chain_id = $1`,
    [BTC],
  )
  let repaymentFees = 0n
  for (const row of btcRepayments) repaymentFees += await bitcoinFee(esploraUrl, row.transaction_id)
  gas.set(
    keyOf(BTC, BITCOIN_NATIVE_CURRENCY_ID),
    (await bitcoinFeesPaid(esploraUrl, BITCOIN_SOLVER.address)) + repaymentFees,
  )
  const solverEnd = await books.solver()
  const solverProblems: string[] = []
  const solverEarned: Record<string, string> = {}
  for (const [key, start] of solverStart) {
    const expected = start + (inflow.get(key) ?? 0n) - (outflow.get(key) ?? 0n) - (gas.get(key) ?? 0n)
    solverEarned[key] = ((inflow.get(key) ?? 0n) - (outflow.get(key) ?? 0n)).toString()
    const actual = solverEnd.get(key) ?? 0n
    if (actual !== expected)
      solverProblems.push(
        `${key}: holds ${actual}, the ledger says ${expected} (off by ${actual - expected})`,
      )
  }
  check(
    'the solver holds what it started with plus its fees, less gas (ledger and receipts)',
    solverProblems.length === 0,
    solverProblems.length === 0 ? `${solverStart.size} balances exact` : solverProblems.join('; '),
  )

  check(
    'every answer of the service conforms to openapi/intents.yaml',
    conformance.problems.length === 0,
    conformance.problems.length === 0
      ? `${conformance.answers()} answers checked`
      : conformance.problems.slice(0, 5).join('; '),
  )

  // 8. The solver's balances, read from the chains, inside their bands.
  const outside = bands.flatMap((band) => {
    const key = keyOf(band.chainId, band.currency)
    const balance = solverEnd.get(key) ?? 0n
    if (balance < band.minAmount) return [`${key} holds ${balance}, below its minimum ${band.minAmount}`]
    if (balance > band.maxAmount) return [`${key} holds ${balance}, above its maximum ${band.maxAmount}`]
    return []
  })
  check(
    'the solver balances end inside their bands',
    outside.length === 0,
    outside.length === 0
      ? bands
          .map(
            (band) =>
              `${keyOf(band.chainId, band.currency)} ${solverEnd.get(keyOf(band.chainId, band.currency))}`,
          )
          .join(', ')
      : `${outside.join('; ')} (the last pass: ${rebalanced.bands.map((band) => `${band.chainId} ${band.status}`).join(', ')})`,
  )

  const violations = checks.filter((item) => !item.ok).map((item) => `${item.name}: ${item.detail}`)
  return {
    requests: total,
    durationMs,
    killedAt,
    outcomes,
    byRoute,
    checks,
    violations,
    solverEarned,
    solverGas: Object.fromEntries([...gas].map(([key, amount]) => [key, amount.toString()])),
    appFees,
    moves: rebalanced.moves,
    bands: rebalanced.bands,
    results,
  }
}

interface RunContext {
  readonly pontis: PontisClient
  readonly evmChains: ReadonlyMap<number, DevnetChain>
  readonly evmClients: ReadonlyMap<number, PublicClient>
  readonly svmRpcUrl: string
  readonly esploraUrl: string
  readonly apps: readonly ReturnType<typeof privateKeyToAccount>[]
  readonly catalogue: ReadonlySet<string>
}

const EXECUTE = { pollIntervalMs: 250, timeoutMs: 300_000 } as const

/** Asks for a quote; a catalogued 4xx is a refusal, the service being away (killed) is retried. */
async function quoteOrRefusal(
  context: RunContext,
  request: QuoteRequest,
): Promise<{ quote: QuoteResponse } | { refused: string }> {
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      return { quote: await context.pontis.getQuote(request) }
    } catch (error) {
      if (!(error instanceof PontisApiError)) throw error
      if (error.status === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        continue
      }
      const code = error.errorCode ?? ''
      if (error.status >= 400 && error.status < 500 && context.catalogue.has(code)) return { refused: code }
      throw new Error(`quote answered ${error.status} ${code}: ${error.message}`)
    }
  }
}

function endedOutcome(error: unknown): string {
  if (error instanceof PontisExecutionError)
    return `ended:${error.status?.status ?? error.kind}${error.status ? ` (${error.status.failReason})` : ''}`
  return `error:${(error as Error).message}`
}

function requestOf(route: Route, index: number, user: string, recipient: string): QuoteRequest {
  return {
    user,
    recipient,
    originChainId: route.originChainId,
    destinationChainId: route.destinationChainId,
    originCurrency: route.originCurrency,
    destinationCurrency: route.destinationCurrency,
    amount: route.amount(index).toString(),
    tradeType: 'EXACT_INPUT',
  }
}

async function runEvm(
  context: RunContext,
  item: { index: number; route: Route },
  privateKey: Hex,
): Promise<SoakOutcome> {
  const { route, index } = item
  const account = privateKeyToAccount(privateKey)
  const chain = context.evmChains.get(route.originChainId) as DevnetChain
  const recipient =
    route.destinationChainId === SVM
      ? (SVM_USERS[index % SVM_USERS.length]?.address as string)
      : route.destinationChainId === BTC
        ? BITCOIN_USERS.p2tr.address
        : (USERS[(index + 1) % USERS.length]?.address as string)
  const app = context.apps[index % context.apps.length]!
  const appFee = route.appFee ? { recipient: app.address, bps: String(25 + (index % 4) * 25) } : undefined
  const request: QuoteRequest = {
    ...requestOf(route, index, account.address, recipient),
    ...(appFee ? { appFees: [{ recipient: appFee.recipient, fee: appFee.bps }] } : {}),
    ...(route.depositAddress ? { useDepositAddress: true, refundTo: account.address } : {}),
  }
  const base = {
    index,
    route: route.name,
    ...(appFee ? { appFee } : {}),
    ...(route.depositAddress ? { depositAddress: true } : {}),
  }
  const answer = await quoteOrRefusal(context, request)
  if ('refused' in answer) return { ...base, outcome: `refused:${answer.refused}` }
  const { quote } = answer
  const requestId = quote.steps[0]?.requestId as string
  const wallet = createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) })
  try {
    if (route.depositAddress) {
      const to = quote.steps[0]?.depositAddress as Address
      const client = context.evmClients.get(route.originChainId) as PublicClient
      const hash = await wallet.sendTransaction({ to, value: BigInt(quote.details.currencyIn.amount) })
      await client.waitForTransactionReceipt({ hash })
      const status = await followStatus(context.pontis, requestId)
      return {
        ...base,
        requestId,
        quote,
        outcome: status.status === 'success' ? 'success' : `ended:${status.status}`,
      }
    }
    await context.pontis.executeQuote(quote, [viemWalletAdapter(wallet)], EXECUTE)
    return { ...base, requestId, quote, outcome: 'success' }
  } catch (error) {
    return { ...base, requestId, quote, outcome: endedOutcome(error) }
  }
}

async function runSvm(
  context: RunContext,
  item: { index: number; route: Route },
  keypair: (typeof SVM_USERS)[number]['keypair'],
  recipient: string,
): Promise<SoakOutcome> {
  const { route, index } = item
  const base = { index, route: route.name }
  const answer = await quoteOrRefusal(
    context,
    requestOf(route, index, keypair.publicKey.toBase58(), recipient),
  )
  if ('refused' in answer) return { ...base, outcome: `refused:${answer.refused}` }
  const { quote } = answer
  const requestId = quote.steps[0]?.requestId as string
  try {
    await context.pontis.executeQuote(quote, [svmKeypairWallet(keypair, context.svmRpcUrl)], EXECUTE)
    return { ...base, requestId, quote, outcome: 'success' }
  } catch (error) {
    return { ...base, requestId, quote, outcome: endedOutcome(error) }
  }
}

async function runBtc(context: RunContext, item: { index: number; route: Route }): Promise<SoakOutcome> {
  const { route, index } = item
  const base = { index, route: route.name }
  const user = BITCOIN_USERS.p2wpkh
  const privateKey = user.keypair.privateKey as Uint8Array
  const answer = await quoteOrRefusal(
    context,
    requestOf(route, index, user.address, USERS[index % USERS.length]?.address as string),
  )
  if ('refused' in answer) return { ...base, outcome: `refused:${answer.refused}` }
  const { quote } = answer
  const requestId = quote.steps[0]?.requestId as string
  const wallet = esploraBitcoinWallet({
    esploraUrl: context.esploraUrl,
    async signPsbt(psbt) {
      const transaction = btc.Transaction.fromPSBT(hexToBytes(psbt), { allowUnknownOutputs: true })
      transaction.sign(privateKey)
      transaction.finalize()
      return transaction.hex
    },
  })
  try {
    await context.pontis.executeQuote(quote, [wallet], EXECUTE)
    return { ...base, requestId, quote, outcome: 'success' }
  } catch (error) {
    return { ...base, requestId, quote, outcome: endedOutcome(error) }
  }
}

/** Follows a request (a deposit-address one: the user only sent a transfer) until it is final; the service may be away for a while. */
function followStatus(pontis: PontisClient, requestId: string): Promise<StatusRecordV3> {
  return waitFor(
    `request ${requestId} to be final`,
    () => pontis.getStatus(requestId).catch(() => undefined),
    {
      until: (seen) =>
        seen !== undefined && ['success', 'failure', 'refund', 'fallback'].includes(seen.status),
      describe: (seen) => seen?.status,
      timeoutMs: 300_000,
    },
  ) as Promise<StatusRecordV3>
}

/**
 * Leaves the solver a modest balance on each EVM chain: its ether set to {@link SOAK_SOLVER_START},
 * the rest of its stablecoin sent to the market's solver, whose fills it pays. The market's keys get
 * ether for their gas.
 */
async function modestSolver(
  devnet: Devnet,
  marketSolver: MarketAccount,
  marketAllocator: MarketAccount,
): Promise<void> {
  const setBalance = (client: PublicClient, address: Address, amount: bigint) =>
    client.request({
      method: 'anvil_setBalance' as never,
      params: [address, `0x${amount.toString(16)}`] as never,
    })
  for (const chain of devnet.chains) {
    const client = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) }) as PublicClient
    const wallet = createWalletClient({
      account: privateKeyToAccount(SOLVER.privateKey),
      chain: chain.chain,
      transport: http(chain.rpcUrl),
    })
    const held = await client.readContract({
      address: STABLECOIN_ADDRESS,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [SOLVER.address],
    })
    const hash = await wallet.writeContract({
      address: STABLECOIN_ADDRESS,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [marketSolver.address, held - SOAK_SOLVER_START.stablecoin],
    })
    await client.waitForTransactionReceipt({ hash })
    await setBalance(client, SOLVER.address, SOAK_SOLVER_START.native)
    await setBalance(client, marketSolver.address, parseEther('100'))
    await setBalance(client, marketAllocator.address, parseEther('10'))
  }
}

interface Books {
  evmBalance(client: PublicClient, owner: Address, currency: string): Promise<bigint>
  /** The solver's balances, by chain and currency. */
  solver(): Promise<Map<string, bigint>>
  /** The depositories' balances (EVM depository, SVM vault, Bitcoin vault), by chain and currency. */
  depositories(): Promise<Map<string, bigint>>
}

function bookReader(
  evmClients: ReadonlyMap<number, PublicClient>,
  connection: Connection,
  esploraUrl: string,
): Books {
  const evmBalance = (client: PublicClient, owner: Address, currency: string): Promise<bigint> =>
    currency === NATIVE
      ? client.getBalance({ address: owner })
      : client.readContract({
          address: currency as Address,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [owner],
        })
  const svmToken = async (owner: string): Promise<bigint> => {
    const account = new PublicKey(svmAssociatedTokenAddress(owner, SVM_STABLECOIN.address))
    if (!(await connection.getAccountInfo(account, 'confirmed'))) return 0n
    return BigInt((await connection.getTokenAccountBalance(account, 'confirmed')).value.amount)
  }
  const sats = async (address: string): Promise<bigint> => {
    const stats = (await (await fetch(`${esploraUrl}/address/${address}`)).json()) as {
      chain_stats: { funded_txo_sum: number; spent_txo_sum: number }
      mempool_stats: { funded_txo_sum: number; spent_txo_sum: number }
    }
    return (
      BigInt(stats.chain_stats.funded_txo_sum) -
      BigInt(stats.chain_stats.spent_txo_sum) +
      BigInt(stats.mempool_stats.funded_txo_sum) -
      BigInt(stats.mempool_stats.spent_txo_sum)
    )
  }
  const of = async (evmOwner: Address, svmOwner: string, btcOwner: string) => {
    const balances = new Map<string, bigint>()
    for (const [chainId, client] of evmClients)
      for (const currency of [NATIVE, STABLECOIN_ADDRESS])
        balances.set(keyOf(chainId, currency), await evmBalance(client, evmOwner, currency))
    balances.set(keyOf(SVM, SVM_STABLECOIN.address), await svmToken(svmOwner))
    balances.set(keyOf(BTC, BITCOIN_NATIVE_CURRENCY_ID), await sats(btcOwner))
    return balances
  }
  return {
    evmBalance,
    solver: () => of(SOLVER.address, SVM_SOLVER.address, BITCOIN_SOLVER.address),
    depositories: () => of(DEPOSITORY_ADDRESS, SVM_VAULT_OWNER.address, BITCOIN_VAULT.address),
  }
}

/** Gas the solver paid on an EVM chain since `fromBlock`: every transaction it sent, from its receipt. */
async function evmGas(client: PublicClient, solver: Address, fromBlock: bigint): Promise<bigint> {
  // Uncached: viem keeps a block number for its polling interval (4 s), longer than a short soak.
  const head = await client.getBlockNumber({ cacheTime: 0 })
  let spent = 0n
  for (let number = fromBlock; number <= head; number += 1n) {
    const block = await client.getBlock({ blockNumber: number, includeTransactions: true })
    for (const transaction of block.transactions) {
      if (transaction.from.toLowerCase() !== solver.toLowerCase()) continue
      const receipt = await client.getTransactionReceipt({ hash: transaction.hash })
      spent += receipt.gasUsed * receipt.effectiveGasPrice
    }
  }
  return spent
}

interface EsploraTx {
  txid: string
  fee: number
  vin: { prevout: { scriptpubkey_address?: string } | null }[]
}

/** Fees of the Bitcoin transactions `address` funded (any input of its own), after the devnet's funding. */
async function bitcoinFeesPaid(esploraUrl: string, address: string): Promise<bigint> {
  let fees = 0n
  let last: string | undefined
  for (;;) {
    const page = (await (
      await fetch(`${esploraUrl}/address/${address}/txs${last ? `/chain/${last}` : ''}`)
    ).json()) as EsploraTx[]
    if (page.length === 0) break
    for (const tx of page)
      if (tx.vin.some((input) => input.prevout?.scriptpubkey_address === address)) fees += BigInt(tx.fee)
    const next = page[page.length - 1]?.txid
    if (next === last || page.length < 25) break
    last = next
  }
  return fees
}

async function bitcoinFee(esploraUrl: string, txid: string): Promise<bigint> {
  return BigInt(((await (await fetch(`${esploraUrl}/tx/${txid}`)).json()) as EsploraTx).fee)
}

function describeAmounts(amounts: ReadonlyMap<string, bigint>): string {
  return (
    [...amounts].map(([key, amount]) => `${key} ${amount > 0n ? '+' : ''}${amount}`).join(', ') ||
    'nothing moved'
  )
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1
  return counts
}

/** A fresh key, funded by the soak (see {@link modestSolver}). */
function freshAccount(): MarketAccount {
  const privateKey = generatePrivateKey()
  return { privateKey, address: privateKeyToAccount(privateKey).address }
}

/** A logger that hands warnings and errors to `log`, prefixed with `who`. */
function prefixedLogger(who: string, log: (line: string) => void): Logger {
  const line = (level: string) => (message: string, fields?: unknown) =>
    log(`${who} ${level}: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`)
  return { debug: () => {}, info: () => {}, warn: line('warn'), error: line('error') }
}

function sameAmounts(left: ReadonlyMap<string, bigint>, right: ReadonlyMap<string, bigint>): boolean {
  const keys = new Set([...left.keys(), ...right.keys()])
  return [...keys].every((key) => (left.get(key) ?? 0n) === (right.get(key) ?? 0n))
}

function sameDelta(
  start: ReadonlyMap<string, bigint>,
  end: ReadonlyMap<string, bigint>,
  owed: ReadonlyMap<string, bigint>,
): boolean {
  const keys = new Set([...start.keys(), ...end.keys(), ...owed.keys()])
  return [...keys].every((key) => (end.get(key) ?? 0n) - (start.get(key) ?? 0n) === (owed.get(key) ?? 0n))
}

function describeDelta(start: ReadonlyMap<string, bigint>, end: ReadonlyMap<string, bigint>): string {
  const moved = [...end].filter(([key, amount]) => amount !== (start.get(key) ?? 0n))
  return moved.length === 0
    ? 'nothing'
    : moved.map(([key, amount]) => `${key} ${amount - (start.get(key) ?? 0n)}`).join(', ')
}

/** Prints a report as a text table (the figures BENCHMARKS.md records). */
export function formatReport(report: SoakReport): string {
  const lines = [
    `requests: ${report.requests} in ${(report.durationMs / 1000).toFixed(1)} s${report.killedAt ? `, SIGKILL + restart after ${report.killedAt} started` : ''}`,
    `outcomes: ${JSON.stringify(report.outcomes)}`,
    'by route:',
    ...Object.entries(report.byRoute).map(([route, counts]) => `  ${route}: ${JSON.stringify(counts)}`),
    `app fees charged: ${JSON.stringify(report.appFees)}`,
    `solver earned (repaid less paid out, before gas): ${JSON.stringify(report.solverEarned)}`,
    `solver gas / fees: ${JSON.stringify(report.solverGas)}`,
    'invariants:',
    ...report.checks.map((item) => `  ${item.ok ? 'ok  ' : 'FAIL'} ${item.name}: ${item.detail}`),
    `rebalancing moves: ${JSON.stringify(countBy(report.moves.map((move) => move.state)))}`,
    ...report.moves.map(
      (move) =>
        `  ${move.fromChainId} -> ${move.toChainId} ${move.state}: ${move.amount} sent, ${move.received ?? '-'} received${move.reason ? ` (${move.reason})` : ''}`,
    ),
    `bands at the last pass: ${report.bands.map((band) => `${band.chainId} ${band.symbol} ${band.balance} ${band.status}`).join(', ')}`,
  ]
  return lines.filter((line) => line !== '').join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { requests: { type: 'string', default: '300' }, 'kill-at': { type: 'string' } },
  })
  const requests = Number(values.requests)
  const killAt = values['kill-at'] === undefined ? undefined : Number(values['kill-at'])
  const report = await runSoak({
    requests,
    ...(killAt !== undefined ? { killAt } : {}),
    log: (line) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`),
  })
  console.log(formatReport(report))
  process.exit(report.violations.length === 0 ? 0 : 1)
}
