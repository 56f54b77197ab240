/**
 * The SVM devnet's JSON-RPC 2.0 server: HTTP POST (single requests and batches) on loopback, plus
 * WebSocket subscriptions (signature, slot, account) on the same port and, when it is free, on the
 * next one, where @solana/web3.js looks for them by default (`ws://host:<port + 1>`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { PublicKey } from '@solana/web3.js'
import { RPC_ERROR, RpcError } from './errors.js'
import type { Commitment, SvmLedger } from './ledger.js'
import { createMethods, encodeAccount, type RpcMethod } from './methods.js'
import {
  commitmentOf,
  configParam,
  enumOf,
  integerParam,
  type Params,
  publicKeyParam,
  signatureValue,
} from './params.js'
import { acceptWebSocket, type WebSocketConnection } from './websocket.js'

const MAX_BODY_BYTES = 5 * 1024 * 1024
/** At most this many slot notifications per change (advancing 10,000 slots sends the newest ones). */
const MAX_SLOT_NOTIFICATIONS = 100

type RequestId = string | number | null

interface JsonRpcError {
  jsonrpc: '2.0'
  error: { code: number; message: string; data?: unknown }
  id: RequestId
}

interface JsonRpcSuccess {
  jsonrpc: '2.0'
  result: unknown
  id: RequestId
}

type JsonRpcResponse = JsonRpcError | JsonRpcSuccess

function errorResponse(id: RequestId, error: RpcError): JsonRpcError {
  const body: JsonRpcError['error'] = { code: error.code, message: error.message }
  if (error.data !== undefined) body.data = error.data
  return { jsonrpc: '2.0', error: body, id }
}

/**
 * Answers one parsed JSON-RPC request object with `methods`; undefined for a notification (a request
 * without id), which gets no answer. Never throws.
 */
export function answerRequest(
  methods: Readonly<Record<string, RpcMethod>>,
  request: unknown,
  log: (message: string) => void,
): JsonRpcResponse | undefined {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return errorResponse(null, new RpcError(RPC_ERROR.invalidRequest, 'Invalid request'))
  }
  const { jsonrpc, method, params, id } = request as Record<string, unknown>
  const validId = typeof id === 'string' || typeof id === 'number' || id === null
  if (jsonrpc !== '2.0' || typeof method !== 'string' || (id !== undefined && !validId)) {
    return errorResponse(
      validId ? (id as RequestId) : null,
      new RpcError(RPC_ERROR.invalidRequest, 'Invalid request'),
    )
  }
  const requestId = (id ?? null) as RequestId
  const notification = id === undefined
  if (params !== undefined && !Array.isArray(params)) {
    if (notification) return undefined
    return errorResponse(
      requestId,
      new RpcError(RPC_ERROR.invalidParams, 'Invalid params: params must be an array'),
    )
  }
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined
  if (!handler) {
    if (notification) return undefined
    return errorResponse(requestId, new RpcError(RPC_ERROR.methodNotFound, 'Method not found'))
  }
  try {
    const result = handler((params ?? []) as Params)
    return notification ? undefined : { jsonrpc: '2.0', result, id: requestId }
  } catch (error) {
    if (error instanceof RpcError) return notification ? undefined : errorResponse(requestId, error)
    const message = error instanceof Error ? error.message : String(error)
    log(`internal error in ${method}: ${message}`)
    return notification
      ? undefined
      : errorResponse(requestId, new RpcError(RPC_ERROR.internalError, `Internal error: ${message}`))
  }
}

/** Answers an HTTP body: a request object or a batch (array) of them. Undefined: nothing to send. */
export function answerBody(
  methods: Readonly<Record<string, RpcMethod>>,
  body: string,
  log: (message: string) => void,
): JsonRpcResponse | JsonRpcResponse[] | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return errorResponse(null, new RpcError(RPC_ERROR.parseError, 'Parse error'))
  }
  if (!Array.isArray(parsed)) return answerRequest(methods, parsed, log)
  if (parsed.length === 0)
    return errorResponse(null, new RpcError(RPC_ERROR.invalidRequest, 'Invalid request'))
  const answers = parsed.flatMap((request) => answerRequest(methods, request, log) ?? [])
  return answers.length === 0 ? undefined : answers
}

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        resolve(undefined)
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}

interface Subscription {
  readonly kind: 'signature' | 'slot' | 'account'
  readonly connection: WebSocketConnection
  readonly signature?: string
  readonly commitment?: Commitment
  readonly address?: PublicKey
  readonly encoding?: 'base58' | 'base64' | 'jsonParsed'
  /** Account subscriptions: the last state sent (JSON), to notify on changes only. */
  lastState?: string
}

/**
 * The WebSocket side: subscription methods per connection and the notifications the ledger's
 * changes trigger.
 */
class Subscriptions {
  readonly #ledger: SvmLedger
  readonly #subscriptions = new Map<number, Subscription>()
  #nextId = 1
  #lastNotifiedSlot: number

