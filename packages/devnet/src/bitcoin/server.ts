/**
 * The Bitcoin devnet's HTTP server: the Esplora REST API subset clients use, answered from a
 * {@link BitcoinChain}, plus the `/dev/*` simulator extensions (mining, funding, fee estimates).
 * Texts and statuses follow electrs: JSON bodies, plain-text errors (400 for bad input, 404 for
 * unknown transactions and blocks).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { type ListeningServer, listenOn, readRequestText } from '../simulator-http.js'
import type { BitcoinChain } from './chain.js'
import { BitcoinRejection } from './errors.js'
import {
  type EsploraAddress,
  type EsploraUtxo,
  esploraBlock,
  esploraMempool,
  esploraOutspend,
  esploraStatus,
  esploraTx,
} from './esplora.js'
import { addressScript } from './script.js'

/** electrs' limit on request bodies. */
const MAX_BODY_BYTES = 1_000_000
/** Confirmed transactions per history page, mempool transactions per history answer (electrs). */
const CHAIN_TXS_PER_PAGE = 25
const MAX_MEMPOOL_TXS = 50
const BLOCKS_PER_PAGE = 10
/** Blocks one `POST /dev/mine` may mine. */
const MAX_BLOCKS_PER_MINE = 1000

/** An answer the router gives: a status and a JSON value, a text or raw bytes. */
type Reply =
  | { status: number; json: unknown }
  | { status: number; text: string }
  | { status: number; bytes: Uint8Array }

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

const ok = (json: unknown): Reply => ({ status: 200, json })
const text = (body: string): Reply => ({ status: 200, text: body })

function parseTxid(value: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new HttpError(400, 'Invalid hash string')
  return value.toLowerCase()
}

function parseCount(value: string): number {
  if (!/^[0-9]{1,9}$/.test(value)) throw new HttpError(400, 'Invalid number')
  return Number(value)
}

function parseAddress(value: string): Uint8Array {
  const outputScript = addressScript(value)
  if (!outputScript) throw new HttpError(400, 'Invalid Bitcoin address')
  return outputScript
}

function parseJson(body: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body || '{}')
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>
    }
  } catch {
    // answered below
  }
  throw new HttpError(400, 'Invalid JSON body: expected an object')
}

function parseSats(value: unknown): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return BigInt(value)
  throw new HttpError(400, 'Invalid value: expected whole satoshi (a number or a decimal string)')
}

