/**
 * `npm run new-plugin`: the scaffolded plugin, in the real plugins' layout, passes executable
 * conformance (its own test, run as a child process: a real intent service loads it from a chains
 * file by path, serves a quote, and its signature step is signed and accepted by the execute API,
 * then read back on its devnet) touching nothing outside its folder; one whose signature step posts
 * a kind the service did not issue fails. The registry loads it from a chains file by path and the
 * quote engine serves a quote that conforms to the document. Everything is scaffolded into a
 * temporary folder, never `plugins/`.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import {
  type ChainEntry,
  loadRegistry,
  nodeScriptArguments,
  silentLogger,
  sourceModuleUrl,
} from '@pontis/core'
import { createOpenApiAjv, loadOpenApiDocument } from '@pontis/http'
import { loadSolverSettings, QuoteEngine, StaticPriceSource } from '@pontis/intents'
import { loadStepItemValidator } from '@pontis/plugin-testkit'
import t from 'tap'
import { register } from 'tsx/esm/api'
import {
  DEFAULT_PLUGINS_DIR,
  exampleChainIdOf,
  pluginNameProblem,
  scaffoldPlugin,
} from '../../scripts/new-plugin.js'

const run = promisify(execFile)
// Two conformance runs, each starting a devnet and an intent service: more than tap's 120 s on a busy machine.
t.setTimeout(300_000)

/** What the scaffolded plugin's test fixtures export (imported from the temporary folder). */
interface ScaffoldedChains {
  exampleChain(rpcUrl: string, index?: number): ChainEntry
  readonly GENESIS_BALANCES: Readonly<Record<string, Readonly<Record<string, bigint>>>>
  readonly USDT: { readonly address: string }
}
interface ScaffoldedDevnet {
  startToyFamilyDevnet(
    balances: ScaffoldedChains['GENESIS_BALANCES'],
  ): Promise<{ readonly url: string; stop(): Promise<void> }>
}
const REPO_ROOT = fileURLToPath(new URL('../..', sourceModuleUrl(import.meta.url)))
const NAME = 'toy-family'

