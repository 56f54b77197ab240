/**
 * Servers under test run in child processes so the load generator (this process) does not share
 * their event loop. Each child leads its own process group: a stop that has to fall back to
 * SIGKILL also takes whatever it started (the devnet's anvil processes) with it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdir, readFile } from 'node:fs/promises'

const OUTPUT_KEPT = 64 * 1024

export interface ServerChild {
  readonly name: string
  readonly pid: number
  /** The base URLs the child logged, by the names of the patterns it was started with. */
  readonly urls: Readonly<Record<string, string>>
  /** The last 64 KiB of its stdout and stderr, for error messages. */
  output(): string
  /** SIGTERM, then SIGKILL to its process group after `graceMs`. Safe to call twice. */
  stop(graceMs?: number): Promise<void>
}

export interface SpawnOptions {
  readonly name: string
  /** Node arguments: flags, then the script. Run with `--import tsx`. */
  readonly args: readonly string[]
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** Each pattern's first group is a URL; the child is up once every pattern matched its output. */
  readonly urls: Readonly<Record<string, RegExp>>
  readonly startTimeoutMs: number
}

/** Stoppers of every child spawned and not yet exited, starting ones included. */
const running = new Set<() => Promise<void>>()

/** Stops every child this process started (see {@link ServerChild.stop}). */
export async function stopAllServers(): Promise<void> {
  await Promise.allSettled([...running].map((stop) => stop()))
}

export async function spawnServer(options: SpawnOptions): Promise<ServerChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  // Keep draining both pipes for the child's whole life: a full pipe would block its logging.
  const onData = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT)
  }
  child.stdout?.on('data', onData)
  child.stderr?.on('data', onData)
  const stop = stopper(child)
  running.add(stop)
  child.once('exit', () => running.delete(stop))
  try {
    const urls = await waitForUrls(child, options, () => output)
    return { name: options.name, pid: child.pid as number, urls, output: () => output, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

function waitForUrls(
  child: ChildProcess,
  options: SpawnOptions,
  output: () => string,
): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const found = (): Record<string, string> | undefined => {
      const urls: Record<string, string> = {}
      for (const [name, pattern] of Object.entries(options.urls)) {
        const url = pattern.exec(output())?.[1]
        if (!url) return undefined
        urls[name] = url
      }
      return urls
    }
    const done = (settle: () => void) => {
      clearTimeout(timer)
      child.stdout?.off('data', check)
      child.stderr?.off('data', check)
      child.off('exit', exited)
      child.off('error', failed)
      settle()
    }
    const check = () => {
      const urls = found()
      if (urls) done(() => resolve(urls))
    }
    const exited = (code: number | null, signal: string | null) =>
      done(() =>
        reject(new Error(`${options.name} exited (${signal ?? code}) before it was up:\n${output()}`)),
      )
    const failed = (error: Error) => done(() => reject(error))
    const timer = setTimeout(
      () =>
        done(() =>
          reject(new Error(`${options.name} was not up after ${options.startTimeoutMs} ms:\n${output()}`)),
        ),
      options.startTimeoutMs,
    )
    child.stdout?.on('data', check)
    child.stderr?.on('data', check)
    child.once('exit', exited)
    child.once('error', failed)
  })
}

function stopper(child: ChildProcess): (graceMs?: number) => Promise<void> {
  const exited = once(child, 'exit').catch(() => undefined)
  let stopping: Promise<void> | undefined
  return (graceMs = 10_000) => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
      child.kill('SIGTERM')
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), graceMs)
      })
      const outcome = await Promise.race([exited, late])
      clearTimeout(timer)
      if (outcome === 'late') {
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {
          child.kill('SIGKILL')
        }
        await exited
      }
    })()
    return stopping
  }
}

export interface ProcessSample {
  /** Resident set size now, bytes. */
  readonly rssBytes: number
  /** Peak resident set size since the process started (VmHWM), bytes. */
  readonly hwmBytes: number
  /** User plus system CPU time since the process started, milliseconds. */
  readonly cpuMs: number
  /** The part of `cpuMs` spent in the kernel (system time: syscalls, the loopback TCP path). */
  readonly systemCpuMs: number
}

const CLOCK_TICKS_PER_SECOND = 100

/** Reads /proc/<pid>/status and /proc/<pid>/stat (Linux). */
export async function sampleProcess(pid: number): Promise<ProcessSample> {
  const [status, stat] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8'),
    readFile(`/proc/${pid}/stat`, 'utf8'),
  ])
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  // Fields after the command name, which is in parentheses and may contain spaces: utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return {
    rssBytes: kib('VmRSS'),
    hwmBytes: kib('VmHWM'),
    cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_SECOND,
    systemCpuMs: (Number(fields[12]) * 1000) / CLOCK_TICKS_PER_SECOND,
  }
}

/** Processes below `root` (its children, their children, ...) whose command name is `name` (Linux). */
export async function descendantsNamed(root: number, name: string): Promise<number[]> {
  const parents = new Map<number, number>()
  const names = new Map<number, string>()
  const entries = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))
  await Promise.all(
    entries.map(async (entry) => {
      try {
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8')
        const close = stat.lastIndexOf(')')
        const pid = Number(entry)
        names.set(pid, stat.slice(stat.indexOf('(') + 1, close))
        // After the command name: state, then the parent's pid.
        parents.set(pid, Number(stat.slice(close + 2).split(' ')[1]))
      } catch {
        // The process ended while /proc was read.
      }
    }),
  )
  const isBelowRoot = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 0; parent = parents.get(parent)) {
      if (parent === root) return true
    }
    return false
  }
  return [...names].filter(([pid, command]) => command === name && isBelowRoot(pid)).map(([pid]) => pid)
}

/** CPU time all cores spent busy since boot (user, nice, system, irq, softirq, steal), milliseconds. */
export async function systemBusyMs(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? ''
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number)
  const ticks = [user, nice, system, irq, softirq, steal].reduce<number>(
    (sum, value) => sum + (value ?? 0),
    0,
  )
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND
}
