/**
 * `npm start` as a new user runs it: both services come up on the local environment, log their
 * URLs, serve their API reference pages, and stop cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const repoRoot = fileURLToPath(new URL('..', import.meta.url))

t.test('npm start serves both services and their documentation', async (t) => {
  // Port 0 lets the OS pick free ports; the logged URLs say which.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, INTENTS_PORT: '0', HTTP_PORT: '0', ENVIRONMENT: 'local', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  let output = ''
  const urls = await new Promise<{ intents: string; oracle: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`services did not log their URLs:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const intents = /intent service\s+(http:\/\/[^\s"]+)/.exec(output)?.[1]
      const oracle = /oracle\s+(http:\/\/[^\s"]+)/.exec(output)?.[1]
      if (intents && oracle) {
        clearTimeout(timer)
        resolve({ intents, oracle })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => reject(new Error(`start exited with ${code}:\n${output}`)))
  })
  for (const base of [urls.intents, urls.oracle]) {
    const page = await fetch(`${base}/documentation`)
    t.equal(page.status, 200, `${base}/documentation`)
    t.match(await page.text(), 'swagger-ui-bundle.js')
    const document = await fetch(`${base}/documentation/openapi.json`)
    t.equal(((await document.json()) as { openapi: string }).openapi, '3.1.0')
  }
  const chains = await fetch(`${urls.intents}/chains`)
  t.equal(chains.status, 200)
  const lives = await fetch(`${urls.oracle}/lives/v1`)
  t.same(await lives.json(), { status: 'ok' })
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'SIGTERM stops both services cleanly')
})
