/**
 * Webhook request signing (sender side). The receiver side, which runs in browsers too, is
 * `verifyWebhook` in `@pontis/client`.
 */
import { createHmac } from 'node:crypto'

/** Header carrying the time of sending: Unix milliseconds as decimal digits (see the OpenAPI contract). */
export const SIGNATURE_TIMESTAMP_HEADER = 'X-Signature-Timestamp'
/** Header carrying the lowercase hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the API key. */
export const SIGNATURE_HEADER = 'X-Signature-SHA256'

/** The two signature headers of one delivery attempt. */
// A type alias, not an interface, so it stays assignable to plain header records.
export type WebhookSignatureHeaders = {
  'X-Signature-Timestamp': string
  'X-Signature-SHA256': string
}

/**
 * Signs one webhook delivery attempt: HMAC-SHA256 over `<timestamp>.<body>` with the API key as
 * the secret, hex-encoded (lowercase).
 *
 * The contract (`openapi/intents.yaml`, `webhooks.request.status.updated`) defines the timestamp as
 * Unix **milliseconds**, so that is what goes on the wire and into the signed string.
 *
 * @param body - The exact request body that will be sent; a string is signed as its UTF-8 bytes.
 * @param apiKey - The API key the webhook belongs to (the HMAC secret), or an equivalent HMAC key
 *   (the key's SHA-256 digest: HMAC hashes keys longer than its block first). Never logged.
 * @param timestampMs - Time of sending, Unix milliseconds; a non-negative safe integer.
 * @returns The `X-Signature-Timestamp` and `X-Signature-SHA256` header values.
 * @throws RangeError when the timestamp is not a non-negative safe integer, TypeError on an empty key.
 */
export function signWebhook(
  body: string | Uint8Array,
  apiKey: string | Uint8Array,
  timestampMs: number,
): WebhookSignatureHeaders {
  if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) {
    throw new RangeError('webhook timestamp must be a non-negative integer number of milliseconds')
  }
  if (apiKey.length === 0) throw new TypeError('webhook signing key must not be empty')
  const timestamp = String(timestampMs)
  // Two updates instead of string concatenation: a Uint8Array body is signed byte for byte.
  const signature = createHmac('sha256', apiKey).update(`${timestamp}.`, 'utf8').update(body).digest('hex')
  return { 'X-Signature-Timestamp': timestamp, 'X-Signature-SHA256': signature }
}
