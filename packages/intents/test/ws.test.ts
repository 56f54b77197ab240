/**
 * The websocket status stream against the document's `x-websocket` extension, with real `ws`
 * clients on a real HTTP server, on both backends: embedded PGlite in memory, and PostgreSQL in a
 * schema of its own on `TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test).
 * PostgreSQL being unreachable fails the suite: CI has it. Every server message is validated
 * against the schema the extension names for it.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import type { IntentsApi, Logger } from '@pontis/core'
import { createOpenApiAjv, listen, loadOpenApiDocument } from '@pontis/http'
import type { ValidateFunction } from 'ajv'
import Koa from 'koa'
import t from 'tap'
import { type ClientOptions, WebSocket } from 'ws'
import { deferred, waitFor, within } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH } from '../src/app.js'
import { notifyStatus, StatusEvents } from '../src/events/index.js'
import type { NewRequest, RequestStore } from '../src/store/index.js'
import { attachStatusStream, type StatusStream, type StatusStreamOptions } from '../src/ws/index.js'
import type { Teardown } from './fixtures/postgres.js'
import { type StoreDatabase, storeBackends } from './fixtures/store-backends.js'

const T0 = 1_767_225_600_000
const EVENT = 'request.status.updated'

// ---- the document's messages ----

const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const DOC_ID = 'https://pontis.invalid/openapi/intents.yaml'
const ajv = createOpenApiAjv()
ajv.addSchema(loaded.document as object, DOC_ID)

interface MessageSpec {
  readonly schema: { readonly $ref: string }
}
const extension = (loaded.document as unknown as Record<string, unknown>)['x-websocket'] as {
  readonly path: string
  readonly clientMessages: Record<'subscribe' | 'unsubscribe', MessageSpec>
  readonly serverMessages: Record<ServerMessageKind, MessageSpec>
}
type ServerMessageKind = 'connection' | 'subscription' | 'statusUpdate' | 'error'
interface ServerMessages {
  connection: IntentsApi.WsConnectionMessage
  subscription: IntentsApi.WsSubscriptionMessage
  statusUpdate: IntentsApi.WsStatusUpdateMessage
  error: IntentsApi.WsErrorMessage
}

/** Compiles the schema the extension names (`#/components/...`, resolved inside the document). */
const compile = (spec: MessageSpec): ValidateFunction => ajv.compile({ $ref: `${DOC_ID}${spec.schema.$ref}` })
const serverValidators = {
  connection: compile(extension.serverMessages.connection),
  subscription: compile(extension.serverMessages.subscription),
  statusUpdate: compile(extension.serverMessages.statusUpdate),
  error: compile(extension.serverMessages.error),
} satisfies Record<ServerMessageKind, ValidateFunction>
const clientValidators = {
  subscribe: compile(extension.clientMessages.subscribe),
  unsubscribe: compile(extension.clientMessages.unsubscribe),
}
const UPDATE_FIELDS = [
  'destinationChainId',
  'inTxHashes',
  'originChainId',
  'requestId',
  'status',
  'txHashes',
  'updatedAt',
]

// ---- backends ----

const { pglite, postgres } = storeBackends('ws', clock)

// ---- helpers ----

let now = T0
function clock(): number {
  return now
}

function newRequest(overrides: Partial<NewRequest> = {}): NewRequest {
  return {
    id: `0x${randomBytes(32).toString('hex')}`,
    originChainId: 8453,
    destinationChainId: 42161,
    userAddress: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
    recipient: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
    refundTo: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
    originCurrency: '0x0000000000000000000000000000000000000000',
    destinationCurrency: '0x0000000000000000000000000000000000000000',
    tradeType: 'EXACT_INPUT',
    amountIn: 1_000_000_000_000_000n,
    amountOut: 999_000_000_000_000n,
    minimumAmountOut: 990_000_000_000_000n,
    quote: { request: { amount: '1000000000000000' } },
    expiresAt: T0 + 600_000,
    ...overrides,
  }
}

