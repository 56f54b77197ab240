/**
 * Request history on a million stored requests: one page (20 items) under each kind of filter, on
 * real PostgreSQL, timed in the store (`RequestStore.history`: the page query and its two
 * transaction reads) and end to end over HTTP through the intent service's own app (`GET
 * /requests/v3`, access checks, rendering, validation of the query). Prints each filter's plan
 * (EXPLAIN ANALYZE) and fails when a page scans the requests table instead of an index. Prints
 * the machine's load average beside each filter and for the whole run: with a load above the core
 * count the percentiles include waiting for a core, and are no quiet-machine figure.
 *
 *   npx tsx scripts/bench/history.ts [--requests 1000000] [--iterations 200] [--keep]
 *   npm run bench:history
 *
 * Needs the PostgreSQL the tests use (`TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test). Everything goes into a fresh schema
 * (`bench_history_<pid>`), dropped at the end unless `--keep`. Exit status 1 when a plan uses a
 * sequential scan of `requests` or an answer is not 200.
 */
import crypto from 'node:crypto'
import { cpus, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { silentLogger } from '@pontis/core'
import { listen } from '@pontis/http'
import pg from 'pg'
import { createIntentsApp, createIntentsRuntime } from '../../packages/intents/src/index.js'
import { ApiKeyStore } from '../../packages/intents/src/keys/index.js'
import {
  type HistoryQuery,
  historySql,
  openRequestStore,
  type RequestStore,
  resolveHashLookups,
} from '../../packages/intents/src/store/index.js'

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ADMIN_TOKEN = 'bench-history-admin-token-0123456789'
const CLOSED = 'http://127.0.0.1:9'
const PARTNERS = 20
const USERS = 50_000
const CHAINS = [1, 10, 8453, 42161, 792703809, 8253038]
const START_MS = 1_767_225_600_000
const log = (message: string) => process.stderr.write(`${message}\n`)

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000000' },
    iterations: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
  },
})
const total = Number(args.requests)
const iterations = Number(args.iterations)
const schema = `bench_history_${process.pid}`

/** Deterministic facts of request number `n` (1-based), as the loader's SQL computes them. */
const requestId = (n: number) => `0x${md5(`r${n}`)}${md5(`s${n}`)}`
const userOf = (n: number) => `0x${md5(`u${n % USERS}`).slice(0, 40)}` // user number n (0 to USERS - 1)
const depositHashOf = (n: number) => `0x${md5(`d${n}`)}${md5(`e${n}`)}`
const fillHashOf = (n: number) => `0x${md5(`f${n}`)}${md5(`h${n}`)}`
function md5(text: string): string {
  return crypto.createHash('md5').update(text).digest('hex')
}

/**
 * One million requests in one statement: 20 partners share 70 % of them, the rest are anonymous;
 * 50 000 users; six chains; statuses 80 % success, 5 % refund, 5 % failure, 5 % pending, 5 %
 * waiting; one request a second (11.6 days); a quote document of the size real ones have.
 */
