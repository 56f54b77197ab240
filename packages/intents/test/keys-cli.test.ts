/**
 * `pontis keys ...` as operators run it: child processes (`node --import tsx src/keys/cli.ts`, and the
 * package's `bin/pontis.mjs`) on a PGlite data directory in a temporary folder, then the same
 * directory opened here to check what they did. Usage mistakes are checked in-process (no database).
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeScriptArguments } from '@pontis/core'
import t from 'tap'
import { WAIT_BOUND_MS } from '../../../test/helpers/wait.js'
import { runCli, USAGE } from '../src/keys/cli.js'
import { ApiKeyStore } from '../src/keys/index.js'
import { openRequestStore } from '../src/store/index.js'

// About ten CLI runs as child processes, one after another, each compiling TypeScript and opening
// PGlite: 91 s of tap's 120 s on a busy 2-core machine.
t.setTimeout(300_000)

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
const CLI = join(PACKAGE, 'src', 'keys', 'cli.ts')
const BIN = join(PACKAGE, 'bin', 'pontis.mjs')

const scratch = await mkdtemp(join(tmpdir(), 'pontis-cli-test-'))
t.teardown(() => rm(scratch, { recursive: true, force: true }))
const dataDir = join(scratch, 'db')
// The service's settings, minus any PostgreSQL of the environment running the tests.
const env = {
  ...process.env,
  DATABASE_URL: '',
  DATABASE_SCHEMA: '',
  PONTIS_DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

function run(args: readonly string[], script = CLI): Promise<Run> {
  const nodeArgs = script === CLI ? [...nodeScriptArguments(CLI), ...args] : [script, ...args]
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      nodeArgs,
      { env, cwd: PACKAGE, timeout: WAIT_BOUND_MS },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        const killed = error?.killed
          ? `\n(killed after ${WAIT_BOUND_MS / 1000} s: the command did not exit)`
          : ''
        resolve({ code, stdout, stderr: `${stderr}${killed}` })
      },
    )
  })
}

/** The same command in this process (cheaper than a child), on the same data directory. */
async function runHere(argv: readonly string[]): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: { PONTIS_DATA_DIR: dataDir },
  })
  return { code, stdout, stderr }
}

const secretOf = (output: string): string => /^secret: (pk_[A-Za-z0-9_-]{64})$/m.exec(output)?.[1] ?? ''
const idOf = (output: string): string => /^(key_[0-9a-f]{24}) /m.exec(output)?.[1] ?? ''

t.test('usage mistakes are exit code 2 and touch no database', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /no command given/],
    [['frob'], /unknown command "frob"/],
    [['keys'], /needs a command/],
    [['keys', 'frob'], /unknown command "keys frob"/],
    [['keys', 'create'], /needs --label/],
    [['keys', 'create', '--label', 'x', '--tier', 'gold'], /tier must be one of public, standard, elevated/],
    [['keys', 'create', '--label', 'x', '--webhook-header', 'A: b'], /--webhook-header needs --webhook-url/],
    [
      [
        'keys',
        'create',
        '--label',
        'x',
        '--webhook-url',
        'https://93.184.215.16',
        '--webhook-header',
        'nocolon',
      ],
      /Name: value/,
    ],
    [['keys', 'create', '--label', 'x', 'extra'], /unexpected arguments: extra/],
    [['keys', 'list', '--label', 'x'], /--label does not apply to pontis keys list/],
    [['keys', 'list', 'extra'], /unexpected arguments/],
    [['keys', 'rotate'], /needs a key id/],
    [['keys', 'revoke', 'a', 'b'], /unexpected arguments: b/],
    [['keys', 'webhook', 'key_x'], /exactly one of --url, --disable, --remove/],
    [['keys', 'webhook', 'key_x', '--url', 'https://93.184.215.16', '--disable'], /exactly one of/],
    [['keys', 'webhook', 'key_x', '--disable', '--header', 'A: b'], /--header needs --url/],
    [['keys', 'list', '--bogus'], /Unknown option '--bogus'/],
  ]
  for (const [argv, message] of cases) {
    let stdout = ''
    let stderr = ''
    const code = await runCli(argv, {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      env: { PONTIS_DATA_DIR: join(scratch, 'never-created') },
    })
    t.equal(code, 2, argv.join(' ') || '(nothing)')
    t.match(stderr, message)
    t.match(stderr, /pontis --help/)
    t.equal(stdout, '')
  }
  let stderr = ''
  const noDatabase = await runCli(['keys', 'list'], {
    stdout: () => {},
    stderr: (text) => (stderr += text),
    env: {},
  })
  t.equal(noDatabase, 2)
  t.match(stderr, /no database: set DATABASE_URL .* or PONTIS_DATA_DIR/)
  let help = ''
  t.equal(await runCli(['--help'], { stdout: (text) => (help += text), stderr: () => {}, env: {} }), 0)
  t.equal(help, USAGE)
})

