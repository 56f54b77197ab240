/**
 * Compiles the repository's TypeScript ahead of a test run, into a mirror of the tree at `.build/`.
 *
 * Why: a test process that loads TypeScript through a loader hook sends every module it imports,
 * node_modules included, through the hooks thread and transpiles our sources again in every
 * process; with plain JavaScript the suite's processes start in a fraction of the CPU.
 *
 * The mirror keeps every relative path working: each `.ts` file gets a `.js` twin (with an inline
 * source map naming the original, so stack traces and coverage point at the TypeScript), and every
 * file of the tree is copied as it is. Workspace packages are reached by name through
 * `.build/node_modules/@pontis/*`, with their exports pointed at the compiled files; everything else
 * resolves from the repository's own node_modules, one directory up.
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { COMPILED_TREE_DIRECTORY } from '@pontis/core'
import { transform } from '@swc/core'

export const REPO_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
export const BUILD_DIR_NAME = COMPILED_TREE_DIRECTORY
export const BUILD_ROOT = join(REPO_ROOT, BUILD_DIR_NAME)

/** TypeScript we compile; `.d.ts` declarations and the dashboard's TSX (bundled by the dashboard itself) are only copied. */
export function compiledName(file: string): string | undefined {
  if (file.endsWith('.d.ts') || file.endsWith('.d.mts')) return undefined
  if (file.endsWith('.mts')) return `${file.slice(0, -'.mts'.length)}.mjs`
  if (file.endsWith('.ts')) return `${file.slice(0, -'.ts'.length)}.js`
  return undefined
}

/** Tracked files and new ones not ignored: what a clean clone plus the work in progress holds. */
export function repositoryFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((file) => file !== '' && !file.startsWith(`${BUILD_DIR_NAME}/`))
}

interface WorkspaceManifest {
  name?: string
  exports?: unknown
  main?: string
  bin?: unknown
  workspaces?: string[]
}

/** `./src/index.ts` → `./src/index.js`, wherever a manifest names a file. */
function toCompiledPaths(value: unknown): unknown {
  if (typeof value === 'string') return compiledName(value) ?? value
  if (Array.isArray(value)) return value.map(toCompiledPaths)
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, toCompiledPaths(entry)]))
  return value
}

async function compile(source: string, target: string): Promise<void> {
  const code = readFileSync(source, 'utf8')
  const output = await transform(code, {
    filename: source,
    sourceFileName: pathToFileURL(source).href,
    sourceMaps: 'inline',
    inlineSourcesContent: false,
    isModule: true,
    swcrc: false,
    configFile: false,
    module: { type: 'es6', strict: true },
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', tsx: false },
      keepClassNames: true,
      experimental: { keepImportAttributes: true, emitAssertForImportAttributes: false },
    },
  })
  writeFileSync(target, output.code)
}

/** Runs `work` over `items`, `limit` at a time. */
async function inBatches<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T
      await work(item)
    }
  }
  await Promise.all(Array.from({ length: limit }, worker))
}

export async function buildTests(): Promise<{ compiled: number; copied: number }> {
  rmSync(BUILD_ROOT, { recursive: true, force: true })
  const files = repositoryFiles()
  const workspaces = new Map<string, string>()
  const toCompile: string[] = []
  let copied = 0
  for (const file of files) {
    const source = join(REPO_ROOT, file)
    const target = join(BUILD_ROOT, file)
    mkdirSync(dirname(target), { recursive: true })
    const compiled = compiledName(file)
    if (compiled !== undefined) toCompile.push(file)
    if (file.endsWith('package.json') && file !== 'package.json' && !file.includes('/template/')) {
      const manifest = JSON.parse(readFileSync(source, 'utf8')) as WorkspaceManifest
      if (manifest.name?.startsWith('@pontis/')) {
        workspaces.set(manifest.name, dirname(file))
        const rewritten = { ...manifest, exports: toCompiledPaths(manifest.exports) }
        writeFileSync(target, `${JSON.stringify(rewritten, null, 2)}\n`)
        continue
      }
    }
    // Copies, not links: our JavaScript imports its neighbours relatively, and a test that copies
    // or writes a folder of the mirror must never write through to the tree. TypeScript sources
    // are copied too, beside their compiled twins, for code that reads them.
    copyFileSync(source, target)
    copied++
  }
  // Each workspace's own node_modules (versions pinned apart from the root's) stays reachable.
  for (const directory of workspaces.values()) {
    try {
      symlinkSync(join(REPO_ROOT, directory, 'node_modules'), join(BUILD_ROOT, directory, 'node_modules'))
    } catch {
      // No node_modules of its own.
    }
  }
  for (const [name, directory] of workspaces) {
    const link = join(BUILD_ROOT, 'node_modules', name)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(relative(dirname(link), join(BUILD_ROOT, directory)), link)
  }
  await inBatches(toCompile, Math.max(2, availableParallelism() * 2), (file) =>
    compile(join(REPO_ROOT, file), join(BUILD_ROOT, compiledName(file) as string)),
  )
  return { compiled: toCompile.length, copied }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now()
  const { compiled, copied } = await buildTests()
  console.log(
    `compiled ${compiled} TypeScript files and copied ${copied} files into ${BUILD_DIR_NAME}/ in ${Math.round(performance.now() - started)} ms`,
  )
}