  constructor(ledger: SvmLedger) {
    this.#ledger = ledger
    this.#lastNotifiedSlot = ledger.slot
  }

  /** The method table of one connection (subscribe/unsubscribe, plus every HTTP method). */
  methodsFor(
    connection: WebSocketConnection,
    httpMethods: Readonly<Record<string, RpcMethod>>,
  ): Record<string, RpcMethod> {
    const add = (subscription: Subscription): number => {
      const id = this.#nextId++
      this.#subscriptions.set(id, subscription)
      return id
    }
    const remove = (kind: Subscription['kind']) => (params: Params) => {
      const id = integerParam(params, 0, 'subscription id')
      const found = this.#subscriptions.get(id)
      if (!found || found.kind !== kind || found.connection !== connection) {
        throw new RpcError(RPC_ERROR.invalidParams, 'Invalid subscription id.')
      }
      return this.#subscriptions.delete(id)
    }
    return {
      ...httpMethods,
      // web3.js pings every 5 s with a notification; nothing to answer.
      ping: () => 'pong',
      signatureSubscribe: (params) => {
        const signature = signatureValue(params[0], 'signature (params[0])')
        const commitment = commitmentOf(configParam(params, 1))
        const id = add({ kind: 'signature', connection, signature, commitment })
        // The transaction may already be there: answer the subscription first, then notify.
        queueMicrotask(() => this.#notifySignatures())
        return id
      },
      signatureUnsubscribe: remove('signature'),
      slotSubscribe: () => add({ kind: 'slot', connection }),
      slotUnsubscribe: remove('slot'),
      accountSubscribe: (params) => {
        const address = publicKeyParam(params, 0, 'address')
        const config = configParam(params, 1)
        const encoding = enumOf(config, 'encoding', ['base58', 'base64', 'jsonParsed'], 'base58')
        const subscription: Subscription = { kind: 'account', connection, address, encoding }
        subscription.lastState = this.#accountState(subscription)
        return add(subscription)
      },
      accountUnsubscribe: remove('account'),
    }
  }

  /** Drops every subscription of a closed connection. */
  dropConnection(connection: WebSocketConnection): void {
    for (const [id, subscription] of this.#subscriptions) {
      if (subscription.connection === connection) this.#subscriptions.delete(id)
    }
  }

  /** Sends what the ledger's latest change calls for. */
  notify(): void {
    this.#notifySlots()
    this.#notifySignatures()
    this.#notifyAccounts()
  }

  #send(id: number, subscription: Subscription, method: string, result: unknown): void {
    subscription.connection.send(
      JSON.stringify({ jsonrpc: '2.0', method, params: { result, subscription: id } }),
    )
  }

  #notifySlots(): void {
    const current = this.#ledger.slot
    const from = Math.max(this.#lastNotifiedSlot + 1, current - MAX_SLOT_NOTIFICATIONS + 1)
    this.#lastNotifiedSlot = current
    for (const [id, subscription] of this.#subscriptions) {
      if (subscription.kind !== 'slot') continue
      for (let slot = from; slot <= current; slot++) {
        this.#send(id, subscription, 'slotNotification', {
          parent: Math.max(0, slot - 1),
          root: Math.max(0, slot - this.#ledger.finalizedDepth),
          slot,
        })
      }
    }
  }

  #notifySignatures(): void {
    for (const [id, subscription] of this.#subscriptions) {
      if (subscription.kind !== 'signature' || !subscription.signature || !subscription.commitment) continue
      const record = this.#ledger.transaction(subscription.signature)
      if (!record || !this.#ledger.reached(record.slot, subscription.commitment)) continue
      this.#send(id, subscription, 'signatureNotification', {
        context: { slot: record.slot },
        value: { err: record.err },
      })
      // Signature subscriptions end with their notification.
      this.#subscriptions.delete(id)
    }
  }

  #accountState(subscription: Subscription): string {
    const account = subscription.address ? this.#ledger.getAccount(subscription.address) : null
    if (!account || account.lamports === 0) return 'null'
    return JSON.stringify(encodeAccount(this.#ledger, account, subscription.encoding ?? 'base58'))
  }

  #notifyAccounts(): void {
    for (const [id, subscription] of this.#subscriptions) {
      if (subscription.kind !== 'account') continue
      const state = this.#accountState(subscription)
      if (state === subscription.lastState) continue
      subscription.lastState = state
      this.#send(id, subscription, 'accountNotification', {
        context: { slot: this.#ledger.slot },
        value: JSON.parse(state),
      })
    }
  }
}

/** Options of {@link startRpcServer}. */
export interface RpcServerOptions {
  ledger: SvmLedger
  /** Interface to listen on (default 127.0.0.1: the devnet is never reachable from outside). */
  host?: string
  /** TCP port; 0 or omitted picks a free one. WebSockets also listen on port + 1 when it is free. */
  port?: number
  /** Opens a slot every this many milliseconds (off by default: slots advance per transaction). */
  slotIntervalMs?: number
  /** Receives a line per internal error. */
  log?: (message: string) => void
}

