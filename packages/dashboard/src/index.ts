/**
 * The web dashboard (issue 25): a Preact page (./app) bundled for the browser with esbuild from
 * installed packages only (no CDN, no web fonts, no icon fonts), served by the intent service at
 * `/dashboard`. The bundle is built in memory the first time the service serves it, so `npm ci`,
 * `npm start` and `npm test` need no build step of their own.
 */
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const sourceDirectory = join(dirname(fileURLToPath(import.meta.url)), 'app')

/** Where the page loads its assets from (the document's `getDashboardAsset`). */
export const DASHBOARD_ASSETS = {
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
} as const
export type DashboardAssetName = keyof typeof DASHBOARD_ASSETS

/** The bundled page: its script and its style sheet. */
export type DashboardBundle = Readonly<Record<DashboardAssetName, string>>

/**
 * The page's headers: its own origin only for scripts, styles, images and connections (the
 * status stream's `ws:`/`wss:` on the same host included), no framing, no referrer, never cached
 * (the page is small; a stale one after an upgrade would call routes that changed).
 */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
}

/** The HTML shell: the app renders into `#app`; without script it says so. */
export function dashboardPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pontis dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script type="module" src="/dashboard/assets/dashboard.js"></script>
</head>
<body>
<div id="app"><p role="status">Loading the dashboard…</p></div>
<noscript><p>The Pontis dashboard needs JavaScript.</p></noscript>
</body>
</html>
`
}

/** Bundles ./app/main.tsx and its styles (a second or two; longer on a busy machine). */
export async function buildDashboard(): Promise<DashboardBundle> {
  const result = await build({
    entryPoints: [join(sourceDirectory, 'main.tsx'), join(sourceDirectory, 'styles.css')],
    bundle: true,
    write: false,
    outdir: '/dashboard',
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const output = (extension: string): string => {
    const file = result.outputFiles.find((candidate) => candidate.path.endsWith(extension))
    if (!file) throw new Error(`esbuild produced no ${extension} output`)
    return file.text
  }
  return { 'dashboard.js': output('.js'), 'dashboard.css': output('.css') }
}

let built: Promise<DashboardBundle> | undefined

/** The bundle, built once per process on first use (a failed build is retried on the next call). */
export function dashboardBundle(): Promise<DashboardBundle> {
  if (!built) {
    built = buildDashboard()
    built.catch(() => {
      built = undefined
    })
  }
  return built
}
