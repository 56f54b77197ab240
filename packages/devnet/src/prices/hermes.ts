/**
 * SIMULATOR of Pyth's Hermes price service (`GET /v2/updates/price/latest`), the public HTTP price API
 * the intent service's `pyth` price source speaks. No real Hermes can run here; this one answers the
 * same JSON shape (`parsed[]` with `price: {price, conf, expo, publish_time}`), validates what it is
 * sent as Hermes does (400 for a missing or malformed `ids[]`, 404 for an unknown id) and lets a
 * test move a price, age it, or take the service down.
 */
import { createServer } from 'node:http'
import { listenOn } from '../simulator-http.js'

/** One price as Hermes serves it: `price × 10^expo` USD, published at `publishTime` (Unix seconds). */
export interface HermesPrice {
  price: bigint
  expo: number
  publishTime: number
  conf?: bigint
}

/** Options of {@link startHermesSimulator}. */
export interface HermesSimulatorOptions {
  host?: string
  /** 0 (default) picks a free port. */
  port?: number
  /** Feed id (64 hex digits, with or without 0x) → price. */
  prices?: Readonly<Record<string, HermesPrice>>
  /** The clock publish times default to (Unix seconds). */
  now?: () => number
}

/** A running simulator. */
export interface HermesSimulator {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string
  /** Sets (or adds) a feed's price. */
  setPrice(id: string, price: HermesPrice): void
  /** While down, every request answers 503. */
  setDown(down: boolean): void
  /** Requests answered with prices since start. */
  readonly requests: number
  stop(): Promise<void>
}

const FEED_ID = /^(0x)?[0-9a-f]{64}$/i

const normalizeId = (id: string): string => id.toLowerCase().replace(/^0x/, '')

export async function startHermesSimulator(options: HermesSimulatorOptions = {}): Promise<HermesSimulator> {
  const prices = new Map<string, HermesPrice>()
  for (const [id, price] of Object.entries(options.prices ?? {})) prices.set(normalizeId(id), price)
  let down = false
  let requests = 0
  const server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(typeof body === 'string' ? body : JSON.stringify(body))
    }
    const url = new URL(request.url ?? '/', 'http://hermes')
    if (request.method !== 'GET' || url.pathname !== '/v2/updates/price/latest') {
      reply(404, 'Not Found')
      return
    }
    if (down) {
      reply(503, 'Service Unavailable')
      return
    }
    // Hermes accepts `ids[]=` repeated (and `ids=` as an alias).
    const ids = [...url.searchParams.getAll('ids[]'), ...url.searchParams.getAll('ids')]
    if (ids.length === 0) {
      reply(400, 'Missing query parameter: ids[]')
      return
    }
    const malformed = ids.find((id) => !FEED_ID.test(id))
    if (malformed !== undefined) {
      reply(400, `Invalid price id: ${malformed}`)
      return
    }
    const missing = ids.find((id) => !prices.has(normalizeId(id)))
    if (missing !== undefined) {
      reply(404, `Price ids not found: ${missing}`)
      return
    }
    requests += 1
    const parsed = ids.map((id) => {
      const price = prices.get(normalizeId(id)) as HermesPrice
      const shape = {
        price: price.price.toString(),
        conf: (price.conf ?? 0n).toString(),
        expo: price.expo,
        publish_time: price.publishTime,
      }
      return {
        id: normalizeId(id),
        price: shape,
        ema_price: shape,
        metadata: {
          slot: requests,
          proof_available_time: price.publishTime,
          prev_publish_time: price.publishTime,
        },
      }
    })
    const encoding = url.searchParams.get('encoding') ?? 'hex'
    reply(200, {
      binary: { encoding, data: [] },
      ...(url.searchParams.get('parsed') === 'false' ? {} : { parsed }),
    })
  })
  const listening = await listenOn(server, options.host ?? '127.0.0.1', options.port ?? 0)
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${listening.port}`,
    setPrice(id, price) {
      prices.set(normalizeId(id), price)
    },
    setDown(value) {
      down = value
    },
    get requests() {
      return requests
    },
    stop: () => listening.close(),
  }
}
