/**
 * Headless Chromium from npm alone: `@sparticuz/chromium` ships a Linux Chromium (brotli-compressed,
 * inflated on first use) and `playwright-core` drives it; no browser download, no system Chromium.
 * Pages under test (the public swap widget, the dashboard) share this launch. The network here is
 * closed except for loopback, so the flags turn off everything Chromium would fetch on its own.
 */
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { type Browser, type Page, chromium as playwright } from 'playwright-core'

const run = promisify(execFile)
const require = createRequire(import.meta.url)

/** Chromium's flags for a closed network: no sandbox (containers), no GPU, nothing fetched in the background. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Where the inflated Chromium is kept between runs: one directory per package version. */
function chromiumCacheDirectory(): string {
  // The package exports only its entry (build/index.js); its package.json is two levels up.
  const entry = require.resolve('@sparticuz/chromium')
  const { version } = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string
  }
  const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
  return join(repositoryRoot, 'node_modules', '.cache', 'pontis-chromium', version)
}

/**
 * The path of the Chromium executable, inflating it on the first call. `executablePath()` inflates
 * into `os.tmpdir()` and trusts any file already there, so several test files (or helpers) inflating at
 * once could run a half-written binary: each inflates in a child process into its own staging
 * directory (TMPDIR), and the first finished one is renamed into place atomically.
 */
export async function chromiumExecutablePath(): Promise<string> {
  const cache = chromiumCacheDirectory()
  const executable = join(cache, 'chromium')
  if (existsSync(executable)) return executable
  await mkdir(dirname(cache), { recursive: true })
  const staging = await mkdtemp(`${cache}.staging-`)
  try {
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import chromium from '@sparticuz/chromium'; process.stdout.write(await chromium.executablePath())",
      ],
      { cwd: dirname(fileURLToPath(import.meta.url)), env: { ...process.env, TMPDIR: staging } },
    )
    if (stdout !== join(staging, 'chromium'))
      throw new Error(`@sparticuz/chromium inflated to ${stdout}, not into ${staging}`)
    await rename(staging, cache).catch((error: NodeJS.ErrnoException) => {
      // Another process finished first: its copy is complete (renamed whole), use it.
      if (!existsSync(executable)) throw error
    })
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
  return executable
}

/** Launches headless Chromium; the caller closes it (`browser.close()`, e.g. in `t.teardown`). */
export async function launchChromium(): Promise<Browser> {
  return playwright.launch({
    executablePath: await chromiumExecutablePath(),
    headless: true,
    args: [...CHROMIUM_FLAGS],
  })
}

/** One answer a page got from the API under test, with what the page sent. */
export interface ApiExchange {
  readonly method: string
  /** Path and query string, as the page asked. */
  readonly url: string
  /** Path without the query string. */
  readonly path: string
  readonly status: number
  /** Response headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON for JSON answers, text otherwise, undefined when empty. */
  readonly body: unknown
  /** The request body the page sent, as text. */
  readonly requestBody: string | undefined
}

/** A request of the page that left loopback (the network here is closed: it cannot succeed). */
export interface OffsiteRequest {
  readonly url: string
  /** Playwright's resource type: `image`, `fetch`, `script`, ... */
  readonly resourceType: string
}

/** What a page asked for while it was recorded. */
export interface PageTraffic {
  /** Every answer from the API origins, in the order they finished. */
  readonly api: readonly ApiExchange[]
  /** Requests to the API origins that got no answer at all (refused, CORS, aborted). */
  readonly apiFailures: ReadonlyArray<{
    readonly method: string
    readonly url: string
    readonly error: string
  }>
  /** Requests to hosts other than loopback. */
  readonly offsite: readonly OffsiteRequest[]
  /** Images loaded from anywhere but the API origins (data: and blob: URLs are part of the page). */
  readonly foreignImages: readonly OffsiteRequest[]
  /** Waits until every answer seen so far has been read and recorded. */
  settled(): Promise<void>
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** `POST /quote/v2 → 400 UNSUPPORTED_EXECUTION_TYPE (…)`: one line per answer, for failure messages. */
export function describeExchange(exchange: ApiExchange): string {
  const body = exchange.body as { errorCode?: unknown; message?: unknown } | undefined
  const error =
    body && typeof body === 'object' && typeof body.errorCode === 'string'
      ? ` ${body.errorCode}: ${String(body.message ?? '')}`
      : ''
  const sent = exchange.requestBody ? ` sent ${exchange.requestBody}` : ''
  return `${exchange.method} ${exchange.url} → ${exchange.status}${error}${sent}`
}

/**
 * Records a page's traffic from now on (Playwright's `request`, `response` and `requestfailed`
 * events, observed and never altered): every answer from `apiOrigins`, requests that left loopback,
 * and images from anywhere but `apiOrigins`.
 */
export function recordTraffic(page: Page, apiOrigins: readonly string[]): PageTraffic {
  const api: ApiExchange[] = []
  const apiFailures: Array<{ method: string; url: string; error: string }> = []
  const offsite: OffsiteRequest[] = []
  const foreignImages: OffsiteRequest[] = []
  const pending = new Set<Promise<void>>()
  const isApi = (url: URL) => apiOrigins.includes(url.origin)
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol === 'data:' || url.protocol === 'blob:') return
    const seen = { url: request.url(), resourceType: request.resourceType() }
    if (!LOOPBACK_HOSTS.has(url.hostname)) offsite.push(seen)
    if (seen.resourceType === 'image' && !isApi(url)) foreignImages.push(seen)
  })
  page.on('requestfailed', (request) => {
    const url = new URL(request.url())
    if (isApi(url))
      apiFailures.push({
        method: request.method(),
        url: `${url.pathname}${url.search}`,
        error: request.failure()?.errorText ?? 'unknown',
      })
  })
  page.on('response', (response) => {
    const url = new URL(response.url())
    if (!isApi(url)) return
    const request = response.request()
    const read = (async () => {
      const headers = await response.allHeaders()
      const text = await response.text().catch(() => '')
      let body: unknown = text === '' ? undefined : text
      if (text !== '' && (headers['content-type'] ?? '').includes('json')) {
        try {
          body = JSON.parse(text)
        } catch {
          // kept as text: the conformance check reports a JSON answer that does not parse
        }
      }
      api.push({
        method: request.method(),
        url: `${url.pathname}${url.search}`,
        path: url.pathname,
        status: response.status(),
        headers,
        body,
        requestBody: request.postData() ?? undefined,
      })
    })().catch((error: unknown) => {
      apiFailures.push({
        method: request.method(),
        url: url.pathname,
        error: `answer unreadable: ${String(error)}`,
      })
    })
    pending.add(read)
    void read.then(() => pending.delete(read))
  })
  return {
    api,
    apiFailures,
    offsite,
    foreignImages,
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending])
    },
  }
}
