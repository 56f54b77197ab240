import type { IncomingMessage } from 'node:http'

/**
 * A request body as UTF-8 text, at most `maxBytes`. Past the limit the rest is drained but not kept
 * (so the simulator can still answer), and the promise rejects with `tooLarge()`. Shared by the
 * devnet's HTTP simulators.
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
