/**
 * `npm start` as a new user runs it: both services come up on the local environment, log their
 * URLs, serve their API reference pages, and stop cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startNpmStart } from './helpers/npm-start.js'
import { PROCESS_START_BOUND_MS, waitFor, within } from './helpers/wait.js'

// npm start, then the contract suite as its own process: each can take minutes on a loaded machine.
t.setTimeout(900_000)
const repoRoot = fileURLToPath(new URL('..', import.meta.url))

t.test('npm start serves both services and their documentation', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pontis-start-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  // Port 0 lets the OS pick free ports; the logged URLs say which.
  const stack = await startNpmStart(t, {
    cwd: repoRoot,
    env: {
      INTENTS_PORT: '0',
      HTTP_PORT: '0',
      DEVNET_PORTS: '0',
      RATE_LIMITS: 'off',
      PONTIS_DATA_DIR: dataDir,
      ENVIRONMENT: 'local',
      LOG_LEVEL: 'info',
      // Unset, as on a fresh machine: npm start makes one for the run and prints it.
      ADMIN_TOKEN: '',
    },
  })
  const { urls } = stack
  const output = stack.output()
  for (const base of [urls.intents, urls.oracle]) {
    const page = await fetch(`${base}/documentation`)
    t.equal(page.status, 200, `${base}/documentation`)
    t.match(await page.text(), 'swagger-ui-bundle.js')
    const document = await fetch(`${base}/documentation/openapi.json`)
    t.equal(((await document.json()) as { openapi: string }).openapi, '3.1.0')
    const typeSync = await fetch(`${base}/documentation/json`)
    t.equal(typeSync.status, 200, `${base}/documentation/json, where type-sync scripts fetch it`)
    t.equal(((await typeSync.json()) as { openapi: string }).openapi, '3.1.0')
  }
  const chains = await fetch(`${urls.intents}/chains`)
  t.equal(chains.status, 200)
  const rpcUrl = /devnet chain 31337\s+(http:\/\/[^\s"]+)/.exec(output)?.[1]
  t.ok(rpcUrl, 'the devnet chains were started and logged')
  const chainId = await fetch(rpcUrl as string, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  })
  t.equal(((await chainId.json()) as { result: string }).result, '0x7a69', 'chain A answers as 31337')
  const quote = await fetch(`${urls.intents}/quote/v2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      user: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
      originChainId: 31337,
      destinationChainId: 31338,
      originCurrency: '0x0000000000000000000000000000000000000000',
      destinationCurrency: '0x0000000000000000000000000000000000000000',
      amount: '100000000000000000',
      tradeType: 'EXACT_INPUT',
    }),
  })
  t.equal(quote.status, 200, 'a quote answers on the started devnet')
  // What a new user needs for the dashboard: its URL and the admin token made for this run.
  const adminToken = await waitFor(
    'npm start to print the dashboard sign-in',
    () => /dashboard sign-in: .*admin token (\S+)/.exec(stack.output())?.[1],
  )
  t.match(stack.output(), `dashboard       ${urls.intents}/dashboard`, 'npm start prints the dashboard URL')
  const dashboard = await fetch(`${urls.intents}/dashboard`)
  t.equal(dashboard.status, 200, 'the dashboard is served')
  t.match(await dashboard.text(), '/dashboard/assets/dashboard.js')
  const script = await fetch(`${urls.intents}/dashboard/assets/dashboard.js`)
  t.equal(script.status, 200, 'its script is built and served by npm start itself')
  const keys = await fetch(`${urls.intents}/admin/keys`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  t.equal(keys.status, 200, 'the printed admin token signs in')
  const lives = await fetch(`${urls.oracle}/lives/v1`)
  t.same(await lives.json(), { status: 'ok' })
  t.match(output, /devnet svm chain\s+http:\/\//, 'the SVM chain was started and logged')
  t.match(
    output,
    /devnet bitcoin \(regtest, Esplora API\)\s+http:\/\//,
    'the Bitcoin simulator was started and logged',
  )
  t.match(
    output,
    /devnet lighter \(venue simulator\)\s+http:\/\//,
    'the Lighter venue simulator was started and logged',
  )
  t.match(
    output,
    /devnet hyperliquid \(core API simulator\)\s+http:\/\//,
    'the Hyperliquid simulator was started',
  )
  t.match(output, /devnet tron \(full-node API simulator\)\s+http:\/\//, 'the Tron simulator was started')
  // All six VM families are served by the started deployment.
  const chainsList = (await (await fetch(`${urls.intents}/chains`)).json()) as {
    chains: Array<{ vmType: string }>
  }
  t.same([...new Set(chainsList.chains.map((chain) => chain.vmType))].sort(), [
    'bvm',
    'evm',
    'hypevm',
    'lvm',
    'svm',
    'tvm',
  ])
  // The contract suite, as an operator runs it against this deployment.
  const contract = spawn(
    process.execPath,
    ['packages/cli/bin/pontis.js', 'contract-test', '--url', urls.intents, '--oracle-url', urls.oracle],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let report = ''
  contract.stdout.on('data', (chunk: Buffer) => {
    report += chunk.toString()
  })
  contract.stderr.on('data', (chunk: Buffer) => {
    report += chunk.toString()
  })
  // A process of its own that runs some 250 checks: on a loaded machine it took over a minute.
  const [contractCode] = await within('npx pontis contract-test to exit', once(contract, 'exit'), {
    timeoutMs: 2 * PROCESS_START_BOUND_MS,
    lastSeen: () => `its output:\n${report.slice(-4000)}`,
  })
  t.equal(
    contractCode,
    0,
    `npx pontis contract-test passes against npm start:\n${report
      .split('\n')
      .filter((line) => line.includes('✗'))
      .slice(0, 10)
      .join('\n')}`,
  )
  const code = await within('npm start to exit after SIGTERM', stack.stop(), {
    lastSeen: () => `output:\n${stack.output().slice(-4000)}`,
  })
  t.equal(code, '0', 'SIGTERM stops both services cleanly')
})
