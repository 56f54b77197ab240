/**
 * Requests to a chain's HTTP API over several base URLs: each is tried in turn until one answers,
 * and a failing source (unreachable, timed out, 429 or 5xx) makes way for the next. The plugins of
 * families reached over plain HTTP APIs (Esplora, the Hyperliquid API, the perps venue) share it.
 */
import { PontisError } from './errors.js'
import type { ChainLabel } from './plugin.js'

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
 * status. @throws PontisError `RPC_HTTP_ERROR` when every source failed (transient: retry later).
 */
export async function fetchWithFailover(
  bases: readonly string[],
  path: string,
  request: FailoverRequest,
  target: FailoverTarget,
): Promise<Response> {
  let lastError: unknown
  for (const base of bases) {
    try {
      const response = await fetch(`${base}${path}`, {
        method: request.method ?? 'GET',
        headers: {
          ...target.headers,
          ...(request.body === undefined
            ? {}
            : { 'content-type': request.contentType ?? 'application/json' }),
        },
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: AbortSignal.timeout(target.timeoutMs),
      })
      if (response.status === 429 || response.status >= 500) {
        // Drain so the connection can be reused, then try the next source.
        await response.text().catch(() => '')
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
