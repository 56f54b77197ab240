/**
 * Timed HTTP calls, and requests to a chain's HTTP API over several base URLs: each is tried in
 * turn until one answers, and a failing source (unreachable, timed out, 429 or 5xx) makes way for
 * the next. The plugins of families reached over plain HTTP APIs (Esplora, the Hyperliquid API,
 * the perps venue) share it; every timed `fetch` of the code base goes through {@link timedFetch}.
 */
import { PontisError } from './errors.js'
import { keepAliveRequest } from './http-client.js'
import type { ChainLabel } from './plugin.js'

/** A whole answer, read within the deadline. */
export interface TimedResponse {
  readonly status: number
  readonly statusText: string
  readonly ok: boolean
  readonly headers: Headers
  /** The body as text (empty when there is none). */
  readonly text: string
}

export interface TimedFetchOptions {
  /** Deadline of the whole exchange: connect, request, response headers and body. */
  readonly timeoutMs: number
  /** Aborts the call early (the caller no longer needs the answer); its socket is closed. */
  readonly signal?: AbortSignal
  /** Default: keep-alive node:http (`keepAliveRequest`); replaced in tests. */
  readonly fetch?: typeof fetch
}

/** A {@link timedFetch} that ran out of time; `name` is `TimeoutError`, like `AbortSignal.timeout`'s. */
export class FetchTimeoutError extends Error {
  readonly timeoutMs: number
  constructor(timeoutMs: number, options?: ErrorOptions) {
    super(`timed out after ${timeoutMs} ms`, options)
    this.name = 'TimeoutError'
    this.timeoutMs = timeoutMs
  }
}

/**
 * `fetch` of `url` whose whole exchange, body included, ends within `timeoutMs`, or as soon as
 * `options.signal` aborts; either way the request is aborted, so its socket is closed rather than
 * left open. Rejects with {@link FetchTimeoutError} on the deadline, with the signal's reason when
 * the caller aborted, and with fetch's error otherwise.
 *
 * Not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: Node holds the timeout signal only
 * weakly there, so after a garbage collection its timer never fires and the call waits for
 * undici's own 300 s timeout. Here the timer's closure holds the controller, and the timer is
 * cleared the moment the call settles.
 */
export async function timedFetch(
  url: string | URL,
  init: Omit<RequestInit, 'signal'>,
  options: TimedFetchOptions,
): Promise<TimedResponse> {
  const { timeoutMs, signal: parent } = options
  const controller = new AbortController()
  parent?.throwIfAborted()
  const timer = setTimeout(() => controller.abort(new FetchTimeoutError(timeoutMs)), timeoutMs)
  const onParentAbort = (): void => controller.abort(parent?.reason)
  parent?.addEventListener('abort', onParentAbort, { once: true })
  try {
    const signal = controller.signal
    if (options.fetch === undefined) {
      // The whole answer straight from the socket: no Response object to build and read again.
      const answer = await keepAliveRequest(url, { ...init, signal })
      return {
        status: answer.status,
        statusText: answer.statusText,
        ok: answer.status >= 200 && answer.status < 300,
        headers: answer.headers,
        text: answer.body.toString('utf8'),
      }
    }
    const response = await options.fetch(url, { ...init, signal })
    const text = await response.text()
    return {
      status: response.status,
      statusText: response.statusText,
      ok: response.ok,
      headers: response.headers,
      text,
    }
  } catch (error) {
    // fetch rejects with the abort reason, or (a custom fetch) with an AbortError of its own.
    if (controller.signal.aborted) throw controller.signal.reason
    throw error
  } finally {
    clearTimeout(timer)
    parent?.removeEventListener('abort', onParentAbort)
  }
}

/** Where and how to send the requests of one API. */
export interface FailoverTarget {
  /** The API as messages name it, e.g. `Esplora API`. */
  readonly apiName: string
  readonly label: ChainLabel
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
}

/** One request; a body is sent with `contentType`. */
export interface FailoverRequest {
  readonly method?: 'GET' | 'POST'
  readonly body?: string
  readonly contentType?: string
}

class SourceFailure extends Error {}

/**
 * The first answer of `bases` (in order) to `path` that is neither 429 nor 5xx, whatever else its
 * status, read whole within the target's timeout (a source stalling mid-body fails over too). @throws PontisError `RPC_HTTP_ERROR` when every source failed (transient: retry later).
 */
export async function fetchWithFailover(
  bases: readonly string[],
  path: string,
  request: FailoverRequest,
  target: FailoverTarget,
): Promise<TimedResponse> {
  let lastError: unknown
  for (const base of bases) {
    try {
      const response = await timedFetch(
        `${base}${path}`,
        {
          method: request.method ?? 'GET',
          headers: {
            ...target.headers,
            ...(request.body === undefined
              ? {}
              : { 'content-type': request.contentType ?? 'application/json' }),
          },
          ...(request.body === undefined ? {} : { body: request.body }),
        },
        { timeoutMs: target.timeoutMs },
      )
      if (response.status === 429 || response.status >= 500) {
        throw new SourceFailure(`${response.status} ${response.statusText}`)
      }
      return response
    } catch (error) {
      lastError = error
    }
  }
  throw new PontisError(
    'RPC_HTTP_ERROR',
    `The ${target.apiName} of ${target.label.displayName} (${target.label.id}) is unreachable or failing; retry shortly.`,
    { chainId: target.label.id },
    { cause: lastError },
  )
}

/** `RPC_HTTP_ERROR` for an answer the client cannot use, with the start of its body. */
export function unexpectedAnswer(
  target: FailoverTarget,
  shownPath: string,
  status: number,
  body: string,
): PontisError {
  return new PontisError(
    'RPC_HTTP_ERROR',
    `The ${target.apiName} of ${target.label.displayName} (${target.label.id}) answered ${status} to ${shownPath}: ${body.slice(0, 200)}`,
    { chainId: target.label.id, status },
  )
}
