/**
 * `pontis`: operator commands run beside the intent service, on its database.
 *
 *   pontis keys create --label <label> [--tier standard] [--webhook-url <url> [--webhook-header 'K: V']...]
 *   pontis keys list | show <id> | rotate <id> | revoke <id>
 *   pontis keys webhook <id> (--url <url> [--header 'K: V']... | --disable | --remove)
 *
 * The database is the service's: DATABASE_URL (+ DATABASE_SCHEMA) for PostgreSQL, else PGlite in
 * PONTIS_DATA_DIR. Webhook URLs are checked as the service checks them, with its
 * WEBHOOKS_ALLOW_HTTP_LOOPBACK and WEBHOOKS_ALLOW_PRIVATE settings. A PGlite directory may be open in one process only: stop the service first, or
 * use the admin API. Secrets are printed once (create, rotate) on stdout and nowhere else.
 * Exit codes: 0 done, 1 refused or failed (unknown or revoked key, bad value, database error), 2 usage.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createLogger } from '@pontis/core'
import { openRequestStore } from '../store/index.js'
import {
  API_KEY_TIERS,
  ApiKeyError,
  type ApiKeyRecord,
  ApiKeyStore,
  type ApiKeyTier,
  checkTier,
  type WebhookConfig,
} from './api-keys.js'
import { webhookPolicyFromEnv } from './webhook-target.js'

export const USAGE = `Usage: pontis keys <command> [options]

Manage the partner API keys of the intent service, directly on its database.

Commands:
  create --label <label> [--tier <tier>] [--webhook-url <url>] [--webhook-header 'Name: value']...
                          Create a key; prints its secret, which is never shown again.
                          Tiers: ${API_KEY_TIERS.join(', ')} (default standard).
  list                    List every key (revoked ones too).
  show <id>               Show one key.
  rotate <id>             Replace the key's secret; prints the new one. The old one stops working.
  revoke <id>             Revoke the key for good.
  webhook <id> --url <url> [--header 'Name: value']...
                          Set the key's webhook (enabled).
  webhook <id> --disable  Pause the key's webhook, keeping its URL and headers.
  webhook <id> --remove   Remove the key's webhook.

Options:
  --json                  Print JSON instead of text.
  --database-url <url>    PostgreSQL URL (default: DATABASE_URL).
  --schema <name>         Database schema (default: DATABASE_SCHEMA, else public).
  --data-dir <dir>        PGlite data directory when no PostgreSQL URL is set (default: PONTIS_DATA_DIR).
                          A PGlite directory is opened by one process at a time: stop the service first.
  -h, --help              Show this help.

Webhook URLs are checked as the service checks them: https:// to a public address
(WEBHOOKS_ALLOW_HTTP_LOOPBACK=true admits http:// and loopback for development,
WEBHOOKS_ALLOW_PRIVATE=true private networks).

Exit codes: 0 done, 1 refused or failed, 2 usage error.
`

/** A mistake in the command line: printed with a pointer to --help, exit code 2. */
class UsageError extends Error {}

export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
}

const OPTIONS = {
  label: { type: 'string' },
  tier: { type: 'string' },
  'webhook-url': { type: 'string' },
  'webhook-header': { type: 'string', multiple: true },
  url: { type: 'string' },
  header: { type: 'string', multiple: true },
  disable: { type: 'boolean' },
  remove: { type: 'boolean' },
  json: { type: 'boolean' },
  'database-url': { type: 'string' },
  schema: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** Which options each command takes (beyond --json and the database ones). */
const COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  create: ['label', 'tier', 'webhook-url', 'webhook-header'],
  list: [],
  show: [],
  rotate: [],
  revoke: [],
  webhook: ['url', 'header', 'disable', 'remove'],
}
const COMMON_OPTIONS = ['json', 'database-url', 'schema', 'data-dir', 'help']

function parseHeaders(
  values: readonly string[] | undefined,
  option: string,
): Record<string, string> | undefined {
  if (values === undefined || values.length === 0) return undefined
  const headers: Record<string, string> = {}
  for (const value of values) {
    const colon = value.indexOf(':')
    if (colon <= 0) throw new UsageError(`${option} takes 'Name: value', got "${value.split(':', 1)[0]}..."`)
    headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim()
  }
  return headers
}

function describe(key: ApiKeyRecord): string {
  const lines = [
    `${key.id}  ${key.keyPrefix}…  tier ${key.tier}  ${key.revokedAt === null ? 'active' : 'REVOKED'}`,
    `  label:    ${key.label}`,
    `  created:  ${new Date(key.createdAt).toISOString()}`,
  ]
  if (key.rotatedAt !== null) lines.push(`  rotated:  ${new Date(key.rotatedAt).toISOString()}`)
  if (key.revokedAt !== null) lines.push(`  revoked:  ${new Date(key.revokedAt).toISOString()}`)
  if (key.webhook === null) lines.push('  webhook:  none')
  else {
    // Header values may be credentials of the receiver: names only.
    const names = Object.keys(key.webhook.headers ?? {})
    lines.push(
      `  webhook:  ${key.webhook.enabled ? 'enabled' : 'disabled'} ${key.webhook.url}${
        names.length > 0 ? ` (headers: ${names.join(', ')})` : ''
      }`,
    )
  }
  return `${lines.join('\n')}\n`
}

