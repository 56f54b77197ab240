import type { Logger } from '@pontis/core'
import { type CustomTypesConfig, Pool, type PoolClient, types } from 'pg'
import { checkSchemaName, INT8_OID, parseInt8, type SqlClient, transactionClient } from './sql-client.js'

/** Options of {@link createPgClient}. */
export interface PgClientOptions {
  /** A `postgres://` connection URL. */
  readonly databaseUrl: string
  /** Schema used as `search_path` on every connection (created by the migrations). Default `public`. */
  readonly schema?: string
  /** Maximum connections of the pool. Default 10. */
  readonly maxConnections?: number
  /** Receives errors of idle pooled connections (server restart, network drop). */
  readonly logger?: Logger
}

// Per pool, not `types.setTypeParser`: that would change int8 parsing for every pg user in the process.
const typeParsers: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
}

/**
 * Splits a server `options` parameter off the URL: pg lets the URL's values override the config's,
 * so an `options` in the URL would silently drop the search_path set here.
 */
function splitOptions(databaseUrl: string): { connectionString: string; urlOptions: string | undefined } {
  let url: URL
  try {
    url = new URL(databaseUrl)
  } catch {
    return { connectionString: databaseUrl, urlOptions: undefined }
  }
  const urlOptions = url.searchParams.get('options') ?? undefined
  if (urlOptions === undefined) return { connectionString: databaseUrl, urlOptions }
  url.searchParams.delete('options')
  return { connectionString: url.toString(), urlOptions }
}

/** Opens a `pg.Pool` on PostgreSQL; transactions run on one checked-out connection. */
export async function createPgClient(options: PgClientOptions): Promise<SqlClient> {
  const schema = checkSchemaName(options.schema)
  const { connectionString, urlOptions } = splitOptions(options.databaseUrl)
  const pool = new Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    // Set at connection start-up, so no pooled connection ever runs a statement with another path.
    options: [urlOptions, `-c search_path=${schema}`].filter((part) => part !== undefined).join(' '),
    types: typeParsers,
  })
  // Without a listener an idle connection's error would crash the process; the pool replaces it.
  pool.on('error', (error) => {
    options.logger?.warn('idle PostgreSQL connection failed', { error: error.message })
  })
  let closed = false
  return {
    schema,
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => {
      const result = await pool.query(sql, [...params])
      return { rows: result.rows as Row[] }
    },
    exec: async (sql) => {
      // Without parameters pg uses the simple protocol, which accepts several statements.
      await pool.query(sql)
    },
    transaction: async (fn) => {
      const connection: PoolClient = await pool.connect()
      let broken: Error | undefined
      try {
        await connection.query('BEGIN')
        const tx = transactionClient(
          {
            query: (sql, params) => connection.query(sql, params),
            exec: async (sql) => {
              await connection.query(sql)
            },
          },
          schema,
        )
        const result = await fn(tx)
        await connection.query('COMMIT')
        return result
      } catch (error) {
        try {
          await connection.query('ROLLBACK')
        } catch (rollbackError) {
          // A connection that cannot roll back is in an unknown state: destroy it, not reuse it.
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))
        }
        throw error
      } finally {
        connection.release(broken)
      }
    },
    close: async () => {
      if (closed) return
      closed = true
      await pool.end()
    },
  }
}
