/**
 * The app-fee ledger on both store backends: a fill's fees recorded twice count once; two claims of
 * one balance authorized at once (on PostgreSQL from two stores, as two instances would) pay it
 * once and refuse the other with INSUFFICIENT_FUNDS; an expired offer cannot be authorized; a failed
 * payout gives the amount back, a paid one does not.
 */
import type { PontisError } from '@pontis/core'
import t from 'tap'
import { AppFeeLedger, accrueAppFees, CLAIM_OFFER_TTL_MS } from '../src/app-fees/ledger.js'
import type { RequestStore, SqlClient } from '../src/store/index.js'
import { storeBackends } from './fixtures/store-backends.js'

let clock = 1_700_000_000_000
const now = () => clock
const backends = storeBackends('app_fee_ledger', now)
const CHAIN = 31337
const NATIVE = '0x0000000000000000000000000000000000000000'
const APP = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const OTHER_APP = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'

let next = 0
async function filledRequest(
  store: RequestStore,
  fees: ReadonlyArray<{ recipient: string; amount: string }>,
) {
  const id = `0x${(++next).toString(16).padStart(64, '0')}`
  return store.insertRequest({
    id,
    originChainId: CHAIN,
    destinationChainId: 31338,
    userAddress: APP,
    recipient: APP,
    refundTo: APP,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    tradeType: 'EXACT_INPUT',
    amountIn: 1000n,
    amountOut: 900n,
    minimumAmountOut: 900n,
    quote: { order: { fees } },
    expiresAt: clock + 60_000,
  })
}

const noPayout = async (_tx: SqlClient) => undefined

for (const backend of [backends.pglite, backends.postgres]) {
  t.test(backend.name, async (t) => {
    const database = await backend.open(t)
    const stores = database.another ? [database.store, await database.another()] : [database.store]
    const ledgers = stores.map((store) => new AppFeeLedger(store.client, now))
    const [ledger] = ledgers as [AppFeeLedger]

    t.test('fees recorded twice count once', async (t) => {
      const request = await filledRequest(database.store, [
        { recipient: APP, amount: '30' },
        { recipient: OTHER_APP, amount: '12' },
        { recipient: APP, amount: '0' },
      ])
      const record = () => database.store.client.transaction((tx) => accrueAppFees(tx, request, clock))
      t.equal(await record(), 2, 'two fees, the zero one left out')
      t.equal(await record(), 0, 'a second write (a re-run after a crash) records nothing')
      t.same(await ledger.balances(APP.toLowerCase()), [{ chainId: CHAIN, currency: NATIVE, amount: 30n }])
      t.same(await ledger.balances(OTHER_APP), [{ chainId: CHAIN, currency: NATIVE, amount: 12n }])
    })

    t.test('two claims of one balance authorized at once: one pays, the other is refused', async (t) => {
      const offer = { wallet: APP, recipient: APP, chainId: CHAIN, currency: NATIVE }
      const claims = await Promise.all([ledger.offer(offer), ledger.offer(offer)])
      t.same(
        claims.map((claim) => claim.amount),
        [30n, 30n],
        'both offers name the whole balance: nothing is taken before a signature',
      )
      let payouts = 0
      const outcomes = await Promise.allSettled(
        claims.map((claim, index) =>
          ledgers[index % ledgers.length]!.authorize(claim.id, async () => {
            payouts++
          }),
        ),
      )
      t.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1, 'one claim authorized')
      const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult
      t.equal((refused.reason as PontisError).code, 'INSUFFICIENT_FUNDS')
      t.equal(payouts, 1, 'one payout queued')
      t.same(await ledger.balances(APP), [])
      const taken = claims.find((_, index) => outcomes[index]!.status === 'fulfilled')!
      t.equal(
        (await ledger.authorize(taken.id, noPayout)).state,
        'authorized',
        'the same claim again: as it stands',
      )
      t.equal(payouts, 1, 'and no second payout')

      await ledger.settle(taken.id, 'failed', null)
      t.same(
        await ledger.balances(APP),
        [{ chainId: CHAIN, currency: NATIVE, amount: 30n }],
        'a failed payout gives it back',
      )
      const again = await ledger.offer({ ...offer, amount: 10n })
      await ledger.authorize(again.id, noPayout)
      await ledger.settle(again.id, 'paid', '0xabc')
      t.same(
        await ledger.balances(APP),
        [{ chainId: CHAIN, currency: NATIVE, amount: 20n }],
        'a paid one does not',
      )
      await t.rejects(
        ledger.offer({ ...offer, amount: 21n }),
        { code: 'INSUFFICIENT_FUNDS' },
        'no more than the balance',
      )
    })

    t.test('an offer past its expiry cannot be authorized', async (t) => {
      const claim = await ledger.offer({
        wallet: OTHER_APP,
        recipient: OTHER_APP,
        chainId: CHAIN,
        currency: NATIVE,
      })
      clock += CLAIM_OFFER_TTL_MS + 1
      await t.rejects(ledger.authorize(claim.id, noPayout), { code: 'SIGNATURE_EXPIRED' })
      t.same(await ledger.balances(OTHER_APP), [{ chainId: CHAIN, currency: NATIVE, amount: 12n }])
      await t.rejects(ledger.authorize('clm_unknown', noPayout), { code: 'ROUTE_NOT_FOUND' })
    })
  })
}
