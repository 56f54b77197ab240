/**
 * `npm run fuzz`: the spec fuzz suite of test/fuzz with a large budget and a random seed.
 *
 *   tsx scripts/fuzz.ts [--seed <n>] [--runs <n>] [--service intents|oracle]
 *
 * Starts each service in-process on a devnet, sends `runs` generated valid and `runs` mutated
 * requests to every operation and prints every failing case with the request to replay it. The
 * seed is printed first, so a failing run can be repeated with `--seed`. Exits 1 on any failure.
 */
import { parseArgs } from 'node:util'
import {
  type FuzzBudget,
  type FuzzTarget,
  fuzzOperation,
  startIntentsTarget,
  startOracleTarget,
} from '../test/fuzz/fixtures/fuzz.js'

const DEFAULT_RUNS = 500

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    runs: { type: 'string' },
    service: { type: 'string' },
  },
})
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31)
const runs = values.runs !== undefined ? Number(values.runs) : DEFAULT_RUNS
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(runs) || runs < 1) {
  console.error(
    'usage: tsx scripts/fuzz.ts [--seed <integer>] [--runs <positive integer>] [--service intents|oracle]',
  )
  process.exit(2)
}
const services = values.service === undefined ? ['intents', 'oracle'] : [values.service]
if (!services.every((service) => service === 'intents' || service === 'oracle')) {
  console.error(`unknown service "${values.service}"; use intents or oracle`)
  process.exit(2)
}

const budget: FuzzBudget = { seed, runs }
console.log(
  `fuzzing ${services.join(' and ')} with seed ${seed}, ${runs} valid and ${runs} mutated requests per operation`,
)
let failed = 0
for (const service of services) {
  const target: FuzzTarget = service === 'intents' ? await startIntentsTarget() : await startOracleTarget()
  try {
    for (const operation of target.operations) {
      const started = Date.now()
      try {
        await fuzzOperation(target, operation, budget)
        console.log(`✓ ${service} ${operation.operationId} (${Date.now() - started} ms)`)
      } catch (error) {
        failed++
        console.log(`✗ ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  } finally {
    await target.close()
  }
}
console.log(failed === 0 ? `no failures (seed ${seed})` : `${failed} operations failed (seed ${seed})`)
process.exit(failed === 0 ? 0 : 1)
