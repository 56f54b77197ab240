/**
 * The Hyperliquid devnet's HTTP server: `POST /info` (balances, spot metadata, ledger updates),
 * `POST /exchange` (user-signed `usdSend` and `spotSend`) and `POST /explorer` (`txDetails`), in the
 * shapes of Hyperliquid's public API. Bodies the API cannot deserialize answer 422 with its text.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { type ListeningServer, listenOn, readRequestText } from '../simulator-http.js'
import { HYPERLIQUID_PERPS_USDC_DECIMALS, HYPERLIQUID_PERPS_USDC_ID } from './accounts.js'
import { HyperliquidActionError, type HyperliquidLedger, hyperliquidFormatAmount } from './ledger.js'
import type { HyperliquidSendAction, HyperliquidSignature } from './signing.js'

const MAX_BODY_BYTES = 1_000_000

interface Reply {
  readonly status: number
  readonly json: unknown
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

const ok = (json: unknown): Reply => ({ status: 200, json })

type Body = Record<string, unknown>

function parseBody(text: string): Body {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Body
  } catch {
    // answered below
  }
  throw new HttpError(400, 'Invalid JSON body')
}

const deserializeError = () => new HttpError(422, 'Failed to deserialize the JSON body into the target type')

function userOf(body: Body): string {
  const user = body.user
  if (typeof user !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(user)) throw deserializeError()
  return user.toLowerCase()
}

function timeOf(value: unknown, required: boolean): number | undefined {
  if (value === undefined && !required) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw deserializeError()
  return value
}

function info(ledger: HyperliquidLedger, body: Body): Reply {
  switch (body.type) {
    case 'clearinghouseState': {
      const user = userOf(body)
      const usdc = hyperliquidFormatAmount(
        ledger.balance(user, HYPERLIQUID_PERPS_USDC_ID),
        HYPERLIQUID_PERPS_USDC_DECIMALS,
      )
      const summary = { accountValue: usdc, totalNtlPos: '0.0', totalRawUsd: usdc, totalMarginUsed: '0.0' }
      return ok({
        marginSummary: summary,
        crossMarginSummary: summary,
        crossMaintenanceMarginUsed: '0.0',
        withdrawable: usdc,
        assetPositions: [],
        time: Date.now(),
      })
    }
    case 'spotClearinghouseState': {
      const user = userOf(body)
      const balances = ledger.tokens.flatMap((token) => {
        const held = ledger.balance(user, token.tokenId)
        if (held === 0n) return []
        return [
          {
            coin: token.name,
            token: token.index,
            total: hyperliquidFormatAmount(held, token.weiDecimals),
            hold: '0.0',
            entryNtl: '0.0',
          },
        ]
      })
      return ok({ balances })
    }
    case 'spotMeta':
      return ok({
        tokens: ledger.tokens.map((token) => ({ ...token, evmContract: null, fullName: null })),
        universe: ledger.tokens
          .filter((token) => token.name !== 'USDC')
          .map((token, position) => ({
            tokens: [token.index, 0],
            name: `@${position + 1}`,
            index: position + 1,
            isCanonical: false,
          })),
      })
    case 'userNonFundingLedgerUpdates': {
      const user = userOf(body)
      const startTime = timeOf(body.startTime, true) as number
      const endTime = timeOf(body.endTime, false)
      return ok(ledger.ledgerUpdates(user, startTime, endTime))
    }
    default:
      throw deserializeError()
  }
}

function isHex(value: unknown, maxDigits: number): value is `0x${string}` {
  return typeof value === 'string' && new RegExp(`^0x[0-9a-fA-F]{1,${maxDigits}}$`).test(value)
}

/** The signed request's parts, or a 422 when they do not deserialize. */
function parseExchange(body: Body): {
  action: HyperliquidSendAction
  nonce: number
  signature: HyperliquidSignature
} {
  const { action, nonce, signature } = body as {
    action?: Record<string, unknown>
    nonce?: unknown
    signature?: Record<string, unknown>
  }
  if (typeof action !== 'object' || action === null || typeof signature !== 'object' || signature === null) {
    throw deserializeError()
  }
  if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce) || nonce < 0) throw deserializeError()
  if (!isHex(signature.r, 64) || !isHex(signature.s, 64) || (signature.v !== 27 && signature.v !== 28)) {
    throw deserializeError()
  }
  const strings = ['hyperliquidChain', 'signatureChainId', 'destination', 'amount']
  if (action.type === 'spotSend') strings.push('token')
  else if (action.type !== 'usdSend') throw deserializeError()
  if (!strings.every((name) => typeof action[name] === 'string')) throw deserializeError()
  const time = action.time
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) throw deserializeError()
  return {
    action: action as unknown as HyperliquidSendAction,
    nonce,
    signature: { r: signature.r, s: signature.s, v: signature.v },
  }
}

async function exchange(ledger: HyperliquidLedger, body: Body): Promise<Reply> {
  const { action, nonce, signature } = parseExchange(body)
  try {
    await ledger.execute(action, nonce, signature)
    return ok({ status: 'ok', response: { type: 'default' } })
  } catch (error) {
    if (error instanceof HyperliquidActionError) return ok({ status: 'err', response: error.reason })
    throw error
  }
}

function explorer(ledger: HyperliquidLedger, body: Body): Reply {
  if (body.type !== 'txDetails' || typeof body.hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(body.hash)) {
    throw deserializeError()
  }
  const tx = ledger.transaction(body.hash)
  if (!tx) return { status: 404, json: { type: 'error', message: `Transaction ${body.hash} not found` } }
  return ok({ type: 'txDetails', tx })
}

/** Answers one request against `ledger`. */
export async function route(
  ledger: HyperliquidLedger,
  method: string,
  path: string,
  text: string,
): Promise<Reply> {
  if (!['/info', '/exchange', '/explorer'].includes(path)) throw new HttpError(404, `Not found: ${path}`)
  if (method !== 'POST') throw new HttpError(405, 'Method not allowed: use POST')
  const body = parseBody(text)
  if (path === '/info') return info(ledger, body)
  if (path === '/exchange') return exchange(ledger, body)
  return explorer(ledger, body)
}

function readBody(request: IncomingMessage): Promise<string> {
  return readRequestText(request, MAX_BODY_BYTES, () => new HttpError(413, 'Request body too large'))
}

function send(response: ServerResponse, reply: Reply): void {
  response.writeHead(reply.status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(reply.json))
}

/** A listening Hyperliquid API server. */
export interface HyperliquidServer extends ListeningServer {
  readonly host: string
}

/**
 * Serves `ledger` over HTTP on `host:port` (port 0: a free one).
 * @throws Error when the port cannot be bound.
 */
export async function startHyperliquidServer(
  ledger: HyperliquidLedger,
  options: { host: string; port: number; log: (message: string) => void },
): Promise<HyperliquidServer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://devnet')
    readBody(request)
      .then((body) => route(ledger, request.method ?? 'GET', url.pathname, body))
      .then((reply) => send(response, reply))
      .catch((error: unknown) => {
        // Errors are plain text, as Hyperliquid's API answers them.
        if (error instanceof HttpError) {
          response.writeHead(error.status, { 'content-type': 'text/plain' })
          response.end(error.message)
          return
        }
        const message = error instanceof Error ? error.message : String(error)
        options.log(`Hyperliquid devnet: internal error on ${request.method} ${url.pathname}: ${message}`)
        response.writeHead(500, { 'content-type': 'text/plain' })
        response.end(`Internal error: ${message}`)
      })
  })
  return { host: options.host, ...(await listenOn(server, options.host, options.port)) }
}
