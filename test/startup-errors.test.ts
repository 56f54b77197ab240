/**
 * Start-up with a bad setting, the way an operator starts the services: `tsx
 * packages/intents/src/main.ts`, `npm start`'s `scripts/start.ts` and `tsx
 * packages/oracle/src/main.ts`. Each must stop by itself with a non-zero exit code; everything it
 * prints is log lines (never a stack trace), exactly one of them at level error, naming the
 * variable to change.
 * Every variable the intent service reads is covered, and the config files' `${VAR}` placeholders.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeScriptArguments } from '@pontis/core'
import t, { type Test } from 'tap'

const repoRoot = fileURLToPath(new URL('..', import.meta.url))
/** How long a start with a bad setting may take to stop by itself before it counts as hung. */
const STOP_WITHIN_MS = 120_000

// Some forty processes start here, six at a time, each loading part of the code base: more than
// the default file budget on a busy machine.
t.setTimeout(900_000)
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test'

interface StartCase {
  /** What is wrong, and the variable the line must name. */
  readonly name: string
  readonly variable: string
  readonly env: Record<string, string>
}

/** One bad setting per case; everything else is the local environment's defaults. */
const INTENTS_CASES: readonly StartCase[] = [
  { name: 'a port that is not a number', variable: 'INTENTS_PORT', env: { INTENTS_PORT: 'http' } },
  { name: 'a port out of range', variable: 'INTENTS_PORT', env: { INTENTS_PORT: '70000' } },
  { name: 'a host that cannot be bound', variable: 'HOST', env: { HOST: 'no-such-host.invalid' } },
  { name: 'a proxy switch that is not true or false', variable: 'TRUST_PROXY', env: { TRUST_PROXY: 'yes' } },
  {
    name: 'a database URL without a user',
    variable: 'DATABASE_URL',
    env: { DATABASE_URL: 'postgres://127.0.0.1:5432/test' },
  },
  { name: 'a database URL that is no URL', variable: 'DATABASE_URL', env: { DATABASE_URL: 'localhost' } },
  {
    name: 'a database URL of another kind',
    variable: 'DATABASE_URL',
    env: { DATABASE_URL: 'mysql://root@127.0.0.1/test' },
  },
  {
    name: 'a database that does not exist',
    variable: 'DATABASE_URL',
    env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/no_such_db' },
  },
  {
    name: 'a database nobody listens for',
    variable: 'DATABASE_URL',
    env: { DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/test' },
  },
  {
    name: 'an invalid schema name',
    variable: 'DATABASE_SCHEMA',
    env: { DATABASE_URL: POSTGRES, DATABASE_SCHEMA: 'a b;' },
  },
  {
    name: 'a data directory under a file',
    variable: 'PONTIS_DATA_DIR',
    env: { PONTIS_DATA_DIR: `${repoRoot}package.json/data` },
  },
  { name: 'an admin token that is too short', variable: 'ADMIN_TOKEN', env: { ADMIN_TOKEN: 'short' } },
  { name: 'rate limits that are not JSON', variable: 'RATE_LIMITS', env: { RATE_LIMITS: '{quote' } },
  {
    name: 'rate limits for an unknown caller',
    variable: 'RATE_LIMITS',
    env: { RATE_LIMITS: '{"robots":{}}' },
  },
  {
    name: 'a workers switch that is not on or off',
    variable: 'PONTIS_WORKERS',
    env: { PONTIS_WORKERS: 'no' },
  },
  {
    name: 'a solver lease that is not a number',
    variable: 'SOLVER_LEASE_MS',
    env: { SOLVER_LEASE_MS: '2s' },
  },
  { name: 'a webhook lease of zero', variable: 'WEBHOOK_LEASE_MS', env: { WEBHOOK_LEASE_MS: '0' } },
  { name: 'a negative webhook timeout', variable: 'WEBHOOK_TIMEOUT_MS', env: { WEBHOOK_TIMEOUT_MS: '-5' } },
  {
    name: 'a webhook http switch that is not true or false',
    variable: 'WEBHOOKS_ALLOW_HTTP_LOOPBACK',
    env: { WEBHOOKS_ALLOW_HTTP_LOOPBACK: '1' },
  },
  {
    name: 'a private-network switch that is not true or false',
    variable: 'WEBHOOKS_ALLOW_PRIVATE',
    env: { WEBHOOKS_ALLOW_PRIVATE: 'on' },
  },
  { name: 'an unknown log level', variable: 'LOG_LEVEL', env: { LOG_LEVEL: 'loud' } },
  { name: 'an unknown environment', variable: 'nosuch', env: { ENVIRONMENT: 'nosuch' } },
  {
    name: 'an RPC URL that is no URL (chain file placeholder)',
    variable: 'LOCAL_A_RPC_URL',
    env: { LOCAL_A_RPC_URL: 'not-a-url' },
  },
  {
    name: 'a token address that is no address (chain file placeholder)',
    variable: 'LOCAL_A_USDC_ADDRESS',
    env: { LOCAL_A_USDC_ADDRESS: '0x12' },
  },
  {
    name: 'a solver key of the wrong form (solver file placeholder)',
    variable: 'SOLVER_PRIVATE_KEY',
    env: { SOLVER_PRIVATE_KEY: '0x12' },
  },
  {
    name: 'a solver key outside the curve (solver file placeholder)',
    variable: 'SOLVER_PRIVATE_KEY',
    env: { SOLVER_PRIVATE_KEY: `0x${'0'.repeat(64)}` },
  },
  {
    name: 'a family key that is no key (solver file placeholder)',
    variable: 'SVM_SOLVER_PRIVATE_KEY',
    env: { SVM_SOLVER_PRIVATE_KEY: 'nope' },
  },
  {
    name: 'two bad settings at once',
    variable: 'TRUST_PROXY',
    env: { TRUST_PROXY: 'yes', SOLVER_LEASE_MS: 'x' },
  },
]

/** `npm start` reads the same variables through the same code; a few of each kind. */
const START_CASES: readonly StartCase[] = [
  {
    name: 'a database URL without a user',
    variable: 'DATABASE_URL',
    env: { DATABASE_URL: 'postgres://127.0.0.1:5432/test' },
  },
  { name: 'an admin token that is too short', variable: 'ADMIN_TOKEN', env: { ADMIN_TOKEN: 'short' } },
  {
    name: 'an RPC URL that is no URL (chain file placeholder)',
    variable: 'LOCAL_B_RPC_URL',
    env: { LOCAL_B_RPC_URL: 'nope' },
  },
  {
    name: 'an oracle threshold that is not a number',
    variable: 'ORACLE_SIGNERS_THRESHOLD',
    env: { ORACLE_SIGNERS_THRESHOLD: 'x' },
  },
  { name: 'a devnet switch that is not on or off', variable: 'DEVNET', env: { DEVNET: 'false' } },
]

const ORACLE_CASES: readonly StartCase[] = [
  { name: 'a port that is not a number', variable: 'HTTP_PORT', env: { HTTP_PORT: 'http' } },
  { name: 'an unknown log level', variable: 'LOG_LEVEL', env: { LOG_LEVEL: 'loud' } },
  {
    name: 'an RPC URL that is no URL (chain file placeholder)',
    variable: 'LOCAL_A_RPC_URL',
    env: { LOCAL_A_RPC_URL: 'not-a-url' },
  },
]

interface Outcome {
  readonly code: number | null
  readonly lines: readonly string[]
}

/** Starts the script with the case's setting and waits for it to exit (it must: start-up fails). */
function run(script: string, env: Record<string, string>): Promise<Outcome> {
  // No user from the account: a DATABASE_URL without one must fail whoever runs the test.
  const { USER: _user, PGUSER: _pguser, LOGNAME: _logname, ...inherited } = process.env
  const child = spawn(process.execPath, nodeScriptArguments(join(repoRoot, script)), {
    cwd: repoRoot,
    env: {
      ...inherited,
      ENVIRONMENT: 'local',
      DEVNET: 'off',
      INTENTS_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  // Generous: a start that fails loads little, but a busy machine may take tens of seconds.
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_WITHIN_MS)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      // The oracle warns that it signs with the development key (local only): not an error line.
      const lines = output
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.includes('ECDSA_PRIVATE_KEY is not set'))
      resolve({ code, lines })
    })
  })
}

