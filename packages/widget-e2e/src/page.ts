/**
 * Serves the widget page on loopback (its own origin, as a partner's site would be): `/` is the HTML
 * with the page's configuration, `/app.js` and `/app.css` the bundle. Nothing else is served.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WidgetBundle } from './bundle.js'
import type { WidgetPageConfig } from './config.js'

/** A served widget page. */
export interface WidgetPage {
  /** The page's URL (`http://127.0.0.1:<port>/`). */
  readonly url: string
  close(): Promise<void>
}

/** JSON inside a <script> element: `<` escaped so that no value can end the element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c')

function html(config: WidgetPageConfig): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Pontis: the Relay swap widget</title>
    <link rel="stylesheet" href="/app.css" />
    <script>window.pontisWidget = ${scriptJson(config)}</script>
    <script type="module" src="/app.js"></script>
  </head>
  <body>
    <div id="root" style="max-width: 440px; margin: 0 auto"></div>
  </body>
</html>
`
}

/** Serves the page on 127.0.0.1 on a free port. */
export async function serveWidgetPage(bundle: WidgetBundle, config: WidgetPageConfig): Promise<WidgetPage> {
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: html(config) },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: bundle.script },
    '/app.css': { type: 'text/css; charset=utf-8', body: bundle.styles },
  }
  const server = createServer((request, response) => {
    const file = files[new URL(request.url ?? '/', 'http://page').pathname]
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    response.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
