/**
 * Cost profile of a warm EVM bridge quote, in process (no HTTP, no load generator): how its latency
 * grows with the number of chains configured and with the request's `txs` and `appFees`, and where
 * the time goes. Findings: scripts/bench/results/profile.md.
 *
 *   npx tsx scripts/bench/profile/cost.ts [--iterations 300] [--warmup 200] [--chains 2,10,100]
 *     [--txs 0,1,5,20] [--app-fees 0,1,5,10,20] [--out cost.json]
 *     [--cpu-profile DIR]
 *
 * `--cpu-profile DIR` writes a V8 CPU profile of each shape's measured quotes only (not start-up,
 * warm-up or the validation loop) to DIR/<shape>.cpuprofile; summarize with top-frames.ts or open
 * it in Chrome DevTools as a flame graph.
 *
 * Quotes run one after another (one in flight), so each time is a quote's own latency on an idle
 * service. Every quote is the service's own `/quote/v2` work: route checks, prices, chain reads
 * (each plugin's read cache, TTL 2 s, is live: a quote after expiry pays the round trips), fees,
 * the order id, the deposit steps and the PGlite insert.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chainOrder } from '@pontis/core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { orderId, signOrder } from '../../../packages/intents/src/quote/order.js'
import { descendantsNamed, sampleProcess, systemBusyMs } from '../children.js'
import {
  type BenchConfig,
  type ProfiledService,
  quoteBody,
  startBenchDevnet,
  startProfiledService,
  writeBenchConfig,
} from './setup.js'

/** One measured request shape. */
export interface CostRow {
  readonly label: string
  readonly chains: number
  readonly txs: number
  readonly appFees: number
  readonly quotes: number
  /** Whole quote, in process, milliseconds. */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanMs: number
  /** openapi-backend + Ajv validation of the body alone, microseconds; undefined when the body is invalid. */
  readonly validationUs: number | undefined
  /**
   * Cores other processes kept busy while the quotes ran (the machine's busy CPU less this process
   * and its anvils): above about 0.25 the row is disturbed.
   */
  readonly otherCpuCores: number
  /** Mean busy milliseconds per quote of each phase timed from outside the engine. */
  readonly phasesMs: Readonly<Record<string, number>>
  /** Mean of the order id (EIP-712 struct hash) and of an order signature, replayed on the last order, ms. */
  readonly orderIdMs: number
  readonly signatureMs: number
  /**
   * Mean engine time outside every timed phase: route checks, fees, the order id, the signature
   * when protocol data is asked for, the response. `orderIdMs` and `signatureMs` say how much of it
   * those two are.
   */
  readonly computeMs: number
}

const median = (values: readonly number[]) => quantile(values, 0.5)
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
}
const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length

/** Mean microseconds of `work` over `rounds` calls. */
function microsecondsEach(rounds: number, work: () => unknown): number {
  const start = performance.now()
  for (let round = 0; round < rounds; round++) work()
  return ((performance.now() - start) * 1000) / rounds
}

/** Starts counting the CPU of the machine, of this process and of its anvils (Linux /proc). */
async function cpuClock(): Promise<{ otherCores(): Promise<number> }> {
  const anvils = await descendantsNamed(process.pid, 'anvil')
  const anvilMs = async () =>
    (await Promise.all(anvils.map((pid) => sampleProcess(pid).then((sample) => sample.cpuMs)))).reduce(
      (sum, ms) => sum + ms,
      0,
    )
  const ownMs = () => {
    const usage = process.cpuUsage()
    return (usage.user + usage.system) / 1000
  }
  const start = {
    wall: performance.now(),
    system: await systemBusyMs(),
    own: ownMs(),
    anvil: await anvilMs(),
  }
  return {
    async otherCores() {
      const wall = performance.now() - start.wall
      const system = (await systemBusyMs()) - start.system
      const own = ownMs() - start.own
      const anvil = (await anvilMs()) - start.anvil
      return Math.max(0, system - own - anvil) / wall
    },
  }
}

