import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import {
  type ChainEntry,
  CORE_API_VERSION,
  ConfigError,
  createRegistry,
  definePlugin,
  loadChainsConfig,
  loadRegistry,
  type ModuleImporter,
  PontisError,
  type Registry,
} from '../src/index.js'
import testFamily, { closedChains, contexts } from './fixtures/plugins/test-family.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const fixtures = join(here, 'fixtures')
const fixtureConfigs = join(fixtures, 'configs')
const pluginPath = (name: string) => join(fixtures, 'plugins', `${name}.ts`)

const entry = (overrides: Partial<Record<keyof ChainEntry, unknown>> = {}): ChainEntry =>
  ({
    id: 7001,
    name: 'alpha',
    displayName: 'Alpha',
    vmType: 'testvm',
    currency: { id: 'alp', symbol: 'ALP', name: 'Alpha coin', address: 'native', decimals: 9 },
    rpc: { url: 'http://127.0.0.1:9001' },
    plugin: { label: 'a' },
    ...overrides,
  }) as ChainEntry

/** The ConfigError a promise rejects with; anything else fails the test. */
async function rejection(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`)
  return error
}

function registryWithTestFamily(): Registry {
  const registry = createRegistry({ environment: 'test' })
  registry.registerPlugin(testFamily, 'fixtures/plugins/test-family.ts')
  return registry
}

t.test('loadRegistry loads plugins by path relative to the config file and builds adapters', async (t) => {
  const registry = await loadRegistry({ configDir: fixtureConfigs, environment: 'dev', env: {} })
  t.equal(registry.environment, 'dev')
  t.same(
    registry.plugins().map(({ plugin, source }) => [plugin.name, source]),
    [['fixture-test-family', '../plugins/test-family.ts']],
  )
  t.same(
    registry.chains().map((chain) => chain.id),
    [7001, 7002],
    'config order',
  )
  const alpha = registry.chain(7001)
  t.equal(alpha.entry.name, 'alpha')
  t.equal(alpha.plugin.vmType, 'testvm')
  t.same(alpha.entry.plugin, { label: 'first', retries: 3 }, 'plugin schema defaults applied')
  t.same(registry.chain(7002).entry.plugin, { label: 'second', retries: 0 })
  t.equal(alpha.adapter.identity.normalizeAddress('TV1ABCDEF', 'user'), 'tv1abcdef')
  t.equal(registry.chain('7001'), alpha, 'a decimal string id works too')
  t.equal(registry.hub()?.chainId, 7001)
  t.ok(Object.isFrozen(alpha.entry) && Object.isFrozen(alpha.record))
})

t.test('adapters get a context with the environment and a chain-tagged logger', async (t) => {
  const lines: Array<[string, Record<string, unknown> | undefined]> = []
  const logger = {
    debug: (message: string, fields?: Record<string, unknown>) => lines.push([message, fields]),
    info: () => {},
    warn: () => {},
    error: () => {},
  }
  const registry = createRegistry({ environment: 'ctx-env', logger })
  registry.registerPlugin(testFamily, 'test')
  const before = contexts.length
  await registry.addChains([entry({ id: 9100, name: 'ctx' })])
  const context = contexts[before]
  t.equal(context?.environment, 'ctx-env')
  context?.logger.debug('from plugin', { step: 1 })
  t.same(lines.at(-1), ['from plugin', { chainId: 9100, chain: 'ctx', step: 1 }])
})

t.test('publicChainRecords never carry rpc or plugin', async (t) => {
  const registry = await loadRegistry({
    configDir: fixtureConfigs,
    environment: 'dev',
    env: { ALPHA_RPC_URL: 'https://rpc.example/v2/SECRET-KEY', ALPHA_API_KEY: 'HEADER-SECRET' },
  })
  const records = registry.publicChainRecords()
  t.same(
    records.map((record) => record.id),
    [7001, 7002],
  )
  for (const record of records) {
    t.notOk('rpc' in record, `${record.id} has no rpc`)
    t.notOk('plugin' in record, `${record.id} has no plugin`)
  }
  const text = JSON.stringify(records)
  t.notOk(text.includes('SECRET-KEY'))
  t.notOk(text.includes('HEADER-SECRET'))
  t.equal(registry.chain(7001).record, records[0])
})

t.test('unknown chain ids answer UNSUPPORTED_CHAIN naming the id and the chains served', async (t) => {
  const registry = await loadRegistry({ configDir: fixtureConfigs, environment: 'dev', env: {} })
  const error = t.throws(() => registry.chain(999)) as PontisError
  t.type(error, PontisError)
  t.equal(error.code, 'UNSUPPORTED_CHAIN')
  t.equal(error.status, 400)
  t.equal(error.message, 'chain 999 is not supported here; supported chains: 7001 (alpha), 7002 (beta)')
  t.same(error.errorData, { chainId: 999 })
  t.equal(registry.tryChain(999), undefined)
  t.equal(registry.tryChain('abc'), undefined)
  t.equal(registry.tryChain('07001'), undefined, 'no leading zeros')
  t.equal(registry.tryChain(7001.5), undefined)
  t.throws(() => registry.chain('abc'), { code: 'UNSUPPORTED_CHAIN', message: /chain abc is not supported/ })
})

t.test('a plugin with a coreApi range that excludes this core is refused', async (t) => {
  const registry = createRegistry()
  const error = await rejection(registry.importPlugin(pluginPath('wrong-core-api'), { vmType: 'testvm' }))
  t.match(error.message, "plugin 'fixture-future-plugin'")
  t.match(error.message, "supports core API '^2.0.0'")
  t.match(error.message, `this core provides ${CORE_API_VERSION}`)
  t.match(error.message, 'wrong-core-api.ts')
})

t.test('a default export not made by definePlugin is refused', async (t) => {
  const registry = createRegistry()
  const error = await rejection(registry.importPlugin(pluginPath('not-defined'), { vmType: 'testvm' }))
  t.match(error.message, 'not-defined.ts')
  t.match(error.message, 'is not a plugin made by definePlugin()')
  t.throws(() => registry.registerPlugin({ vmType: 'evm' }, 'inline'), {
    message: /plugin from 'inline' is not a plugin made by definePlugin/,
  })
})

t.test('a module without a default export is refused', async (t) => {
  const error = await rejection(createRegistry().importPlugin(pluginPath('no-default'), { vmType: 'testvm' }))
  t.match(error.message, /no-default\.ts'.* has no default export/)
})

t.test('a second plugin for the same vmType is refused, naming both sources', async (t) => {
  const registry = createRegistry()
  await registry.importPlugin(pluginPath('test-family'), { vmType: 'testvm' })
  const error = await rejection(registry.importPlugin(pluginPath('duplicate-family'), { vmType: 'testvm' }))
  t.match(error.message, "two plugins serve vmType 'testvm'")
  t.match(error.message, "'fixture-test-family' from ")
  t.match(error.message, 'test-family.ts')
  t.match(error.message, "'fixture-test-family-fork' from ")
  t.match(error.message, 'duplicate-family.ts')
  t.equal(registry.plugins().length, 1, 'the first one stays')
})

t.test('a plugin registered under another family key is refused', async (t) => {
  const registry = createRegistry()
  const error = await rejection(
    registry.importPlugin(pluginPath('test-family'), {
      vmType: 'svm',
      declaredAt: 'chains.x.json plugins.svm',
    }),
  )
  t.match(error.message, "serves vmType 'testvm' but is registered under 'svm'")
  t.match(error.message, 'put it under "testvm"')
})

t.test('a plugin that cannot be imported names the specifier and where it was declared', async (t) => {
  const dir = t.testdir({
    'chains.dev.json': JSON.stringify({ plugins: { testvm: './missing-plugin.ts' }, chains: [] }),
    'chains.hub.dev.json': JSON.stringify({
      hub: {
        chainId: 1,
        name: 'a',
        oracleContract: `0x${'0'.repeat(40)}`,
        domain: { name: 'P', version: '1' },
      },
    }),
  })
  const error = await rejection(loadRegistry({ configDir: dir, environment: 'dev', env: {} }))
  t.match(error.message, "cannot load the plugin for vmType 'testvm' from './missing-plugin.ts'")
  t.match(error.message, /declared at .*chains\.dev\.json plugins\.testvm/)
  const byName = await rejection(createRegistry().importPlugin('@pontis/no-such-plugin', { vmType: 'nope' }))
  t.match(byName.message, "from '@pontis/no-such-plugin'")
})

t.test('the importer option receives package names as is and paths as file URLs', async (t) => {
  const seen: string[] = []
  const importer: ModuleImporter = async (specifier) => {
    seen.push(specifier)
    return { default: testFamily }
  }
  const dir = t.testdir({
    'chains.dev.json': JSON.stringify({ plugins: { testvm: './plugins/family.js' }, chains: [] }),
    'chains.hub.dev.json': JSON.stringify({
      hub: {
        chainId: 1,
        name: 'a',
        oracleContract: `0x${'0'.repeat(40)}`,
        domain: { name: 'P', version: '1' },
      },
    }),
  })
  await loadRegistry({ configDir: dir, environment: 'dev', env: {}, importer })
  t.same(seen, [pathToFileURL(join(dir, 'plugins', 'family.js')).href])
  await createRegistry({ importer }).importPlugin('some-plugin-package', { vmType: 'testvm' })
  t.equal(seen[1], 'some-plugin-package')
})

t.test('a chain of a family without a plugin is refused, listing the known families', async (t) => {
  const registry = registryWithTestFamily()
  const error = await rejection(registry.addChains([entry({ id: 501, name: 'sol', vmType: 'svm' })]))
  t.match(error.message, "unknown family 'svm' for chain 501 sol; known families: testvm")
  t.equal(registry.chains().length, 0)
})

t.test('plugin options are validated with the plugin schema, naming chain and field', async (t) => {
  const registry = registryWithTestFamily()
  const error = await rejection(
    registry.addChains(
      [
        entry({ plugin: { label: 'ok', retries: -1 } }),
        entry({ id: 7002, name: 'beta', plugin: { retries: 1, colour: 'blue' } }),
        entry({ id: 7003, name: 'gamma', plugin: undefined }),
      ],
      '/configs/chains.dev.json',
    ),
  )
  const messages = error.issues.map((issue) => issue.message)
  t.ok(
    messages.includes(
      'chain 7001 (alpha): chains[0].plugin.retries must be >= 0 (options of fixture-test-family)',
    ),
  )
  t.ok(
    messages.includes(
      'chain 7002 (beta): chains[1].plugin.label is required (options of fixture-test-family)',
    ),
  )
  t.ok(
    messages.includes(
      'chain 7002 (beta): chains[1].plugin.colour is not a known field (options of fixture-test-family)',
    ),
  )
  t.ok(
    messages.includes(
      'chain 7003 (gamma): chains[2].plugin.label is required (options of fixture-test-family)',
    ),
    'missing options are validated as {}',
  )
  t.equal(error.issues[0]?.file, '/configs/chains.dev.json')
  t.equal(registry.chains().length, 0, 'all or nothing')
})

t.test('duplicate chain ids and names are refused', async (t) => {
  const registry = registryWithTestFamily()
  const error = await rejection(
    registry.addChains([entry(), entry({ name: 'alpha-two' }), entry({ id: 7003, name: 'alpha' })]),
  )
  t.match(
    error.message,
    'chain 7001 (alpha-two): duplicate chain id 7001, also used by chains[0] 7001 (alpha)',
  )
  t.match(
    error.message,
    "chain 7003 (alpha): duplicate chain name 'alpha', also used by chains[0] 7001 (alpha)",
  )
  await registry.addChains([entry()])
  const later = await rejection(registry.addChains([entry({ name: 'other' })]))
  t.match(later.message, 'duplicate chain id 7001, also used by already registered chain 7001 (alpha)')
})

t.test('addChains validates the core shape for programmatic callers', async (t) => {
  const registry = registryWithTestFamily()
  const error = await rejection(
    registry.addChains([entry({ rpc: { url: 'ftp://nope' }, displayName: undefined })]),
  )
  t.match(error.message, 'chain 7001 (alpha): chains[0].rpc.url does not match')
  t.match(error.message, 'chain 7001 (alpha): chains[0].displayName is required')
})

t.test('addresses in the entry are checked by the family adapter', async (t) => {
  const registry = registryWithTestFamily()
  const error = await rejection(
    registry.addChains([
      entry({
        currencies: [{ id: 'x', symbol: 'X', name: 'X', address: 'not-an-address', decimals: 6 }],
        protocol: { v2: { chainId: 'alpha', depository: 'nope' } },
        contracts: { multicall3: 'tv1multicall', v3: { erc20Router: 'bad' } },
        solverAddresses: ['tv1solver1', 'zz'],
      }),
    ]),
  )
  t.match(
    error.message,
    "chain 7001 (alpha): currencies[0].address: currency 'not-an-address' is not a valid currency id",
  )
  t.match(
    error.message,
    "chain 7001 (alpha): protocol.v2.depository: contract 'nope' is not a valid address on Alpha (7001)",
  )
  t.match(error.message, "contracts.v3.erc20Router: contract 'bad'")
  t.match(error.message, "solverAddresses[1]: solver 'zz'")
  t.notMatch(error.message, 'multicall3', 'valid addresses pass')
  t.equal(registry.chains().length, 0)
})

t.test('an adapter factory that throws or returns no identity is reported per chain', async (t) => {
  const registry = createRegistry()
  registry.registerPlugin(
    definePlugin({
      vmType: 'flaky',
      name: 'flaky-plugin',
      coreApi: '^1.0.0',
      configSchema: { type: 'object' },
      createAdapter: (chain) => {
        if (chain.id === 1) throw new Error('rpc unreachable')
        return {} as never
      },
    }),
    'inline',
  )
  const error = await rejection(
    registry.addChains([
      entry({ id: 1, name: 'one', vmType: 'flaky' }),
      entry({ id: 2, name: 'two', vmType: 'flaky' }),
    ]),
  )
  t.match(error.message, "chain 1 (one): plugin 'flaky-plugin' could not create its adapter: rpc unreachable")
  t.match(
    error.message,
    "chain 2 (two): plugin 'flaky-plugin' returned an adapter without a complete identity capability",
  )
})

t.test('a plugin whose configSchema is not valid JSON Schema is refused at registration', async (t) => {
  const broken = definePlugin({
    vmType: 'broken',
    name: 'broken-schema',
    coreApi: '^1.0.0',
    configSchema: { type: 'object', properties: { a: { type: 'intger' } } },
    createAdapter: () => ({}) as never,
  })
  t.throws(() => createRegistry().registerPlugin(broken, 'inline'), {
    name: 'ConfigError',
    message: /plugin 'broken-schema' \(from 'inline'\) has a configSchema that is not a valid JSON Schema/,
  })
})

t.test('close() closes every adapter once', async (t) => {
  const registry = registryWithTestFamily()
  await registry.addChains([entry({ id: 8801, name: 'c1' }), entry({ id: 8802, name: 'c2' })])
  await registry.close()
  t.same(
    closedChains.filter((id) => id === 8801 || id === 8802),
    [8801, 8802],
  )
})

t.test('loadRegistry accepts an already loaded config', async (t) => {
  const chainsConfig = await loadChainsConfig({ configDir: fixtureConfigs, environment: 'dev', env: {} })
  const registry = await loadRegistry({ chainsConfig })
  t.equal(registry.chains().length, 2)
  t.equal(registry.environment, 'dev')
})

t.test('loadRegistry reports missing variables before importing anything', async (t) => {
  let imported = 0
  const error = await rejection(
    loadRegistry({
      configDir: fixtureConfigs,
      environment: 'staging',
      env: {},
      importer: async () => {
        imported += 1
        return {}
      },
    }),
  )
  t.match(error.message, 'GAMMA_RPC_URL')
  t.equal(imported, 0)
})
