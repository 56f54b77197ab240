/**
 * The repayment path is one setting for every family (`repayment.path` in the solver settings):
 * `depository` by default, `hub` with the oracles to ask. The hub path without an oracle stops
 * start-up with a line naming `repayment.oracles`; an unknown path names `repayment.path`.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, startupFailure } from '@pontis/core'
import t, { type Test } from 'tap'
import { REPO_CONFIG_DIR } from '../../../test/helpers/environments.js'
import { loadSolverSettings } from '../src/quote/settings.js'

async function configDirWith(t: Test, repayment: unknown) {
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-repayment-'))
  t.teardown(() => rm(configDir, { recursive: true, force: true }))
  await cp(REPO_CONFIG_DIR, configDir, { recursive: true })
  const file = join(configDir, 'solver.local.json')
  const settings = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
  if (repayment === undefined) delete settings.repayment
  else settings.repayment = repayment
  await writeFile(file, JSON.stringify(settings))
  return configDir
}

t.test('the local settings repay through the depository unless REPAYMENT_PATH says hub', async (t) => {
  const plain = await loadSolverSettings({ env: {}, environment: 'local', configDir: REPO_CONFIG_DIR })
  t.equal(plain.repayment?.path, 'depository')
  const hub = await loadSolverSettings({
    env: { REPAYMENT_PATH: 'hub', REPAYMENT_ORACLE_URL: 'http://127.0.0.1:3999' },
    environment: 'local',
    configDir: REPO_CONFIG_DIR,
  })
  t.same(hub.repayment, { path: 'hub', oracles: ['http://127.0.0.1:3999'] })
  const without = await loadSolverSettings({
    env: {},
    environment: 'local',
    configDir: await configDirWith(t, undefined),
  })
  t.equal(without.repayment, undefined, 'the member is optional (the depository path)')
})

t.test('the hub path without an oracle, or an unknown path, stops start-up naming the member', async (t) => {
  for (const [repayment, member] of [
    [{ path: 'hub' }, 'repayment.oracles'],
    [{ path: 'hub', oracles: [] }, 'repayment.oracles'],
    [{ path: 'bridge' }, 'repayment.path'],
  ] as const) {
    const configDir = await configDirWith(t, repayment)
    const error = await loadSolverSettings({ env: {}, environment: 'local', configDir }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.type(error, ConfigError, JSON.stringify(repayment))
    t.match(startupFailure(error), member, `${JSON.stringify(repayment)} names ${member}`)
  }
})
