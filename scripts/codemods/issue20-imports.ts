/**
 * Issue 20, item 4: rewrites import lines to the new entries. Safe to run again (after merging
 * other branches); a second run changes nothing.
 *
 * - Under `plugins/` (and in the plugin scaffold, `scripts/new-plugin.ts`, whose templates hold
 *   import lines), an import or re-export of named members of `@pontis/core` moves to
 *   `@pontis/core/plugin` when the plugin entry exports every one of its names.
 * - Everywhere, a relative path into `generated/` becomes the `@pontis/generated` subpath that
 *   `generated/package.json` exports for that file.
 *
 * Usage: `tsx scripts/codemods/issue20-imports.ts` to rewrite (then `biome check --write` sorts the
 * imports of the files it changed), `--check` to only report (exit 1 when a line would change, or a
 * plugin's `src/` still imports `@pontis/core`).
 */
import { execFileSync } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { REPO_ROOT } from '../generate.js'
import { declaredExports } from '../module-exports.js'

const CORE = '@pontis/core'
const PLUGIN_ENTRY = '@pontis/core/plugin'
const GENERATED_ROOT = join(REPO_ROOT, 'generated')
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'generated', 'coverage', '.tap'])
const PLUGIN_SCAFFOLD = join(REPO_ROOT, 'scripts', 'new-plugin.ts')
/** The scaffold's template folder: a plugin's sources, copied as they are. */
const PLUGIN_TEMPLATE = join(REPO_ROOT, 'scripts', 'new-plugin', 'template')

/** `import { a, type B } from '@pontis/core'`, `export type { C } from "@pontis/core"`, in code or in a template. */
const CORE_NAMED_IMPORT = /\b(import|export)(\s+type)?(\s*\{)([^{}]*)(\}\s*from\s*)(['"])@pontis\/core\6/g
/** A relative module specifier after `from`, `import` or `import(`. */
const RELATIVE_SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"\n]*)\2/g

/** A file's leading block comment, a blank line, then the first import. */
const HEADER_THEN_BLANK_LINE = /^(\/\*[\s\S]*?\*\/\n)\n+(import\b)/

/** The names of a brace list: `type A, B as C` → A, B. */
function importedNames(list: string): string[] {
  return list
    .split(',')
    .map((item) => item.trim().replace(/^type\s+/, ''))
    .filter((item) => item !== '')
    .map((item) => item.split(/\s+as\s+/)[0]!.trim())
}

async function listSourceFiles(dir: string): Promise<string[]> {
  const files: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) files.push(...(await listSourceFiles(path)))
    else if (entry.isFile() && /\.(ts|mts|tsx)$/.test(entry.name)) files.push(path)
  }
  return files
}

/** Each file `generated/package.json` exports, mapped to its `@pontis/generated/...` specifier. */
export async function generatedSpecifiers(): Promise<Map<string, string>> {
  const manifest = JSON.parse(await readFile(join(GENERATED_ROOT, 'package.json'), 'utf8')) as {
    name: string
    exports: Record<string, string>
  }
  return new Map(
    Object.entries(manifest.exports).map(([subpath, target]) => [
      resolve(GENERATED_ROOT, target),
      `${manifest.name}/${subpath.slice(2)}`,
    ]),
  )
}

export interface Rewrite {
  readonly text: string
  readonly changes: number
  readonly problems: string[]
}

export function rewriteCoreImports(text: string, pluginNames: ReadonlySet<string>): Rewrite {
  let changes = 0
  const rewritten = text.replace(CORE_NAMED_IMPORT, (match, keyword, type, open, list, from, quote) => {
    if (!importedNames(list).every((name) => pluginNames.has(name))) return match
    changes++
    return `${keyword}${type ?? ''}${open}${list}${from}${quote}${PLUGIN_ENTRY}${quote}`
  })
  return { text: rewritten, changes, problems: [] }
}