function idArgument(positionals: readonly string[], command: string): string {
  const [id, ...rest] = positionals
  if (id === undefined) throw new UsageError(`pontis keys ${command} needs a key id (see pontis keys list)`)
  if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`)
  return id
}

/** Runs one command line (without `node` and the script); resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    io.stderr(`pontis: ${(error as Error).message}\nRun pontis --help for usage.\n`)
    return 2
  }
  const { values, positionals } = parsed
  const [group, command, ...rest] = positionals
  if (values.help || group === 'help') {
    io.stdout(USAGE)
    return 0
  }
  try {
    if (group !== 'keys')
      throw new UsageError(group === undefined ? 'no command given' : `unknown command "${group}"`)
    if (command === undefined) throw new UsageError('pontis keys needs a command')
    const allowed = COMMAND_OPTIONS[command]
    if (allowed === undefined) throw new UsageError(`unknown command "keys ${command}"`)
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name) && !COMMON_OPTIONS.includes(name)) {
        throw new UsageError(`--${name} does not apply to pontis keys ${command}`)
      }
    }
    return await runKeys(command, rest, values, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`pontis: ${error.message}\nRun pontis --help for usage.\n`)
      return 2
    }
    if (error instanceof ApiKeyError) {
      io.stderr(`pontis: ${error.message}\n`)
      return 1
    }
    io.stderr(`pontis: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values']

async function runKeys(
  command: string,
  positionals: readonly string[],
  values: Values,
  io: CliIo,
): Promise<number> {
  // Checked before the database is opened, so a usage mistake costs nothing.
  let tier: ApiKeyTier | undefined
  let webhook: WebhookConfig | null | undefined
  let id: string | undefined
  if (command === 'create') {
    if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`)
    if (values.label === undefined) throw new UsageError('pontis keys create needs --label')
    if (values.tier !== undefined) {
      try {
        tier = checkTier(values.tier)
      } catch (error) {
        throw new UsageError((error as Error).message)
      }
    }
    const headers = parseHeaders(values['webhook-header'], '--webhook-header')
    if (values['webhook-url'] !== undefined) {
      webhook = { enabled: true, url: values['webhook-url'], ...(headers ? { headers } : {}) }
    } else if (headers) throw new UsageError('--webhook-header needs --webhook-url')
  } else if (command === 'list') {
    if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`)
  } else {
    id = idArgument(positionals, command)
    if (command === 'webhook') {
      const modes = [values.url !== undefined, values.disable === true, values.remove === true].filter(
        Boolean,
      )
      if (modes.length !== 1)
        throw new UsageError('pontis keys webhook needs exactly one of --url, --disable, --remove')
      const headers = parseHeaders(values.header, '--header')
      if (headers && values.url === undefined) throw new UsageError('--header needs --url')
      if (values.url !== undefined)
        webhook = { enabled: true, url: values.url, ...(headers ? { headers } : {}) }
    }
  }

  // The service's rules for webhook URLs, from the same variables, before the database opens.
  const webhookPolicy = webhookPolicyFromEnv(io.env)
  const databaseUrl = values['database-url'] ?? io.env.DATABASE_URL
  const schema = values.schema ?? io.env.DATABASE_SCHEMA
  const dataDir = values['data-dir'] ?? io.env.PONTIS_DATA_DIR
  if ((databaseUrl === undefined || databaseUrl === '') && (dataDir === undefined || dataDir === '')) {
    throw new UsageError(
      'no database: set DATABASE_URL (PostgreSQL) or PONTIS_DATA_DIR (PGlite), or pass --database-url / --data-dir',
    )
  }
  const store = await openRequestStore({
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(dataDir ? { dataDir } : {}),
    ...(schema ? { schema } : {}),
    logger: createLogger('pontis-cli', { level: 'warn', write: (line) => io.stderr(`${line}\n`) }),
  })
  const keys = new ApiKeyStore(store.client, { cacheTtlMs: 0, webhookPolicy })
  const json = values.json === true
  const print = (value: unknown, text: string) =>
    io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : text)
  const missing = (keyId: string) => new ApiKeyError('not_found', `no API key ${keyId}`)
  try {
    switch (command) {
      case 'create': {
        const created = await keys.create({
          label: values.label!,
          ...(tier ? { tier } : {}),
          ...(webhook ? { webhook } : {}),
        })
        print(
          created,
          `${describe(created.key)}\nsecret: ${created.secret}\nStore the secret now: it is shown only once.\n`,
        )
        return 0
      }
      case 'list': {
        const list = await keys.list()
        print({ keys: list }, list.length === 0 ? 'No API keys.\n' : list.map(describe).join('\n'))
        return 0
      }
      case 'show': {
        const key = await keys.get(id!)
        if (key === undefined) throw missing(id!)
        print(key, describe(key))
        return 0
      }
      case 'rotate': {
        const rotated = await keys.rotate(id!)
        print(
          rotated,
          `${describe(rotated.key)}\nsecret: ${rotated.secret}\nStore the secret now: it is shown only once. The old secret no longer works.\n`,
        )
        return 0
      }
      case 'revoke': {
        const key = await keys.revoke(id!)
        if (key === undefined) throw missing(id!)
        print(key, describe(key))
        return 0
      }
      default: {
        // webhook
        if (values.disable) {
          const current = await keys.get(id!)
          if (current === undefined) throw missing(id!)
          webhook = current.webhook === null ? null : { ...current.webhook, enabled: false }
        }
        const key = await keys.setWebhook(id!, webhook ?? null)
        print(key, describe(key))
        return 0
      }
    }
  } finally {
    await store.close()
  }
}

/** Runs the command line of this process and resolves to its exit code (the `pontis` bin calls this). */
export function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  return runCli(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  })
}

function isMain(): boolean {
  const script = process.argv[1]
  if (script === undefined) return false
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isMain()) process.exitCode = await main()
