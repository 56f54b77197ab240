/**
 * The soak run of scripts/soak.ts, small: 30 requests across three families (EVM <-> EVM,
 * EVM <-> SVM, EVM <-> Bitcoin, both ways; app fees and deposit addresses among them), the intent
 * service as its own process on PostgreSQL, SIGKILLed once halfway and restarted on the same store.
 * Every invariant the script checks must hold: each request ends in success or a catalogued refusal,
 * no quote issued that could not be filled, every fill repaid exactly once, depositories holding only
 * the unclaimed app fees, then nothing after the claims, the solver's balances exact from the ledger
 * and the receipts, the app-fee ledger equal to the fees charged, every answer conforming to the
 * document. (Balances inside their bands are not checked: the soak starts no other intent API to
 * execute rebalancing moves at, and the report says so.)
 */
import t from 'tap'
import { formatReport, runSoak } from '../scripts/soak.js'

// A devnet with four chains and two service start-ups, then 30 user executions: on a busy 2-core
// machine this takes minutes, not seconds.
t.setTimeout(600_000)

t.test('30 requests across three families with a SIGKILL halfway: the books close', async (t) => {
  const report = await runSoak({ requests: 30, killAt: 15 })
  t.comment(formatReport(report))
  t.equal(report.killedAt, 15, 'the service was killed once, halfway, and restarted')
  t.equal(report.results.length, 30, 'every request ended')
  for (const family of ['svm', 'btc', 'evm-b']) {
    t.ok(
      Object.entries(report.byRoute).some(
        ([route, counts]) => route.startsWith(family) && (counts.success ?? 0) > 0,
      ),
      `a request from ${family} succeeded`,
    )
    t.ok(
      Object.entries(report.byRoute).some(
        ([route, counts]) => route.includes(`-> ${family}`) && (counts.success ?? 0) > 0,
      ),
      `a request to ${family} succeeded`,
    )
  }
  t.ok(
    report.results.some((result) => result.depositAddress && result.outcome === 'success'),
    'a deposit-address request succeeded',
  )
  t.ok(Object.keys(report.appFees).length > 0, 'app fees were charged')
  for (const check of report.checks) t.ok(check.ok, `${check.name}: ${check.detail}`)
  t.same(report.violations, [], 'no violation')
  t.equal(report.bandsChecked, false, 'bands are not checked: no other intent API executes moves in the soak')
})

t.test('a band check plugs in, and a balance outside its band is a violation', async (t) => {
  const report = await runSoak({
    requests: 3,
    bands: (balances) => [...balances.keys()].slice(0, 1).map((key) => `${key} outside its band`),
  })
  t.equal(report.bandsChecked, true)
  t.match(report.violations, [/balances end inside their bands: .* outside its band/])
})
