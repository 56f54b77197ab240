/**
 * `npx tsx scripts/bench/webhooks.ts`: signed webhook deliveries per second from the intent service's delivery
 * worker (`WebhookDispatcher`, the real outbox on PostgreSQL or PGlite) to a loopback receiver
 * (node:http in a child process, which checks every signature). N events are queued as the service
 * queues them (`enqueueStatusWebhook`, one request each), then the worker drains them, timed.
 *
 * Two ways to drive the worker:
 * - `drain`: `tick()` back to back until nothing is due: the worker's capacity.
 * - `service-loop`: `startWebhookLoop` exactly as `startIntentsService` runs it (the next pass at
 *   once after a full batch, a 200 ms pause after a partial one): what a deployed instance delivers.
 *
 *   npx tsx scripts/bench/webhooks.ts --events 5000 --batch 50 --modes drain,service-loop
 *   npx tsx scripts/bench/webhooks.ts --database pglite
 *
 * Exits 1 when a delivery is missing, duplicated, badly signed or not marked delivered.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { cpus, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { silentLogger } from '@pontis/core'
import { ApiKeyStore } from '../../packages/intents/src/keys/index.js'
import { openRequestStore, type RequestStore } from '../../packages/intents/src/store/index.js'
import {
  enqueueStatusWebhook,
  startWebhookLoop,
  WEBHOOK_BATCH,
  WEBHOOK_INTERVAL_MS,
  WebhookDispatcher,
} from '../../packages/intents/src/webhooks/index.js'
import { sampleProcess, spawnServer, stopAllServers, systemBusyMs } from './children.js'
import { QUOTE_BODY } from './targets.js'
import type { ReceiverStats } from './webhook-receiver.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
/** The service's pause between delivery passes when nothing more is due. */
export const SERVICE_INTERVAL_MS = WEBHOOK_INTERVAL_MS
/** The service's batch per pass. */
export const SERVICE_BATCH = WEBHOOK_BATCH
/** The target. */
export const TARGET_DELIVERIES_PER_SECOND = 1000

const MODES = ['drain', 'service-loop'] as const
/** How the worker is driven: back to back, or as the service's loop runs it. */
export type DeliveryMode = (typeof MODES)[number]

interface Settings {
  readonly events: number
  readonly batch: number
  readonly modes: readonly DeliveryMode[]
  /** A postgres:// URL, or `pglite` for an in-memory PGlite. */
  readonly database: string
  readonly out: string
}

