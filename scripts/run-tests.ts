/**
 * Runs the test suite and ends with the line CI reads: `N passed, N failed, N skipped` (plus todo).
 *
 * The TypeScript is compiled ahead into `.build/` (scripts/test-build.ts) and every test file runs
 * as a plain Node process with no loader, `jobs` at a time. Each file's TAP is counted point by
 * point; a file that dies before reporting (syntax error, crash, "no tests found", timeout) counts
 * as a failure, so nothing broken can pass silently. V8 writes coverage for every process the
 * files start, and c8 maps it back onto the `.ts` sources through the compiled files' source maps.
 *
 * Arguments: test files or folders (default: the whole suite, as package.json's `tap.include` and
 * `tap.exclude` say), `--disable-coverage`, `--coverage` (a report for part of the suite too; the
 * thresholds only hold the whole suite), `--jobs=N`, `--grep=PATTERN` (tap's, for each file).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Report } from 'c8'
import { minimatch } from 'minimatch'
import { Parser, type Result } from 'tap-parser'
import { SNAPSHOT_DIR_VARIABLE } from '../packages/intents/src/store/memory-snapshots.js'
import {
  BUILD_DIR_NAME,
  BUILD_ROOT,
  buildTests,
  compiledName,
  REPO_ROOT,
  repositoryFiles,
} from './test-build.js'

type CoverageMetric = 'lines' | 'statements' | 'functions' | 'branches'

interface ProjectConfig {
  tap: {
    include: string[]
    exclude: string[]
    'coverage-exclude': string[]
    timeout: number
    jobs: number
  }
  pontis: { coverageThresholds: Record<CoverageMetric, number> }
}

const config = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as ProjectConfig
const COVERAGE_DIR = join(REPO_ROOT, '.tap', 'coverage')
const BUILD_URL = pathToFileURL(`${BUILD_ROOT}/`).href
const REPORT_DIR = join(REPO_ROOT, '.tap', 'report')
const COVERAGE_SUMMARY = join(REPORT_DIR, 'coverage-summary.json')
/** Each file's seconds in the last whole run here; else the committed ones (a clean clone's first run). */
const LOCAL_DURATIONS = join(REPO_ROOT, '.tap', 'test-durations.json')
const COMMITTED_DURATIONS = join(REPO_ROOT, 'test', 'test-durations.json')
/** After tap's own timeout (which prints what is still open), the runner stops a file that still hangs. */
const HARD_STOP_GRACE_MS = 60_000
/** A file's process has exited; what it left holding its output is stopped after this long. */
const LEFTOVER_GRACE_MS = 5_000

interface Options {
  paths: string[]
  /** Whole-suite runs collect coverage unless `--disable-coverage`; other runs only with `--coverage`. */
  coverage: boolean | undefined
  jobs: number
  grep: string[]
}

function parseArguments(argv: readonly string[]): Options {
  const options: Options = { paths: [], coverage: undefined, jobs: config.tap.jobs, grep: [] }
  for (const argument of argv) {
    if (argument === '--disable-coverage') options.coverage = false
    else if (argument === '--coverage') options.coverage = true
    else if (argument.startsWith('--jobs='))
      options.jobs = Math.max(1, Number(argument.slice('--jobs='.length)))
    else if (argument.startsWith('--grep=')) options.grep.push(argument.slice('--grep='.length))
    else if (argument.startsWith('-'))
      throw new Error(`unknown option ${argument} (see scripts/run-tests.ts)`)
    else options.paths.push(relative(REPO_ROOT, resolve(argument)))
  }
  return options
}

/** The suite's test files, as tap's include and exclude patterns in package.json select them. */
function testFiles(paths: readonly string[]): string[] {
  const files = repositoryFiles()
    .filter(
      (file) =>
        config.tap.include.some((pattern) => minimatch(file, pattern)) &&
        !config.tap.exclude.some((pattern) => minimatch(file, pattern)) &&
        existsSync(join(REPO_ROOT, file)),
    )
    .sort()
  if (paths.length === 0) return files
  const chosen = files.filter((file) => paths.some((path) => file === path || file.startsWith(`${path}/`)))
  if (chosen.length === 0) throw new Error(`no test file matches ${paths.join(', ')}`)
  return chosen
}

function knownDurations(): Record<string, number> {
  for (const file of [LOCAL_DURATIONS, COMMITTED_DURATIONS]) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>
  }
  return {}
}

/**
 * Longest first, so no long file starts while the others finish: the run ends when its last job
 * does. A file with no recorded time (a new one) goes first, as if it were the longest.
 */
function longestFirst(files: readonly string[]): string[] {
  const durations = knownDurations()
  const seconds = (file: string): number => durations[file] ?? Number.POSITIVE_INFINITY
  return [...files].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b))
}

interface Counts {
  passed: number
  failed: number
  skipped: number
  todo: number
  failures: string[]
}

