/**
 * Loading `configs/chains.<ENVIRONMENT>.json` and `configs/chains.hub.<ENVIRONMENT>.json`:
 * find the files, parse them, resolve `${VAR}` / `${VAR:-default}` placeholders from the
 * environment, and check the family-neutral shape. Every problem becomes a `ConfigError` naming
 * the file, the JSON path and (for chains) the chain.
 */

import { readdir, readFile, stat } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import type { ChainEntry, HubConfig } from './chains.js'
import { ConfigError, type ConfigIssue, displayPath } from './config-error.js'
import { chainsFileSchema, hubFileSchema } from './config-schema.js'
import { deepFreeze } from './deep-freeze.js'
import { createAjv, type JsonSchema, joinPath, validateWith } from './validation.js'

/** Environment variables, as `process.env` holds them. */
export type EnvironmentVariables = Readonly<Record<string, string | undefined>>

/** The environment used when neither the option nor `ENVIRONMENT` says otherwise. */
export const DEFAULT_ENVIRONMENT = 'local'

/** Environment names are file-name safe (and cannot walk out of the configs directory). */
const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9_-]*$/
const CHAINS_FILE = /^chains\.([a-z0-9][a-z0-9_-]*)\.json$/

/** Options of {@link loadChainsConfig}. */
export interface LoadChainsConfigOptions {
  /** Which files to read. Default: `env.ENVIRONMENT`, else `local`. */
  readonly environment?: string
  /** Directory holding the files. Default: the nearest `configs/` with chains files, from `cwd` up. */
  readonly configDir?: string
  /** Where placeholders are resolved from. Default `process.env`. */
  readonly env?: EnvironmentVariables
  /** Where the search for `configs/` starts. Default `process.cwd()`. */
  readonly cwd?: string
}

/** Both files of one environment, resolved and validated. */
export interface ChainsConfig {
  readonly environment: string
  readonly configDir: string
  /** Absolute path of `chains.<environment>.json`; plugin paths are relative to its directory. */
  readonly chainsFile: string
  /** Absolute path of `chains.hub.<environment>.json`. */
  readonly hubFile: string
  /** vmType → plugin package name or path relative to `chainsFile`. */
  readonly plugins: Readonly<Record<string, string>>
  /** Chains in file order, with defaults applied. */
  readonly chains: readonly ChainEntry[]
  readonly hub: HubConfig
  /** Which variables each value of the chains file came from (see {@link resolvePlaceholders}). */
  readonly sources?: PlaceholderSources
}

/** The file names of one environment. */
export function chainsFileName(environment: string): string {
  return `chains.${environment}.json`
}

export function hubFileName(environment: string): string {
  return `chains.hub.${environment}.json`
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  )
}

async function fileExists(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isFile(),
    () => false,
  )
}

/** The environments a directory has a `chains.<environment>.json` for, sorted. */
export async function listEnvironments(configDir: string): Promise<string[]> {
  const names = await readdir(configDir).catch(() => [] as string[])
  return names
    .map((name) => CHAINS_FILE.exec(name)?.[1])
    .filter((environment): environment is string => environment !== undefined)
    .sort()
}

/**
 * The nearest `configs/` directory holding a `chains.<environment>.json`, from `startDir` upward.
 * @throws ConfigError when there is none.
 */
export async function findConfigDir(startDir: string = process.cwd()): Promise<string> {
  let dir = resolve(startDir)
  for (;;) {
    const candidate = join(dir, 'configs')
    if ((await isDirectory(candidate)) && (await listEnvironments(candidate)).length > 0) return candidate
    const parent = dirname(dir)
    if (parent === dir) {
      throw new ConfigError(
        `no configs/ directory with chains.<environment>.json files found in ${startDir} or above it; pass configDir explicitly`,
      )
    }
    dir = parent
  }
}

/** Line and column (1-based) of a character offset. */
function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position)
  const line = before.split('\n').length
  return { line, column: position - before.lastIndexOf('\n') }
}

/**
 * Reads and parses a JSON file.
 * @throws ConfigError naming the file and, for malformed JSON, the line, column and position.
 */
export async function readJsonFile(file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`cannot read ${displayPath(file)}: ${(error as Error).message}`, [], {
      cause: error,
    })
  }
  text = text.replace(/^\uFEFF/, '')
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    const reason = (error as Error).message
    const match = /position (\d+)/.exec(reason)
    const position = match === null ? text.length : Number(match[1])
    const { line, column } = lineAndColumn(text, position)
    const cleanReason = reason.replace(/\s*in JSON at position \d+.*$/, '')
    throw new ConfigError(
      `${displayPath(file)} is not valid JSON: ${cleanReason} at line ${line}, column ${column} (position ${position})`,
      [],
      { cause: error },
    )
  }
}

