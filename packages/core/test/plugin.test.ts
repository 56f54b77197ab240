import t from 'tap'
import {
  type ChainAdapter,
  CORE_API_VERSION,
  definePlugin,
  invalidAddressError,
  invalidCurrencyError,
  isPontisPlugin,
  KNOWN_VM_TYPES,
  type PluginDefinition,
  PontisError,
  swapSourceAllowed,
} from '../src/index.js'

const identity: ChainAdapter['identity'] = {
  nativeCurrencyId: 'native',
  isValidAddress: () => true,
  normalizeAddress: (address) => address,
  normalizeCurrency: (currencyId) => currencyId,
  encodeAddress: (address) => `0x${Buffer.from(address).toString('hex')}`,
  encodeTransactionId: (transactionId) => `0x${Buffer.from(transactionId).toString('hex')}`,
}

const definition: PluginDefinition<{ depth: number }> = {
  vmType: 'newvm',
  name: 'plugin-newvm',
  coreApi: '^1.0.0',
  configSchema: { type: 'object', properties: { depth: { type: 'integer', default: 2 } } },
  createAdapter: (chain) => {
    const depth: number = chain.plugin.depth
    return {
      identity: { ...identity, nativeCurrencyId: `native-${depth}` },
      finality: { fastConfirmations: 1, slowConfirmations: 1, slowRequiresFinalized: false },
      probe: async () => ({}),
    }
  },
}

t.test('core API version and known families', async (t) => {
  t.equal(CORE_API_VERSION, '1.0.0')
  t.same(KNOWN_VM_TYPES, ['evm', 'svm', 'bvm', 'lvm', 'hypevm', 'tvm', 'tonvm'])
})

t.test('definePlugin returns a frozen, branded copy', async (t) => {
  const plugin = definePlugin(definition)
  t.ok(isPontisPlugin(plugin))
  t.ok(Object.isFrozen(plugin))
  t.ok(Object.isFrozen(plugin.configSchema), 'schema frozen too')
  t.not(plugin.configSchema, definition.configSchema, 'a copy: later edits to the original do not leak in')
  t.equal(plugin.vmType, 'newvm')
  t.equal(plugin.name, 'plugin-newvm')
  t.equal(plugin.coreApi, '^1.0.0')
  t.throws(() => {
    ;(plugin as { vmType: string }).vmType = 'evm'
  }, TypeError)
  const adapter = await plugin.createAdapter(
    {
      id: 1,
      name: 'x',
      displayName: 'X',
      vmType: 'newvm',
      depositEnabled: true,
      disabled: false,
      currency: { id: 'n', symbol: 'N', name: 'N', address: 'native', decimals: 0 },
      rpc: { url: 'http://x' },
      plugin: { depth: 5 },
    },
    { logger: { debug() {}, info() {}, warn() {}, error() {} }, environment: 'local' },
  )
  t.equal(adapter.identity.nativeCurrencyId, 'native-5')
})

t.test('isPontisPlugin refuses look-alikes', async (t) => {
  t.notOk(isPontisPlugin({ ...definition }))
  t.notOk(isPontisPlugin(null))
  t.notOk(isPontisPlugin('evm'))
  t.notOk(isPontisPlugin({ ...definePlugin(definition) }), 'a spread copy is not frozen')
})

t.test('definePlugin names the wrong member', async (t) => {
  const bad = (patch: Record<string, unknown>) => ({ ...definition, ...patch }) as PluginDefinition<unknown>
  t.throws(() => definePlugin(bad({ vmType: 'EVM' })), { name: 'TypeError', message: /vmType/ })
  t.throws(() => definePlugin(bad({ vmType: '' })), { message: /vmType/ })
  t.throws(() => definePlugin(bad({ name: '' })), { message: /name/ })
  t.throws(() => definePlugin(bad({ coreApi: 'latest' })), { message: /plugin 'plugin-newvm': coreApi/ })
  t.throws(() => definePlugin(bad({ configSchema: [] })), { message: /configSchema/ })
  t.throws(() => definePlugin(bad({ createAdapter: 'nope' })), { message: /createAdapter/ })
  t.throws(() => definePlugin(null as unknown as PluginDefinition<unknown>), TypeError)
})

