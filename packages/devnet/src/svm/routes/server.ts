/**
 * The route simulator's HTTP face (node:http on loopback): `GET /quote`, `GET /program-id-to-label`
 * and `POST /swap-instructions` in the aggregator's v1 shapes, also served under `/swap/v1/`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PublicKey } from '@solana/web3.js'
import { readRequestText } from '../../simulator-http.js'
import {
  type QuoteResponse,
  type RouteApiError,
  RouteError,
  type SwapInstructionsRequest,
  type SwapInstructionsResponse,
  type SwapMode,
} from './api.js'
import { planSwap, swapInstructionsResponse } from './instructions.js'
import { type RouteLedger, VaultFunder } from './ledger.js'
import { type PoolInfo, type RouteLabel, SVM_ROUTE_LABELS, SVM_ROUTE_POOLS } from './pools.js'
import { findBestRoute, MAX_ROUTE_LENGTH, quoteResponse, type RouteRequest, repriceQuote } from './routing.js'

/** Options of `startRouteSimulator`. */
export interface RouteSimulatorOptions {
  /** Where vault setup and funding transactions go. */
  ledger: RouteLedger
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0 (a free port). */
  port?: number
  log?: (message: string) => void
}

/** A running route simulator. */
export interface RouteSimulator {
  /** Base URL: `${url}/quote`, `${url}/swap-instructions`, `${url}/program-id-to-label`. */
  readonly url: string
  readonly port: number
  readonly pools: readonly PoolInfo[]
  readonly labels: readonly RouteLabel[]
  stop(): Promise<void>
}

const U64_MAX = (1n << 64n) - 1n
const MAX_BODY_BYTES = 1 << 20
const LABEL_NAMES = new Set(SVM_ROUTE_LABELS.map((label) => label.label))

function invalid(message: string): RouteError {
  return new RouteError('NOT_SUPPORTED', message)
}

function parsePublicKey(value: unknown, name: string): PublicKey {
  if (typeof value !== 'string' || value === '') throw invalid(`${name} is required`)
  try {
    return new PublicKey(value)
  } catch {
    throw invalid(`${name} is not a valid public key`)
  }
}

function parseInteger(value: string | null, name: string, min: number, max: number): number | undefined {
  if (value === null) return undefined
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max)
    throw invalid(`Query parameter ${name} must be an integer from ${min} to ${max}`)
  return Number(value)
}

function parseBoolean(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback
  if (value === true || value === 'true') return true
  if (value === false || value === 'false') return false
  throw invalid(`${name} must be true or false`)
}

function parseLabels(value: string | null, name: string): string[] | undefined {
  if (value === null) return undefined
  const labels = value
    .split(',')
    .map((label) => label.trim())
    .filter((label) => label !== '')
  const unknown = labels.find((label) => !LABEL_NAMES.has(label))
  if (unknown !== undefined) throw invalid(`Query parameter ${name} names an unknown dex: ${unknown}`)
  return labels
}

/** Parses `/quote` query parameters into a route request and the slippage. */
export function parseQuoteParams(params: URLSearchParams): { request: RouteRequest; slippageBps: number } {
  const inputMint = parsePublicKey(params.get('inputMint'), 'Query parameter inputMint').toBase58()
  const outputMint = parsePublicKey(params.get('outputMint'), 'Query parameter outputMint').toBase58()
  const amountText = params.get('amount')
  if (
    amountText === null ||
    !/^\d{1,20}$/.test(amountText) ||
    BigInt(amountText) === 0n ||
    BigInt(amountText) > U64_MAX
  )
    throw invalid('Query parameter amount must be a positive u64 integer')
  const swapMode = params.get('swapMode') ?? 'ExactIn'
  if (swapMode !== 'ExactIn' && swapMode !== 'ExactOut')
    throw invalid('Query parameter swapMode must be ExactIn or ExactOut')
  const platformFeeBps = parseInteger(params.get('platformFeeBps'), 'platformFeeBps', 0, 10_000)
  if (platformFeeBps) throw invalid('Platform fees are not simulated')
  const onlyDirectRoutes = parseBoolean(
    params.get('onlyDirectRoutes'),
    'Query parameter onlyDirectRoutes',
    false,
  )
  const maxRouteLength = parseInteger(params.get('maxRouteLength'), 'maxRouteLength', 1, MAX_ROUTE_LENGTH)
  const request: RouteRequest = {
    inputMint,
    outputMint,
    amount: BigInt(amountText),
    swapMode: swapMode satisfies SwapMode,
    maxRouteLength: onlyDirectRoutes ? 1 : maxRouteLength,
  }
  const dexes = parseLabels(params.get('dexes'), 'dexes')
  const excludeDexes = parseLabels(params.get('excludeDexes'), 'excludeDexes')
  const maxAccounts = parseInteger(params.get('maxAccounts'), 'maxAccounts', 1, 256)
  if (dexes) request.dexes = dexes
  if (excludeDexes) request.excludeDexes = excludeDexes
  if (maxAccounts !== undefined) request.maxAccounts = maxAccounts
  return { request, slippageBps: parseInteger(params.get('slippageBps'), 'slippageBps', 0, 10_000) ?? 50 }
}

