/**
 * The package entry bundles for browsers: esbuild resolves src/index.ts for `platform: 'browser'`
 * with every `node:` import and Node built-in marked as a failure, and the bundle is checked for
 * leftover `require`/`import` of Node modules.
 */
import { builtinModules } from 'node:module'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'
import t from 'tap'

const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url))
const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

/** Records every Node built-in an import path resolves to, then lets esbuild fail on it. */
function nodeImportRecorder(found: string[]): Plugin {
  return {
    name: 'node-import-recorder',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, (args) => {
        if (args.path.startsWith('node:') || NODE_BUILTINS.has(args.path)) {
          found.push(`${args.path} (imported by ${args.importer})`)
          return { errors: [{ text: `Node-only import ${args.path}` }] }
        }
        return undefined
      })
    },
  }
}

t.test('src/index.ts bundles for the browser without a Node-only import', async (t) => {
  const found: string[] = []
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    plugins: [nodeImportRecorder(found)],
  }).catch((error: { errors?: Array<{ text: string }> }) => ({ failed: error.errors ?? [] }))
  t.same(found, [], 'no Node built-in is imported')
  t.notOk('failed' in result, 'the browser bundle builds')
  if ('outputFiles' in result) {
    const code = result.outputFiles[0]?.text ?? ''
    t.ok(code.includes('executeQuote'), 'the bundle carries the client')
    t.notMatch(code, /\brequire\(["'](node:)?[a-z_]+["']\)/, 'no CommonJS require of a module is left')
  }
})

t.test('the recorder does catch a Node import (control)', async (t) => {
  const found: string[] = []
  const failed = await build({
    stdin: { contents: "import { createHash } from 'node:crypto'; console.log(createHash)", loader: 'ts' },
    bundle: true,
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    plugins: [nodeImportRecorder(found)],
  }).then(
    () => false,
    () => true,
  )
  t.ok(failed, 'a bundle importing node:crypto fails')
  t.same(found.length, 1)
})
