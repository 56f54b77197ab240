import {
  type ChainEntry,
  CORE_API_VERSION,
  createRegistry,
  isPontisPlugin,
  PontisError,
  satisfiesRange,
} from '@pontis/core'
import t from 'tap'
import evmPlugin, { createEvmIdentity, EVM_NATIVE_CURRENCY_ID } from '../src/index.js'

const CHECKSUMMED = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

const entry = (overrides: Record<string, unknown> = {}): ChainEntry =>
  ({
    id: 8453,
    name: 'base',
    displayName: 'Base',
    vmType: 'evm',
    currency: {
      id: 'eth',
      symbol: 'ETH',
      name: 'Ether',
      address: EVM_NATIVE_CURRENCY_ID,
      decimals: 18,
    },
    rpc: { url: 'http://127.0.0.1:8545' },
    ...overrides,
  }) as ChainEntry

async function baseAdapter() {
  const registry = createRegistry()
  registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  const [chain] = await registry.addChains([entry()])
  if (chain === undefined) throw new Error('no chain')
  return chain
}

t.test('is a plugin for the evm family that fits this core', async (t) => {
  t.ok(isPontisPlugin(evmPlugin))
  t.equal(evmPlugin.vmType, 'evm')
  t.equal(evmPlugin.name, '@pontis/plugin-evm')
  t.ok(satisfiesRange(CORE_API_VERSION, evmPlugin.coreApi))
})

t.test('normalizeAddress checksums any valid casing', async (t) => {
  const { adapter } = await baseAdapter()
  const { identity } = adapter
  t.equal(identity.normalizeAddress(CHECKSUMMED.toLowerCase(), 'user'), CHECKSUMMED)
  t.equal(identity.normalizeAddress(`0x${CHECKSUMMED.slice(2).toUpperCase()}`, 'user'), CHECKSUMMED)
  t.equal(identity.normalizeAddress(CHECKSUMMED, 'recipient'), CHECKSUMMED)
  t.ok(identity.isValidAddress(CHECKSUMMED.toLowerCase()))
  t.equal(adapter.quoting?.supportsDestinationCalls, true, 'EVM destinations run txs calls')
  t.equal(
    adapter.quoting?.encodeDestinationCall?.({ to: CHECKSUMMED, value: 5n, data: '0xabcd' }),
    `0x${[
      '0000000000000000000000005fbdb2315678afecb367f032d93f642f64180aa3',
      '0000000000000000000000000000000000000000000000000000000000000005',
      '0000000000000000000000000000000000000000000000000000000000000060',
      '0000000000000000000000000000000000000000000000000000000000000002',
      'abcd000000000000000000000000000000000000000000000000000000000000',
    ].join('')}`,
    "a destination call is the order's abi.encode(address, uint256, bytes)",
  )
  t.equal(adapter.quoting?.createDepositAddress, undefined, 'no deposit addresses without a seed')
})

t.test('invalid addresses are refused with the role, the value and the chain', async (t) => {
  const { identity } = (await baseAdapter()).adapter
  for (const bad of [
    '0x1234',
    'hello',
    '',
    `0x${'g'.repeat(40)}`,
    `0x${'a'.repeat(41)}`,
    `${'a'.repeat(40)}`,
    ` 0x${'a'.repeat(40)}`,
  ]) {
    t.notOk(identity.isValidAddress(bad), `${JSON.stringify(bad)} is not valid`)
    const error = t.throws(() => identity.normalizeAddress(bad, 'user')) as PontisError
    t.type(error, PontisError)
    t.equal(error.code, 'INVALID_ADDRESS')
    t.equal(error.status, 400)
    t.match(
      error.message,
      `user '${bad}' is not a valid address on Base (8453): expected 0x followed by 40 hexadecimal characters`,
    )
  }
  const recipient = t.throws(() => identity.normalizeAddress('0xabc', 'recipient')) as PontisError
  t.equal(recipient.code, 'INVALID_RECIPIENT')
  t.match(recipient.message, "recipient '0xabc'")
  t.same(recipient.errorData, { role: 'recipient', address: '0xabc', chainId: 8453 })
  t.equal(
    (t.throws(() => identity.normalizeAddress('0xabc', 'refundTo')) as PontisError).code,
    'INVALID_ADDRESS',
  )
  t.notOk(identity.isValidAddress(42 as unknown as string), 'non-strings are not addresses')
})

