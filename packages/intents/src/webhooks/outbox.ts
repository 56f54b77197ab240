import { randomUUID } from 'node:crypto'
import type { SqlClient, StoredRequest } from '../store/index.js'
import { toStatusRecord } from '../store/index.js'

/** The `request.status.updated` payload of the spec's Events table. */
export function webhookBody(request: StoredRequest, timestamp: number): string {
  const record = toStatusRecord(request)
  return JSON.stringify({
    event: 'request.status.updated',
    timestamp,
    data: {
      status: record.status,
      inTxHashes: record.inTxHashes,
      txHashes: record.txHashes,
      updatedAt: record.updatedAt,
      originChainId: record.originChainId,
      destinationChainId: record.destinationChainId,
      depositAddress: request.depositAddress
        ? {
            address: request.depositAddress,
            depositAddressType: request.depositAddressType ?? 'open',
            depositor: null,
            depositTxHash: null,
          }
        : null,
      requestId: request.id,
      referrer: request.referrer,
      details: record.details,
      failReason: record.failReason,
      refundFailReason: record.refundFailReason,
    },
  })
}

/**
 * Queues the webhook of a status change in the transaction that made it (so the change and its
 * event commit together or not at all), when the request is tied to a key with an enabled webhook.
 * Returns whether an event was queued.
 */
export async function enqueueStatusWebhook(
  tx: SqlClient,
  request: StoredRequest,
  now: number,
): Promise<boolean> {
  if (!request.apiKeyId) return false
  const { rows: tables } = await tx.query<{ exists: string | null }>(
    "SELECT to_regclass('api_keys')::text AS exists",
  )
  if (!tables[0]?.exists) return false
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO webhook_events (event_id, api_key_id, request_id, body, next_attempt_at, created_at)
     SELECT $1, k.id, $2, $3, $4, $4 FROM api_keys k
     WHERE k.id = $5 AND k.revoked_at IS NULL AND k.webhook IS NOT NULL AND (k.webhook ->> 'enabled')::boolean
     RETURNING id`,
    [`evt_${randomUUID()}`, request.id, webhookBody(request, now), now, request.apiKeyId],
  )
  return rows.length > 0
}
