/**
 * The benchmark's baseline: the same koa and Node, no routing library, validation, logging or
 * storage. `POST /bare` reads and parses a JSON body and answers a small JSON object; `GET /bare`
 * answers without a body to read. Listens on BARE_PORT (0 picks a free port) and logs its URL.
 */
import type { AddressInfo } from 'node:net'
import Koa from 'koa'

const koa = new Koa()
koa.use(async (ctx) => {
  if (ctx.path !== '/bare') {
    ctx.status = 404
    return
  }
  if (ctx.method === 'GET') {
    ctx.body = { ok: true }
    return
  }
  if (ctx.method !== 'POST') {
    ctx.status = 405
    return
  }
  const chunks: Buffer[] = []
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer)
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
  ctx.body = { ok: true, fields: Object.keys(body).length }
})

const server = koa.listen(Number(process.env.BARE_PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  console.log(`bare koa  http://127.0.0.1:${port}`)
})
const stop = () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
