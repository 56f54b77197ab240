/**
 * The request store, one suite run on both backends: embedded PGlite in memory, and PostgreSQL in a
 * schema of its own (dropped at the end) on `TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test. PostgreSQL being unreachable fails the suite: CI has it.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { IntentsApi } from '@pontis/core'
import { loadOpenApiDocument } from '@pontis/http'
import { ConformanceChecker } from '@pontis/http/testing'
import t from 'tap'
import { INTENTS_DOCUMENT_PATH } from '../src/app.js'
import {
  createPgClient,
  createPgliteClient,
  DepositTagTakenError,
  DuplicateRequestError,
  loadMigrations,
  MigrationError,
  type NewRequest,
  openRequestStore,
  RequestStore,
  runMigrations,
  type SqlClient,
} from '../src/store/index.js'
import { openTestSchema, TEST_DATABASE_URL, type Teardown } from './fixtures/postgres.js'

const MAX_UINT256 = (1n << 256n) - 1n
const T0 = 1_767_225_600_000

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const checker = new ConformanceChecker(loaded.document)

/** A clock the test moves by hand. */
function manualClock(start = T0) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

/** One empty database (or schema) of a backend. */
interface Database {
  /** A client on this database: a new connection pool for PostgreSQL, the one embedded database for PGlite. */
  connect(): Promise<SqlClient>
}

interface Backend {
  readonly name: string
  /** An empty database, closed and removed in `t`'s teardown. */
  create(t: Teardown): Promise<Database>
}

const pgliteMemory: Backend = {
  name: 'pglite-memory',
  async create(t) {
    const client = await createPgliteClient()
    t.teardown(() => client.close())
    return { connect: async () => client }
  },
}

const postgres: Backend = {
  name: 'postgres',
  async create(t) {
    const database = await openTestSchema(t, 'store')
    return {
      connect: async () =>
        database.own(await createPgClient({ databaseUrl: TEST_DATABASE_URL, schema: database.schema })),
    }
  },
}

/** What `openRequestStore` does, on a given database, keeping what `migrate` applied. */
async function openStore(db: Database, now: () => number = Date.now) {
  const store = new RequestStore(await db.connect(), { now })
  const applied = await store.migrate()
  return { store, applied }
}

let sequence = 0
function newRequest(overrides: Partial<NewRequest> = {}): NewRequest {
  sequence++
  return {
    id: `0x${sequence.toString(16).padStart(64, '0')}`,
    originChainId: 31337,
    destinationChainId: 792703809,
    userAddress: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
    recipient: 'So11111111111111111111111111111111111111112',
    refundTo: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
    originCurrency: '0x0000000000000000000000000000000000000000',
    destinationCurrency: '11111111111111111111111111111111',
    tradeType: 'EXACT_INPUT',
    amountIn: 1_000_000_000_000_000n,
    amountOut: 999_000_000n,
    minimumAmountOut: 990_000_000n,
    quote: { request: { amount: '1000000000000000' }, order: { salt: '0x01' }, fees: [] },
    expiresAt: T0 + 600_000,
    ...overrides,
  }
}

function conformanceProblems(record: IntentsApi.StatusRecordV3): readonly string[] {
  return checker.check({
    method: 'GET',
    path: '/intents/status/v3',
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: record,
  }).problems
}

async function migrationRows(client: SqlClient) {
  const { rows } = await client.query<{
    version: number
    name: string
    checksum: string
    applied_at: number
  }>('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version')
  return rows
}