/** A scratch root with `plugins/` and the repository's node_modules, so the plugin resolves its imports. */
const scratch = await mkdtemp(join(tmpdir(), 'pontis-new-plugin-'))
t.teardown(() => rm(scratch, { recursive: true, force: true }))
await symlink(join(REPO_ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir')
const pluginsDir = join(scratch, 'plugins')
await mkdir(pluginsDir)
const scaffolded = await scaffoldPlugin({ name: NAME, pluginsDir })

t.test('plugin names: family ids, refused with a reason otherwise', async (t) => {
  for (const good of ['tron', 'my-chain', 'ton2', 'a', 'x'.repeat(24)]) {
    t.equal(pluginNameProblem(good), undefined, `'${good}' is a plugin name`)
  }
  for (const bad of ['', 'Tron', '1chain', 'my_chain', 'my--chain', '-chain', 'chain-', '../evil', 'a b']) {
    t.match(pluginNameProblem(bad), /plugin name/, `'${bad}' is refused`)
  }
  t.match(pluginNameProblem('x'.repeat(25)), /longer than 24/)
})

t.test("scaffolds the package in the real plugins' layout: a module per capability, a devnet", async (t) => {
  t.same(
    [...scaffolded.files].sort(),
    [
      'README.md',
      'package.json',
      'src/api.ts',
      'src/authorization.ts',
      'src/config.ts',
      'src/context.ts',
      'src/filling.ts',
      'src/identity.ts',
      'src/index.ts',
      'src/quoting.ts',
      'src/reading.ts',
      'src/transactions.ts',
      'test/conformance.test.ts',
      'test/fixtures/chains.ts',
      'test/fixtures/devnet.ts',
    ],
    'the files written',
  )
  for (const file of scaffolded.files) {
    const content = await readFile(join(scaffolded.directory, file), 'utf8')
    t.notMatch(content, /__[A-Z_]+__/, `${file}: every placeholder is replaced`)
    t.ok(content.split('\n').length <= 160, `${file}: a small module`)
  }
  t.equal(scaffolded.directory, join(pluginsDir, NAME))
  const manifest = JSON.parse(await readFile(join(scaffolded.directory, 'package.json'), 'utf8'))
  t.match(manifest, {
    name: '@pontis/plugin-toy-family',
    type: 'module',
    exports: { '.': './src/index.ts' },
    dependencies: { '@pontis/core': '0.1.0', viem: '^2.57.20' },
    devDependencies: { '@pontis/plugin-testkit': '0.1.0' },
  })
  const source = await readFile(join(scaffolded.directory, 'src/index.ts'), 'utf8')
  t.match(source, "vmType: 'toy-family'")
  t.match(source, 'export default definePlugin')
  t.match(await readFile(join(scaffolded.directory, 'README.md'), 'utf8'), '# @pontis/plugin-toy-family')
  t.equal(scaffolded.exampleChainId, exampleChainIdOf(NAME), 'the example chain id is stable')
})

t.test('refuses a bad name and an existing folder, writing nothing', async (t) => {
  await t.rejects(scaffoldPlugin({ name: 'Bad_Name', pluginsDir }), /not a plugin name/)
  await t.rejects(scaffoldPlugin({ name: NAME, pluginsDir }), /already exists/)
  // The repository's own plugins are refused the same way, before anything is written.
  await t.rejects(scaffoldPlugin({ name: 'evm' }), /already exists/)
  t.ok(existsSync(join(DEFAULT_PLUGINS_DIR, 'evm', 'src', 'index.ts')), 'the evm plugin is untouched')
  t.same((await readdir(pluginsDir)).sort(), [NAME], 'nothing else was created')
})

t.test('the command line refuses a bad name with a message and exit code 1', async (t) => {
  const failure = await run(
    process.execPath,
    [...nodeScriptArguments(join(REPO_ROOT, 'scripts', 'new-plugin.ts')), 'Not A Name'],
    { cwd: REPO_ROOT },
  ).then(
    () => undefined,
    (error: { code?: number; stderr?: string }) => error,
  )
  t.equal(failure?.code, 1)
  t.match(failure?.stderr, "new-plugin: 'Not A Name' is not a plugin name")
})

/** Runs a scaffolded plugin's conformance test as a child process; answers its exit code and output. */
async function runConformance(directory: string): Promise<{ code: number; stdout: string }> {
  const testFile = join(directory, 'test', 'conformance.test.ts')
  return run(process.execPath, nodeScriptArguments(testFile), { cwd: scratch }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '' }),
  )
}

t.test(
  'the scaffolded plugin passes executable conformance, touching nothing outside its folder',
  async (t) => {
    const { code, stdout } = await runConformance(scaffolded.directory)
    t.equal(code, 0, 'the conformance test passes')
    t.notMatch(stdout, /^\s*not ok/m, 'no failing assertion')
    t.match(stdout, /^ok 1 - plugin conformance: @pontis\/plugin-toy-family \(toy-family\)/m)
    for (const part of [
      'definePlugin',
      'registry',
      'identity',
      'finality',
      'quoting',
      'execution',
      'reading',
      'filling',
    ]) {
      t.match(stdout, new RegExp(`^\\s+ok \\d+ - ${part}`, 'm'), `the ${part} checks ran and passed`)
    }
    t.match(stdout, /ok \d+ - step 0 \(authorize\) item 0: the execute API \/execute\/permits accepts it/)
    t.match(stdout, /ok \d+ - reading observes the deposit 0x[0-9a-f]{64} of 5000000 by toy-family:/)
    t.same((await readdir(scratch)).sort(), ['node_modules', 'plugins'], 'nothing written beside the plugin')
    t.same((await readdir(pluginsDir)).sort(), [NAME], 'nor in the plugins folder')
  },
)

