/**
 * Scale-out run: two API-only intent-service processes and one worker process (indexer, solver,
 * webhook delivery) on one PostgreSQL, the API processes behind a round-robin proxy on loopback.
 * Measures quote throughput through the proxy (beside one instance alone), then drives real
 * deposits on the devnet through the proxy and proves that no request was filled twice.
 *
 *   npx tsx scripts/bench/scale-out.ts [--duration 10] [--connections 10] [--deposits 20]
 *
 * Needs the PostgreSQL the tests use (`TEST_DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test);
 * everything goes into a fresh schema, dropped at the end. Exits 1 when a request was not filled
 * exactly once or a measured request failed.
 */

import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { IntentsApi } from '@pontis/core'
import { devnetEnvironment, USERS } from '@pontis/devnet'
import pg from 'pg'
import { type Address, createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { type ServerChild, sampleProcess, spawnServer, stopAllServers } from './children.js'
import { type Measurement, measure } from './measure.js'
import { type RoundRobinProxy, startRoundRobinProxy } from './profile/round-robin.js'
import { startBenchDevnet } from './profile/setup.js'
import { QUOTE_BODY } from './targets.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const NATIVE = '0x0000000000000000000000000000000000000000'
const FINAL = new Set(['success', 'failure', 'refund'])
const log = (message: string) => process.stderr.write(`${message}\n`)

function startService(name: string, env: NodeJS.ProcessEnv): Promise<ServerChild> {
  return spawnServer({
    name,
    args: ['packages/intents/src/main.ts'],
    cwd: repoRoot,
    env,
    urls: { intents: /listening on (http:\/\/[^\s"]+)/ },
    startTimeoutMs: 120_000,
  })
}

/** Pids of every process whose command name is `name` (Linux /proc): the PostgreSQL server's, which is no child of this run. */
async function processesNamed(name: string): Promise<number[]> {
  const pids: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name) pids.push(Number(entry))
  }
  return pids
}

/** CPU milliseconds of `pids` so far, summed; processes that ended count 0. */
async function cpuMsOf(pids: readonly number[]): Promise<number> {
  const samples = await Promise.all(
    pids.map((pid) =>
      sampleProcess(pid).then(
        (sample) => sample.cpuMs,
        () => 0,
      ),
    ),
  )
  return samples.reduce((sum, ms) => sum + ms, 0)
}

async function post<T>(base: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text) as T
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
}

interface Deposit {
  readonly requestId: string
  readonly recipient: Address
  readonly out: bigint
  readonly confirmedAt: number
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      deposits: { type: 'string' },
    },
    strict: true,
  })
  const durationSeconds = Number(values.duration ?? 10)
  const connections = Number(values.connections ?? 10)
  const depositCount = Number(values.deposits ?? 20)
  const schema = `bench_scale_${process.pid}_${Date.now()}`
  const devnet = await startBenchDevnet()
  let proxy: RoundRobinProxy | undefined
  let failed = false
  try {
    const [chainA, chainB] = devnet.chains
    if (!chainA || !chainB) throw new Error('the devnet has no two chains')
    const { DEVNET: _devnet, ...parentEnv } = process.env
    const env: NodeJS.ProcessEnv = {
      ...parentEnv,
      ...devnetEnvironment(devnet),
      INTENTS_PORT: '0',
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      RATE_LIMITS: 'off',
      LOG_LEVEL: 'info',
      SOLVER_LEASE_MS: '3000',
    }
    log(`starting the worker, then two API instances (schema ${schema}) ...`)
    // The worker first, so migrations run once.
    const worker = await startService('worker', env)
    const [apiA, apiB] = await Promise.all([
      startService('api A', { ...env, PONTIS_WORKERS: 'off' }),
      startService('api B', { ...env, PONTIS_WORKERS: 'off' }),
    ])
    const apiUrls = [apiA.urls.intents!, apiB.urls.intents!]
    proxy = await startRoundRobinProxy(apiUrls)
    const pids = [apiA.pid, apiB.pid, worker.pid]

    // 1. Quote throughput: one instance alone, then both behind the proxy.
    const quoteLoad = (url: string, seconds: number) =>
      measure({
        url: `${url}/quote/v2`,
        method: 'POST',
        body: QUOTE_BODY,
        connections,
        durationSeconds: seconds,
        pids,
      })
    const runs: Array<[string, Measurement, number]> = []
    for (const [label, url] of [
      ['one instance (api A, direct)', apiUrls[0]!],
      ['two instances (round-robin proxy)', proxy.url],
    ] as const) {
      log(`${label}: warm-up 2 s, then ${durationSeconds} s at ${connections} connections`)
      await quoteLoad(url, 2)
      // PostgreSQL's CPU is not the services' and would otherwise count as "other".
      const postgres = await processesNamed('postgres')
      const postgresBefore = await cpuMsOf(postgres)
      const wallStart = performance.now()
      const measured = await quoteLoad(url, durationSeconds)
      const postgresCores = ((await cpuMsOf(postgres)) - postgresBefore) / (performance.now() - wallStart)
      runs.push([label, measured, postgresCores])
    }
    for (const [, m] of runs) if (m.errors + m.timeouts + m.non2xx > 0) failed = true

    // 2. Real deposits through the proxy; every deposit is reported twice (the proxy sends the two
    //    reports to different instances), as racing clients would.
    log(`${depositCount} deposits through the proxy ...`)
    const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) })
    const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) })
    const recipients = USERS.map((user) => user.address as Address)
    const before = await Promise.all(recipients.map((address) => clientB.getBalance({ address })))
    const started = performance.now()
    const perUser = USERS.map((_user, userIndex) =>
      Array.from({ length: depositCount }, (_, index) => index).filter(
        (index) => index % USERS.length === userIndex,
      ),
    )
    const deposits: Deposit[] = []
    await Promise.all(
      USERS.map(async (user, userIndex) => {
        const wallet = createWalletClient({
          account: privateKeyToAccount(user.privateKey),
          chain: chainA.chain,
          transport: http(chainA.rpcUrl),
        })
        for (const index of perUser[userIndex]!) {
          const recipient = recipients[(userIndex + 1) % recipients.length]!
          const quote = await post<IntentsApi.QuoteResponse>(proxy!.url, '/quote/v2', {
            user: user.address,
            recipient,
            originChainId: chainA.chainId,
            destinationChainId: chainB.chainId,
            originCurrency: NATIVE,
            destinationCurrency: NATIVE,
            amount: (10_000_000_000_000_000n + BigInt(index) * 1_000_000_000n).toString(),
            tradeType: 'EXACT_INPUT',
          })
          const data = quote.steps[0]!.items[0]!.data as IntentsApi.EvmTransactionData
          const hash = await wallet.sendTransaction({
            to: data.to as Address,
            data: data.data as Hex,
            value: BigInt(data.value),
          })
          await clientA.waitForTransactionReceipt({ hash })
          await Promise.all([
            post(proxy!.url, '/transactions/index', { txHash: hash, chainId: chainA.chainId }),
            post(proxy!.url, '/transactions/index', { txHash: hash, chainId: chainA.chainId }),
          ])
          deposits.push({
            requestId: quote.steps[0]!.requestId as string,
            recipient,
            out: BigInt(quote.details.currencyOut.amount),
            confirmedAt: performance.now(),
          })
        }
      }),
    )
    const depositedAt = performance.now()
    const finished = new Map<string, { record: IntentsApi.StatusRecordV3; at: number }>()
    const deadline = Date.now() + 120_000
    while (Date.now() < deadline && finished.size < deposits.length) {
      for (const { requestId } of deposits) {
        if (finished.has(requestId)) continue
        const response = await fetch(`${proxy.url}/intents/status/v3?requestId=${requestId}`)
        const record = (await response.json()) as IntentsApi.StatusRecordV3
        if (FINAL.has(record.status)) finished.set(requestId, { record, at: performance.now() })
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const allDone = Math.max(...[...finished.values()].map((entry) => entry.at))
    // Let any late duplicate land before counting.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const after = await Promise.all(recipients.map((address) => clientB.getBalance({ address })))

    const db = new pg.Client({ connectionString: DATABASE_URL })
    await db.connect()
    const fills = await db.query<{ request_id: string; jobs: number; transactions: number }>(
      `SELECT request_id, count(*)::int AS jobs, count(DISTINCT transaction_id)::int AS transactions
         FROM "${schema}".solver_jobs WHERE kind = 'fill' GROUP BY request_id`,
    )
    await db.end()
    const fillsByRequest = new Map(fills.rows.map((row) => [row.request_id, row]))
    const problems: string[] = []
    for (const { requestId } of deposits) {
      const entry = finished.get(requestId)
      const fill = fillsByRequest.get(requestId)
      if (entry?.record.status !== 'success')
        problems.push(`${requestId}: status ${entry?.record.status ?? 'unfinished'}`)
      if (entry && entry.record.txHashes.length !== 1)
        problems.push(`${requestId}: ${entry.record.txHashes.length} fill transactions in its status`)
      if (fill?.jobs !== 1 || fill.transactions !== 1)
        problems.push(
          `${requestId}: ${fill?.jobs ?? 0} fill jobs, ${fill?.transactions ?? 0} fill transactions`,
        )
    }
    const strayFills = fills.rows.filter(
      (row) => !deposits.some((deposit) => deposit.requestId === row.request_id),
    )
    for (const row of strayFills) problems.push(`${row.request_id}: filled without a deposit of this run`)
    for (const [index, address] of recipients.entries()) {
      const expected = deposits
        .filter((deposit) => deposit.recipient === address)
        .reduce((sum, deposit) => sum + deposit.out, 0n)
      const received = after[index]! - before[index]!
      if (received !== expected) problems.push(`${address} received ${received}, quoted ${expected}`)
    }
    if (problems.length > 0) failed = true

    const fillLatencies = deposits.flatMap((deposit) => {
      const entry = finished.get(deposit.requestId)
      return entry ? [entry.at - deposit.confirmedAt] : []
    })
    console.log()
    console.log(
      `Scale-out, ${new Date().toISOString()}, Node ${process.version}: 2 API instances (PONTIS_WORKERS=off) ` +
        `+ 1 worker, PostgreSQL schema ${schema}; ${connections} connections, ${durationSeconds} s after 2 s warm-up`,
    )
    console.log()
    console.log(
      '| quotes via | req/s | p50 ms | p99 ms | errors + non-2xx | service CPU (3 processes) | CPU ms/req | PostgreSQL CPU | gen + proxy CPU | anvil CPU | other CPU |',
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for (const [label, m, postgresCores] of runs) {
      console.log(
        `| ${label} | ${fixed(m.requestsPerSecond, 0)} | ${fixed(m.latencyMs.p50, 1)} | ${fixed(m.latencyMs.p99, 1)} | ` +
          `${m.errors + m.timeouts + m.non2xx} | ${fixed(m.serverCpuCores, 2)} | ${fixed(m.serverCpuMsPerRequest, 2)} | ` +
          `${fixed(postgresCores, 2)} | ${fixed(m.loadGeneratorCpuCores, 2)} | ${fixed(m.anvilCpuCores, 2)} | ` +
          `${fixed(Math.max(0, m.otherCpuCores - postgresCores), 2)} |`,
      )
    }
    console.log()
    const depositSeconds = (depositedAt - started) / 1000
    const totalSeconds = (allDone - started) / 1000
    console.log(
      '| deposits | succeeded | fill jobs | fill transactions | duplicates | quote→deposit→indexed s | until all filled s | fills/s | deposit confirmed → success p50 / max s |',
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    const succeeded = [...finished.values()].filter((entry) => entry.record.status === 'success').length
    const jobs = fills.rows.reduce((sum, row) => sum + row.jobs, 0)
    const transactions = fills.rows.reduce((sum, row) => sum + row.transactions, 0)
    const duplicates = fills.rows.filter((row) => row.jobs > 1 || row.transactions > 1).length
    console.log(
      `| ${deposits.length} | ${succeeded} | ${jobs} | ${transactions} | ${duplicates} | ${fixed(depositSeconds, 1)} | ` +
        `${fixed(totalSeconds, 1)} | ${fixed(deposits.length / totalSeconds, 2)} | ` +
        `${fixed(quantile(fillLatencies, 0.5) / 1000, 2)} / ${fixed(Math.max(...fillLatencies) / 1000, 2)} |`,
    )
    console.log()
    console.log(`Requests the proxy forwarded to api A / api B: ${proxy.forwarded().join(' / ')}`)
    if (problems.length > 0) {
      log(`\nNOT FILLED EXACTLY ONCE:\n  ${problems.join('\n  ')}`)
    } else {
      console.log('Every request was filled exactly once: one fill job, one fill transaction, paid once.')
    }
    return failed ? 1 : 0
  } finally {
    await proxy?.close()
    await stopAllServers()
    await devnet.stop()
    const db = new pg.Client({ connectionString: DATABASE_URL })
    await db.connect()
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await db.end()
  }
}

process.exit(await main())
