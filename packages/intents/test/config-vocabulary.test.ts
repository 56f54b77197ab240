/**
 * The chain config's token list is `currencies` for every family. A file still using the former
 * `erc20Currencies` stops the service's start-up with one line that names the new key.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, silentLogger, startupFailure } from '@pontis/core'
import t from 'tap'
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
