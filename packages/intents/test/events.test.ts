/**
 * Status events: `SqlClient.listen` and `StatusEvents` on both backends (embedded PGlite in memory,
 * and PostgreSQL in a schema of its own on `TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test). PostgreSQL being unreachable fails the suite: CI has it.
 */
import { randomBytes } from 'node:crypto'
import type { Logger } from '@pontis/core'
import type { Client } from 'pg'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import { notifyStatus, STATUS_CHANNEL, StatusEvents } from '../src/events/index.js'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import { StatusCache } from '../src/status/cache.js'
import { createPgClient, type SqlClient } from '../src/store/index.js'
import { TEST_DATABASE_URL } from './fixtures/postgres.js'
import { type StoreDatabase, storeBackends } from './fixtures/store-backends.js'

const { pglite, postgres } = storeBackends('events')

/** Records what was logged. */
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

/**
 * Inside a transaction nothing can be awaited that would show a notification arriving early (the
 * commit is what sends it), so this gives an early one a moment to show up: an absence check that a
 * slow machine can only make less sensitive, never fail.
 */
const earlyNotificationWindow = () => new Promise((resolve) => setTimeout(resolve, 150))

const randomId = () => `0x${randomBytes(32).toString('hex')}`

/** A client whose `listen` calls are counted. */
function countingListens(client: SqlClient) {
  const counter = { listens: 0 }
  const counted: SqlClient = {
    ...client,
    listen: (channel, handler, options) => {
      counter.listens++
      return client.listen(channel, handler, options)
    },
  }
  return { counter, client: counted }
}