async function measureShape(
  service: ProfiledService,
  shape: { label: string; chains: number; txs: number; appFees: number; extra?: Record<string, unknown> },
  iterations: number,
  warmup: number,
  profileDir?: string,
): Promise<CostRow> {
  const body = { ...quoteBody(shape.txs, shape.appFees), ...shape.extra }
  const request = { query: {}, params: {}, headers: { 'content-type': 'application/json' }, body }
  const validate = service.validatorOf('getQuoteV2')
  const valid = validate(request).valid
  // The first thousand validations warm the JIT up; the next five thousand are timed.
  if (valid) microsecondsEach(1000, () => validate(request))
  const validationUs = valid ? microsecondsEach(5000, () => validate(request)) : undefined
  // Bodies beyond the API's limits (appFees maxItems 10) are refused by validation; the engine
  // is still measured to show how its own cost grows.
  const quote = () => service.engine.quote(body as never, { withSteps: true })
  for (let round = 0; round < warmup; round++) await quote()
  const profiler = profileDir ? new Session() : undefined
  if (profiler) {
    profiler.connect()
    await profiler.post('Profiler.enable')
    await profiler.post('Profiler.start')
  }
  const cpu = await cpuClock()
  const totals: number[] = []
  const phases: Array<Record<string, number>> = []
  for (let round = 0; round < iterations; round++) {
    service.clock.reset()
    const start = performance.now()
    await quote()
    totals.push(performance.now() - start)
    phases.push(service.clock.busyMs())
  }
  const otherCpuCores = await cpu.otherCores()
  if (profiler && profileDir) {
    const { profile } = await profiler.post('Profiler.stop')
    profiler.disconnect()
    await mkdir(profileDir, { recursive: true })
    await writeFile(
      join(profileDir, `${shape.label.replaceAll(' ', '-')}.cpuprofile`),
      JSON.stringify(profile),
    )
  }
  const stored = service.lastStored()
  if (!stored) throw new Error('the engine stored no request')
  const order = chainOrder(service.registry, stored.quote.order)
  const orderIdMs = microsecondsEach(200, () => orderId(order)) / 1000
  const account = privateKeyToAccount(generatePrivateKey())
  const id = orderId(order)
  const signStart = performance.now()
  for (let round = 0; round < 100; round++) await signOrder(account, id)
  const signatureMs = (performance.now() - signStart) / 100
  const phaseNames = Object.keys(phases[0] ?? {}).filter((name) => name !== 'any phase')
  const phasesMs = Object.fromEntries(phaseNames.map((name) => [name, mean(phases.map((p) => p[name]!))]))
  const outside = mean(totals.map((total, index) => total - phases[index]!['any phase']!))
  return {
    label: shape.label,
    chains: shape.chains,
    txs: shape.txs,
    appFees: shape.appFees,
    quotes: iterations,
    p50Ms: median(totals),
    p99Ms: quantile(totals, 0.99),
    meanMs: mean(totals),
    validationUs,
    otherCpuCores,
    phasesMs,
    orderIdMs,
    signatureMs,
    computeMs: outside,
  }
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits)

