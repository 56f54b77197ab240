import { randomUUID } from 'node:crypto'
import type { Logger } from '@pontis/core'
import type { ApiKeyStore, WebhookLookup, WebhookTarget, WebhookTargetPolicy } from '../keys/index.js'
import type { IntentsMetrics } from '../metrics.js'
import type { SqlClient } from '../store/index.js'
import { type Loop, startLoop } from '../workers/loop.js'
import {
  type BackoffOptions,
  MAX_ATTEMPTS,
  nextAttemptDelayMs,
  UNRESOLVABLE_MAX_ATTEMPTS,
} from './backoff.js'
import { type DeliveryResult, deliverOnce } from './deliver.js'

/** Events one delivery pass claims. */
export const WEBHOOK_BATCH = 50
/** The pause between delivery passes when nothing more is due, milliseconds. */
export const WEBHOOK_INTERVAL_MS = 200

/**
 * The delivery worker as the service runs it: `pass` (a {@link WebhookDispatcher.tick} of `batch`
 * events, answering how many it attempted) again and again. A full batch means more are due, so the
 * next pass starts at once; only a partial one waits `intervalMs`. Otherwise a backlog would drain at
 * one batch per interval (250/s), whatever the receiver could take.
 */
export function startWebhookLoop(
  pass: () => Promise<number>,
  options: { readonly logger: Logger; readonly intervalMs?: number; readonly batch?: number },
): Loop {
  const batch = options.batch ?? WEBHOOK_BATCH
  return startLoop(
    'webhooks',
    pass,
    options.intervalMs ?? WEBHOOK_INTERVAL_MS,
    options.logger,
    (attempted) => attempted >= batch,
  )
}

export interface WebhookDispatcherOptions {
  readonly client: SqlClient
  readonly keys: ApiKeyStore
  readonly policy: WebhookTargetPolicy
  readonly logger: Logger
  readonly now?: () => number
  readonly owner?: string
  /** How long a worker holds an event it is delivering. Default 60 s. */
  readonly leaseMs?: number
  /** Per-attempt time budget. Default 10 s. */
  readonly timeoutMs?: number
  /** Attempts before an event is dead-lettered (1 + retries). Default 11. */
  readonly maxAttempts?: number
  /** Attempts while the webhook host name does not exist. Default {@link UNRESOLVABLE_MAX_ATTEMPTS}. */
  readonly unresolvableMaxAttempts?: number
  readonly backoff?: BackoffOptions
  readonly lookup?: WebhookLookup
  /** Counts delivery attempts by outcome. */
  readonly metrics?: Pick<IntentsMetrics, 'webhookAttempted'>
}

/** A delivery the pass marks done in one write at its end. */
interface DeliveredEvent {
  readonly id: string
  readonly attempts: number
  readonly status: number | null
}

interface EventRow {
  id: string
  event_id: string
  api_key_id: string
  body: string
  attempts: number
}

export interface WebhookEventState {
  readonly eventId: string
  readonly keyId: string
  /** Null for a `webhook.test` event. */
  readonly requestId: string | null
  readonly state: 'pending' | 'delivered' | 'dead' | 'disabled'
  readonly attempts: number
  readonly nextAttemptAt: number
  readonly lastStatus: number | null
  readonly lastError: string | null
  readonly createdAt: number
}

/** Event states a listing may be narrowed to. */
export type WebhookEventStateName = WebhookEventState['state']

/**
 * Delivers the webhook outbox: due events under leases (several workers never send the same
 * attempt), the oldest pending event of each request only (so no later status overtakes an earlier
 * one), retries with backoff and jitter honouring Retry-After, dead-letters after the last attempt,
 * and disables an endpoint that answers 410.
 */
export class WebhookDispatcher {
  readonly #options: WebhookDispatcherOptions
  readonly #owner: string
  readonly #now: () => number

  constructor(options: WebhookDispatcherOptions) {
    this.#options = options
    this.#owner = options.owner ?? `webhooks-${randomUUID()}`
    this.#now = options.now ?? Date.now
  }

  /**
   * Gives back the leases of events this worker claimed but did not finish (shutdown, after its
   * loop stopped), so another instance delivers them at once.
   * @returns how many were released.
   */
  async releaseLeases(): Promise<number> {
    const { rows } = await this.#options.client.query<{ id: string }>(
      `UPDATE webhook_events SET lease_owner = NULL, lease_until = NULL
       WHERE lease_owner = $1 AND state = 'pending' RETURNING id`,
      [this.#owner],
    )
    return rows.length
  }

