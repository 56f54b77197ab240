/**
 * One webhook delivery attempt: SSRF check, a signed POST pinned to the checked address, and the
 * classification of what happened. Scheduling, persistence and retry counting belong to the outbox.
 */
import type { LookupAddress, LookupOptions } from 'node:dns'
import {
  request as httpRequest,
  type IncomingMessage,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import { isIP } from 'node:net'
import {
  type CheckedTarget,
  checkTarget,
  PROTECTED_HEADERS,
  type WebhookLookup,
  WebhookTargetError,
  type WebhookTargetPolicy,
} from '../keys/webhook-target.js'
import { signWebhook } from './signature.js'

/** `User-Agent` of every webhook request. */
export const WEBHOOK_USER_AGENT = 'Pontis-Webhooks/1'

/** Response bytes read (and discarded) before the connection is dropped. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024

// The contract: 1 to 128 characters, identical on every retry. Visible ASCII keeps it a valid header.
const EVENT_ID_PATTERN = /^[\x21-\x7e]{1,128}$/

/** What the outbox should do after an attempt. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'unresolvable' | 'disable' | 'rejected-target'

/**
 * Result of {@link deliverOnce}.
 *
 * - `delivered`: a 2xx answer.
 * - `retry`: another non-2xx (3xx included: redirects are never followed), a timeout, a network
 *   error or a resolver that could not answer. `retryAfterMs` carries the receiver's `Retry-After`.
 * - `unresolvable`: the host name does not exist (NXDOMAIN). It passed the check when it was set,
 *   so it may come back (a DNS change in flight): retried a few times only, then dead-lettered.
 * - `disable`: 410 Gone; the receiver asks for the endpoint to be switched off.
 * - `rejected-target`: the configuration is unusable (SSRF policy, scheme, credentials in the URL,
 *   an invalid custom header); retrying cannot help until it changes.
 *
 * `error` is a short description without secrets (no API key, URL credentials or header values).
 */
export interface DeliveryResult {
  outcome: DeliveryOutcome
  status?: number
  retryAfterMs?: number
  error?: string
}

/** Input of {@link deliverOnce}. */
export interface DeliverOptions {
  /** The configured webhook URL. */
  url: string
  /** Custom headers of the endpoint; protected names ({@link PROTECTED_HEADERS}) are ignored. */
  headers?: Record<string, string>
  /** The exact JSON body to send; it is signed byte for byte. */
  body: string | Uint8Array
  /** The API key the endpoint belongs to (the HMAC secret), or its equivalent digest. */
  apiKey: string | Uint8Array
  /** Stable event id, sent as `X-Event-Id` on every attempt (1 to 128 visible ASCII characters). */
  eventId: string
  /** Time budget of the whole attempt (DNS, connect, TLS, request, response headers). */
  timeoutMs: number
  /** SSRF policy. */
  policy: WebhookTargetPolicy
  /** Clock, Unix milliseconds; the signature timestamp of this attempt. Default `Date.now`. */
  now?: () => number
  /** Resolver for the SSRF check; defaults to `dns.promises.lookup`. */
  lookup?: WebhookLookup
  /** Response body bytes to read before dropping the connection. Default {@link DEFAULT_MAX_RESPONSE_BYTES}. */
  maxResponseBytes?: number
  /** Aborts the attempt (e.g. on shutdown); the result is then `retry`. */
  signal?: AbortSignal
}

/**
 * Parses a `Retry-After` value: delay-seconds or an HTTP date.
 *
 * @param value - The header value, if present.
 * @param nowMs - Current time (Unix ms), to turn a date into a delay.
 * @returns The delay in milliseconds (0 for a date in the past), or `undefined` when absent or invalid.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^[0-9]+$/.test(text)) {
    const ms = Number(text) * 1000
    return Number.isFinite(ms) ? ms : undefined
  }
  // Only HTTP dates (they name a weekday or month); Date.parse alone would accept "1" or "2025".
  if (!/[a-z]/i.test(text)) return undefined
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

function outcomeForStatus(status: number, retryAfterMs: number | undefined): DeliveryResult {
  if (status >= 200 && status < 300) return { outcome: 'delivered', status }
  if (status === 410)
    return { outcome: 'disable', status, error: 'HTTP 410: the receiver asked to disable the endpoint' }
  const error =
    status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`
  return retryAfterMs === undefined
    ? { outcome: 'retry', status, error }
    : { outcome: 'retry', status, retryAfterMs, error }
}

/** Custom headers without the protected names, or a description of the first one that cannot be sent. */
function customHeaders(headers: Record<string, string> | undefined): Record<string, string> | string {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (PROTECTED_HEADERS.has(name.toLowerCase())) continue
    try {
      validateHeaderName(name)
      validateHeaderValue(name, value)
    } catch {
      // The value may be a secret (an auth token): name the header only.
      return `custom header ${JSON.stringify(name.slice(0, 64))} has an invalid name or value`
    }
    kept[name] = value
  }
  return kept
}

