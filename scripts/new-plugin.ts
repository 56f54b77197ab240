/**
 * `npm run new-plugin -- <name>`: scaffolds `plugins/<name>`, a VM plugin package for a new family
 * `<name>` in the layout the real plugins use (one module per capability, a devnet in
 * `test/fixtures/`), that passes executable conformance (@pontis/plugin-testkit) and is loaded by
 * the registry from a chains file.
 *
 * The family it starts from is a toy, to be replaced by the real one: addresses are `<name>:`
 * followed by 40 hexadecimal characters (20 bytes, canonical in lower case), currency ids have the
 * same form (the native currency is all zeros), transaction ids are 32-byte hex, and a deposit is a
 * signed transfer authorization (a `signature` step) that the service submits through the execute API.
 */
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sourceModuleUrl } from '@pontis/core'

/** The repository root. */
const REPO_ROOT = resolve(fileURLToPath(new URL('..', sourceModuleUrl(import.meta.url))))

/** Where plugins live by default. */
export const DEFAULT_PLUGINS_DIR = join(REPO_ROOT, 'plugins')

/** A plugin name: the family id (`vmType`) and the folder name, e.g. `tron` or `my-chain`. */
export const PLUGIN_NAME_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/

const MAX_NAME_LENGTH = 24

/** Why `name` cannot name a plugin, or undefined when it can. */
export function pluginNameProblem(name: string): string | undefined {
  if (typeof name !== 'string' || name === '')
    return 'a plugin name is required, e.g. `npm run new-plugin -- tron`'
  if (name.length > MAX_NAME_LENGTH)
    return `'${name.slice(0, 40)}' is longer than ${MAX_NAME_LENGTH} characters`
  if (!PLUGIN_NAME_PATTERN.test(name)) {
    return `'${name}' is not a plugin name: use lower-case letters and digits, words joined by single hyphens, starting with a letter (e.g. 'tron', 'my-chain')`
  }
  return undefined
}

/** Options of {@link scaffoldPlugin}. */
export interface ScaffoldOptions {
  /** The family id and folder name. */
  readonly name: string
  /** The folder the plugin folder is created in. Default: this repository's `plugins/`. */
  readonly pluginsDir?: string
}

/** What {@link scaffoldPlugin} created. */
export interface ScaffoldResult {
  /** The new plugin's folder. */
  readonly directory: string
  /** The files written, relative to `directory`. */
  readonly files: readonly string[]
  /** The package name, `@pontis/plugin-<name>`. */
  readonly packageName: string
  /** The chain id the scaffold's test fixture uses for the family's example chain. */
  readonly exampleChainId: number
}

/** Words of a name: `my-chain` → `My Chain`. */
function titleOf(name: string): string {
  return name
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ')
}

/** An identifier of a name: `my-chain` → `myChain`. */
function camelOf(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
}

/** A constant's name of a name: `my-chain` → `MY_CHAIN`. */
function constantOf(name: string): string {
  return name.replaceAll('-', '_').toUpperCase()
}

/** A stable chain id for the example chain, away from the ids real chains use (FNV-1a of the name). */
export function exampleChainIdOf(name: string): number {
  let hash = 0x811c9dc5
  for (const character of name) {
    hash ^= character.charCodeAt(0)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return 9_000_000_000 + (hash % 1_000_000_000)
}

/** The files every scaffold starts from, with placeholders (`__NAME__`, `__PASCAL__`, …). */
export const TEMPLATE_DIR = join(REPO_ROOT, 'scripts', 'new-plugin', 'template')

/** The example chain id the template's test fixture uses, replaced by {@link exampleChainIdOf}. */
const TEMPLATE_CHAIN_ID = '9_876_543_210'

function packageJson(name: string): string {
  const manifest = {
    name: `@pontis/plugin-${name}`,
    version: '0.1.0',
    private: true,
    description: `${titleOf(name)} family plugin for Pontis`,
    license: 'Apache-2.0',
    type: 'module',
    engines: { node: '>=20.19' },
    exports: { '.': './src/index.ts' },
    dependencies: { '@pontis/core': '0.1.0', viem: '^2.57.20' },
    devDependencies: { '@pontis/plugin-testkit': '0.1.0' },
  }
  return `${JSON.stringify(manifest, null, 2)}\n`
}

/** The template's placeholders and what they become for `name`. */
function placeholdersOf(name: string): ReadonlyArray<readonly [string, string]> {
  const camel = camelOf(name)
  const symbol = name.replaceAll('-', '').slice(0, 6)
  return [
    ['__NAME__', name],
    ['__TITLE__', titleOf(name)],
    ['__PASCAL__', camel.charAt(0).toUpperCase() + camel.slice(1)],
    ['__CAMEL__', camel],
    ['__CONSTANT__', constantOf(name)],
    ['__SYMBOL_ID__', symbol],
    ['__SYMBOL__', symbol.toUpperCase()],
    [TEMPLATE_CHAIN_ID, String(exampleChainIdOf(name))],
  ]
}

/** The template's files, relative to its folder. */
async function templateFiles(dir = TEMPLATE_DIR): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(TEMPLATE_DIR, join(entry.parentPath, entry.name)))
    .sort()
}

/**
 * Creates `<pluginsDir>/<name>` from the template (`scripts/new-plugin/template`): a package.json,
 * `src/` (one module per capability), a README, and `test/` (the conformance test and the devnet).
 * @throws Error when the name is not a plugin name or the folder already exists.
 */
export async function scaffoldPlugin(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const { name } = options
  const problem = pluginNameProblem(name)
  if (problem !== undefined) throw new Error(problem)
  const directory = join(options.pluginsDir ?? DEFAULT_PLUGINS_DIR, name)
  if (existsSync(directory)) {
    throw new Error(`${relative(process.cwd(), directory) || directory} already exists: pick another name`)
  }
  const placeholders = placeholdersOf(name)
  const files: Record<string, string> = { 'package.json': packageJson(name) }
  for (const file of await templateFiles()) {
    let content = await readFile(join(TEMPLATE_DIR, file), 'utf8')
    for (const [placeholder, value] of placeholders) content = content.replaceAll(placeholder, value)
    files[file] = content
  }
  for (const [file, content] of Object.entries(files)) {
    const path = join(directory, file)
    await mkdir(dirname(path), { recursive: true })
    // 'wx': never overwrite, even if the folder appeared since the check above.
    await writeFile(path, content, { flag: 'wx' })
  }
  return {
    directory,
    files: Object.keys(files),
    packageName: `@pontis/plugin-${name}`,
    exampleChainId: exampleChainIdOf(name),
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [name = '', ...rest] = process.argv.slice(2)
  try {
    if (rest.length > 0) throw new Error(`expected one plugin name, got ${process.argv.length - 2} arguments`)
    const result = await scaffoldPlugin({ name })
    const where = relative(process.cwd(), result.directory)
    console.log(`created ${result.packageName} in ${where}:`)
    for (const file of result.files) console.log(`  ${join(where, file)}`)
    console.log('next: npm install (links the new workspace), then')
    console.log(`  npx tap --disable-coverage ${join(where, 'test', 'conformance.test.ts')}`)
  } catch (error) {
    console.error(`new-plugin: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