/** The rows as a Markdown table (what profile.md shows). */
export function costTable(rows: readonly CostRow[]): string {
  const header = [
    'shape',
    'chains',
    'txs',
    'appFees',
    'p50 ms',
    'p99 ms',
    'mean ms',
    'other CPU',
    'validation µs',
    'pricing ms',
    'chain reads ms',
    'deposit steps ms',
    'storage ms',
    'engine compute ms',
    '↳ order id ms',
    '↳ signature ms',
  ]
  const lines = rows.map((row) => [
    row.label,
    String(row.chains),
    String(row.txs),
    String(row.appFees),
    fixed(row.p50Ms, 2),
    fixed(row.p99Ms, 2),
    fixed(row.meanMs, 2),
    fixed(row.otherCpuCores, 2),
    row.validationUs === undefined ? 'rejected' : fixed(row.validationUs, 1),
    fixed(row.phasesMs.pricing, 3),
    fixed(row.phasesMs['chain reads'], 2),
    fixed(row.phasesMs['deposit steps'], 2),
    fixed(row.phasesMs.storage, 2),
    fixed(row.computeMs, 2),
    fixed(row.orderIdMs, 2),
    // Only a quote with protocol data signs; the others show what a signature would cost.
    row.label.includes('protocol data') ? fixed(row.signatureMs, 2) : `(${fixed(row.signatureMs, 2)})`,
  ])
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

function list(raw: string | undefined, fallback: number[]): number[] {
  if (raw === undefined) return fallback
  const values = raw.split(',').map(Number)
  if (values.some((value) => !Number.isInteger(value) || value < 0)) throw new Error(`bad list: ${raw}`)
  return values
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string' },
      warmup: { type: 'string' },
      chains: { type: 'string' },
      txs: { type: 'string' },
      'app-fees': { type: 'string' },
      out: { type: 'string' },
      'cpu-profile': { type: 'string' },
    },
    strict: true,
  })
  const iterations = Number(values.iterations ?? 300)
  const warmup = Number(values.warmup ?? 200)
  const chainCounts = list(values.chains, [2, 10, 100])
  const txsCounts = list(values.txs, [0, 1, 5, 20])
  const appFeeCounts = list(values['app-fees'], [0, 1, 5, 10, 20])
  const log = (message: string) => process.stderr.write(`${message}\n`)
  const profileDir = values['cpu-profile']

  const devnet = await startBenchDevnet()
  const rows: CostRow[] = []
  const startUps: Array<{ chains: number; startMs: number; heapMiB: number }> = []
  try {
    for (const [index, chains] of chainCounts.entries()) {
      const config: BenchConfig = await writeBenchConfig(devnet, chains)
      const started = performance.now()
      const service = await startProfiledService(config)
      startUps.push({
        chains,
        startMs: performance.now() - started,
        heapMiB: process.memoryUsage().heapUsed / 1024 / 1024,
      })
      try {
        log(`${chains} chains: measuring ${iterations} quotes after ${warmup} warm-up quotes`)
        rows.push(
          await measureShape(
            service,
            { label: `${chains} chains`, chains, txs: 0, appFees: 0 },
            iterations,
            warmup,
            profileDir,
          ),
        )
        // Request shapes on the smallest config only: the chain count does not change them.
        if (index !== 0) continue
        rows.push(
          await measureShape(
            service,
            { label: 'protocol data', chains, txs: 0, appFees: 0, extra: { includeProtocolData: true } },
            iterations,
            warmup,
            profileDir,
          ),
        )
        for (const txs of txsCounts.filter((count) => count > 0)) {
          log(`txs ${txs}`)
          rows.push(
            await measureShape(
              service,
              { label: `txs ${txs}`, chains, txs, appFees: 0 },
              iterations,
              warmup,
              profileDir,
            ),
          )
        }
        for (const appFees of appFeeCounts.filter((count) => count > 0)) {
          log(`appFees ${appFees}`)
          rows.push(
            await measureShape(
              service,
              { label: `appFees ${appFees}`, chains, txs: 0, appFees },
              iterations,
              warmup,
              profileDir,
            ),
          )
        }
      } finally {
        await service.close()
        await config.remove()
      }
    }
  } finally {
    await devnet.stop()
  }
  console.log(costTable(rows))
  console.log()
  console.log('| chains | start-up ms (registry, store, app) | heap used MiB after start |')
  console.log('| --- | --- | --- |')
  for (const row of startUps)
    console.log(`| ${row.chains} | ${fixed(row.startMs, 0)} | ${fixed(row.heapMiB, 0)} |`)
  if (values.out) await writeFile(values.out, `${JSON.stringify({ rows, startUps }, null, 2)}\n`)
}

await main()
