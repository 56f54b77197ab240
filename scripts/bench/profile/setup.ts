/**
 * What the profile scripts share: a two-chain anvil devnet, a generated config directory with any
 * number of EVM chains, and an in-process quote engine whose chain reads, pricing and storage are
 * timed from the outside (the engine itself is not modified: its collaborators are wrapped).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type ChainAdapter,
  type QuotingCapability,
  type ReadingCapability,
  type RegisteredChain,
  type Registry,
  silentLogger,
} from '@pontis/core'
import { type Devnet, devnetEnvironment, startDevnet, USERS } from '@pontis/devnet'
import type { ApiApp } from '@pontis/http'
import {
  createIntentsApp,
  createIntentsRuntime,
  loadSolverSettings,
  type QuotedRequest,
  QuoteEngine,
} from '@pontis/intents'
import { loadPriceSource, type PriceSource } from '../../../packages/intents/src/quote/prices.js'

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
/** The environment name of the generated configs (`chains.bench.json`, ...). */
export const BENCH_ENVIRONMENT = 'bench'
/** First chain id of the generated extra chains; they count up from here. */
export const EXTRA_CHAIN_ID_BASE = 900_000
/** The two real devnet chains every generated config starts with. */
export const ORIGIN_CHAIN_ID = 31337
export const DESTINATION_CHAIN_ID = 31338

/** Devnet user #3, native ETH 31337 → 31338, 0.1 ETH: the quote `npm run bench` measures. */
export const BASE_QUOTE = {
  user: USERS[0]!.address,
  originChainId: ORIGIN_CHAIN_ID,
  destinationChainId: DESTINATION_CHAIN_ID,
  originCurrency: '0x0000000000000000000000000000000000000000',
  destinationCurrency: '0x0000000000000000000000000000000000000000',
  amount: '100000000000000000',
  tradeType: 'EXACT_INPUT',
} as const

/** A quote body with `txs` destination calls and `appFees` app fees (distinct recipients). */
export function quoteBody(txs: number, appFees: number): Record<string, unknown> {
  const address = (index: number) => `0x${(0x1000 + index).toString(16).padStart(40, '0')}`
  return {
    ...BASE_QUOTE,
    ...(txs > 0
      ? { txs: Array.from({ length: txs }, (_, index) => ({ to: address(index), value: '0', data: '0x' })) }
      : {}),
    ...(appFees > 0
      ? {
          appFees: Array.from({ length: appFees }, (_, index) => ({
            recipient: address(100 + index),
            fee: '5',
          })),
        }
      : {}),
  }
}

/** Starts the two-chain devnet (31337, 31338) on free ports. */
export function startBenchDevnet(): Promise<Devnet> {
  return startDevnet({
    chains: [
      { chainId: ORIGIN_CHAIN_ID, port: 0 },
      { chainId: DESTINATION_CHAIN_ID, port: 0 },
    ],
  })
}

export interface BenchConfig {
  readonly configDir: string
  /** `devnetEnvironment(devnet)` plus `ENVIRONMENT=bench` and any RPC URL overrides. */
  readonly env: Record<string, string>
  remove(): Promise<void>
}

/**
 * Writes `chains.bench.json` (and its hub, prices and solver files) into a temporary directory: the
 * local config's two EVM chains, then `chainCount - 2` copies of chain B with distinct ids and
 * names. The copies point at chain B's anvil: they are configured (adapters, catalogs, caches) but
 * never quoted, which is what a deployment with many chains looks like to one quote.
 * @param rpcUrls optional RPC URL per real chain id (a counting proxy), else the anvil's own.
 */
