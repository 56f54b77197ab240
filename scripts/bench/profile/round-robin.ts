/**
 * A reverse proxy on loopback that sends each request to the next of several upstreams in turn:
 * the load balancer in front of the scale-out run's API instances.
 */
import { Agent, createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A loopback reverse proxy sending each request to the next upstream in turn. */
export interface RoundRobinProxy {
  readonly url: string
  /** Requests forwarded to each upstream, in the order given. */
  forwarded(): readonly number[]
  close(): Promise<void>
}

/** Starts a round-robin HTTP proxy on 127.0.0.1 (free port) in front of `upstreams` (base URLs). */
export async function startRoundRobinProxy(upstreams: readonly string[]): Promise<RoundRobinProxy> {
  const counts = upstreams.map(() => 0)
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  let next = 0
  const server = createServer((incoming, outgoing) => {
    const index = next
    next = (next + 1) % upstreams.length
    counts[index] = (counts[index] ?? 0) + 1
    const target = new URL(incoming.url ?? '/', upstreams[index])
    const forward = httpRequest(
      target,
      { method: incoming.method, headers: { ...incoming.headers, host: target.host }, agent },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    forward.on('error', (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'application/json' })
      outgoing.end(JSON.stringify({ message: `upstream ${upstreams[index]}: ${error.message}` }))
    })
    incoming.pipe(forward)
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded: () => counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        agent.destroy()
        server.close(() => resolve())
      }),
  }
}
