/**
 * Every `configs/chains.<environment>.json` of the repository loads through the real registry with
 * the real EVM plugin: `local` with no variables at all, the others with a fake value for each
 * placeholder, and never without them.
 */

import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { dummyEnvironment } from '../../../test/helpers/dummy-environment.js'
import { requiredVariables } from '../../../test/helpers/environments.js'
import { ConfigError, listEnvironments, loadRegistry } from '../src/index.js'

const configDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'configs')

t.test('the repository has local, testnet and mainnet', async (t) => {
  const environments = await listEnvironments(configDir)
  for (const name of ['local', 'testnet', 'mainnet']) t.ok(environments.includes(name), name)
})

t.test('local loads with no variables set and serves the devnet chains', async (t) => {
  const registry = await loadRegistry({ configDir, environment: 'local', env: {} })
  t.same(
    registry.chains().map((chain) => [chain.id, chain.entry.name, chain.plugin.name]),
    [
      [31337, 'pontis-local-a', '@pontis/plugin-evm'],
      [31338, 'pontis-local-b', '@pontis/plugin-evm'],
      [792703809, 'pontis-local-svm', '@pontis/plugin-svm'],
      [8253038, 'pontis-local-btc', '@pontis/plugin-bitcoin'],
      [3586256, 'pontis-local-lighter', '@pontis/plugin-lighter'],
      [1337, 'pontis-local-hyperliquid', '@pontis/plugin-hyperliquid'],
      [728126428, 'pontis-local-tron', '@pontis/plugin-tron'],
    ],
  )
  // The venue simulators' defaults (npm start's ports) and their native currencies.
  const lighter = registry.chain(3586256)
  t.equal(lighter.entry.rpc.url, 'http://127.0.0.1:8910')
  t.same([lighter.entry.currency.address, lighter.entry.currency.decimals], ['0', 6])
  t.equal(lighter.entry.protocol?.v2?.depository, '1000')
  const hyperliquid = registry.chain(1337)
  t.equal(hyperliquid.entry.rpc.url, 'http://127.0.0.1:8920')
  t.same(
    [hyperliquid.entry.currency.address, hyperliquid.entry.currency.decimals],
    [`0x${'0'.repeat(32)}`, 8],
  )
  const tron = registry.chain(728126428)
  t.equal(tron.entry.rpc.url, 'http://127.0.0.1:8090')
  t.same(
    [tron.entry.currency.address, tron.entry.currency.decimals],
    ['T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb', 6],
  )
  const bitcoin = registry.chain(8253038)
  t.equal(bitcoin.entry.rpc.url, 'http://127.0.0.1:3002')
  t.equal(bitcoin.entry.currency.address, 'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8')
  t.equal(bitcoin.entry.currency.decimals, 8)
  const svm = registry.chain(792703809)
  t.equal(svm.entry.rpc.url, 'http://127.0.0.1:8899')
  t.equal(svm.entry.currency.address, '11111111111111111111111111111111')
  t.equal(svm.entry.currency.decimals, 9)
  t.equal(svm.entry.currencies?.[0]?.decimals, 6)
  t.equal(svm.entry.currencies?.[1]?.decimals, 9, 'wrapped SOL')
  const a = registry.chain(31337)
  t.equal(a.entry.rpc.url, 'http://127.0.0.1:8545')
  t.equal(registry.chain(31338).entry.rpc.url, 'http://127.0.0.1:8546')
  t.equal(a.entry.currency.decimals, 18)
  t.equal(a.entry.currency.address, '0x0000000000000000000000000000000000000000')
  t.equal(a.entry.currencies?.[0]?.address, '0x5FbDB2315678afecb367f032d93F642f64180aa3')
  t.equal(a.entry.protocol?.v2?.depository, '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512')
  t.same(a.entry.plugin, {
    confirmations: 1,
    fastConfirmations: 1,
    waitForFinalized: false,
    eip1559: true,
    maxLogBlockRange: 1000,
    readCacheSeconds: 2,
    depositAddressSeed: '0x7c3f5d0e9a1b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d',
    multicaller: '0xef11D1c2aA48826D4c41e54ab82D1Ff5Ad8A64Ca',
    // The default cap on a stuck fill's repriced fee (1000 gwei).
    maxReplacementFeePerGas: '1000000000000',
    // The 0x-shaped swap source: off until LOCAL_A_ZEROEX_API_URL names an API.
    zeroEx: { apiUrl: '', apiKey: '', timeoutMs: 3000 },
  })
  t.same(a.adapter.finality, { fastConfirmations: 1, slowConfirmations: 1, slowRequiresFinalized: false })
  t.equal(a.adapter.identity.nativeCurrencyId, '0x0000000000000000000000000000000000000000')
  t.same(registry.hub(), {
    chainId: 31337,
    name: 'pontis-local-a',
    oracleContract: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
    domain: { name: 'PontisOracle', version: '1' },
  })
  t.notOk(JSON.stringify(registry.publicChainRecords()).includes('"rpc"'))
})