/** A running SVM RPC server. */
export interface SvmRpcServer {
  /** `http://<host>:<port>`. */
  readonly rpcUrl: string
  /** `ws://<host>:<port + 1>` (or the RPC port when port + 1 was taken): the subscriptions endpoint. */
  readonly wsUrl: string
  readonly host: string
  readonly port: number
  /** The ledger behind the server, for in-process use (funding, assertions). */
  readonly ledger: SvmLedger
  /** Opens `count` empty slots (each with a new blockhash); returns the new current slot. */
  advanceSlots(count: number): number
  /**
   * Stops serving (open connections are closed) and the slot timer; resolves once the ports are
   * closed. Idempotent.
   */
  stop(): Promise<void>
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error)
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      resolve((server.address() as AddressInfo).port)
    })
  })
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** Serves `options.ledger` over HTTP JSON-RPC and WebSocket subscriptions. */
export async function startRpcServer(options: RpcServerOptions): Promise<SvmRpcServer> {
  const { ledger } = options
  const host = options.host ?? '127.0.0.1'
  const log = options.log ?? (() => {})
  const subscriptions = new Subscriptions(ledger)
  const unsubscribeLedger = ledger.onChange(() => subscriptions.notify())
  const methods = createMethods(ledger, { advanceSlots: (count) => ledger.advanceSlots(count) })
  const sockets = new Set<Duplex>()
  const connections = new Set<WebSocketConnection>()

  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    const send = (status: number, body: string, type = 'application/json'): void => {
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
      response.end(body)
    }
    if (request.method === 'GET' && request.url === '/health') {
      send(200, 'ok', 'text/plain')
      return
    }
    if (request.method !== 'POST') {
      send(405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain')
      return
    }
    readBody(request).then(
      (body) => {
        if (body === undefined) {
          send(413, 'Payload Too Large', 'text/plain')
          return
        }
        const answer = answerBody(methods, body, log)
        send(200, answer === undefined ? '' : JSON.stringify(answer))
      },
      () => response.destroy(),
    )
  }

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    let connectionMethods: Record<string, RpcMethod> = {}
    const connection = acceptWebSocket(request, socket, head, {
      onMessage: (text) => {
        const answer = answerBody(connectionMethods, text, log)
        if (answer !== undefined) connection?.send(JSON.stringify(answer))
      },
      onClose: () => {
        if (!connection) return
        connections.delete(connection)
        subscriptions.dropConnection(connection)
      },
    })
    if (!connection) return
    connections.add(connection)
    connectionMethods = subscriptions.methodsFor(connection, methods)
  }

  const newServer = (): Server => {
    const server = createServer(onRequest)
    server.on('upgrade', onUpgrade)
    server.on('clientError', (_error, socket) => socket.destroy())
    return server
  }

  // Bind the RPC port, then try the next one for WebSockets; with a free port, retry a few times
  // to find a pair.
  const wanted = options.port ?? 0
  let rpcServer: Server | undefined
  let wsServer: Server | undefined
  let port = 0
  for (let attempt = 0; attempt < 10 && !wsServer; attempt++) {
    if (rpcServer) await close(rpcServer)
    rpcServer = newServer()
    port = await listen(rpcServer, wanted, host)
    const candidate = newServer()
    try {
      await listen(candidate, port + 1, host)
      wsServer = candidate
    } catch {
      if (wanted !== 0) break
    }
  }
  if (!rpcServer) throw new Error('the SVM RPC server could not start')
  const wsPort = wsServer ? port + 1 : port
  if (!wsServer) log(`port ${port + 1} is taken: WebSocket subscriptions are served on ${port} only`)

  let timer: NodeJS.Timeout | undefined
  if (options.slotIntervalMs !== undefined && options.slotIntervalMs > 0) {
    timer = setInterval(() => ledger.advanceSlots(1), options.slotIntervalMs)
    timer.unref()
  }

  const servers = [rpcServer, wsServer].filter((server): server is Server => server !== undefined)
  let stopped: Promise<void> | undefined
  return {
    rpcUrl: `http://${urlHost(host)}:${port}`,
    wsUrl: `ws://${urlHost(host)}:${wsPort}`,
    host,
    port,
    ledger,
    advanceSlots: (count) => ledger.advanceSlots(count),
    stop: () => {
      stopped ??= (async () => {
        if (timer) clearInterval(timer)
        unsubscribeLedger()
        // A normal closure (1000) tells clients not to reconnect; web3.js would retry forever otherwise.
        for (const connection of connections) connection.close(1000)
        await new Promise((resolve) => setTimeout(resolve, sockets.size > 0 ? 50 : 0))
        for (const socket of sockets) socket.destroy()
        await Promise.all(servers.map(close))
      })()
      return stopped
    },
  }
}
