import type { CurrencyEntry, IntentsApi, RegisteredChain } from '@pontis/core'
import { PontisError } from '@pontis/core'

/** A currency a chain supports, with its canonical id and whether it is the native currency. */
export interface ChainCurrency {
  readonly entry: CurrencyEntry
  /** Canonical currency id (the family's normalised form). */
  readonly address: string
  readonly isNative: boolean
}

/**
 * The currencies a chain quotes: its native currency and the bridgeable tokens of its config,
 * indexed by canonical id. Built once per chain at start-up.
 */
export class CurrencyCatalog {
  readonly #byAddress = new Map<string, ChainCurrency>()
  readonly native: ChainCurrency

  constructor(chain: RegisteredChain) {
    const { identity } = chain.adapter
    const add = (entry: CurrencyEntry, isNative: boolean) => {
      const address = isNative
        ? identity.nativeCurrencyId
        : identity.normalizeCurrency(entry.address, 'currency')
      if (entry.supportsBridging === false || this.#byAddress.has(address)) return
      this.#byAddress.set(address, { entry, address, isNative })
    }
    add(chain.entry.currency, true)
    for (const token of chain.entry.currencies ?? []) add(token, false)
    for (const token of chain.entry.solverCurrencies ?? [])
      add(token, token.address === chain.entry.currency.address)
    this.native = this.#byAddress.get(identity.nativeCurrencyId) ?? {
      entry: chain.entry.currency,
      address: identity.nativeCurrencyId,
      isNative: true,
    }
  }

  /** Every currency the chain quotes directly, the native one first, then in config order. */
  list(): readonly ChainCurrency[] {
    return [...this.#byAddress.values()].sort((a, b) => Number(b.isNative) - Number(a.isNative))
  }

  /** The currency with this canonical id, or undefined. */
  find(address: string): ChainCurrency | undefined {
    return this.#byAddress.get(address)
  }

  /** True when the chain quotes `address` (a canonical id) directly. */
  has(address: string): boolean {
    return this.#byAddress.has(address)
  }

  /**
   * The currency an origin swap deposits: the one with the same asset id as the output (so the fill
   * pays like for like), else the native currency.
   */
  settlementFor(assetId: string): ChainCurrency {
    for (const currency of this.#byAddress.values()) if (currency.entry.id === assetId) return currency
    return this.native
  }

  /**
   * A currency the chain does not list but a swap source trades (an origin swap's input): known
   * by its id and decimals only, so its id stands in for the symbol and name.
   */
  unlisted(address: string, decimals: number): ChainCurrency {
    return (
      this.#byAddress.get(address) ?? {
        entry: { id: address, symbol: address, name: address, address, decimals },
        address,
        isNative: false,
      }
    )
  }

  /** @throws UNSUPPORTED_CURRENCY naming the chain and what it supports. */
  get(address: string, chain: RegisteredChain, side: 'input' | 'output'): ChainCurrency {
    const found = this.#byAddress.get(address)
    if (found) return found
    const supported = [...this.#byAddress.values()].map(
      (currency) => `${currency.entry.symbol} (${currency.address})`,
    )
    throw new PontisError(
      'UNSUPPORTED_CURRENCY',
      `${side === 'input' ? 'originCurrency' : 'destinationCurrency'} ${address} is not supported on ${chain.record.displayName} (${chain.id}); supported: ${supported.join(', ')}.`,
      { chainId: chain.id, currency: address },
    )
  }

  /** The document's Currency object. */
  toApi(currency: ChainCurrency, chainId: number): IntentsApi.Currency {
    const metadata: IntentsApi.CurrencyMetadata = {
      ...(currency.entry.metadata ?? {}),
      isNative: currency.isNative,
    }
    return {
      chainId,
      address: currency.address,
      symbol: currency.entry.symbol,
      name: currency.entry.name,
      decimals: currency.entry.decimals,
      metadata,
    }
  }
}
