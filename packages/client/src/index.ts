/**
 * `@pontis/client`: helpers for integrators of a Pontis intent service. Browser-safe: nothing here
 * imports a Node built-in.
 */
export {
  constantTimeEqual,
  type VerifyWebhookOptions,
  verifyWebhook,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookDepositAddress,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookPayloadData,
  type WebhookStatus,
  type WebhookVerifyFailure,
  type WebhookVerifyResult,
} from './webhook.js'
