/**
 * A stopping solver claims nothing more and gives back the leases it holds, so another instance
 * takes the jobs at once instead of after the lease runs out (PGlite).
 */
import { createRegistry, silentLogger } from '@pontis/core'
import t from 'tap'
import { LifecycleStore } from '../src/lifecycle/lifecycle-store.js'
import { Solver } from '../src/lifecycle/solver.js'
import { openRequestStore } from '../src/store/index.js'

const clock = 1_700_000_000_000
const store = await openRequestStore({ now: () => clock })
const lifecycle = new LifecycleStore(store, () => clock)
t.teardown(() => store.close())

const solver = new Solver({
  registry: createRegistry(),
  lifecycle,
  logger: silentLogger,
  owner: 'stopping-worker',
  now: () => clock,
  credentials: () => {
    throw new Error('no job is worked in this test')
  },
})

t.test('a stopped solver releases its leases for the next worker at once', async (t) => {
  const jobs = ['a', 'b'].map((key) => ({
    jobKey: `orphan_refund:${key}`,
    requestId: null,
    kind: 'orphan_refund' as const,
    chainId: 31337,
    payload: {},
  }))
  for (const job of jobs) t.ok(await lifecycle.enqueue(job))
  // The pass in progress when SIGTERM came had claimed both.
  t.equal((await lifecycle.claimJobs('stopping-worker', 60_000, 10)).length, 2)
  t.same(await lifecycle.claimJobs('other-worker', 60_000, 10), [], 'leased: nobody else may take them')

  solver.stop()
  t.equal(await solver.tick(), 0, 'a stopped solver claims nothing')
  t.equal(await solver.releaseLeases(), 2, 'both leases given back')
  const taken = await lifecycle.claimJobs('other-worker', 60_000, 10)
  t.same(
    taken.map((job) => job.jobKey).sort(),
    jobs.map((job) => job.jobKey),
    'the next worker takes them without waiting for the lease to run out',
  )
  t.equal(await solver.releaseLeases(), 0, "another worker's leases are never released")
})
