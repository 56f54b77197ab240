/**
 * The history's `continuation`: base64url JSON of the last item's position and a digest of the
 * query it belongs to. It is checked, not trusted: a cursor that does not parse, whose position is
 * malformed, or whose digest names other filters, sort or direction is a 400 INVALID_CONTINUATION.
 * It carries no authority (scope is decided from each call's credentials), so a caller who forges
 * a position only moves within what it may already see; no server secret is needed, and cursors
 * stay valid across restarts and instances.
 */
import crypto from 'node:crypto'
import { PontisError } from '@pontis/core'
import type { HistoryDirection, HistoryFilter, HistoryPosition, HistorySortBy } from '../store/index.js'

const VERSION = 1
const REQUEST_ID = /^0x[0-9a-f]{64}$/
const DIGEST = /^[0-9a-f]{32}$/

/** A digest of everything that decides a query's order and rows, scope included. */
export function queryDigest(
  filter: HistoryFilter,
  sortBy: HistorySortBy,
  direction: HistoryDirection,
): string {
  const canonical = JSON.stringify([
    sortBy,
    direction,
    Object.entries(filter).sort(([a], [b]) => a.localeCompare(b)),
  ])
  return crypto.createHash('sha256').update(canonical).digest('hex').slice(0, 32)
}

/** The `continuation` after `position` in the query of `digest`. */
export function encodeContinuation(position: HistoryPosition, digest: string): string {
  return Buffer.from(JSON.stringify({ v: VERSION, t: position.at, i: position.id, q: digest })).toString(
    'base64url',
  )
}

function invalid(reason: string): PontisError {
  return new PontisError(
    'INVALID_CONTINUATION',
    `continuation ${reason}; pass back the continuation of the previous answer unchanged, with the same filters, or start again without it`,
  )
}

/**
 * The position a `continuation` names, checked against the query it is used with; `idPattern` is
 * what the position's id must look like (a request id unless told).
 */
export function decodeContinuation(
  continuation: string,
  digest: string,
  idPattern: RegExp = REQUEST_ID,
): HistoryPosition {
  let parsed: unknown
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(continuation)) throw new Error('not base64url')
    parsed = JSON.parse(Buffer.from(continuation, 'base64url').toString('utf8'))
  } catch {
    throw invalid('is not a cursor of this service')
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid('is not a cursor of this service')
  const { v, t, i, q } = parsed as Record<string, unknown>
  if (v !== VERSION) throw invalid('is not a cursor of this service')
  if (
    typeof t !== 'number' ||
    !Number.isSafeInteger(t) ||
    t < 0 ||
    typeof i !== 'string' ||
    !idPattern.test(i)
  )
    throw invalid('names no valid position')
  if (typeof q !== 'string' || !DIGEST.test(q)) throw invalid('is not a cursor of this service')
  if (q !== digest) throw invalid('belongs to another query (other filters, sort or direction)')
  return { at: t, id: i }
}
