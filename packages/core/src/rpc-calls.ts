/**
 * Observing the calls every plugin makes to its chain's node: one hook in the shared HTTP layer
 * ({@link keepAliveRequest}, under timedFetch, fetchWithFailover and the EVM and SVM JSON-RPC
 * clients), so no plugin counts its own calls. A call is attributed to a chain by its URL: the
 * services watch each chain's `rpc.url`, `rpc.fallbackUrls` and the adapter's `apiUrls` (a
 * separate Esplora, node or explorer URL); calls to any other URL (peer oracles, webhooks, swap
 * APIs) are not reported.
 */

/**
 * How one call ended: an answer (any status below 500 but 429), a failure, or no answer in time; or
 * `disagreement`: the node answered a fact (a block hash at a height) the other configured nodes of
 * its chain contradict, so it was not trusted ({@link reportRpcDisagreement}).
 */
export type RpcCallOutcome = 'ok' | 'error' | 'timeout' | 'disagreement'

export interface RpcCallObservation {
  readonly chainId: number
  readonly outcome: RpcCallOutcome
  readonly durationSeconds: number
}

export type RpcCallObserver = (observation: RpcCallObservation) => void

interface WatchedEndpoint {
  /** The endpoint URL without query or fragment; a call matches when its URL starts with it. */
  readonly prefix: string
  readonly chainId: number
}

interface Watch {
  readonly endpoints: readonly WatchedEndpoint[]
  readonly observe: RpcCallObserver
}

const watches = new Set<Watch>()

function prefixOf(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`
  } catch {
    return undefined
  }
}

/**
 * Reports to `observe` every call made in this process to one of `endpoints` (the longest matching
 * URL wins, so chains on one host with different paths stay apart). Answers the function that stops
 * watching.
 */
export function watchRpcCalls(
  endpoints: ReadonlyArray<{ readonly url: string; readonly chainId: number }>,
  observe: RpcCallObserver,
): () => void {
  const watched = endpoints
    .map((endpoint) => ({ prefix: prefixOf(endpoint.url), chainId: endpoint.chainId }))
    .filter((endpoint): endpoint is WatchedEndpoint => endpoint.prefix !== undefined)
    .sort((a, b) => b.prefix.length - a.prefix.length)
  const watch: Watch = { endpoints: watched, observe }
  watches.add(watch)
  return () => {
    watches.delete(watch)
  }
}

/** The observers watching `url`, with the chain each attributes it to. */
function observersOf(url: URL): Array<{ observe: RpcCallObserver; chainId: number }> {
  const target = `${url.origin}${url.pathname}`
  const matched: Array<{ observe: RpcCallObserver; chainId: number }> = []
  for (const watch of watches) {
    const endpoint = watch.endpoints.find(
      (candidate) =>
        target === candidate.prefix ||
        target.startsWith(candidate.prefix.endsWith('/') ? candidate.prefix : `${candidate.prefix}/`),
    )
    if (endpoint) matched.push({ observe: watch.observe, chainId: endpoint.chainId })
  }
  return matched
}

/**
 * A plugin found the node at `url` contradicting the other nodes of its chain (a different block
 * hash for the same height): counted as a call with outcome `disagreement`.
 */
export function reportRpcDisagreement(url: string): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return
  }
  for (const { observe, chainId } of observersOf(parsed)) {
    try {
      observe({ chainId, outcome: 'disagreement', durationSeconds: 0 })
    } catch {
      // An observer's failure must never fail the read that reports.
    }
  }
}

/**
 * Called by the HTTP layer when a call to `url` starts: answers the function to call with its
 * outcome, or undefined when nobody watches that URL (the common case costs one check).
 */
export function rpcCallStarted(url: URL): ((outcome: RpcCallOutcome) => void) | undefined {
  if (watches.size === 0) return undefined
  const matched = observersOf(url)
  if (matched.length === 0) return undefined
  const started = performance.now()
  return (outcome) => {
    const durationSeconds = (performance.now() - started) / 1000
    for (const { observe, chainId } of matched) {
      try {
        observe({ chainId, outcome, durationSeconds })
      } catch {
        // An observer's failure must never fail the call it observes.
      }
    }
  }
}

/** The outcome of a call that threw: a deadline or abort is a timeout, anything else an error. */
export function rpcFailureOutcome(error: unknown): RpcCallOutcome {
  const name = (error as { name?: unknown } | null)?.name
  return name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'error'
}

/**
 * The endpoints of chains as {@link watchRpcCalls} takes them: each chain's `rpc.url`, its
 * fallbacks and the other URLs of the chain's API its adapter calls (`apiUrls`).
 */
export function rpcEndpointsOf(
  chains: ReadonlyArray<{
    readonly id: number
    readonly entry: { readonly rpc: { readonly url: string; readonly fallbackUrls?: readonly string[] } }
    readonly adapter?: { readonly apiUrls?: readonly string[] }
  }>,
): Array<{ url: string; chainId: number }> {
  return chains.flatMap((chain) =>
    [chain.entry.rpc.url, ...(chain.entry.rpc.fallbackUrls ?? []), ...(chain.adapter?.apiUrls ?? [])].map(
      (url) => ({ url, chainId: chain.id }),
    ),
  )
}
