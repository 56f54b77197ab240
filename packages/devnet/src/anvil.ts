/**
 * Starts and stops anvil processes. The binary comes from the `@foundry-rs/anvil-linux-amd64` npm
 * package (an optional dependency, resolved without install scripts) or from `ANVIL_BINARY`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'

/** The npm package that carries the anvil binary on this registry (linux x64 only). */
export const ANVIL_PACKAGE = '@foundry-rs/anvil-linux-amd64'

const NOT_FOUND_MESSAGE = `anvil binary not found: ${ANVIL_PACKAGE} is only published for linux x64 here; set ANVIL_BINARY to an anvil executable`

/**
 * Finds the anvil executable: `ANVIL_BINARY` when set (it must be an executable file), otherwise the
 * binary inside {@link ANVIL_PACKAGE}.
 *
 * @throws Error naming the problem and the `ANVIL_BINARY` escape hatch when nothing usable is found.
 */
export function resolveAnvilBinary(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.ANVIL_BINARY
  if (override !== undefined && override !== '') {
    if (!isExecutableFile(override)) {
      throw new Error(`anvil binary not found: ANVIL_BINARY=${override} is not an executable file`)
    }
    return override
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(NOT_FOUND_MESSAGE)
  let packageJson: string
  try {
    packageJson = createRequire(import.meta.url).resolve(`${ANVIL_PACKAGE}/package.json`)
  } catch {
    throw new Error(NOT_FOUND_MESSAGE)
  }
  const binary = join(dirname(packageJson), 'bin', 'anvil')
  if (!isExecutableFile(binary))
    throw new Error(`${NOT_FOUND_MESSAGE} (${binary} is missing or not executable)`)
  return binary
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Options of {@link startAnvil}. */
export interface StartAnvilOptions {
  /** The chain id anvil reports (`--chain-id`). */
  chainId: number
  /** TCP port; 0 or omitted picks a free one. */
  port?: number
  /** Interface to listen on; loopback by default so the devnet is never reachable from outside. */
  host?: string
  /** Seconds between blocks (`--block-time`); omitted means a block per transaction (automine). */
  blockTime?: number
  /** How long to wait for the RPC to answer, in milliseconds (default 20000). */
  timeoutMs?: number
  /** The anvil executable; defaults to {@link resolveAnvilBinary}. */
  binary?: string
  /** Extra command-line arguments, appended last. */
  args?: readonly string[]
}

/** A running anvil process. */
export interface AnvilInstance {
  /** `http://<host>:<port>`. */
  readonly rpcUrl: string
  readonly chainId: number
  readonly host: string
  readonly port: number
  /** Process id of anvil. */
  readonly pid: number
  /** The last lines anvil printed (stdout and stderr), for diagnostics. */
  output(): string
  /** Terminates anvil (SIGTERM, then SIGKILL after 5 s) and resolves once it has exited. */
  stop(): Promise<void>
}

const OUTPUT_LIMIT = 16_384
const children = new Set<ChildProcess>()
let exitHooksInstalled = false

/**
 * Kills every anvil still running when this process goes away. 'exit' covers normal ends and
 * process.exit(); signals need their own hook because Node exits on them without firing 'exit'.
 */
function installExitHooks(): void {
  if (exitHooksInstalled) return
  exitHooksInstalled = true
  process.on('exit', killAllChildren)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      // When the application handles the signal itself, it owns shutdown (and 'exit' still fires).
      if (process.listenerCount(signal) > 1) return
      killAllChildren()
      // Then let the signal do what it would have done without us: end the process.
      process.removeListener(signal, onSignal)
      process.kill(process.pid, signal)
    }
    // Prepended, so it runs before handlers added later and still sees them (a `once` handler that
    // ran first would already be gone and look like "nobody handles this").
    process.prependListener(signal, onSignal)
  }
}

function killAllChildren(): void {
  for (const child of children) child.kill('SIGKILL')
  children.clear()
}

/** Asks the OS for a free TCP port on `host`. */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, host, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read a free port'))))
    })
  })
}

async function assertPortFree(host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `port ${port} on ${host} is already in use (is another devnet or node running?)`
            : `cannot listen on ${host}:${port}: ${error.message}`,
        ),
      ),
    )
    server.listen(port, host, () => server.close(() => resolve()))
  })
}

/**
 * Spawns anvil and resolves once its RPC answers `eth_chainId` with the requested id.
 *
 * @throws Error with anvil's recent output when it exits early, answers another chain id, or does not
 *   answer within `timeoutMs`.
 */
export async function startAnvil(options: StartAnvilOptions): Promise<AnvilInstance> {
  const host = options.host ?? '127.0.0.1'
  const binary = options.binary ?? resolveAnvilBinary()
  const pickPort = options.port === undefined || options.port === 0
  // A picked port can be taken between the probe and anvil's bind; a few retries cover that race.
  for (let attempt = 1; ; attempt++) {
    const port = pickPort ? await findFreePort(host) : options.port!
    // A fixed port held by someone else would answer our readiness probe: refuse it up front instead.
    if (!pickPort) await assertPortFree(host, port)
    try {
      return await spawnAnvil(binary, { ...options, host, port })
    } catch (error) {
      if (!pickPort || attempt >= 3 || !(error instanceof PortInUseError)) throw error
    }
  }
}

class PortInUseError extends Error {}

async function spawnAnvil(
  binary: string,
  options: StartAnvilOptions & { host: string; port: number },
): Promise<AnvilInstance> {
  const { chainId, host, port } = options
  const args = ['--chain-id', String(chainId), '--port', String(port), '--host', host]
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime))
  args.push(...(options.args ?? []))

  installExitHooks()
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let output = ''
  const collect = (chunk: Buffer): void => {
    // Always drained (anvil logs every request), only the tail is kept.
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT)
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)

  let exited = false
  let spawnError: Error | undefined
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true
      children.delete(child)
      resolve()
    })
    child.once('error', (error) => {
      spawnError = error
      exited = true
      children.delete(child)
      resolve()
    })
  })

  const rpcUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const stop = async (): Promise<void> => {
    if (exited) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exitPromise
    clearTimeout(timer)
  }
  const describe = (problem: string): string => {
    const tail = output.trim().split('\n').slice(-20).join('\n')
    return `anvil (chain ${chainId}, ${rpcUrl}) ${problem}${tail ? `; its output ends with:\n${tail}` : ''}`
  }

  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  for (;;) {
    if (exited) {
      await exitPromise
      const message = describe(
        spawnError
          ? `could not be started: ${spawnError.message}`
          : `exited with code ${child.exitCode ?? child.signalCode}`,
      )
      throw /address already in use|os error 98/i.test(output)
        ? new PortInUseError(message)
        : new Error(message)
    }
    const answered = await queryChainId(rpcUrl)
    if (answered !== undefined) {
      if (answered !== chainId) {
        await stop()
        throw new Error(describe(`answered chain id ${answered} instead of ${chainId}`))
      }
      break
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(describe(`did not answer eth_chainId within ${options.timeoutMs ?? 20_000} ms`))
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  return {
    rpcUrl,
    chainId,
    host,
    port,
    pid: child.pid ?? -1,
    output: () => output,
    stop,
  }
}

async function queryChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1000),
    })
    if (!response.ok) return undefined
    const body = (await response.json()) as { result?: unknown }
    return typeof body.result === 'string' ? Number.parseInt(body.result, 16) : undefined
  } catch {
    return undefined
  }
}