export async function writeBenchConfig(
  devnet: Devnet,
  chainCount: number,
  rpcUrls: Readonly<Record<number, string>> = {},
): Promise<BenchConfig> {
  if (chainCount < 2) throw new Error('a bridge quote needs at least 2 chains')
  const local = JSON.parse(await readFile(join(repoRoot, 'configs/chains.local.json'), 'utf8')) as {
    chains: Array<Record<string, unknown> & { id: number; vmType: string }>
  }
  const evmChains = local.chains.filter((chain) => chain.vmType === 'evm')
  const template = evmChains.find((chain) => chain.id === DESTINATION_CHAIN_ID)
  if (!template) throw new Error('configs/chains.local.json has no chain 31338')
  const extras = Array.from({ length: chainCount - 2 }, (_, index) => {
    const id = EXTRA_CHAIN_ID_BASE + index
    return {
      ...template,
      id,
      name: `bench-${id}`,
      displayName: `Bench ${id}`,
      protocol: { v2: { ...(template.protocol as { v2: object }).v2, chainId: `bench-${id}` } },
    }
  })
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-profile-config-'))
  await writeFile(
    join(configDir, `chains.${BENCH_ENVIRONMENT}.json`),
    JSON.stringify({ plugins: { evm: '@pontis/plugin-evm' }, chains: [...evmChains, ...extras] }, null, 2),
  )
  for (const name of ['chains.hub', 'prices', 'solver']) {
    const text = await readFile(join(repoRoot, `configs/${name}.local.json`), 'utf8')
    await writeFile(join(configDir, `${name}.${BENCH_ENVIRONMENT}.json`), text)
  }
  const env: Record<string, string> = {
    ...devnetEnvironment(devnet),
    ENVIRONMENT: BENCH_ENVIRONMENT,
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'error',
  }
  if (rpcUrls[ORIGIN_CHAIN_ID]) env.LOCAL_A_RPC_URL = rpcUrls[ORIGIN_CHAIN_ID]
  if (rpcUrls[DESTINATION_CHAIN_ID]) env.LOCAL_B_RPC_URL = rpcUrls[DESTINATION_CHAIN_ID]
  return { configDir, env, remove: () => rm(configDir, { recursive: true, force: true }) }
}

/** Phases timed from outside the engine; see {@link PhaseClock}. */
export type Phase = 'chain reads' | 'pricing' | 'deposit steps' | 'storage'

/**
 * Records when each phase was busy during one quote. Phases overlap themselves (the engine reads
 * four things in parallel), so a phase's time is the union of its intervals, not their sum.
 */
export class PhaseClock {
  #intervals: Array<{ phase: Phase; start: number; end: number }> = []

  /** Runs `work`, recording its wall time under `phase`. */
  async time<T>(phase: Phase, work: () => Promise<T>): Promise<T> {
    const start = performance.now()
    try {
      return await work()
    } finally {
      this.#intervals.push({ phase, start, end: performance.now() })
    }
  }

  /** Forgets what was recorded (call before each quote). */
  reset(): void {
    this.#intervals = []
  }

