/**
 * The request history's query (`GET /requests/v3` and `/v2`): filters that each map to an index of
 * migration 006, a keyset page on (timestamp, id) in either direction, and the page's transactions
 * (deposits and solver fills or refunds) in two more indexed reads. Never OFFSET: a page costs the
 * same wherever it is in the history.
 */
import { canonicalId, type IntentsApi } from '@pontis/core'
import { REQUEST_COLUMNS, type RequestRow, requestFromRow, type StoredRequest } from './request-store.js'
import type { SqlClient } from './sql-client.js'

/**
 * What to list; every member is optional and they combine with AND. Lists are alternatives of one
 * fact (the forms an address or hash may be stored in); the caller computes them.
 */
export interface HistoryFilter {
  /** Request ids, lower-case; every listed one must match (`id` and `orderId` together). */
  readonly ids?: readonly string[]
  /** Forms of one address: the request's user or its recipient is one of them. */
  readonly users?: readonly string[]
  /** Forms of one address: the recipient is one of them. */
  readonly recipients?: readonly string[]
  /** Forms of one hash: a deposit, fill or refund transaction. */
  readonly hashes?: readonly string[]
  readonly depositTxHashes?: readonly string[]
  readonly fillTxHashes?: readonly string[]
  readonly refundTxHashes?: readonly string[]
  readonly originChainId?: number
  readonly destinationChainId?: number
  /** Origin or destination. */
  readonly chainId?: number
  readonly depositAddress?: string
  readonly status?: IntentsApi.RequestStatus
  readonly referrer?: string
  /** The quote request's `referrerAddress`, any letter case. */
  readonly referrerAddress?: string
  /** Only the requests quoted with this API key (a partner's scope). */
  readonly apiKeyId?: string
  /** Inclusive bounds on `createdAt`, Unix milliseconds. */
  readonly createdFrom?: number
  readonly createdTo?: number
  /**
   * Set by {@link resolveHashLookups}: the requests whose transactions `hashes` and
   * `depositTxHashes` named, which the page query then takes by primary key.
   */
  readonly matchedIds?: readonly string[]
}

export type HistorySortBy = 'createdAt' | 'updatedAt'
export type HistoryDirection = 'asc' | 'desc'

/** Where the previous page ended: its last item's sort timestamp and id. */
export interface HistoryPosition {
  readonly at: number
  readonly id: string
}

export interface HistoryQuery {
  readonly filter: HistoryFilter
  readonly sortBy: HistorySortBy
  readonly direction: HistoryDirection
  readonly after?: HistoryPosition
  /** Items per page, 1 or more. */
  readonly limit: number
}

/** A transaction of a request, as the indexer or the solver recorded it. */
export interface HistoryTransaction {
  readonly hash: string
  readonly chainId: number
  /** When it was recorded (Unix milliseconds). */
  readonly at: number
  readonly block?: number
  /** For solver transactions: confirmed (`success`) or reverted (`failure`); absent while in flight. */
  readonly outcome?: 'success' | 'failure'
  /** Deposits only: who sent it. */
  readonly depositor?: string
}

export interface HistoryEntry {
  readonly request: StoredRequest
  /** In `inTxHashes` order; a hash nobody recorded details for is on the origin chain. */
  readonly inTxs: readonly HistoryTransaction[]
  /** In `txHashes` order; fills are on the destination chain, refunds on the origin chain. */
  readonly outTxs: readonly HistoryTransaction[]
}

export interface HistoryPage {
  readonly entries: readonly HistoryEntry[]
  /** The position after the last entry, when more may follow. */
  readonly next?: HistoryPosition
}

