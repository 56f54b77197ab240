import {
  type CurrencyEntry,
  type EnvironmentVariables,
  formatUnits,
  loadEnvironmentFile,
  mulDiv,
  PontisError,
  parseUnits,
  ReadCache,
  type Registry,
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

/** A price as one source read it: USD per whole unit ×10^18 and how old it is. */
export interface SourcePrice {
  readonly usd: UsdPriceE18
  readonly ageSeconds: number
}

/** One place a currency's price can be read from; a {@link CompositePrice} combines several. */
export interface PriceSourceReader {
  /** Names the source in messages, without secrets or URLs (`feed 31337:0xabc…`, `pyth`, `pool …`). */
  readonly label: string
  /** @throws Error (any) when the source cannot answer now; the composite reports it. */
  read(): Promise<SourcePrice>
}

/** A fixed price (`{"type": "static"}`): never stale. */
export function staticReader(usd: string, label = 'static'): PriceSourceReader {
  const price = parseUnits(usd, 18, 'usd')
  return { label, read: async () => ({ usd: price, ageSeconds: 0 }) }
}

/**
 * A Chainlink AggregatorV3Interface feed read through the chain's plugin (`marketData.readPriceFeed`).
 * Refused: a non-positive answer, an answer carried over from an earlier round
 * (`answeredInRound < roundId`), an update in the future. Age = block time − `updatedAt`.
 */
export function feedReader(registry: Registry, chainId: number, address: string): PriceSourceReader {
  const label = `feed ${chainId}:${address}`
  return {
    label,
    async read() {
      const marketData = registry.chain(chainId).adapter.marketData
      if (!marketData) throw new Error(`chain ${chainId} cannot read price feeds`)
      const round = await marketData.readPriceFeed(address)
      if (round.answer <= 0n) throw new Error(`answer ${round.answer} is not positive`)
      if (round.answeredInRound < round.roundId)
        throw new Error(`round ${round.roundId} carries the answer of round ${round.answeredInRound}`)
      if (round.updatedAt === 0n || round.updatedAt > round.blockTimestamp)
        throw new Error(`round ${round.roundId} has no valid update time (${round.updatedAt})`)
      const usd =
        round.decimals <= 18
          ? round.answer * 10n ** BigInt(18 - round.decimals)
          : round.answer / 10n ** BigInt(round.decimals - 18)
      return { usd, ageSeconds: Number(round.blockTimestamp - round.updatedAt) }
    },
  }
}

/**
 * Pyth's Hermes HTTP API (`GET {url}/v2/updates/price/latest?ids[]={id}&parsed=true`): `price × 10^expo`
 * USD, aged by `publish_time` against the service clock.
 */
export function pythReader(
  url: string,
  id: string,
  options: { now?: () => number; timeoutMs?: number } = {},
): PriceSourceReader {
  const now = options.now ?? Date.now
  const endpoint = new URL('v2/updates/price/latest', url.endsWith('/') ? url : `${url}/`)
  endpoint.searchParams.append('ids[]', id)
  endpoint.searchParams.set('parsed', 'true')
  const wanted = id.toLowerCase().replace(/^0x/, '')
  return {
    label: `pyth ${id.slice(0, 10)}…`,
    async read() {
      const response = await fetch(endpoint, { signal: AbortSignal.timeout(options.timeoutMs ?? 2000) })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const body = (await response.json()) as {
        parsed?: Array<{ id?: string; price?: { price?: string; expo?: number; publish_time?: number } }>
      }
      const entry = body.parsed?.find((item) => item.id?.toLowerCase().replace(/^0x/, '') === wanted)
      const price = entry?.price
      if (
        typeof price?.price !== 'string' ||
        !/^-?[0-9]+$/.test(price.price) ||
        typeof price.expo !== 'number' ||
        typeof price.publish_time !== 'number'
      )
        throw new Error('answer without a parsed price')
      const raw = BigInt(price.price)
      if (raw <= 0n) throw new Error(`price ${raw} is not positive`)
      const shift = 18 + price.expo
      const usd = shift >= 0 ? raw * 10n ** BigInt(shift) : raw / 10n ** BigInt(-shift)
      return { usd, ageSeconds: Math.floor(now() / 1000) - price.publish_time }
    },
  }
}

/**
 * A pool's spot price (or TWAP over `twapSeconds`) of `token` in the pool's other token, times that
 * token's USD price (`quote`, itself a composite): e.g. WETH in a WETH/USDC pool × USDC's USD price.
 */
export function poolReader(
  registry: Registry,
  options: { chainId: number; pool: string; token: string; twapSeconds?: number },
  quote: { currencyId: string; price: () => Promise<UsdPriceE18> },
): PriceSourceReader {
  return {
    label: `pool ${options.chainId}:${options.pool}`,
    async read() {
      const marketData = registry.chain(options.chainId).adapter.marketData
      if (!marketData?.readPoolPrice) throw new Error(`chain ${options.chainId} cannot read pool prices`)
      const [pool, quoteUsd] = await Promise.all([
        marketData.readPoolPrice({
          pool: options.pool,
          base: options.token,
          ...(options.twapSeconds ? { twapSeconds: options.twapSeconds } : {}),
        }),
        quote.price(),
      ])
      if (pool.numerator <= 0n || pool.denominator <= 0n) throw new Error('pool has no price')
      // USD per whole base = (quote units per base unit) × 10^baseDecimals / 10^quoteDecimals × quote USD.
      const usd =
        (pool.numerator * 10n ** BigInt(pool.baseDecimals) * quoteUsd) /
        (pool.denominator * 10n ** BigInt(pool.quoteDecimals))
      return { usd, ageSeconds: 0 }
    },
  }
}

/** How a {@link CompositePrice} decides. */
export interface CompositeRules {
  /** Readings older than this are stale and left out. */
  readonly maxAgeSeconds: number
  /** Readings further than this from the median of the fresh ones disagree and are left out. */
  readonly maxDeviationBps: number
  /** Fewest agreeing fresh readings that make a price. */
  readonly minSources: number
}

function median(values: readonly bigint[]): bigint {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] as bigint)
    : ((sorted[middle - 1] as bigint) + (sorted[middle] as bigint)) / 2n
}