async function check(t: Test, script: string, cases: readonly StartCase[]): Promise<void> {
  // A few at a time: each start loads the plugins, a few seconds on a busy machine.
  const outcomes: Outcome[] = []
  for (let start = 0; start < cases.length; start += 6) {
    outcomes.push(...(await Promise.all(cases.slice(start, start + 6).map((item) => run(script, item.env)))))
  }
  for (const [index, item] of cases.entries()) {
    const { code, lines } = outcomes[index] as Outcome
    const shown = lines.join('\n').slice(0, 2000)
    t.not(code, 0, `${item.name}: exits non-zero`)
    t.notOk(code === null, `${item.name}: stops by itself within ${STOP_WITHIN_MS / 1000} s`)
    // Every line is a log line (a stack trace or a raw dump is not), and one of them is the error.
    const entries: Array<{ level?: string; msg?: string }> = []
    for (const line of lines) {
      try {
        entries.push(JSON.parse(line) as { level?: string; msg?: string })
      } catch {
        t.fail(`${item.name}: a line that is not a log line: ${line.slice(0, 300)}\n${shown}`)
      }
    }
    const errors = entries.filter((entry) => entry.level === 'error')
    t.equal(errors.length, 1, `${item.name}: one error line\n${shown}`)
    t.match(
      errors[0]?.msg,
      item.variable,
      `${item.name}: names ${item.variable}: ${errors[0]?.msg?.slice(0, 300)}`,
    )
    t.notMatch(shown, /\bat .+:\d+:\d+\)?$/m, `${item.name}: no stack trace`)
    t.notMatch(shown, 'hunter2', `${item.name}: never shows a password`)
  }
}

t.test('the intent service (tsx packages/intents/src/main.ts)', (t) =>
  check(t, 'packages/intents/src/main.ts', INTENTS_CASES),
)
t.test('npm start (scripts/start.ts)', (t) => check(t, 'scripts/start.ts', START_CASES))
t.test('the oracle (tsx packages/oracle/src/main.ts)', (t) =>
  check(t, 'packages/oracle/src/main.ts', ORACLE_CASES),
)