  /** Events waiting for delivery (over the partial index of pending events). */
  async backlog(): Promise<number> {
    const { rows } = await this.#options.client.query<{ count: string | number }>(
      "SELECT count(*) AS count FROM webhook_events WHERE state = 'pending'",
    )
    return Number(rows[0]?.count ?? 0)
  }

  /** One pass: claim due events and attempt each once. Returns how many were attempted. */
  async tick(limit = WEBHOOK_BATCH): Promise<number> {
    const now = this.#now()
    const { rows } = await this.#options.client.query<EventRow>(
      `UPDATE webhook_events SET lease_owner = $1, lease_until = $2
       WHERE id IN (
         SELECT e.id FROM webhook_events e
         WHERE e.state = 'pending' AND e.next_attempt_at <= $3 AND (e.lease_until IS NULL OR e.lease_until < $3)
           AND NOT EXISTS (
             SELECT 1 FROM webhook_events p WHERE p.request_id = e.request_id AND p.id < e.id AND p.state = 'pending')
         ORDER BY e.id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING id, event_id, api_key_id, body, attempts`,
      [this.#owner, now + (this.#options.leaseMs ?? 60_000), now, limit],
    )
    // One key lookup per key and one write for all deliveries of the pass, not one of each per
    // event: at a thousand deliveries a second those round trips are most of the database's work.
    const targets = new Map<string, Promise<WebhookTarget | undefined>>()
    const targetOf = (keyId: string) => {
      let target = targets.get(keyId)
      if (!target) {
        target = this.#options.keys.webhookTarget(keyId)
        targets.set(keyId, target)
      }
      return target
    }
    const delivered: DeliveredEvent[] = []
    await Promise.all(rows.map((row) => this.#attempt(row, targetOf, delivered)))
    if (delivered.length > 0) {
      await this.#options.client.query(
        `UPDATE webhook_events AS e SET state = 'delivered', attempts = d.attempts, last_status = d.status,
           last_error = NULL, delivered_at = $4, lease_owner = NULL, lease_until = NULL
         FROM unnest($1::bigint[], $2::integer[], $3::integer[]) AS d(id, attempts, status)
         WHERE e.id = d.id AND e.lease_owner = $5`,
        [
          delivered.map((event) => event.id),
          delivered.map((event) => event.attempts),
          delivered.map((event) => event.status),
          this.#now(),
          this.#owner,
        ],
      )
    }
    return rows.length
  }

  async #attempt(
    row: EventRow,
    targetOf: (keyId: string) => Promise<WebhookTarget | undefined>,
    delivered: DeliveredEvent[],
  ): Promise<void> {
    const { keys, logger } = this.#options
    const target = await targetOf(row.api_key_id)
    const metrics = this.#options.metrics
    if (!target) {
      await this.#finish(row, 'disabled', { error: 'the key has no enabled webhook (revoked or disabled)' })
      metrics?.webhookAttempted('disabled')
      return
    }
    const result: DeliveryResult = await deliverOnce({
      url: target.webhook.url,
      ...(target.webhook.headers ? { headers: { ...target.webhook.headers } } : {}),
      body: row.body,
      apiKey: target.signingKey,
      eventId: row.event_id,
      timeoutMs: this.#options.timeoutMs ?? 10_000,
      policy: this.#options.policy,
      now: this.#now,
      ...(this.#options.lookup ? { lookup: this.#options.lookup } : {}),
    })
    const attempts = row.attempts + 1
    const details = {
      ...(result.status !== undefined ? { status: result.status } : {}),
      ...(result.error ? { error: result.error } : {}),
    }
    if (result.outcome === 'delivered') {
      delivered.push({ id: row.id, attempts, status: result.status ?? null })
      metrics?.webhookAttempted('delivered')
    } else if (result.outcome === 'disable') {
      logger.warn('webhook endpoint answered 410: disabled', { keyId: row.api_key_id })
      await keys.setWebhook(row.api_key_id, { ...target.webhook, enabled: false })
      await this.#finish(row, 'disabled', details, attempts)
      metrics?.webhookAttempted('disabled')
    } else if (
      result.outcome === 'rejected-target' ||
      attempts >= (this.#options.maxAttempts ?? MAX_ATTEMPTS) ||
      (result.outcome === 'unresolvable' &&
        attempts >= (this.#options.unresolvableMaxAttempts ?? UNRESOLVABLE_MAX_ATTEMPTS))
    ) {
      logger.warn('webhook event dead-lettered', { eventId: row.event_id, attempts, outcome: result.outcome })
      await this.#finish(row, 'dead', details, attempts)
      metrics?.webhookAttempted('dead')
    } else {
      const delay = nextAttemptDelayMs(attempts, this.#options.backoff ?? {}, result.retryAfterMs)
      await this.#options.client.query(
        `UPDATE webhook_events SET attempts = $2, next_attempt_at = $3, last_status = $4, last_error = $5,
           lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $6`,
        [row.id, attempts, this.#now() + delay, details.status ?? null, details.error ?? null, this.#owner],
      )
      metrics?.webhookAttempted('retry')
    }
  }

  async #finish(
    row: EventRow,
    state: 'delivered' | 'dead' | 'disabled',
    details: { status?: number; error?: string },
    attempts = row.attempts,
  ): Promise<void> {
    await this.#options.client.query(
      `UPDATE webhook_events SET state = $2, attempts = $3, last_status = $4, last_error = $5,
         delivered_at = CASE WHEN $2 = 'delivered' THEN $6::bigint ELSE delivered_at END,
         lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $7`,
      [row.id, state, attempts, details.status ?? null, details.error ?? null, this.#now(), this.#owner],
    )
  }

  /** Dead-lettered (or disabled) events, newest first, for the operator. */
  async deadLetters(limit = 100): Promise<WebhookEventState[]> {
    return this.#list(
      `state IN ('dead', 'disabled') ORDER BY id DESC LIMIT ${Math.max(1, Math.floor(limit))}`,
      [],
    )
  }

  async event(eventId: string): Promise<WebhookEventState | undefined> {
    return (await this.#list('event_id = $1', [eventId]))[0]
  }

  /** One key's events, newest first, optionally only those in `state` (its deliveries and dead letters). */
  async eventsOfKey(
    keyId: string,
    options: { readonly state?: WebhookEventStateName; readonly limit?: number } = {},
  ): Promise<WebhookEventState[]> {
    const limit = Math.max(1, Math.floor(options.limit ?? 50))
    return options.state === undefined
      ? this.#list(`api_key_id = $1 ORDER BY id DESC LIMIT ${limit}`, [keyId])
      : this.#list(`api_key_id = $1 AND state = $2 ORDER BY id DESC LIMIT ${limit}`, [keyId, options.state])
  }

  /**
   * Queues a `webhook.test` event for `keyId`, delivered like any other (signed, retried,
   * dead-lettered). Undefined when the key is revoked or has no enabled webhook.
   */
  async enqueueTest(keyId: string): Promise<WebhookEventState | undefined> {
    const now = this.#now()
    const eventId = `evt_${randomUUID()}`
    const body = JSON.stringify({
      event: 'webhook.test',
      timestamp: now,
      data: { keyId, message: 'Test event from the Pontis dashboard' },
    })
    const { rows } = await this.#options.client.query<{ id: string }>(
      `INSERT INTO webhook_events (event_id, api_key_id, request_id, body, next_attempt_at, created_at)
       SELECT $1, k.id, NULL, $2, $3, $3 FROM api_keys k
       WHERE k.id = $4 AND k.revoked_at IS NULL AND k.webhook IS NOT NULL AND (k.webhook ->> 'enabled')::boolean
       RETURNING id`,
      [eventId, body, now, keyId],
    )
    return rows.length === 0 ? undefined : this.event(eventId)
  }

  /**
   * Puts a dead-lettered or disabled event back in line, attempts reset; with `keyId`, only an
   * event of that key. Returns false when it is not there.
   */
  async redeliver(eventId: string, keyId?: string): Promise<boolean> {
    const { rows } = await this.#options.client.query<{ id: string }>(
      `UPDATE webhook_events SET state = 'pending', attempts = 0, next_attempt_at = $2, lease_owner = NULL, lease_until = NULL
       WHERE event_id = $1 AND state IN ('dead', 'disabled') AND ($3::text IS NULL OR api_key_id = $3) RETURNING id`,
      [eventId, this.#now(), keyId ?? null],
    )
    return rows.length > 0
  }

  async #list(condition: string, params: unknown[]): Promise<WebhookEventState[]> {
    const { rows } = await this.#options.client.query<{
      event_id: string
      api_key_id: string
      request_id: string | null
      state: WebhookEventState['state']
      attempts: number
      next_attempt_at: number
      last_status: number | null
      last_error: string | null
      created_at: number
    }>(
      `SELECT event_id, api_key_id, request_id, state, attempts, next_attempt_at, last_status, last_error, created_at
       FROM webhook_events WHERE ${condition}`,
      params,
    )
    return rows.map((row) => ({
      eventId: row.event_id,
      keyId: row.api_key_id,
      requestId: row.request_id,
      state: row.state,
      attempts: row.attempts,
      nextAttemptAt: Number(row.next_attempt_at),
      lastStatus: row.last_status,
      lastError: row.last_error,
      createdAt: Number(row.created_at),
    }))
  }
}
