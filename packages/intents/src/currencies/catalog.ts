import { type IntentsApi, PontisError, type RegisteredChain, type Registry } from '@pontis/core'
import { type ChainCurrency, CurrencyCatalog } from '../quote/currencies.js'
import { currencyLogoUrl } from './icons.js'

/** One currency of the deployment with its chain. */
export interface ListedCurrency {
  readonly chain: RegisteredChain
  readonly currency: ChainCurrency
  /** Named in the chain's `featuredTokens`. */
  readonly featured: boolean
}

export type CurrencyListRequest = NonNullable<IntentsApi.ListCurrenciesData['body']>

export const DEFAULT_CURRENCY_LIMIT = 20

/** The canonical id of `address` on `chain` by its family's rule, or undefined when the family refuses it. */
function canonicalOn(chain: RegisteredChain, address: string): string | undefined {
  try {
    return chain.adapter.identity.normalizeCurrency(address, 'currency')
  } catch {
    return undefined
  }
}

/** `address` read by each chain's family once per request (a refusal throws, which is not free). */
function canonicalPerChain(address: string): (chain: RegisteredChain) => string | undefined {
  const read = new Map<number, string | undefined>()
  return (chain) => {
    if (!read.has(chain.id)) read.set(chain.id, canonicalOn(chain, address))
    return read.get(chain.id)
  }
}

/** How well `term` (lower case) matches a currency: lower is better, undefined is no match. */
function termRank(
  listed: ListedCurrency,
  term: string,
  asAddress: (chain: RegisteredChain) => string | undefined,
): number | undefined {
  const symbol = listed.currency.entry.symbol.toLowerCase()
  const name = listed.currency.entry.name.toLowerCase()
  if (symbol === term || asAddress(listed.chain) === listed.currency.address) return 0
  if (symbol.startsWith(term)) return 1
  if (name.startsWith(term)) return 2
  if (symbol.includes(term)) return 3
  if (name.includes(term)) return 4
  return undefined
}

/**
 * Every currency the deployment routes (the quote engine's catalogue of each chain: the native
 * currency and the configured currencies that bridge), for token lists, search and prices.
 * Addresses are compared in their canonical form, which each chain's plugin decides.
 */
export class DeploymentCurrencies {
  readonly #registry: Registry
  readonly #catalogs = new Map<number, CurrencyCatalog>()
  /** Natives first, then tokens, each in config order. */
  readonly #all: readonly ListedCurrency[]

  constructor(registry: Registry) {
    this.#registry = registry
    const natives: ListedCurrency[] = []
    const tokens: ListedCurrency[] = []
    for (const chain of registry.chains()) {
      const catalog = new CurrencyCatalog(chain)
      this.#catalogs.set(chain.id, catalog)
      if (chain.record.disabled) continue
      const featured = new Set(
        (chain.record.featuredTokens ?? []).map((token) => canonicalOn(chain, token.address)),
      )
      for (const currency of catalog.list()) {
        const listed = { chain, currency, featured: featured.has(currency.address) }
        ;(currency.isNative ? natives : tokens).push(listed)
      }
    }
    this.#all = [...natives, ...tokens]
  }

