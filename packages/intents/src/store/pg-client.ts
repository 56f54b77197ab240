import type { Logger } from '@pontis/core'
import { Client, type CustomTypesConfig, type Notification, Pool, type PoolClient, types } from 'pg'
import {
  checkChannelName,
  checkSchemaName,
  INT8_OID,
  type ListenOptions,
  parseInt8,
  type SqlClient,
  transactionClient,
} from './sql-client.js'

/** Options of {@link createPgClient}. */
export interface PgClientOptions {
  /** A `postgres://` connection URL. */
  readonly databaseUrl: string
  /** Schema used as `search_path` on every connection (created by the migrations). Default `public`. */
  readonly schema?: string
  /** Maximum connections of the pool. Default 10. */
  readonly maxConnections?: number
  /** Receives errors of idle pooled connections and of the LISTEN connection (server restart, network drop). */
  readonly logger?: Logger
  /** Delays between attempts to re-open a lost LISTEN connection, doubling from `min` to `max` ms. Default 100 to 30000. */
  readonly listenBackoffMs?: { readonly min: number; readonly max: number }
  /** How often the idle LISTEN connection is probed with `SELECT 1`, so a silently dead one is replaced. Default 30000 ms. */
  readonly listenHealthCheckMs?: number
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
  // Created on the first `listen`: a pooled connection cannot hold LISTEN (it goes back to the pool).
  let listener: PgListener | undefined
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
    listen: async (channel, handler, listenOptions) => {
      checkChannelName(channel)
      if (closed) throw new Error('the database client is closed')
      listener ??= new PgListener({
        createClient: () =>
          new Client({
            connectionString,
            ...(urlOptions === undefined ? {} : { options: urlOptions }),
            types: typeParsers,
            // Named after the schema so an operator (or a test) can tell whose listener a backend is.
            application_name: `pontis_listen_${schema}`.slice(0, 63),
            keepAlive: true,
            connectionTimeoutMillis: 10_000,
            query_timeout: 10_000,
          }),
        logger: options.logger,
        minBackoffMs: options.listenBackoffMs?.min ?? 100,
        maxBackoffMs: options.listenBackoffMs?.max ?? 30_000,
        healthCheckMs: options.listenHealthCheckMs ?? 30_000,
      })
      return listener.listen(channel, handler, listenOptions)
    },
    close: async () => {
      if (closed) return
      closed = true
      await Promise.all([listener?.close(), pool.end()])
    },
  }
}

interface PgListenerOptions {
  readonly createClient: () => Client
  readonly logger: Logger | undefined
  readonly minBackoffMs: number
  readonly maxBackoffMs: number
  readonly healthCheckMs: number
}

interface ListenEntry {
  readonly handler: (payload: string) => void
  readonly onReconnect: (() => void) | undefined
}

/**
 * The LISTEN side of a pg client: one dedicated connection holding every channel, opened on the
 * first listen, re-opened with backoff (re-issuing every LISTEN) when it drops, released when the
 * last channel is unlistened.
 */
class PgListener {
  readonly #options: PgListenerOptions
  readonly #channels = new Map<string, Set<ListenEntry>>()
  /** The open connection, LISTENing on every channel of {@link #channels}. */
  #client: Client | undefined
  /** Connects, LISTENs and UNLISTENs run one at a time, so none sees a half-set-up connection. */
  #queue: Promise<unknown> = Promise.resolve()
  #retryTimer: NodeJS.Timeout | undefined
  #healthTimer: NodeJS.Timeout | undefined
  #attempt = 0
  /** The connection was lost since the last successful connect: tell listeners once it is back. */
  #lost = false
  #closed = false

  constructor(options: PgListenerOptions) {
    this.#options = options
  }

  async listen(
    channel: string,
    handler: (payload: string) => void,
    options: ListenOptions = {},
  ): Promise<() => Promise<void>> {
    const entry: ListenEntry = { handler, onReconnect: options.onReconnect }
    let entries = this.#channels.get(channel)
    const added = entries === undefined
    if (entries === undefined) {
      entries = new Set()
      this.#channels.set(channel, entries)
    }
    entries.add(entry)
    try {
      await this.#serial(async () => {
        if (this.#closed) throw new Error('the database client is closed')
        // #connect LISTENs on every channel in the map, this one included.
        if (this.#client === undefined) await this.#connect()
        else if (added) await this.#client.query(`LISTEN ${channel}`)
      })
    } catch (error) {
      await this.#unlisten(channel, entry)
      throw error
    }
    let done = false
    return async () => {
      if (done) return
      done = true
      await this.#unlisten(channel, entry)
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#channels.clear()
    await this.#serial(() => this.#release())
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn)
    this.#queue = run.catch(() => undefined)
    return run
  }

