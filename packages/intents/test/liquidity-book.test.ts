/**
 * The solver's liquidity book on both store backends: twenty concurrent reservations against a
 * balance that covers seven take exactly seven and refuse the rest with INSUFFICIENT_LIQUIDITY (on
 * PostgreSQL from two stores, as two service instances would); a lapsed quote, a fill and a refund
 * give their reservation back, a deposited request keeps it past the quote's expiry.
 */
import { PontisError } from '@pontis/core'
import t from 'tap'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import { LiquidityBook, type LiquidityReservation } from '../src/quote/inventory.js'
import type { RequestStore } from '../src/store/index.js'
import { storeBackends } from './fixtures/store-backends.js'

let clock = 1_700_000_000_000
const now = () => clock
const backends = storeBackends('liquidity', now)
const CHAIN = 31338
const CURRENCY = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const describe = { symbol: 'USDC', decimals: 6, chainName: 'Devnet B' }
const TTL_MS = 30_000

let next = 0
const requestId = () => `0x${(++next).toString(16).padStart(64, '0')}`
const reservation = (balance: bigint, needed: bigint): LiquidityReservation => ({
  requestId: requestId(),
  chainId: CHAIN,
  currency: CURRENCY,
  balance,
  needed,
  expiresAt: clock + TTL_MS,
})

/** Tries every reservation at once; answers the ids taken and the error codes of the rest. */
async function reserveAll(books: readonly LiquidityBook[], reservations: readonly LiquidityReservation[]) {
  const outcomes = await Promise.allSettled(
    reservations.map((one, index) => books[index % books.length]!.reserve(one, describe)),
  )
  const taken = reservations
    .filter((_, index) => outcomes[index]!.status === 'fulfilled')
    .map((one) => one.requestId)
  const refused = outcomes.flatMap((outcome) =>
    outcome.status === 'rejected' ? [(outcome.reason as PontisError).code ?? String(outcome.reason)] : [],
  )
  return { taken, refused }
}

async function insertRequest(store: RequestStore, id: string) {
  await store.insertRequest({
    id,
    originChainId: 31337,
    destinationChainId: CHAIN,
    userAddress: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
    recipient: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
    refundTo: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
    originCurrency: CURRENCY,
    destinationCurrency: CURRENCY,
    tradeType: 'EXACT_OUTPUT',
    amountIn: 100n,
    amountOut: 100n,
    minimumAmountOut: 100n,
    quote: {},
    expiresAt: clock + TTL_MS,
  })
}

for (const backend of [backends.pglite, backends.postgres]) {
  t.test(backend.name, async (t) => {
    const database = await backend.open(t)
    // Two instances on PostgreSQL: each with its own store (own pool); PGlite is one process's.
    const stores = database.another ? [database.store, await database.another()] : [database.store]
    const books = stores.map((store) => new LiquidityBook(store.client, now))
    const [book] = books as [LiquidityBook]
    const lifecycle = new LifecycleStore(database.store, now)

    t.test(
      'twenty concurrent quotes against a balance for seven: seven taken, thirteen refused',
      async (t) => {
        const balance = 7_500_000n
        const { taken, refused } = await reserveAll(
          books,
          Array.from({ length: 20 }, () => reservation(balance, 1_000_000n)),
        )
        t.equal(taken.length, 7, 'exactly the seven that fit')
        t.same(refused, Array(13).fill('INSUFFICIENT_LIQUIDITY'))
        const [position] = await book.positions()
        t.same(position && { ...position, readAt: 0 }, {
          chainId: CHAIN,
          currency: CURRENCY,
          balance,
          committed: 7_000_000n,
          available: 500_000n,
          readAt: 0,
        })
        const refusal = await book.reserve(reservation(balance, 600_000n), describe).catch((error) => error)
        t.ok(refusal instanceof PontisError)
        t.match(refusal.message, /7 USDC of it promised.*0\.5 USDC available, less than the 0\.6 USDC/)
        t.same(refusal.errorData, { available: '500000', required: '600000', committed: '7000000' })
        await t.rejects(
          book.check({ chainId: CHAIN, currency: CURRENCY, balance, needed: 600_000n }, describe),
          {
            code: 'INSUFFICIENT_LIQUIDITY',
          },
        )
        await book.check({ chainId: CHAIN, currency: CURRENCY, balance, needed: 500_000n }, describe)

        // Two deposited, one of them filled and one refunded; four never stored (their quotes lapse).
        const [deposited, filled, refunded, waiting] = taken as [string, string, string, string]
        for (const id of [deposited, filled, refunded, waiting]) await insertRequest(database.store, id)
        for (const id of [deposited, filled, refunded]) await lifecycle.transition(id, { to: 'pending' })
        await lifecycle.transition(filled, { to: 'submitted' })
        await lifecycle.transition(filled, { to: 'success' })
        await lifecycle.transition(refunded, { to: 'refund' })
        t.equal(
          (await book.positions())[0]?.committed,
          5_000_000n,
          'a fill and a refund release theirs at once',
        )

        clock += TTL_MS
        t.equal(
          (await book.positions())[0]?.committed,
          1_000_000n,
          'at expiry only the deposited request still holds its liquidity',
        )
        const again = await reserveAll(
          books,
          Array.from({ length: 20 }, () => reservation(balance, 1_000_000n)),
        )
        t.equal(again.taken.length, 6, 'the lapsed quotes gave theirs back: six fit beside the deposited one')
        const { rows } = await database.store.client.query<{ count: string | number }>(
          'SELECT count(*) AS count FROM liquidity_commitments',
        )
        t.equal(Number(rows[0]?.count), 7, 'lapsed reservations were dropped')
        await lifecycle.transition(deposited, { to: 'submitted' })
        await lifecycle.transition(deposited, { to: 'success' })
        t.equal((await book.positions())[0]?.committed, 6_000_000n, 'the fill released the last one')
        await book.release(again.taken[0]!)
        t.equal(
          (await book.positions())[0]?.committed,
          5_000_000n,
          'release gives a reservation back at once',
        )
      },
    )
  })
}