/** Backends (pids) of this schema's LISTEN connections. */
async function listenerPids(admin: Client, schema: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [`pontis_listen_${schema}`.slice(0, 63)],
  )
  return rows.map((row) => row.pid)
}

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
    const client = store.client

    t.test('listen delivers NOTIFY on commit only, until unlistened', async (t) => {
      const received: string[] = []
      const unlisten = await client.listen('pontis_test_channel', (payload) => received.push(payload))
      await client.transaction(async (tx) => {
        await tx.query("SELECT pg_notify('pontis_test_channel', 'committed')")
        await earlyNotificationWindow()
        t.same(received, [], 'nothing before the commit')
      })
      await waitFor('the committed notification', () => received.length === 1)
      t.same(received, ['committed'])
      await t.rejects(
        client.transaction(async (tx) => {
          await tx.query("SELECT pg_notify('pontis_test_channel', 'rolled back')")
          throw new Error('roll back')
        }),
        /roll back/,
      )
      await client.query("SELECT pg_notify('pontis_test_channel', 'outside')")
      await waitFor('the autocommitted notification', () => received.length === 2)
      t.same(received, ['committed', 'outside'], 'the rolled-back notification never arrives')
      // A listener that stays: once it has 'after', the unlistened handler would have had it too.
      const staying: string[] = []
      const unlistenStaying = await client.listen('pontis_test_channel', (payload) => staying.push(payload))
      await unlisten()
      await unlisten()
      await client.query("SELECT pg_notify('pontis_test_channel', 'after')")
      await waitFor('the notification to the listener that stayed', () => staying.includes('after'))
      t.same(received, ['committed', 'outside'], 'nothing after unlisten')
      await unlistenStaying()
    })

    t.test('two listens on one channel are independent', async (t) => {
      const a: string[] = []
      const b: string[] = []
      const handler = (payload: string) => a.push(payload)
      const first = await client.listen('pontis_test_two', handler)
      const second = await client.listen('pontis_test_two', handler)
      const third = await client.listen('pontis_test_two', (payload) => b.push(payload))
      await client.query("SELECT pg_notify('pontis_test_two', 'x')")
      await waitFor('three deliveries', () => a.length === 2 && b.length === 1)
      await first()
      await client.query("SELECT pg_notify('pontis_test_two', 'y')")
      await waitFor('two deliveries', () => a.length === 3 && b.length === 2)
      t.same(a, ['x', 'x', 'y'])
      await Promise.all([second(), third()])
    })

    t.test('listen refuses transactions and odd channel names', async (t) => {
      await t.rejects(
        client.transaction((tx) => tx.listen('pontis_test_tx', () => undefined)),
        /listen on the client, not a transaction/,
      )
      await t.rejects(
        client.listen('Bad-Name; DROP', () => undefined),
        /invalid channel name/,
      )
    })

    t.test('a throwing handler does not stop delivery', async (t) => {
      const received: string[] = []
      const bad = await client.listen('pontis_test_throw', () => {
        throw new Error('handler bug')
      })
      const good = await client.listen('pontis_test_throw', (payload) => received.push(payload))
      await client.query("SELECT pg_notify('pontis_test_throw', 'a')")
      await client.query("SELECT pg_notify('pontis_test_throw', 'b')")
      await waitFor('both notifications', () => received.length === 2)
      t.same(received, ['a', 'b'])
      await Promise.all([bad(), good()])
    })

    t.test('StatusEvents: one LISTEN, fan-out by request id, robust to subscriber errors', async (t) => {
      const counting = countingListens(client)
      const { logger, lines } = recordingLogger()
      const events = await StatusEvents.open(counting.client, { logger })
      t.teardown(() => events.close())
      const idA = randomId()
      const idB = randomId()
      const seenA: string[] = []
      const seenA2: string[] = []
      const seenB: string[] = []
      const unsubscribeA = events.subscribe(idA.toUpperCase().replace('0X', '0x'), (id) => {
        seenA.push(id)
      })
      events.subscribe(idA, () => {
        throw new Error('subscriber bug')
      })
      events.subscribe(idA, async () => {
        throw new Error('async subscriber bug')
      })
      const unsubscribeA2 = events.subscribe(idA, (id) => {
        seenA2.push(id)
      })
      const unsubscribeB = events.subscribe(idB, (id) => {
        seenB.push(id)
      })
      t.equal(counting.counter.listens, 1, 'a single LISTEN whatever the subscriber count')
      t.equal(events.subscriberCount(), 5)
      t.equal(events.subscriberCount(idA), 4)

      await client.transaction((tx) => notifyStatus(tx, idA.toUpperCase().replace('0X', '0x')))
      await waitFor('delivery to A', () => seenA.length === 1 && seenA2.length === 1)
      const subscriberFailures = () =>
        lines.filter((line) => line.message === 'status event subscriber failed').length
      // The async subscriber's failure is logged once its promise has rejected.
      await waitFor('both failing subscribers to be logged', () => subscriberFailures() >= 2)
      t.same(seenA, [idA], 'callbacks get the lower-case id')
      t.same(seenA2, [idA], 'a failing subscriber does not stop the others')
      t.same(seenB, [], 'B was not told (the same notification reached every subscriber of A)')
      t.equal(subscriberFailures(), 2)

      unsubscribeA()
      unsubscribeA()
      await client.transaction((tx) => notifyStatus(tx, idA))
      await waitFor('second delivery', () => seenA2.length === 2)
      t.same(seenA, [idA], 'an unsubscribed callback is not called')
      unsubscribeA2()
      unsubscribeB()
      t.equal(events.subscriberCount(), 2, 'only the two failing subscribers remain')

      await t.rejects(notifyStatus(client, 'not-an-id'), RangeError)
      t.throws(() => events.subscribe('0x12', () => undefined), RangeError)
      await client.query('SELECT pg_notify($1, $2)', [STATUS_CHANNEL, 'garbage'])
      // A notification after the garbage still arrives: it was dropped without harm.
      const afterGarbage: string[] = []
      events.subscribe(idB, (id) => {
        afterGarbage.push(id)
      })
      await client.transaction((tx) => notifyStatus(tx, idB))
      await waitFor('a notification after the garbage', () => afterGarbage.length === 1)
      t.same(seenB, [], 'B stays unsubscribed')

      await events.close()
      t.equal(events.subscriberCount(), 0, 'close drops every subscriber')
      t.throws(() => events.subscribe(idA, () => undefined), /closed/)
    })

    t.test(
      'StatusCache: a poll reads once, an announced change evicts, a racing read is not kept',
      async (t) => {
        const events = await StatusEvents.open(client)
        t.teardown(() => events.close())
        const cache = new StatusCache()
        const unfollow = cache.follow(events)
        t.teardown(unfollow)
        const lifecycle = new LifecycleStore(store, Date.now)
        const request = await store.insertRequest({
          id: randomId(),
          originChainId: 31337,
          destinationChainId: 31338,
          userAddress: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
          recipient: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
          refundTo: '0x03508bB71268BBA25ECaCC8F620e01866650532c',
          originCurrency: '0x0000000000000000000000000000000000000000',
          destinationCurrency: '0x0000000000000000000000000000000000000000',
          tradeType: 'EXACT_INPUT',
          amountIn: 1000n,
          amountOut: 900n,
          minimumAmountOut: 900n,
          quote: {},
          expiresAt: Date.now() + 600_000,
        })
        let reads = 0
        const read = async () => {
          reads++
          const stored = await store.getRequest(request.id)
          return stored ? store.toStatusRecord(stored) : undefined
        }
        t.equal((await cache.get(request.id, read))?.status, 'waiting')
        t.equal((await cache.get(request.id, read))?.status, 'waiting')
        t.equal(reads, 1, 'the second poll came from memory')

        await lifecycle.transition(request.id, { to: 'pending', inTxHash: randomId() })
        await waitFor(
          'the change to evict the record',
          async () => (await cache.get(request.id, read))?.status === 'pending',
        )
        t.equal(reads, 2, 'read again once, after the announcement')

        // A read that started before an eviction must not store what it read.
        let release: () => void = () => {}
        const slow = cache.get(request.id, async () => {
          await new Promise<void>((resolve) => {
            release = resolve
          })
          return { ...(await read()), status: 'waiting' } as Awaited<ReturnType<typeof read>>
        })
        cache.evict()
        await new Promise((resolve) => setTimeout(resolve, 0))
        release()
        await slow
        t.equal((await cache.get(request.id, read))?.status, 'pending', 'the stale read was not kept')

        t.equal(await cache.get(randomId(), async () => undefined), undefined, 'unknown ids are not cached')
        unfollow()
        // Another follower of the same events: once it hears of the change, the cache would have too.
        const heard: string[] = []
        events.subscribe(request.id, (id) => {
          heard.push(id)
        })
        await lifecycle.transition(request.id, { to: 'submitted', txHash: randomId() })
        await waitFor('the change to be announced', () => heard.length === 1)
        t.equal((await cache.get(request.id, read))?.status, 'pending', 'no longer following')
      },
    )

    if (backend !== postgres) return
    const admin = db.admin!
    const another = db.another!

    t.test('postgres: a change notified through one store reaches the other process', async (t) => {
      const other = await another()
      const events = await StatusEvents.open(other.client)
      t.teardown(() => events.close())
      const id = randomId()
      const seen: string[] = []
      events.subscribe(id, (changed) => {
        seen.push(changed)
      })
      await store.client.transaction((tx) => notifyStatus(tx, id))
      await waitFor('cross-process delivery', () => seen.length === 1)
      t.same(seen, [id])
    })

    t.test('postgres: the listener reconnects after its backend is killed', async (t) => {
      const own = await createPgClient({
        databaseUrl: TEST_DATABASE_URL,
        schema: store.client.schema,
        listenBackoffMs: { min: 50, max: 500 },
      })
      t.teardown(() => own.close())
      const received: string[] = []
      let reconnects = 0
      const unlisten = await own.listen('pontis_test_reconnect', (payload) => received.push(payload), {
        onReconnect: () => reconnects++,
      })
      const pids = await listenerPids(admin, own.schema)
      t.equal(pids.length, 1, 'one dedicated LISTEN connection')
      await admin.query('SELECT pg_terminate_backend($1)', [pids[0]])
      await waitFor('the reconnect', async () => reconnects === 1)
      const after = await listenerPids(admin, own.schema)
      t.equal(after.length, 1)
      t.not(after[0], pids[0], 'a new backend')
      await store.client.query("SELECT pg_notify('pontis_test_reconnect', 'after')")
      await waitFor('delivery after the reconnect', () => received.length === 1)
      t.same(received, ['after'])
      await unlisten()
      await waitFor(
        'the connection to be released',
        async () => (await listenerPids(admin, own.schema)).length === 0,
      )
    })

    t.test('postgres: StatusEvents resynchronises subscribers after a reconnect', async (t) => {
      const { logger, lines } = recordingLogger()
      const own = await createPgClient({
        databaseUrl: TEST_DATABASE_URL,
        schema: store.client.schema,
        logger,
        listenBackoffMs: { min: 50, max: 500 },
      })
      t.teardown(() => own.close())
      const events = await StatusEvents.open(own)
      t.teardown(() => events.close())
      const id = randomId()
      const seen: string[] = []
      events.subscribe(id, (changed) => {
        seen.push(changed)
      })
      let gaps = 0
      events.subscribeAll(
        () => undefined,
        () => {
          gaps++
        },
      )
      const [pid] = await listenerPids(admin, own.schema)
      await admin.query('SELECT pg_terminate_backend($1)', [pid])
      await waitFor('the resync call', () => seen.length === 1)
      t.same(seen, [id], 'told to re-read after notifications may have been lost')
      t.equal(gaps, 1, 'caches following everything are told of the gap')
      t.ok(lines.some((line) => line.message === 'PostgreSQL LISTEN connection lost; reconnecting'))
      t.ok(lines.some((line) => line.message === 'PostgreSQL LISTEN connection re-opened'))
      await store.client.transaction((tx) => notifyStatus(tx, id))
      await waitFor('delivery after the reconnect', () => seen.length === 2)
    })

    t.test('postgres: the LISTEN connection retries while the database refuses it', async (t) => {
      // A listener whose connections fail after the first: the initial LISTEN works, then the
      // backend is killed and every reconnect attempt is refused until the role may log in again.
      const role = `pontis_test_${randomBytes(4).toString('hex')}`
      await admin.query(`CREATE ROLE ${role} LOGIN`)
      t.teardown(async () => {
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role])
        await admin.query(`DROP ROLE IF EXISTS ${role}`)
      })
      const url = new URL(TEST_DATABASE_URL)
      url.username = role
      url.password = ''
      const { logger, lines } = recordingLogger()
      const own = await createPgClient({
        databaseUrl: url.toString(),
        schema: store.client.schema,
        logger,
        listenBackoffMs: { min: 20, max: 100 },
      })
      t.teardown(() => own.close())
      const received: string[] = []
      let reconnects = 0
      await own.listen('pontis_test_retry', (payload) => received.push(payload), {
        onReconnect: () => reconnects++,
      })
      await admin.query(`ALTER ROLE ${role} NOLOGIN`)
      const [pid] = await listenerPids(admin, own.schema)
      await admin.query('SELECT pg_terminate_backend($1)', [pid])
      await waitFor('failed attempts', () =>
        lines.some((line) => line.message === 're-opening the PostgreSQL LISTEN connection failed'),
      )
      t.equal(reconnects, 0)
      await admin.query(`ALTER ROLE ${role} LOGIN`)
      await waitFor('the reconnect', () => reconnects === 1)
      await store.client.query("SELECT pg_notify('pontis_test_retry', 'back')")
      await waitFor('delivery', () => received.length === 1)
    })

    t.test('postgres: listen on a closed client is refused', async (t) => {
      const own = await createPgClient({ databaseUrl: TEST_DATABASE_URL, schema: store.client.schema })
      const unlisten = await own.listen('pontis_test_closed', () => undefined)
      await own.close()
      await unlisten()
      await t.rejects(
        own.listen('pontis_test_closed', () => undefined),
        /closed/,
      )
      t.same(await listenerPids(admin, own.schema), [], 'close released the LISTEN connection')
    })
  })
}
