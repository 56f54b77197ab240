/**
 * A transaction the solver sent can be reorganised away after it counted as final, when a chain
 * reorganises deeper than its entry's confirmation rule. Confirmed jobs of the last hour are read
 * again; one whose transaction the chain no longer knows has its stored signed bytes sent again (the
 * same nonce or the same coins, so the chain can include it once only and nobody is paid twice). The
 * first time it is found gone, an error is logged, the metric counts it and, for a fill, the
 * request's record says so (`details.fillReorged`, status unchanged).
 */
import type { Logger, Registry } from '@pontis/core'
import type { IntentsMetrics } from '../metrics.js'
import type { JobKind, LifecycleStore } from './lifecycle-store.js'

/** How long after a job was confirmed its transaction is still read again (1 hour). */
export const SETTLED_JOB_WATCH_MS = 60 * 60 * 1000

interface SettledJobRow {
  readonly id: string
  readonly request_id: string | null
  readonly kind: JobKind
  readonly chain_id: string
  readonly transaction_id: string
  readonly raw: string
  readonly reorged_at: string | null
}

export interface SettledJobWatch {
  readonly registry: Registry
  readonly lifecycle: LifecycleStore
  readonly logger: Logger
  readonly now: () => number
  readonly metrics: Pick<IntentsMetrics, 'settledReorged'> | undefined
}

/** One pass over the confirmed jobs of the last {@link SETTLED_JOB_WATCH_MS}. */
export async function watchSettledJobs(watch: SettledJobWatch): Promise<void> {
  const { client } = watch.lifecycle.requests
  const { rows } = await client.query<SettledJobRow>(
    `SELECT id, request_id, kind, chain_id, transaction_id, raw, reorged_at FROM solver_jobs
     WHERE state = 'confirmed' AND raw IS NOT NULL AND updated_at > $1 ORDER BY updated_at DESC LIMIT 100`,
    [watch.now() - SETTLED_JOB_WATCH_MS],
  )
  for (const row of rows) {
    const chainId = Number(row.chain_id)
    const filling = watch.registry.tryChain(chainId)?.adapter.filling
    if (!filling) continue
    try {
      const outcome = await filling.outcome(row.transaction_id)
      if (outcome.state !== 'not_found') continue
      await recordGone(watch, row, chainId)
      await filling.broadcast(row.raw)
    } catch (error) {
      watch.logger.error('a confirmed transaction reorganised away could not be read or sent again', {
        chainId,
        transactionId: row.transaction_id,
        kind: row.kind,
        error: String(error),
      })
    }
  }
}

/** The first time a confirmed job's transaction is found gone: noted on its request, logged, counted. */
async function recordGone(watch: SettledJobWatch, row: SettledJobRow, chainId: number): Promise<void> {
  if (row.reorged_at !== null) return
  const now = watch.now()
  const marked = await watch.lifecycle.requests.client.query(
    'UPDATE solver_jobs SET reorged_at = $2 WHERE id = $1 AND reorged_at IS NULL RETURNING id',
    [row.id, now],
  )
  if (marked.rows.length === 0) return
  watch.logger.error('a confirmed transaction was reorganised away; its signed bytes are sent again', {
    chainId,
    transactionId: row.transaction_id,
    kind: row.kind,
    ...(row.request_id ? { requestId: row.request_id } : {}),
  })
  watch.metrics?.settledReorged(chainId, row.kind)
  if (row.kind !== 'fill' || row.request_id === null) return
  const request = await watch.lifecycle.requests.getRequest(row.request_id)
  if (!request) return
  await watch.lifecycle.transition(row.request_id, {
    to: request.status,
    details: { fillReorged: { transactionId: row.transaction_id, at: Math.floor(now / 1000) } },
  })
}
