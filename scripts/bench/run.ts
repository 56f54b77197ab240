/**
 * `npm run bench`: warm latency (p50, p99, p99.9) and throughput of named targets (targets.ts) on
 * loopback, each beside a bare koa endpoint measured in the same run, with the ratio between them.
 * Servers run in child processes (the oracle targets' devnet is managed from here, anvil runs in
 * its own processes); the load generator (autocannon) runs here. See README.md.
 *
 *   npm run bench -- --duration 10 --connections 10 --warmup 2 --targets quote,price,bare --out r.json
 *
 * Exits 1 when any measured request failed, answered other than 2xx or failed its target's answer
 * check: such numbers are not valid.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { spawnServer, stopAllServers } from './children.js'
import { type Measurement, measure } from './measure.js'
import { isOracleService, type OracleServiceName, startOracles } from './oracles.js'
import {
  BASELINE,
  baselineOf,
  DEFAULT_TARGETS,
  isTargetName,
  QUOTE_BODY,
  type RequestBody,
  type ServerName,
  type StartedServer,
  TARGETS,
  type Target,
  type TargetName,
} from './targets.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
/** Cores kept busy by other processes above which a target's numbers are flagged as disturbed. */
const OTHER_CPU_WARNING = 0.25

interface Settings {
  readonly durationSeconds: number
  readonly warmupSeconds: number
  readonly connections: number
  readonly targets: readonly TargetName[]
  readonly out: string
  readonly cpuProfDir: string | undefined
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      targets: { type: 'string' },
      out: { type: 'string' },
      'cpu-prof': { type: 'string' },
    },
    strict: true,
  })
  const env = process.env
  const number = (name: string, raw: string | undefined, fallback: number, minimum: number) => {
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isFinite(value) || value < minimum)
      throw new Error(`--${name} must be a number >= ${minimum}`)
    return value
  }
  const targets = (values.targets ?? env.BENCH_TARGETS)?.split(',').map((name) => name.trim()) ?? [
    ...DEFAULT_TARGETS,
  ]
  const unknown = targets.filter((name) => !isTargetName(name))
  if (unknown.length > 0 || targets.length === 0) {
    throw new Error(`unknown targets: ${unknown.join(', ')}; known: ${Object.keys(TARGETS).join(', ')}`)
  }
  const stamp = new Date()
    .toISOString()
    .replaceAll(':', '-')
    .replace(/\.\d+Z$/, 'Z')
  const cpuProf = values['cpu-prof'] ?? env.BENCH_CPU_PROF
  return {
    durationSeconds: number('duration', values.duration ?? env.BENCH_DURATION, 10, 1),
    warmupSeconds: number('warmup', values.warmup ?? env.BENCH_WARMUP, 2, 0),
    connections: Math.floor(number('connections', values.connections ?? env.BENCH_CONNECTIONS, 10, 1)),
    targets: targets as TargetName[],
    out: resolve(values.out ?? env.BENCH_OUT ?? join(tmpdir(), 'pontis-bench', `bench-${stamp}.json`)),
    cpuProfDir: cpuProf ? resolve(cpuProf) : undefined,
  }
}

