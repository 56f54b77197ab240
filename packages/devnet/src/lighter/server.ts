/**
 * The Lighter simulator's HTTP server: the venue's public REST shape under `/api/v1`, answered from
 * a {@link LighterVenue}. Success is `{code: 200, ...}`; refusals are HTTP 400 `{code, message}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { type ListeningServer, listenOn, readRequestText } from '../simulator-http.js'
import {
  LIGHTER_ROUTE_PERPS,
  LIGHTER_ROUTE_SPOT,
  LIGHTER_USDC_ASSET_INDEX,
  lighterUsdcDecimal,
} from './protocol.js'
import {
  LIGHTER_ACCOUNT_TXS_MAX_LIMIT,
  LIGHTER_ERROR_CODES,
  type LighterAccountState,
  LighterRejection,
  type LighterTxRecord,
  type LighterVenue,
} from './venue.js'

const MAX_BODY_BYTES = 100_000

function invalid(message: string): LighterRejection {
  return new LighterRejection(LIGHTER_ERROR_CODES.invalidParameter, message)
}

function parseIndex(value: string | null, name: string): number {
  if (value === null || !/^(0|[1-9][0-9]{0,15})$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw invalid(`invalid ${name}: ${JSON.stringify(value)} (expected a non-negative integer)`)
  }
  return Number(value)
}

function parseL1Address(value: string | null): string {
  if (value === null || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
    throw invalid(`invalid l1_address: ${JSON.stringify(value)} (expected 0x and 40 hex digits)`)
  }
  return value.toLowerCase()
}

/** An account as `/account` and `/accountsByL1Address` show it. */
function accountJson(account: LighterAccountState): Record<string, unknown> {
  const perps = account.balances.get(LIGHTER_ROUTE_PERPS) ?? 0n
  const spot = account.balances.get(LIGHTER_ROUTE_SPOT) ?? 0n
  return {
    code: 0,
    account_type: account.accountType,
    index: account.index,
    l1_address: account.l1Address,
    status: 1,
    collateral: lighterUsdcDecimal(perps),
    available_balance: lighterUsdcDecimal(perps),
    total_asset_value: lighterUsdcDecimal(perps + spot),
    assets: [
      {
        asset_id: LIGHTER_USDC_ASSET_INDEX,
        symbol: 'USDC',
        balance: lighterUsdcDecimal(spot),
        locked_balance: '0.000000',
      },
    ],
    positions: [],
  }
}

/** A transaction as `/tx` and `/accountTxs` show it (the venue's `Tx` shape). */
function txJson(venue: LighterVenue, tx: LighterTxRecord): Record<string, unknown> {
  return {
    hash: tx.hash,
    type: tx.type,
    info: tx.info,
    event_info: JSON.stringify({ from: tx.transfer.FromAccountIndex, to: tx.transfer.ToAccountIndex }),
    status: tx.status,
    transaction_index: 0,
    l1_address: venue.account(tx.transfer.FromAccountIndex)?.l1Address ?? '',
    account_index: tx.transfer.FromAccountIndex,
    nonce: tx.transfer.Nonce,
    expire_at: tx.transfer.ExpiredAt,
    block_height: tx.blockHeight,
    queued_at: tx.executedAt,
    executed_at: tx.executedAt,
    sequence_index: tx.blockHeight,
    parent_hash: '',
  }
}

/** `limit` of `/accountTxs`: required, 1 to {@link LIGHTER_ACCOUNT_TXS_MAX_LIMIT}. */
function parseLimit(value: string | null): number {
  const limit = value !== null && /^[0-9]{1,4}$/.test(value) ? Number(value) : Number.NaN
  if (!(limit >= 1 && limit <= LIGHTER_ACCOUNT_TXS_MAX_LIMIT)) {
    throw invalid(
      `invalid limit: ${JSON.stringify(value)} (expected an integer from 1 to ${LIGHTER_ACCOUNT_TXS_MAX_LIMIT})`,
    )
  }
  return limit
}

function readBody(request: IncomingMessage): Promise<string> {
  return readRequestText(request, MAX_BODY_BYTES, () => invalid('request body too large'))
}

/** `tx_type` and `tx_info` of a `sendTx` body: JSON or form-encoded. */
function parseSendTx(body: string, contentType: string | undefined): { txType: number; txInfo: string } {
  let fields: Record<string, unknown>
  if (contentType?.includes('application/x-www-form-urlencoded') || contentType?.includes('multipart')) {
    if (contentType.includes('multipart')) throw invalid('multipart bodies are not supported: send JSON')
    fields = Object.fromEntries(new URLSearchParams(body))
  } else {
    try {
      const parsed: unknown = JSON.parse(body || '{}')
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object')
      fields = parsed as Record<string, unknown>
    } catch {
      throw invalid('invalid body: expected a JSON object {tx_type, tx_info}')
    }
  }
  const txType = typeof fields.tx_type === 'string' ? Number(fields.tx_type) : fields.tx_type
  if (typeof txType !== 'number' || !Number.isInteger(txType)) throw invalid('tx_type must be an integer')
  if (typeof fields.tx_info !== 'string') throw invalid('tx_info must be a JSON string')
  return { txType, txInfo: fields.tx_info }
}

