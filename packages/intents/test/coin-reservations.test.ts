/**
 * Coin holds in the store (migration 016), on PGlite and PostgreSQL: what one signing holds another
 * does not get until the hold lapses; a rolled-back signing holds nothing; two stores on one
 * PostgreSQL racing for a coin serialise on it and only one gets it.
 */
import t, { type Test } from 'tap'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import type { RequestStore } from '../src/store/index.js'
import { storeBackends } from './fixtures/store-backends.js'

let clock = 1_700_000_000_000
const now = () => clock
const CHAIN = 8253038
const TTL = 60_000

async function rules(t: Test, store: RequestStore): Promise<void> {
  const lifecycle = new LifecycleStore(store, now)
  const hold = (jobId: number, ids: string[]) =>
    lifecycle.transaction((tx) => lifecycle.coinReservations(tx, CHAIN, jobId).hold(ids, TTL))
  const held = (ids: string[]) =>
    lifecycle.transaction((tx) => lifecycle.coinReservations(tx, CHAIN, 0).held(ids))

  t.ok(await hold(1, ['a:0', 'a:1']), 'free coins are held')
  t.same([...(await held(['a:0', 'a:1', 'b:0']))].sort(), ['a:0', 'a:1'], 'and seen held by anyone')
  t.notOk(await hold(2, ['b:0', 'a:1']), 'one of them is held: nothing is held')
  t.same([...(await held(['b:0']))], [], 'not even the free one')
  t.ok(await hold(1, ['a:1']), 'the job holding a coin may hold it again (signing again)')
  const other = await lifecycle.transaction((tx) =>
    new LifecycleStore(store, now).coinReservations(tx, CHAIN + 1, 3).hold(['a:0'], TTL),
  )
  t.ok(other, 'holds are per chain')
  await t.rejects(
    lifecycle.transaction(async (tx) => {
      await lifecycle.coinReservations(tx, CHAIN, 4).hold(['c:0'], TTL)
      throw new Error('signing failed')
    }),
    /signing failed/,
  )
  t.same([...(await held(['c:0']))], [], 'a rolled-back signing holds nothing')
  clock += TTL + 1
  t.same([...(await held(['a:0', 'a:1']))], [], 'holds lapse after their time')
  t.ok(await hold(5, ['a:0']), 'and the coin can be held again')
}

const backends = storeBackends('coin_holds', now)
for (const backend of Object.values(backends)) {
  t.test(`${backend.name}: coin holds`, async (t) => rules(t, (await backend.open(t)).store))
}

t.test('postgres: two stores racing for one coin, only one holds it', async (t) => {
  const database = await backends.postgres.open(t)
  const first = new LifecycleStore(database.store, now)
  const second = new LifecycleStore(await (database.another as () => Promise<RequestStore>)(), now)
  let release!: () => void
  const committing = new Promise<void>((resolve) => {
    release = resolve
  })
  let firstHeld!: () => void
  const heldByFirst = new Promise<void>((resolve) => {
    firstHeld = resolve
  })
  // The first holds the coin and waits, uncommitted, while the second tries.
  const one = first.transaction(async (tx) => {
    const got = await first.coinReservations(tx, CHAIN, 10).hold(['race:0', 'race:1'], TTL)
    firstHeld()
    await committing
    return got
  })
  await heldByFirst
  const two = second.transaction((tx) =>
    second.coinReservations(tx, CHAIN, 11).hold(['race:1', 'race:2'], TTL),
  )
  release()
  t.same(await Promise.all([one, two]), [true, false], 'the second waits for the first, then finds it held')
  const held = await second.transaction((tx) =>
    second.coinReservations(tx, CHAIN, 0).held(['race:0', 'race:1', 'race:2']),
  )
  t.same([...held].sort(), ['race:0', 'race:1'], 'only the first one’s coins are held')
})