/** A status transition as the lifecycle makes it: the change and its announcement in one transaction. */
async function transition(
  store: RequestStore,
  id: string,
  status: IntentsApi.RequestStatus,
  inTxHashes: readonly string[] = [],
): Promise<number> {
  now += 1000
  await store.client.transaction(async (tx) => {
    await tx.query('UPDATE requests SET status = $2, in_tx_hashes = $3, updated_at = $4 WHERE id = $1', [
      id.toLowerCase(),
      status,
      [...inTxHashes],
      now,
    ])
    await notifyStatus(tx, id)
  })
  return now
}

function recordingLogger() {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> | undefined }> = []
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, fields })
    }
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
  return { logger, lines }
}

/** A real websocket client that queues what it receives. */
class TestClient {
  readonly socket: WebSocket
  readonly closed: Promise<void>
  readonly #inbox: unknown[] = []
  #wake: (() => void) | undefined
  /** Pings received from the server: each one means the heartbeat found this socket alive. */
  pings = 0

  private constructor(socket: WebSocket) {
    this.socket = socket
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
    socket.on('message', (data) => {
      this.#inbox.push(JSON.parse(data.toString()))
      this.#wake?.()
    })
    socket.on('ping', () => {
      this.pings++
    })
    socket.on('error', () => undefined)
  }