async function load(store: RequestStore, keyIds: readonly string[]): Promise<void> {
  const started = performance.now()
  const fee = (chainId: number, amount: string) =>
    `{"currency":{"chainId":${chainId},"address":"0x0000000000000000000000000000000000000000","symbol":"ETH","name":"Ether","decimals":18,"metadata":{"isNative":true}},"amount":"${amount}","amountFormatted":"0.0001","amountUsd":"0.3","minimumAmount":"${amount}"}`
  const quote = `{"fees":{"gas":${fee(1, '0')},"relayer":${fee(1, '26000000000000')},"relayerGas":${fee(1, '21000000000000')},"relayerService":${fee(1, '5000000000000')},"app":${fee(1, '0')},"subsidized":${fee(1, '0')}},"slippageBps":50,"currencyIn":${fee(1, '10000000000000000')},"currencyOut":${fee(8453, '9974000000000000')}}`
  const batch = 100_000
  for (let from = 1; from <= total; from += batch) {
    const to = Math.min(total, from + batch - 1)
    await store.client.query(
      `INSERT INTO requests (id, status, origin_chain_id, destination_chain_id, user_address, recipient, refund_to,
         origin_currency, destination_currency, trade_type, amount_in, amount_out, minimum_amount_out,
         api_key_id, referrer, quote, in_tx_hashes, tx_hashes, fail_reason, created_at, updated_at, expires_at)
       SELECT '0x' || md5('r' || g) || md5('s' || g), s.status,
         ($4::bigint[])[1 + h.origin], ($4::bigint[])[1 + (h.origin + 1 + h.destination % 5) % 6],
         '0x' || left(md5('u' || h.u), 40), '0x' || left(md5('u' || h.u), 40), '0x' || left(md5('u' || h.u), 40),
         '0x0000000000000000000000000000000000000000', '0x0000000000000000000000000000000000000000',
         'EXACT_INPUT', 10000000000000000, 9974000000000000, 9924130000000000,
         CASE WHEN h.owner < 70 THEN ($3::text[])[1 + h.owner % ${PARTNERS}] END,
         CASE WHEN h.owner < 70 THEN 'app-' || (h.referrer % 7) END,
         $5::jsonb,
         CASE WHEN s.status = 'waiting' THEN '{}'::text[] ELSE ARRAY['0x' || md5('d' || g) || md5('e' || g)] END,
         CASE WHEN s.status IN ('success', 'refund') THEN ARRAY['0x' || md5('f' || g) || md5('h' || g)] ELSE '{}'::text[] END,
         CASE WHEN s.status IN ('refund', 'failure') THEN 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' ELSE 'N/A' END,
         ${START_MS} + g * 1000, ${START_MS} + g * 1000 + (g % 97) * 1000, ${START_MS} + g * 1000 + 600000
       FROM generate_series($1::int, $2::int) g,
         -- Independent pseudo-random draws per request, so no filter is correlated with another.
         LATERAL (SELECT abs(hashtext('o' || g)) % 100 AS owner, abs(hashtext('c' || g)) % 6 AS origin,
           abs(hashtext('t' || g)) % 6 AS destination, abs(hashtext('f' || g)) % 7 AS referrer,
           abs(hashtext('u' || g)) % ${USERS} AS u, abs(hashtext('s' || g)) % 20 AS draw) h,
         LATERAL (SELECT CASE WHEN h.draw < 16 THEN 'success' WHEN h.draw = 16 THEN 'refund'
           WHEN h.draw = 17 THEN 'failure' WHEN h.draw = 18 THEN 'pending' ELSE 'waiting' END AS status) s`,
      [from, to, keyIds, CHAINS, quote],
    )
    log(`  ${to} requests (${((performance.now() - started) / 1000).toFixed(0)} s)`)
  }
  await store.client.query(
    `INSERT INTO deposits (chain_id, transaction_id, log_index, deposit_id, depositor, currency, amount, block_number,
       request_id, outcome, confirmed, seen_at)
     SELECT origin_chain_id, in_tx_hashes[1], 0, id, user_address, origin_currency, amount_in, created_at / 1000 % 10000000,
       id, 'matched', true, created_at + 2000
     FROM requests WHERE cardinality(in_tx_hashes) > 0`,
  )
  await store.client.query(
    `INSERT INTO solver_jobs (job_key, request_id, kind, chain_id, payload, state, transaction_id, raw, amount, created_at, updated_at)
     SELECT CASE WHEN status = 'refund' THEN 'refund:' ELSE 'fill:' END || id, id,
       CASE WHEN status = 'refund' THEN 'refund' ELSE 'fill' END,
       CASE WHEN status = 'refund' THEN origin_chain_id ELSE destination_chain_id END,
       '{}'::jsonb, 'confirmed', tx_hashes[1], '0x00', amount_out, created_at + 3000, created_at + 5000
     FROM requests WHERE cardinality(tx_hashes) > 0`,
  )
  log(`  deposits and solver jobs (${((performance.now() - started) / 1000).toFixed(0)} s)`)
  await store.client.query('ANALYZE')
  log(`loaded ${total} requests in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}

interface Scenario {
  readonly name: string
  /** The store query of iteration `i` (values vary so pages are not all cached alike). */
  readonly query: (i: number) => HistoryQuery
  /** The same page over HTTP. */
  readonly url: (i: number) => string
  readonly headers: Record<string, string>
}

const pick = (i: number) => 1 + ((i * 7919) % total)

function scenarios(partnerKeyId: string, partnerSecret: string): Scenario[] {
  const operator = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const partner = { 'x-api-key': partnerSecret }
  const page = (filter: HistoryQuery['filter'], extra: Partial<HistoryQuery> = {}): HistoryQuery => ({
    filter,
    sortBy: 'createdAt',
    direction: 'desc',
    limit: 20,
    ...extra,
  })
  const middle = START_MS + Math.floor(total / 2) * 1000
  const deep = { at: middle, id: requestId(Math.floor(total / 2)) }
  return [
    {
      name: 'operator, newest page',
      query: () => page({}),
      url: () => '/requests/v3',
      headers: operator,
    },
    {
      name: 'operator, a page half-way (cursor)',
      query: () => page({}, { after: deep }),
      url: () => '',
      headers: operator,
    },
    {
      name: 'partner, newest page',
      query: () => page({ apiKeyId: partnerKeyId }),
      url: () => '/requests/v3',
      headers: partner,
    },
    {
      name: 'partner, updatedAt asc',
      query: () => page({ apiKeyId: partnerKeyId }, { sortBy: 'updatedAt', direction: 'asc' }),
      url: () => '/requests/v3?sortBy=updatedAt&sortDirection=asc',
      headers: partner,
    },
    {
      name: 'partner + origin chain + status refund',
      query: () => page({ apiKeyId: partnerKeyId, originChainId: 8453, status: 'refund' }),
      url: () => '/requests/v3?originChainId=8453&status=refund',
      headers: partner,
    },
    {
      name: 'partner + status that matches nothing (fallback)',
      query: () => page({ apiKeyId: partnerKeyId, status: 'fallback' }),
      url: () => '/requests/v3?status=fallback',
      headers: partner,
    },
    {
      name: 'partner + destination chain',
      query: () => page({ apiKeyId: partnerKeyId, destinationChainId: 42161 }),
      url: () => '/requests/v3?destinationChainId=42161',
      headers: partner,
    },
    {
      name: 'partner + referrer + time range',
      query: () =>
        page({
          apiKeyId: partnerKeyId,
          referrer: 'app-3',
          createdFrom: middle - 86_400_000,
          createdTo: middle,
        }),
      url: () =>
        `/requests/v3?referrer=app-3&startTimestamp=${(middle - 86_400_000) / 1000}&endTimestamp=${middle / 1000}`,
      headers: partner,
    },
    {
      name: 'operator + chain either way + status failure',
      query: () => page({ chainId: 792703809, status: 'failure' }),
      url: () => '/requests/v3?chainId=792703809&status=failure',
      headers: operator,
    },
    {
      name: 'anonymous lookup by user',
      query: (i) => page({ users: [userOf(pick(i))] }),
      url: (i) => `/requests/v3?user=${userOf(pick(i))}`,
      headers: {},
    },
    {
      name: 'anonymous lookup by id (v2, the widget)',
      query: (i) => page({ ids: [requestId(pick(i))] }),
      url: (i) => `/requests/v2?id=${requestId(pick(i))}`,
      headers: {},
    },
    {
      name: 'anonymous lookup by deposit hash',
      query: (i) => page({ hashes: [depositHashOf(pick(i))] }),
      url: (i) => `/requests/v3?hash=${depositHashOf(pick(i))}`,
      headers: {},
    },
    {
      name: 'anonymous lookup by fill hash (fillTxHash)',
      query: (i) => page({ fillTxHashes: [fillHashOf(pick(i))] }),
      url: (i) => `/requests/v3?fillTxHash=${fillHashOf(pick(i))}`,
      headers: {},
    },
  ]
}

function percentiles(samples: number[]): { p50: number; p95: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.at(-1) as number }
}

async function time(run: (i: number) => Promise<void>): Promise<number[]> {
  for (let i = 0; i < 20; i++) await run(i + 100_000)
  const samples: number[] = []
  for (let i = 0; i < iterations; i++) {
    const started = performance.now()
    await run(i)
    samples.push(performance.now() - started)
  }
  return samples
}

interface PlanNode {
  readonly 'Node Type': string
  readonly 'Relation Name'?: string
  readonly 'Index Name'?: string
  readonly Plans?: readonly PlanNode[]
}

/** The plan of a page, and the index scans in it; a sequential scan of `requests` is a failure. */
async function explain(
  admin: pg.Client,
  store: RequestStore,
  query: HistoryQuery,
): Promise<{ indexes: string[]; seqScan: boolean; ms: number }> {
  // As the store runs it: hash lookups resolved by their own query first (not in the plan shown).
  const { text, params } = historySql({
    ...query,
    filter: await resolveHashLookups(store.client, query.filter),
  })
  const { rows } = await admin.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
    params,
  )
  const [top] = rows[0]!['QUERY PLAN']
  const nodes: PlanNode[] = []
  const visit = (node: PlanNode) => {
    nodes.push(node)
    for (const child of node.Plans ?? []) visit(child)
  }
  visit(top!.Plan)
  return {
    indexes: [...new Set(nodes.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : [])))],
    seqScan: nodes.some((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'requests'),
    ms: top!['Execution Time'],
  }
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  let failed = false
  try {
    log(`schema ${schema} on ${DATABASE_URL.replace(/:[^:@/]*@/, ':***@')}`)
    const store = await openRequestStore({ databaseUrl: DATABASE_URL, schema })
    const keys = new ApiKeyStore(store.client)
    const created = await Promise.all(
      Array.from({ length: PARTNERS }, (_, i) => keys.create({ label: `bench partner ${i}` })),
    )
    await load(
      store,
      created.map((key) => key.key.id),
    )
    await admin.query(`SET search_path TO "${schema}"`)
    const runtime = await createIntentsRuntime({
      env: {
        DATABASE_URL,
        DATABASE_SCHEMA: schema,
        LOCAL_A_RPC_URL: CLOSED,
        LOCAL_B_RPC_URL: CLOSED,
        RATE_LIMITS: 'off',
        ADMIN_TOKEN,
        PONTIS_WORKERS: 'off',
      },
      logger: silentLogger,
    })
    const { koa } = await createIntentsApp(runtime)
    const server = await listen(koa, { port: 0 })
    const partner = created[0]!
    const rows: string[] = []
    // The 1-minute load average seen while the pages were timed (other processes' work included).
    const loads: number[] = [loadavg()[0] ?? 0]
    for (const scenario of scenarios(partner.key.id, partner.secret)) {
      const plan = await explain(admin, store, scenario.query(0))
      if (plan.seqScan) failed = true
      const inStore = percentiles(
        await time(async (i) => void (await runtime.store.history(scenario.query(i)))),
      )
      let url = scenario.url(0)
      if (url === '') {
        // The half-way page over HTTP: follow a cursor built the way the service builds it.
        const first = await fetch(`${server.url}/requests/v3?limit=20`, { headers: scenario.headers })
        const { continuation } = (await first.json()) as { continuation: string }
        const decoded = JSON.parse(Buffer.from(continuation, 'base64url').toString()) as Record<
          string,
          unknown
        >
        const deep = scenario.query(0).after!
        const cursor = Buffer.from(JSON.stringify({ ...decoded, t: deep.at, i: deep.id })).toString(
          'base64url',
        )
        url = `/requests/v3?continuation=${cursor}`
      }
      const fixedUrl = scenario.url(0) === '' ? url : undefined
      const overHttp = percentiles(
        await time(async (i) => {
          const res = await fetch(`${server.url}${fixedUrl ?? scenario.url(i)}`, {
            headers: scenario.headers,
          })
          const body = (await res.json()) as { requests?: unknown[] }
          if (res.status !== 200 || !Array.isArray(body.requests)) {
            failed = true
            throw new Error(`${scenario.name}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`)
          }
        }),
      )
      const f = (ms: number) => ms.toFixed(2)
      loads.push(loadavg()[0] ?? 0)
      rows.push(
        `| ${scenario.name} | ${f(inStore.p50)} | ${f(inStore.p99)} | ${f(overHttp.p50)} | ${f(overHttp.p95)} | ${f(overHttp.p99)} | ${f(plan.ms)} | ${plan.seqScan ? '**Seq Scan**' : plan.indexes.join(', ')} | ${f(loads.at(-1) ?? 0)} |`,
      )
      log(rows.at(-1) as string)
    }
    const { rows: size } = await admin.query<{ table: string; indexes: string }>(
      `SELECT pg_size_pretty(pg_table_size('requests')) AS table, pg_size_pretty(pg_indexes_size('requests')) AS indexes`,
    )
    const cores = cpus().length
    const [lowest, highest] = [Math.min(...loads), Math.max(...loads)]
    console.log(
      `\n${total} requests (table ${size[0]?.table}, indexes ${size[0]?.indexes}), ${iterations} pages of 20 per filter, sequential`,
    )
    console.log(
      `${new Date().toISOString()}, ${cores} cores, load average (1 min) while timing: ${lowest.toFixed(2)} to ${highest.toFixed(2)}` +
        (highest > cores
          ? ' -- LOADED: above the core count, the percentiles include waiting for a core; not a quiet-machine figure\n'
          : '\n'),
    )
    console.log(
      '| filter | store p50 ms | store p99 ms | HTTP p50 ms | HTTP p95 ms | HTTP p99 ms | EXPLAIN ANALYZE ms | indexes used | load 1m |',
    )
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |')
    for (const row of rows) console.log(row)
    await server.close()
    await runtime.store.close()
    await runtime.registry.close()
    await store.close()
  } finally {
    if (!args.keep) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    else log(`kept schema ${schema}`)
    await admin.end()
  }
  if (failed) {
    log('FAILED: a page scanned the requests table or answered non-200')
    process.exitCode = 1
  }
}

await main()
