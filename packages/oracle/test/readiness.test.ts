/**
 * The oracle's readiness route: 200 while every chain's node (real anvil) answers, with each head,
 * and 503 with the failing chains named within seconds of the nodes stopping. `/lives/v1` stays 200.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadRegistry, type OracleApi, silentLogger } from '@pontis/core'
import { devnetEnvironment, startDevnet } from '@pontis/devnet'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { REPO_CONFIG_DIR } from '../../../test/helpers/environments.js'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  createOracleApp,
  createSigner,
  DEFAULT_ORACLE_APP_CONFIG,
  ORACLE_DOCUMENT_PATH,
} from '../src/index.js'

const loaded = await loadOpenApiDocument(ORACLE_DOCUMENT_PATH)
const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
let devnetRunning = true
t.teardown(() => (devnetRunning ? devnet.stop() : undefined))
// The devnet's two EVM chains only: the other families' chains are not started here.
const configDir = await mkdtemp(join(tmpdir(), 'pontis-oracle-ready-'))
t.teardown(() => rm(configDir, { recursive: true, force: true }))
await cp(REPO_CONFIG_DIR, configDir, { recursive: true })
const chainsFile = join(configDir, 'chains.local.json')
const chainsConfig = JSON.parse(await readFile(chainsFile, 'utf8')) as { chains: Array<{ id: number }> }
chainsConfig.chains = chainsConfig.chains.filter((chain) => chain.id === 31337 || chain.id === 31338)
await writeFile(chainsFile, JSON.stringify(chainsConfig))

const registry = await loadRegistry({ env: devnetEnvironment(devnet), configDir, logger: silentLogger })
t.teardown(() => registry.close())
const signer = await createSigner({
  module: 'raw-private-key',
  privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
})
const app = await createOracleApp({
  registry,
  signer,
  logger: silentLogger,
  config: { ...DEFAULT_ORACLE_APP_CONFIG, readinessTimeoutMs: 1000 },
  document: loaded,
})
const server = await listen(app, { port: 0 })
t.teardown(() => server.close())

t.test('/readyz follows the chain nodes; /lives/v1 does not', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const ready = await client.get('/readyz')
  t.equal(ready.status, 200)
  const body = ready.body as OracleApi.ReadinessResponse
  t.equal(body.status, 'ready')
  t.same(
    body.chains.map((chain) => [chain.chainId, chain.status]),
    [
      [31337, 'ok'],
      [31338, 'ok'],
    ],
  )
  t.ok(
    body.chains.every((chain) => /^[0-9]+$/.test(chain.head ?? '')),
    'each head is reported',
  )

  await devnet.stop()
  devnetRunning = false
  const stoppedAt = Date.now()
  const down = await waitFor('/readyz to answer 503', () => client.get('/readyz'), {
    until: (res) => res.status === 503,
  })
  t.ok(Date.now() - stoppedAt < 10_000, 'not ready within seconds of the nodes stopping')
  const downBody = down.body as OracleApi.ReadinessResponse
  t.equal(downBody.status, 'not_ready')
  t.ok(downBody.chains.every((chain) => chain.status === 'failing' && chain.error !== undefined))
  t.equal((await client.get('/lives/v1')).status, 200, 'still live')
  // Several probes within the cache period share one round: the bodies are the same object's.
  const [first, second] = await Promise.all([client.get('/readyz'), client.get('/readyz')])
  t.same(first.body, second.body, 'probes within the cache period share one answer')
})