/** A `lookup` for `net.connect` that always answers the pre-checked address: no second resolution. */
function pinnedLookup(
  target: CheckedTarget,
): (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void {
  return (_hostname, options, callback) => {
    // With autoSelectFamily (the Node 20 default) net asks for all addresses.
    if (options.all === true) callback(null, [{ address: target.address, family: target.family }])
    else callback(null, target.address, target.family)
  }
}

/** Resolves with the promise, or rejects as soon as the signal aborts (the work itself may linger). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'))
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/**
 * Makes one delivery attempt of a webhook event.
 *
 * Checks the URL with {@link checkTarget}, then POSTs `body` to the checked address (the
 * connection is pinned to it; Host and TLS SNI stay the URL's host name) with `Content-Type:
 * application/json`, `User-Agent`, `X-Event-Id`, the custom headers and `X-Signature-Timestamp` /
 * `X-Signature-SHA256` signed for this attempt's timestamp over the exact body bytes. Redirects are
 * not followed; the response body is read up to `maxResponseBytes` and discarded. The whole
 * attempt, DNS included, is bounded by `timeoutMs`.
 *
 * Never throws for anything the receiver or network does; see {@link DeliveryResult}.
 *
 * @throws TypeError on caller mistakes: an invalid `eventId`, a non-positive `timeoutMs`.
 */
export async function deliverOnce(options: DeliverOptions): Promise<DeliveryResult> {
  const { timeoutMs, eventId } = options
  if (!EVENT_ID_PATTERN.test(eventId))
    throw new TypeError('eventId must be 1 to 128 visible ASCII characters')
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new TypeError('timeoutMs must be a positive number')
  const now = options.now ?? Date.now
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES

  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, timeoutMs)
  const onOuterAbort = (): void => controller.abort()
  if (options.signal?.aborted === true) controller.abort()
  options.signal?.addEventListener('abort', onOuterAbort, { once: true })
  const abortedResult = (): DeliveryResult => ({
    outcome: 'retry',
    error: timedOut ? `timed out after ${timeoutMs} ms` : 'aborted',
  })

  try {
    let target: CheckedTarget
    try {
      target = await untilAborted(checkTarget(options.url, options.policy, options.lookup), controller.signal)
    } catch (error) {
      if (error instanceof WebhookTargetError) {
        // A failed resolution may be transient; everything else is the configuration's fault.
        const outcome =
          error.reason === 'dns-failure'
            ? 'retry'
            : error.reason === 'unresolvable'
              ? 'unresolvable'
              : 'rejected-target'
        return { outcome, error: error.message }
      }
      if (controller.signal.aborted) return abortedResult()
      return { outcome: 'retry', error: error instanceof Error ? error.message : 'target check failed' }
    }

    const custom = customHeaders(options.headers)
    if (typeof custom === 'string') return { outcome: 'rejected-target', error: custom }
    const body = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body
    const headers: Record<string, string> = {
      ...custom,
      'Content-Type': 'application/json',
      'Content-Length': String(body.byteLength),
      'User-Agent': WEBHOOK_USER_AGENT,
      'X-Event-Id': eventId,
      // Signed now, per attempt, so the timestamp is the time of sending.
      ...signWebhook(body, options.apiKey, now()),
    }
    return await post(target, headers, body, controller.signal, maxResponseBytes, now, abortedResult)
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', onOuterAbort)
  }
}

function post(
  target: CheckedTarget,
  headers: Record<string, string>,
  body: Uint8Array,
  signal: AbortSignal,
  maxResponseBytes: number,
  now: () => number,
  abortedResult: () => DeliveryResult,
): Promise<DeliveryResult> {
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false
    let answered: DeliveryResult | undefined
    const settle = (result: DeliveryResult): void => {
      if (settled) return
      settled = true
      resolve(result)
    }

    const { url } = target
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
    const requestOptions: RequestOptions = {
      protocol: url.protocol,
      hostname,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      // A private agent per attempt: no pooled socket from another resolution is ever reused.
      agent: false,
      lookup: pinnedLookup(target),
      signal,
    }
    if (url.port !== '') requestOptions.port = Number(url.port)
    // SNI carries the original host name (never an IP literal, which TLS forbids in SNI).
    if (url.protocol === 'https:' && isIP(hostname) === 0) requestOptions.servername = hostname

    let request: ReturnType<typeof httpRequest>
    try {
      request = url.protocol === 'https:' ? httpsRequest(requestOptions) : httpRequest(requestOptions)
    } catch (error) {
      settle({ outcome: 'retry', error: error instanceof Error ? error.message : 'request failed' })
      return
    }

    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0
      const retryAfter = response.headers['retry-after']
      answered = outcomeForStatus(status, parseRetryAfter(retryAfter, now()))
      const result = answered
      let received = 0
      response.on('data', (chunk: Buffer) => {
        received += chunk.length
        // Enough: the body is discarded anyway, and a huge one must not keep the worker busy.
        if (received > maxResponseBytes) response.destroy()
      })
      response.on('end', () => settle(result))
      response.on('close', () => settle(result))
      response.on('error', () => settle(result))
    })
    request.on('error', (error: NodeJS.ErrnoException) => {
      // Once a status arrived, it decides; a later abort or reset only cut the discarded body.
      if (answered !== undefined) settle(answered)
      else if (signal.aborted) settle(abortedResult())
      else settle({ outcome: 'retry', error: error.message || error.code || 'network error' })
    })
    request.end(body)
  })
}