/** Follows subtests: a parent's own point only counts when it failed with no failing child (a crash). */
function watch(parser: Parser, path: string[], counts: Counts): void {
  let pendingChild: { failures: () => number } | undefined
  parser.on('child', (childParser: Parser) => {
    const state = { count: 0 }
    childParser.on('assert', (result: Result) => {
      if (!result.ok && !result.skip && !result.todo) state.count++
    })
    pendingChild = { failures: () => state.count }
    watch(childParser, [...path, childParser.name], counts)
  })
  parser.on('assert', (result: Result) => {
    const name = [...path, result.name].filter(Boolean).join(' > ')
    if (pendingChild) {
      // The summary point of a subtest: its leaves were already counted.
      const nestedFailures = pendingChild.failures()
      pendingChild = undefined
      if (!result.ok && !result.skip && !result.todo && nestedFailures === 0) {
        counts.failed++
        counts.failures.push(
          `${name} (failed without a failing assertion: crashed, timed out or found no tests)`,
        )
      }
      return
    }
    if (result.skip) counts.skipped++
    else if (result.todo) counts.todo++
    else if (result.ok) counts.passed++
    else {
      counts.failed++
      counts.failures.push(name)
    }
  })
  parser.on('bailout', (reason: string) => {
    counts.failed++
    counts.failures.push(`${path.join(' > ')}: bail out: ${reason}`)
  })
}

const running = new Set<ChildProcess>()

function stopGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

interface FileRun {
  counts: Counts
  seconds: number
  output: string
}

/** One test file, compiled, in its own process group (so what it leaves behind can be stopped). */
function runFile(file: string, jobId: number, childId: number, options: Options): Promise<FileRun> {
  const compiled = join(BUILD_ROOT, compiledName(file) ?? file)
  const started = performance.now()
  const counts: Counts = { passed: 0, failed: 0, skipped: 0, todo: 0, failures: [] }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TAP: '1',
    TAP_CHILD_ID: String(childId),
    TAP_JOB_ID: String(jobId),
    TAP_TIMEOUT: String(config.tap.timeout),
    FORCE_COLOR: '0',
  }
  if (options.grep.length > 0) env.TAP_GREP = options.grep.join('\n')
  if (options.coverage) env.NODE_V8_COVERAGE = COVERAGE_DIR
  else delete env.NODE_V8_COVERAGE
  // Stack traces name the TypeScript lines (V8 coverage reads the same maps).
  const child = spawn(process.execPath, ['--enable-source-maps', compiled], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  running.add(child)
  const parser = new Parser()
  watch(parser, [file], counts)
  let tests = 0
  parser.on('assert', () => tests++)
  const chunks: string[] = []
  child.stdout?.on('data', (chunk: Buffer) => {
    chunks.push(chunk.toString())
    parser.write(chunk)
  })
  child.stderr?.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
  const hardStop = setTimeout(
    () => {
      counts.failed++
      counts.failures.push(`${file} (still running ${config.tap.timeout} s after tap's own timeout: stopped)`)
      stopGroup(child)
    },
    config.tap.timeout * 1000 + HARD_STOP_GRACE_MS,
  )
  return new Promise((resolveRun) => {
    let leftover: NodeJS.Timeout | undefined
    child.on('exit', () => {
      leftover = setTimeout(() => stopGroup(child), LEFTOVER_GRACE_MS)
    })
    child.on('close', (code, signal) => {
      clearTimeout(hardStop)
      clearTimeout(leftover)
      running.delete(child)
      stopGroup(child)
      parser.end()
      if ((code !== 0 || signal !== null) && counts.failed === 0) {
        counts.failed++
        counts.failures.push(`${file} (exited with ${signal ?? `code ${code}`} without a failing assertion)`)
      }
      if (tests === 0 && counts.failed === 0) {
        counts.failed++
        counts.failures.push(`${file} (found no tests)`)
      }
      resolveRun({ counts, seconds: (performance.now() - started) / 1000, output: chunks.join('') })
    })
  })
}

/**
 * Keeps only our compiled files' entries in each V8 coverage file, once the process that wrote it
 * is gone: V8 names every script a process ran (node_modules included, several MB a process, GBs a
 * suite), and the report at the end would read them all after the last test. A file that does not
 * parse is still being written, and is trimmed on a later call.
 */