/** Answers one request against `chain`. */
export function route(chain: BitcoinChain, method: string, path: string, body: string): Reply {
  const parts = path.split('/').slice(1)
  const [head, second, third, fourth] = parts
  const get = method === 'GET'
  const post = method === 'POST'

  const txRecord = (txid: string) => {
    const record = chain.transaction(parseTxid(txid))
    if (!record) throw new HttpError(404, 'Transaction not found')
    return record
  }
  const blockByHash = (hash: string) => {
    const block = chain.block(parseTxid(hash))
    if (!block) throw new HttpError(404, 'Block not found')
    return block
  }

  if (get && head === 'blocks' && second === 'tip' && parts.length === 3) {
    if (third === 'height') return text(String(chain.height))
    if (third === 'hash') return text(chain.tip.hash)
  }
  if (get && head === 'blocks' && parts.length <= 2) {
    const start = second === undefined || second === '' ? chain.height : parseCount(second)
    if (!chain.blockAt(start)) throw new HttpError(404, 'Block not found')
    const blocks = []
    for (let height = start; height >= 0 && blocks.length < BLOCKS_PER_PAGE; height--) {
      blocks.push(esploraBlock(chain.blockAt(height)!))
    }
    return ok(blocks)
  }
  if (get && head === 'block-height' && second !== undefined && parts.length === 2) {
    const block = chain.blockAt(parseCount(second))
    if (!block) throw new HttpError(404, 'Block not found')
    return text(block.hash)
  }
  if (get && head === 'block' && second !== undefined) {
    const block = blockByHash(second)
    if (parts.length === 2) return ok(esploraBlock(block))
    if (third === 'status' && parts.length === 3) {
      const next = chain.blockAt(block.height + 1)
      return ok({ in_best_chain: true, height: block.height, ...(next ? { next_best: next.hash } : {}) })
    }
    if (third === 'txids' && parts.length === 3) return ok(block.txids)
    if (third === 'header' && parts.length === 3) {
      return text(Buffer.from(block.raw.subarray(0, 80)).toString('hex'))
    }
    if (third === 'raw' && parts.length === 3) return { status: 200, bytes: block.raw }
    if (third === 'txid' && fourth !== undefined && parts.length === 4) {
      const txid = block.txids[parseCount(fourth)]
      if (!txid) throw new HttpError(404, 'tx index out of range')
      return text(txid)
    }
    if (third === 'txs' && parts.length <= 4) {
      const start = fourth === undefined ? 0 : parseCount(fourth)
      if (start % CHAIN_TXS_PER_PAGE !== 0) {
        throw new HttpError(400, `start index must be a multiple of ${CHAIN_TXS_PER_PAGE}`)
      }
      if (start >= block.txids.length) throw new HttpError(400, 'start index out of range')
      const page = block.txids.slice(start, start + CHAIN_TXS_PER_PAGE)
      // The genesis coinbase is not a known transaction (it never entered the UTXO set).
      const records = page.flatMap((txid) => chain.transaction(txid) ?? [])
      return ok(records.map((record) => esploraTx(chain, record, false)))
    }
  }

  if (get && head === 'tx' && second !== undefined) {
    const record = txRecord(second)
    if (parts.length === 2) return ok(esploraTx(chain, record))
    if (third === 'status' && parts.length === 3) return ok(esploraStatus(record))
    if (third === 'hex' && parts.length === 3) return text(record.hex)
    if (third === 'raw' && parts.length === 3) return { status: 200, bytes: Buffer.from(record.hex, 'hex') }
    if (third === 'outspends' && parts.length === 3) {
      return ok(record.tx.outs.map((_, vout) => esploraOutspend(chain, chain.spender(record.txid, vout))))
    }
    if (third === 'outspend' && fourth !== undefined && parts.length === 4) {
      return ok(esploraOutspend(chain, chain.spender(record.txid, parseCount(fourth))))
    }
  }
  if (post && head === 'tx' && parts.length === 1) {
    try {
      return text(chain.submit(body))
    } catch (error) {
      if (error instanceof BitcoinRejection) throw new HttpError(400, error.esploraMessage())
      throw error
    }
  }

  if (get && head === 'address' && second !== undefined) {
    const outputScript = parseAddress(second)
    if (parts.length === 2) {
      const stats = chain.addressStats(outputScript)
      const answer: EsploraAddress = {
        address: second,
        chain_stats: stats.chain,
        mempool_stats: stats.mempool,
      }
      return ok(answer)
    }
    if (third === 'utxo' && parts.length === 3) {
      const utxos = chain.utxos(outputScript).map(
        ({ output, record }): EsploraUtxo => ({
          txid: output.txid,
          vout: output.vout,
          status: esploraStatus(record),
          value: Number(output.value),
        }),
      )
      return ok(utxos)
    }
    if (third === 'txs') {
      const history = chain.history(outputScript)
      if (parts.length === 3) {
        const records = [
          ...history.mempool.slice(0, MAX_MEMPOOL_TXS),
          ...history.chain.slice(0, CHAIN_TXS_PER_PAGE),
        ]
        return ok(records.map((record) => esploraTx(chain, record)))
      }
      if (fourth === 'mempool' && parts.length === 4) {
        return ok(history.mempool.slice(0, MAX_MEMPOOL_TXS).map((record) => esploraTx(chain, record)))
      }
      if (fourth === 'chain' && parts.length <= 5) {
        const lastSeen = parts[4]
        let start = 0
        if (lastSeen !== undefined) {
          const index = history.chain.findIndex((record) => record.txid === lastSeen.toLowerCase())
          start = index < 0 ? history.chain.length : index + 1
        }
        const page = history.chain.slice(start, start + CHAIN_TXS_PER_PAGE)
        return ok(page.map((record) => esploraTx(chain, record)))
      }
    }
  }

  if (get && head === 'mempool') {
    if (parts.length === 1) return ok(esploraMempool(chain.mempoolTransactions()))
    if (second === 'txids' && parts.length === 2) return ok(chain.mempoolTransactions().map((r) => r.txid))
    if (second === 'recent' && parts.length === 2) {
      const recent = chain.mempoolTransactions().slice(-10).reverse()
      return ok(
        recent.map((record) => ({
          txid: record.txid,
          fee: Number(record.fee),
          vsize: record.vsize,
          value: Number(record.tx.outs.reduce((sum, out) => sum + out.value, 0n)),
        })),
      )
    }
  }
  if (get && head === 'fee-estimates' && parts.length === 1) return ok(chain.feeRates)

  if (post && head === 'dev' && parts.length === 2) {
    const request = parseJson(body)
    if (second === 'mine') {
      const blocks = request.blocks === undefined ? 1 : request.blocks
      if (
        typeof blocks !== 'number' ||
        !Number.isInteger(blocks) ||
        blocks < 1 ||
        blocks > MAX_BLOCKS_PER_MINE
      ) {
        throw new HttpError(400, `Invalid blocks: expected an integer from 1 to ${MAX_BLOCKS_PER_MINE}`)
      }
      const payTo = request.address === undefined ? undefined : parseAddress(String(request.address))
      const mined = chain.mine(blocks, payTo)
      return ok({ height: chain.height, hashes: mined.map((block) => block.hash) })
    }
    if (second === 'fund') {
      if (typeof request.address !== 'string') throw new HttpError(400, 'Invalid Bitcoin address')
      const outputScript = parseAddress(request.address)
      const value = parseSats(request.value)
      if (value <= 0n) throw new HttpError(400, 'Invalid value: must be positive')
      const { txid, block } = chain.fund([{ script: outputScript, value }])
      const utxo: EsploraUtxo = {
        txid,
        vout: 0,
        status: esploraStatus({ block }),
        value: Number(value),
      }
      return ok(utxo)
    }
    if (second === 'fee-estimates') {
      const rates: Record<string, number> = {}
      for (const [target, rate] of Object.entries(request)) {
        if (typeof rate !== 'number') throw new HttpError(400, `Invalid fee rate for target ${target}`)
        rates[target] = rate
      }
      try {
        chain.setFeeRates(rates)
      } catch (error) {
        throw new HttpError(400, error instanceof Error ? error.message : String(error))
      }
      return ok(chain.feeRates)
    }
  }
  throw new HttpError(404, `endpoint does not exist ${JSON.stringify(path)}`)
}

