/**
 * Spec fuzzing of the intent service in-process on the devnet: generated valid requests and mutated
 * ones (wrong types, missing or extra members, out-of-range numbers, huge strings, bad JSON and
 * media types) for every operation. No 5xx, every answer conforms to openapi/intents.yaml, every
 * 4xx carries a catalogued errorCode. Fixed seed and small budget here; `scripts/fuzz.ts` runs
 * the same properties longer with a random seed.
 */
import t from 'tap'
import { FUZZ_CI_BUDGET, fuzzOperation, startIntentsTarget } from './fixtures/fuzz.js'

const target = await startIntentsTarget()
t.teardown(() => target.close())

t.ok(target.operations.length > 0, 'the document has operations')
for (const operation of target.operations) {
  t.test(`${operation.operationId} (${operation.method} ${operation.path})`, async (t) => {
    await fuzzOperation(target, operation, FUZZ_CI_BUDGET)
    t.pass('every generated and mutated request was answered as the document says')
  })
}