t.test('conformance fails when a served signature step cannot be executed', async (t) => {
  const broken = await scaffoldPlugin({ name: 'wrong-kind', pluginsDir })
  t.teardown(() => rm(broken.directory, { recursive: true, force: true }))
  // The item asks clients to post a kind the service never issued for the request.
  const quoting = join(broken.directory, 'src', 'quoting.ts')
  const source = await readFile(quoting, 'utf8')
  t.match(source, 'body: { kind: PERMIT_KIND,')
  await writeFile(quoting, source.replace('body: { kind: PERMIT_KIND,', "body: { kind: 'eip2612-permit',"))
  const { code, stdout } = await runConformance(broken.directory)
  t.equal(code, 1, 'the conformance test fails')
  t.match(stdout, /not ok \d+ - step 0 \(authorize\) item 0: the execute API \/execute\/permits accepts it/)
  t.match(stdout, /UNSUPPORTED_EXECUTION_TYPE/, 'the service says why')
})

t.test('the registry loads it from a chains file by path; the quote engine serves a quote', async (t) => {
  const configDir = join(scratch, 'configs')
  await mkdir(configDir, { recursive: true })
  const chainId = scaffolded.exampleChainId
  const address = (hex: string) => `${NAME}:${hex}`
  // The scaffolded plugin is TypeScript outside the test build: load it as operators do, through tsx.
  register()
  // The plugin's own devnet and example chains (its test fixtures), so quotes read real balances.
  const fixture = (file: string) =>
    import(pathToFileURL(join(scaffolded.directory, 'test', 'fixtures', file)).href)
  const { exampleChain, GENESIS_BALANCES, USDT: usdt } = (await fixture('chains.ts')) as ScaffoldedChains
  const { startToyFamilyDevnet } = (await fixture('devnet.ts')) as ScaffoldedDevnet
  const devnet = await startToyFamilyDevnet(GENESIS_BALANCES)
  t.teardown(() => devnet.stop())
  await writeFile(
    join(configDir, 'chains.local.json'),
    JSON.stringify({
      plugins: { [NAME]: `../plugins/${NAME}/src/index.ts` },
      chains: [exampleChain(devnet.url, 0), exampleChain(devnet.url, 1)],
    }),
  )
  const hub = {
    chainId,
    name: `${NAME}-example-0`,
    oracleContract: `0x${'11'.repeat(20)}`,
    domain: { name: 'PontisOracle', version: '1' },
  }
  await writeFile(join(configDir, 'chains.hub.local.json'), JSON.stringify({ hub }))

  const registry = await loadRegistry({ configDir, environment: 'local', env: {} })
  t.teardown(() => registry.close())
  t.same(
    registry.plugins().map(({ plugin, source }) => [plugin.name, plugin.vmType, source]),
    [['@pontis/plugin-toy-family', NAME, `../plugins/${NAME}/src/index.ts`]],
    'the plugin was imported by path',
  )
  t.same(
    registry.chain(chainId).entry.plugin,
    { fastConfirmations: 1, confirmations: 1, unitPrice: 1 },
    'its defaults applied',
  )

  const settings = await loadSolverSettings({
    configDir: join(REPO_ROOT, 'configs'),
    environment: 'local',
    env: {},
  })
  const engine = new QuoteEngine({
    registry,
    settings,
    prices: new StaticPriceSource({ toyfam: '2', usdt: '1' }),
    logger: silentLogger,
    saveRequest: async () => {},
  })
  const user = address('12'.repeat(20))
  const quote = await engine.quote(
    {
      user,
      originChainId: chainId,
      destinationChainId: chainId + 1,
      originCurrency: usdt.address,
      destinationCurrency: usdt.address,
      amount: '5000000',
      tradeType: 'EXACT_INPUT',
    },
    { withSteps: true },
  )
  t.match(quote.steps, [{ id: 'authorize', kind: 'signature', items: [{ data: { format: 'signature' } }] }])
  const { document } = await loadOpenApiDocument(join(REPO_ROOT, 'openapi', 'intents.yaml'))
  const ajv = createOpenApiAjv()
  ajv.addSchema(document as Record<string, unknown>, 'intents')
  const validateQuote = ajv.compile({ $ref: 'intents#/components/schemas/QuoteResponse' })
  t.ok(validateQuote(JSON.parse(JSON.stringify(quote))), 'the quote conforms to QuoteResponse', {
    errors: validateQuote.errors,
  })
  const validateItem = await loadStepItemValidator()
  for (const item of quote.steps?.flatMap((step) => step.items ?? []) ?? [])
    t.same(validateItem(item.data), [])
})
