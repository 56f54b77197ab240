/**
 * Bundles the widget page (./app.ts) for the browser with esbuild, from installed packages only (no CDN).
 *
 * The widget and its peers are pinned in this package (viem 2.55.0 among them), and npm may hoist some of
 * them (wagmi) to the repository root, where a bare `viem` resolves to the repository's own, newer viem.
 * A page must hold one copy of each of these singletons (React's hooks, wagmi's context, viem's
 * classes), so every import of them, from anywhere, resolves from this package.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

const packageDirectory = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The packages the page must hold once, resolved from this package's pins. */
const SINGLETONS = ['react', 'react-dom', 'viem', 'wagmi', '@wagmi/core', '@tanstack/react-query']
const singletonImport = new RegExp(
  `^(${SINGLETONS.map((name) => name.replace(/[/.]/g, (c) => `\\${c}`)).join('|')})(/.*)?$`,
)

const resolveSingletonsHere: Plugin = {
  name: 'pontis-widget-singletons',
  setup(build) {
    build.onResolve({ filter: singletonImport }, async (args) => {
      if (args.pluginData === 'singleton') return undefined
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: packageDirectory,
        pluginData: 'singleton',
      })
      return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path }
    })
  },
}

/** The bundled page: its script and its style sheet (the widget's own styles.css). */
export interface WidgetBundle {
  readonly script: string
  readonly styles: string
}

/** Bundles ./app.ts and the widget's styles; takes 10–60 s on a busy 2-core machine. */
export async function buildWidgetBundle(): Promise<WidgetBundle> {
  const result = await build({
    entryPoints: [join(packageDirectory, 'src', 'app.ts'), join(packageDirectory, 'src', 'styles.css')],
    bundle: true,
    write: false,
    outdir: '/widget',
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    loader: { '.png': 'dataurl', '.svg': 'dataurl', '.woff': 'dataurl', '.woff2': 'dataurl' },
    plugins: [resolveSingletonsHere],
  })
  const output = (extension: string): string => {
    const file = result.outputFiles.find((candidate) => candidate.path.endsWith(extension))
    if (!file) throw new Error(`esbuild produced no ${extension} output`)
    return file.text
  }
  return { script: output('.js'), styles: output('.css') }
}

const require = createRequire(join(packageDirectory, 'package.json'))

/** The installed version of a package as this package resolves it (what the page actually runs). */
export function installedVersion(name: string): string {
  let directory = dirname(require.resolve(name))
  // Walk up from the entry to the package's own package.json (exports may hide it).
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
        name?: string
        version: string
      }
      if (manifest.name === name) return manifest.version
    } catch {
      // no package.json at this level
    }
    const parent = dirname(directory)
    if (parent === directory) throw new Error(`no package.json of ${name} above its entry`)
    directory = parent
  }
}

/** The versions the page runs: the widget and the packages it depends on. */
export function widgetVersions(): Record<string, string> {
  const names = [
    '@relayprotocol/relay-kit-ui',
    '@relayprotocol/relay-sdk',
    'viem',
    'wagmi',
    '@wagmi/core',
    '@tanstack/react-query',
    'react',
    'react-dom',
  ]
  return Object.fromEntries(names.map((name) => [name, installedVersion(name)]))
}
