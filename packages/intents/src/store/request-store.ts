import type { IntentsApi, Logger } from '@pontis/core'
import { type HistoryPage, type HistoryQuery, queryHistory } from './history.js'
import { keepMigratedSnapshot, migratedSnapshot } from './memory-snapshots.js'
import { type AppliedMigration, runMigrations } from './migrations.js'
import { createPgClient } from './pg-client.js'
import { createPgliteClient } from './pglite-client.js'
import { DEFAULT_SCHEMA, type SqlClient } from './sql-client.js'

/** How a deposit address is bound: `strict` to one order, `open` to a route. */
export type DepositAddressType = 'open' | 'strict'

/** A JSON object (what `jsonb` columns hold here). */
export type JsonObject = Readonly<Record<string, unknown>>

/**
 * A request as the quote issues it and {@link RequestStore.insertRequest} stores it: one record
 * from quote to store. `Quote` is the quote's own JSON, opaque to the store.
 */
export interface NewRequest<Quote extends JsonObject = JsonObject> {
  /** Request id, `0x` + 64 hex digits (any case; stored lower-case). */
  readonly id: string
  readonly originChainId: number
  readonly destinationChainId: number
  /** The quote request's `user`. */
  readonly userAddress: string
  readonly recipient: string
  readonly refundTo: string
  readonly originCurrency: string
  readonly destinationCurrency: string
  readonly tradeType: IntentsApi.TradeType
  /** Smallest units, 0 to 2^256 - 1. */
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly minimumAmountOut: bigint
  /** Set together with {@link depositAddressType}, or neither. */
  readonly depositAddress?: string | null
  readonly depositAddressType?: DepositAddressType | null
  /**
   * What reads report as the deposit's id when the origin family tags deposits by sender and nonce
   * (`QuotingCapability.depositNonceTag`), `0x` + 64 hex; unique per origin chain.
   */
  readonly depositTag?: string | null
  readonly apiKeyId?: string | null
  readonly referrer?: string | null
  /** Everything later stages need (original request, order, fees); must be JSON-serialisable. */
  readonly quote: Quote
  /** Unix milliseconds after which the request is no longer filled. */
  readonly expiresAt: number
}

/** A request row, camelCase, amounts as bigint, timestamps as Unix milliseconds. */
export interface StoredRequest {
  readonly id: string
  readonly status: IntentsApi.RequestStatus
  readonly originChainId: number
  readonly destinationChainId: number
  readonly userAddress: string
  readonly recipient: string
  readonly refundTo: string
  readonly originCurrency: string
  readonly destinationCurrency: string
  readonly tradeType: IntentsApi.TradeType
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly minimumAmountOut: bigint
  readonly depositAddress: string | null
  readonly depositAddressType: DepositAddressType | null
  readonly apiKeyId: string | null
  readonly referrer: string | null
  readonly quote: Record<string, unknown>
  readonly inTxHashes: string[]
  readonly txHashes: string[]
  readonly failReason: IntentsApi.FailReason
  readonly refundFailReason: IntentsApi.RefundFailReason
  readonly details: Record<string, unknown> | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly expiresAt: number
}

/** Thrown by {@link RequestStore.insertRequest} when a request with the same id exists. */
export class DuplicateRequestError extends Error {
  override readonly name = 'DuplicateRequestError'
  constructor(readonly requestId: string) {
    super(`request ${requestId} already exists`)
  }
}

/**
 * Thrown by {@link RequestStore.insertRequest} when another request on the same origin chain holds
 * the deposit tag (two instances handed out the same nonce); quote again with another nonce.
 */
export class DepositTagTakenError extends Error {
  override readonly name = 'DepositTagTakenError'
  constructor(readonly tag: string) {
    super(`deposit tag ${tag} is taken by another request on this origin chain`)
  }
}

