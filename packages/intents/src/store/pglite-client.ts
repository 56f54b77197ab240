import { PGlite } from '@electric-sql/pglite'
import { checkSchemaName, INT8_OID, parseInt8, type SqlClient, transactionClient } from './sql-client.js'

/** Options of {@link createPgliteClient}. */
export interface PgliteClientOptions {
  /** Directory holding the database files; in memory when absent. One process at a time may open it. */
  readonly dataDir?: string
  /** Schema used as `search_path` (created by the migrations). Default `public`. */
  readonly schema?: string
}

/**
 * Opens embedded PostgreSQL (PGlite). PGlite is a single connection that runs one query at a time;
 * its own `transaction` API holds that connection for the whole transaction, so other callers wait
 * instead of interleaving statements into it.
 */
export async function createPgliteClient(options: PgliteClientOptions = {}): Promise<SqlClient> {
  const schema = checkSchemaName(options.schema)
  const db = await PGlite.create({
    dataDir: options.dataDir,
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
    close: async () => {
      if (closed) return
      closed = true
      await db.close()
    },
  }
}
