/**
 * `GET /requests/v3` and the deprecated `GET /requests/v2`: the request history, with the access
 * rules of the document's `Requests` tag. One query for both; only the item shape differs.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { canonicalId, type IntentsApi, PontisError, type Registry } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import type { ApiKeyStore } from '../keys/index.js'
import { adminAuthorizer } from '../keys/index.js'
import type { HistoryFilter, HistoryQuery, RequestStore } from '../store/index.js'
import { decodeContinuation, encodeContinuation, queryDigest } from './cursor.js'
import { toHistoryItemV2, toHistoryItemV3 } from './render.js'

type V3Handler = OperationHandler<
  RequestOf<IntentsApi.GetRequestsV3Data>,
  ResponseOf<IntentsApi.GetRequestsV3Responses>
>
type V2Handler = OperationHandler<
  RequestOf<IntentsApi.GetRequestsV2Data>,
  ResponseOf<IntentsApi.GetRequestsV2Responses>
>
type HistoryParameters = NonNullable<IntentsApi.GetRequestsV3Data['query']>

/** Items per page without `limit`, and the most a page holds. */
export const DEFAULT_HISTORY_LIMIT = 20
export const MAX_HISTORY_LIMIT = 50

/** When `/requests/v2` was deprecated (RFC 9745 `Deprecation`: 2026-11-27T00:00:00Z). */
const V2_DEPRECATED_AT = 1_795_737_600
const V2_HEADERS = {
  deprecation: `@${V2_DEPRECATED_AT}`,
  link: '</requests/v3>; rel="successor-version", </documentation#/Requests/getRequestsV2>; rel="deprecation"',
}

export interface HistoryHandlerOptions {
  readonly store: RequestStore
  readonly keys: ApiKeyStore
  readonly registry: Registry
  /** The operator's bearer token; unset, a bearer token is refused (403) like on the admin API. */
  readonly adminToken: string | undefined
}

/** Who is asking: decides the scope of a listing. */
type Caller =
  | { readonly kind: 'operator' }
  | { readonly kind: 'partner'; readonly keyId: string }
  | { readonly kind: 'anonymous' }

const unique = (values: readonly string[]): string[] => [...new Set(values)]

export function createHistoryHandlers(options: HistoryHandlerOptions): {
  getRequestsV3: V3Handler
  getRequestsV2: V2Handler
} {
  const { store, keys, registry } = options
  const authorizeOperator = adminAuthorizer(options.adminToken)

  const callerOf = async (headers: IncomingHttpHeaders): Promise<Caller> => {
    if (headers.authorization !== undefined) {
      authorizeOperator(headers)
      return { kind: 'operator' }
    }
    const key = await keys.authenticateHeader(headers)
    return key ? { kind: 'partner', keyId: key.id } : { kind: 'anonymous' }
  }

  /** The forms an address may be stored in: as given, and each family's canonical form of it. */
  const addressForms = (address: string, role: 'user' | 'recipient'): string[] =>
    unique([
      address,
      ...registry
        .chains()
        .filter((chain) => chain.adapter.identity.isValidAddress(address))
        .map((chain) => chain.adapter.identity.normalizeAddress(address, role)),
    ])
  const hashForms = (hash: string | undefined) =>
    hash === undefined ? undefined : unique([hash, canonicalId(hash)])

  const filterOf = (query: HistoryParameters): HistoryFilter => {
    const ids = unique(
      [query.id, query.orderId].flatMap((id) => (id === undefined ? [] : [id.toLowerCase()])),
    )
    const origin = query.originChainId === undefined ? undefined : Number(query.originChainId)
    const destination = query.destinationChainId === undefined ? undefined : Number(query.destinationChainId)
    // `chainId` (either direction) yields to the directed filters, as the public API documents.
    const either =
      query.chainId === undefined || origin !== undefined || destination !== undefined
        ? undefined
        : Number(query.chainId)
    const seconds = (value: number | undefined, end: boolean) =>
      value === undefined ? undefined : value * 1000 + (end ? 999 : 0)
    const filter: Record<string, unknown> = {
      ids: ids.length > 0 ? ids : undefined,
      users: query.user === undefined ? undefined : addressForms(query.user, 'user'),
      recipients: query.recipient === undefined ? undefined : addressForms(query.recipient, 'recipient'),
      hashes: hashForms(query.hash),
      depositTxHashes: hashForms(query.depositTxHash),
      fillTxHashes: hashForms(query.fillTxHash),
      refundTxHashes: hashForms(query.refundTxHash),
      originChainId: origin,
      destinationChainId: destination,
      chainId: either,
      depositAddress: query.depositAddress,
      status: query.status,
      referrer: query.referrer,
      referrerAddress: query.referrerAddress,
      createdFrom: seconds(query.startTimestamp, false),
      createdTo: seconds(query.endTimestamp, true),
    }
    return Object.fromEntries(
      Object.entries(filter).filter(([, value]) => value !== undefined),
    ) as HistoryFilter
  }

  /** A lookup names a fact that is public on chain; anyone may make one, over every request. */
  const isLookup = (filter: HistoryFilter) =>
    [
      filter.ids,
      filter.users,
      filter.hashes,
      filter.depositTxHashes,
      filter.fillTxHashes,
      filter.refundTxHashes,
    ].some((facts) => facts !== undefined)

  const page = async (headers: IncomingHttpHeaders, query: HistoryParameters) => {
    const caller = await callerOf(headers)
    let filter = filterOf(query)
    if (caller.kind === 'partner' && !isLookup(filter)) filter = { ...filter, apiKeyId: caller.keyId }
    if (caller.kind === 'anonymous' && !isLookup(filter)) {
      throw new PontisError(
        'UNAUTHORIZED',
        'Listing requests needs an x-api-key (your own requests) or the operator bearer token; without one, look a request up by id, hash or user',
      )
    }
    const sortBy = query.sortBy ?? 'createdAt'
    const direction = query.sortDirection ?? 'desc'
    const digest = queryDigest(filter, sortBy, direction)
    const after =
      query.continuation === undefined ? undefined : decodeContinuation(query.continuation, digest)
    const historyQuery: HistoryQuery = {
      filter,
      sortBy,
      direction,
      limit: Math.min(query.limit ?? DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT),
      ...(after ? { after } : {}),
    }
    const result = await store.history(historyQuery)
    return {
      entries: result.entries,
      ...(result.next ? { continuation: encodeContinuation(result.next, digest) } : {}),
    }
  }

  return {
    getRequestsV3: async ({ headers, query }) => {
      const { entries, ...rest } = await page(headers, query)
      return { status: 200, body: { requests: entries.map(toHistoryItemV3), ...rest } }
    },
    getRequestsV2: async ({ headers, query }) => {
      const { entries, ...rest } = await page(headers, query)
      return { status: 200, headers: V2_HEADERS, body: { requests: entries.map(toHistoryItemV2), ...rest } }
    },
  }
}
