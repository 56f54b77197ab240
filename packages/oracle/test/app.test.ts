import { createLogger, loadRegistry, silentLogger } from '@pontis/core'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { createOracleApp, ORACLE_DOCUMENT_PATH, resolveOraclePort, resolveSigner } from '../src/index.js'

const loaded = await loadOpenApiDocument(ORACLE_DOCUMENT_PATH)
const registry = await loadRegistry({ env: {}, logger: silentLogger })
// Anvil's published account #0: a test key with a known address.
const TEST_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const TEST_SIGNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const signer = resolveSigner({ ECDSA_PRIVATE_KEY: TEST_KEY }, 'local', silentLogger)
const { koa, operationIds } = await createOracleApp({
  registry,
  signer,
  logger: silentLogger,
  document: loaded,
})
const server = await listen(koa, { port: 0 })
t.teardown(() => server.close())

type ErrorAnswer = { message: string; errorCode: string }

t.test('every operation of the document is routed', async (t) => {
  t.same([...operationIds].sort(), [
    'attestDepositoryDeposits',
    'attestDepositoryWithdrawals',
    'attestSolverFills',
    'attestSolverRefunds',
    'attestWithdrawalInitiated',
    'attestWithdrawalInitiation',
    'getDocumentation',
    'getLives',
    'getOracleChains',
  ])
})

t.test('/lives/v1 and /chains/v1', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const lives = await client.get('/lives/v1')
  t.equal(lives.status, 200)
  t.same(lives.body, { status: 'ok' })
  const chains = await client.get('/chains/v1')
  t.equal(chains.status, 200)
  const body = chains.body as {
    chains: Array<{
      id: number
      vmType: string
      depository?: string
      finality: { slowConfirmations: number }
    }>
    hub: { chainId: number; domain: { verifyingContract: string; chainId: number } }
    signer: string
  }
  t.same(
    body.chains.map((chain) => [chain.id, chain.vmType]),
    [
      [31337, 'evm'],
      [31338, 'evm'],
    ],
  )
  t.equal(body.chains[0]?.depository, registry.chain(31337).record.protocol?.v2?.depository)
  t.equal(body.chains[0]?.finality.slowConfirmations, 1, 'finality comes from the chain adapter')
  t.equal(body.signer, TEST_SIGNER, 'the signer address is derived from ECDSA_PRIVATE_KEY')
  t.equal(body.hub.domain.chainId, body.hub.chainId)
  t.equal(body.hub.domain.verifyingContract, registry.hub()?.oracleContract)
})

t.test('attestation routes validate their bodies and answer 501 until built', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const good = await client.post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: `0x${'12'.repeat(32)}`,
    mode: 'fast',
  })
  t.equal(good.status, 501)
  t.equal((good.body as ErrorAnswer).errorCode, 'NOT_IMPLEMENTED')
  const badMode = await client.post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: `0x${'12'.repeat(32)}`,
    mode: 'turbo',
  })
  t.equal(badMode.status, 400)
  t.match((badMode.body as ErrorAnswer).message, '`mode` (body)')
  const missing = await client.post('/attestations/solver-fills/v1', {})
  t.equal(missing.status, 400)
  t.match((missing.body as ErrorAnswer).message, '`order` (body) is required')
  const docs = await client.get('/documentation')
  t.equal(docs.status, 200)
  t.match(docs.headers['content-type'], 'text/html')
})

t.test('port: HTTP_PORT, then PORT, then 3000', async (t) => {
  t.equal(resolveOraclePort({}), 3000)
  t.equal(resolveOraclePort({ PORT: '3100' }), 3100)
  t.equal(resolveOraclePort({ HTTP_PORT: '3200', PORT: '3100' }), 3200)
  t.equal(resolveOraclePort({ HTTP_PORT: '', PORT: '3100' }), 3100)
  t.throws(() => resolveOraclePort({ HTTP_PORT: 'x' }), /HTTP_PORT must be a port number/)
  t.throws(() => resolveOraclePort({ PORT: '-1' }), /PORT must be a port number/)
})

t.test('signer: raw private key, a development key only on local, and the key never logged', async (t) => {
  const lines: string[] = []
  const logger = createLogger('oracle', { write: (line: string) => lines.push(line) })
  t.equal(resolveSigner({ ECDSA_PRIVATE_KEY: TEST_KEY.slice(2) }, 'testnet', logger).address, TEST_SIGNER)
  const local = resolveSigner({}, 'local', logger)
  t.match(local.address, /^0x[0-9a-fA-F]{40}$/)
  t.match(lines.join('\n'), 'ECDSA_PRIVATE_KEY is not set', 'the fallback is announced')
  t.throws(() => resolveSigner({}, 'mainnet', logger), /ECDSA_PRIVATE_KEY is required/)
  t.throws(
    () => resolveSigner({ ECDSA_PRIVATE_KEY: '0x1234' }, 'local', logger),
    /ECDSA_PRIVATE_KEY must be 32 bytes/,
  )
  t.throws(
    () => resolveSigner({ SIGNING_MODULE: 'vault', ECDSA_PRIVATE_KEY: TEST_KEY }, 'local', logger),
    /SIGNING_MODULE "vault"/,
  )
  t.notMatch(lines.join('\n'), TEST_KEY.slice(2, 20), 'no key material in the log')
})