t.test('currency ids: native is the zero address, tokens are checksummed', async (t) => {
  const { identity } = (await baseAdapter()).adapter
  t.equal(identity.nativeCurrencyId, '0x0000000000000000000000000000000000000000')
  t.equal(identity.normalizeCurrency(EVM_NATIVE_CURRENCY_ID), EVM_NATIVE_CURRENCY_ID)
  t.equal(identity.normalizeCurrency(CHECKSUMMED.toLowerCase(), 'input'), CHECKSUMMED)
  const input = t.throws(() => identity.normalizeCurrency('eth', 'input')) as PontisError
  t.equal(input.code, 'INVALID_INPUT_CURRENCY')
  t.match(input.message, "input currency 'eth' is not a valid currency id on Base (8453)")
  t.equal(
    (t.throws(() => identity.normalizeCurrency('0x1', 'output')) as PontisError).code,
    'INVALID_OUTPUT_CURRENCY',
  )
  t.equal((t.throws(() => identity.normalizeCurrency('0x1')) as PontisError).code, 'UNSUPPORTED_CURRENCY')
})

t.test('createEvmIdentity works without a chain label', async (t) => {
  const identity = createEvmIdentity()
  t.throws(() => identity.normalizeAddress('nope', 'user'), {
    message: "user 'nope' is not a valid address: expected",
  })
})

t.test('plugin options: defaults applied, mistakes named', async (t) => {
  const chain = await baseAdapter()
  t.same(chain.entry.plugin, {
    confirmations: 2,
    fastConfirmations: 1,
    waitForFinalized: true,
    eip1559: true,
    maxLogBlockRange: 1000,
    readCacheSeconds: 2,
    maxReplacementFeePerGas: '1000000000000',
  })
  t.same(chain.adapter.finality, { fastConfirmations: 1, slowConfirmations: 2, slowRequiresFinalized: true })

  const registry = createRegistry()
  registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  const [custom] = await registry.addChains([
    entry({ plugin: { confirmations: 12, eip1559: false, pollingIntervalMs: 2000 } }),
  ])
  t.same(custom?.entry.plugin, {
    confirmations: 12,
    fastConfirmations: 1,
    waitForFinalized: true,
    eip1559: false,
    pollingIntervalMs: 2000,
    maxLogBlockRange: 1000,
    readCacheSeconds: 2,
    maxReplacementFeePerGas: '1000000000000',
  })

  const error = await registry
    .addChains([
      entry({
        id: 1,
        name: 'ethereum',
        displayName: 'Ethereum',
        plugin: { confirmations: -1, eip1559: 'yes', gas: 1 },
      }),
    ])
    .then(
      () => undefined,
      (caught: unknown) => caught as Error,
    )
  t.match(error?.message, 'chain 1 (ethereum): chains[0].plugin.confirmations must be >= 1')
  t.match(error?.message, 'chain 1 (ethereum): chains[0].plugin.eip1559 must be a boolean')
  t.match(error?.message, 'chain 1 (ethereum): chains[0].plugin.gas is not a known field')

  const multicaller = await registry
    .addChains([
      entry({ id: 10, name: 'optimism', displayName: 'Optimism', plugin: { multicaller: '0x12' } }),
    ])
    .then(
      () => undefined,
      (caught: unknown) => caught as Error,
    )
  t.match(multicaller?.message, 'chain 10 (optimism): chains[0].plugin.multicaller')
  const [filler] = await registry.addChains([
    entry({
      id: 11,
      name: 'filler',
      displayName: 'Filler',
      plugin: { multicaller: CHECKSUMMED.toLowerCase() },
    }),
  ])
  t.ok(filler?.adapter.filling, 'a multicaller gives the chain a filling capability')
  t.equal(chain.adapter.filling, undefined, 'no multicaller, no filling')
  t.equal(chain.adapter.reading?.scanDeposits, undefined, 'no depository, no deposit scan')
})

t.test('config addresses are checked with EVM rules at start-up', async (t) => {
  const registry = createRegistry()
  registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  const error = await registry
    .addChains([
      entry({
        currencies: [{ id: 'usdc', symbol: 'USDC', name: 'USD Coin', address: 'usdc', decimals: 6 }],
        protocol: { v2: { chainId: 'base', depository: CHECKSUMMED.toLowerCase() } },
      }),
    ])
    .then(
      () => undefined,
      (caught: unknown) => caught as Error,
    )
  t.match(
    error?.message,
    "chain 8453 (base): currencies[0].address: currency 'usdc' is not a valid currency id",
  )
  t.notMatch(error?.message, 'depository', 'a lower-case address is valid')
})
