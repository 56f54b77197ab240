/**
 * A JSON-RPC proxy on loopback that records every call (batches included) before forwarding it
 * to the real node: how the RPC economy of a quote is counted without touching the plugins.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One JSON-RPC call seen by the proxy. */
export interface RecordedCall {
  readonly method: string
  /** The call's params as JSON: together with the method, what makes two reads "the same read". */
  readonly params: string
  /** `performance.now()` when it arrived. */
  readonly at: number
}

export interface CountingProxy {
  /** The proxy's URL: give it to a chain's `rpc.url`. */
  readonly url: string
  /** Every call since the start or the last {@link CountingProxy.reset}, in arrival order. */
  calls(): readonly RecordedCall[]
  reset(): void
  close(): Promise<void>
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Starts a counting proxy in front of `upstream` (a JSON-RPC HTTP URL) on 127.0.0.1, on a free port. */
export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  let recorded: RecordedCall[] = []
  const server = createServer((request, response) => {
    void (async () => {
      const text = await readBody(request)
      const at = performance.now()
      try {
        const parsed = JSON.parse(text) as unknown
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
          const { method, params } = call as { method?: unknown; params?: unknown }
          recorded.push({ method: String(method), params: JSON.stringify(params ?? []), at })
        }
      } catch {
        recorded.push({ method: '(not JSON)', params: '', at })
      }
      const answer = await fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      })
      response.writeHead(answer.status, { 'content-type': 'application/json' })
      response.end(Buffer.from(await answer.arrayBuffer()))
    })().catch((error: unknown) => {
      response.writeHead(502, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: String(error) } }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => recorded,
    reset: () => {
      recorded = []
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Calls per method, most frequent first, as `method ×n` joined by commas ("none" when empty). */
export function summarizeCalls(calls: readonly RecordedCall[]): string {
  const counts = new Map<string, number>()
  for (const call of calls) counts.set(call.method, (counts.get(call.method) ?? 0) + 1)
  if (counts.size === 0) return 'none'
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([method, count]) => `${method} ×${count}`)
    .join(', ')
}

/**
 * Calls that repeat an earlier call (same method and params) made less than `ttlMs` before it:
 * reads a cache with that TTL should have answered.
 */
export function repeatedWithin(calls: readonly RecordedCall[], ttlMs: number): RecordedCall[] {
  const lastSeen = new Map<string, number>()
  const repeats: RecordedCall[] = []
  for (const call of calls) {
    const key = `${call.method} ${call.params}`
    const previous = lastSeen.get(key)
    if (previous !== undefined && call.at - previous < ttlMs) repeats.push(call)
    lastSeen.set(key, call.at)
  }
  return repeats
}
