/**
 * Freshly migrated in-memory databases, kept as dumped PGlite data directories. Starting PGlite from
 * one skips `initdb` and the migrations (about 2.3 CPU-s down to 0.5 per store), which counts where
 * processes open many in-memory stores: tests and benchmarks. Kept per process, and also on disk
 * under `PONTIS_PGLITE_SNAPSHOT_DIR` when set (the test runner sets it), so processes started by
 * tests share them. A snapshot is keyed by the schema and the migrations' checksums, so an edited
 * migration never starts from a stale one.
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadMigrations } from './migrations.js'

export const SNAPSHOT_DIR_VARIABLE = 'PONTIS_PGLITE_SNAPSHOT_DIR'

const inProcess = new Map<string, Promise<Blob | undefined>>()

/** The file a schema's snapshot is kept in under `dir`. */
export async function snapshotFile(dir: string, schema: string): Promise<string> {
  return join(dir, `${await snapshotKey(schema)}.tar`)
}

/** The shipped migrations' digest, read once per process (every in-memory store open asks for it). */
let migrationsDigest: Promise<string> | undefined

async function snapshotKey(schema: string): Promise<string> {
  migrationsDigest ??= loadMigrations().then((migrations) => {
    const hash = createHash('sha256')
    for (const migration of migrations) hash.update(`${migration.version}:${migration.checksum}\n`)
    return hash.digest('hex').slice(0, 16)
  })
  return `${schema}-${await migrationsDigest}`
}

function snapshotDir(env: NodeJS.ProcessEnv): string | undefined {
  const dir = env[SNAPSHOT_DIR_VARIABLE]
  return dir !== undefined && dir !== '' ? dir : undefined
}

/** The migrated snapshot of `schema`, when one was taken in this process or is on disk. */
export async function migratedSnapshot(
  schema: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Blob | undefined> {
  const key = await snapshotKey(schema)
  const known = inProcess.get(key)
  if (known) return known
  const dir = snapshotDir(env)
  if (!dir) return undefined
  const fromDisk = readFile(await snapshotFile(dir, schema)).then(
    (bytes) => new Blob([bytes]),
    () => undefined,
  )
  inProcess.set(key, fromDisk)
  const snapshot = await fromDisk
  // Absent on disk: leave the slot to the first store migrated here.
  if (!snapshot) inProcess.delete(key)
  return snapshot
}

/**
 * Records the snapshot of a store just migrated and not yet used, in place of one that could not be
 * loaded (`replacing`). A failed dump or write only means the next store starts from scratch.
 */
export async function keepMigratedSnapshot(
  schema: string,
  dump: () => Promise<Blob>,
  replacing?: Blob,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const key = await snapshotKey(schema)
  const known = inProcess.get(key)
  if (known && (replacing === undefined || (await known) !== replacing)) return
  const snapshot = dump().catch(() => undefined)
  inProcess.set(key, snapshot)
  const blob = await snapshot
  const dir = snapshotDir(env)
  if (!blob || !dir) return
  try {
    await mkdir(dir, { recursive: true })
    // Written aside then renamed, so a process reading it never sees half a file.
    const partial = join(dir, `${key}.${randomUUID()}.partial`)
    await writeFile(partial, Buffer.from(await blob.arrayBuffer()))
    await rename(partial, await snapshotFile(dir, schema))
  } catch {
    // The disk copy is only a shortcut.
  }
}