async function trimCoverage(trimmed: Set<string>): Promise<void> {
  const ours = (url: string) => url.startsWith(BUILD_URL) && !url.includes('/node_modules/')
  for (const name of await readdir(COVERAGE_DIR).catch(() => [] as string[])) {
    if (trimmed.has(name) || !name.endsWith('.json')) continue
    const file = join(COVERAGE_DIR, name)
    let coverage: { result: Array<{ url: string }>; 'source-map-cache'?: Record<string, unknown> }
    try {
      coverage = JSON.parse(await readFile(file, 'utf8'))
    } catch {
      continue
    }
    coverage.result = coverage.result.filter((script) => ours(script.url))
    const maps = coverage['source-map-cache']
    if (maps)
      coverage['source-map-cache'] = Object.fromEntries(Object.entries(maps).filter(([url]) => ours(url)))
    await writeFile(`${file}.trimming`, JSON.stringify(coverage))
    await rename(`${file}.trimming`, file)
    trimmed.add(name)
  }
}

/** tap 21 only knows "100% or allowed incomplete"; the thresholds we hold ourselves to live in package.json. */
async function coverageFailures(wholeSuite: boolean): Promise<string[]> {
  const report = new Report({
    reporter: ['text-summary', 'json-summary'],
    reportsDirectory: REPORT_DIR,
    tempDirectory: COVERAGE_DIR,
    excludeNodeModules: true,
    // Only our compiled files, minus what package.json's coverage-exclude names (tests, generated code).
    include: [`${BUILD_DIR_NAME}/**`],
    exclude: [
      `${BUILD_DIR_NAME}/node_modules/**`,
      ...[...config.tap.exclude, ...config.tap['coverage-exclude']].map((pattern) =>
        pattern.startsWith('**/') ? pattern : `${BUILD_DIR_NAME}/${pattern}`,
      ),
    ],
    skipFull: false,
  })
  await report.run()
  if (!wholeSuite) return []
  if (!existsSync(COVERAGE_SUMMARY)) return [`no coverage summary at ${COVERAGE_SUMMARY}`]
  const summary = JSON.parse(readFileSync(COVERAGE_SUMMARY, 'utf8')) as {
    total: Record<CoverageMetric, { pct: number }>
  }
  const problems: string[] = []
  for (const [metric, minimum] of Object.entries(config.pontis.coverageThresholds) as Array<
    [CoverageMetric, number]
  >) {
    const actual = summary.total[metric].pct
    if (actual < minimum)
      problems.push(`coverage of ${metric} is ${actual}%, below the ${minimum}% threshold`)
  }
  return problems
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2))
  const files = longestFirst(testFiles(options.paths))
  const wholeSuite = options.paths.length === 0 && options.grep.length === 0
  const coverage = options.coverage ?? wholeSuite
  const build = await buildTests()
  console.log(`# compiled ${build.compiled} TypeScript files into ${BUILD_DIR_NAME}/`)
  // Every process the suite starts opens its in-memory stores from one migrated snapshot.
  process.env[SNAPSHOT_DIR_VARIABLE] ??= resolve(REPO_ROOT, '.tap', 'pglite-snapshots')
  if (coverage) rmSync(COVERAGE_DIR, { recursive: true, force: true })

  const total: Counts = { passed: 0, failed: 0, skipped: 0, todo: 0, failures: [] }
  const started = performance.now()
  const durations: Record<string, number> = {}
  const trimmed = new Set<string>()
  let trimming = Promise.resolve()
  let next = 0
  let reported = 0
  const job = async (jobId: number): Promise<void> => {
    while (next < files.length) {
      const index = next++
      const file = files[index] as string
      const run = await runFile(file, jobId, index + 1, { ...options, coverage })
      reported++
      durations[file] = Math.round(run.seconds * 10) / 10
      if (coverage) trimming = trimming.then(() => trimCoverage(trimmed))
      const { counts } = run
      total.passed += counts.passed
      total.failed += counts.failed
      total.skipped += counts.skipped
      total.todo += counts.todo
      total.failures.push(...counts.failures)
      const verdict = counts.failed === 0 ? 'ok' : 'not ok'
      if (counts.failed > 0) console.log(run.output.replace(/^/gm, '    '))
      console.log(
        `${verdict} ${reported} - ${file} # ${counts.passed} passed, ${counts.failed} failed, time=${run.seconds.toFixed(1)}s`,
      )
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.jobs, files.length) }, (_, jobId) => job(jobId)))
  if (wholeSuite) {
    const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)))
    mkdirSync(dirname(LOCAL_DURATIONS), { recursive: true })
    writeFileSync(LOCAL_DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`)
  }
  console.log(`1..${files.length}`)
  console.log(`# ${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  if (coverage) {
    await trimming
    await trimCoverage(trimmed)
    for (const problem of await coverageFailures(wholeSuite)) {
      total.failed++
      total.failures.push(problem)
    }
  }
  if (total.failures.length > 0) {
    console.log('\nFailures:')
    for (const failure of total.failures) console.log(`  - ${failure}`)
  }
  console.log(
    `${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped${total.todo ? `, ${total.todo} todo` : ''}`,
  )
  return total.failed > 0 ? 1 : 0
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) stopGroup(child)
    process.exit(130)
  })
}

process.exitCode = await main()
