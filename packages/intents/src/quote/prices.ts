import {
  type CurrencyEntry,
  type EnvironmentVariables,
  formatUnits,
  loadEnvironmentFile,
  mulDiv,
  PontisError,
  parseUnits,
  type Rounding,
} from '@pontis/core'

/** USD per whole unit of a currency, scaled by 10^18. */
export type UsdPriceE18 = bigint

export const USD_SCALE = 10n ** 18n

/** Where USD prices come from: a static table locally, a live feed in production. */
export interface PriceSource {
  /** @throws PontisError PRICE_FETCH_FAILED (503, retryable) when no price can be had now. */
  usdPrice(currency: CurrencyEntry): Promise<UsdPriceE18>
}

/** `configs/prices.<ENVIRONMENT>.json` with `source: static`: prices keyed by currency `id`. */
export class StaticPriceSource implements PriceSource {
  readonly #prices: ReadonlyMap<string, UsdPriceE18>

  constructor(usd: Readonly<Record<string, string>>) {
    this.#prices = new Map(Object.entries(usd).map(([id, price]) => [id, parseUnits(price, 18, `usd.${id}`)]))
  }

  async usdPrice(currency: CurrencyEntry): Promise<UsdPriceE18> {
    const price = this.#prices.get(currency.id)
    if (price === undefined || price === 0n) {
      throw new PontisError(
        'PRICE_FETCH_FAILED',
        `No USD price is configured for ${currency.symbol} (id "${currency.id}").`,
      )
    }
    return price
  }
}

const pricesSchema = {
  type: 'object',
  required: ['source', 'usd'],
  additionalProperties: false,
  properties: {
    $comment: { type: 'string' },
    source: { const: 'static' },
    usd: { type: 'object', additionalProperties: { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,18})?$' } },
  },
} as const

export async function loadPriceSource(options: {
  environment?: string
  configDir?: string
  env?: EnvironmentVariables
}): Promise<PriceSource> {
  const file = await loadEnvironmentFile<{ usd: Record<string, string> }>({
    ...options,
    name: 'prices',
    schema: pricesSchema,
  })
  return new StaticPriceSource(file.usd)
}

/** A currency with its decimals and price: everything conversions need. */
export interface PricedCurrency {
  readonly decimals: number
  readonly usdPrice: UsdPriceE18
}

/** USD value (×10^18) of an amount. */
export function usdValue(amount: bigint, currency: PricedCurrency): bigint {
  return (amount * currency.usdPrice) / 10n ** BigInt(currency.decimals)
}

/** Amount of `currency` worth `usdE18` dollars (×10^18). */
export function fromUsd(usdE18: bigint, currency: PricedCurrency, rounding: Rounding): bigint {
  return mulDiv(usdE18, 10n ** BigInt(currency.decimals), currency.usdPrice, rounding)
}

/** Converts an amount between currencies through their USD prices. */
export function convert(
  amount: bigint,
  from: PricedCurrency,
  to: PricedCurrency,
  rounding: Rounding,
): bigint {
  return mulDiv(
    amount * from.usdPrice,
    10n ** BigInt(to.decimals),
    10n ** BigInt(from.decimals) * to.usdPrice,
    rounding,
  )
}

/** USD (×10^18) as a decimal string with cents precision kept to 6 places. */
export function formatUsd(usdE18: bigint): string {
  return formatUnits(usdE18 / 10n ** 12n, 6)
}