/** Node flags of the measured servers (not bare koa): a CPU profile when asked for. */
function profilingFlags(settings: Settings): string[] {
  return settings.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfDir}`] : []
}

async function startServer(name: ServerName, settings: Settings, dataDir: string): Promise<StartedServer> {
  if (name === 'bare') {
    const child = await spawnServer({
      name: 'bare koa',
      args: ['scripts/bench/bare-koa.ts'],
      cwd: repoRoot,
      env: { ...process.env, BARE_PORT: '0' },
      urls: { bare: /bare koa\s+(http:\/\/[^\s"]+)/ },
      startTimeoutMs: 30_000,
    })
    return { services: { bare: { url: child.urls.bare!, pid: child.pid } }, facts: {} }
  }
  if (name === 'oracles') {
    // Only the oracles the chosen targets send to or sample.
    const services = new Set<OracleServiceName>()
    const oracleTargets = settings.targets
      .map((targetName): Target => TARGETS[targetName])
      .filter((target) => target.server === 'oracles')
    for (const target of oracleTargets) {
      for (const service of [target.service, ...(target.alsoSampled ?? [])])
        if (isOracleService(service)) services.add(service)
    }
    return startOracles({ services, cwd: repoRoot, nodeFlags: profilingFlags(settings) })
  }
  const { DEVNET: _devnet, ...env } = process.env
  const child = await spawnServer({
    name: 'pontis (scripts/start.ts)',
    args: [...profilingFlags(settings), 'scripts/start.ts'],
    cwd: repoRoot,
    env: {
      ...env,
      ENVIRONMENT: 'local',
      DEVNET_PORTS: '0',
      INTENTS_PORT: '0',
      HTTP_PORT: '0',
      PONTIS_DATA_DIR: dataDir,
      // The load generator is one address far above any per-IP limit: measure the service, not the limiter.
      RATE_LIMITS: 'off',
    },
    urls: { intents: /intent service\s+(http:\/\/[^\s"]+)/, oracle: /oracle\s+(http:\/\/[^\s"]+)/ },
    startTimeoutMs: 120_000,
  })
  const endpoint = (service: string) => ({ url: child.urls[service]!, pid: child.pid })
  return {
    services: { intents: endpoint('intents'), oracle: endpoint('oracle') },
    facts: { requestId: await storeOneRequest(child.urls.intents!) },
  }
}

/** Quotes once so the status target has a stored request to read; returns its id. */
async function storeOneRequest(intentsUrl: string): Promise<string> {
  const response = await fetch(`${intentsUrl}/quote/v2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(QUOTE_BODY),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`the set-up quote answered ${response.status}: ${text}`)
  const requestId = (JSON.parse(text) as { steps?: Array<{ requestId?: string }> }).steps?.[0]?.requestId
  if (requestId === undefined) throw new Error(`the set-up quote has no steps[].requestId: ${text}`)
  return requestId
}

/** The target's answer check on a raw body: undefined when right, else why not. */
function answerProblem(target: Target, text: string): string | undefined {
  if (!target.checkAnswer) return undefined
  let answer: unknown
  try {
    answer = JSON.parse(text)
  } catch {
    return 'the answer is not JSON'
  }
  return target.checkAnswer(answer)
}

