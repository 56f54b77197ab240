/**
 * The conformance suite itself: a plugin that keeps the contract passes every check (all
 * capabilities, over the toy's in-memory ledger), and each breach of the contract is caught and
 * named. The breaches run in a child process, since their tap output must fail.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { nodeScriptArguments } from '@pontis/core'
import { loadOpenApiDocument } from '@pontis/http'
import t from 'tap'
import {
  createStepItemValidator,
  INTENTS_OPENAPI_PATH,
  loadStepItemValidator,
  runPluginConformance,
} from '../src/index.js'
import { createToyPlugin, TOY_DEFECTS, type ToyDefect, toyFixtures } from './fixtures/toy-plugin.js'

const run = promisify(execFile)
// The whole suite in process, then once per defect in a child: ~50 s alone, past tap's 120 s on a busy machine.
t.setTimeout(300_000)

t.test('the step item validator checks data against StepItemData', async (t) => {
  const validate = await loadStepItemValidator()
  const evm = {
    format: 'evm-transaction',
    to: `0x${'11'.repeat(20)}`,
    data: '0x',
    value: '0',
    chainId: 1,
  }
  t.same(validate(evm), [], 'an EVM transaction conforms')
  t.match(validate({ ...evm, value: 5 }), [/data \(format evm-transaction\)\/value must be string/])
  t.match(validate({ format: 'bitcoin-psbt', chainId: 8253038 }), [/must have required property 'psbt'/])
  t.match(validate({ format: 'nope' }), [/data/], 'an unknown format does not conform')
  t.match(validate({ ...evm, value: 10n }), [/not JSON-serializable/], 'bigints cannot be served')
  const { document } = await loadOpenApiDocument(INTENTS_OPENAPI_PATH)
  t.throws(
    () => createStepItemValidator({ ...document, components: { schemas: {} } }),
    /has no components.schemas.StepItemData/,
  )
})

const toy = createToyPlugin()
await runPluginConformance(t, toy.plugin, {
  ...toyFixtures(toy.ledger),
  context: { environment: 'testnet' },
})

/** The check each defect must fail, as the suite names it. */
const EXPECTED_FAILURES: Record<ToyDefect, RegExp> = {
  'core-api': /not ok \d+ - coreApi '\^2\.0\.0' includes this core's API/,
  'recipient-code': /not ok \d+ - address ".*" as recipient: code INVALID_RECIPIENT/,
  'unstable-normalize': /not ok \d+ - address ".*": normalizing is idempotent/,
  finality: /not ok \d+ - slowConfirmations 3 is an integer >= fast/,
  'step-shape': /not ok \d+ - step 0 \(deposit\) item 0: data is a valid StepItemData/,
  'size-mismatch': /not ok \d+ - step 0 \(deposit\) size: item size agrees/,
  'negative-cost': /not ok \d+ - estimateOriginCost: amount -5000 is not negative/,
  'read-back': /not ok \d+ - the devnet deposit reads back as the expected facts/,
  'missing-filling-fixture': /not ok \d+ - the adapter declares filling: give fixtures.filling/,
  'unexecutable-step':
    /not ok \d+ - step 0 \(deposit\) item 0: cannot be executed: the toy ledger rejects the transaction/,
}

t.test('each breach of the contract fails the suite, naming the check', async (t) => {
  const runner = fileURLToPath(new URL('./fixtures/run-defects.ts', import.meta.url))
  const failure = await run(process.execPath, nodeScriptArguments(runner)).then(
    () => undefined,
    (error: { code?: number; stdout?: string }) => error,
  )
  t.equal(failure?.code, 1, 'the run fails')
  const output = failure?.stdout ?? ''
  // Split the output into the top-level subtest of each defect.
  const sections = output.split(/^# Subtest: plugin conformance: /m).slice(1)
  t.equal(sections.length, TOY_DEFECTS.length, 'one suite per defect')
  for (const defect of TOY_DEFECTS) {
    const section = sections.find((text) => text.startsWith(`@pontis/plugin-toy-${defect} `)) ?? ''
    t.match(section, EXPECTED_FAILURES[defect], `${defect}: caught`)
    t.match(section, /^not ok \d+ - plugin conformance/m, `${defect}: its suite fails`)
  }
})
