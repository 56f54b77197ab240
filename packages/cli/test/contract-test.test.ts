/**
 * `pontis contract-test` against real deployments: both services in-process on the devnet pass;
 * a proxy that serves one field with the wrong type fails, and the report names the field. The
 * command runs as a child process the way `npx pontis` runs it.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import {
  type ContractReport,
  EXIT_FAILED,
  EXIT_PASSED,
  EXIT_USAGE,
  formatReport,
  runCli,
  runContractTest,
} from '../src/index.js'
import { ADMIN_TOKEN, startBrokenProxy, startServices } from './fixtures/services.js'

// Two services on a full devnet, then a child process checking every operation: more than the
// default file budget on a busy machine.
t.setTimeout(600_000)

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
const bin = fileURLToPath(new URL('../bin/pontis.js', import.meta.url))

/** Runs `node packages/cli/bin/pontis.js ...args` and collects its output. */
function pontis(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.once('error', reject)
    child.once('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

/** The failing lines of a report, for assertion messages. */
function failures(report: string): string {
  return report
    .split('\n')
    .filter((line) => !line.startsWith('✓'))
    .join('\n')
}

/** runCli in-process, its output collected. */
async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(args, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
  })
  return { code, stdout, stderr }
}

t.test('usage errors exit 2 with the usage text', async (t) => {
  for (const args of [
    [],
    ['bogus'],
    ['contract-test'],
    ['contract-test', '--url', 'not a url'],
    ['contract-test', '--url', 'http://127.0.0.1:1', '--oracle-url', 'ftp://example.org'],
    ['contract-test', '--url', 'http://127.0.0.1:1', '--generated', 'many'],
    ['contract-test', '--url', 'http://127.0.0.1:1', '--bogus'],
  ]) {
    const { code, stdout, stderr } = await cli(args)
    t.equal(code, EXIT_USAGE, `pontis ${args.join(' ')}`)
    t.equal(stdout, '')
    t.match(stderr, /^pontis: .+\n\nUsage: pontis contract-test --url/)
  }
  const help = await cli(['contract-test', '--help'])
  t.equal(help.code, EXIT_PASSED)
  t.match(help.stdout, '--oracle-url <base>')
  // `deploy` is a command of its own (test/deploy.test.ts): its usage errors show its usage.
  const deploy = await cli(['deploy'])
  t.equal(deploy.code, EXIT_USAGE)
  t.match(deploy.stderr, /^pontis deploy: --rpc-url is required\n\nUsage: pontis deploy --rpc-url/)
})

t.test('against the services on the devnet', async (t) => {
  const services = await startServices(t)

  t.test('every check passes and the command exits 0', async (t) => {
    // A partner's key, for the partner's own operations (its webhook, usage).
    const created = await fetch(`${services.intentsUrl}/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'contract test partner' }),
    })
    t.equal(created.status, 201, 'a partner key to test with')
    const { secret } = (await created.json()) as { secret: string }
    const run = await pontis([
      'contract-test',
      '--url',
      services.intentsUrl,
      '--oracle-url',
      services.oracleUrl,
      '--admin-token',
      ADMIN_TOKEN,
      '--api-key',
      secret,
      '--generated',
      '2',
    ])
    t.equal(run.code, EXIT_PASSED, failures(run.stdout) + run.stderr)
    t.notMatch(run.stdout, '✗')
    for (const operation of ['getQuoteV2', 'getChains', 'createApiKey', 'attestSolverFills', 'getLives']) {
      t.match(run.stdout, new RegExp(`✓ \\w+ ${operation} \\[example`), `${operation} is checked`)
    }
    t.match(run.stdout, /✓ intents getQuoteV2 \[generated #2\]/)
    t.match(run.stdout, /\d+ checks: \d+ passed, 0 failed, 0 operations skipped \(seed 42\)/)
  })

  t.test('without the admin token the admin operations are skipped and said so', async (t) => {
    const report = await runContractTest({ intentsUrl: services.intentsUrl, generated: 0 })
    t.equal(report.failed, 0, failures(formatReport(report)))
    const skipped = report.skipped.map((skip) => skip.operationId)
    t.ok(skipped.includes('createApiKey') && skipped.includes('redeliverWebhookEvent'))
    t.notOk(skipped.includes('getQuoteV2'))
    t.notOk(
      report.checks.some((check) => check.service === 'oracle'),
      'no oracle URL, no oracle checks',
    )
    t.match(formatReport(report), /- intents createApiKey: skipped, needs adminToken \(pass --admin-token\)/)
  })

  t.test('a field of the wrong type fails the run and the report names it', async (t) => {
    const broken = await startBrokenProxy(t, services.intentsUrl, (body) => {
      const first = body.chains[0]
      if (first) first.id = String(first.id)
    })
    const run = await pontis(['contract-test', '--url', broken, '--generated', '0'])
    t.equal(run.code, EXIT_FAILED, run.stderr)
    t.match(
      run.stdout,
      /✗ intents getChains \[example \(required parameters\)\] GET \S+\/chains -> 200: body\/chains\/0\/id must be integer/,
    )
    t.match(run.stdout, /\d+ checks: \d+ passed, [1-9]\d* failed/)
    t.match(run.stdout, /✓ intents getQuoteV2 \[example evmBridge\]/, 'the other operations still pass')

    const json = await cli(['contract-test', '--url', broken, '--generated', '0', '--json'])
    t.equal(json.code, EXIT_FAILED)
    const report = JSON.parse(json.stdout) as ContractReport
    const failing = report.checks.filter((check) => !check.ok)
    t.ok(failing.length > 0 && failing.every((check) => check.operationId === 'getChains'))
    t.match(failing[0]?.problems[0], /^body\/chains\/0\/id must be integer/)
  })

  t.test('a deployment that does not answer fails every check', async (t) => {
    const report = await runContractTest({ intentsUrl: 'http://127.0.0.1:9', generated: 0 })
    t.equal(report.passed, 0)
    t.ok(report.failed > 0)
    t.match(report.checks[0]?.problems[0], /^request failed: /)
  })
})
