/**
 * Operating the intent service on the families beside EVM: `GET /readyz` follows the Solana
 * (LiteSVM JSON-RPC), Bitcoin (Esplora), Tron, Hyperliquid and Lighter devnets going away and coming
 * back, each through its plugin's probe, and calls to a plugin's own API URL (`plugin.esploraUrl`,
 * `plugin.apiUrl`) are counted as that chain's RPC calls. Each devnet part is reached through a
 * loopback TCP relay the test stops and restarts on the same port; the simulators stay up.
 */
import type { IntentsApi } from '@pontis/core'
import { silentLogger } from '@pontis/core'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  devnetEnvironment,
  HYPERLIQUID_DEVNET_CHAIN_ID as HYPERLIQUID,
  LIGHTER_DEVNET_CHAIN_ID as LIGHTER,
  SVM_DEVNET_CHAIN_ID,
  startDevnet,
  TRON_DEVNET_CHAIN_ID,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { localConfigWith, metricSample, startRelay, type TcpRelay } from './fixtures/operations.js'

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
// Anvil 31337 as well: the local prices are read from its feeds.
const devnet = await startDevnet({
  chains: [{ chainId: 31337, port: 0 }],
  svm: { port: 0, routesPort: 0 },
  bitcoin: { port: 0 },
  lighter: { port: 0 },
  hyperliquid: { port: 0 },
  tron: { port: 0, blockIntervalMs: 0 },
})
t.teardown(() => devnet.stop())
const { svm, bitcoin, lighter, hyperliquid, tron } = devnet
if (!svm || !bitcoin || !lighter || !hyperliquid || !tron)
  throw new Error('the devnet started without a family')

const relayTo = async (port: number): Promise<TcpRelay> => {
  const relay = await startRelay({ host: '127.0.0.1', port })
  t.teardown(() => relay.stop())
  return relay
}
const families: ReadonlyArray<{ name: string; chainId: number; relay: TcpRelay; head: boolean }> = [
  {
    name: 'Solana',
    chainId: SVM_DEVNET_CHAIN_ID,
    relay: await relayTo(Number(new URL(svm.rpcUrl).port)),
    head: true,
  },
  { name: 'Bitcoin', chainId: BITCOIN_DEVNET_CHAIN_ID, relay: await relayTo(bitcoin.port), head: true },
  { name: 'Tron', chainId: TRON_DEVNET_CHAIN_ID, relay: await relayTo(tron.port), head: true },
  { name: 'Hyperliquid', chainId: HYPERLIQUID, relay: await relayTo(hyperliquid.port), head: false },
  { name: 'Lighter', chainId: LIGHTER, relay: await relayTo(lighter.port), head: true },
]
const relayUrl = (chainId: number) =>
  `http://127.0.0.1:${families.find((family) => family.chainId === chainId)?.relay.port}`

// Bitcoin and Tron reach their APIs through the plugin option, not `rpc.url` (which stays the
// devnet's own URL and is never called): those calls are counted only if the adapter names them.
const configDir = await localConfigWith(t, [31337, ...families.map((family) => family.chainId)], (entry) => {
  const plugin = (entry.plugin ?? {}) as Record<string, unknown>
  if (entry.id === BITCOIN_DEVNET_CHAIN_ID)
    return { ...entry, plugin: { ...plugin, esploraUrl: relayUrl(entry.id) } }
  if (entry.id === TRON_DEVNET_CHAIN_ID)
    return { ...entry, plugin: { ...plugin, apiUrl: relayUrl(entry.id) } }
  return entry
})
const service = await startIntentsService({
  configDir,
  env: {
    ...devnetEnvironment(devnet),
    LOCAL_SVM_RPC_URL: relayUrl(SVM_DEVNET_CHAIN_ID),
    LOCAL_LIGHTER_API_URL: relayUrl(LIGHTER),
    LOCAL_HYPERLIQUID_API_URL: relayUrl(HYPERLIQUID),
    RATE_LIMITS: 'off',
    READINESS_TIMEOUT_MS: '1000',
  },
  port: 0,
  document: loaded,
  logger: silentLogger,
  // No background reads: between two scrapes, the only chain calls are the ones a test makes.
  workers: false,
})
t.teardown(() => service.close())

const scrape = async (t: Test): Promise<string> => {
  const res = await createTestClient(t, service.url, loaded.document).get('/metrics')
  t.equal(res.status, 200, 'the loopback scraper is answered')
  return res.text
}
const rpcCalls = (text: string, chainId: number, outcome: string) =>
  metricSample(text, 'pontis_rpc_calls_total', { chain: String(chainId), outcome })

t.test('/readyz probes every family with its own call', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const ready = await waitFor('/readyz to answer 200', () => client.get('/readyz'), {
    until: (res) => res.status === 200,
    describe: (res) => res?.body,
  })
  const body = ready.body as IntentsApi.ReadinessResponse
  for (const family of families) {
    const chain = body.chains.find((entry) => entry.chainId === family.chainId)
    t.equal(chain?.status, 'ok', `${family.name} answers its probe`)
    if (family.head) t.match(chain?.head, /^[0-9]+$/, `${family.name} reports its head`)
    else t.equal(chain?.head, undefined, `${family.name} has no head to report`)
  }
})

for (const family of families) {
  t.test(`/readyz follows the ${family.name} API going away and coming back`, async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    await waitFor('/readyz to answer 200', () => client.get('/readyz'), {
      until: (res) => res.status === 200,
    })
    const before = await scrape(t)
    await family.relay.stop()
    const stoppedAt = Date.now()
    const down = await waitFor('/readyz to answer 503', () => client.get('/readyz'), {
      until: (res) => res.status === 503,
    })
    t.ok(Date.now() - stoppedAt < 10_000, 'not ready within seconds of the API going away')
    const downBody = down.body as IntentsApi.ReadinessResponse
    t.equal(downBody.status, 'not_ready', 'the body says not_ready')
    for (const other of families) {
      t.equal(
        downBody.chains.find((chain) => chain.chainId === other.chainId)?.status,
        other === family ? 'failing' : 'ok',
        `${other.name} is ${other === family ? 'failing' : 'fine'}`,
      )
    }
    t.notMatch(JSON.stringify(downBody), String(family.relay.port), 'the API URL is never shown')
    const after = await scrape(t)
    t.ok(
      rpcCalls(after, family.chainId, 'error') > rpcCalls(before, family.chainId, 'error'),
      'the failed probe calls are counted as the chain’s RPC errors',
    )

    await family.relay.start()
    await waitFor('/readyz to answer 200 again', () => client.get('/readyz'), {
      until: (res) => res.status === 200,
    })
  })
}

t.test('calls to a plugin’s own API URL count as the chain’s RPC calls', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  for (const chainId of [BITCOIN_DEVNET_CHAIN_ID, TRON_DEVNET_CHAIN_ID]) {
    const before = await scrape(t)
    const unknown = await client.post('/transactions/index', { chainId, txHash: 'ab'.repeat(32) })
    t.ok([202, 404].includes(unknown.status), `chain ${chainId}: an unknown transaction is looked up`)
    const after = await scrape(t)
    t.ok(rpcCalls(after, chainId, 'ok') > rpcCalls(before, chainId, 'ok'), `chain ${chainId}: calls counted`)
    t.ok(
      metricSample(after, 'pontis_rpc_call_duration_seconds_count', { chain: String(chainId) }) >
        metricSample(before, 'pontis_rpc_call_duration_seconds_count', { chain: String(chainId) }),
      `chain ${chainId}: durations observed`,
    )
  }
})
