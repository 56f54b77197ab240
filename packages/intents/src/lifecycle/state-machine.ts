import type { IntentsApi } from '@pontis/core'

export type RequestStatus = IntentsApi.RequestStatus

/**
 * Where a request may go from each status (documented in openapi/intents.yaml, StatusRecord.status).
 * Moving to the status a request already has is a no-op, never an error; anything else not listed
 * here is refused, so a late or duplicated event can never move a request backwards (the one way
 * back, `pending` to `waiting`, is taken only for a mempool deposit that is gone unconfirmed).
 */
export const TRANSITIONS: Readonly<Record<RequestStatus, readonly RequestStatus[]>> = {
  // A permit was accepted and the service submits the deposit; or the deposit was indexed; or the
  // request cannot be filled (late, underpaid, wrong currency) and its deposit goes back.
  waiting: ['depositing', 'pending', 'refund', 'failure'],
  depositing: ['pending', 'refund', 'failure'],
  // Or back: the mempool deposit that moved it here (Bitcoin) was dropped or replaced unconfirmed.
  pending: ['waiting', 'submitted', 'refund', 'failure'],
  submitted: ['success', 'failure'],
  // A failed fill's deposit is refunded.
  failure: ['refund'],
  success: [],
  refund: [],
  fallback: [],
}

/** Statuses a request never leaves. */
export const FINAL_STATUSES: ReadonlySet<RequestStatus> = new Set(['success', 'refund', 'fallback'])

export function canTransition(from: RequestStatus, to: RequestStatus): boolean {
  return TRANSITIONS[from].includes(to)
}
