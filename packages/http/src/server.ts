import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type Koa from 'koa'

export interface RunningServer {
  readonly server: Server
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

/** Listens on host:port (port 0 picks a free one) and resolves once the socket is bound. */
export async function listen(koa: Koa, options: { port: number; host?: string }): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1'
  const server = koa.listen(options.port, host)
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
