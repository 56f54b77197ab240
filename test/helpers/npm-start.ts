/**
 * `npm start` (`scripts/start.ts`) as an operator runs it, in its own process: started from `cwd`
 * (where it looks for `configs/`), answered once both services have logged their URLs.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { nodeScriptArguments } from '@pontis/core'
import type { Test } from 'tap'
import { PROCESS_START_BOUND_MS, within } from './wait.js'

const START_SCRIPT = fileURLToPath(new URL('../../scripts/start.ts', import.meta.url))

export interface StartedStack {
  readonly child: ChildProcess
  readonly urls: { readonly intents: string; readonly oracle: string }
  /** Everything it printed so far. */
  output(): string
  /** SIGTERM, then the exit code (or signal). */
  stop(): Promise<string>
}

/** Starts `npm start` with `env` (on top of this process's) from `cwd`; killed in `t`'s teardown. */
export async function startNpmStart(
  t: Pick<Test, 'teardown'>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): Promise<StartedStack> {
  const child = spawn(process.execPath, nodeScriptArguments(START_SCRIPT), {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const exited = once(child, 'exit').then(([code, signal]) => String(signal ?? code))
  const { urls, output } = await stackUrls(child, exited)
  return {
    child,
    urls,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/**
 * The URLs a starting `npm start` process logs for both services (its output collected meanwhile);
 * rejects, with the output, when it exits (`exited`) first or logs nothing within the start bound.
 */
export async function stackUrls(
  child: ChildProcess,
  exited: Promise<string>,
): Promise<{ urls: StartedStack['urls']; output: () => string }> {
  let output = ''
  const logged = new Promise<StartedStack['urls']>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const intents = /intent service\s+(http:\/\/[^\s"]+)/.exec(output)?.[1]
      const oracle = /oracle\s+(http:\/\/[^\s"]+)/.exec(output)?.[1]
      if (intents && oracle) resolve({ intents, oracle })
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    void exited.then((how) => reject(new Error(`start exited with ${how} before serving:\n${output}`)))
  })
  const urls = await within('both services to log their URLs', logged, {
    timeoutMs: PROCESS_START_BOUND_MS,
    lastSeen: () => `output:\n${output}`,
  })
  return { urls, output: () => output }
}