/** Answers `/quote`. */
export function handleQuote(params: URLSearchParams): QuoteResponse {
  const started = performance.now()
  const { request, slippageBps } = parseQuoteParams(params)
  const route = findBestRoute(request)
  return quoteResponse(route, slippageBps, (performance.now() - started) / 1000)
}

/** The `/program-id-to-label` answer. */
export function programIdToLabel(): Record<string, string> {
  return Object.fromEntries(SVM_ROUTE_LABELS.map((label) => [label.programId, label.label]))
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Answers `/swap-instructions`: prices the quote again, funds the vaults, builds the instructions. */
async function handleSwapInstructions(body: unknown, funder: VaultFunder): Promise<SwapInstructionsResponse> {
  if (!isRecord(body) || !isRecord(body.quoteResponse)) throw invalid('quoteResponse is required')
  const request = body as unknown as SwapInstructionsRequest
  const user = parsePublicKey(request.userPublicKey, 'userPublicKey')
  const destination = request.destinationTokenAccount
  const route = repriceQuote(request.quoteResponse)
  const plan = planSwap(route, {
    user,
    wrapAndUnwrapSol: parseBoolean(request.wrapAndUnwrapSol, 'wrapAndUnwrapSol', true),
    useSharedAccounts: parseBoolean(request.useSharedAccounts, 'useSharedAccounts', false),
    ...(destination === undefined || destination === null
      ? {}
      : { destinationTokenAccount: parsePublicKey(destination, 'destinationTokenAccount') }),
  })
  await funder.fund(user, plan.funding)
  return swapInstructionsResponse(plan)
}

function readBody(req: IncomingMessage): Promise<string> {
  return readRequestText(req, MAX_BODY_BYTES, () => invalid('Request body is too large'))
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/**
 * Sets up the pool input vaults through the ledger, then serves the simulated aggregator API on
 * loopback. Each `/swap-instructions` call sends the vault funding to the ledger before answering.
 */
export async function startRouteSimulator(options: RouteSimulatorOptions): Promise<RouteSimulator> {
  const log = options.log ?? (() => {})
  const funder = new VaultFunder(options.ledger, log)
  await funder.setUpInputVaults()

  const route = async (req: IncomingMessage): Promise<{ status: number; body: unknown }> => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const path = url.pathname.replace(/^\/swap\/v1(?=\/)/, '').replace(/\/+$/, '')
    if (path === '/quote' && req.method === 'GET') return { status: 200, body: handleQuote(url.searchParams) }
    if (path === '/program-id-to-label' && req.method === 'GET')
      return { status: 200, body: programIdToLabel() }
    if (path === '/swap-instructions' && req.method === 'POST') {
      let body: unknown
      try {
        body = JSON.parse(await readBody(req))
      } catch (error) {
        if (error instanceof RouteError) throw error
        throw invalid('Request body is not valid JSON')
      }
      return { status: 200, body: await handleSwapInstructions(body, funder) }
    }
    if (['/quote', '/program-id-to-label', '/swap-instructions'].includes(path))
      return {
        status: 405,
        body: { error: `${req.method} is not allowed on ${path}`, errorCode: 'NOT_SUPPORTED' },
      }
    return { status: 404, body: { error: `No route ${path}`, errorCode: 'NOT_SUPPORTED' } }
  }

  const server = createServer((req, res) => {
    route(req).then(
      ({ status, body }) => sendJson(res, status, body),
      (error: unknown) => {
        if (error instanceof RouteError) {
          sendJson(res, 400, { error: error.message, errorCode: error.errorCode } satisfies RouteApiError)
          return
        }
        log(`route simulator: ${req.method} ${req.url} failed: ${String(error)}`)
        sendJson(res, 500, { error: String(error), errorCode: 'INTERNAL_ERROR' } satisfies RouteApiError)
      },
    )
  })
  const host = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  log(`route simulator listening on ${url}`)
  return {
    url,
    port,
    pools: SVM_ROUTE_POOLS,
    labels: SVM_ROUTE_LABELS,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
