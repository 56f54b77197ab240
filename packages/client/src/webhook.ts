/**
 * Receiver-side verification of Pontis webhooks. Uses only WebCrypto (`globalThis.crypto.subtle`),
 * `TextEncoder` and `Headers`, so it runs unchanged in Node 20+, browsers, Deno and edge runtimes.
 */

/** Status values a `request.status.updated` webhook carries. */
export type WebhookStatus =
  | 'waiting'
  | 'depositing'
  | 'pending'
  | 'submitted'
  | 'success'
  | 'failure'
  | 'refund'

/** Deposit address details of a request, when it uses one. */
export interface WebhookDepositAddress {
  address: string
  depositAddressType: 'open' | 'strict'
  depositor: string | null
  /** Origin-chain hash of the depositor's transfer into the deposit address. */
  depositTxHash: string | null
}

/** `data` of a `request.status.updated` webhook. */
export interface WebhookPayloadData {
  status: WebhookStatus
  inTxHashes: string[]
  txHashes: string[]
  /** Unix milliseconds; order events of one request by this field (deliveries may arrive out of order). */
  updatedAt: number
  originChainId: number
  destinationChainId: number
  depositAddress: WebhookDepositAddress | null
  requestId: string
  referrer: string | null
  details: Record<string, unknown> | null
  failReason: string
  refundFailReason: string
}

/** Body of a `request.status.updated` webhook (parse it only after {@link verifyWebhook} succeeded). */
export interface WebhookPayload {
  event: 'request.status.updated'
  /** Event time, Unix milliseconds. */
  timestamp: number
  data: WebhookPayloadData
}

/** Why a webhook failed verification. */
export type WebhookVerifyFailure = 'missing-headers' | 'bad-timestamp' | 'stale' | 'bad-signature'

/** Outcome of {@link verifyWebhook}. `timestamp` is the signed `X-Signature-Timestamp` (Unix ms). */
export type WebhookVerifyResult =
  | { ok: true; timestamp: number }
  | { ok: false; reason: WebhookVerifyFailure }

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Largest accepted distance between the signed timestamp and `now()`, either way. Default 300 (5 minutes). */
  toleranceSeconds?: number
  /** Current time in Unix milliseconds. Default `Date.now`. */
  now?: () => number
}

/** Incoming request headers: a Fetch `Headers` object or a Node-style record (any name case). */
export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers

/** Name of the header carrying the time of sending (Unix milliseconds). */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-signature-timestamp'
/** Name of the header carrying the lowercase hex HMAC-SHA256. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-signature-sha256'
/** Name of the header carrying the event id, identical on every retry; deduplicate on it. */
export const WEBHOOK_EVENT_ID_HEADER = 'x-event-id'

const DEFAULT_TOLERANCE_SECONDS = 300
// The contract: decimal Unix milliseconds, at most 16 digits; the signature: 32 bytes as hex.
const TIMESTAMP_PATTERN = /^[0-9]{1,16}$/
const SIGNATURE_PATTERN = /^[0-9a-fA-F]{64}$/

type HeaderValue = { kind: 'missing' } | { kind: 'ambiguous' } | { kind: 'value'; value: string }

function isFetchHeaders(headers: WebhookHeaders): headers is Headers {
  return typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function'
}

/** Reads one header case-insensitively; a repeated header is ambiguous, never silently picked. */
function readHeader(headers: WebhookHeaders, lowerName: string): HeaderValue {
  if (isFetchHeaders(headers)) {
    // Fetch joins repeated values with ", ", which the format checks below then reject.
    const value = headers.get(lowerName)
    return value === null || value.trim() === ''
      ? { kind: 'missing' }
      : { kind: 'value', value: value.trim() }
  }
  const values: string[] = []
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== lowerName || value === undefined) continue
    if (Array.isArray(value)) values.push(...value)
    else values.push(value)
  }
  const present = values.map((value) => value.trim()).filter((value) => value !== '')
  if (present.length === 0) return { kind: 'missing' }
  const [only] = present
  return present.length === 1 && only !== undefined ? { kind: 'value', value: only } : { kind: 'ambiguous' }
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

/**
 * Compares two byte strings in time that depends only on their lengths: every byte is visited and
 * differences are OR-ed together, with no early exit on the first mismatch.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length)
  let difference = a.length ^ b.length
  for (let i = 0; i < length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0)
  return difference === 0
}

/**
 * Verifies a Pontis webhook request before its body is trusted or parsed.
 *
 * Checks, in order: both signature headers are present (names are case-insensitive); the timestamp
 * is decimal Unix milliseconds; the HMAC-SHA256 of `<timestamp>.<rawBody>` keyed with `apiKey`
 * equals `X-Signature-SHA256` (compared in constant time); the timestamp is within
 * `toleranceSeconds` of `now()` in either direction (stops replays). The signature is checked before
 * freshness so that `stale` is only ever reported for an authentic request (e.g. clock skew).
 *
 * Answer the webhook with a non-2xx status when the result is not `ok`, and deduplicate accepted
 * deliveries by the `X-Event-Id` header.
 *
 * @param headers - The request headers (Fetch `Headers` or a Node `IncomingHttpHeaders`-like record).
 * @param rawBody - The body exactly as received, before any JSON parsing; a string is taken as UTF-8.
 * @param apiKey - The API key the webhook belongs to (the HMAC secret).
 * @param options - `toleranceSeconds` (default 300) and `now` (Unix ms, default `Date.now`).
 * @throws TypeError when `apiKey` is empty or `toleranceSeconds` is not a non-negative number.
 */
export async function verifyWebhook(
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  apiKey: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookVerifyResult> {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError('toleranceSeconds must be a non-negative finite number')
  }
  if (apiKey.length === 0) throw new TypeError('apiKey must not be empty')
  const now = options.now ?? Date.now

  const timestampHeader = readHeader(headers, WEBHOOK_TIMESTAMP_HEADER)
  const signatureHeader = readHeader(headers, WEBHOOK_SIGNATURE_HEADER)
  if (timestampHeader.kind === 'missing' || signatureHeader.kind === 'missing') {
    return { ok: false, reason: 'missing-headers' }
  }
  if (timestampHeader.kind === 'ambiguous' || !TIMESTAMP_PATTERN.test(timestampHeader.value)) {
    return { ok: false, reason: 'bad-timestamp' }
  }
  const timestamp = Number(timestampHeader.value)
  if (!Number.isSafeInteger(timestamp)) return { ok: false, reason: 'bad-timestamp' }
  if (signatureHeader.kind === 'ambiguous' || !SIGNATURE_PATTERN.test(signatureHeader.value)) {
    return { ok: false, reason: 'bad-signature' }
  }

  const encoder = new TextEncoder()
  const prefix = encoder.encode(`${timestampHeader.value}.`)
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody
  const signed = new Uint8Array(prefix.length + body.length)
  signed.set(prefix, 0)
  signed.set(body, prefix.length)

  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(apiKey),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const expected = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, signed))
  if (!constantTimeEqual(expected, hexToBytes(signatureHeader.value))) {
    return { ok: false, reason: 'bad-signature' }
  }

  if (Math.abs(now() - timestamp) > toleranceSeconds * 1000) return { ok: false, reason: 'stale' }
  return { ok: true, timestamp }
}