/** A `requests` row as the drivers return it (see {@link requestFromRow}). */
export interface RequestRow {
  id: string
  status: IntentsApi.RequestStatus
  origin_chain_id: number
  destination_chain_id: number
  user_address: string
  recipient: string
  refund_to: string
  origin_currency: string
  destination_currency: string
  trade_type: IntentsApi.TradeType
  amount_in: string
  amount_out: string
  minimum_amount_out: string
  deposit_address: string | null
  deposit_address_type: DepositAddressType | null
  api_key_id: string | null
  referrer: string | null
  quote: Record<string, unknown>
  in_tx_hashes: string[]
  tx_hashes: string[]
  fail_reason: IntentsApi.FailReason
  refund_fail_reason: IntentsApi.RefundFailReason
  details: Record<string, unknown> | null
  created_at: number
  updated_at: number
  expires_at: number
}

// Listed, not `*`, so columns added by later migrations do not leak into these rows.
export const REQUEST_COLUMNS = `id, status, origin_chain_id, destination_chain_id, user_address, recipient, refund_to,
  origin_currency, destination_currency, trade_type, amount_in, amount_out, minimum_amount_out,
  deposit_address, deposit_address_type, api_key_id, referrer, quote, in_tx_hashes, tx_hashes,
  fail_reason, refund_fail_reason, details, created_at, updated_at, expires_at`

// An insert does not read the quote back: it is the largest column, and the caller has it.
const INSERTED_COLUMNS = REQUEST_COLUMNS.replace(' quote,', '')

const REQUEST_ID = /^0x[0-9a-fA-F]{64}$/
const MAX_UINT256 = (1n << 256n) - 1n
const FAILED_STATUSES: ReadonlySet<IntentsApi.RequestStatus> = new Set(['failure', 'fallback', 'refund'])

/** The {@link StoredRequest} of a row selected with {@link REQUEST_COLUMNS}. */
export function requestFromRow(row: RequestRow): StoredRequest {
  return {
    id: row.id,
    status: row.status,
    originChainId: row.origin_chain_id,
    destinationChainId: row.destination_chain_id,
    userAddress: row.user_address,
    recipient: row.recipient,
    refundTo: row.refund_to,
    originCurrency: row.origin_currency,
    destinationCurrency: row.destination_currency,
    tradeType: row.trade_type,
    amountIn: BigInt(row.amount_in),
    amountOut: BigInt(row.amount_out),
    minimumAmountOut: BigInt(row.minimum_amount_out),
    depositAddress: row.deposit_address,
    depositAddressType: row.deposit_address_type,
    apiKeyId: row.api_key_id,
    referrer: row.referrer,
    quote: row.quote,
    inTxHashes: row.in_tx_hashes,
    txHashes: row.tx_hashes,
    failReason: row.fail_reason,
    refundFailReason: row.refund_fail_reason,
    details: row.details,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  }
}

function checkChainId(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} ${value} is not a chain id`)
}

function checkAmount(name: string, value: bigint): void {
  if (value < 0n || value > MAX_UINT256) throw new RangeError(`${name} ${value} is outside 0 to 2^256 - 1`)
}

function checkTimestamp(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} ${value} is not a Unix millisecond timestamp`)
  }
}

/** Checked here as well as by the table, so a caller's mistake reads as one and not as a SQL error. */
function checkNewRequest(request: NewRequest): void {
  if (!REQUEST_ID.test(request.id)) throw new RangeError(`request id ${request.id} is not 0x + 64 hex digits`)
  checkChainId('originChainId', request.originChainId)
  checkChainId('destinationChainId', request.destinationChainId)
  checkAmount('amountIn', request.amountIn)
  checkAmount('amountOut', request.amountOut)
  checkAmount('minimumAmountOut', request.minimumAmountOut)
  checkTimestamp('expiresAt', request.expiresAt)
  if (((request.depositAddress ?? null) === null) !== ((request.depositAddressType ?? null) === null)) {
    throw new RangeError('depositAddress and depositAddressType are set together or not at all')
  }
  if (request.depositTag != null && !REQUEST_ID.test(request.depositTag))
    throw new RangeError(`depositTag ${request.depositTag} is not 0x + 64 hex digits`)
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    error.code === '23505' &&
    'constraint' in error &&
    error.constraint === constraint
  )
}

