import { type ChainLabel, keepAliveFetch, PontisError } from '@pontis/core/plugin'

export { ReadCache } from '@pontis/core/plugin'

import { createPublicClient, fallback, HttpRequestError, http, type PublicClient, TimeoutError } from 'viem'

export interface RpcOptions {
  readonly url: string
  /** Further endpoints tried in order when the primary fails, so one faulty provider is not fatal. */
  readonly fallbackUrls?: readonly string[]
  readonly timeoutMs?: number
  readonly headers?: Readonly<Record<string, string>>
}

export function createRpcClient(options: RpcOptions): PublicClient {
  const transportFor = (url: string) =>
    http(url, {
      timeout: options.timeoutMs ?? 10_000,
      retryCount: 1,
      // A third of the CPU of Node's fetch per call (see keepAliveFetch).
      fetchFn: keepAliveFetch,
      ...(options.headers ? { fetchOptions: { headers: { ...options.headers } } } : {}),
    })
  const urls = [options.url, ...(options.fallbackUrls ?? [])]
  return createPublicClient({
    transport: urls.length === 1 ? transportFor(options.url) : fallback(urls.map(transportFor)),
  })
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = []
  for (let current = error; current && chain.length < 8; current = (current as { cause?: unknown }).cause) {
    chain.push(current)
  }
  return chain
}

/**
 * RPC trouble is the chain's, not the client's: it becomes a transient, retryable 503 code that
 * names the chain, never a 500. Contract reverts and bad input are not RPC trouble and pass through.
 */
export function isTransportFailure(error: unknown): boolean {
  return causes(error).some(
    (cause) =>
      cause instanceof HttpRequestError ||
      cause instanceof TimeoutError ||
      (cause instanceof Error && /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up/i.test(cause.message)),
  )
}

export function toTransientError(error: unknown, chain: ChainLabel): PontisError {
  const timedOut = causes(error).some((cause) => cause instanceof TimeoutError)
  const where = `${chain.displayName} (${chain.id})`
  return timedOut
    ? new PontisError('REQUEST_TIMED_OUT', `The RPC of ${where} did not answer in time; retry shortly.`, {
        chainId: chain.id,
      })
    : new PontisError(
        'RPC_HTTP_ERROR',
        `The RPC of ${where} is unreachable or failing; retry shortly.`,
        { chainId: chain.id },
        {
          cause: error,
        },
      )
}

/** Runs an RPC read, mapping transport failures to the transient codes. */
export async function rpc<T>(chain: ChainLabel, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (isTransportFailure(error)) throw toTransientError(error, chain)
    throw error
  }
}
