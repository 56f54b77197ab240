/**
 * The real-network environments (`testnet`, `mainnet`) list every family and load through the loaders
 * the intent service uses (core's chain config, the plugin registry with each plugin's schema, the
 * solver settings with their key checks, the prices), given a dummy value for every required
 * variable the files themselves name; without any one of them start-up fails with one line naming it.
 */

import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadRegistry, type Registry, silentLogger, startupFailure } from '@pontis/core'
import t from 'tap'
import { loadPriceSource } from '../../packages/intents/src/quote/prices.js'
import { loadSolverSettings } from '../../packages/intents/src/quote/settings.js'
import { dummyEnvironment, type EnvironmentFile, placeholderUses } from '../helpers/dummy-environment.js'
import { REPO_CONFIG_DIR } from '../helpers/environments.js'

const configDir = REPO_CONFIG_DIR

/** Chain id → family, per environment: Relay's ids where it lists the network (see the files' $comment). */
const EXPECTED: Record<string, Array<[number, string, string]>> = {
  testnet: [
    [11155111, 'evm', 'sepolia'],
    [84532, 'evm', 'base-sepolia'],
    [1936682084, 'svm', 'solana-devnet'],
    [9092725, 'bvm', 'bitcoin-testnet4'],
    [3448148188, 'tvm', 'tron-nile'],
    [1337, 'hypevm', 'hyperliquid-testnet'],
    [3586256, 'lvm', 'lighter-testnet'],
  ],
  mainnet: [
    [1, 'evm', 'ethereum'],
    [8453, 'evm', 'base'],
    [42161, 'evm', 'arbitrum'],
    [10, 'evm', 'optimism'],
    [792703809, 'svm', 'solana'],
    [8253038, 'bvm', 'bitcoin'],
    [728126428, 'tvm', 'tron'],
    [1337, 'hypevm', 'hyperliquid'],
    [3586256, 'lvm', 'lighter'],
  ],
}

const PLUGIN_OF: Record<string, string> = {
  evm: '@pontis/plugin-evm',
  svm: '@pontis/plugin-svm',
  bvm: '@pontis/plugin-bitcoin',
  tvm: '@pontis/plugin-tron',
  hypevm: '@pontis/plugin-hyperliquid',
  lvm: '@pontis/plugin-lighter',
}

