/**
 * The chain config's token list is `currencies` for every family. A file still using the former
 * `erc20Currencies` stops the service's start-up with one line that names the new key.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, silentLogger, startupFailure } from '@pontis/core'
import t, { type Test } from 'tap'
import { REPO_CONFIG_DIR } from '../../../test/helpers/environments.js'
import { createIntentsRuntime } from '../src/index.js'

t.test('the former erc20Currencies key stops start-up naming currencies', async (t) => {
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-old-key-'))
  t.teardown(() => rm(configDir, { recursive: true, force: true }))
  await cp(REPO_CONFIG_DIR, configDir, { recursive: true })
  const file = join(configDir, 'chains.local.json')
  const config = JSON.parse(await readFile(file, 'utf8')) as { chains: Array<Record<string, unknown>> }
  const [first] = config.chains
  if (!first?.currencies) throw new Error('the local config lists tokens under currencies')
  first.erc20Currencies = first.currencies
  delete first.currencies
  await writeFile(file, JSON.stringify(config))

  const error = await createIntentsRuntime({ env: {}, configDir, logger: silentLogger }).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  t.type(error, ConfigError)
  const line = startupFailure(error)
  t.match(
    line,
    /chains\.local\.json: chains\[0\]\.erc20Currencies: 'erc20Currencies' was renamed to 'currencies'/,
  )
  t.notMatch(line, /\n/, 'one line')
})

/** Start-up with `edit` applied to the local chains file: the ConfigError's one-line message. */
async function startupLine(t: Test, edit: (chains: Array<Record<string, unknown>>) => void): Promise<string> {
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-vocabulary-'))
  t.teardown(() => rm(configDir, { recursive: true, force: true }))
  await cp(REPO_CONFIG_DIR, configDir, { recursive: true })
  const file = join(configDir, 'chains.local.json')
  const config = JSON.parse(await readFile(file, 'utf8')) as { chains: Array<Record<string, unknown>> }
  edit(config.chains)
  await writeFile(file, JSON.stringify(config))
  const error = await createIntentsRuntime({ env: {}, configDir, logger: silentLogger }).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  t.type(error, ConfigError)
  return startupFailure(error)
}

t.test('finality and indexer settings are checked at start-up, for every family', async (t) => {
  const evm = (chains: Array<Record<string, unknown>>) => chains.find((chain) => chain.vmType === 'evm')!
  t.match(
    await startupLine(t, (chains) => {
      evm(chains).finality = { highValue: [{ currency: 'not-a-token', above: '1000', confirmations: 3 }] }
    }),
    /finality\.highValue\[0\]\.currency: currency 'not-a-token' is not a valid currency/,
    'a high-value currency the family refuses names its path',
  )
  t.match(
    await startupLine(t, (chains) => {
      evm(chains).finality = {
        highValue: [
          { currency: '0x0000000000000000000000000000000000000000', above: '-1', confirmations: 3 },
        ],
      }
    }),
    /finality\/highValue\/0\/above|finality\.highValue\[0\]\.above/,
    'an amount that is not a decimal of smallest units',
  )
  t.match(
    await startupLine(t, (chains) => {
      evm(chains).finality = { confirmations: 0 }
    }),
    /finality/,
    'at least one confirmation',
  )
  t.match(
    await startupLine(t, (chains) => {
      evm(chains).indexer = { startBlock: 'latest' }
    }),
    /indexer/,
    'a start block is a height',
  )
  const withoutStartCursor = 'hypevm'
  t.match(
    await startupLine(t, (chains) => {
      const chain = chains.find((entry) => entry.vmType === withoutStartCursor)!
      chain.indexer = { startBlock: '100' }
    }),
    /indexer\.startBlock: the hypevm plugin cannot start its deposit scan at a height/,
    'a family whose scan cannot start at a height refuses a start block',
  )
  // A venue counts no confirmation past execution: a deeper rule would leave every deposit waiting.
  for (const vmType of ['lvm', 'hypevm']) {
    t.match(
      await startupLine(t, (chains) => {
        const chain = chains.find((entry) => entry.vmType === vmType)!
        chain.finality = {
          highValue: [
            { currency: (chain.currency as { address: string }).address, above: '1000', confirmations: 3 },
          ],
        }
      }),
      new RegExp(
        `finality\\.highValue\\[0\\]\\.confirmations: the ${vmType} plugin's transactions are final once executed`,
      ),
      `a ${vmType} chain refuses a high-value rule deeper than execution`,
    )
    t.match(
      await startupLine(t, (chains) => {
        const chain = chains.find((entry) => entry.vmType === vmType)!
        chain.finality = { confirmations: 2 }
      }),
      new RegExp(`finality\\.confirmations: the ${vmType} plugin's transactions are final once executed`),
      `a ${vmType} chain refuses more than one confirmation`,
    )
  }
})
