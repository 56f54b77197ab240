/** One load run against one URL with autocannon, sampling the server processes while it lasts. */
import autocannon, { type AutocannonResult } from 'autocannon'
import { descendantsNamed, type ProcessSample, sampleProcess, systemBusyMs } from './children.js'

export interface LoadOptions {
  readonly url: string
  readonly method: 'GET' | 'POST'
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Checks every answer's body; a false counts as a mismatch. */
  readonly verifyBody?: (body: string) => boolean
  readonly connections: number
  readonly durationSeconds: number
  /** The server processes to sample (RSS, CPU): the one answering, and any it asks (peers). */
  readonly pids: readonly number[]
  /** A name per pid (same order), for the per-process CPU breakdown; default the pid. */
  readonly names?: readonly string[]
}

export interface Measurement {
  readonly requests: number
  readonly durationSeconds: number
  readonly requestsPerSecond: number
  /** Milliseconds, from every response's own timing (autocannon's histogram rounds to whole ms). */
  readonly latencyMs: {
    readonly mean: number
    readonly p50: number
    readonly p99: number
    readonly p999: number
  }
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  /** 2xx answers whose body failed the target's check. */
  readonly mismatches: number
  readonly statusCodes: Readonly<Record<string, number>>
  /**
   * Largest VmRSS seen while the load ran, and VmHWM (since the process started) at its end; with
   * several server processes, the sum over them.
   */
  readonly serverPeakRssBytes: number
  readonly serverHwmBytes: number
  /** Server CPU time (all its processes) over wall time: 1 is one core busy the whole run. */
  readonly serverCpuCores: number
  /** Server CPU milliseconds per answered request. */
  readonly serverCpuMsPerRequest: number
  /**
   * CPU milliseconds per answered request of each server process (by name), of the devnets' anvil
   * (`anvil`) and of the load generator (`generator`): where an aggregated attestation's CPU goes.
   */
  readonly cpuMsPerRequestByProcess: Readonly<Record<string, number>>
  /** The kernel's part (system time) of each server process's CPU ms per request. */
  readonly systemCpuMsPerRequestByProcess: Readonly<Record<string, number>>
  /** This process's (the load generator's) CPU time over wall time. */
  readonly loadGeneratorCpuCores: number
  /** CPU time of the devnet's anvil processes started by this run, over wall time. */
  readonly anvilCpuCores: number
  /**
   * Busy CPU of the whole machine over wall time, less the server, the load generator and anvil:
   * other processes competing for the cores. Near 0 on a quiet machine.
   */
  readonly otherCpuCores: number
}

const SAMPLE_EVERY_MS = 100

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

function runAutocannon(options: LoadOptions, onLatency: (ms: number) => void): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: options.method,
        connections: options.connections,
        duration: options.durationSeconds,
        headers: {
          ...options.headers,
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(options.verifyBody ? { verifyBody: options.verifyBody } : {}),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    )
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => onLatency(ms))
  })
}

/** The samples of several processes added up. */
async function sampleAll(pids: readonly number[]): Promise<ProcessSample> {
  const samples = await Promise.all(pids.map((pid) => sampleProcess(pid)))
  return {
    rssBytes: samples.reduce((sum, sample) => sum + sample.rssBytes, 0),
    hwmBytes: samples.reduce((sum, sample) => sum + sample.hwmBytes, 0),
    cpuMs: samples.reduce((sum, sample) => sum + sample.cpuMs, 0),
    systemCpuMs: samples.reduce((sum, sample) => sum + sample.systemCpuMs, 0),
  }
}

export async function measure(options: LoadOptions): Promise<Measurement> {
  const latencies: number[] = []
  let peakRss = 0
  // Every anvil below this process, whichever server started it (pontis' own devnet or the oracles').
  const anvils = await descendantsNamed(process.pid, 'anvil')
  const before = await sampleAll(options.pids)
  const eachBefore = await Promise.all(options.pids.map((pid) => sampleProcess(pid)))
  const anvilBefore = await sampleAll(anvils)
  const systemBefore = await systemBusyMs()
  const ownBefore = process.cpuUsage()
  const sampler = setInterval(() => {
    sampleAll(options.pids).then(
      (sample) => {
        peakRss = Math.max(peakRss, sample.rssBytes)
      },
      () => undefined,
    )
  }, SAMPLE_EVERY_MS)
  const started = process.hrtime.bigint()
  let result: AutocannonResult
  try {
    result = await runAutocannon(options, (ms) => latencies.push(ms))
  } finally {
    clearInterval(sampler)
  }
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6
  const own = process.cpuUsage(ownBefore)
  const ownCpuMs = (own.user + own.system) / 1000
  const systemCpuMs = (await systemBusyMs()) - systemBefore
  const after = await sampleAll(options.pids)
  const eachAfter = await Promise.all(options.pids.map((pid) => sampleProcess(pid)))
  const anvilCpuMs = (await sampleAll(anvils)).cpuMs - anvilBefore.cpuMs
  peakRss = Math.max(peakRss, after.rssBytes)

  const sorted = Float64Array.from(latencies).sort()
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]),
  )
  const answered = result.requests.total
  const cpuMs = after.cpuMs - before.cpuMs
  const perRequest = (ms: number) => (answered === 0 ? Number.NaN : ms / answered)
  const cpuMsPerRequestByProcess: Record<string, number> = {}
  const systemCpuMsPerRequestByProcess: Record<string, number> = {}
  options.pids.forEach((pid, index) => {
    const name = options.names?.[index] ?? String(pid)
    cpuMsPerRequestByProcess[name] = perRequest(eachAfter[index]!.cpuMs - eachBefore[index]!.cpuMs)
    systemCpuMsPerRequestByProcess[name] = perRequest(
      eachAfter[index]!.systemCpuMs - eachBefore[index]!.systemCpuMs,
    )
  })
  cpuMsPerRequestByProcess.anvil = perRequest(anvilCpuMs)
  cpuMsPerRequestByProcess.generator = perRequest(ownCpuMs)
  return {
    requests: answered,
    durationSeconds: result.duration,
    requestsPerSecond: answered / result.duration,
    latencyMs: {
      mean: sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      p999: percentile(sorted, 99.9),
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    mismatches: result.mismatches,
    statusCodes,
    serverPeakRssBytes: peakRss,
    serverHwmBytes: after.hwmBytes,
    serverCpuCores: cpuMs / wallMs,
    serverCpuMsPerRequest: perRequest(cpuMs),
    cpuMsPerRequestByProcess,
    systemCpuMsPerRequestByProcess,
    loadGeneratorCpuCores: ownCpuMs / wallMs,
    anvilCpuCores: anvilCpuMs / wallMs,
    otherCpuCores: Math.max(0, systemCpuMs - cpuMs - ownCpuMs - anvilCpuMs) / wallMs,
  }
}
