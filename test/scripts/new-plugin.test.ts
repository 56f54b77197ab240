/**
 * `npm run new-plugin`: the scaffolded plugin passes the conformance suite (its own test, run as a
 * child process), the registry loads it from a chains file by path, and the quote engine serves a
 * quote between two of its chains that conforms to the document. Everything is scaffolded into a temporary folder, never `plugins/`.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { loadRegistry, silentLogger } from '@pontis/core'
import { createOpenApiAjv, loadOpenApiDocument } from '@pontis/http'
import { loadSolverSettings, QuoteEngine, StaticPriceSource } from '@pontis/intents'
import { loadStepItemValidator } from '@pontis/plugin-testkit'
import t from 'tap'
import {
  DEFAULT_PLUGINS_DIR,
  exampleChainIdOf,
  pluginNameProblem,
  scaffoldPlugin,
} from '../../scripts/new-plugin.js'

const run = promisify(execFile)
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
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

t.test('scaffolds the package, its source, README and conformance test', async (t) => {
  t.same(
    [...scaffolded.files].sort(),
    ['README.md', 'package.json', 'src/index.ts', 'test/conformance.test.ts'],
    'the files written',
  )
  t.equal(scaffolded.directory, join(pluginsDir, NAME))
  const manifest = JSON.parse(await readFile(join(scaffolded.directory, 'package.json'), 'utf8'))
  t.match(manifest, {
    name: '@pontis/plugin-toy-family',
    type: 'module',
    exports: { '.': './src/index.ts' },
    dependencies: { '@pontis/core': '0.1.0' },
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
    ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'new-plugin.ts'), 'Not A Name'],
    { cwd: REPO_ROOT },
  ).then(
    () => undefined,
    (error: { code?: number; stderr?: string }) => error,
  )
  t.equal(failure?.code, 1)
  t.match(failure?.stderr, "new-plugin: 'Not A Name' is not a plugin name")
})

t.test('the scaffolded plugin passes its conformance test', async (t) => {
  const testFile = join(scaffolded.directory, 'test', 'conformance.test.ts')
  const { stdout } = await run(process.execPath, ['--import', 'tsx', testFile], { cwd: scratch })
  t.notMatch(stdout, /^\s*not ok/m, 'no failing assertion')
  t.match(stdout, /^ok 1 - plugin conformance: @pontis\/plugin-toy-family \(toy-family\)/m)
  for (const part of ['definePlugin', 'registry', 'identity', 'finality', 'quoting']) {
    t.match(stdout, new RegExp(`^\\s+ok \\d+ - ${part}`, 'm'), `the ${part} checks ran and passed`)
  }
})

t.test('the registry loads it from a chains file by path; the quote engine serves a quote', async (t) => {
  const configDir = join(scratch, 'configs')
  await mkdir(configDir, { recursive: true })
  const chainId = scaffolded.exampleChainId
  const address = (hex: string) => `${NAME}:${hex}`
  const usdt = {
    id: 'usdt',
    symbol: 'USDT',
    name: 'Tether',
    address: address('cc'.repeat(20)),
    decimals: 6,
    supportsBridging: true,
  }
  const chain = (id: number, name: string) => ({
    id,
    name,
    displayName: name,
    vmType: NAME,
    currency: { id: 'toy', symbol: 'TOY', name: 'Toy', address: address('0'.repeat(40)), decimals: 18 },
    currencies: [usdt],
    solverCurrencies: [usdt],
    protocol: { v2: { chainId: name, depository: address('de'.repeat(20)) } },
    rpc: { url: 'http://127.0.0.1:1' },
  })
  await writeFile(
    join(configDir, 'chains.local.json'),
    JSON.stringify({
      plugins: { [NAME]: `../plugins/${NAME}/src/index.ts` },
      chains: [chain(chainId, 'toy-a'), chain(chainId + 1, 'toy-b')],
    }),
  )
  const hub = {
    chainId,
    name: 'toy-a',
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
    { fastConfirmations: 1, confirmations: 2, unitPrice: 1 },
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
    prices: new StaticPriceSource({ toy: '2', usdt: '1' }),
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
