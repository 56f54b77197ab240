import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { IntentsApi, Logger } from '@pontis/core'
import { type RawData, type WebSocket, WebSocketServer } from 'ws'
import type { StatusEvents } from '../events/index.js'
import type { RequestStore, StoredRequest } from '../store/index.js'

/** The only event of the stream. */
const EVENT = 'request.status.updated'
const REQUEST_ID = /^0x[0-9a-fA-F]{64}$/
/** Client messages are a few hundred bytes; anything far larger is not one (ws closes with 1009). */
const MAX_PAYLOAD_BYTES = 64 * 1024
/** Client messages waiting behind a subscribe that reads the store; more are refused, not queued. */
const MAX_QUEUED_MESSAGES = 256

/** Options of {@link attachStatusStream}. */
export interface StatusStreamOptions {
  /** Where statuses are read. */
  readonly store: RequestStore
  /** Where status changes are announced (one per process). */
  readonly events: StatusEvents
  readonly logger: Logger
  /** Upgrade path. Default `/intents/ws` (the document's `x-websocket.path`). */
  readonly path?: string
  /** Subscriptions one connection may hold. Default 100, as the document states. */
  readonly maxSubscriptions?: number
  /** A socket whose unsent data exceeds this is a slow consumer and is terminated. Default 1 MiB. */
  readonly maxBufferedBytes?: number
  /** Ping interval; a socket that has not answered the previous ping by the next is terminated. Default 30000 ms. */
  readonly heartbeatMs?: number
}

/** A running status stream; see {@link attachStatusStream}. */
export interface StatusStream {
  /**
   * Stops accepting upgrades, closes every socket, drops their subscriptions and stops the
   * heartbeat. Idempotent. Without `goingAway` sockets are terminated at once; with it each gets a
   * close frame with that code and reason (1012 "service restart": reconnect elsewhere) and is
   * terminated if it has not closed within `graceMs` (default 1000).
   */
  close(goingAway?: {
    readonly code: number
    readonly reason: string
    readonly graceMs?: number
  }): Promise<void>
  /** Open websocket connections. */
  connections(): number
}

/** One websocket connection. */
interface Connection {
  readonly id: string
  readonly socket: WebSocket
  /** Subscribed (or being subscribed) request ids, lower-case. */
  readonly subscriptions: Map<string, Watch>
  /** Client messages in arrival order, handled one at a time so answers keep that order. */
  readonly queue: Buffer[]
  busy: boolean
  /** Answered the last ping. */
  alive: boolean
  readonly closed: Promise<void>
}

/** A subscribe waiting for its first read of the request. */
interface PendingSubscribe {
  /** The id as the client sent it, echoed in the acknowledgement. */
  readonly filtersId: string
  readonly done: () => void
}

/**
 * Every connection following one request, sharing one status event subscription and one read per
 * change. Reads run one at a time, and a change announced during a read causes another, so updates
 * go out in commit order and none is lost.
 */
interface Watch {
  readonly requestId: string
  readonly active: Set<Connection>
  readonly pending: Map<Connection, PendingSubscribe>
  readonly unsubscribe: () => void
  reading: boolean
  /** A change (or a subscribe) came in during the current read. */
  again: boolean
  /** The last update sent to `active`: an unchanged record is not sent twice. */
  last: string | undefined
}

type ClientMessage =
  | { readonly type: 'subscribe' | 'unsubscribe'; readonly filtersId: string }
  | { readonly error: string }

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Checks a parsed client message against `WsSubscribeMessage` / `WsUnsubscribeMessage`. */
function parseClientMessage(message: unknown): ClientMessage {
  if (!isObject(message)) return { error: 'a message must be a JSON object' }
  const { type, event, filters } = message
  if (type !== 'subscribe' && type !== 'unsubscribe')
    return { error: 'type must be "subscribe" or "unsubscribe"' }
  if (event !== EVENT) return { error: `event must be "${EVENT}"` }
  if (!isObject(filters) || typeof filters.id !== 'string' || !REQUEST_ID.test(filters.id)) {
    return { error: 'filters.id must be a 0x-prefixed 32-byte hex request id' }
  }
  return { type, filtersId: filters.id }
}

