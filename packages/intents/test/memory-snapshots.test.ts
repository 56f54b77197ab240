/**
 * In-memory stores start from a snapshot of a freshly migrated database: taken before the first
 * store is used, shared in the process and on disk under PONTIS_PGLITE_SNAPSHOT_DIR, never carrying
 * what a store wrote, and an unreadable snapshot only costs its shortcut.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import t from 'tap'
import { openRequestStore } from '../src/store/index.js'
import { SNAPSHOT_DIR_VARIABLE, snapshotFile } from '../src/store/memory-snapshots.js'

const dir = await mkdtemp(join(tmpdir(), 'pontis-snapshots-'))
const previous = process.env[SNAPSHOT_DIR_VARIABLE]
process.env[SNAPSHOT_DIR_VARIABLE] = dir
t.teardown(async () => {
  if (previous === undefined) delete process.env[SNAPSHOT_DIR_VARIABLE]
  else process.env[SNAPSHOT_DIR_VARIABLE] = previous
  await rm(dir, { recursive: true, force: true })
})

const tableExists = async (store: Awaited<ReturnType<typeof openRequestStore>>, table: string) =>
  (
    await store.client.query<{ found: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2) AS found',
      [store.client.schema, table],
    )
  ).rows[0]?.found

t.test('the first store leaves a migrated snapshot on disk; later stores start from it, clean', async (t) => {
  const first = await openRequestStore({ schema: 'snapshot_probe' })
  t.teardown(() => first.close())
  const files = (await readdir(dir)).filter((file) => file.startsWith('snapshot_probe-'))
  t.equal(files.length, 1, 'one snapshot file for the schema')
  t.notOk(files[0]?.endsWith('.partial'), 'written whole')
  await first.client.exec('CREATE TABLE written_by_first (a int)')

  const second = await openRequestStore({ schema: 'snapshot_probe' })
  t.teardown(() => second.close())
  t.equal(await tableExists(second, 'requests'), true, 'the migrations are in the snapshot')
  t.equal(await tableExists(second, 'written_by_first'), false, 'what the first store wrote is not')
  t.same(await second.migrate(), [], 'nothing left to migrate')

  // Another process would load the file: it is a PGlite data directory holding the schema.
  const db = await PGlite.create({ loadDataDir: new Blob([await readFile(join(dir, files[0]!))]) })
  t.teardown(() => db.close())
  const tables = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'snapshot_probe'",
  )
  t.ok(
    tables.rows.some((row) => row.table_name === 'requests'),
    'the file holds the migrated schema',
  )
})

t.test('an unreadable snapshot on disk: the store starts from scratch and replaces it', async (t) => {
  const file = await snapshotFile(dir, 'snapshot_garbage')
  await writeFile(file, 'not a tarball')
  const store = await openRequestStore({ schema: 'snapshot_garbage' })
  t.teardown(() => store.close())
  t.equal(await tableExists(store, 'requests'), true, 'migrated from scratch')
  t.not((await readFile(file)).toString('utf8', 0, 13), 'not a tarball', 'the garbage was replaced')
  const next = await openRequestStore({ schema: 'snapshot_garbage' })
  t.teardown(() => next.close())
  t.equal(await tableExists(next, 'requests'), true, 'the next store starts from the new snapshot')
})