/**
 * The price of one currency from several sources: every source read at once; stale and failing
 * ones left out; the median of the fresh ones; readings beyond `maxDeviationBps` of it left out; the
 * median of those that agree when they are at least `minSources` and a majority of the fresh ones.
 * Otherwise PRICE_FETCH_FAILED naming what each source did: never a stale or disputed price.
 */
export class CompositePrice {
  constructor(
    readonly currency: { id: string; symbol: string },
    readonly sources: readonly PriceSourceReader[],
    readonly rules: CompositeRules,
  ) {}

  /** @param symbol How the currency is named in the error (default: the configured one). */
  async read(symbol = this.currency.symbol): Promise<UsdPriceE18> {
    const settled = await Promise.allSettled(this.sources.map((source) => source.read()))
    const problems: string[] = []
    const fresh: Array<{ label: string; usd: bigint }> = []
    for (const [index, result] of settled.entries()) {
      const label = this.sources[index]?.label ?? `source ${index}`
      if (result.status === 'rejected') {
        const reason = result.reason instanceof Error ? result.reason.message : String(result.reason)
        problems.push(`${label} failed (${reason.split('\n')[0]})`)
      } else if (result.value.ageSeconds > this.rules.maxAgeSeconds) {
        problems.push(
          `${label} is stale (${result.value.ageSeconds} s old, limit ${this.rules.maxAgeSeconds} s)`,
        )
      } else {
        fresh.push({ label, usd: result.value.usd })
      }
    }
    const center = fresh.length > 0 ? median(fresh.map((reading) => reading.usd)) : 0n
    const agreeing = fresh.filter((reading) => {
      const distance = reading.usd > center ? reading.usd - center : center - reading.usd
      const agrees = distance * 10_000n <= BigInt(this.rules.maxDeviationBps) * center
      if (!agrees)
        problems.push(
          `${reading.label} disagrees (more than ${this.rules.maxDeviationBps} bps from the median)`,
        )
      return agrees
    })
    if (
      agreeing.length >= this.rules.minSources &&
      agreeing.length * 2 > fresh.length &&
      agreeing.length > 0
    ) {
      return median(agreeing.map((reading) => reading.usd))
    }
    throw new PontisError(
      'PRICE_FETCH_FAILED',
      `No fresh agreeing USD price for ${symbol} (id "${this.currency.id}"): ${problems.join('; ') || 'no sources'}.`,
      { currency: this.currency.id },
    )
  }
}

