/**
 * The soak run of scripts/soak.ts, small: 30 requests across three families (EVM <-> EVM,
 * EVM <-> SVM, EVM <-> Bitcoin, both ways; app fees and deposit addresses among them), the intent
 * service as its own process on PostgreSQL, SIGKILLed once halfway and restarted on the same store,
 * with USDC bands on both EVM chains and the SVM chain, whose moves are executed at a second intent
 * service (the market): chain B starts short and is filled out of the SVM chain. Every invariant the
 * script checks must hold: each request ends in success or a catalogued refusal, no quote issued
 * that could not be filled, every fill repaid exactly once, depositories holding only the unclaimed
 * app fees, then nothing after the claims, every rebalancing move done, the solver's balances exact
 * from the ledger, the moves and the receipts and inside their bands, the app-fee ledger equal to
 * the fees charged, every answer conforming to the document. Then a band the rebalancer may not
 * fill (no budget) is found outside at the end.
 */
import { STABLECOIN_ADDRESS, SVM_DEVNET_CHAIN_ID } from '@pontis/devnet'
import t from 'tap'
import { formatReport, runSoak, SOAK_BANDS, SOAK_SOLVER_START } from '../scripts/soak.js'

// A devnet with four chains, a second intent service and two service start-ups, then 30 user
// executions: on a busy 2-core machine this takes minutes, not seconds.
t.setTimeout(900_000)

const EVM_B = 31338

t.test(
  '30 requests across three families with a SIGKILL halfway: the books close, the bands hold',
  async (t) => {
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
    const into = report.moves.filter((move) => move.toChainId === EVM_B)
    t.ok(into.length > 0, 'USDC was moved into chain B, which started below its band')
    t.ok(
      into.every((move) => move.state === 'done' && BigInt(move.received ?? 0) > 0n),
      'each move arrived',
    )
    t.ok(
      into.some((move) => move.fromChainId === SVM_DEVNET_CHAIN_ID),
      'out of the SVM chain, the donor with the most above its target',
    )
    for (const check of report.checks) t.ok(check.ok, `${check.name}: ${check.detail}`)
    t.ok(
      report.checks.some((check) => check.name === 'the solver balances end inside their bands'),
      'the bands were checked',
    )
    t.same(report.violations, [], 'no violation')
  },
)

t.test('a band the rebalancer may not fill ends outside, and that is a violation', async (t) => {
  const report = await runSoak({
    requests: 3,
    bands: SOAK_BANDS.map((band) => (band.chainId === EVM_B ? { ...band, rebalanceBudget: 0n } : band)),
  })
  t.same(report.moves, [], 'no move: the band has no budget')
  t.match(
    report.bands.find((band) => band.chainId === EVM_B && band.currency === STABLECOIN_ADDRESS),
    { status: 'budget_exhausted' },
    'the rebalancer says why',
  )
  t.match(report.violations, [
    new RegExp(
      `balances end inside their bands: ${EVM_B}:${STABLECOIN_ADDRESS.toLowerCase()} holds \\d+, below its minimum ${SOAK_SOLVER_START.stablecoin + 1_000_000n}`,
    ),
  ])
  t.equal(report.violations.length, 1, 'the only violation')
})