function readBody(request: IncomingMessage): Promise<string> {
  return readRequestText(request, MAX_BODY_BYTES, () => new HttpError(413, 'Request body too large'))
}

function send(response: ServerResponse, reply: Reply): void {
  if ('json' in reply) {
    response.writeHead(reply.status, { 'content-type': 'application/json' })
    response.end(JSON.stringify(reply.json))
  } else if ('bytes' in reply) {
    response.writeHead(reply.status, { 'content-type': 'application/octet-stream' })
    response.end(Buffer.from(reply.bytes))
  } else {
    response.writeHead(reply.status, { 'content-type': 'text/plain' })
    response.end(reply.text)
  }
}

/** A listening Esplora server. */
export interface EsploraServer extends ListeningServer {
  readonly host: string
}

/**
 * Serves `chain` over HTTP on `host:port` (port 0: a free one).
 *
 * @throws Error when the port cannot be bound.
 */
export async function startEsploraServer(
  chain: BitcoinChain,
  options: { host: string; port: number; log: (message: string) => void },
): Promise<EsploraServer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://devnet')
    readBody(request)
      .then((body) => send(response, route(chain, request.method ?? 'GET', url.pathname, body)))
      .catch((error: unknown) => {
        if (error instanceof HttpError) return send(response, { status: error.status, text: error.message })
        const message = error instanceof Error ? error.message : String(error)
        options.log(`Bitcoin devnet: internal error on ${request.method} ${url.pathname}: ${message}`)
        send(response, { status: 500, text: `Internal error: ${message}` })
      })
  })
  return { host: options.host, ...(await listenOn(server, options.host, options.port)) }
}