/**
 * Live prices per currency id, each a {@link CompositePrice}, cached for `cacheMs`: concurrent and
 * repeated asks inside the TTL share one read of the sources (failures are not kept).
 */
export class LivePriceSource implements PriceSource {
  readonly #composites: ReadonlyMap<string, CompositePrice>
  readonly #cache: ReadCache

  constructor(composites: readonly CompositePrice[], options: { cacheMs: number }) {
    this.#composites = new Map(composites.map((composite) => [composite.currency.id, composite]))
    this.#cache = new ReadCache({ ttlMs: options.cacheMs })
  }

  usdPrice(currency: CurrencyEntry): Promise<UsdPriceE18> {
    return this.priceOf(currency.id, currency.symbol)
  }

  /** The price of a configured currency id (pool sources ask for their quote currency this way). */
  priceOf(id: string, symbol = id): Promise<UsdPriceE18> {
    const composite = this.#composites.get(id)
    if (!composite) {
      return Promise.reject(
        new PontisError(
          'PRICE_FETCH_FAILED',
          `No USD price source is configured for ${symbol} (id "${id}").`,
        ),
      )
    }
    return this.#cache.read(id, () => composite.read(symbol))
  }
}

const decimalUsd = { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,18})?$' } as const
const address = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } as const
const positiveInteger = { type: 'integer', minimum: 1 } as const

// Discriminated by `type` / `source` with if/then (not oneOf), so a mistake is reported once, by its key.
const whenType = (type: string, required: readonly string[]) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, a plain object never awaited
  then: { required, properties: Object.fromEntries(required.map((name) => [name, true])) },
})

const sourceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { enum: ['static', 'feed', 'pyth', 'pool'] },
    usd: decimalUsd,
    chainId: positiveInteger,
    address,
    url: { type: 'string', pattern: '^https?://' },
    id: { type: 'string', pattern: '^(0x)?[0-9a-fA-F]{64}$' },
    timeoutMs: positiveInteger,
    pool: address,
    token: address,
    quoteCurrency: { type: 'string', minLength: 1 },
    twapSeconds: positiveInteger,
  },
  allOf: [
    whenType('static', ['usd']),
    whenType('feed', ['chainId', 'address']),
    whenType('pyth', ['url', 'id']),
    whenType('pool', ['chainId', 'pool', 'token', 'quoteCurrency']),
  ],
} as const

const rulesProperties = {
  maxAgeSeconds: positiveInteger,
  maxDeviationBps: { type: 'integer', minimum: 0, maximum: 10000 },
  minSources: positiveInteger,
} as const

