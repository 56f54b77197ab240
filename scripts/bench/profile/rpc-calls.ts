/**
 * RPC economy of a quote: JSON-RPC calls per cold and per warm `/quote/v2` (EVM bridge, in
 * process), counted by a proxy on loopback in front of each anvil (rpc-proxy.ts), and the repeated
 * reads within the plugins' read-cache TTL (target: none).
 *
 *   npx tsx scripts/bench/profile/rpc-calls.ts [--warm 20]
 *
 * Phases, each on its own counters:
 * - cold: the first quote after start-up (empty caches);
 * - warm, same body: `--warm` identical quotes back to back, inside one TTL;
 * - warm, distinct amounts and users: what real traffic looks like (the gas simulations are keyed
 *   by the call, which carries the amount);
 * - after expiry: one quote once the TTL has passed.
 */
import { parseArgs } from 'node:util'
import { USERS } from '@pontis/devnet'
import { type CountingProxy, repeatedWithin, startCountingProxy, summarizeCalls } from './rpc-proxy.js'
import {
  BASE_QUOTE,
  DESTINATION_CHAIN_ID,
  ORIGIN_CHAIN_ID,
  startBenchDevnet,
  startProfiledService,
  writeBenchConfig,
} from './setup.js'

/** The EVM plugin's default `readCacheSeconds` (plugins/evm/src/index.ts). */
const READ_CACHE_TTL_MS = 2000

/** Every cache a quote or a request goes through, and what bounds it (kept by hand; see profile.md). */
export const CACHES = [
  {
    cache: 'EVM plugin read cache (`ReadCache`, per chain)',
    bound: 'lru-cache max 5000, TTL readCacheSeconds (default 2 s, at most 60 s)',
    holds:
      'fee terms, balances, allowances, gas simulations (keyed by call), token EIP-712 domains (TTL 1 h)',
  },
  {
    cache: 'SVM plugin read cache (`ReadCache`, per chain)',
    bound: 'lru-cache max 5000, TTL readCacheSeconds',
    holds: 'blockhash, balances, account reads',
  },
  {
    cache: 'Bitcoin plugin read cache (`ReadCache`)',
    bound: 'lru-cache max 5000, TTL readCacheSeconds',
    holds: 'fee rates, UTXO and balance reads',
  },
  {
    cache: 'API keys (`ApiKeyStore`)',
    bound: 'lru-cache max 10 000 (cacheMax)',
    holds: 'authenticated keys by hash; invalidated by LISTEN/NOTIFY on rotation or revocation',
  },
  {
    cache: 'Engine currency catalogs and solver addresses (`Map`)',
    bound: 'one entry per configured chain (fixed at start-up)',
    holds: 'currencies by address; the solver address per chain',
  },
  {
    cache: 'viem block-number cache (`cacheTime`)',
    bound: 'one value per client',
    holds: 'the last block number (1 s in transactions.ts, 0 in the indexer)',
  },
] as const

function report(label: string, proxies: readonly CountingProxy[], quotes: number): string {
  const calls = proxies.flatMap((proxy) => proxy.calls())
  // Per chain: the same read on two chains is two reads.
  const repeats = proxies.flatMap((proxy) => repeatedWithin(proxy.calls(), READ_CACHE_TTL_MS))
  const perQuote = (calls.length / quotes).toFixed(2)
  return `| ${label} | ${quotes} | ${calls.length} | ${perQuote} | ${repeats.length} | ${summarizeCalls(calls)} |`
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { warm: { type: 'string' } }, strict: true })
  const warm = Number(values.warm ?? 20)
  const devnet = await startBenchDevnet()
  const [chainA, chainB] = devnet.chains
  if (!chainA || !chainB) throw new Error('the devnet has no two chains')
  const proxies = await Promise.all([startCountingProxy(chainA.rpcUrl), startCountingProxy(chainB.rpcUrl)])
  const config = await writeBenchConfig(devnet, 2, {
    [ORIGIN_CHAIN_ID]: proxies[0].url,
    [DESTINATION_CHAIN_ID]: proxies[1].url,
  })
  const service = await startProfiledService(config)
  const rows: string[] = []
  const reset = () => {
    for (const proxy of proxies) proxy.reset()
  }
  const quote = (body: Record<string, unknown>) => service.engine.quote(body as never, { withSteps: true })
  try {
    reset()
    await quote(BASE_QUOTE)
    rows.push(report('cold (first quote)', proxies, 1))

    reset()
    const started = performance.now()
    for (let round = 0; round < warm; round++) await quote(BASE_QUOTE)
    const elapsed = performance.now() - started
    rows.push(report(`warm, same body (${elapsed.toFixed(0)} ms)`, proxies, warm))

    reset()
    for (let round = 0; round < warm; round++) {
      const user = USERS[round % USERS.length]!.address
      await quote({
        ...BASE_QUOTE,
        user,
        amount: (100_000_000_000_000_000n + BigInt(round) * 1_000n).toString(),
      })
    }
    rows.push(report('warm, distinct users and amounts', proxies, warm))

    await new Promise((resolve) => setTimeout(resolve, READ_CACHE_TTL_MS + 200))
    reset()
    await quote(BASE_QUOTE)
    rows.push(report('same body after the TTL expired', proxies, 1))
  } finally {
    await service.close()
    await config.remove()
    await Promise.all(proxies.map((proxy) => proxy.close()))
    await devnet.stop()
  }
  console.log(
    `| phase | quotes | RPC calls | per quote | repeated within ${READ_CACHE_TTL_MS / 1000} s | methods |`,
  )
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const row of rows) console.log(row)
  console.log()
  console.log('| cache | bound | holds |')
  console.log('| --- | --- | --- |')
  for (const cache of CACHES) console.log(`| ${cache.cache} | ${cache.bound} | ${cache.holds} |`)
}

await main()