/** Public token constants the files carry as defaults: each checked against the published value. */
const TOKENS: Record<string, Array<[number, string, string, number]>> = {
  testnet: [
    [11155111, 'usdc', '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', 6],
    [84532, 'usdc', '0x036CbD53842c5426634e7929541eC2318f3dCF7e', 6],
    [1936682084, 'usdc', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', 6],
    [1936682084, 'wsol', 'So11111111111111111111111111111111111111112', 9],
    [3448148188, 'usdt', 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', 6],
  ],
  mainnet: [
    [1, 'usdc', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 6],
    [8453, 'usdc', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 6],
    [42161, 'usdc', '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 6],
    [10, 'usdc', '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', 6],
    [792703809, 'usdc', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 6],
    [792703809, 'wsol', 'So11111111111111111111111111111111111111112', 9],
    [728126428, 'usdt', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 6],
    [1337, 'usdc', '0x6d1e7cde53ba9467b783cb7c530ce054', 8],
  ],
}

async function loadAll(environment: string, env: Record<string, string | undefined>) {
  const registry = await loadRegistry({ configDir, environment, env, logger: silentLogger })
  try {
    const settings = await loadSolverSettings({ configDir, environment, env, registry })
    const prices = await loadPriceSource({ configDir, environment, env, registry })
    return { registry, settings, prices }
  } catch (error) {
    await registry.close()
    throw error
  }
}

/** Loads one file with its loader; the chains files through the registry. */
function loaderOf(file: EnvironmentFile, environment: string, registry: Registry) {
  return (env: Record<string, string | undefined>): Promise<unknown> => {
    switch (file) {
      case 'chains':
      case 'chains.hub':
        return loadRegistry({ configDir, environment, env, logger: silentLogger }).then((loaded) =>
          loaded.close(),
        )
      case 'solver':
        return loadSolverSettings({ configDir, environment, env, registry })
      default:
        return loadPriceSource({ configDir, environment, env, registry })
    }
  }
}

for (const environment of ['testnet', 'mainnet']) {
  t.test(`${environment}: every family loads with a value for each variable the files name`, async (t) => {
    const env = await dummyEnvironment(environment)
    t.ok(Object.keys(env).length > 20, `${Object.keys(env).length} required variables`)
    const { registry, settings, prices } = await loadAll(environment, env)
    t.teardown(() => registry.close())

    t.same(
      registry.chains().map((chain) => [chain.id, chain.record.vmType, chain.record.name]),
      EXPECTED[environment],
    )
    t.same(
      [...new Set(registry.chains().map((chain) => chain.record.vmType))].sort(),
      Object.keys(PLUGIN_OF).sort(),
      'all six families',
    )
    for (const chain of registry.chains()) {
      t.equal(chain.plugin.name, PLUGIN_OF[chain.record.vmType], `${chain.record.name}: its family's plugin`)
      t.match(
        chain.entry.rpc.url,
        /^https:\/\/rpc\.invalid\//,
        `${chain.record.name}: endpoint from a variable`,
      )
      t.equal(chain.entry.protocol?.v2?.chainId, chain.record.name)
      // Each depository came from a variable and passed the family's address rules.
      const depository = chain.entry.protocol?.v2?.depository ?? ''
      t.equal(chain.adapter.identity.isValidAddress(depository), true, `${chain.record.name}: depository`)
      // Every currency is priced, and native currencies are the family's own.
      t.equal(chain.entry.currency.address, chain.adapter.identity.nativeCurrencyId)
      for (const currency of [chain.entry.currency, ...(chain.entry.currencies ?? [])]) {
        t.ok((await prices.usdPrice(currency)) > 0n, `${chain.record.name}: ${currency.id} priced`)
      }
    }
    // The plugins' schemas ran: their defaults are in place, and each network's own options are set.
    const byVm = (vmType: string) => registry.chains().find((chain) => chain.record.vmType === vmType)
    const options = (vmType: string) => byVm(vmType)?.entry.plugin as Record<string, unknown> | undefined
    t.same(
      [options('bvm')?.network, options('bvm')?.confirmations],
      [environment === 'testnet' ? 'testnet' : 'bitcoin', 1],
    )
    t.equal(options('tvm')?.slowConfirmations, 19)
    t.equal(options('hypevm')?.hyperliquidChain, environment === 'testnet' ? 'Testnet' : 'Mainnet')
    t.same(options('lvm')?.assets, { '0': { assetIndex: 3, decimals: 6, routeType: 0 } })
    t.equal(byVm('lvm')?.record.disabled, true, 'Lighter is listed but disabled (simulator signing only)')
    t.equal(options('lvm')?.network, environment, 'Lighter names the real venue')
    t.equal(options('svm')?.readCacheSeconds, 2)

    for (const [chainId, id, address, decimals] of TOKENS[environment] ?? []) {
      const chain = registry.chain(chainId)
      const token = (chain.entry.currencies ?? []).find((currency) => currency.id === id)
      t.same([token?.address, token?.decimals], [address, decimals], `${chain.record.name} ${id}`)
    }

    t.same(
      Object.keys(settings.solver.familyKeys ?? {}).sort(),
      ['bvm', 'hypevm', 'lvm', 'svm', 'tvm'],
      'every non-EVM family has its own keys',
    )
    t.match(registry.hub()?.oracleContract, /^0x[0-9a-f]{40}$/)
  })

  t.test(`${environment}: each missing variable stops start-up with one line naming it`, async (t) => {
    const env = await dummyEnvironment(environment)
    const { registry } = await loadAll(environment, env)
    t.teardown(() => registry.close())
    const uses = await placeholderUses(environment)
    for (const [name, [first]] of uses) {
      const file = first?.file ?? 'chains'
      const error = await loaderOf(
        file,
        environment,
        registry,
      )({ ...env, [name]: undefined }).then(
        () => undefined,
        (caught: unknown) => caught,
      )
      t.type(error, ConfigError, `${name} (${file}): refused`)
      const configError = error as ConfigError
      t.same(configError.missingVariables, [name], `${name}: the only one named missing`)
      // What the service prints when it cannot start.
      const line = startupFailure(configError)
      t.notMatch(line, /\n/, `${name}: one line`)
      t.match(line, name, `${name}: named in ${JSON.stringify(line)}`)
    }
  })

  t.test(`${environment}: a variable with the wrong family's address fails naming the chain`, async (t) => {
    const env = await dummyEnvironment(environment)
    const variable = environment === 'testnet' ? 'SOLANA_DEVNET_VAULT_ADDRESS' : 'SOLANA_VAULT_ADDRESS'
    t.ok(variable in env, `${variable} is required`)
    const error = await loadRegistry({
      configDir,
      environment,
      env: { ...env, [variable]: `0x${'12'.repeat(20)}` },
      logger: silentLogger,
    }).then(
      (loaded) => loaded.close(),
      (caught: unknown) => caught as ConfigError,
    )
    t.type(error, ConfigError)
    t.match(String((error as ConfigError)?.message), /protocol\.v2\.depository/)
    t.match(String((error as ConfigError)?.message), environment === 'testnet' ? /1936682084/ : /792703809/)
  })
}

for (const environment of ['testnet', 'mainnet']) {
  t.test(`${environment}: enabling Lighter stops start-up with one line saying why`, async (t) => {
    const env = await dummyEnvironment(environment)
    const copy = await mkdtemp(join(tmpdir(), 'pontis-lighter-enabled-'))
    t.teardown(() => rm(copy, { recursive: true, force: true }))
    await cp(configDir, copy, { recursive: true })
    const chainsFile = join(copy, `chains.${environment}.json`)
    const chains = JSON.parse(await readFile(chainsFile, 'utf8')) as {
      chains: Array<{ vmType: string; disabled?: boolean }>
    }
    for (const chain of chains.chains) if (chain.vmType === 'lvm') chain.disabled = false
    await writeFile(chainsFile, JSON.stringify(chains))

    const error = await loadRegistry({ configDir: copy, environment, env, logger: silentLogger }).then(
      (loaded) => loaded.close(),
      (caught: unknown) => caught,
    )
    t.type(error, ConfigError, 'refused')
    const line = startupFailure(error as ConfigError)
    t.notMatch(line, /\n/, 'one line')
    t.match(line, `Lighter ${environment} cannot be enabled`, 'says what')
    t.match(line, /ECgFp5 Schnorr over Poseidon2/, 'says what is missing')
    t.match(line, /"disabled": true/, 'says what to do')
  })
}

t.test('the README names every variable of both real-network environments', async (t) => {
  const readme = await readFile(join(configDir, '..', 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('**Real networks.**'))
  for (const environment of ['testnet', 'mainnet']) {
    for (const name of (await placeholderUses(environment)).keys()) {
      // EVM chains are listed as prefix + suffix (`SEPOLIA_` + `RPC_URL`).
      const [, prefix = '', suffix = ''] = /^(.*?_)(RPC_URL|DEPOSITORY_ADDRESS)$/.exec(name) ?? []
      const named =
        section.includes(`\`${name}\``) ||
        (section.includes(`\`${prefix}\``) && section.includes(`\`${suffix}\``))
      t.ok(named, `${environment}: ${name}`)
    }
  }
})