  static async open(url: string, options?: ClientOptions): Promise<TestClient> {
    const client = new TestClient(new WebSocket(url, options))
    await once(client.socket, 'open')
    return client
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** The next message (at once if one is queued); `what` names it if it never comes. */
  async next(what = 'a message'): Promise<unknown> {
    if (this.#inbox.length === 0) {
      const arrived = deferred()
      this.#wake = arrived.resolve
      try {
        await within(`${what} on the websocket`, arrived.promise, {
          lastSeen: () => (this.isOpen ? 'the socket open, nothing received' : 'the socket closed'),
        })
      } finally {
        this.#wake = undefined
      }
    }
    return this.#inbox.shift()
  }

  /** Messages received and not yet taken. */
  get queued(): number {
    return this.#inbox.length
  }

  async close(): Promise<void> {
    if (this.socket.readyState !== WebSocket.CLOSED) {
      this.socket.close()
      await this.closed
    }
  }
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** The next message, validated against the schema the extension names for `kind`. */
async function expectMessage<K extends ServerMessageKind>(
  t: Tap,
  client: TestClient,
  kind: K,
): Promise<ServerMessages[K]> {
  const message = await client.next(`a ${kind} message`)
  const validate = serverValidators[kind]
  t.ok(validate(message), `a valid ${kind} message`, { found: message, errors: validate.errors })
  return message as ServerMessages[K]
}

function subscribeMessage(id: string): IntentsApi.WsSubscribeMessage {
  const message: IntentsApi.WsSubscribeMessage = { type: 'subscribe', event: EVENT, filters: { id } }
  if (!clientValidators.subscribe(message)) throw new Error('the test sends an invalid subscribe')
  return message
}

function unsubscribeMessage(id: string): IntentsApi.WsUnsubscribeMessage {
  const message: IntentsApi.WsUnsubscribeMessage = { type: 'unsubscribe', event: EVENT, filters: { id } }
  if (!clientValidators.unsubscribe(message)) throw new Error('the test sends an invalid unsubscribe')
  return message
}

interface Running {
  readonly stream: StatusStream
  readonly url: string
  readonly origin: string
  readonly connect: (options?: ClientOptions) => Promise<TestClient>
}

/** An HTTP server (an empty Koa app) with the status stream attached; closed in teardown. */
async function serve(t: Teardown, options: StatusStreamOptions): Promise<Running> {
  const server = await listen(new Koa(), { port: 0 })
  const stream = attachStatusStream(server.server, options)
  const clients: TestClient[] = []
  t.teardown(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await stream.close()
    await server.close()
  })
  const origin = server.url.replace(/^http/, 'ws')
  const url = `${origin}${extension.path}`
  return {
    stream,
    url,
    origin,
    connect: async (clientOptions) => {
      const client = await TestClient.open(url, clientOptions)
      clients.push(client)
      return client
    },
  }
}

/** Connects and takes the `connection` ready message. */
async function ready(t: Tap, running: Running, options?: ClientOptions): Promise<TestClient> {
  const client = await running.connect(options)
  // Closed when the subtest ends, so subscriptions do not leak from one subtest into the next.
  t.teardown(() => client.close())
  const message = await expectMessage(t, client, 'connection')
  t.match(message, { type: 'connection', status: 'ready', data: { id: /\S/ } })
  return client
}

/** Subscribes and checks the acknowledgement and the current status sent right after it. */
async function subscribed(
  t: Tap,
  client: TestClient,
  id: string,
): Promise<IntentsApi.WsStatusUpdateMessage['data']> {
  client.send(subscribeMessage(id))
  const ack = await expectMessage(t, client, 'subscription')
  t.same(ack, { type: 'subscribe', status: 'success', data: { event: EVENT, filters: { id } } })
  const current = await expectMessage(t, client, 'statusUpdate')
  t.same(Object.keys(current.data).sort(), UPDATE_FIELDS, 'exactly the documented update fields')
  return current.data
}

/**
 * Shows that nothing was sent for `requestId` since the last message taken, without waiting for
 * nothing: another change of the same request is made, and its update must be the very next message
 * (a request's updates are sent one read at a time, in order, so anything owed before it comes first).
 */
async function nothingBefore(
  t: Tap,
  client: TestClient,
  store: RequestStore,
  requestId: string,
  what: string,
): Promise<void> {
  const updatedAt = await transition(store, requestId, 'depositing')
  const next = (await client.next('the update of a later change')) as IntentsApi.WsStatusUpdateMessage
  t.match(next, { event: EVENT, data: { requestId, status: 'depositing', updatedAt } }, what)
  t.equal(client.queued, 0, `${what}: nothing else queued`)
}

// ---- tests ----

t.equal(extension.path, '/intents/ws', 'the document serves the stream on /intents/ws')

for (const backend of [pglite, postgres]) {
  t.test(backend.name, async (t) => {
    let db: StoreDatabase
    try {
      db = await backend.open(t)
    } catch (error) {
      t.fail((error as Error).message)
      return
    }
    const { store } = db
    const events = await StatusEvents.open(store.client)
    t.teardown(() => events.close())
    const { logger, lines } = recordingLogger()
    const running = await serve(t, { store, events, logger })

    t.test('ready, subscribe, current status, then every change', async (t) => {
      const request = await store.insertRequest(newRequest())
      const client = await ready(t, running)
      t.equal(running.stream.connections(), 1)
      // Ids are matched in any case; the acknowledgement echoes the client's.
      const asSent = `0x${request.id.slice(2).toUpperCase()}`
      const current = await subscribed(t, client, asSent)
      t.same(current, {
        requestId: request.id,
        status: 'waiting',
        inTxHashes: [],
        txHashes: [],
        updatedAt: request.updatedAt,
        originChainId: 8453,
        destinationChainId: 42161,
      })

      const hash = `0x${'ab'.repeat(32)}`
      const updatedAt = await transition(store, request.id, 'pending', [hash])
      const update = await expectMessage(t, client, 'statusUpdate')
      t.same(update, {
        event: EVENT,
        data: { ...current, status: 'pending', inTxHashes: [hash], updatedAt },
      })
      const finalAt = await transition(store, request.id, 'success', [hash])
      t.match(await expectMessage(t, client, 'statusUpdate'), {
        data: { status: 'success', updatedAt: finalAt },
      })

      // A rolled-back transition announces nothing.
      await t.rejects(
        store.client.transaction(async (tx) => {
          await tx.query("UPDATE requests SET status = 'failure' WHERE id = $1", [request.id])
          await notifyStatus(tx, request.id)
          throw new Error('roll back')
        }),
      )
      // A notification without a change sends nothing twice.
      await store.client.transaction((tx) => notifyStatus(tx, request.id))
      await nothingBefore(t, client, store, request.id, 'no message for a rolled-back or unchanged request')
      t.ok(client.isOpen)
    })

    t.test('subscribing to an unknown request is acknowledged with an error', async (t) => {
      const client = await ready(t, running)
      const id = newRequest().id
      client.send(subscribeMessage(id))
      const ack = await expectMessage(t, client, 'subscription')
      t.match(ack, {
        type: 'subscribe',
        status: 'error',
        data: { event: EVENT, filters: { id } },
        message: /no request/,
      })
      await waitFor('the watch to be dropped', () => events.subscriberCount(id) === 0)
      // Once quoted it can be subscribed; a status sent for it before would come ahead of this
      // acknowledgement (a connection's messages are answered in order).
      await store.insertRequest(newRequest({ id }))
      await subscribed(t, client, id)
    })

    t.test('malformed messages get an error and the socket stays open', async (t) => {
      const request = await store.insertRequest(newRequest())
      const client = await ready(t, running)
      const cases: Array<[unknown, RegExp]> = [
        ['{not json', /JSON/],
        ['[1, 2]', /JSON object/],
        ['null', /JSON object/],
        [{ type: 'subscribe' }, /event must be/],
        [{ type: 'hello', event: EVENT, filters: { id: request.id } }, /type must be/],
        [{ type: 'subscribe', event: 'other', filters: { id: request.id } }, /event must be/],
        [{ type: 'subscribe', event: EVENT }, /filters\.id/],
        [{ type: 'subscribe', event: EVENT, filters: { id: '0x1234' } }, /filters\.id must be a 0x-prefixed/],
        [{ type: 'unsubscribe', event: EVENT, filters: { id: 42 } }, /filters\.id/],
      ]
      for (const [message, reason] of cases) {
        client.send(message)
        const error = await expectMessage(t, client, 'error')
        t.match(error, { type: 'error', message: reason }, JSON.stringify(message))
      }
      client.socket.send(Buffer.from('{}'), { binary: true })
      t.match(await expectMessage(t, client, 'error'), { message: /text frames/ })
      t.ok(client.isOpen, 'still open')
      await subscribed(t, client, request.id)
    })

    t.test('unsubscribe stops the updates of that request only', async (t) => {
      const [a, b] = [await store.insertRequest(newRequest()), await store.insertRequest(newRequest())]
      const client = await ready(t, running)
      await subscribed(t, client, a.id)
      await subscribed(t, client, b.id)
      client.send(unsubscribeMessage(a.id))
      t.same(await expectMessage(t, client, 'subscription'), {
        type: 'unsubscribe',
        status: 'success',
        data: { event: EVENT, filters: { id: a.id } },
      })
      await transition(store, a.id, 'depositing')
      const updatedAt = await transition(store, b.id, 'depositing')
      t.match(await expectMessage(t, client, 'statusUpdate'), {
        data: { requestId: b.id, status: 'depositing', updatedAt },
      })
      // b's next change comes after a's; an update for a would come first.
      await nothingBefore(t, client, store, b.id, 'nothing for the unsubscribed request')
      // Unsubscribing twice, or from something never subscribed, is still acknowledged.
      client.send(unsubscribeMessage(a.id))
      t.match(await expectMessage(t, client, 'subscription'), { type: 'unsubscribe', status: 'success' })
    })

    t.test('subscribing twice re-sends the current status, and holds one subscription', async (t) => {
      const request = await store.insertRequest(newRequest())
      const client = await ready(t, running)
      await subscribed(t, client, request.id)
      await subscribed(t, client, request.id)
      t.equal(events.subscriberCount(request.id), 1)
      await transition(store, request.id, 'pending')
      t.match(await expectMessage(t, client, 'statusUpdate'), { data: { status: 'pending' } })
      await nothingBefore(t, client, store, request.id, 'one update, not two')
    })

    t.test('several clients on one request share one event subscription', async (t) => {
      const request = await store.insertRequest(newRequest())
      const clients = [await ready(t, running), await ready(t, running), await ready(t, running)]
      for (const client of clients) await subscribed(t, client, request.id)
      t.equal(events.subscriberCount(request.id), 1)
      const updatedAt = await transition(store, request.id, 'submitted')
      for (const client of clients) {
        t.match(await expectMessage(t, client, 'statusUpdate'), { data: { status: 'submitted', updatedAt } })
      }
    })

    t.test('a connection holds at most 100 subscriptions', async (t) => {
      const requests: string[] = []
      for (let i = 0; i < 101; i++) requests.push((await store.insertRequest(newRequest())).id)
      const client = await ready(t, running)
      // Sent all at once: answers still come in order.
      for (const id of requests) client.send(subscribeMessage(id))
      for (const id of requests.slice(0, 100)) {
        t.match(await client.next(), { type: 'subscribe', status: 'success', data: { filters: { id } } })
        t.match(await client.next(), { event: EVENT, data: { requestId: id } })
      }
      const refused = await expectMessage(t, client, 'subscription')
      t.match(refused, { type: 'subscribe', status: 'error', message: /at most 100 subscriptions/ })
      // Room again after an unsubscribe.
      client.send(unsubscribeMessage(requests[0]!))
      await expectMessage(t, client, 'subscription')
      await subscribed(t, client, requests[100]!)
      await client.close()
      await waitFor('the subscriptions to go', () => events.subscriberCount() === 0)
    })

    t.test('closing a client removes its subscriptions', async (t) => {
      const [a, b] = [await store.insertRequest(newRequest()), await store.insertRequest(newRequest())]
      const first = await ready(t, running)
      const second = await ready(t, running)
      await subscribed(t, first, a.id)
      await subscribed(t, first, b.id)
      await subscribed(t, second, b.id)
      t.equal(events.subscriberCount(), 2, 'one per request')
      await first.close()
      await waitFor('the first connection to go', () => running.stream.connections() === 1)
      t.equal(events.subscriberCount(a.id), 0)
      t.equal(events.subscriberCount(b.id), 1, 'still followed by the second')
      const updatedAt = await transition(store, b.id, 'pending')
      t.match(await expectMessage(t, second, 'statusUpdate'), { data: { updatedAt } })
      await second.close()
      await waitFor('no connection', () => running.stream.connections() === 0)
      t.equal(events.subscriberCount(), 0, 'no leaked listener')
    })

    t.test('a slow consumer is terminated, the others keep going', async (t) => {
      const { logger, lines } = recordingLogger()
      const slowStream = await serve(t, { store, events, logger, maxBufferedBytes: 256 * 1024 })
      const request = await store.insertRequest(newRequest())
      const fast = await ready(t, slowStream)
      const slow = await ready(t, slowStream)
      await subscribed(t, fast, request.id)
      await subscribed(t, slow, request.id)
      slow.socket.pause() // stops reading: what the server sends piles up
      // About 280 KB per update; the kernel buffers a few MB before the server has to.
      const hashes = Array.from({ length: 4000 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`)
      let last = 0
      let sent = 0
      for (; sent < 300 && slowStream.stream.connections() === 2; sent++) {
        last = await transition(store, request.id, 'pending', hashes)
        // Keep the fast one drained so only the slow one falls behind.
        for (;;) {
          const message = (await fast.next('the latest update')) as IntentsApi.WsStatusUpdateMessage
          if (message.data.updatedAt === last) break
        }
      }
      t.equal(slowStream.stream.connections(), 1, `terminated after ${sent} updates`)
      t.ok(
        lines.some((line) => line.message === 'websocket consumer too slow; terminating'),
        'logged as a slow consumer',
      )
      slow.socket.resume()
      await slow.closed
      const updatedAt = await transition(store, request.id, 'success', hashes)
      t.match(await expectMessage(t, fast, 'statusUpdate'), { data: { status: 'success', updatedAt } })
      t.ok(fast.isOpen)
      await waitFor('one subscriber (the fast client)', () => events.subscriberCount(request.id) === 1)
    })

    t.test('heartbeat: a socket that misses a pong is terminated', async (t) => {
      const { logger, lines } = recordingLogger()
      // A pong must come back within one beat: long enough even when a busy machine pauses this
      // process (client and server share it) between the ping and the pong.
      const beating = await serve(t, { store, events, logger, heartbeatMs: 1000 })
      const deaf = await ready(t, beating, { autoPong: false })
      const healthy = await ready(t, beating)
      await within('the deaf socket to be terminated', deaf.closed)
      t.ok(lines.some((line) => line.message === 'websocket missed a pong; terminating'))
      // Only a socket that answered the last ping is pinged again: another ping is another beat survived.
      const survived = healthy.pings
      await waitFor('another heartbeat ping to the healthy client', () => healthy.pings > survived)
      t.ok(healthy.isOpen, 'a client answering pings stays')
      t.equal(beating.stream.connections(), 1)
    })

    t.test('other upgrade paths are refused with 404', async (t) => {
      const socket = new WebSocket(`${running.origin}/intents/other`)
      socket.on('error', () => undefined)
      const closed = new Promise((resolve) => socket.once('close', resolve))
      const [, response] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }]
      t.equal(response.statusCode, 404)
      socket.terminate()
      await closed
    })

    t.test('close terminates every socket and refuses new ones', async (t) => {
      const closing = await serve(t, { store, events, logger })
      const request = await store.insertRequest(newRequest())
      const client = await ready(t, closing)
      await subscribed(t, client, request.id)
      t.equal(events.subscriberCount(request.id), 1)
      await closing.stream.close()
      await client.closed
      t.equal(closing.stream.connections(), 0)
      t.equal(events.subscriberCount(request.id), 0)
      await closing.stream.close()
      const socket = new WebSocket(closing.url)
      let opened = false
      socket.on('open', () => {
        opened = true
      })
      socket.on('error', () => undefined)
      await new Promise((resolve) => socket.once('close', resolve))
      t.notOk(opened, 'no new connection')
    })

    t.test('no warnings on the main stream', async (t) => {
      t.same(
        lines.filter((line) => line.level === 'warn' || line.level === 'error'),
        [],
      )
    })

    if (backend !== postgres) return
    const admin = db.admin!
    const another = db.another!

    t.test('postgres: a change made by another process reaches the websocket', async (t) => {
      // Two processes' worth: this one serves the websocket from store B, the change comes from A.
      const storeB = await another()
      const eventsB = await StatusEvents.open(storeB.client)
      t.teardown(() => eventsB.close())
      const serving = await serve(t, { store: storeB, events: eventsB, logger })
      const request = await store.insertRequest(newRequest())
      const client = await ready(t, serving)
      await subscribed(t, client, request.id)
      const updatedAt = await transition(store, request.id, 'pending')
      t.match(await expectMessage(t, client, 'statusUpdate'), {
        data: { requestId: request.id, status: 'pending', updatedAt },
      })
    })

    t.test('postgres: updates continue after the LISTEN connection is killed', async (t) => {
      const request = await store.insertRequest(newRequest())
      const client = await ready(t, running)
      await subscribed(t, client, request.id)
      const { rows } = await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
        [`pontis_listen_${store.client.schema}`.slice(0, 63)],
      )
      t.ok(rows.length >= 1, 'the listening backend is found')
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [
        rows.map((row) => row.pid),
      ])
      // Made while the listener may be down: its notification can be lost, the resync after the
      // reconnect still brings it.
      const duringAt = await transition(store, request.id, 'depositing')
      t.match(await expectMessage(t, client, 'statusUpdate'), {
        data: { status: 'depositing', updatedAt: duringAt },
      })
      await waitFor('the listener to be back', async () => {
        const { rows } = await admin.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
          [`pontis_listen_${store.client.schema}`.slice(0, 63)],
        )
        return rows.length >= 1
      })
      const afterAt = await transition(store, request.id, 'pending')
      t.match(await expectMessage(t, client, 'statusUpdate'), {
        data: { status: 'pending', updatedAt: afterAt },
      })
      await nothingBefore(t, client, store, request.id, 'each change once')
    })
  })
}
