import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { lockForTransaction, type SqlClient } from './sql-client.js'

/** One numbered SQL file of `migrations/`, e.g. `001_requests.sql`. */
export interface Migration {
  readonly version: number
  /** File name without the number and extension, e.g. `requests`. */
  readonly name: string
  readonly sql: string
  /** SHA-256 (hex) of the file, line endings normalised. */
  readonly checksum: string
}

/** A migration this run applied. */
export interface AppliedMigration {
  readonly version: number
  readonly name: string
}

/** Why the store refuses to start: the database and the migration files disagree. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError'
}

/** The directory of the store's own migrations. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))

const FILE_NAME = /^(\d+)_([a-z0-9_]+)\.sql$/

// Serialises migrations of one schema across processes; the second key is the schema's hash.
const LOCK_CLASS = 0x506f6e74

function checksumOf(sql: string): string {
  // Normalised so a checkout that rewrites line endings does not look like an edited migration.
  return createHash('sha256').update(sql.replaceAll('\r\n', '\n')).digest('hex')
}

/** Reads the numbered `.sql` files of `dir`, in version order. */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const migrations: Migration[] = []
  for (const file of await readdir(dir)) {
    if (!file.endsWith('.sql')) continue
    const match = FILE_NAME.exec(file)
    if (!match) throw new MigrationError(`migration file ${file} is not named NNN_name.sql`)
    const sql = await readFile(join(dir, file), 'utf8')
    migrations.push({ version: Number(match[1]), name: match[2]!, sql, checksum: checksumOf(sql) })
  }
  migrations.sort((a, b) => a.version - b.version)
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new MigrationError(`two migration files have version ${migrations[i]!.version}`)
    }
  }
  return migrations
}

const label = (migration: { version: number; name: string }) =>
  `${String(migration.version).padStart(3, '0')}_${migration.name}`

/**
 * Brings the client's schema up to date: creates the schema when missing, checks every recorded
 * migration against its file (same name and checksum, else {@link MigrationError}), then applies
 * the missing ones in order, all in one transaction under a per-schema advisory lock, so processes
 * starting together migrate once and a failed migration leaves nothing behind.
 */
export async function runMigrations(
  client: SqlClient,
  options: { readonly now: () => number; readonly migrations?: readonly Migration[] },
): Promise<AppliedMigration[]> {
  const migrations = options.migrations ?? (await loadMigrations())
  const schema = client.schema
  return client.transaction(async (tx) => {
    await lockForTransaction(tx, LOCK_CLASS, schema)
    // Checked before creating: CREATE SCHEMA needs a privilege even when the schema exists.
    const existing = await tx.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
    if (existing.rows.length === 0) await tx.exec(`CREATE SCHEMA "${schema}"`)
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at bigint NOT NULL
    )`)
    const recorded = await tx.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
    )
    const byVersion = new Map(migrations.map((migration) => [migration.version, migration]))
    for (const row of recorded.rows) {
      const file = byVersion.get(row.version)
      if (file === undefined) {
        throw new MigrationError(
          `schema ${schema} has migration ${label(row)} applied, which this code does not have: the database was migrated by a newer version`,
        )
      }
      if (file.name !== row.name || file.checksum !== row.checksum) {
        throw new MigrationError(
          `migration ${label(row)} changed after it was applied to schema ${schema} (recorded ${label(row)} checksum ${row.checksum}, file ${label(file)} checksum ${file.checksum}); never edit an applied migration, add a new one`,
        )
      }
    }
    const newest = recorded.rows.at(-1)?.version ?? 0
    const done = new Set(recorded.rows.map((row) => row.version))
    const pending = migrations.filter((migration) => !done.has(migration.version))
    const skipped = pending.find((migration) => migration.version < newest)
    if (skipped) {
      throw new MigrationError(
        `migration ${label(skipped)} is older than the newest applied one (${newest}) but was never applied to schema ${schema}`,
      )
    }
    const applied: AppliedMigration[] = []
    for (const migration of pending) {
      await tx.exec(migration.sql)
      await tx.query(
        'INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)',
        [migration.version, migration.name, migration.checksum, options.now()],
      )
      applied.push({ version: migration.version, name: migration.name })
    }
    return applied
  })
}