  async #unlisten(channel: string, entry: ListenEntry): Promise<void> {
    const entries = this.#channels.get(channel)
    if (entries === undefined || !entries.delete(entry) || entries.size > 0) return
    this.#channels.delete(channel)
    await this.#serial(async () => {
      if (this.#channels.has(channel)) return // listened again meanwhile
      if (this.#channels.size === 0) return this.#release()
      // A failed UNLISTEN only leaves notifications nobody handles; the connection stays useful.
      await this.#client?.query(`UNLISTEN ${channel}`).catch((error: Error) => {
        this.#options.logger?.warn('UNLISTEN failed', { channel, error: error.message })
      })
    })
  }

  /** Opens a connection and LISTENs on every channel; it becomes {@link #client} only once all succeeded. */
  async #connect(): Promise<void> {
    const client = this.#options.createClient()
    client.on('notification', (message: Notification) => {
      if (client === this.#client) this.#dispatch(message.channel, message.payload ?? '')
    })
    // Without an error listener a dropped connection would crash the process.
    client.on('error', (error: Error) => {
      if (client === this.#client) {
        this.#options.logger?.warn('PostgreSQL LISTEN connection failed', { error: error.message })
      }
      this.#dropped(client)
    })
    client.on('end', () => this.#dropped(client))
    try {
      await client.connect()
      for (const channel of this.#channels.keys()) await client.query(`LISTEN ${channel}`)
    } catch (error) {
      await client.end().catch(() => undefined)
      throw error
    }
    this.#client = client
    this.#attempt = 0
    clearTimeout(this.#retryTimer)
    this.#retryTimer = undefined
    this.#startHealthCheck(client)
    if (this.#lost) {
      this.#lost = false
      this.#options.logger?.info('PostgreSQL LISTEN connection re-opened', {
        channels: [...this.#channels.keys()],
      })
      for (const entries of [...this.#channels.values()]) {
        for (const entry of [...entries]) {
          try {
            entry.onReconnect?.()
          } catch (error) {
            this.#options.logger?.warn('LISTEN reconnect handler threw', { error: errorMessage(error) })
          }
        }
      }
    }
  }

  #dispatch(channel: string, payload: string): void {
    const entries = this.#channels.get(channel)
    if (entries === undefined) return
    // A copy: a handler may unlisten (itself or others) while we iterate.
    for (const entry of [...entries]) {
      try {
        entry.handler(payload)
      } catch (error) {
        this.#options.logger?.warn('NOTIFY handler threw', { channel, error: errorMessage(error) })
      }
    }
  }

  /** The current connection ended or failed: forget it and, while anyone listens, reconnect. */
  #dropped(client: Client): void {
    if (client !== this.#client) return
    this.#client = undefined
    this.#stopHealthCheck()
    client.end().catch(() => undefined)
    if (this.#closed || this.#channels.size === 0) return
    this.#lost = true
    this.#options.logger?.warn('PostgreSQL LISTEN connection lost; reconnecting', {
      channels: [...this.#channels.keys()],
    })
    this.#scheduleRetry()
  }

  #scheduleRetry(): void {
    if (this.#retryTimer !== undefined || this.#closed) return
    const { minBackoffMs, maxBackoffMs } = this.#options
    const base = Math.min(maxBackoffMs, minBackoffMs * 2 ** this.#attempt)
    this.#attempt++
    // Jitter, so the listeners of many processes do not reconnect in lockstep after a restart.
    const delay = base / 2 + Math.random() * (base / 2)
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      void this.#serial(async () => {
        if (this.#closed || this.#client !== undefined || this.#channels.size === 0) return
        try {
          await this.#connect()
        } catch (error) {
          this.#options.logger?.warn('re-opening the PostgreSQL LISTEN connection failed', {
            error: errorMessage(error),
            attempt: this.#attempt,
          })
          this.#scheduleRetry()
        }
      })
    }, delay)
    // Reconnecting alone must not keep the process alive; the server using it does.
    this.#retryTimer.unref()
  }

  #startHealthCheck(client: Client): void {
    this.#stopHealthCheck()
    this.#healthTimer = setInterval(() => {
      // query_timeout bounds it: a connection whose peer vanished without a reset fails here.
      client.query('SELECT 1').catch((error: Error) => {
        if (client !== this.#client) return
        this.#options.logger?.warn('PostgreSQL LISTEN connection unresponsive', { error: error.message })
        this.#dropped(client)
      })
    }, this.#options.healthCheckMs)
    this.#healthTimer.unref()
  }

  #stopHealthCheck(): void {
    clearInterval(this.#healthTimer)
    this.#healthTimer = undefined
  }

  /** Ends the connection and every timer; a later listen starts afresh. */
  async #release(): Promise<void> {
    clearTimeout(this.#retryTimer)
    this.#retryTimer = undefined
    this.#stopHealthCheck()
    this.#attempt = 0
    this.#lost = false
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => undefined)
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
