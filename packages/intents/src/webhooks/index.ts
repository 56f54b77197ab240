/** Webhook delivery building blocks: signing, one delivery attempt (the target rules are the key's: keys/webhook-target.ts), retry schedule. */

export { createWebhookAdminHandlers } from './admin-handlers.js'
export {
  type BackoffOptions,
  hasAttemptsLeft,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextAttemptDelayMs,
  UNRESOLVABLE_MAX_ATTEMPTS,
} from './backoff.js'
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  type DeliverOptions,
  type DeliveryOutcome,
  type DeliveryResult,
  deliverOnce,
  parseRetryAfter,
  WEBHOOK_USER_AGENT,
} from './deliver.js'
export {
  startWebhookLoop,
  WEBHOOK_BATCH,
  WEBHOOK_INTERVAL_MS,
  WebhookDispatcher,
  type WebhookDispatcherOptions,
  type WebhookEventState,
} from './dispatcher.js'
export { enqueueStatusWebhook, webhookBody } from './outbox.js'
export {
  SIGNATURE_HEADER,
  SIGNATURE_TIMESTAMP_HEADER,
  signWebhook,
  type WebhookSignatureHeaders,
} from './signature.js'