/** The numbers of one drained queue. */
export interface DeliveryRun {
  readonly mode: DeliveryMode
  readonly events: number
  readonly batch: number
  readonly seconds: number
  readonly deliveriesPerSecond: number
  /** Receiver-side: its receipt time minus the signature timestamp the worker set before connecting. */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly p999: number }
  /** One `tick()`: claim a batch, look up each key, deliver, mark each delivered. */
  readonly tickMs: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly ticks: number
  readonly workerCpuCores: number
  readonly receiverCpuCores: number
  /** Every local `postgres` process (0 with PGlite, which runs in the worker). */
  readonly databaseCpuCores: number
  /** The rest of the machine over wall time. */
  readonly otherCpuCores: number
  readonly workerPeakRssBytes: number
  readonly received: number
  readonly distinctEvents: number
  readonly badSignatures: number
  readonly markedDelivered: number
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      batch: { type: 'string' },
      modes: { type: 'string' },
      database: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
  })
  const env = process.env
  const whole = (name: string, raw: string | undefined, fallback: number) => {
    const value = raw === undefined || raw === '' ? fallback : Number(raw)
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a whole number >= 1`)
    return value
  }
  const modes = (values.modes ?? 'drain,service-loop').split(',').map((mode) => mode.trim())
  const unknown = modes.filter((mode) => !(MODES as readonly string[]).includes(mode))
  if (unknown.length > 0) throw new Error(`unknown modes ${unknown.join(', ')}; known: ${MODES.join(', ')}`)
  const stamp = new Date()
    .toISOString()
    .replaceAll(':', '-')
    .replace(/\.\d+Z$/, 'Z')
  return {
    events: whole('events', values.events ?? env.BENCH_WEBHOOK_EVENTS, 5000),
    batch: whole('batch', values.batch, SERVICE_BATCH),
    modes: modes as DeliveryMode[],
    database: values.database ?? (env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'),
    out: resolve(values.out ?? join(tmpdir(), 'pontis-bench', `webhooks-${stamp}.json`)),
  }
}

/** CPU milliseconds of every process named `postgres` (the local server's backends), 0 when none. */
async function postgresCpuMs(): Promise<number> {
  const entries = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))
  const times = await Promise.all(
    entries.map(async (entry) => {
      try {
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8')
        if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') return 0
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        // utime and stime, in clock ticks of 10 ms.
        return (Number(fields[11]) + Number(fields[12])) * 10
      } catch {
        return 0 // ended while /proc was read
      }
    }),
  )
  return times.reduce((sum, ms) => sum + ms, 0)
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

/** Runs `work` on `items` with at most `limit` at a time. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!)
    }),
  )
}

/** Stores `count` requests of the key and queues one status event for each, as the service does. */
async function queueEvents(store: RequestStore, apiKeyId: string, count: number, runId: string) {
  const ids = Array.from(
    { length: count },
    (_, index) => `0x${runId}${index.toString(16).padStart(64 - runId.length, '0')}`,
  )
  const now = Date.now()
  await inParallel(ids, 8, async (id) => {
    const stored = await store.insertRequest({
      id,
      originChainId: QUOTE_BODY.originChainId,
      destinationChainId: QUOTE_BODY.destinationChainId,
      userAddress: QUOTE_BODY.user,
      recipient: QUOTE_BODY.user,
      refundTo: QUOTE_BODY.user,
      originCurrency: QUOTE_BODY.originCurrency,
      destinationCurrency: QUOTE_BODY.destinationCurrency,
      tradeType: QUOTE_BODY.tradeType,
      amountIn: BigInt(QUOTE_BODY.amount),
      amountOut: 99_000_000_000_000_000n,
      minimumAmountOut: 99_000_000_000_000_000n,
      apiKeyId,
      referrer: 'pontis-bench',
      quote: {},
      expiresAt: now + 600_000,
    })
    if (!(await enqueueStatusWebhook(store.client, stored, now))) throw new Error(`no event queued for ${id}`)
  })
}

async function receiverStats(url: string, method: 'GET' | 'DELETE' = 'GET'): Promise<ReceiverStats> {
  const response = await fetch(`${url}/stats`, { method })
  if (!response.ok) throw new Error(`the receiver answered ${response.status}`)
  return method === 'DELETE'
    ? { received: 0, badSignatures: 0, distinctEvents: 0, latenciesMs: [] }
    : ((await response.json()) as ReceiverStats)
}

/** Drives the worker until every queued event was attempted; resolves with each pass's duration. */
async function deliverAll(
  dispatcher: WebhookDispatcher,
  mode: DeliveryMode,
  batch: number,
  events: number,
): Promise<number[]> {
  const tickMs: number[] = []
  let attempted = 0
  const pass = async () => {
    const started = performance.now()
    const count = await dispatcher.tick(batch)
    if (count > 0) tickMs.push(performance.now() - started)
    attempted += count
    return count
  }
  if (mode === 'drain') {
    while ((await pass()) > 0);
    return tickMs
  }
  await new Promise<void>((done, fail) => {
    const loop = startWebhookLoop(
      async () => {
        try {
          const count = await pass()
          if (count === 0 && attempted >= events) void loop.stop().then(done)
          return count
        } catch (error) {
          void loop.stop().then(() => fail(error))
          return 0
        }
      },
      { logger: silentLogger, batch },
    )
  })
  return tickMs
}

async function runMode(
  mode: DeliveryMode,
  settings: Settings,
  store: RequestStore,
  dispatcher: WebhookDispatcher,
  apiKeyId: string,
  receiver: { url: string; pid: number },
): Promise<DeliveryRun> {
  const runId = randomBytes(4).toString('hex')
  log(`${mode}: queueing ${settings.events} events ...`)
  await queueEvents(store, apiKeyId, settings.events, runId)
  await receiverStats(receiver.url, 'DELETE')
  log(`${mode}: delivering ...`)

  let workerPeakRss = process.memoryUsage().rss
  const rssTimer = setInterval(() => {
    workerPeakRss = Math.max(workerPeakRss, process.memoryUsage().rss)
  }, 100)
  const [receiverBefore, busyBefore, databaseBefore] = await Promise.all([
    sampleProcess(receiver.pid),
    systemBusyMs(),
    postgresCpuMs(),
  ])
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const tickMs = await deliverAll(dispatcher, mode, settings.batch, settings.events)
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  const [receiverAfter, busyAfter, databaseAfter] = await Promise.all([
    sampleProcess(receiver.pid),
    systemBusyMs(),
    postgresCpuMs(),
  ])
  clearInterval(rssTimer)

  const stats = await receiverStats(receiver.url)
  const { rows } = await store.client.query<{ delivered: string }>(
    `SELECT count(*)::text AS delivered FROM webhook_events
     WHERE state = 'delivered' AND request_id LIKE $1`,
    [`0x${runId}%`],
  )
  const workerCpuMs = (cpu.user + cpu.system) / 1000
  const receiverCpuMs = receiverAfter.cpuMs - receiverBefore.cpuMs
  const databaseCpuMs = databaseAfter - databaseBefore
  const latencies = [...stats.latenciesMs].sort((a, b) => a - b)
  const ticks = [...tickMs].sort((a, b) => a - b)
  return {
    mode,
    events: settings.events,
    batch: settings.batch,
    seconds,
    deliveriesPerSecond: stats.received / seconds,
    latencyMs: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      p999: percentile(latencies, 99.9),
    },
    tickMs: { p50: percentile(ticks, 50), p99: percentile(ticks, 99), max: ticks.at(-1) ?? Number.NaN },
    ticks: ticks.length,
    workerCpuCores: workerCpuMs / 1000 / seconds,
    receiverCpuCores: receiverCpuMs / 1000 / seconds,
    databaseCpuCores: databaseCpuMs / 1000 / seconds,
    otherCpuCores: Math.max(
      0,
      (busyAfter - busyBefore - workerCpuMs - receiverCpuMs - databaseCpuMs) / 1000 / seconds,
    ),
    workerPeakRssBytes: workerPeakRss,
    received: stats.received,
    distinctEvents: stats.distinctEvents,
    badSignatures: stats.badSignatures,
    markedDelivered: Number(rows[0]?.delivered ?? 0),
  }
}

/** Why a run's numbers are not valid, or undefined when every event arrived once, signed, and was marked delivered. */
export function runProblem(run: DeliveryRun): string | undefined {
  if (run.received !== run.events) return `${run.received} deliveries received for ${run.events} events`
  if (run.distinctEvents !== run.events) return `${run.events - run.distinctEvents} events arrived twice`
  if (run.badSignatures > 0) return `${run.badSignatures} deliveries with a wrong signature`
  if (run.markedDelivered !== run.events)
    return `${run.markedDelivered} of ${run.events} events marked delivered`
  return undefined
}

const log = (message: string) => process.stderr.write(`${message}\n`)
const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-')

async function main(): Promise<number> {
  const settings = readSettings()
  const usePglite = settings.database === 'pglite'
  // A schema of its own, dropped at the end: other users of the database are not touched.
  const schema = `bench_webhooks_${process.pid}_${randomBytes(4).toString('hex')}`
  const store = await openRequestStore(
    usePglite ? { schema } : { databaseUrl: settings.database, schema, logger: silentLogger },
  )
  try {
    // Plain http to a loopback receiver: the development setting the service has for this, both
    // when the URL is set and when it is delivered to.
    const policy = { allowHttpLoopback: true }
    const keys = new ApiKeyStore(store.client, { webhookPolicy: policy })
    // The receiver needs the key's secret and the key needs the receiver's URL: a placeholder URL first.
    const { key, secret } = await keys.create({
      label: 'pontis-bench-webhooks',
      tier: 'standard',
      webhook: { enabled: true, url: 'http://127.0.0.1:9/hook' },
    })
    const receiver = await spawnServer({
      name: 'webhook receiver',
      args: ['scripts/bench/webhook-receiver.ts'],
      cwd: repoRoot,
      env: { ...process.env, RECEIVER_PORT: '0', WEBHOOK_SECRET: secret },
      urls: { receiver: /webhook receiver\s+(http:\/\/[^\s"]+)/ },
      startTimeoutMs: 30_000,
    })
    const receiverUrl = receiver.urls.receiver!
    await keys.setWebhook(key.id, { enabled: true, url: `${receiverUrl}/hook` })
    const dispatcher = new WebhookDispatcher({
      client: store.client,
      keys,
      logger: silentLogger,
      policy,
    })

    const runs: DeliveryRun[] = []
    for (const mode of settings.modes) {
      runs.push(
        await runMode(mode, settings, store, dispatcher, key.id, {
          url: receiverUrl,
          pid: receiver.pid,
        }),
      )
    }

    const cores = cpus()
    console.log()
    console.log(
      `Pontis webhook bench, ${new Date().toISOString()}, Node ${process.version}, ` +
        `${cores.length} cores (${cores[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 20).toFixed(0)} MiB, ` +
        `${usePglite ? 'PGlite (in memory)' : 'PostgreSQL'}, ${settings.events} events of one key, batch ${settings.batch}`,
    )
    console.log()
    const header = [
      'mode',
      'deliveries/s',
      'seconds',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'tick p50 ms',
      'tick p99 ms',
      'worker CPU',
      'receiver CPU',
      'db CPU',
      'other CPU',
      'worker RSS MiB',
      `>= ${TARGET_DELIVERIES_PER_SECOND}/s`,
      'check',
    ]
    const rows = runs.map((run) => [
      run.mode,
      fixed(run.deliveriesPerSecond, 0),
      fixed(run.seconds, 2),
      fixed(run.latencyMs.p50, 1),
      fixed(run.latencyMs.p99, 1),
      fixed(run.latencyMs.p999, 1),
      fixed(run.tickMs.p50, 1),
      fixed(run.tickMs.p99, 1),
      fixed(run.workerCpuCores, 2),
      fixed(run.receiverCpuCores, 2),
      fixed(run.databaseCpuCores, 2),
      fixed(run.otherCpuCores, 2),
      (run.workerPeakRssBytes / 2 ** 20).toFixed(0),
      run.deliveriesPerSecond >= TARGET_DELIVERIES_PER_SECOND ? 'met' : 'missed',
      runProblem(run) ?? 'ok',
    ])
    const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)))
    for (const row of [header, ...rows])
      console.log(row.map((cell, i) => cell.padStart(widths[i]!)).join('  '))
    console.log()
    console.log(
      'p50/p99/p99.9: per delivery, receipt at the receiver minus the signature timestamp (taken just before ' +
        'connecting; 1 ms steps). tick: one pass (claim a batch, look up the key, POST, mark delivered). ' +
        'CPU in cores (1.00 = one core busy); db: the local postgres processes; other: the rest of the machine.',
    )
    await mkdir(dirname(settings.out), { recursive: true })
    await writeFile(
      settings.out,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          node: process.version,
          machine: { cores: cores.length, model: cores[0]?.model, totalMemoryBytes: totalmem() },
          database: usePglite ? 'pglite' : 'postgresql',
          runs,
        },
        null,
        2,
      )}\n`,
    )
    console.log(`Results: ${settings.out}`)
    const invalid = runs.filter((run) => runProblem(run) !== undefined)
    for (const run of invalid) log(`INVALID ${run.mode}: ${runProblem(run)}`)
    return invalid.length > 0 ? 1 : 0
  } finally {
    await stopAllServers()
    if (!usePglite)
      await store.client.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined)
    await store.close()
  }
}

// Run as a script, not when a test imports runProblem.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exit(await main())
}