/** A placeholder that could not be resolved. */
interface PlaceholderProblem {
  readonly variable?: string
  readonly path: string
  readonly message: string
}

const VARIABLE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/

/** Where resolved values came from: JSON path of a string → the set variables written into it. */
export type PlaceholderSources = Readonly<Record<string, readonly string[]>>

function resolveString(
  text: string,
  path: string,
  env: EnvironmentVariables,
  problems: PlaceholderProblem[],
  used: string[],
): string {
  let result = ''
  let index = 0
  while (index < text.length) {
    const start = text.indexOf('$', index)
    if (start === -1) break
    result += text.slice(index, start)
    if (text.startsWith('$${', start)) {
      // `$${` escapes a literal `${`.
      result += '${'
      index = start + 3
      continue
    }
    if (!text.startsWith('${', start)) {
      result += '$'
      index = start + 1
      continue
    }
    const end = text.indexOf('}', start + 2)
    if (end === -1) {
      problems.push({ path, message: `${path} has an unterminated placeholder '${text.slice(start)}'` })
      return text
    }
    const body = text.slice(start + 2, end)
    const match = VARIABLE.exec(body)
    if (match === null) {
      problems.push({
        path,
        message: `${path} has a malformed placeholder '\${${body}}': expected \${NAME} or \${NAME:-default}`,
      })
    } else {
      const [, variable = '', fallback] = match
      const value = env[variable]
      // As in a shell's `${VAR:-default}`, an empty value counts as unset.
      if (value !== undefined && value !== '') {
        result += value
        used.push(variable)
      } else if (fallback !== undefined) result += fallback
      else problems.push({ variable, path, message: `${variable} is not set` })
    }
    index = end + 1
  }
  return result + text.slice(index)
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string value (not in keys) of a parsed JSON
 * value. `$${` writes a literal `${`. An empty variable counts as unset.
 * @returns the resolved copy, every placeholder that could not be resolved (with its path), and
 *   `sources`: the path of each string that took a set variable's value, with those variables, so
 *   a problem found later in that value can name the variable to change.
 */
export function resolvePlaceholders(
  value: unknown,
  env: EnvironmentVariables,
  path = '',
): { value: unknown; problems: PlaceholderProblem[]; sources: PlaceholderSources } {
  const problems: PlaceholderProblem[] = []
  const sources: Record<string, readonly string[]> = {}
  const walk = (node: unknown, at: string): unknown => {
    if (typeof node === 'string') {
      const used: string[] = []
      const resolved = resolveString(node, at, env, problems, used)
      if (used.length > 0) sources[at] = [...new Set(used)]
      return resolved
    }
    if (Array.isArray(node)) return node.map((item, index) => walk(item, joinPath(at, index)))
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.entries(node).map(([key, item]) => [key, walk(item, joinPath(at, key))]),
      )
    }
    return node
  }
  return { value: walk(value, path), problems, sources }
}

/**
 * The variables a value at `path` was built from: those of `path` itself, or of anything under
 * it (a problem with an object may come from any of its strings). Undefined when none.
 */
export function variablesAt(sources: PlaceholderSources | undefined, path: string): string[] | undefined {
  if (sources === undefined) return undefined
  const found = new Set<string>()
  for (const [at, variables] of Object.entries(sources)) {
    if (at === path || at.startsWith(`${path}.`) || at.startsWith(`${path}[`))
      for (const variable of variables) found.add(variable)
  }
  return found.size === 0 ? undefined : [...found]
}

/** The issue, told which variables its value came from. */
function withVariables(issue: ConfigIssue, sources: PlaceholderSources | undefined): ConfigIssue {
  const variables = issue.path === undefined ? undefined : variablesAt(sources, issue.path)
  return variables === undefined ? issue : { ...issue, variables }
}

/** `chains[2].rpc.url` → ` (chain 10 optimism)` using the raw file, so messages name the chain. */
function chainLabel(path: string, document: unknown): string {
  const match = /^chains\[(\d+)\]/.exec(path)
  if (match === null) return ''
  const chains = (document as { chains?: unknown } | null)?.chains
  const chain: unknown = Array.isArray(chains) ? chains[Number(match[1])] : undefined
  if (chain === null || typeof chain !== 'object') return ''
  const { id, name } = chain as { id?: unknown; name?: unknown }
  const parts = [id, name].filter((part) => typeof part === 'number' || typeof part === 'string')
  return parts.length === 0 ? '' : ` (chain ${parts.join(' ')})`
}

