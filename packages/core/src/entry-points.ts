/**
 * Which file runs a TypeScript module named by path. The services and scripts run their TypeScript
 * through tsx; the test suite runs everything compiled ahead (scripts/test-build.ts writes `x.js`
 * beside each `x.ts` in its mirror of the tree). Code that loads or starts a module by path asks
 * here, so both ways run the same module and a compiled run never needs a loader.
 */
import { existsSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The folder at the repository's root that holds the compiled mirror of the tree. */
export const COMPILED_TREE_DIRECTORY = '.build'

/** True when this module itself was compiled ahead: then TypeScript modules have compiled twins too. */
const RUNNING_COMPILED = import.meta.url.endsWith('.js')

const TYPESCRIPT_EXTENSION = /\.([cm]?)ts$/

/** The mirror this module runs from, when it runs compiled from one: `<tree>/.build`. */
const MIRROR_ROOT = (() => {
  const own = fileURLToPath(import.meta.url)
  const marker = `${sep}${COMPILED_TREE_DIRECTORY}${sep}`
  const at = own.lastIndexOf(marker)
  return RUNNING_COMPILED && at !== -1 ? own.slice(0, at + marker.length - 1) : undefined
})()

/** The compiled twin of a TypeScript file: beside it (in the mirror), or its place in the mirror. */
function compiledTwin(file: string): string | undefined {
  const beside = file.replace(TYPESCRIPT_EXTENSION, '.$1js')
  if (existsSync(beside)) return beside
  if (MIRROR_ROOT === undefined) return undefined
  const tree = dirname(MIRROR_ROOT)
  const inTree = relative(tree, beside)
  if (inTree.startsWith('..') || isAbsolute(inTree) || inTree.startsWith(`${COMPILED_TREE_DIRECTORY}${sep}`))
    return undefined
  const mirrored = join(MIRROR_ROOT, inTree)
  return existsSync(mirrored) ? mirrored : undefined
}

/** The file to load for `path` (a path or a `file:` URL, answered in the same form). */
export function runnableModulePath(path: string): string {
  if (!RUNNING_COMPILED || !TYPESCRIPT_EXTENSION.test(path)) return path
  const isUrl = path.startsWith('file:')
  const compiled = compiledTwin(resolve(isUrl ? fileURLToPath(path) : path))
  if (compiled === undefined) return path
  return isUrl ? pathToFileURL(compiled).href : compiled
}

/**
 * The `node` arguments that run the script at `path`, before the script's own arguments. tsx is
 * named by its resolved location, so the script runs from any folder, one with no node_modules too.
 */
export function nodeScriptArguments(path: string): string[] {
  const runnable = runnableModulePath(path)
  return TYPESCRIPT_EXTENSION.test(runnable) ? ['--import', import.meta.resolve('tsx'), runnable] : [runnable]
}

/**
 * The source file a module was compiled from, as a `file:` URL (the module's own URL when it runs
 * from source). For code that reasons about the repository (lists it, writes generated files, asks
 * git), which must see the tree, not the mirror.
 */
export function sourceModuleUrl(moduleUrl: string): string {
  if (MIRROR_ROOT === undefined || !moduleUrl.startsWith('file:')) return moduleUrl
  const inMirror = relative(MIRROR_ROOT, fileURLToPath(moduleUrl))
  if (inMirror.startsWith('..') || isAbsolute(inMirror)) return moduleUrl
  return pathToFileURL(join(dirname(MIRROR_ROOT), inMirror)).href.replace(/\.([cm]?)js$/, '.$1ts')
}
