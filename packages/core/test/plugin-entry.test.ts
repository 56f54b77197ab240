/**
 * `@pontis/core/plugin` carries the plugin contract and the few helpers plugins use, and nothing
 * of the services' runtime. Every name it exports, types included, is read with the TypeScript
 * checker and traced to the module that declares it.
 */
import { fileURLToPath } from 'node:url'
import * as core from '@pontis/core'
import * as pluginEntry from '@pontis/core/plugin'
import t from 'tap'
import { declaredExports } from '../../../scripts/module-exports.js'

const ENTRY_FILE = fileURLToPath(new URL('../src/plugin-entry.ts', import.meta.url))

/** The contract modules: everything they export is for plugin authors. */
const CONTRACT_MODULES = new Set(['plugin.ts', 'vm-type.ts'])

/**
 * What the entry picks from the other modules. Add a name here only when a plugin needs it; a
 * service-side helper belongs in `@pontis/core` alone.
 */
const PICKED_NAMES = [
  'BlockHashVote',
  'ChainWitness',
  'blockHashQuorum',
  'nodeDisagreementReporter',
  'ChainConfig',
  'ChainContracts',
  'ChainContractsV3',
  'ChainEntry',
  'ChainProtocol',
  'CurrencyEntry',
  'CurrencyMetadata',
  'ErrorCode',
  'FailoverRequest',
  'FailoverTarget',
  'FetchTimeoutError',
  'JsonSchema',
  'LogFields',
  'Logger',
  'PontisError',
  'PublicChainRecord',
  'ReadCache',
  'RpcConfig',
  'SIGNATURE_STEP_FORMAT',
  'TimedFetchOptions',
  'TimedResponse',
  'fetchWithFailover',
  'formatUnits',
  'isPontisError',
  'keepAliveFetch',
  'parseUnits',
  'reportRpcDisagreement',
  'timedFetch',
  'unexpectedAnswer',
]

/** Names only the services use: loading and running chains, logging set-up, protocol encoding. */
const SERVICE_ONLY_NAMES = [
  'createRegistry',
  'loadRegistry',
  'chainByProtocolId',
  'loadChainsConfig',
  'loadEnvironmentFile',
  'ConfigError',
  'createLogger',
  'readVariable',
  'encodeOrder',
  'createTypedDataHasher',
  'hubSigningDomain',
  'ERROR_CATALOG',
  'createAjv',
  'satisfiesRange',
]

t.test('the entry exports the contract whole, and only the picked names besides', async (t) => {
  const declared = declaredExports(ENTRY_FILE)
  t.equal(declared.get('definePlugin'), 'plugin.ts')
  t.equal(declared.get('ChainAdapter'), 'plugin.ts', 'types are traced too')
  t.equal(declared.get('VmType'), 'vm-type.ts')
  const picked = [...declared].filter(([, file]) => !CONTRACT_MODULES.has(file)).map(([name]) => name)
  t.same(
    picked.sort(),
    [...PICKED_NAMES].sort(),
    'names outside the contract modules are exactly the picked ones',
  )
})

t.test('no service-only name is exported, and every value is core’s own', async (t) => {
  const exported = new Set(Object.keys(pluginEntry))
  for (const name of SERVICE_ONLY_NAMES) {
    t.ok(name in core, `${name} is a name of @pontis/core`)
    t.notOk(exported.has(name), `${name} is not in @pontis/core/plugin`)
  }
  const coreValues: Record<string, unknown> = core
  for (const [name, value] of Object.entries(pluginEntry)) {
    t.equal(value, coreValues[name], `${name} is the same value in @pontis/core`)
  }
})

t.test('a plugin is defined through the entry alone', async (t) => {
  const plugin = pluginEntry.definePlugin({
    vmType: 'newvm',
    name: 'plugin-newvm',
    coreApi: '^1.0.0',
    configSchema: { type: 'object' },
    createAdapter: () => {
      throw new pluginEntry.PontisError('UNSUPPORTED_CHAIN', 'not served')
    },
  })
  t.ok(core.isPontisPlugin(plugin), 'the registry side recognises it')
})
