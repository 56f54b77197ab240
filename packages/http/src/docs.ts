import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type Router from '@koa/router'
import type { LoadedDocument } from './document.js'

const require = createRequire(import.meta.url)

/** swagger-ui-dist ships the UI as static files; they are served from the installed package (no CDN). */
function swaggerUiDirectory(): string {
  const packageJson = require.resolve('swagger-ui-dist/package.json')
  return join(packageJson, '..')
}

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
}

export function documentationPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(title)} — API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/documentation/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/documentation/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/documentation/assets/swagger-ui-bundle.js"></script>
  <script src="/documentation/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/documentation/assets/init.js"></script>
</body>
</html>
`
}

// Kept in its own file so the page needs no inline script (a strict CSP can stay on).
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/documentation/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
})
`

/**
 * Registers the documentation sub-paths: the document as JSON and YAML and the UI's assets.
 * `/documentation` itself is an operation of the document and answers through `documentationPage`.
 */
export function registerDocumentationAssets(router: Router, loaded: LoadedDocument): void {
  const assetDirectory = swaggerUiDirectory()
  const json = JSON.stringify(loaded.document)
  const cache = new Map<string, Buffer>()
  // `/documentation/json` is where the public service serves it: partners' type-sync scripts
  // (relay-kit's among them) fetch it there.
  router.get(['/documentation/openapi.json', '/documentation/json'], (ctx) => {
    ctx.type = 'application/json'
    ctx.body = json
  })
  router.get('/documentation/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml'
    ctx.body = loaded.source
  })
  router.get('/documentation/assets/init.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8'
    ctx.body = INIT_SCRIPT
  })
  router.get('/documentation/assets/:file', async (ctx, next) => {
    const file = ctx.params.file ?? ''
    const type = ASSETS[file]
    if (!type) return next()
    let content = cache.get(file)
    if (!content) {
      content = await readFile(join(assetDirectory, file))
      cache.set(file, content)
    }
    ctx.type = type
    ctx.set('cache-control', 'public, max-age=86400')
    ctx.body = content
  })
}