/**
 * The public status record of a stored request (`GET /intents/status/v3`). `failReason` follows the
 * document's rule whatever is recorded: `N/A` unless the status is failure, fallback or refund,
 * and there the recorded reason or `UNKNOWN`.
 */
export function toStatusRecord(stored: StoredRequest): IntentsApi.StatusRecordV3 {
  const failed = FAILED_STATUSES.has(stored.status)
  return {
    requestId: stored.id,
    status: stored.status,
    inTxHashes: [...stored.inTxHashes],
    txHashes: [...stored.txHashes],
    updatedAt: stored.updatedAt,
    originChainId: stored.originChainId,
    destinationChainId: stored.destinationChainId,
    details: stored.details,
    failReason: failed ? (stored.failReason === 'N/A' ? 'UNKNOWN' : stored.failReason) : 'N/A',
    refundFailReason: stored.refundFailReason,
    quoteCreatedAt: stored.createdAt,
  }
}

/** A request waiting for {@link RequestStore.insertRequest}'s next batch. */
interface PendingInsert {
  readonly request: NewRequest
  readonly now: number
  resolve(stored: StoredRequest): void
  reject(error: unknown): void
}

// 20 parameters a row: far below PostgreSQL's 65 535 per statement.
const MAX_INSERT_BATCH = 100

function insertedOf(row: Omit<RequestRow, 'quote'>, pending: PendingInsert): StoredRequest {
  return requestFromRow({ ...row, quote: pending.request.quote })
}

function insertErrorOf(error: unknown, request: NewRequest): unknown {
  if (isUniqueViolation(error, 'requests_pkey')) return new DuplicateRequestError(request.id.toLowerCase())
  if (isUniqueViolation(error, 'requests_deposit_tag_idx'))
    return new DepositTagTakenError(request.depositTag?.toLowerCase() ?? '')
  return error
}

/** Options of the {@link RequestStore} constructor. */
export interface RequestStoreOptions {
  /** Clock, Unix milliseconds. Default `Date.now`. */
  readonly now?: () => number
}

/**
 * Requests of the intent service, on any {@link SqlClient}. Later stages (indexer, solver,
 * webhooks, api keys) share {@link client} for their own tables.
 */
export class RequestStore {
  /** The database; owned by the store ({@link close} closes it). */
  readonly client: SqlClient
  readonly #now: () => number
  readonly #pendingInserts: PendingInsert[] = []
  #inserting = false

  constructor(client: SqlClient, options: RequestStoreOptions = {}) {
    this.client = client
    this.#now = options.now ?? Date.now
  }

