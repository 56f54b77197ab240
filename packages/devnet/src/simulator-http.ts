/** HTTP plumbing the devnet's API simulators share: bounded request bodies, listening and closing. */
import type { IncomingMessage, Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A request body as UTF-8 text, at most `maxBytes`. Past the limit the rest is drained but not kept
 * (so the simulator can still answer), and the promise rejects with `tooLarge()`.
 */
export function readRequestText(
  request: IncomingMessage,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) chunks.push(chunk)
    })
    request.on('end', () =>
      size > maxBytes ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString('utf8')),
    )
    request.on('error', reject)
  })
}

/** A simulator's server once listening. */
export interface ListeningServer {
  readonly port: number
  /** Stops listening and closes open connections; idempotent. */
  close(): Promise<void>
}

/**
 * Starts `server` on `host:port` (port 0: a free one).
 * @throws Error when the port cannot be bound.
 */
export async function listenOn(server: Server, host: string, port: number): Promise<ListeningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  let closing: Promise<void> | undefined
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    },
  }
}
