import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { CurrencyEntry, PublicChainRecord, Registry } from '@pontis/core'

/**
 * Chain and currency icons served by the deployment itself (`GET /icons/...`): the colour SVGs of
 * the installed `cryptocurrency-icons` package (CC0-1.0), keyed by lower-case symbol. Nothing is
 * fetched from elsewhere; a name without an icon gets the package's generic coin, so a client
 * never shows a broken image.
 */
export class IconLibrary {
  readonly #directory: string
  /** Lower-case symbols the package has an icon for. */
  readonly #available: ReadonlySet<string>
  readonly #files = new Map<string, Buffer>()

  constructor() {
    const require = createRequire(import.meta.url)
    this.#directory = join(dirname(require.resolve('cryptocurrency-icons/package.json')), 'svg', 'color')
    this.#available = new Set(
      readdirSync(this.#directory)
        .filter((file) => file.endsWith('.svg'))
        .map((file) => file.slice(0, -'.svg'.length)),
    )
    if (!this.#available.has(GENERIC)) throw new Error(`${this.#directory} has no ${GENERIC}.svg`)
  }

  /** True when the package has an icon for this symbol (any case). */
  has(symbol: string): boolean {
    return this.#available.has(symbol.toLowerCase())
  }

  /**
   * The SVG of `symbol`, or the generic coin. Only names listed from the package's directory are
   * ever read, so no request text reaches the file system.
   */
  svg(symbol: string): Buffer {
    const key = this.#available.has(symbol.toLowerCase()) ? symbol.toLowerCase() : GENERIC
    let file = this.#files.get(key)
    if (file === undefined) {
      file = readFileSync(join(this.#directory, `${key}.svg`))
      this.#files.set(key, file)
    }
    return file
  }
}

const GENERIC = 'generic'

/** `/icons/<kind>/<name>`'s name without `.svg`, as the library keys it. */
export function iconKey(name: string): string {
  return name.replace(/\.svg$/i, '').toLowerCase()
}

/** An image the config names: absolute URLs as they are, deployment paths (`/icons/...`) on the public base URL. */
export function configuredImage(value: string, baseUrl: string): string {
  return value.startsWith('/') ? `${baseUrl}${value}` : value
}

/** The chain icon's URL: the configured `iconUrl`, else `/icons/chains/<id>.svg` of the deployment. */
export function chainIconUrl(chain: Pick<PublicChainRecord, 'id' | 'iconUrl'>, baseUrl: string): string {
  return chain.iconUrl === undefined
    ? `${baseUrl}/icons/chains/${chain.id}.svg`
    : configuredImage(chain.iconUrl, baseUrl)
}

/** A currency's logo URL: the configured `metadata.logoURI`, else `/icons/currencies/<symbol>.svg` of the deployment. */
export function currencyLogoUrl(
  currency: Pick<CurrencyEntry, 'symbol' | 'metadata'>,
  baseUrl: string,
): string {
  const configured = currency.metadata?.logoURI
  return configured === undefined
    ? `${baseUrl}/icons/currencies/${encodeURIComponent(currency.symbol.toLowerCase())}.svg`
    : configuredImage(configured, baseUrl)
}

/** The SVG `GET /icons/<kind>/<name>` answers: a chain's is its native currency's icon. */
export function iconFor(
  library: IconLibrary,
  registry: Registry,
  kind: 'chains' | 'currencies',
  name: string,
): Buffer {
  const key = iconKey(name)
  if (kind === 'currencies') return library.svg(key)
  const chain = /^[0-9]{1,16}$/.test(key) ? registry.tryChain(Number(key)) : undefined
  // Not a chain of the deployment: the generic coin, whatever the name looks like.
  return library.svg(chain?.record.currency.symbol ?? GENERIC)
}

/** A `/chains` record with every image URL absolute: the chain's `iconUrl` and each currency's `metadata.logoURI`. */
export function withImages(record: PublicChainRecord, baseUrl: string): PublicChainRecord {
  const withLogo = (currency: CurrencyEntry): CurrencyEntry => ({
    ...currency,
    metadata: { ...currency.metadata, logoURI: currencyLogoUrl(currency, baseUrl) },
  })
  const lists = {
    ...(record.featuredTokens ? { featuredTokens: record.featuredTokens.map(withLogo) } : {}),
    ...(record.erc20Currencies ? { erc20Currencies: record.erc20Currencies.map(withLogo) } : {}),
    ...(record.solverCurrencies ? { solverCurrencies: record.solverCurrencies.map(withLogo) } : {}),
  }
  return {
    ...record,
    currency: withLogo(record.currency),
    ...lists,
    iconUrl: chainIconUrl(record, baseUrl),
  }
}