  /** Applies missing migrations (idempotent); returns the ones this call applied. */
  migrate(): Promise<AppliedMigration[]> {
    return runMigrations(this.client, { now: this.#now })
  }

  /**
   * Stores an answered quote with status `waiting`, `createdAt = updatedAt = now()`.
   * @throws {DuplicateRequestError} when the id is taken.
   * @throws {DepositTagTakenError} when the deposit tag is taken on that origin chain.
   * @throws {RangeError} on a malformed id, chain id, amount or timestamp.
   */
  async insertRequest(request: NewRequest): Promise<StoredRequest> {
    checkNewRequest(request)
    const now = this.#now()
    checkTimestamp('now()', now)
    return new Promise((resolve, reject) => {
      this.#pendingInserts.push({ request, now, resolve, reject })
      if (this.#inserting) return
      // After this turn of the event loop, so the quotes answered in the same turn go in together:
      // PGlite runs a statement on this thread, so nothing would ever wait for one in flight.
      this.#inserting = true
      setImmediate(() => void this.#insertPending())
    })
  }

  /**
   * Group commit: the inserts asked for in one turn of the event loop, and those asked for while a
   * batch is in flight, go in together as one multi-row `INSERT` (one statement, one commit), so a
   * busy service pays the database's per-statement cost once per batch instead of once per quote
   * (issue 11: the PGlite insert was half a quote's CPU; a row costs about a third as much in a
   * batch of ten). An idle service inserts each request alone, one event-loop turn later. A batch
   * that fails is retried row by row, so every quote gets its own outcome and error.
   */
  async #insertPending(): Promise<void> {
    try {
      while (this.#pendingInserts.length > 0) {
        const batch = this.#pendingInserts.splice(0, MAX_INSERT_BATCH)
        if (batch.length > 1) {
          const rows = await this.#insertRows(batch).catch(() => undefined)
          if (rows !== undefined) {
            const byId = new Map(rows.map((row) => [row.id, row]))
            for (const pending of batch)
              pending.resolve(insertedOf(byId.get(pending.request.id.toLowerCase())!, pending))
            continue
          }
        }
        for (const pending of batch) {
          try {
            const [row] = await this.#insertRows([pending])
            pending.resolve(insertedOf(row!, pending))
          } catch (error) {
            pending.reject(insertErrorOf(error, pending.request))
          }
        }
      }
    } finally {
      this.#inserting = false
    }
  }

  async #insertRows(batch: readonly PendingInsert[]): Promise<Array<Omit<RequestRow, 'quote'>>> {
    const params: unknown[] = []
    const values = batch.map(({ request, now }) => {
      const at = params.length
      params.push(
        request.id.toLowerCase(),
        request.originChainId,
        request.destinationChainId,
        request.userAddress,
        request.recipient,
        request.refundTo,
        request.originCurrency,
        request.destinationCurrency,
        request.tradeType,
        // Decimal strings: exact on both drivers, whatever their bigint support.
        request.amountIn.toString(),
        request.amountOut.toString(),
        request.minimumAmountOut.toString(),
        request.depositAddress ?? null,
        request.depositAddressType ?? null,
        request.apiKeyId ?? null,
        request.referrer ?? null,
        // Serialised here: pg would turn a top-level array into a Postgres array, not JSON.
        JSON.stringify(request.quote),
        now,
        request.expiresAt,
        request.depositTag?.toLowerCase() ?? null,
      )
      const $ = (n: number) => `$${at + n}`
      return `(${$(1)}, 'waiting', ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, ${$(8)}, ${$(9)}, ${$(10)},
        ${$(11)}, ${$(12)}, ${$(13)}, ${$(14)}, ${$(15)}, ${$(16)}, ${$(17)}::jsonb, ${$(18)}, ${$(18)}, ${$(19)}, ${$(20)})`
    })
    const { rows } = await this.client.query<Omit<RequestRow, 'quote'>>(
      `INSERT INTO requests (id, status, origin_chain_id, destination_chain_id, user_address, recipient,
         refund_to, origin_currency, destination_currency, trade_type, amount_in, amount_out,
         minimum_amount_out, deposit_address, deposit_address_type, api_key_id, referrer, quote,
         created_at, updated_at, expires_at, deposit_tag)
       VALUES ${values.join(',\n')}
       RETURNING ${INSERTED_COLUMNS}`,
      params,
    )
    return rows
  }

  /** The request with this id (any case), or undefined. */
  getRequest(id: string): Promise<StoredRequest | undefined> {
    return this.getRequestWith(this.client, id)
  }

  /** The request a tagged deposit on `originChainId` belongs to (see {@link NewRequest.depositTag}). */
  async findByDepositTag(originChainId: number, tag: string): Promise<StoredRequest | undefined> {
    if (!REQUEST_ID.test(tag)) return undefined
    const { rows } = await this.client.query<RequestRow>(
      `SELECT ${REQUEST_COLUMNS} FROM requests WHERE origin_chain_id = $1 AND deposit_tag = $2`,
      [originChainId, tag.toLowerCase()],
    )
    return rows[0] === undefined ? undefined : requestFromRow(rows[0])
  }

  /** {@link getRequest} through another client, e.g. inside a transaction that just wrote the row. */
  async getRequestWith(client: SqlClient, id: string): Promise<StoredRequest | undefined> {
    if (!REQUEST_ID.test(id)) return undefined
    const { rows } = await client.query<RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM requests WHERE id = $1`, [
      id.toLowerCase(),
    ])
    return rows[0] === undefined ? undefined : requestFromRow(rows[0])
  }

  /**
   * Requests matching a fixed SQL condition written by callers in this package (never user input;
   * values go in `params`), oldest first.
   */
  async listRequests(condition: string, params: readonly unknown[], limit: number): Promise<StoredRequest[]> {
    const { rows } = await this.client.query<RequestRow>(
      `SELECT ${REQUEST_COLUMNS} FROM requests WHERE ${condition} ORDER BY created_at, id LIMIT ${Math.max(1, Math.floor(limit))}`,
      params,
    )
    return rows.map(requestFromRow)
  }

  /**
   * Requests using this deposit address (exact match: callers pass the chain's canonical form),
   * newest first. An `open` address can serve several requests.
   */
  async findByDepositAddress(address: string): Promise<StoredRequest[]> {
    const { rows } = await this.client.query<RequestRow>(
      `SELECT ${REQUEST_COLUMNS} FROM requests WHERE deposit_address = $1 ORDER BY created_at DESC, id`,
      [address],
    )
    return rows.map(requestFromRow)
  }

  /** One page of the request history with each request's transactions (see `history.ts`). */
  history(query: HistoryQuery): Promise<HistoryPage> {
    return queryHistory(this.client, query)
  }

  /** See {@link toStatusRecord}. */
  toStatusRecord(stored: StoredRequest): IntentsApi.StatusRecordV3 {
    return toStatusRecord(stored)
  }

  /** Closes the database. */
  close(): Promise<void> {
    return this.client.close()
  }
}

/** Options of {@link openRequestStore}. */
export interface OpenRequestStoreOptions {
  /** PostgreSQL URL (`DATABASE_URL`). When set (non-empty) it wins over {@link dataDir}. */
  readonly databaseUrl?: string
  /** PGlite data directory; in memory when absent. */
  readonly dataDir?: string
  /** Schema holding every table, created when missing. Default `public`. */
  readonly schema?: string
  /** Clock, Unix milliseconds. Default `Date.now`. */
  readonly now?: () => number
  /** Receives PostgreSQL connection warnings. */
  readonly logger?: Logger
}

/**
 * Opens the request store: PostgreSQL when `databaseUrl` is set, otherwise embedded PGlite (on
 * `dataDir`, or in memory). Resolves once migrations are applied; rejects (and closes the
 * database) when they cannot be, for example on a {@link MigrationError}.
 */
export async function openRequestStore(options: OpenRequestStoreOptions = {}): Promise<RequestStore> {
  if (options.databaseUrl === undefined || options.databaseUrl === '') return openPgliteStore(options)
  const client = await createPgClient({
    databaseUrl: options.databaseUrl,
    schema: options.schema,
    logger: options.logger,
  })
  return migrated(new RequestStore(client, { now: options.now }), client)
}

async function openPgliteStore(options: OpenRequestStoreOptions): Promise<RequestStore> {
  const schema = options.schema ?? DEFAULT_SCHEMA
  const inMemory = options.dataDir === undefined
  const snapshot = inMemory ? await migratedSnapshot(schema) : undefined
  if (snapshot) {
    try {
      const client = await createPgliteClient({ schema: options.schema, loadDataDir: snapshot })
      return await migrated(new RequestStore(client, { now: options.now }), client)
    } catch {
      // An unreadable snapshot costs only the time it saves: start from scratch.
    }
  }
  const client = await createPgliteClient({ dataDir: options.dataDir, schema: options.schema })
  const store = await migrated(new RequestStore(client, { now: options.now }), client)
  // Taken before the store is handed out, so the snapshot holds the migrations and nothing else.
  if (inMemory) await keepMigratedSnapshot(schema, () => client.dump(), snapshot)
  return store
}

async function migrated(store: RequestStore, client: SqlClient): Promise<RequestStore> {
  try {
    await store.migrate()
  } catch (error) {
    await client.close()
    throw error
  }
  return store
}