const SORT_COLUMNS: Readonly<Record<HistorySortBy, string>> = {
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

const REFUND_KINDS = ['refund', 'excess_refund']

/** The WHERE clause and its parameters; every value is a parameter, never SQL text. */
function conditionsOf(filter: HistoryFilter, params: unknown[]): string[] {
  const $ = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  const where: string[] = []
  for (const id of filter.ids ?? []) where.push(`id = ${$(id)}`)
  if (filter.matchedIds) where.push(`id = ANY(${$(filter.matchedIds)}::text[])`)
  if (filter.users) {
    const users = $(filter.users)
    where.push(`(user_address = ANY(${users}::text[]) OR recipient = ANY(${users}::text[]))`)
  }
  if (filter.recipients) where.push(`recipient = ANY(${$(filter.recipients)}::text[])`)
  if (filter.hashes) {
    const hashes = $(filter.hashes)
    where.push(`(in_tx_hashes && ${hashes}::text[] OR tx_hashes && ${hashes}::text[])`)
  }
  if (filter.depositTxHashes) where.push(`in_tx_hashes && ${$(filter.depositTxHashes)}::text[]`)
  const solverTransaction = (hashes: readonly string[], kinds: readonly string[]) =>
    `id IN (SELECT request_id FROM solver_jobs WHERE transaction_id = ANY(${$(hashes)}::text[])
       AND kind = ANY(${$(kinds)}::text[]) AND request_id IS NOT NULL)`
  if (filter.fillTxHashes) where.push(solverTransaction(filter.fillTxHashes, ['fill']))
  if (filter.refundTxHashes) where.push(solverTransaction(filter.refundTxHashes, REFUND_KINDS))
  if (filter.originChainId !== undefined) where.push(`origin_chain_id = ${$(filter.originChainId)}`)
  if (filter.destinationChainId !== undefined)
    where.push(`destination_chain_id = ${$(filter.destinationChainId)}`)
  if (filter.chainId !== undefined) {
    const chain = $(filter.chainId)
    where.push(`(origin_chain_id = ${chain} OR destination_chain_id = ${chain})`)
  }
  if (filter.depositAddress !== undefined) where.push(`deposit_address = ${$(filter.depositAddress)}`)
  if (filter.status !== undefined) where.push(`status = ${$(filter.status)}`)
  if (filter.referrer !== undefined) where.push(`referrer = ${$(filter.referrer)}`)
  if (filter.referrerAddress !== undefined)
    where.push(`lower(quote->'request'->>'referrerAddress') = lower(${$(filter.referrerAddress)})`)
  if (filter.apiKeyId !== undefined) where.push(`api_key_id = ${$(filter.apiKeyId)}`)
  if (filter.createdFrom !== undefined) where.push(`created_at >= ${$(filter.createdFrom)}`)
  if (filter.createdTo !== undefined) where.push(`created_at <= ${$(filter.createdTo)}`)
  return where
}

/**
 * Turns the hash lookups (`hashes`, `depositTxHashes`) into the ids of the requests they name, in
 * a query of their own. Inside the page query the planner cannot estimate how few rows an array
 * overlap (`&&`) on the GIN indexes matches (a hash is never a common element), and on a large
 * table it walked the whole timestamp index for the 20 newest matches instead (49 ms on 20 000
 * requests, growing with the table); alone, the GIN indexes are the only way to answer it.
 */
export async function resolveHashLookups(client: SqlClient, filter: HistoryFilter): Promise<HistoryFilter> {
  const { hashes, depositTxHashes, ...rest } = filter
  if (hashes === undefined && depositTxHashes === undefined) return filter
  const params: unknown[] = []
  const sets: string[] = []
  if (hashes !== undefined) {
    params.push(hashes)
    sets.push(
      `SELECT id FROM requests WHERE in_tx_hashes && $${params.length}::text[]
       UNION SELECT id FROM requests WHERE tx_hashes && $${params.length}::text[]`,
    )
  }
  if (depositTxHashes !== undefined) {
    params.push(depositTxHashes)
    sets.push(`SELECT id FROM requests WHERE in_tx_hashes && $${params.length}::text[]`)
  }
  const { rows } = await client.query<{ id: string }>(
    sets.map((set) => `(${set})`).join(' INTERSECT '),
    params,
  )
  const matched = rows.map((row) => row.id)
  const previous = rest.matchedIds
  return { ...rest, matchedIds: previous ? previous.filter((id) => matched.includes(id)) : matched }
}

/** The SQL of one page (hash lookups resolved first), for EXPLAIN in the benchmark and for {@link queryHistory}. */
export function historySql(query: HistoryQuery): { text: string; params: unknown[] } {
  const params: unknown[] = []
  const where = conditionsOf(query.filter, params)
  const column = SORT_COLUMNS[query.sortBy]
  const direction = query.direction === 'asc' ? 'ASC' : 'DESC'
  if (query.after) {
    params.push(query.after.at, query.after.id)
    // A row comparison: the (timestamp, id) index answers it as one range.
    where.push(
      `(${column}, id) ${query.direction === 'asc' ? '>' : '<'} ($${params.length - 1}, $${params.length})`,
    )
  }
  params.push(Math.max(1, Math.floor(query.limit)) + 1)
  const text = `SELECT ${REQUEST_COLUMNS} FROM requests
    ${where.length > 0 ? `WHERE ${where.join('\n      AND ')}` : ''}
    ORDER BY ${column} ${direction}, id ${direction}
    LIMIT $${params.length}`
  return { text, params }
}

interface DepositRow {
  request_id: string
  chain_id: number | string
  transaction_id: string
  block_number: number | string | null
  seen_at: number | string
  depositor: string
}

interface JobRow {
  request_id: string
  chain_id: number | string
  transaction_id: string
  state: string
  updated_at: number | string
}

/** One page of the history, with each request's transactions. */
export async function queryHistory(client: SqlClient, query: HistoryQuery): Promise<HistoryPage> {
  const filter = await resolveHashLookups(client, query.filter)
  if (filter.matchedIds?.length === 0) return { entries: [] }
  const { text, params } = historySql({ ...query, filter })
  const { rows } = await client.query<RequestRow>(text, params)
  const limit = Math.max(1, Math.floor(query.limit))
  const requests = rows.slice(0, limit).map(requestFromRow)
  if (requests.length === 0) return { entries: [] }
  const ids = requests.map((request) => request.id)
  const [deposits, jobs] = await Promise.all([
    client.query<DepositRow>(
      `SELECT request_id, chain_id, transaction_id, block_number, seen_at, depositor FROM deposits
        WHERE request_id = ANY($1::text[]) ORDER BY seen_at, log_index`,
      [ids],
    ),
    client.query<JobRow>(
      `SELECT request_id, chain_id, transaction_id, state, updated_at FROM solver_jobs
        WHERE request_id = ANY($1::text[]) AND transaction_id IS NOT NULL ORDER BY id`,
      [ids],
    ),
  ])
  const recorded = new Map<string, HistoryTransaction>()
  const key = (requestId: string, hash: string) => `${requestId} ${canonicalId(hash)}`
  for (const row of jobs.rows) {
    const outcome = row.state === 'confirmed' ? 'success' : row.state === 'reverted' ? 'failure' : undefined
    recorded.set(key(row.request_id, row.transaction_id), {
      hash: row.transaction_id,
      chainId: Number(row.chain_id),
      at: Number(row.updated_at),
      ...(outcome ? { outcome } : {}),
    })
  }
  // After the jobs: a deposit the service submitted is known best by the indexer's record of it.
  for (const row of deposits.rows) {
    recorded.set(key(row.request_id, row.transaction_id), {
      hash: row.transaction_id,
      chainId: Number(row.chain_id),
      at: Number(row.seen_at),
      ...(row.block_number === null ? {} : { block: Number(row.block_number) }),
      depositor: row.depositor,
    })
  }
  const entries = requests.map((request) => {
    const transaction = (hash: string, chainId: number): HistoryTransaction => {
      const found = recorded.get(key(request.id, hash))
      return found ? { ...found, hash } : { hash, chainId, at: request.updatedAt }
    }
    return {
      request,
      inTxs: request.inTxHashes.map((hash) => transaction(hash, request.originChainId)),
      outTxs: request.txHashes.map((hash) => transaction(hash, request.destinationChainId)),
    }
  })
  const last = requests.at(-1)
  const more = rows.length > limit && last !== undefined
  return {
    entries,
    ...(more
      ? { next: { at: query.sortBy === 'createdAt' ? last.createdAt : last.updatedAt, id: last.id } }
      : {}),
  }
}
