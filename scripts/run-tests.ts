/**
 * Runs the tap suite and ends with the line CI reads: `N passed, N failed` (plus skipped/todo).
 * Every leaf test point counts once; a test file that dies before reporting (syntax error, crash,
 * "no tests found") counts as a failure, so nothing broken can pass silently.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Parser, type Result } from 'tap-parser'
import { SNAPSHOT_DIR_VARIABLE } from '../packages/intents/src/store/memory-snapshots.js'

type CoverageMetric = 'lines' | 'statements' | 'functions' | 'branches'
const COVERAGE_SUMMARY = '.tap/report/coverage-summary.json'

/** tap 21 only knows "100% or allowed incomplete"; the thresholds we hold ourselves to live in package.json. */
function coverageFailures(): string[] {
  const thresholds = (
    JSON.parse(readFileSync('package.json', 'utf8')) as {
      pontis: { coverageThresholds: Record<CoverageMetric, number> }
    }
  ).pontis.coverageThresholds
  if (!existsSync(COVERAGE_SUMMARY)) return [`no coverage summary at ${COVERAGE_SUMMARY}`]
  const summary = JSON.parse(readFileSync(COVERAGE_SUMMARY, 'utf8')) as {
    total: Record<CoverageMetric, { pct: number }>
  }
  const problems: string[] = []
  for (const [metric, minimum] of Object.entries(thresholds) as Array<[CoverageMetric, number]>) {
    const actual = summary.total[metric].pct
    if (actual < minimum)
      problems.push(`coverage of ${metric} is ${actual}%, below the ${minimum}% threshold`)
  }
  return problems
}

const args = ['tap', '-R', 'tap', ...process.argv.slice(2)]
const child = spawn('npx', args, {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: {
    ...process.env,
    FORCE_COLOR: '0',
    // Every process the suite starts opens its in-memory stores from one migrated snapshot.
    [SNAPSHOT_DIR_VARIABLE]: process.env[SNAPSHOT_DIR_VARIABLE] ?? resolve('.tap', 'pglite-snapshots'),
  },
})

let passed = 0
let failed = 0
let skipped = 0
let todo = 0
const failures: string[] = []

function count(result: Result, path: string[]): void {
  const name = [...path, result.name].filter(Boolean).join(' > ')
  if (result.skip) skipped++
  else if (result.todo) todo++
  else if (result.ok) passed++
  else {
    failed++
    failures.push(name)
  }
}

/** Follows subtests: a parent's own point only counts when it failed with no failing child (a crash). */
function watch(parser: Parser, path: string[]): void {
  const childFailures = 0
  let pendingChild: { failures: () => number } | undefined
  parser.on('child', (childParser: Parser) => {
    const state = { count: 0 }
    childParser.on('assert', (result: Result) => {
      if (!result.ok && !result.skip && !result.todo) state.count++
    })
    pendingChild = { failures: () => state.count }
    watch(childParser, [...path, childParser.name])
  })
  parser.on('assert', (result: Result) => {
    if (pendingChild) {
      // The summary point of a subtest: its leaves were already counted.
      const nestedFailures = pendingChild?.failures() ?? 0
      pendingChild = undefined
      if (!result.ok && !result.skip && !result.todo && nestedFailures === 0 && childFailures === 0) {
        failed++
        failures.push(
          `${[...path, result.name].join(' > ')} (the test file failed without a failing assertion: crashed or found no tests)`,
        )
      }
      return
    }
    count(result, path)
  })
  parser.on('bailout', (reason: string) => {
    failed++
    failures.push(`bail out: ${reason}`)
  })
}

const parser = new Parser()
watch(parser, [])
child.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk)
  parser.write(chunk)
})
child.on('close', (code) => {
  parser.end()
  const wholeSuite =
    process.argv.slice(2).every((arg) => arg.startsWith('-')) && !process.argv.includes('--disable-coverage')
  if (wholeSuite) {
    for (const problem of coverageFailures()) {
      failed++
      failures.push(problem)
    }
  }
  if (code !== 0 && failed === 0) {
    failed++
    failures.push(`tap exited with code ${code} (coverage threshold or runner failure; see above)`)
  }
  if (failures.length > 0) {
    console.log('\nFailures:')
    for (const failure of failures) console.log(`  - ${failure}`)
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped${todo ? `, ${todo} todo` : ''}`)
  process.exit(failed > 0 ? 1 : 0)
})