t.test('local placeholders can be overridden', async (t) => {
  const registry = await loadRegistry({
    configDir,
    environment: 'local',
    env: { LOCAL_A_RPC_URL: 'http://devnet:9545', LOCAL_A_USDC_ADDRESS: `0x${'ab'.repeat(20)}` },
  })
  t.equal(registry.chain(31337).entry.rpc.url, 'http://devnet:9545')
  t.equal(registry.chain(31337).entry.currencies?.[0]?.address, `0x${'ab'.repeat(20)}`)
})

for (const environment of ['testnet', 'mainnet']) {
  t.test(`${environment} names every missing variable, then loads with them`, async (t) => {
    const variables = await requiredVariables(environment)
    t.ok(variables.length > 0, 'has placeholders')
    for (const name of variables) {
      t.match(
        name,
        /^[A-Z0-9_]+_(RPC_URL|API_URL|ESPLORA_URL|ADDRESS|ACCOUNT_INDEX)$/,
        `${name} follows the <CHAIN>_… convention`,
      )
    }

    const error = await loadRegistry({ configDir, environment, env: {} }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.type(error, ConfigError)
    const configError = error as ConfigError
    t.same([...configError.missingVariables].sort(), variables)
    for (const name of variables) t.match(configError.message, `${name} is not set (used at `)

    const env = await dummyEnvironment(environment, ['chains', 'chains.hub'])
    t.same(Object.keys(env).sort(), variables)
    const registry = await loadRegistry({ configDir, environment, env })
    t.equal(registry.environment, environment)
    t.ok(registry.chains().length >= 2)
    for (const chain of registry.chains()) {
      if (chain.entry.vmType === 'evm') t.equal(chain.plugin.name, '@pontis/plugin-evm')
      t.match(chain.entry.rpc.url, /^https:\/\/rpc\.invalid\//, `${chain.entry.name} rpc from env`)
      t.equal(chain.entry.protocol?.v2?.chainId, chain.entry.name)
    }
    t.match(registry.hub()?.oracleContract, /^0x[0-9a-f]{40}$/)

    // Only one variable missing: that one is named, the others are not.
    const [first, ...rest] = variables
    const partial = { ...env, [first ?? '']: undefined }
    const single = await loadRegistry({ configDir, environment, env: partial }).then(
      () => undefined,
      (caught: unknown) => caught as ConfigError,
    )
    t.same(single?.missingVariables, [first])
    for (const name of rest) t.notMatch(single?.message ?? '', new RegExp(`\\b${name} is not set`))
  })
}

t.test('testnet and mainnet list the expected chains', async (t) => {
  const ids = async (environment: string) => {
    const env = await dummyEnvironment(environment, ['chains', 'chains.hub'])
    const registry = await loadRegistry({ configDir, environment, env })
    return registry.chains().map((chain) => chain.id)
  }
  // EVM first, then Solana, Bitcoin, Tron, Hyperliquid and Lighter (test/configs/real-networks.test.ts).
  t.same(await ids('testnet'), [11155111, 84532, 1936682084, 9092725, 3448148188, 1337, 3586256])
  t.same(await ids('mainnet'), [1, 8453, 42161, 10, 792703809, 8253038, 728126428, 1337, 3586256])
})

t.test('an invalid address given through a variable fails start-up naming chain and field', async (t) => {
  const env = {
    ...(await dummyEnvironment('mainnet', ['chains', 'chains.hub'])),
    BASE_DEPOSITORY_ADDRESS: '0x1234',
  }
  const error = await loadRegistry({ configDir, environment: 'mainnet', env }).then(
    () => undefined,
    (caught: unknown) => caught as ConfigError,
  )
  t.type(error, ConfigError)
  t.match(
    error?.message,
    "chain 8453 (base): protocol.v2.depository: contract '0x1234' is not a valid address on Base (8453)",
  )
})