t.test('create, list, webhook, rotate, revoke as child processes', async (t) => {
  const help = await run(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: pontis keys <command>/)

  const created = await run([
    'keys',
    'create',
    '--label',
    'Acme backend',
    '--tier',
    'elevated',
    '--webhook-url',
    'https://93.184.215.14/pontis',
    '--webhook-header',
    'Authorization: Bearer receiver-token',
  ])
  t.equal(created.code, 0, created.stderr)
  const first = { id: idOf(created.stdout), secret: secretOf(created.stdout) }
  t.match(first.id, /^key_/)
  t.match(first.secret, /^pk_/)
  t.match(created.stdout, /tier elevated/)
  t.match(created.stdout, /shown only once/)
  t.notOk(created.stdout.includes('receiver-token'), 'webhook header values are not printed')
  t.equal(created.stderr, '', 'nothing on stderr, least of all the secret')

  const second = await run(['keys', 'create', '--label', 'Acme wallet', '--json'])
  t.equal(second.code, 0, second.stderr)
  const secondJson = JSON.parse(second.stdout) as { key: { id: string; tier: string }; secret: string }
  t.equal(secondJson.key.tier, 'standard')

  const listed = await run(['keys', 'list'])
  t.equal(listed.code, 0)
  t.match(listed.stdout, first.id)
  t.match(listed.stdout, secondJson.key.id)
  t.match(listed.stdout, 'webhook:  enabled https://93.184.215.14/pontis (headers: Authorization)')
  t.notOk(listed.stdout.includes(first.secret), 'list never prints a secret')
  t.notOk(listed.stdout.includes(secondJson.secret))

  const paused = await run(['keys', 'webhook', first.id, '--disable'])
  t.equal(paused.code, 0, paused.stderr)
  t.match(paused.stdout, 'webhook:  disabled https://93.184.215.14/pontis')
  const set = await run([
    'keys',
    'webhook',
    secondJson.key.id,
    '--url',
    'https://93.184.215.15/hook',
    '--header',
    'X-A: 1',
  ])
  t.equal(set.code, 0, set.stderr)
  t.match(set.stdout, 'webhook:  enabled https://93.184.215.15/hook (headers: X-A)')
  const badUrl = await runHere(['keys', 'webhook', secondJson.key.id, '--url', 'ftp://93.184.215.15/'])
  t.equal(badUrl.code, 1)
  t.match(badUrl.stderr, /webhook\.url refused \(scheme\): .*use https:/)

  const rotated = await run(['keys', 'rotate', first.id])
  t.equal(rotated.code, 0, rotated.stderr)
  const newSecret = secretOf(rotated.stdout)
  t.match(newSecret, /^pk_/)
  t.not(newSecret, first.secret)
  t.match(rotated.stdout, /old secret no longer works/)

  const revoked = await run(['keys', 'revoke', secondJson.key.id])
  t.equal(revoked.code, 0, revoked.stderr)
  t.match(revoked.stdout, /REVOKED/)
  const rotateRevoked = await runHere(['keys', 'rotate', secondJson.key.id])
  t.equal(rotateRevoked.code, 1)
  t.match(rotateRevoked.stderr, /is revoked/)
  const unknown = await runHere(['keys', 'show', 'key_000000000000000000000000'])
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /no API key key_000000000000000000000000/)

  const viaBin = await run(['keys', 'show', first.id, '--json'], BIN)
  t.equal(viaBin.code, 0, viaBin.stderr)
  t.match(JSON.parse(viaBin.stdout), { id: first.id, tier: 'elevated', webhook: { enabled: false } })
  const removed = await run(['keys', 'webhook', first.id, '--remove'], BIN)
  t.equal(removed.code, 0, removed.stderr)
  t.match(removed.stdout, 'webhook:  none')

  // What the service would see on this database.
  const store = await openRequestStore({ dataDir })
  t.teardown(() => store.close())
  const keys = new ApiKeyStore(store.client)
  t.equal((await keys.authenticate(newSecret))?.id, first.id, 'the rotated secret authenticates')
  t.equal(await keys.authenticate(first.secret), undefined, 'the old one does not')
  t.equal(await keys.authenticate(secondJson.secret), undefined, 'nor a revoked key')
  t.same((await keys.get(secondJson.key.id))?.webhook, {
    enabled: true,
    url: 'https://93.184.215.15/hook',
    headers: { 'X-A': '1' },
  })
  t.equal((await keys.get(first.id))?.webhook, null, 'removed by the bin run')
})
