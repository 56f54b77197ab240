/**
 * The README's start command on a fresh clone: a copy of the tracked tree with no `.pontis/` (it is
 * git-ignored, so a clone never has one) runs `npm start` with its default data directory, and both
 * services must answer. Only the ports are set, to free ones, so that other tests can run beside it.
 */
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cp, mkdir, mkdtemp, rm, stat, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sourceModuleUrl } from '@pontis/core'
import t from 'tap'
import { stackUrls } from './helpers/npm-start.js'
import { within } from './helpers/wait.js'

const repoRoot = fileURLToPath(new URL('..', sourceModuleUrl(import.meta.url)))

/** Copies the files a clone would have (tracked, or new and not ignored); node_modules is linked, as `npm ci` would fill it. */
async function cloneTree(target: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((file) => file !== '')
  for (const file of files) {
    const exists = await stat(join(repoRoot, file)).then(
      () => true,
      () => false,
    )
    if (!exists) continue // deleted in the work tree, not yet committed
    await mkdir(dirname(join(target, file)), { recursive: true })
    await cp(join(repoRoot, file), join(target, file))
  }
  await symlink(join(repoRoot, 'node_modules'), join(target, 'node_modules'), 'dir')
}

t.test('npm start on a fresh clone (no .pontis/) serves both services', async (t) => {
  const clone = await mkdtemp(join(tmpdir(), 'pontis-clone-'))
  t.teardown(() => rm(clone, { recursive: true, force: true }))
  await cloneTree(clone)
  t.rejects(stat(join(clone, '.pontis')), 'the clone has no .pontis directory')

  const child = spawn('npm', ['start'], {
    cwd: clone,
    env: {
      ...process.env,
      INTENTS_PORT: '0',
      HTTP_PORT: '0',
      DEVNET_PORTS: '0',
      PONTIS_DATA_DIR: '',
      DATABASE_URL: '',
      LOG_LEVEL: 'info',
    },
    // Its own process group, so that npm, its shell and the service all receive the stop signal.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stopGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal)
    } catch {
      // already gone
    }
  }
  t.teardown(() => stopGroup('SIGKILL'))
  const exited = once(child, 'exit').then(([code, signal]) => String(signal ?? code))
  const { urls, output } = await stackUrls(child, exited)
  const chains = await fetch(`${urls.intents}/chains`)
  t.equal(chains.status, 200, 'the intent service answers GET /chains')
  const lives = await fetch(`${urls.oracle}/lives/v1`)
  t.same(await lives.json(), { status: 'ok' }, 'the oracle answers GET /lives/v1')
  t.ok((await stat(join(clone, '.pontis', 'data'))).isDirectory(), 'the default data directory was created')
  stopGroup('SIGTERM')
  await within('npm start to exit after SIGTERM', exited, {
    lastSeen: () => `output:\n${output().slice(-4000)}`,
  })
})