  /** `POST /currencies/v2`: the filters of the request, AND-combined, best matches first. */
  search(request: CurrencyListRequest): readonly ListedCurrency[] {
    const chainIds = request.chainIds?.length ? new Set(request.chainIds) : undefined
    const eligible = this.#all.filter(
      (listed) =>
        (request.verified !== true || listed.currency.entry.metadata?.verified !== false) &&
        (request.depositAddressOnly !== true ||
          listed.chain.adapter.quoting?.createDepositAddress !== undefined),
    )
    let matched = eligible.filter((listed) => !chainIds || chainIds.has(listed.chain.id))
    if (request.tokens !== undefined) {
      const wanted = request.tokens.map((token) => {
        const colon = token.indexOf(':')
        return { chainId: Number(token.slice(0, colon)), address: token.slice(colon + 1) }
      })
      matched = matched.filter((listed) =>
        wanted.some(
          (token) =>
            token.chainId === listed.chain.id &&
            canonicalOn(listed.chain, token.address) === listed.currency.address,
        ),
      )
    }
    if (request.currencyId) {
      const id = request.currencyId.toLowerCase()
      matched = matched.filter((listed) => listed.currency.entry.id.toLowerCase() === id)
    }
    const address = request.address?.trim()
    if (address) {
      const asAddress = canonicalPerChain(address)
      matched = matched.filter((listed) => asAddress(listed.chain) === listed.currency.address)
    }
    const raw = request.term?.trim()
    if (raw) {
      const term = raw.toLowerCase()
      const asAddress = canonicalPerChain(raw)
      matched = matched
        .map((listed, index) => ({ listed, index, rank: termRank(listed, term, asAddress) }))
        .filter((scored): scored is typeof scored & { rank: number } => scored.rank !== undefined)
        .sort((a, b) => a.rank - b.rank || a.index - b.index)
        .map((scored) => scored.listed)
    }
    if (request.includeAllChains === true && (address || raw || request.tokens !== undefined)) {
      // The same currency (same service id) on every other chain, after the matches.
      const ids = new Set(matched.map((listed) => listed.currency.entry.id))
      const found = new Set(matched)
      matched = [
        ...matched,
        ...eligible.filter((listed) => !found.has(listed) && ids.has(listed.currency.entry.id)),
      ]
    }
    return matched.slice(0, request.limit ?? DEFAULT_CURRENCY_LIMIT)
  }

  /** `GET /currencies/trending`: featured currencies, then natives, then the rest. */
  trending(options: { chainId?: number | undefined; limit?: number | undefined }): readonly ListedCurrency[] {
    const rank = (listed: ListedCurrency) => (listed.featured ? 0 : listed.currency.isNative ? 1 : 2)
    return this.#all
      .filter((listed) => options.chainId === undefined || listed.chain.id === options.chainId)
      .map((listed, index) => ({ listed, index }))
      .sort((a, b) => rank(a.listed) - rank(b.listed) || a.index - b.index)
      .map(({ listed }) => listed)
      .slice(0, options.limit ?? DEFAULT_CURRENCY_LIMIT)
  }

  /**
   * The currency `address` names on `chainId`, by the chain family's rule.
   * @throws PontisError UNSUPPORTED_CHAIN for a chain the deployment does not serve,
   * UNSUPPORTED_CURRENCY for an id the family refuses or a currency not routed there.
   */
  find(chainId: number, address: string): ListedCurrency {
    const chain = this.#registry.chain(chainId)
    const catalog = this.#catalogs.get(chain.id) as CurrencyCatalog
    const canonical = chain.adapter.identity.normalizeCurrency(address, 'currency')
    const currency = catalog.find(canonical)
    if (currency === undefined) {
      const routed = catalog.list().map((known) => `${known.entry.symbol} (${known.address})`)
      throw new PontisError(
        'UNSUPPORTED_CURRENCY',
        `${canonical} is not a currency this deployment routes on ${chain.record.displayName} (${chain.id}); it routes: ${routed.join(', ')}.`,
        { chainId: chain.id, currency: canonical },
      )
    }
    return { chain, currency, featured: false }
  }
}

/** A currency as the token-list routes answer it, its logo on the deployment's public base URL. */
export function toListItem(listed: ListedCurrency, baseUrl: string): IntentsApi.CurrencyListItem {
  const { chain, currency } = listed
  return {
    chainId: chain.id,
    address: currency.address,
    symbol: currency.entry.symbol,
    name: currency.entry.name,
    decimals: currency.entry.decimals,
    vmType: chain.record.vmType as IntentsApi.VmType,
    metadata: {
      logoURI: currencyLogoUrl(currency.entry, baseUrl),
      verified: currency.entry.metadata?.verified !== false,
      isNative: currency.isNative,
    },
  }
}