/** One request before any load, so a wrong body or a broken service fails with its answer, not a count. */
async function checkTarget(
  name: TargetName,
  target: Target,
  url: string,
  body: RequestBody | undefined,
): Promise<void> {
  const response = await fetch(url, {
    method: target.method,
    headers: { ...target.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${name}: ${target.method} ${url} answered ${response.status}: ${text}`)
  const problem = answerProblem(target, text)
  if (problem !== undefined) throw new Error(`${name}: ${target.method} ${url}: ${problem}: ${text}`)
}

function gitRevision(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim()
    const head = git('rev-parse', '--short', 'HEAD')
    const dirty = git('status', '--porcelain') !== ''
    return dirty ? `${head} (uncommitted changes)` : head
  } catch {
    return 'unknown'
  }
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)

function table(rows: ReadonlyArray<readonly string[]>): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!)))
        .join('  '),
    )
    .join('\n')
}

function isValid(measurement: Measurement): boolean {
  return (
    measurement.errors === 0 &&
    measurement.timeouts === 0 &&
    measurement.non2xx === 0 &&
    measurement.mismatches === 0
  )
}

const log = (message: string) => process.stderr.write(`${message}\n`)

async function main(): Promise<number> {
  let settings: Settings
  try {
    settings = readSettings()
  } catch (error) {
    log(`bench: ${error instanceof Error ? error.message : String(error)}`)
    return 2
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'pontis-bench-data-'))
  const servers = new Map<ServerName, StartedServer>()
  const cleanUp = async () => {
    await stopAllServers()
    await Promise.allSettled([...servers.values()].map((server) => server.stop?.()))
    await rm(dataDir, { recursive: true, force: true })
  }
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the servers`)
    void cleanUp().finally(() => process.exit(130))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)

  try {
    const serverNames = [...new Set(settings.targets.map((name) => TARGETS[name].server))]
    log(`starting ${serverNames.join(', ')} ...`)
    const started = await Promise.allSettled(
      serverNames.map(async (server) => servers.set(server, await startServer(server, settings, dataDir))),
    )
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason

    const results = new Map<TargetName, Measurement>()
    const bodies = new Map<TargetName, RequestBody | undefined>()
    const paths = new Map<TargetName, string>()
    for (const name of settings.targets) {
      const target: Target = TARGETS[name]
      const server = servers.get(target.server)!
      const endpoint = (service: Target['service']) => {
        const found = server.services[service]
        if (!found) throw new Error(`${name}: the ${target.server} server has no ${service} service`)
        return found
      }
      const path = typeof target.path === 'function' ? target.path(server.facts) : target.path
      const url = `${endpoint(target.service).url}${path}`
      paths.set(name, path)
      const sampled = new Map<number, string>()
      for (const service of [target.service, ...(target.alsoSampled ?? [])]) {
        const pid = endpoint(service).pid
        if (!sampled.has(pid)) sampled.set(pid, service)
      }
      const pids = [...sampled.keys()]
      const names = [...sampled.values()]
      const body = typeof target.body === 'function' ? target.body(server.facts) : target.body
      bodies.set(name, body)
      await checkTarget(name, target, url, body)
      const load = {
        url,
        method: target.method,
        body,
        ...(target.headers ? { headers: target.headers } : {}),
        ...(target.checkAnswer
          ? { verifyBody: (text: string) => answerProblem(target, text) === undefined }
          : {}),
        connections: settings.connections,
        pids,
        names,
      }
      if (settings.warmupSeconds > 0) {
        log(`${name}: warming up ${settings.warmupSeconds} s (not measured)`)
        await measure({ ...load, durationSeconds: settings.warmupSeconds })
      }
      log(`${name}: measuring ${settings.durationSeconds} s, ${settings.connections} connections`)
      results.set(name, await measure({ ...load, durationSeconds: settings.durationSeconds }))
    }

    // Each target is divided by its own bare koa baseline (GET targets by GET /bare), else by `bare`.
    const baselineFor = (name: TargetName): { name: TargetName; measurement: Measurement } | undefined => {
      const own = baselineOf(TARGETS[name])
      for (const candidate of [own, BASELINE] as const) {
        const measurement = results.get(candidate)
        if (measurement) return { name: candidate, measurement }
      }
      return undefined
    }
    const baseline = results.get(BASELINE)
    const ratio = (name: TargetName, measurement: Measurement) => {
      const base = baselineFor(name)
      return base ? measurement.requestsPerSecond / base.measurement.requestsPerSecond : Number.NaN
    }
    const cores = cpus()
    const machine = `${cores.length} cores (${cores[0]?.model ?? 'unknown'}), ${mib(totalmem())} MiB`
    const rows = [
      [
        'target',
        'req/s',
        'p50 ms',
        'p99 ms',
        'p99.9 ms',
        'mean ms',
        'errors',
        'non-2xx',
        'bad body',
        'srv CPU',
        'CPU ms/req',
        'gen CPU',
        'anvil CPU',
        'other CPU',
        'srv RSS MiB',
        'vs bare',
        'baseline',
      ],
      ...[...results].map(([name, m]) => [
        name,
        fixed(m.requestsPerSecond, 0),
        fixed(m.latencyMs.p50, 2),
        fixed(m.latencyMs.p99, 2),
        fixed(m.latencyMs.p999, 2),
        fixed(m.latencyMs.mean, 2),
        String(m.errors),
        String(m.non2xx),
        String(m.mismatches),
        fixed(m.serverCpuCores, 2),
        fixed(m.serverCpuMsPerRequest, 3),
        fixed(m.loadGeneratorCpuCores, 2),
        fixed(m.anvilCpuCores, 2),
        fixed(m.otherCpuCores, 2),
        mib(m.serverPeakRssBytes),
        fixed(ratio(name, m), 3),
        baselineFor(name)?.name ?? '-',
      ]),
    ]
    const revision = gitRevision()
    console.log()
    console.log(
      `Pontis bench, ${new Date().toISOString()}, git ${revision}, Node ${process.version}, ` +
        `${settings.durationSeconds} s per target after ${settings.warmupSeconds} s warm-up, ` +
        `${settings.connections} connections, loopback`,
    )
    console.log(
      `Machine: ${machine}. The load generator (this process) and the servers share these cores: ` +
        'the numbers are relative; compare ratios, not absolutes, across machines.',
    )
    console.log()
    console.log(table(rows))
    console.log()
    for (const [name, m] of results) {
      const base = baselineFor(name)
      if (base === undefined) {
        console.log(`${name}: no ratio: no bare koa target (bare, bare-get) was in --targets.`)
        continue
      }
      if (base.name === name) continue
      console.log(
        `${name}: ${fixed(ratio(name, m), 3)}x the throughput of ${base.name} ` +
          `(${fixed(1 / ratio(name, m), 1)} times fewer requests/s); p50 ${fixed(m.latencyMs.p50, 2)} ms ` +
          `vs ${fixed(base.measurement.latencyMs.p50, 2)} ms (${fixed(m.latencyMs.p50 / base.measurement.latencyMs.p50, 1)}x)`,
      )
    }
    console.log('CPU ms per request, by process (10 ms clock ticks of /proc/<pid>/stat):')
    for (const [name, m] of results) {
      const parts = Object.entries(m.cpuMsPerRequestByProcess).map(([process, ms]) => {
        const system = m.systemCpuMsPerRequestByProcess[process]
        return `${process} ${fixed(ms, 3)}${system === undefined ? '' : ` (kernel ${fixed(system, 3)})`}`
      })
      const total = Object.values(m.cpuMsPerRequestByProcess).reduce((sum, ms) => sum + ms, 0)
      console.log(`  ${name}: ${parts.join(', ')}; all ${fixed(total, 3)}`)
    }
    console.log(
      'srv CPU / gen CPU / anvil CPU: CPU time of the server processes (an aggregator and its peers) / ' +
        "of the load generator / of the devnets' anvil over wall time (1.00 = one core busy); " +
        "other CPU: the rest of the machine; bad body: 2xx answers that failed the target's check; " +
        'srv RSS: largest VmRSS of the server processes (summed) during the measured run.',
    )
    const disturbed = [...results].filter(([, m]) => m.otherCpuCores > OTHER_CPU_WARNING)
    for (const [name, m] of disturbed) {
      log(
        `WARNING: other processes kept ${fixed(m.otherCpuCores, 2)} cores busy while ${name} was measured: ` +
          'its numbers are disturbed; rerun on a quiet machine.',
      )
    }

    const invalid = [...results].filter(([, m]) => !isValid(m))
    await mkdir(dirname(settings.out), { recursive: true })
    await writeFile(
      settings.out,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          git: revision,
          node: process.version,
          machine: { cores: cores.length, model: cores[0]?.model, totalMemoryBytes: totalmem() },
          settings: {
            durationSeconds: settings.durationSeconds,
            warmupSeconds: settings.warmupSeconds,
            connections: settings.connections,
            targets: settings.targets,
          },
          valid: invalid.length === 0,
          disturbed: disturbed.map(([name]) => name),
          baseline: baseline ? BASELINE : null,
          results: Object.fromEntries(
            [...results].map(([name, m]) => [
              name,
              {
                ...TARGETS[name],
                path: paths.get(name),
                body: bodies.get(name),
                ...m,
                baseline: baselineFor(name)?.name ?? null,
                ratioToBaseline: baselineFor(name) ? ratio(name, m) : null,
              },
            ]),
          ),
        },
        null,
        2,
      )}\n`,
    )
    console.log(`Results: ${settings.out}`)
    if (settings.cpuProfDir)
      console.log(`CPU profiles of the pontis and oracle processes: ${settings.cpuProfDir}`)

    if (invalid.length > 0) {
      const banner = '!'.repeat(78)
      log(
        `\n${banner}\nINVALID RUN: requests failed, answered non-2xx or with a wrong body; these numbers mean nothing.`,
      )
      for (const [name, m] of invalid) {
        log(
          `  ${name}: errors ${m.errors}, timeouts ${m.timeouts}, non-2xx ${m.non2xx}, bad body ${m.mismatches}, status codes ${JSON.stringify(m.statusCodes)}`,
        )
      }
      log(banner)
      return 1
    }
    return 0
  } catch (error) {
    log(`bench failed: ${error instanceof Error ? error.message : String(error)}`)
    return 2
  } finally {
    await cleanUp()
  }
}

process.exit(await main())