async function route(venue: LighterVenue, request: IncomingMessage): Promise<Record<string, unknown>> {
  const url = new URL(request.url ?? '/', 'http://localhost')
  const query = url.searchParams
  const method = request.method ?? 'GET'
  const path = url.pathname.replace(/\/+$/, '')
  if (method === 'GET' && path === '/api/v1/accountsByL1Address') {
    const l1Address = parseL1Address(query.get('l1_address'))
    const accounts = venue.accountsOf(l1Address)
    if (accounts.length === 0) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.accountNotFound,
        `account not found for l1_address ${l1Address}`,
      )
    }
    return { code: 200, l1_address: l1Address, sub_accounts: accounts.map(accountJson) }
  }
  if (method === 'GET' && path === '/api/v1/account') {
    const by = query.get('by')
    let accounts: LighterAccountState[]
    if (by === 'index') {
      const index = parseIndex(query.get('value'), 'value')
      const account = venue.account(index)
      accounts = account ? [account] : []
    } else if (by === 'l1_address') {
      accounts = venue.accountsOf(parseL1Address(query.get('value')))
    } else {
      throw invalid(`invalid by: ${JSON.stringify(by)} (expected index or l1_address)`)
    }
    if (accounts.length === 0) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.accountNotFound,
        `account not found: ${query.get('value')}`,
      )
    }
    return { code: 200, total: accounts.length, accounts: accounts.map(accountJson) }
  }
  if (method === 'GET' && path === '/api/v1/nextNonce') {
    const index = parseIndex(query.get('account_index'), 'account_index')
    const apiKeyIndex = parseIndex(query.get('api_key_index'), 'api_key_index')
    return { code: 200, nonce: venue.nextNonce(index, apiKeyIndex) }
  }
  if (method === 'GET' && path === '/api/v1/transferFeeInfo') {
    const index = parseIndex(query.get('account_index'), 'account_index')
    if (!venue.account(index)) {
      throw new LighterRejection(LIGHTER_ERROR_CODES.accountNotFound, `account not found: ${index}`)
    }
    return { code: 200, transfer_fee_usdc: Number(venue.transferFeeUsdc) }
  }
  if (method === 'GET' && path === '/api/v1/tx') {
    if (query.get('by') !== 'hash')
      throw invalid(`invalid by: ${JSON.stringify(query.get('by'))} (expected hash)`)
    const hash = query.get('value') ?? ''
    if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) throw invalid(`invalid hash: ${JSON.stringify(hash)}`)
    const tx = venue.transaction(hash)
    if (!tx)
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.txNotFound,
        `transaction not found: ${hash.toLowerCase()}`,
      )
    return { code: 200, ...txJson(venue, tx) }
  }
  if (method === 'POST' && path === '/api/v1/sendTx') {
    const { txType, txInfo } = parseSendTx(await readBody(request), request.headers['content-type'])
    return { code: 200, tx_hash: venue.submit(txType, txInfo), predicted_execution_time_ms: 0 }
  }
  if (method === 'GET' && path === '/api/v1/accountTxs') {
    if (query.get('by') !== 'account_index') {
      throw invalid(`invalid by: ${JSON.stringify(query.get('by'))} (expected account_index)`)
    }
    const index = parseIndex(query.get('value'), 'value')
    const limit = parseLimit(query.get('limit'))
    // `index`: the lowest block height answered (the simulator's sequence index is the height).
    const from = query.has('index') ? parseIndex(query.get('index'), 'index') : 0
    if (!venue.account(index)) {
      throw new LighterRejection(LIGHTER_ERROR_CODES.accountNotFound, `account not found: ${index}`)
    }
    return { code: 200, txs: venue.accountTransactions(index, from, limit).map((tx) => txJson(venue, tx)) }
  }
  if (method === 'GET' && path === '/api/v1/currentHeight') {
    return { code: 200, height: venue.height }
  }
  if (method === 'GET' && path === '/api/v1/status') {
    return {
      code: 200,
      status: 1,
      network_id: 1,
      timestamp: Math.floor(Date.now() / 1000),
      block_height: venue.height,
    }
  }
  throw new RouteNotFound(`${method} ${url.pathname} is not served by the Lighter simulator`)
}

class RouteNotFound extends Error {}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  })
  response.end(text)
}

/** A running HTTP server. */
export type LighterServer = ListeningServer

/** Serves `venue` on `host:port` (0 picks a free port). */
export async function startLighterServer(
  venue: LighterVenue,
  options: { host: string; port: number; log: (line: string) => void },
): Promise<LighterServer> {
  const server = createServer((request, response) => {
    route(venue, request).then(
      (body) => send(response, 200, body),
      (error: unknown) => {
        if (error instanceof LighterRejection) {
          options.log(`${request.method} ${request.url} refused: ${error.message}`)
          send(response, 400, { code: error.code, message: error.message })
        } else if (error instanceof RouteNotFound) {
          send(response, 404, { code: 404, message: error.message })
        } else {
          options.log(`${request.method} ${request.url} failed: ${String(error)}`)
          send(response, 500, { code: 500, message: 'internal error' })
        }
      },
    )
  })
  return listenOn(server, options.host, options.port)
}
