/**
 * No import cycle inside core: every module of packages/core/src can be read from the bottom up.
 * The graph counts type-only imports too, since a type cycle ties two modules just as hard.
 */
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const SOURCE_DIR = fileURLToPath(new URL('../src', import.meta.url))

type ImportGraph = ReadonlyMap<string, readonly string[]>

/** Each module of `dir` (relative path) with the modules of `dir` it imports or re-exports. */
async function readImportGraph(dir: string): Promise<ImportGraph> {
  const files = (await readdir(dir, { recursive: true })).filter((file) => file.endsWith('.ts')).sort()
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const source = await readFile(join(dir, file), 'utf8')
    const { importedFiles } = ts.preProcessFile(source, true, true)
    graph.set(
      file,
      importedFiles
        .map(({ fileName }) => fileName)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => relative(dir, resolve(dir, dirname(file), specifier.replace(/\.js$/, '.ts')))),
    )
  }
  return graph
}

/** The first cycle found, as the modules along it (first one repeated at the end), or undefined. */
function findCycle(graph: ImportGraph): string[] | undefined {
  const done = new Set<string>()
  const path: string[] = []
  const visit = (module: string): string[] | undefined => {
    const open = path.indexOf(module)
    if (open !== -1) return [...path.slice(open), module]
    if (done.has(module)) return undefined
    path.push(module)
    for (const imported of graph.get(module) ?? []) {
      const cycle = visit(imported)
      if (cycle !== undefined) return cycle
    }
    path.pop()
    done.add(module)
    return undefined
  }
  for (const module of graph.keys()) {
    const cycle = visit(module)
    if (cycle !== undefined) return cycle
  }
  return undefined
}

t.test('packages/core/src has no import cycle', async (t) => {
  const graph = await readImportGraph(SOURCE_DIR)
  t.ok(graph.size > 10, 'the walk found the core modules')
  t.ok(graph.get('registry.ts')?.includes('plugin.ts'), 'the walk follows relative imports')
  t.equal(findCycle(graph)?.join(' → '), undefined, 'no module imports itself back')
})

t.test('the cycle finder does find a cycle (control)', async (t) => {
  const graph = new Map([
    ['index.ts', ['plugin.ts']],
    ['plugin.ts', ['errors.ts', 'chains.ts']],
    ['errors.ts', []],
    ['chains.ts', ['plugin.ts']],
  ])
  t.same(findCycle(graph), ['plugin.ts', 'chains.ts', 'plugin.ts'])
  t.equal(
    findCycle(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', []],
      ]),
    ),
    undefined,
  )
})