const pricesSchema = {
  type: 'object',
  required: ['source'],
  additionalProperties: false,
  properties: {
    $comment: { type: 'string' },
    source: { enum: ['static', 'live'] },
    usd: { type: 'object', additionalProperties: decimalUsd },
    cacheMilliseconds: { type: 'integer', minimum: 0 },
    ...rulesProperties,
    currencies: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['sources'],
        properties: {
          $comment: { type: 'string' },
          sources: { type: 'array', minItems: 1, items: sourceSchema },
          ...rulesProperties,
        },
      },
    },
  },
  allOf: [
    {
      if: { properties: { source: { const: 'static' } }, required: ['source'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, a plain object never awaited
      then: { required: ['usd'], properties: { usd: true } },
    },
    {
      if: { properties: { source: { const: 'live' } }, required: ['source'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, a plain object never awaited
      then: { required: ['currencies'], properties: { currencies: true } },
    },
  ],
} as const

type SourceConfig =
  | { type: 'static'; usd: string }
  | { type: 'feed'; chainId: number; address: string }
  | { type: 'pyth'; url: string; id: string; timeoutMs?: number }
  | {
      type: 'pool'
      chainId: number
      pool: string
      token: string
      quoteCurrency: string
      twapSeconds?: number
    }

interface RulesConfig {
  maxAgeSeconds?: number
  maxDeviationBps?: number
  minSources?: number
}

type PricesFile =
  | { source: 'static'; usd: Record<string, string> }
  | (RulesConfig & {
      source: 'live'
      cacheMilliseconds?: number
      currencies: Record<string, RulesConfig & { sources: SourceConfig[] }>
    })

/** Defaults of a live configuration: a short cache, an hour's age, 1 % deviation, one source. */
export const LIVE_PRICE_DEFAULTS = {
  cacheMilliseconds: 1000,
  maxAgeSeconds: 3600,
  maxDeviationBps: 100,
  minSources: 1,
} as const

/** Problems a live configuration has beyond its schema: unknown chains, cycles through pools. */
function checkLive(
  file: PricesFile,
  registry: Registry | undefined,
): Array<{ path: string; message: string }> {
  if (file.source !== 'live') return []
  const issues: Array<{ path: string; message: string }> = []
  for (const [id, currency] of Object.entries(file.currencies)) {
    for (const [index, source] of currency.sources.entries()) {
      const path = `currencies.${id}.sources[${index}]`
      if (source.type === 'feed' || source.type === 'pool') {
        if (!registry) {
          issues.push({ path, message: 'on-chain sources need the chain registry' })
          continue
        }
        const chain = registry.tryChain(source.chainId)
        if (!chain)
          issues.push({ path: `${path}.chainId`, message: `chain ${source.chainId} is not configured` })
        else if (
          !chain.adapter.marketData ||
          (source.type === 'pool' && !chain.adapter.marketData.readPoolPrice)
        )
          issues.push({
            path: `${path}.chainId`,
            message: `chain ${source.chainId} cannot read ${source.type} prices`,
          })
      }
      if (source.type === 'pool') {
        const quote = file.currencies[source.quoteCurrency]
        if (!quote)
          issues.push({
            path: `${path}.quoteCurrency`,
            message: `"${source.quoteCurrency}" has no price sources here`,
          })
        else if (quote.sources.some((inner) => inner.type === 'pool'))
          issues.push({
            path: `${path}.quoteCurrency`,
            message: `"${source.quoteCurrency}" is itself priced through a pool; pick a currency priced directly`,
          })
      }
    }
  }
  return issues
}

/**
 * `configs/prices.<ENVIRONMENT>.json`: `source: static` with a `usd` table, or `source: live` with
 * `currencies.<id>.sources` (static, feed, pyth, pool) and the composite's rules. A bad file stops
 * start-up with a ConfigError naming the file and the key.
 */
export async function loadPriceSource(options: {
  environment?: string
  configDir?: string
  env?: EnvironmentVariables
  /** Needed by on-chain sources (feeds, pools): they read through the chain's plugin. */
  registry?: Registry
  /** The clock HTTP sources age their prices by (tests pin it). */
  now?: () => number
}): Promise<PriceSource> {
  const file = await loadEnvironmentFile<PricesFile>({
    ...options,
    name: 'prices',
    schema: pricesSchema,
    check: (value) => checkLive(value as PricesFile, options.registry),
  })
  if (file.source === 'static') return new StaticPriceSource(file.usd)
  return livePriceSource(file, options.registry, options.now)
}

function livePriceSource(
  file: Extract<PricesFile, { source: 'live' }>,
  registry: Registry | undefined,
  now: (() => number) | undefined,
): LivePriceSource {
  let live: LivePriceSource | undefined
  const composites = Object.entries(file.currencies).map(([id, currency]) => {
    const readers = currency.sources.map((source): PriceSourceReader => {
      switch (source.type) {
        case 'static':
          return staticReader(source.usd)
        case 'feed':
          return feedReader(registry as Registry, source.chainId, source.address)
        case 'pyth':
          return pythReader(source.url, source.id, {
            ...(now ? { now } : {}),
            ...(source.timeoutMs ? { timeoutMs: source.timeoutMs } : {}),
          })
        default:
          return poolReader(registry as Registry, source, {
            currencyId: source.quoteCurrency,
            price: () => (live as LivePriceSource).priceOf(source.quoteCurrency),
          })
      }
    })
    return new CompositePrice({ id, symbol: id.toUpperCase() }, readers, {
      maxAgeSeconds: currency.maxAgeSeconds ?? file.maxAgeSeconds ?? LIVE_PRICE_DEFAULTS.maxAgeSeconds,
      maxDeviationBps:
        currency.maxDeviationBps ?? file.maxDeviationBps ?? LIVE_PRICE_DEFAULTS.maxDeviationBps,
      minSources: currency.minSources ?? file.minSources ?? LIVE_PRICE_DEFAULTS.minSources,
    })
  })
  live = new LivePriceSource(composites, {
    cacheMs: file.cacheMilliseconds ?? LIVE_PRICE_DEFAULTS.cacheMilliseconds,
  })
  return live
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
