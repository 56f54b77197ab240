import { parseArgs } from 'node:util'
import {
  DEFAULT_GENERATED_CASES,
  DEFAULT_SEED,
  formatCheck,
  formatReport,
  runContractTest,
} from './contract-test.js'
import { runDeployCommand } from './deploy-command.js'

/** Where the command writes. */
export interface CliOutput {
  stdout(text: string): void
  stderr(text: string): void
}

/** Exit codes: every check passed, a mismatch was found, the command line is wrong. */
export const EXIT_PASSED = 0
export const EXIT_FAILED = 1
export const EXIT_USAGE = 2

export const USAGE = `Usage: pontis contract-test --url <intent service base URL> [options]
       pontis deploy --rpc-url <url> --allocator <address> [options]   (pontis deploy --help)

Sends every operation's documented examples and generated valid requests to a deployment and
checks each answer against openapi/intents.yaml (and openapi/oracle.yaml with --oracle-url).

Options:
  --url <base>           Base URL of the intent service (required), e.g. http://localhost:4000
  --oracle-url <base>    Base URL of the attestation oracle; tested only when given
  --admin-token <token>  Admin token; operations that need it are skipped without it
  --api-key <key>        Partner API key sent as x-api-key (higher rate limits)
  --generated <n>        Generated cases per operation (default ${DEFAULT_GENERATED_CASES}; 0 for examples only)
  --seed <n>             Seed of the generated cases (default ${DEFAULT_SEED})
  --json                 Print the report as JSON instead of text
  -h, --help             Show this text

Exit status: 0 when every answer conforms, 1 on any mismatch, 2 on a usage error.
`

function usageError(output: CliOutput, message: string): number {
  output.stderr(`pontis: ${message}\n\n${USAGE}`)
  return EXIT_USAGE
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

function nonNegativeInteger(value: string | undefined): number | undefined | null {
  if (value === undefined) return undefined
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : null
}

/** Runs `pontis` with its arguments (without `node` and the script) and returns the exit code. */
export async function runCli(
  argv: readonly string[],
  output: CliOutput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [command, ...rest] = argv
  if (command === '-h' || command === '--help' || command === 'help') {
    output.stdout(USAGE)
    return EXIT_PASSED
  }
  if (command === 'deploy') return await runDeployCommand(rest, output, env)
  if (command !== 'contract-test') {
    return usageError(output, command === undefined ? 'no command given' : `unknown command "${command}"`)
  }
  let values: Record<string, string | boolean | undefined>
  try {
    ;({ values } = parseArgs({
      args: [...rest],
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string' },
        'oracle-url': { type: 'string' },
        'admin-token': { type: 'string' },
        'api-key': { type: 'string' },
        generated: { type: 'string' },
        seed: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (error) {
    return usageError(output, error instanceof Error ? error.message : String(error))
  }
  if (values.help) {
    output.stdout(USAGE)
    return EXIT_PASSED
  }
  const url = values.url as string | undefined
  const oracleUrl = values['oracle-url'] as string | undefined
  if (url === undefined) return usageError(output, '--url is required')
  if (!isHttpUrl(url)) return usageError(output, `--url must be an http(s) URL, got "${url}"`)
  if (oracleUrl !== undefined && !isHttpUrl(oracleUrl))
    return usageError(output, `--oracle-url must be an http(s) URL, got "${oracleUrl}"`)
  const generated = nonNegativeInteger(values.generated as string | undefined)
  if (generated === null) return usageError(output, '--generated must be a whole number')
  const seed = nonNegativeInteger(values.seed as string | undefined)
  if (seed === null) return usageError(output, '--seed must be a whole number')
  const asJson = values.json === true
  const adminToken = values['admin-token'] as string | undefined
  const apiKey = values['api-key'] as string | undefined
  const report = await runContractTest({
    intentsUrl: url,
    ...(oracleUrl !== undefined ? { oracleUrl } : {}),
    ...(adminToken !== undefined ? { adminToken } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(generated !== undefined ? { generated } : {}),
    ...(seed !== undefined ? { seed } : {}),
    // Text mode prints each line as it is checked, so a slow deployment shows progress.
    ...(asJson ? {} : { onCheck: (check) => output.stdout(`${formatCheck(check)}\n`) }),
  })
  if (asJson) output.stdout(`${JSON.stringify(report, null, 2)}\n`)
  else output.stdout(formatReport(report, { checks: false }))
  return report.failed === 0 ? EXIT_PASSED : EXIT_FAILED
}