export function rewriteGeneratedImports(
  file: string,
  text: string,
  specifiers: ReadonlyMap<string, string>,
): Rewrite {
  let changes = 0
  const problems: string[] = []
  const rewritten = text.replace(RELATIVE_SPECIFIER, (match, before, quote, specifier: string) => {
    const target = resolve(dirname(file), specifier)
    if (!target.startsWith(GENERATED_ROOT + sep)) return match
    const byName = specifiers.get(target.replace(/\.js$/, '.ts'))
    if (byName === undefined) {
      problems.push(`${specifier} is not exported by generated/package.json; add it to "exports"`)
      return match
    }
    changes++
    return `${before}${quote}${byName}${quote}`
  })
  return { text: rewritten, changes, problems }
}

/** Imports of the full core entry left in a plugin's `src/`, with the names the plugin entry lacks. */
function coreImportsLeft(text: string, pluginNames: ReadonlySet<string>): string[] {
  return [...text.matchAll(CORE_NAMED_IMPORT)].map(
    (match) =>
      `imports ${importedNames(match[4]!)
        .filter((name) => !pluginNames.has(name))
        .join(', ')} from ${CORE}`,
  )
}

/** Rewrites (or, with `checkOnly`, reports) every file of the repository; exit code 1 on a problem. */
async function main(checkOnly: boolean): Promise<void> {
  const pluginNames = new Set(declaredExports(join(REPO_ROOT, 'packages/core/src/plugin-entry.ts')).keys())
  const specifiers = await generatedSpecifiers()
  const pluginsRoot = join(REPO_ROOT, 'plugins')
  const changedFiles: string[] = []
  const originals = new Map<string, string>()
  let changedLines = 0
  const problems: string[] = []
  for (const file of await listSourceFiles(REPO_ROOT)) {
    const original = await readFile(file, 'utf8')
    const shown = relative(REPO_ROOT, file)
    const isPluginCode =
      file.startsWith(pluginsRoot + sep) || file.startsWith(PLUGIN_TEMPLATE + sep) || file === PLUGIN_SCAFFOLD
    const core = isPluginCode
      ? rewriteCoreImports(original, pluginNames)
      : { text: original, changes: 0, problems: [] }
    const generated = rewriteGeneratedImports(file, core.text, specifiers)
    problems.push(...generated.problems.map((problem) => `${shown}: ${problem}`))
    if (file.startsWith(pluginsRoot + sep) && shown.split(sep)[2] === 'src') {
      problems.push(...coreImportsLeft(generated.text, pluginNames).map((left) => `${shown}: ${left}`))
    }
    const changes = core.changes + generated.changes
    if (changes === 0) continue
    changedFiles.push(file)
    originals.set(file, original)
    changedLines += changes
    if (checkOnly) console.log(`${shown}: ${changes} import(s) to rewrite`)
    else await writeFile(file, generated.text)
  }
  if (!checkOnly && changedFiles.length > 0) {
    // A name import sorts elsewhere than a relative path did.
    execFileSync(join(REPO_ROOT, 'node_modules', '.bin', 'biome'), ['check', '--write', ...changedFiles], {
      stdio: 'inherit',
    })
    // When the first import moves down, biome leaves a blank line under the file's header comment.
    for (const file of changedFiles) {
      const sorted = await readFile(file, 'utf8')
      const tidy = sorted.replace(HEADER_THEN_BLANK_LINE, '$1$2')
      if (tidy !== sorted && !HEADER_THEN_BLANK_LINE.test(originals.get(file) ?? ''))
        await writeFile(file, tidy)
    }
  }
  console.log(
    `${checkOnly ? 'would rewrite' : 'rewrote'} ${changedLines} import(s) in ${changedFiles.length} file(s)` +
      (problems.length === 0 ? '' : `; to fix by hand:\n  ${problems.join('\n  ')}`),
  )
  if (problems.length > 0 || (checkOnly && changedLines > 0)) process.exitCode = 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.includes('--check'))
}
