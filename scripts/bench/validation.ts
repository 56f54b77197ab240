/**
 * Request validation micro-benchmark: the intent service's own validator of `POST /quote/v2`
 * (`validatorOf` of the app `createApiApp` builds from openapi/intents.yaml: openapi-backend's
 * compiled Ajv 2020 validators, exactly as it serves) validating requests in-process, many times,
 * timed per call. Target: under 50 µs per quote body.
 *
 *   npx tsx scripts/bench/validation.ts                     # 200 000 calls per body
 *   npx tsx scripts/bench/validation.ts --iterations 1000000
 *
 * Exits 1 when a body does not validate (the numbers would time the error path).
 */
import { parseArgs } from 'node:util'
import { silentLogger } from '@pontis/core'
import { createApiApp, loadOpenApiDocument } from '@pontis/http'
import { INTENTS_DOCUMENT_PATH } from '../../packages/intents/src/app.js'
import { QUOTE_BODY } from './targets.js'

/** The target, microseconds per quote body. */
export const TARGET_MICROSECONDS = 50

const ADDRESS = '0x1acffa0e66fbc4405270b0c1eca2dcd3e2bf4b2e'
const CALL = { to: '0x82af49447d8a07e3bd95bd0d56f35241523fbab1', value: '1000', data: '0xd0e30db0' }
const FEE = { recipient: '0x9b0d748fd459a7cbdacdc9ab4438152625391c96', fee: '25' }

/** Quote bodies from small to the largest lists the contract allows. */
export const VALIDATION_BODIES: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  /** The bench's `quote` target: a native bridge. */
  bridge: QUOTE_BODY,
  /** A cross-chain call with one app fee, the options a partner commonly sets. */
  'call+fee': {
    ...QUOTE_BODY,
    recipient: ADDRESS,
    refundTo: ADDRESS,
    txs: [CALL],
    txsGasLimit: 100_000,
    appFees: [FEE],
    referrer: 'partner-app',
    slippageTolerance: '50',
  },
  /** The contract's limits: 32 calls, 10 app fees. */
  'max lists': {
    ...QUOTE_BODY,
    txs: Array.from({ length: 32 }, () => CALL),
    txsGasLimit: 3_000_000,
    appFees: Array.from({ length: 10 }, () => FEE),
  },
}

/** Per-call times of one body. */
export interface ValidationTiming {
  readonly body: string
  readonly bytes: number
  readonly iterations: number
  /** Total time of the timed loop over iterations. */
  readonly meanMicroseconds: number
  /** From individually timed calls (each includes about 0.05 µs of timer overhead). */
  readonly p50Microseconds: number
  readonly p99Microseconds: number
  /** JSON.parse of the raw body plus validation, as the router does per request, mean. */
  readonly parseAndValidateMeanMicroseconds: number
}

const log = (message: string) => process.stderr.write(`${message}\n`)

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { iterations: { type: 'string' } }, strict: true })
  const iterations = Number(values.iterations ?? 200_000)
  if (!Number.isSafeInteger(iterations) || iterations < 1000) throw new Error('--iterations must be >= 1000')

  const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
  const app = await createApiApp({ loaded, handlers: {}, logger: silentLogger })
  const validate = app.validatorOf('getQuoteV2')
  const headers = {
    host: '127.0.0.1:4000',
    'content-type': 'application/json',
    'user-agent': 'pontis-bench',
    accept: '*/*',
  }
  const request = (body: unknown) => ({ query: {}, params: {}, headers, body })

  const timings: ValidationTiming[] = []
  for (const [name, body] of Object.entries(VALIDATION_BODIES)) {
    const first = validate(request(body))
    if (!first.valid) {
      log(`${name}: the body does not validate: ${JSON.stringify(first.errors)}`)
      return 1
    }
    const raw = JSON.stringify(body)
    // Warm-up: let V8 optimise the compiled validators.
    for (let i = 0; i < 20_000; i++) validate(request(body))

    let invalid = 0
    const started = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) if (!validate(request(body)).valid) invalid++
    const meanMicroseconds = Number(process.hrtime.bigint() - started) / 1000 / iterations

    const sampled = Math.min(iterations, 50_000)
    const samples = new Float64Array(sampled)
    for (let i = 0; i < sampled; i++) {
      const before = process.hrtime.bigint()
      if (!validate(request(body)).valid) invalid++
      samples[i] = Number(process.hrtime.bigint() - before) / 1000
    }
    samples.sort()

    const parseStarted = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) if (!validate(request(JSON.parse(raw))).valid) invalid++
    const parseAndValidate = Number(process.hrtime.bigint() - parseStarted) / 1000 / iterations
    if (invalid > 0) {
      log(`${name}: ${invalid} calls did not validate`)
      return 1
    }
    timings.push({
      body: name,
      bytes: Buffer.byteLength(raw),
      iterations,
      meanMicroseconds,
      p50Microseconds: samples[Math.floor(sampled * 0.5)]!,
      p99Microseconds: samples[Math.floor(sampled * 0.99)]!,
      parseAndValidateMeanMicroseconds: parseAndValidate,
    })
  }

  console.log(
    `\nopenapi-backend's compiled Ajv validation of POST /quote/v2, Node ${process.version}, ${iterations} calls per body ` +
      `after 20 000 warm-up calls; target < ${TARGET_MICROSECONDS} µs\n`,
  )
  const header = ['body', 'bytes', 'mean µs', 'p50 µs', 'p99 µs', 'parse+validate µs', 'target']
  const rows = timings.map((t) => [
    t.body,
    String(t.bytes),
    t.meanMicroseconds.toFixed(2),
    t.p50Microseconds.toFixed(2),
    t.p99Microseconds.toFixed(2),
    t.parseAndValidateMeanMicroseconds.toFixed(2),
    t.meanMicroseconds < TARGET_MICROSECONDS ? 'met' : 'missed',
  ])
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)))
  for (const row of [header, ...rows])
    console.log(
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
    )
  console.log(`\n${JSON.stringify({ node: process.version, timings })}`)
  return 0
}

process.exit(await main())