  /** Busy milliseconds per phase, and of all phases together, since the last reset. */
  busyMs(): Record<Phase | 'any phase', number> {
    const union = (intervals: ReadonlyArray<{ start: number; end: number }>) => {
      const sorted = [...intervals].sort((a, b) => a.start - b.start)
      let total = 0
      let end = Number.NEGATIVE_INFINITY
      for (const interval of sorted) {
        if (interval.end <= end) continue
        total += interval.end - Math.max(interval.start, end)
        end = interval.end
      }
      return total
    }
    const of = (phase: Phase) => union(this.#intervals.filter((interval) => interval.phase === phase))
    return {
      'chain reads': of('chain reads'),
      pricing: of('pricing'),
      'deposit steps': of('deposit steps'),
      storage: of('storage'),
      'any phase': union(this.#intervals),
    }
  }
}

/** Wraps a capability object's async methods so each call is timed under `phase`. */
function timedMethods<T extends object>(
  target: T,
  methods: ReadonlyArray<{ name: string; phase: Phase }>,
  clock: PhaseClock,
): T {
  const wrapped: Record<string, unknown> = {}
  for (const { name, phase } of methods) {
    const method = (target as Record<string, unknown>)[name]
    if (typeof method !== 'function') continue
    wrapped[name] = (...args: unknown[]) =>
      clock.time(phase, () => (method as (...a: unknown[]) => Promise<unknown>).apply(target, args))
  }
  return new Proxy(target, {
    get: (object, property, receiver) =>
      typeof property === 'string' && property in wrapped
        ? wrapped[property]
        : Reflect.get(object, property, receiver),
  })
}

/** The registry as the engine sees it, with every chain's quoting and reading timed. */
function timedRegistry(registry: Registry, clock: PhaseClock): Registry {
  const chains = new Map<number, RegisteredChain>()
  const timedChain = (chain: RegisteredChain): RegisteredChain => {
    let timed = chains.get(chain.id)
    if (!timed) {
      const adapter = chain.adapter as ChainAdapter
      const quoting = adapter.quoting
        ? timedMethods<QuotingCapability>(
            adapter.quoting,
            [
              { name: 'estimateOriginCost', phase: 'chain reads' },
              { name: 'estimateFillCost', phase: 'chain reads' },
              { name: 'supportsPermit', phase: 'chain reads' },
              { name: 'buildDepositSteps', phase: 'deposit steps' },
            ],
            clock,
          )
        : undefined
      const reading = adapter.reading
        ? timedMethods<ReadingCapability>(
            adapter.reading,
            [{ name: 'readBalance', phase: 'chain reads' }],
            clock,
          )
        : undefined
      timed = {
        ...chain,
        adapter: { ...adapter, ...(quoting ? { quoting } : {}), ...(reading ? { reading } : {}) },
      }
      chains.set(chain.id, timed)
    }
    return timed
  }
  return new Proxy(registry, {
    get: (object, property) => {
      if (property === 'chain') return (chainId: number) => timedChain(object.chain(chainId))
      const value = Reflect.get(object, property, object)
      return typeof value === 'function' ? value.bind(object) : value
    },
  })
}

export interface ProfiledService {
  /** The engine under test: the service's own wiring, with its collaborators timed by `clock`. */
  readonly engine: QuoteEngine
  readonly clock: PhaseClock
  readonly registry: Registry
  /** The service's request validators: times request validation alone. */
  readonly validatorOf: ApiApp['validatorOf']
  /** The last request the engine stored: its order replays the id and signature. */
  lastStored(): QuotedRequest | undefined
  close(): Promise<void>
}

/**
 * The intent service's runtime and HTTP app in this process (PGlite in a temporary directory, as
 * `npm start`), and a second {@link QuoteEngine} over the same registry, settings, prices and store
 * whose chain reads, pricing, deposit steps and storage are timed. No HTTP server is started.
 */
export async function startProfiledService(config: BenchConfig): Promise<ProfiledService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pontis-profile-data-'))
  const runtime = await createIntentsRuntime({
    env: config.env,
    configDir: config.configDir,
    dataDir,
    logger: silentLogger,
  })
  const { validatorOf } = await createIntentsApp({ ...runtime })
  const clock = new PhaseClock()
  const prices: PriceSource = await loadPriceSource({
    env: config.env,
    configDir: config.configDir,
    registry: runtime.registry,
  })
  const timedPrices: PriceSource = {
    usdPrice: (currency) => clock.time('pricing', () => prices.usdPrice(currency)),
  }
  const settings = await loadSolverSettings({ env: config.env, configDir: config.configDir })
  let stored: QuotedRequest | undefined
  const engine = new QuoteEngine({
    registry: timedRegistry(runtime.registry, clock),
    prices: timedPrices,
    settings,
    logger: silentLogger,
    saveRequest: (request) =>
      clock.time('storage', async () => {
        // The order's costs are measured on solver requests; a self-executed swap has none.
        if ('order' in request.quote) stored = request as QuotedRequest
        await runtime.store.insertRequest(request)
      }),
  })
  return {
    engine,
    clock,
    registry: runtime.registry,
    validatorOf,
    lastStored: () => stored,
    close: async () => {
      await Promise.allSettled([runtime.store.close(), runtime.registry.close()])
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
