import { once } from 'node:events'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'

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
  const server = createServer(app instanceof Koa ? app.callback() : app.handle).listen(options.port, host)
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
