/**
 * The services' own outgoing HTTP (peer oracles, chain APIs, JSON-RPC) on node:http and node:https
 * with keep-alive agents, behind the `fetch` interface. Node 20's fetch (undici) spends about three
 * times the CPU per call on loopback (its WHATWG Request, Headers and stream machinery), and an
 * aggregated attestation makes five such calls across its three oracles.
 *
 * The subset of fetch the services use: a string or URL, a string or byte body, any method, header
 * records or Headers, `signal`, and `redirect` (`follow`, the default, up to 20 hops as fetch does
 * it; `error`; `manual`). Anything else (a Request, a stream or form body) goes to global fetch.
 * Like fetch it rejects with `TypeError('fetch failed')` (cause attached) on a network error and
 * with the signal's reason on abort, and answers a gzip, deflate or br body decoded.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { rpcCallStarted, rpcFailureOutcome } from './rpc-calls.js'

/**
 * An idle socket is closed after this long, or a second before the server's `Keep-Alive: timeout`
 * hint when that is sooner (Node's agent only honours the hint when a timeout is set), so a request
 * rarely goes out on a socket the server is closing.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000
const httpAgent = new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS })
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS })
/**
 * Attempts of one exchange when a reused idle socket turns out closed by the server before any
 * answer (ECONNRESET, "socket hang up"): the request never reached the server's handler, so it goes
 * again, as Node's documentation advises. A fresh connection's failure is never retried.
 */
const STALE_SOCKET_ATTEMPTS = 3
const MAX_REDIRECTS = 20
/** Statuses whose Response cannot carry a body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304])
const REDIRECT = new Set([301, 302, 303, 307, 308])

function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  const record: Record<string, string> = {}
  if (headers === undefined) return record
  new Headers(headers).forEach((value, name) => {
    record[name] = value
  })
  return record
}

function decoded(body: Buffer, encoding: string | undefined): Buffer {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body)
    case 'deflate':
      return inflateSync(body)
    case 'br':
      return brotliDecompressSync(body)
    default:
      return body
  }
}

/** A whole answer: the final one when redirects are followed; the body decoded. */
export interface KeepAliveAnswer {
  readonly status: number
  readonly statusText: string
  readonly headers: Headers
  readonly body: Buffer
}

interface Exchange extends KeepAliveAnswer {
  readonly location: string | undefined
}

/** A failure before any answer on a socket the agent reused: the server closed it while idle. */
class StaleSocketError extends Error {}

async function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal | undefined,
): Promise<Exchange> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exchangeOnce(url, method, headers, body, signal)
    } catch (error) {
      if (!(error instanceof StaleSocketError)) throw error
      if (attempt >= STALE_SOCKET_ATTEMPTS) throw new TypeError('fetch failed', { cause: error.cause })
    }
  }
}

function exchangeOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal | undefined,
): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    const https = url.protocol === 'https:'
    const send = https ? httpsRequest : httpRequest
    const request = send(url, {
      method,
      headers,
      agent: https ? httpsAgent : httpAgent,
      ...(signal ? { signal } : {}),
    })
    let answered = false
    const fail = (error: unknown) => {
      if (signal?.aborted) reject(signal.reason)
      else if (!answered && request.reusedSocket)
        reject(new StaleSocketError('stale socket', { cause: error }))
      else reject(new TypeError('fetch failed', { cause: error }))
    }
    request.once('error', fail)
    request.once('response', (response: IncomingMessage) => {
      answered = true
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.once('error', fail)
      let ended = false
      // An answer cut off (peer gone, request aborted) without an 'error' must not leave us waiting.
      response.once('close', () => {
        if (!ended) fail(new Error('the connection closed before the answer ended'))
      })
      response.once('end', () => {
        ended = true
        try {
          const responseHeaders = new Headers()
          const raw = response.rawHeaders
          for (let index = 0; index < raw.length; index += 2)
            responseHeaders.append(raw[index]!, raw[index + 1]!)
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            headers: responseHeaders,
            location: response.headers.location,
            body: decoded(Buffer.concat(chunks), response.headers['content-encoding']),
          })
        } catch (error) {
          fail(error)
        }
      })
    })
    request.end(body)
  })
}

/**
 * One request, answered whole (see the module comment): what {@link keepAliveFetch} answers, without
 * building a Response, for callers that read the body anyway (timedFetch).
 */
export async function keepAliveRequest(
  input: string | URL,
  init: RequestInit = {},
): Promise<KeepAliveAnswer> {
  // Calls to a chain's node are counted here, once for every plugin (see rpc-calls.ts).
  const observed = rpcCallStarted(new URL(input))
  if (observed === undefined) return requestWhole(input, init)
  try {
    const answer = await requestWhole(input, init)
    observed(answer.status === 429 || answer.status >= 500 ? 'error' : 'ok')
    return answer
  } catch (error) {
    observed(rpcFailureOutcome(error))
    throw error
  }
}

async function requestWhole(input: string | URL, init: RequestInit): Promise<KeepAliveAnswer> {
  const body = init.body ?? undefined
  let url = new URL(input)
  if (
    (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) ||
    (url.protocol !== 'http:' && url.protocol !== 'https:')
  ) {
    const response = await fetch(input, init)
    return {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      body: Buffer.from(await response.arrayBuffer()),
    }
  }
  init.signal?.throwIfAborted()
  let method = (init.method ?? 'GET').toUpperCase()
  let payload: string | Uint8Array | undefined = body
  const headers = headerRecord(init.headers)
  const redirect = init.redirect ?? 'follow'
  for (let hops = 0; ; hops++) {
    const answer = await exchange(url, method, headers, payload, init.signal ?? undefined)
    if (!REDIRECT.has(answer.status) || answer.location === undefined || redirect === 'manual') return answer
    if (redirect === 'error' || hops >= MAX_REDIRECTS) {
      throw new TypeError('fetch failed', {
        cause: new Error(redirect === 'error' ? 'unexpected redirect' : 'redirect count exceeded'),
      })
    }
    // As fetch: 303 (and 301/302 after a POST) continue as a GET without the body.
    if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
      if (method !== 'HEAD') method = 'GET'
      payload = undefined
      for (const name of Object.keys(headers)) {
        if (/^content-/i.test(name)) delete headers[name]
      }
    }
    const next = new URL(answer.location, url)
    // Credentials stay with the origin that was asked.
    if (next.origin !== url.origin) {
      for (const name of Object.keys(headers)) {
        if (/^(authorization|cookie|proxy-authorization)$/i.test(name)) delete headers[name]
      }
    }
    url = next
  }
}

/** See the module comment: `fetch` on keep-alive node:http/https agents. */
export const keepAliveFetch: typeof fetch = async (input, init = {}) => {
  if (input instanceof Request) return fetch(input, init)
  const { status, statusText, headers, body } = await keepAliveRequest(input, init)
  const bytes = NULL_BODY.has(status)
    ? null
    : new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength)
  return new Response(bytes, { status, statusText, headers })
}
