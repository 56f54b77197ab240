/**
 * The one database contract the store is written against. PGlite (embedded) and PostgreSQL (`pg`)
 * both speak the same SQL dialect; only connection handling differs, and lives behind this.
 */

/** A row as the driver returns it: column name to parsed value. */
export type SqlRow = Record<string, unknown>

/** Options of {@link SqlClient.listen}. */
export interface ListenOptions {
  /**
   * Called after the listening connection was lost and re-established (PostgreSQL only):
   * notifications sent in between are lost, so the caller re-reads whatever it follows.
   */
  readonly onReconnect?: () => void
}

/** Result of {@link SqlClient.query}. */
export interface SqlResult<Row> {
  readonly rows: Row[]
}

/**
 * A minimal SQL client. Value conventions, the same on both backends: `bigint` (int8) columns come
 * back as JS numbers (they hold millisecond timestamps and chain ids, all below 2^53; a larger
 * value fails the query instead of losing precision), `numeric` as decimal strings, `jsonb` as
 * parsed JSON, `text[]` as string arrays.
 */
export interface SqlClient {
  /** The schema every connection of this client uses as its `search_path`. */
  readonly schema: string
  /** Runs one statement with `$1`-style parameters. */
  query<Row extends object = SqlRow>(sql: string, params?: readonly unknown[]): Promise<SqlResult<Row>>
  /** Runs a script of one or more statements without parameters (migrations). */
  exec(sql: string): Promise<void>
  /**
   * Runs `fn` inside a transaction: committed when `fn` resolves, rolled back when it throws. The
   * `tx` client is bound to the transaction and must not be used after `fn` settles. Calling
   * `transaction` on a `tx` nests with a savepoint.
   */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>
  /**
   * Runs `handler` with the payload of every `NOTIFY` on `channel` (a plain lower-case identifier)
   * committed after this resolves, until the returned function is called. Notifications are
   * delivered on commit, never from a rolled-back transaction. Rejects on a transaction client.
   */
  listen(
    channel: string,
    handler: (payload: string) => void,
    options?: ListenOptions,
  ): Promise<() => Promise<void>>
  /** Closes the connection(s). Idempotent. Rejects on a transaction client. */
  close(): Promise<void>
}

/** Schema names are restricted to plain lower-case identifiers, so they never need quoting in a connection option. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Default schema. */
export const DEFAULT_SCHEMA = 'public'

/** Returns `schema` (default `public`) when it is a plain identifier; throws otherwise. */
export function checkSchemaName(schema: string = DEFAULT_SCHEMA): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `invalid schema name ${JSON.stringify(schema)}: use lower-case letters, digits and _ (at most 63, not starting with a digit)`,
    )
  }
  return schema
}

/** Returns `channel` when it is a plain lower-case identifier (so it never needs quoting); throws otherwise. */
export function checkChannelName(channel: string): string {
  if (!SCHEMA_NAME.test(channel)) {
    throw new Error(
      `invalid channel name ${JSON.stringify(channel)}: use lower-case letters, digits and _ (at most 63, not starting with a digit)`,
    )
  }
  return channel
}

/** Type OID of int8 / bigint. */
export const INT8_OID = 20

/** Parses an int8 text value to a JS number, refusing values that would lose precision. */
export function parseInt8(value: string): number {
  const parsed = Number(value)
  if (!Number.isSafeInteger(parsed))
    throw new RangeError(`bigint value ${value} does not fit a JS number exactly`)
  return parsed
}

/** What a transaction-bound connection can do; both drivers' transaction handles fit. */
export interface TransactionHandle {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>
  exec(sql: string): Promise<void>
}

/**
 * Wraps a connection that is already inside a transaction as a {@link SqlClient}; its own
 * `transaction` nests with savepoints (`depth` names them).
 */
export function transactionClient(handle: TransactionHandle, schema: string, depth = 0): SqlClient {
  const client: SqlClient = {
    schema,
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => {
      const result = await handle.query(sql, [...params])
      return { rows: result.rows as Row[] }
    },
    exec: (sql) => handle.exec(sql),
    transaction: async <T>(fn: (tx: SqlClient) => Promise<T>) => {
      const savepoint = `pontis_sp_${depth + 1}`
      await handle.exec(`SAVEPOINT ${savepoint}`)
      try {
        const result = await fn(transactionClient(handle, schema, depth + 1))
        await handle.exec(`RELEASE SAVEPOINT ${savepoint}`)
        return result
      } catch (error) {
        // If even this fails the outer transaction is aborted and fails on its own; keep the cause.
        await handle.exec(`ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => undefined)
        throw error
      }
    },
    // A transaction's connection goes back to the pool afterwards, taking a LISTEN with it; listeners belong to the client.
    listen: () => Promise.reject(new Error('listen on the client, not a transaction bound to it')),
    close: () => Promise.reject(new Error('close the client, not a transaction bound to it')),
  }
  return client
}

/**
 * Takes the transaction-scoped advisory lock of (`lockClass`, hash of `key`) on `tx`: every process
 * on the database that asks for the same pair waits until this transaction ends. PGlite and
 * PostgreSQL both have it.
 */
export async function lockForTransaction(tx: SqlClient, lockClass: number, key: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2::text))', [lockClass, key])
}
