/**
 * Runs a service's main script (`packages/intents/src/main.ts`, `scripts/start.ts`, …) inside the
 * test process instead of as a child: a child costs about 2 CPU-s of loading the code base, a run
 * here a fraction of that once the modules are loaded. For start-ups that fail; a test keeps a few
 * real children as well, for what only a process shows (it stops, with that exit code).
 */
import { pathToFileURL } from 'node:url'
import { deferred, within } from './wait.js'

/** What a run of a main script showed: the code it exited with (null: it never exited) and its output. */
export interface ScriptRun {
  readonly code: number | null
  /** Everything written to stdout and stderr, in order. */
  readonly output: string
}

let evaluations = 0
/** Runs share process.env, the standard streams and process.exit: one at a time. */
let previous: Promise<unknown> = Promise.resolve()

/**
 * Evaluates the script afresh (its own module URL; what it imports is shared) with `process.env`
 * replaced by `env`, everything written to the standard streams recorded, and `process.exit`
 * recording the code instead of exiting. A start that goes through (code null) is stopped with
 * SIGTERM, as an orchestrator would, before this process's own `process.exit` is back.
 */
export function runScriptInProcess(
  scriptPath: string,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly timeoutMs: number },
): Promise<ScriptRun> {
  const run = previous.then(() => evaluate(scriptPath, env, options.timeoutMs))
  previous = run.catch(() => undefined)
  return run
}

async function evaluate(
  scriptPath: string,
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs: number,
): Promise<ScriptRun> {
  const saved = { ...process.env }
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write }
  const exit = process.exit
  let output = ''
  let code: number | null = null
  const exited = deferred()
  const record = ((chunk: string | Uint8Array) => {
    output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()
    return true
  }) as typeof process.stdout.write
  for (const name of Object.keys(process.env)) delete process.env[name]
  Object.assign(process.env, env)
  process.stdout.write = record
  process.stderr.write = record
  process.exit = ((exitCode?: number | string | null) => {
    code ??= Number(exitCode ?? 0)
    exited.resolve()
  }) as typeof process.exit
  let stoppedWith: number | null = null
  try {
    const url = `${pathToFileURL(scriptPath).href}?run=${++evaluations}`
    const listening = new Set(process.listeners('SIGTERM'))
    await within(`${scriptPath} to give up`, import(url), { timeoutMs })
    stoppedWith = code
    if (stoppedWith === null) {
      // Only the handlers the script installed: an emitted SIGTERM would also run tap's own exit
      // handler, which writes this process's coverage there and stops recording the rest.
      for (const handler of process.listeners('SIGTERM'))
        if (!listening.has(handler)) (handler as (signal: NodeJS.Signals) => void)('SIGTERM')
      await within(`${scriptPath} to stop on SIGTERM`, exited.promise, { timeoutMs })
    }
  } finally {
    process.stdout.write = writes.stdout
    process.stderr.write = writes.stderr
    process.exit = exit
    for (const name of Object.keys(process.env)) delete process.env[name]
    Object.assign(process.env, saved)
  }
  return { code: stoppedWith, output }
}