t.test('definePlugin keeps the declared step formats and permit kinds, and checks them', async (t) => {
  const stepFormats = {
    'newvm-transaction': { type: 'object', properties: { format: { const: 'newvm-transaction' } } },
  }
  const plugin = definePlugin({ ...definition, stepFormats, permitKinds: ['newvm-permit'] })
  t.same(plugin.stepFormats, stepFormats)
  t.not(plugin.stepFormats, stepFormats, 'a copy')
  t.ok(Object.isFrozen(plugin.stepFormats?.['newvm-transaction']), 'frozen deeply')
  t.same(plugin.permitKinds, ['newvm-permit'])
  t.ok(Object.isFrozen(plugin.permitKinds))
  t.equal(definePlugin(definition).stepFormats, undefined, 'both are optional')
  const bad = (patch: Record<string, unknown>) => ({ ...definition, ...patch }) as PluginDefinition<unknown>
  t.throws(() => definePlugin(bad({ stepFormats: [] })), { message: /stepFormats must be an object/ })
  t.throws(
    () => definePlugin(bad({ stepFormats: { 'newvm-transaction': { type: 'object' } } })),
    {
      message:
        /stepFormats\['newvm-transaction'\] must be .*properties\.format\.const is 'newvm-transaction'/,
    },
    'a format schema pins its own format',
  )
  t.throws(() => definePlugin(bad({ permitKinds: 'newvm-permit' })), { message: /permitKinds/ })
  t.throws(() => definePlugin(bad({ permitKinds: [''] })), { message: /permitKinds/ })
})

t.test('error helpers pick the code by role and name role, value and chain', async (t) => {
  const recipient = invalidAddressError('recipient', '0x12', 'too short', { id: 8453, displayName: 'Base' })
  t.type(recipient, PontisError)
  t.equal(recipient.code, 'INVALID_RECIPIENT')
  t.equal(recipient.message, "recipient '0x12' is not a valid address on Base (8453): too short")
  t.same(recipient.errorData, { role: 'recipient', address: '0x12', chainId: 8453 })
  t.equal(invalidAddressError('user', 'x', 'bad').code, 'INVALID_ADDRESS')
  t.equal(invalidAddressError('refundTo', 'x', 'bad').message, "refundTo 'x' is not a valid address: bad")
  t.equal(invalidCurrencyError('input', 'x', 'bad').code, 'INVALID_INPUT_CURRENCY')
  t.equal(invalidCurrencyError('output', 'x', 'bad').code, 'INVALID_OUTPUT_CURRENCY')
  const currency = invalidCurrencyError('currency', 'zz', 'bad', { id: 1, displayName: 'Ethereum' })
  t.equal(currency.code, 'UNSUPPORTED_CURRENCY')
  t.equal(currency.message, "currency 'zz' is not a valid currency id on Ethereum (1): bad")
  t.ok(invalidAddressError('user', 'a'.repeat(5000), 'bad').message.length < 200, 'long values are cut')
})

t.test(
  'swap source filters: names compare without case, exclusion wins, an empty list allows all',
  async (t) => {
    t.ok(swapSourceAllowed({}, 'uniswap-v3'), 'no filter allows every source')
    t.ok(swapSourceAllowed({ included: [] }, 'uniswap-v3'), 'an empty inclusion list is no filter')
    t.ok(swapSourceAllowed({ included: ['Uniswap-V3'] }, 'uniswap-v3'))
    t.notOk(swapSourceAllowed({ included: ['curve'] }, 'uniswap-v3'))
    t.notOk(swapSourceAllowed({ excluded: ['UNISWAP-V3'] }, 'uniswap-v3'))
    t.notOk(swapSourceAllowed({ included: ['uniswap-v3'], excluded: ['uniswap-v3'] }, 'uniswap-v3'))
    t.ok(swapSourceAllowed({ excluded: ['curve'] }, 'uniswap-v3'))
  },
)
