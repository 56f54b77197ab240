/**
 * Which file runs a TypeScript module named by path: compiled (the suite's runner, .build/) or from
 * source (tsx, tap's own loader). The test runs either way and checks the answer of the way it runs.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import {
  COMPILED_TREE_DIRECTORY,
  nodeScriptArguments,
  runnableModulePath,
  sourceModuleUrl,
} from '../src/entry-points.js'

const compiled = import.meta.url.endsWith('.js')
const source = fileURLToPath(sourceModuleUrl(import.meta.url))
const tree = join(source, '..', '..', '..', '..')
const registryInTree = join(tree, 'packages', 'core', 'src', 'registry.ts')

t.test('sourceModuleUrl names the TypeScript file in the tree, never the mirror', async (t) => {
  t.ok(source.endsWith(join('packages', 'core', 'test', 'entry-points.test.ts')), source)
  t.notOk(source.includes(`${COMPILED_TREE_DIRECTORY}/`), 'not a path into the mirror')
  t.ok(existsSync(source), 'the file exists')
  t.equal(sourceModuleUrl('file:///elsewhere/x.ts'), 'file:///elsewhere/x.ts', 'other URLs are left alone')
})

t.test('a module of the tree runs from its compiled twin when this code runs compiled', async (t) => {
  const runnable = runnableModulePath(registryInTree)
  if (compiled) {
    t.equal(runnable, join(tree, COMPILED_TREE_DIRECTORY, 'packages', 'core', 'src', 'registry.js'))
    t.ok(existsSync(runnable), 'the twin exists')
    t.equal(
      runnableModulePath(pathToFileURL(registryInTree).href),
      pathToFileURL(runnable).href,
      'a file: URL is answered as a file: URL',
    )
    t.same(nodeScriptArguments(registryInTree), [runnable], 'started with no loader')
  } else {
    t.equal(runnable, registryInTree, 'from source: the TypeScript file itself')
    t.same(nodeScriptArguments(registryInTree), ['--import', import.meta.resolve('tsx'), registryInTree])
  }
  t.equal(runnableModulePath(join(tree, 'package.json')), join(tree, 'package.json'), 'not TypeScript')
})

t.test('TypeScript outside the tree has no twin and runs through tsx', async (t) => {
  const outside = await mkdtemp(join(tmpdir(), 'pontis-entry-points-'))
  t.teardown(() => rm(outside, { recursive: true, force: true }))
  const script = join(outside, 'main.ts')
  await writeFile(script, 'export {}\n')
  t.equal(runnableModulePath(script), script)
  t.same(nodeScriptArguments(script), ['--import', import.meta.resolve('tsx'), script])
})