for (const backend of [pgliteMemory, postgres]) {
  t.test(backend.name, async (t) => {
    let db: Database
    try {
      db = await backend.create(t)
    } catch (error) {
      t.fail((error as Error).message)
      return
    }
    const fresh = () => backend.create(t)
    const clock = manualClock()
    const { store } = await openStore(db, clock.now)

    t.test('migrations: opening twice applies once', async (t) => {
      const target = await fresh()
      const files = await loadMigrations()
      const first = await openStore(target, () => T0)
      t.same(
        first.applied,
        files.map(({ version, name }) => ({ version, name })),
        'every migration file is applied, in order',
      )
      t.equal(files[0]?.name, 'requests')
      const second = await openStore(target, () => T0 + 1)
      t.same(second.applied, [], 'nothing left to apply')
      t.same(await second.store.migrate(), [], 'migrate stays idempotent')
      const rows = await migrationRows(second.store.client)
      t.same(
        rows,
        files.map(({ version, name, checksum }) => ({ version, name, checksum, applied_at: T0 })),
      )
      for (const file of files) t.match(file.checksum, /^[0-9a-f]{64}$/)
    })

    t.test('migrations: an edited migration refuses to start', async (t) => {
      const target = await fresh()
      const { store } = await openStore(target)
      await store.client.query("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1")
      await t.rejects(store.migrate(), MigrationError)
      await t.rejects(openStore(target), {
        name: 'MigrationError',
        message: /001_requests changed after it was applied/,
      })
    })

    t.test('migrations: a database migrated by newer code refuses to start', async (t) => {
      const target = await fresh()
      const { store } = await openStore(target)
      await store.client.query(
        "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (999, 'future', 'x', 0)",
      )
      await t.rejects(store.migrate(), { name: 'MigrationError', message: /999_future .*newer version/ })
    })

    t.test('migrations: concurrent starts on one database apply once', async (t) => {
      const target = await fresh()
      const stores = [new RequestStore(await target.connect()), new RequestStore(await target.connect())]
      const results = await Promise.all(stores.map((store) => store.migrate()))
      const count = (await loadMigrations()).length
      t.same(results.map((applied) => applied.length).sort(), [0, count], 'exactly one of them migrated')
      t.equal((await migrationRows(stores[0]!.client)).length, count)
      t.same(await stores[1]!.getRequest(newRequest().id), undefined, 'both see the table')
    })

    t.test('migrations: a failing migration leaves nothing behind', async (t) => {
      const target = await fresh()
      const client = await target.connect()
      const migrations = [
        { version: 1, name: 'good', sql: 'CREATE TABLE good (x int)', checksum: 'a' },
        { version: 2, name: 'bad', sql: 'CREATE TABLE bad (x no_such_type)', checksum: 'b' },
      ]
      await t.rejects(runMigrations(client, { now: Date.now, migrations }), /no_such_type/)
      const { rows } = await client.query("SELECT to_regclass('good') AS good")
      t.same(rows, [{ good: null }], 'the first migration was rolled back too')
    })

    t.test('openRequestStore opens a migrated store', async (t) => {
      const store = await openRequestStore(
        backend === postgres
          ? { databaseUrl: TEST_DATABASE_URL, schema: `test_open_${randomBytes(4).toString('hex')}` }
          : {},
      )
      t.teardown(async () => {
        if (backend === postgres) await store.client.query(`DROP SCHEMA "${store.client.schema}" CASCADE`)
        await store.close()
      })
      t.equal((await migrationRows(store.client)).length, (await loadMigrations()).length)
      t.equal(await store.getRequest(newRequest().id), undefined)
    })

    t.test('insert and get round-trip, uint256 amounts and jsonb', async (t) => {
      const quote = {
        request: { user: '0xabc', amount: MAX_UINT256.toString(), txs: [] },
        order: {
          inputs: [{ payment: { amount: MAX_UINT256.toString(), weight: '1' } }],
          deadline: 1767225660,
        },
        fees: { gas: { amount: '-5' } },
        note: 'üñí "quoted" \\ text',
        nothing: null,
      }
      const input = newRequest({
        id: `0x${'AB'.repeat(32)}`,
        amountIn: MAX_UINT256,
        amountOut: MAX_UINT256 - 1n,
        minimumAmountOut: 0n,
        depositAddress: '0x1111111111111111111111111111111111111111',
        depositAddressType: 'strict',
        apiKeyId: 'key_1',
        referrer: 'pontis.test',
        quote,
      })
      const inserted = await store.insertRequest(input)
      const expected = {
        id: `0x${'ab'.repeat(32)}`,
        status: 'waiting',
        originChainId: 31337,
        destinationChainId: 792703809,
        userAddress: input.userAddress,
        recipient: input.recipient,
        refundTo: input.refundTo,
        originCurrency: input.originCurrency,
        destinationCurrency: input.destinationCurrency,
        tradeType: 'EXACT_INPUT',
        amountIn: MAX_UINT256,
        amountOut: MAX_UINT256 - 1n,
        minimumAmountOut: 0n,
        depositAddress: '0x1111111111111111111111111111111111111111',
        depositAddressType: 'strict',
        apiKeyId: 'key_1',
        referrer: 'pontis.test',
        quote,
        inTxHashes: [],
        txHashes: [],
        failReason: 'N/A',
        refundFailReason: 'N/A',
        details: null,
        createdAt: T0,
        updatedAt: T0,
        expiresAt: T0 + 600_000,
      }
      t.strictSame(inserted, expected, 'insert returns the stored row')
      t.strictSame(await store.getRequest(input.id), expected, 'get by the id as given')
      t.strictSame(await store.getRequest(expected.id), expected, 'get by the lower-case id')
      const typed = await store.getRequest(expected.id)
      t.equal(typeof typed?.amountIn, 'bigint')
      t.equal(typeof typed?.createdAt, 'number')
      const { rows } = await store.client.query<{ amount_in: string }>(
        'SELECT amount_in FROM requests WHERE id = $1',
        [expected.id],
      )
      t.equal(rows[0]?.amount_in, MAX_UINT256.toString(), 'stored exactly')
    })

    t.test('the clock stamps createdAt and updatedAt; optional members default to null', async (t) => {
      clock.advance(1234)
      const stored = await store.insertRequest(newRequest())
      t.equal(stored.createdAt, T0 + 1234)
      t.equal(stored.updatedAt, T0 + 1234)
      t.same(
        [stored.depositAddress, stored.depositAddressType, stored.apiKeyId, stored.referrer],
        [null, null, null, null],
      )
    })

    t.test('an unknown id is undefined', async (t) => {
      t.equal(await store.getRequest(`0x${'f'.repeat(64)}`), undefined)
      t.equal(await store.getRequest('not-an-id'), undefined, 'a malformed id is simply unknown')
    })

    t.test('a duplicate id is rejected with a clear error', async (t) => {
      const input = newRequest()
      await store.insertRequest(input)
      await t.rejects(store.insertRequest({ ...input, amountIn: 1n }), DuplicateRequestError)
      await t.rejects(store.insertRequest({ ...input, id: input.id.toUpperCase().replace('0X', '0x') }), {
        name: 'DuplicateRequestError',
        message: `request ${input.id} already exists`,
      })
      t.equal((await store.getRequest(input.id))?.amountIn, input.amountIn, 'the first one is kept')
    })

    t.test('concurrent inserts go in together, each with its own outcome', async (t) => {
      let statements = 0
      const counting: SqlClient = {
        ...store.client,
        query: (sql, params) => {
          if (sql.trimStart().startsWith('INSERT INTO requests')) statements++
          return store.client.query(sql, params)
        },
      }
      const grouped = new RequestStore(counting, { now: clock.now })
      const taken = newRequest({ depositTag: `0x${'7a'.repeat(32)}` })
      await grouped.insertRequest(taken)
      t.equal(statements, 1, 'an idle store inserts a request alone')
      const fresh = Array.from({ length: 24 }, () => newRequest())
      const stored = await Promise.all(fresh.map((request) => grouped.insertRequest(request)))
      t.equal(statements, 2, 'a burst asked for in one turn of the event loop: one statement')
      t.same(
        stored.map((row) => row.id),
        fresh.map((request) => request.id),
        'each insert answered with its own row',
      )
      // One bad row fails its batch; the batch is retried row by row so only that row fails.
      const later = Array.from({ length: 5 }, () => newRequest())
      const burst = [
        ...later,
        { ...fresh[3]!, amountIn: 7n },
        newRequest({ depositTag: `0x${'7A'.repeat(32)}` }),
      ]
      const outcomes = await Promise.allSettled(burst.map((request) => grouped.insertRequest(request)))
      for (const [index, request] of later.entries()) {
        const outcome = outcomes[index]!
        t.equal(outcome.status, 'fulfilled', `request ${index} of the failed batch stored`)
        if (outcome.status === 'fulfilled') t.equal(outcome.value.id, request.id)
      }
      for (const request of [...fresh, ...later])
        t.equal((await store.getRequest(request.id))?.amountIn, request.amountIn, `${request.id} readable`)
      const duplicate = outcomes[later.length]!
      t.equal(duplicate.status, 'rejected')
      if (duplicate.status === 'rejected')
        t.type(duplicate.reason, DuplicateRequestError, 'the repeated id alone fails')
      const tagged = outcomes[later.length + 1]!
      t.equal(tagged.status, 'rejected')
      if (tagged.status === 'rejected')
        t.type(tagged.reason, DepositTagTakenError, 'the taken tag alone fails')
      t.equal(
        (await store.getRequest(fresh[3]!.id))?.amountIn,
        fresh[3]!.amountIn,
        'the first of an id is kept',
      )
    })

    t.test('malformed requests are refused before SQL', async (t) => {
      await t.rejects(store.insertRequest(newRequest({ id: '0x1234' })), RangeError)
      await t.rejects(store.insertRequest(newRequest({ amountIn: MAX_UINT256 + 1n })), /amountIn .* outside/)
      await t.rejects(store.insertRequest(newRequest({ amountOut: -1n })), /amountOut/)
      await t.rejects(store.insertRequest(newRequest({ originChainId: 0 })), /originChainId/)
      await t.rejects(store.insertRequest(newRequest({ expiresAt: 1.5 })), /expiresAt/)
      await t.rejects(store.insertRequest(newRequest({ depositAddress: '0x1' })), /set together/)
    })

    t.test('the table refuses garbage written by raw SQL', async (t) => {
      const { id } = await store.insertRequest(newRequest())
      await t.rejects(store.client.query("UPDATE requests SET status = 'garbage' WHERE id = $1", [id]), {
        code: '23514',
        constraint: 'requests_status_check',
      })
      await t.rejects(
        store.client.query('UPDATE requests SET amount_in = $2 WHERE id = $1', [
          id,
          (MAX_UINT256 + 1n).toString(),
        ]),
        /uint256/,
      )
      await t.rejects(
        store.client.query("UPDATE requests SET deposit_address_type = 'loose' WHERE id = $1", [id]),
        {
          code: '23514',
        },
      )
      await t.rejects(store.client.query("UPDATE requests SET id = 'abc' WHERE id = $1", [id]), {
        code: '23514',
        constraint: 'requests_id_check',
      })
      t.equal((await store.getRequest(id))?.status, 'waiting')
    })

    t.test('every status is accepted', async (t) => {
      const { id } = await store.insertRequest(newRequest())
      for (const status of [
        'depositing',
        'pending',
        'submitted',
        'success',
        'failure',
        'refund',
        'fallback',
      ]) {
        await store.client.query('UPDATE requests SET status = $2 WHERE id = $1', [id, status])
        t.equal((await store.getRequest(id))?.status, status)
      }
    })

    t.test('findByDepositAddress: every request on the address, newest first', async (t) => {
      const address = `0x${randomBytes(20).toString('hex')}`
      const older = await store.insertRequest(
        newRequest({ depositAddress: address, depositAddressType: 'open' }),
      )
      clock.advance(1000)
      const newer = await store.insertRequest(
        newRequest({ depositAddress: address, depositAddressType: 'open' }),
      )
      t.same(
        (await store.findByDepositAddress(address)).map((request) => request.id),
        [newer.id, older.id],
      )
      t.same(await store.findByDepositAddress(address.toUpperCase()), [], 'exact match: callers canonicalise')
      t.same(await store.findByDepositAddress('nowhere'), [])
    })

    t.test(
      'findByDepositTag: the one request a memo-less deposit is tagged for, per origin chain',
      async (t) => {
        const tag = `0x${randomBytes(32).toString('hex')}`
        const tagged = await store.insertRequest(
          newRequest({ depositTag: tag.toUpperCase().replace('0X', '0x') }),
        )
        t.equal((await store.findByDepositTag(tagged.originChainId, tag))?.id, tagged.id, 'stored lower-case')
        t.equal(
          await store.findByDepositTag(tagged.originChainId + 1, tag),
          undefined,
          'another origin chain',
        )
        t.equal(await store.findByDepositTag(tagged.originChainId, 'not a tag'), undefined)
        await t.rejects(
          store.insertRequest(newRequest({ depositTag: tag })),
          DepositTagTakenError,
          'a tag serves one request only',
        )
        await t.rejects(store.insertRequest(newRequest({ depositTag: '0x1234' })), RangeError)
      },
    )

    t.test('toStatusRecord is the documented StatusRecordV3', async (t) => {
      clock.advance(10)
      const stored = await store.insertRequest(newRequest())
      const record = store.toStatusRecord(stored)
      t.strictSame(record, {
        requestId: stored.id,
        status: 'waiting',
        inTxHashes: [],
        txHashes: [],
        updatedAt: stored.updatedAt,
        originChainId: 31337,
        destinationChainId: 792703809,
        details: null,
        failReason: 'N/A',
        refundFailReason: 'N/A',
        quoteCreatedAt: stored.createdAt,
      })
      t.same(conformanceProblems(record), [], 'conforms to the OpenAPI document')
      t.same(JSON.parse(JSON.stringify(record)), record, 'survives JSON')

      await store.client.query(
        `UPDATE requests SET status = 'refund', details = $2::jsonb, in_tx_hashes = $3, tx_hashes = $4,
           updated_at = updated_at + 5 WHERE id = $1`,
        [
          stored.id,
          JSON.stringify({ revert: '0x08c379a0' }),
          [`0x${'1'.repeat(64)}`],
          [`0x${'2'.repeat(64)}`],
        ],
      )
      const refunded = store.toStatusRecord((await store.getRequest(stored.id))!)
      t.match(refunded, {
        status: 'refund',
        failReason: 'UNKNOWN',
        details: { revert: '0x08c379a0' },
        inTxHashes: [`0x${'1'.repeat(64)}`],
        txHashes: [`0x${'2'.repeat(64)}`],
        updatedAt: stored.updatedAt + 5,
        quoteCreatedAt: stored.createdAt,
      })
      t.same(conformanceProblems(refunded), [], 'a refunded record conforms too')

      await store.client.query(
        "UPDATE requests SET status = 'success', fail_reason = 'SLIPPAGE' WHERE id = $1",
        [stored.id],
      )
      t.equal(
        store.toStatusRecord((await store.getRequest(stored.id))!).failReason,
        'N/A',
        'N/A unless failed',
      )
      await store.client.query("UPDATE requests SET status = 'failure' WHERE id = $1", [stored.id])
      t.equal(store.toStatusRecord((await store.getRequest(stored.id))!).failReason, 'SLIPPAGE')

      t.not(
        conformanceProblems({ ...record, quoteCreatedAt: -1 }).length,
        0,
        'the check does catch a bad record',
      )
    })

    t.test('bigint columns come back as numbers, never rounded', async (t) => {
      const { rows } = await store.client.query<{ n: number }>('SELECT 9007199254740991::bigint AS n')
      t.equal(rows[0]?.n, Number.MAX_SAFE_INTEGER)
      await t.rejects(store.client.query('SELECT 9007199254740993::bigint AS n'), /does not fit a JS number/)
    })

    t.test('transactions commit, roll back and nest', async (t) => {
      const { client } = store
      await client.exec('CREATE TABLE tx_probe (x int)')
      t.teardown(() => client.exec('DROP TABLE tx_probe'))
      await client.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_probe VALUES (1)')
      })
      await t.rejects(
        client.transaction(async (tx) => {
          await tx.query('INSERT INTO tx_probe VALUES (2)')
          throw new Error('abort')
        }),
        /abort/,
      )
      await client.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_probe VALUES (3)')
        await t.rejects(
          tx.transaction(async (inner) => {
            await inner.query('INSERT INTO tx_probe VALUES (4)')
            throw new Error('inner abort')
          }),
          /inner abort/,
        )
        await tx.transaction((inner) => inner.query('INSERT INTO tx_probe VALUES (5)'))
        await t.rejects(tx.close(), /not a transaction/)
      })
      const { rows } = await client.query<{ x: number }>('SELECT x FROM tx_probe ORDER BY x')
      t.same(
        rows.map((row) => row.x),
        [1, 3, 5],
      )
    })
  })
}

t.test('pglite: a data directory persists across reopen', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pontis-store-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const first = await openRequestStore({ dataDir, schema: 'intents', now: () => T0 })
  const stored = await first.insertRequest(newRequest({ quote: { kept: true } }))
  await first.close()
  await first.close()

  const second = await openRequestStore({ dataDir, schema: 'intents', now: () => T0 + 1 })
  t.teardown(() => second.close())
  t.strictSame(await second.getRequest(stored.id), stored)
  t.same(await second.migrate(), [], 'already migrated')
  const { rows } = await second.client.query<{ schema: string }>(
    "SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'requests'",
  )
  t.same(rows, [{ schema: 'intents' }], 'everything lives in the chosen schema')
})

t.test('schema names are plain identifiers', async (t) => {
  await t.rejects(openRequestStore({ schema: 'x"; DROP TABLE requests; --' }), /invalid schema name/)
  await t.rejects(createPgClient({ databaseUrl: TEST_DATABASE_URL, schema: 'Upper' }), /invalid schema name/)
})