function updateMessage(stored: StoredRequest, store: RequestStore): IntentsApi.WsStatusUpdateMessage {
  const record = store.toStatusRecord(stored)
  return {
    event: EVENT,
    data: {
      requestId: record.requestId,
      status: record.status,
      inTxHashes: record.inTxHashes,
      txHashes: record.txHashes,
      updatedAt: record.updatedAt,
      originChainId: record.originChainId,
      destinationChainId: record.destinationChainId,
    },
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (Array.isArray(data)) return Buffer.concat(data)
  return Buffer.from(data)
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Serves the websocket status stream of the document's `x-websocket` extension on `server`'s
 * upgrades to `path` (other upgrade paths are answered 404): `connection` ready, `subscribe` /
 * `unsubscribe` with acknowledgements, the current status right after subscribing, then every
 * change announced on `events`. Malformed messages get an `error` message and the socket stays
 * open. Slow consumers and sockets that miss a pong are terminated.
 */
export function attachStatusStream(server: Server, options: StatusStreamOptions): StatusStream {
  const { store, events, logger } = options
  const path = options.path ?? '/intents/ws'
  const maxSubscriptions = options.maxSubscriptions ?? 100
  const maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024
  const heartbeatMs = options.heartbeatMs ?? 30_000

  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    maxPayload: MAX_PAYLOAD_BYTES,
    perMessageDeflate: false,
  })
  const connections = new Set<Connection>()
  const watches = new Map<string, Watch>()
  let closed = false

  function send(connection: Connection, message: string): void {
    const { socket } = connection
    if (socket.readyState !== socket.OPEN) return
    socket.send(message)
    // What the kernel would not take stays in memory: past the bound, drop the socket instead.
    if (socket.bufferedAmount > maxBufferedBytes) {
      logger.warn('websocket consumer too slow; terminating', {
        connectionId: connection.id,
        bufferedBytes: socket.bufferedAmount,
        maxBufferedBytes,
      })
      socket.terminate()
    }
  }

  function sendJson(
    connection: Connection,
    message: IntentsApi.WsSubscriptionMessage | IntentsApi.WsErrorMessage | IntentsApi.WsConnectionMessage,
  ): void {
    send(connection, JSON.stringify(message))
  }

  function acknowledge(
    connection: Connection,
    type: 'subscribe' | 'unsubscribe',
    filtersId: string,
    error?: string,
  ): void {
    sendJson(connection, {
      type,
      status: error === undefined ? 'success' : 'error',
      data: { event: EVENT, filters: { id: filtersId } },
      ...(error === undefined ? {} : { message: error }),
    })
  }

  /** Drops a watch nobody follows any more (once its read is over). */
  function release(watch: Watch): void {
    if (watch.reading || watch.active.size > 0 || watch.pending.size > 0) return
    watch.unsubscribe()
    if (watches.get(watch.requestId) === watch) watches.delete(watch.requestId)
  }

  function detach(connection: Connection, requestId: string): void {
    const watch = connection.subscriptions.get(requestId)
    if (watch === undefined) return
    connection.subscriptions.delete(requestId)
    watch.active.delete(connection)
    const pending = watch.pending.get(connection)
    if (pending !== undefined) {
      watch.pending.delete(connection)
      pending.done()
    }
    release(watch)
  }

  /** Reads the request and sends it: the first status to pending subscribers, changes to the others. */
  function refresh(watch: Watch): void {
    if (watch.reading) {
      watch.again = true
      return
    }
    watch.reading = true
    void (async () => {
      try {
        do {
          watch.again = false
          let stored: StoredRequest | undefined
          let failure: unknown
          try {
            stored = await store.getRequest(watch.requestId)
          } catch (error) {
            failure = error
          }
          const pending = [...watch.pending]
          watch.pending.clear()
          if (failure !== undefined || stored === undefined) {
            if (failure !== undefined) {
              logger.warn('reading a request for the status stream failed', {
                requestId: watch.requestId,
                error: errorMessage(failure),
              })
            }
            const reason =
              failure !== undefined
                ? 'the request status could not be read; subscribe again'
                : `no request ${watch.requestId}; request ids come from steps[].requestId of a quote`
            for (const [connection, { filtersId, done }] of pending) {
              connection.subscriptions.delete(watch.requestId)
              acknowledge(connection, 'subscribe', filtersId, reason)
              done()
            }
            continue
          }
          const message = JSON.stringify(updateMessage(stored, store))
          if (message !== watch.last) {
            watch.last = message
            for (const connection of watch.active) send(connection, message)
          }
          for (const [connection, { filtersId, done }] of pending) {
            acknowledge(connection, 'subscribe', filtersId)
            send(connection, message)
            watch.active.add(connection)
            done()
          }
        } while (watch.again || watch.pending.size > 0)
      } catch (error) {
        // Not expected (reads are caught above); still, no subscribe may wait forever on it.
        logger.error('status stream update failed', {
          requestId: watch.requestId,
          error: errorMessage(error),
        })
        for (const [connection, { done }] of watch.pending) {
          connection.subscriptions.delete(watch.requestId)
          done()
        }
        watch.pending.clear()
      } finally {
        watch.reading = false
        release(watch)
      }
    })()
  }

  function subscribe(connection: Connection, filtersId: string): Promise<void> {
    const requestId = filtersId.toLowerCase()
    let watch = connection.subscriptions.get(requestId)
    if (watch === undefined && connection.subscriptions.size >= maxSubscriptions) {
      acknowledge(
        connection,
        'subscribe',
        filtersId,
        `at most ${maxSubscriptions} subscriptions per connection`,
      )
      return Promise.resolve()
    }
    if (watch === undefined) {
      watch = watches.get(requestId)
      if (watch === undefined) {
        const created: Watch = {
          requestId,
          active: new Set(),
          pending: new Map(),
          // Subscribed before the first read, so a change committed after that read is not missed.
          unsubscribe: events.subscribe(requestId, () => refresh(created)),
          reading: false,
          again: false,
          last: undefined,
        }
        watch = created
        watches.set(requestId, watch)
      }
      connection.subscriptions.set(requestId, watch)
    }
    // Subscribing again re-sends the acknowledgement and the current status.
    watch.active.delete(connection)
    const target = watch
    return new Promise((resolve) => {
      target.pending.set(connection, { filtersId, done: resolve })
      refresh(target)
    })
  }

  async function handle(connection: Connection, data: Buffer): Promise<void> {
    let parsed: unknown
    try {
      parsed = JSON.parse(data.toString('utf8'))
    } catch {
      sendJson(connection, { type: 'error', message: 'a message must be JSON' })
      return
    }
    const message = parseClientMessage(parsed)
    if ('error' in message) {
      sendJson(connection, { type: 'error', message: message.error })
      return
    }
    if (message.type === 'subscribe') {
      try {
        await subscribe(connection, message.filtersId)
      } catch (error) {
        detach(connection, message.filtersId.toLowerCase())
        logger.warn('websocket subscribe failed', { connectionId: connection.id, error: errorMessage(error) })
        acknowledge(connection, 'subscribe', message.filtersId, 'the subscription could not be set up')
      }
      return
    }
    detach(connection, message.filtersId.toLowerCase())
    acknowledge(connection, 'unsubscribe', message.filtersId)
  }

  async function drain(connection: Connection): Promise<void> {
    connection.busy = true
    try {
      for (let data = connection.queue.shift(); data !== undefined; data = connection.queue.shift()) {
        if (connection.socket.readyState !== connection.socket.OPEN) break
        await handle(connection, data)
      }
    } finally {
      connection.busy = false
    }
  }

  function onConnection(socket: WebSocket): void {
    let markClosed: () => void = () => undefined
    const connection: Connection = {
      id: randomUUID(),
      socket,
      subscriptions: new Map(),
      queue: [],
      busy: false,
      alive: true,
      closed: new Promise((resolve) => {
        markClosed = resolve
      }),
    }
    connections.add(connection)
    socket.on('pong', () => {
      connection.alive = true
    })
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        sendJson(connection, { type: 'error', message: 'messages are JSON text frames' })
        return
      }
      if (connection.queue.length >= MAX_QUEUED_MESSAGES) {
        sendJson(connection, { type: 'error', message: 'too many messages at once; wait for the answers' })
        return
      }
      connection.queue.push(toBuffer(data))
      if (!connection.busy) {
        drain(connection).catch((error: unknown) => {
          logger.error('websocket message handling failed', {
            connectionId: connection.id,
            error: errorMessage(error),
          })
        })
      }
    })
    // Protocol errors (bad frames, oversized messages): ws closes the socket itself.
    socket.on('error', (error) => {
      logger.debug('websocket error', { connectionId: connection.id, error: error.message })
    })
    socket.on('close', () => {
      connections.delete(connection)
      connection.queue.length = 0
      for (const requestId of [...connection.subscriptions.keys()]) detach(connection, requestId)
      markClosed()
    })
    sendJson(connection, { type: 'connection', status: 'ready', data: { id: connection.id } })
  }

  function refuse(socket: Duplex, status: string): void {
    socket.on('error', () => undefined)
    if (socket.writable) socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
    socket.destroy()
  }

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    let pathname: string
    try {
      pathname = new URL(request.url ?? '/', 'http://localhost').pathname
    } catch {
      pathname = ''
    }
    if (pathname !== path) {
      refuse(socket, '404 Not Found')
      return
    }
    wss.handleUpgrade(request, socket, head, onConnection)
  }
  server.on('upgrade', onUpgrade)

  const heartbeat = setInterval(() => {
    for (const connection of connections) {
      if (!connection.alive) {
        logger.info('websocket missed a pong; terminating', { connectionId: connection.id })
        connection.socket.terminate()
        continue
      }
      connection.alive = false
      connection.socket.ping()
    }
  }, heartbeatMs)
  // The HTTP server keeps the process alive; the heartbeat alone must not.
  heartbeat.unref()

  return {
    connections: () => connections.size,
    close: async (goingAway) => {
      if (!closed) {
        closed = true
        server.off('upgrade', onUpgrade)
        clearInterval(heartbeat)
      }
      const open = [...connections]
      if (goingAway === undefined) {
        for (const connection of open) connection.socket.terminate()
      } else {
        for (const connection of open) connection.socket.close(goingAway.code, goingAway.reason)
        // A client that never answers the close frame must not hold the shutdown.
        const graceMs = goingAway.graceMs ?? 1000
        await Promise.all(
          open.map(async (connection) => {
            let timer: NodeJS.Timeout | undefined
            const late = new Promise<void>((resolve) => {
              timer = setTimeout(() => {
                connection.socket.terminate()
                resolve()
              }, graceMs)
            })
            await Promise.race([connection.closed, late])
            clearTimeout(timer)
          }),
        )
      }
      await Promise.all(open.map((connection) => connection.closed))
      await new Promise<void>((resolve) => wss.close(() => resolve()))
    },
  }
}
