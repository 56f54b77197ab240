/**
 * The loopback webhook receiver of `npx tsx scripts/bench/webhooks.ts`, run in a child process so it never
 * shares the delivery worker's event loop. `POST` any path: checks the signature as a partner
 * would (HMAC-SHA256 of `<timestamp>.<body>` with the API key in WEBHOOK_SECRET), counts the
 * delivery and answers 200 with no body. `GET /stats` answers the counts and, per delivery, the
 * milliseconds from the signature timestamp (set by the sender just before it connects) to the
 * end of the body here. `DELETE /stats` resets them. Listens on RECEIVER_PORT (0: a free port).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What `GET /stats` answers. */
export interface ReceiverStats {
  readonly received: number
  readonly badSignatures: number
  /** Distinct `X-Event-Id` values: fewer than `received` means an event arrived twice. */
  readonly distinctEvents: number
  /** Per delivery: receipt time minus `X-Signature-Timestamp`, milliseconds (the sender's clock has 1 ms steps). */
  readonly latenciesMs: readonly number[]
}

const secret = process.env.WEBHOOK_SECRET ?? ''
if (secret === '') throw new Error('WEBHOOK_SECRET is required')

let received = 0
let badSignatures = 0
const events = new Set<string>()
let latenciesMs: number[] = []

function signatureMatches(timestamp: string, body: Buffer, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest()
  const given = Buffer.from(signature, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const server = createServer((req, res) => {
  if (req.url === '/stats') {
    if (req.method === 'DELETE') {
      received = 0
      badSignatures = 0
      events.clear()
      latenciesMs = []
      res.writeHead(204).end()
      return
    }
    const stats: ReceiverStats = { received, badSignatures, distinctEvents: events.size, latenciesMs }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats))
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const arrivedMs = performance.timeOrigin + performance.now()
    const timestamp = String(req.headers['x-signature-timestamp'] ?? '')
    const signature = String(req.headers['x-signature-sha256'] ?? '')
    received++
    if (!signatureMatches(timestamp, Buffer.concat(chunks), signature)) badSignatures++
    events.add(String(req.headers['x-event-id'] ?? ''))
    latenciesMs.push(arrivedMs - Number(timestamp))
    res.writeHead(200).end()
  })
})
server.keepAliveTimeout = 5000
server.listen(Number(process.env.RECEIVER_PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  console.log(`webhook receiver  http://127.0.0.1:${port}`)
})
const stop = () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