function placeholderIssues(file: string, document: unknown, problems: PlaceholderProblem[]): ConfigIssue[] {
  const issues: ConfigIssue[] = []
  const byVariable = new Map<string, { firstPath: string; places: string[] }>()
  for (const problem of problems) {
    const label = chainLabel(problem.path, document)
    if (problem.variable === undefined) {
      issues.push({ file, path: problem.path, message: `${problem.message}${label}` })
      continue
    }
    const uses = byVariable.get(problem.variable) ?? { firstPath: problem.path, places: [] }
    uses.places.push(`${problem.path}${label}`)
    byVariable.set(problem.variable, uses)
  }
  for (const [variable, { firstPath, places }] of byVariable) {
    issues.push({ file, path: firstPath, message: `${variable} is not set (used at ${places.join(', ')})` })
  }
  return issues
}

const ajv = createAjv()
const validateChainsFile = ajv.compile(chainsFileSchema)
const validateHubFile = ajv.compile(hubFileSchema)

async function missingEnvironmentError(
  configDir: string,
  environment: string,
  file: string,
): Promise<ConfigError> {
  const known = await listEnvironments(configDir)
  const list = known.length === 0 ? 'none' : known.join(', ')
  return new ConfigError(
    `unknown environment '${environment}': ${displayPath(file)} does not exist; environments found in ${displayPath(configDir)}: ${list}`,
  )
}

/** Chain entry keys that were renamed, with their new names: one line each tells the operator what to do. */
const RENAMED_CHAIN_KEYS: Readonly<Record<string, string>> = {
  erc20Currencies: 'currencies',
}

/** @throws ConfigError in one line naming each old key found, where, and its new name. */
function checkRenamedKeys(file: string, document: unknown): void {
  const entries = (document as { chains?: unknown } | null)?.chains
  if (!Array.isArray(entries)) return
  const found = entries.flatMap((entry, index) =>
    Object.keys(typeof entry === 'object' && entry !== null ? entry : {})
      .filter((key) => Object.hasOwn(RENAMED_CHAIN_KEYS, key))
      .map((key) => `chains[${index}].${key}`),
  )
  if (found.length === 0) return
  const oldKey = found[0]?.split('.').at(-1) as string
  throw new ConfigError(
    `${displayPath(file)}: ${found.join(', ')}: '${oldKey}' was renamed to '${RENAMED_CHAIN_KEYS[oldKey]}' (the same key for every family); rename it`,
  )
}

/**
 * Reads, resolves and validates `chains.<environment>.json` and `chains.hub.<environment>.json`.
 * Addresses and plugin options are checked later by the registry, which knows the families.
 * @throws ConfigError listing every problem found: unknown environment, malformed JSON, missing
 * variables (all of them, each with the file and paths where it is used), invalid fields.
 */
