import { once } from 'node:events'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'

/** How long an idle keep-alive connection stays open (as common load balancers keep theirs). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000

export interface RunningServer {
  readonly server: Server
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

/**
 * Listens on host:port (port 0 picks a free one) and resolves once the socket is bound. Give the
 * whole app (`createApiApp`'s answer) so its direct operations are served; a bare Koa serves
 * everything through Koa.
 */
export async function listen(
  app: Koa | { readonly handle: RequestListener },
  options: { port: number; host?: string },
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1'
  const server = createServer(
    {
      // Idle keep-alive connections outlive any client's own idle timeout (undici's: 4 s, Node's
      // default here: 5 s), so the client always closes first: a client sending on a socket the
      // server closed a moment before gets "fetch failed" (seen on a loaded machine).
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: KEEP_ALIVE_TIMEOUT_MS + 1_000,
    },
    app instanceof Koa ? app.callback() : app.handle,
  ).listen(options.port, host)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const urlHost = host.includes(':') ? `[${host}]` : host
  return {
    server,
    port,
    url: `http://${urlHost}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }
}
