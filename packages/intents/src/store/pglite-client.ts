import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { Logger } from '@pontis/core'
import {
  checkChannelName,
  checkSchemaName,
  INT8_OID,
  parseInt8,
  type SqlClient,
  transactionClient,
} from './sql-client.js'

/** Options of {@link createPgliteClient}. */
export interface PgliteClientOptions {
  /** Directory holding the database files; in memory when absent. One process at a time may open it. */
  readonly dataDir?: string
  /** Schema used as `search_path` (created by the migrations). Default `public`. */
  readonly schema?: string
  /** Receives errors thrown by `listen` handlers. */
  readonly logger?: Logger
  /** A data directory dumped by {@link PgliteSqlClient.dump} to start from (in memory only). */
  readonly loadDataDir?: Blob
}

/** A PGlite client, which can also dump its data directory (to start other in-memory databases from). */
export interface PgliteSqlClient extends SqlClient {
  /** The whole data directory as an uncompressed tarball. */
  dump(): Promise<Blob>
}

/**
 * Opens embedded PostgreSQL (PGlite). PGlite is a single connection that runs one query at a time;
 * its own `transaction` API holds that connection for the whole transaction, so other callers wait
 * instead of interleaving statements into it.
 */
export async function createPgliteClient(options: PgliteClientOptions = {}): Promise<PgliteSqlClient> {
  const schema = checkSchemaName(options.schema)
  // PGlite creates only the last directory of its data dir; a fresh clone has none of the parents.
  // (`memory://` and other URL forms are not directories.)
  if (options.dataDir && !options.dataDir.includes('://'))
    await mkdir(dirname(options.dataDir), { recursive: true })
  const db = await PGlite.create({
    dataDir: options.dataDir,
    ...(options.loadDataDir && !options.dataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers: { [INT8_OID]: parseInt8 },
  })
  try {
    // Session-level, outside any transaction, so it holds for every later statement; the schema
    // itself may not exist yet (the migrations create it), Postgres resolves the path per lookup.
    await db.exec(`SET search_path TO "${schema}"`)
  } catch (error) {
    await db.close()
    throw error
  }
  let closed = false
  return {
    schema,
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => {
      const result = await db.query<Row>(sql, [...params])
      return { rows: result.rows }
    },
    exec: async (sql) => {
      await db.exec(sql)
    },
    dump: () => db.dumpDataDir('none'),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn(
          transactionClient(
            {
              query: (sql, params) => tx.query(sql, params),
              exec: async (sql) => {
                await tx.exec(sql)
              },
            },
            schema,
          ),
        ),
      ),
    listen: async (channel, handler) => {
      checkChannelName(channel)
      if (closed) throw new Error('the database is closed')
      // PGlite calls handlers from a microtask, where a throw would be an uncaught exception; and
      // a fresh function per call keeps two listens of one handler independent (PGlite keys by identity).
      const callback = (payload: string): void => {
        try {
          handler(payload)
        } catch (error) {
          options.logger?.warn('NOTIFY handler threw', {
            channel,
            error: error instanceof Error ? error.message : String(error),
          })
        }
      }
      // The single connection never drops, so `onReconnect` is never due.
      const unlisten = await db.listen(channel, callback)
      let done = false
      return async () => {
        if (done || closed) return
        done = true
        await unlisten()
      }
    },
    close: async () => {
      if (closed) return
      closed = true
      await db.close()
    },
  }
}