export async function loadChainsConfig(options: LoadChainsConfigOptions = {}): Promise<ChainsConfig> {
  const env = options.env ?? process.env
  const environment = options.environment ?? (env.ENVIRONMENT || DEFAULT_ENVIRONMENT)
  if (!ENVIRONMENT_NAME.test(environment)) {
    throw new ConfigError(
      `invalid environment name '${environment}': use lower-case letters, digits, '-' and '_' (e.g. local, testnet, mainnet)`,
    )
  }
  const configDir = resolve(options.configDir ?? (await findConfigDir(options.cwd)))
  const chainsFile = join(configDir, chainsFileName(environment))
  const hubFile = join(configDir, hubFileName(environment))
  if (!(await fileExists(chainsFile))) throw await missingEnvironmentError(configDir, environment, chainsFile)
  if (!(await fileExists(hubFile))) {
    throw new ConfigError(
      `environment '${environment}' has ${displayPath(chainsFile)} but no ${displayPath(hubFile)}: every environment needs both files`,
    )
  }

  const rawChains = await readJsonFile(chainsFile)
  const rawHub = await readJsonFile(hubFile)
  const chains = resolvePlaceholders(rawChains, env)
  const hub = resolvePlaceholders(rawHub, env)
  const placeholderProblems = [
    ...placeholderIssues(chainsFile, rawChains, chains.problems),
    ...placeholderIssues(hubFile, rawHub, hub.problems),
  ]
  if (placeholderProblems.length > 0) {
    const missingVariables = [
      ...new Set([...chains.problems, ...hub.problems].flatMap((problem) => problem.variable ?? [])),
    ]
    const summary =
      missingVariables.length > 0
        ? `environment '${environment}': ${missingVariables.length === 1 ? '1 environment variable is' : `${missingVariables.length} environment variables are`} not set (${missingVariables.join(', ')}); set ${missingVariables.length === 1 ? 'it' : 'them'}, or give the placeholder a default with \${NAME:-default}`
        : `environment '${environment}': malformed placeholders`
    throw new ConfigError(summary, placeholderProblems, { missingVariables })
  }

  checkRenamedKeys(chainsFile, chains.value)
  const issues: ConfigIssue[] = [
    ...validateWith(validateChainsFile, chains.value, '').map((issue) =>
      withVariables(
        {
          file: chainsFile,
          path: issue.path,
          message: `${issue.message}${chainLabel(issue.path, chains.value)}`,
        },
        chains.sources,
      ),
    ),
    ...validateWith(validateHubFile, hub.value, '').map((issue) =>
      withVariables({ file: hubFile, path: issue.path, message: issue.message }, hub.sources),
    ),
  ]
  if (issues.length > 0) {
    throw new ConfigError(`environment '${environment}': the chain config is invalid`, issues)
  }

  const chainsDocument = chains.value as { plugins: Record<string, string>; chains: ChainEntry[] }
  const hubDocument = hub.value as { hub: HubConfig }
  return deepFreeze({
    environment,
    configDir,
    chainsFile,
    hubFile,
    plugins: chainsDocument.plugins,
    chains: chainsDocument.chains,
    hub: hubDocument.hub,
    sources: chains.sources,
  })
}

export interface LoadEnvironmentFileOptions {
  /** File family: `prices` reads `configs/prices.<environment>.json`. */
  readonly name: string
  /** JSON Schema (2020-12) the resolved file must satisfy; its defaults are applied. */
  readonly schema: JsonSchema
  readonly environment?: string
  readonly configDir?: string
  readonly env?: EnvironmentVariables
  readonly cwd?: string
  /**
   * Checks beyond the schema (a key that must be usable, ...), on the resolved file. Each problem
   * names the JSON path of the field, so its message can name the variable it came from.
   */
  readonly check?: (value: unknown) => ReadonlyArray<{ readonly path: string; readonly message: string }>
}

/**
 * Reads one more per-environment config file (`<name>.<environment>.json`) with the same rules as
 * the chain config: `${VAR}` / `${VAR:-default}` placeholders, every missing variable named with
 * where it is used, and schema problems named by field.
 */
export async function loadEnvironmentFile<T>(options: LoadEnvironmentFileOptions): Promise<T> {
  const env = options.env ?? process.env
  const environment = options.environment ?? (env.ENVIRONMENT || DEFAULT_ENVIRONMENT)
  if (!ENVIRONMENT_NAME.test(environment)) throw new ConfigError(`invalid environment name '${environment}'`)
  const configDir = resolve(options.configDir ?? (await findConfigDir(options.cwd)))
  const file = join(configDir, `${options.name}.${environment}.json`)
  if (!(await fileExists(file))) {
    throw new ConfigError(`environment '${environment}' has no ${displayPath(file)}`)
  }
  const raw = await readJsonFile(file)
  const resolved = resolvePlaceholders(raw, env)
  if (resolved.problems.length > 0) {
    const missingVariables = [...new Set(resolved.problems.flatMap((problem) => problem.variable ?? []))]
    throw new ConfigError(
      `${displayPath(file)}: ${missingVariables.length > 0 ? `not set: ${missingVariables.join(', ')}` : 'malformed placeholders'}`,
      placeholderIssues(file, raw, resolved.problems),
      { missingVariables },
    )
  }
  const schemaIssues = validateWith(ajv.compile(options.schema), resolved.value, '')
  const issues = [
    ...schemaIssues,
    ...(schemaIssues.length === 0 ? (options.check?.(resolved.value) ?? []) : []),
  ].map((issue) => withVariables({ file, path: issue.path, message: issue.message }, resolved.sources))
  if (issues.length > 0) throw new ConfigError(`${displayPath(file)} is invalid`, issues)
  return deepFreeze(resolved.value) as T
}
