import { type IntentsApi, type Logger, PontisError, type RegisteredChain, type Registry } from '@pontis/core'
import type { Hex } from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { computeCharges, computePayout } from './amounts.js'
import { CurrencyCatalog } from './currencies.js'
import { type DestinationSwapLeg, fillSwapOf, quoteDestinationSwap } from './destination-swap.js'
import {
  type InventoryLookup,
  inventoryLookup,
  type LiquidityBook,
  type LiquidityClaim,
  type LiquidityDescriber,
  refuseUnlessAvailable,
} from './inventory.js'
import {
  checkOptions,
  checkPermit,
  destinationAuthorizations,
  destinationCalls,
  familyOptions,
} from './options.js'
import { buildOrder, type IssuedOrder, issueOrder } from './order.js'
import { type QuotedRequest, quotedRequest, retryTakenDepositTag } from './persist.js'
import type { PricedQuote } from './priced-quote.js'
import type { PriceSource } from './prices.js'
import { estimateCosts, priceRoute, quoteOutputSwap } from './pricing.js'
import { quoteResponse } from './response.js'
import { type QuoteRequest, type Route as QuoteRoute, resolveRoute, resolveSelfSwap } from './route.js'
import { quoteSelfSwap, type SelfSwapRequest } from './self-swap.js'
import { type SolverSettings, solverCredentialsFor } from './settings.js'
import { createStepCheck, type StepCheck } from './step-check.js'
import { apiSteps, prepareDepositSteps } from './steps.js'

export interface QuoteEngineOptions {
  readonly registry: Registry
  readonly prices: PriceSource
  readonly settings: SolverSettings
  readonly logger: Logger
  /** Persists a quoted request (status `waiting`); not called for `/price`. */
  readonly saveRequest: (request: QuotedRequest | SelfSwapRequest) => Promise<void>
  /**
   * The solver's liquidity shared by every instance: a stored quote reserves its payout there, a
   * price checks against it. Without one, a quote is only checked against the balance it read.
   */
  readonly liquidity?: LiquidityBook
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number
}

export interface QuoteContext {
  /** Build steps and store the request (`/quote`, `/quote/v2`) or only price it (`/price`). */
  readonly withSteps: boolean
  readonly apiKeyId?: string
}

/** A claim on the solver's liquidity, with what a refusal names. */
interface DescribedClaim {
  readonly claim: LiquidityClaim
  readonly describe: LiquidityDescriber
}

/** The quote's claim on the destination's solver balance; none when the family cannot read it. */
function liquidityClaim(
  destination: QuoteRoute['destination'],
  balance: bigint | undefined,
  needed: bigint,
): DescribedClaim | undefined {
  if (balance === undefined) return undefined
  const { chain, currency } = destination
  return {
    claim: { chainId: chain.id, currency: currency.address, balance, needed },
    describe: {
      symbol: currency.entry.symbol,
      decimals: currency.entry.decimals,
      chainName: chain.record.displayName,
    },
  }
}

/**
 * Turns a validated quote request into a quote, stage by stage: resolve the route through the
 * chain plugins (route.ts, options.ts), price it from the chains and the price source
 * (pricing.ts), compute the fees exactly (amounts.ts, fees.ts), build the protocol order
 * (order.ts) and the origin steps (steps.ts), and store the request as `waiting` (persist.ts).
 */
export class QuoteEngine {
  readonly #options: QuoteEngineOptions
  readonly #catalogs = new Map<number, CurrencyCatalog>()
  readonly #solver: PrivateKeyAccount
  readonly #solverAddresses = new Map<number, string>()
  readonly #now: () => number
  readonly #inventory: InventoryLookup
  readonly #checkSteps: StepCheck

  constructor(options: QuoteEngineOptions) {
    this.#options = options
    this.#inventory = inventoryLookup(options.registry, options.settings.inventory)
    this.#checkSteps = createStepCheck(options.registry)
    this.#now = options.now ?? Date.now
    this.#solver = privateKeyToAccount(options.settings.solver.privateKey)
    for (const chain of options.registry.chains()) this.#catalogs.set(chain.id, new CurrencyCatalog(chain))
  }

  get solverAddress(): Hex {
    return this.#solver.address
  }

  async quote(request: QuoteRequest, context: QuoteContext): Promise<IntentsApi.QuoteResponse> {
    const { registry, settings, prices } = this.#options
    const selfSwap = resolveSelfSwap(request, registry, this.#catalogs)
    if (selfSwap) {
      const swapContext = {
        prices,
        settings,
        nowMs: this.#now(),
        withSteps: context.withSteps,
        apiKeyId: context.apiKeyId,
      }
      const swap = await quoteSelfSwap(request, selfSwap, swapContext)
      // Stored like any quoted request, so its status, history and webhooks follow the swap.
      if (swap.request) await this.#options.saveRequest(swap.request)
      return swap.response
    }
    // Resolve the route, and refuse what it cannot honour.
    const route = resolveRoute(request, registry, this.#catalogs)
    checkOptions(request, route)
    await checkPermit(request, route)
    const usePermit = request.usePermit === true
    const calls = destinationCalls(request, route)
    const options = familyOptions(request, route.origin.quoting)
    const solverOnDestination = this.#solverOn(route.destination.chain)

    // A destination swap of an exact output is priced as a bridge of the swap's (most) input.
    const { bridged, firstSwap } = await this.#destinationSwapFirst(request, route)

    // Price it: USD prices, then the chains' costs.
    const sides = await priceRoute(route, prices)
    const nowMs = this.#now()
    const expiresAt = nowMs + (request.ttl ?? settings.quote.ttlSeconds) * 1000
    const authorizations = destinationAuthorizations(request)
    const asked = {
      usePermit,
      calls,
      authorizations,
      familyOptions: options,
      solverOnDestination,
      ...(firstSwap ? { destinationSwap: fillSwapOf(firstSwap) } : {}),
    }
    const costs = await estimateCosts(bridged, route, sides, asked, settings)

    // Compute the fees, and what the recipient gets.
    const charges = computeCharges(bridged, route, sides, costs, settings, this.#inventory)
    const { amountIn } = charges.breakdown
    const originSwap = costs.originSwap ?? (await quoteOutputSwap(bridged, route, amountIn, costs, settings))
    const payout = computePayout(bridged, route, charges, costs, calls)
    const destinationSwap = firstSwap
      ? await this.#destinationSwapLeg(request, route, payout.paidOut, firstSwap)
      : undefined
    const liquidity = liquidityClaim(route.destination, costs.solverBalance, payout.neededLiquidity)
    // More than the whole balance is refused before any order is built (commitments are checked below).
    if (liquidity) refuseUnlessAvailable(liquidity.claim, 0n, liquidity.describe)
    const priced: PricedQuote = {
      request: bridged,
      route,
      sides,
      costs,
      charges,
      payout,
      originSwap,
      destinationSwap,
      calls,
      familyOptions: options,
      usePermit,
      nowMs,
      expiresAt,
    }

    // Build the order; its struct hash is the request id that tags the deposit and the fill.
    const order = buildOrder(priced, this.#solver.address, registry.hub()?.name)
    const issued = await issueOrder(order, request, context.withSteps, this.#solver, route.origin.quoting)
    const response = quoteResponse(priced, issued, settings)
    // Families with a size limit compile the deposit for every quote, prices included: an oversized
    // route must be refused before anyone relies on it.
    const sizeLimited = route.origin.quoting.checkTransactionSize !== undefined
    const stored = context.withSteps && issued.id !== undefined
    // A quote that will be stored reserves its payout below; anything else only checks it.
    if (!stored && liquidity) await this.#checkLiquidity(liquidity)
    if (!stored && !sizeLimited) return response
    return retryTakenDepositTag(() => this.#stepsAndStore(priced, issued, response, context, liquidity))
  }

  /**
   * The destination swap's first quote, for the fill's cost: an exact output's (whose input the
   * bridge then delivers: the request is priced as a bridge of that input), or an exact input's of
   * the requested amount in the destination's units (its size is fixed once the fees are known).
   */
  async #destinationSwapFirst(
    request: QuoteRequest,
    route: QuoteRoute,
  ): Promise<{ bridged: QuoteRequest; firstSwap: DestinationSwapLeg | undefined }> {
    if (!route.destinationSwap) return { bridged: request, firstSwap: undefined }
    const { settings } = this.#options
    const currency = route.destination.catalog.unlisted(route.destinationSwap.to, 0)
    if (request.tradeType === 'EXACT_OUTPUT') {
      const wanted = BigInt(request.amount)
      const quote = await quoteDestinationSwap(
        request,
        route,
        { tradeType: 'EXACT_OUTPUT', amount: wanted },
        settings,
      )
      const leg = {
        quote,
        amountIn: quote.amountIn,
        amountOut: wanted,
        minimumAmountOut: wanted,
        currency,
        request,
      }
      return { bridged: { ...request, amount: quote.amountIn.toString() }, firstSwap: leg }
    }
    const inDecimals = route.origin.currency.entry.decimals
    const outDecimals = route.destination.currency.entry.decimals
    const amount = (BigInt(request.amount) * 10n ** BigInt(outDecimals)) / 10n ** BigInt(inDecimals)
    const quote = await quoteDestinationSwap(request, route, { tradeType: 'EXACT_INPUT', amount }, settings, {
      checkImpact: false,
    })
    const leg = {
      quote,
      amountIn: amount,
      amountOut: quote.amountOut,
      minimumAmountOut: quote.minimumAmountOut,
      currency,
      request,
    }
    return { bridged: request, firstSwap: leg }
  }

  /**
   * The destination swap the fill runs: all of the payout `paidOut` goes in. An exact output keeps
   * its asked amount as the guaranteed output (a payout above the swap's quoted input buys more, for
   * the recipient); an exact input is quoted again for the payout and held to the impact limit.
   */
  async #destinationSwapLeg(
    request: QuoteRequest,
    route: QuoteRoute,
    paidOut: bigint,
    first: DestinationSwapLeg,
  ): Promise<DestinationSwapLeg> {
    const currency = route.destination.catalog.unlisted(first.quote.toCurrency, first.quote.toDecimals)
    if (request.tradeType === 'EXACT_OUTPUT') return { ...first, amountIn: paidOut, currency }
    const quote = await quoteDestinationSwap(
      request,
      route,
      { tradeType: 'EXACT_INPUT', amount: paidOut },
      this.#options.settings,
    )
    return {
      quote,
      amountIn: paidOut,
      amountOut: quote.amountOut,
      minimumAmountOut: quote.minimumAmountOut,
      currency,
      request,
    }
  }

  async #checkLiquidity({ claim, describe }: DescribedClaim): Promise<void> {
    const book = this.#options.liquidity
    if (book) await book.check(claim, describe)
    else refuseUnlessAvailable(claim, 0n, describe)
  }

  /** Builds the steps and, for a quote with steps, stores the request; a price only checks the steps' size. */
  async #stepsAndStore(
    priced: PricedQuote,
    issued: IssuedOrder,
    response: IntentsApi.QuoteResponse,
    context: QuoteContext,
    liquidity: DescribedClaim | undefined,
  ): Promise<IntentsApi.QuoteResponse> {
    const { id } = issued
    const { route } = priced
    const nonceTag = id ? route.origin.quoting.depositNonceTag?.(route.user, priced.nowMs) : undefined
    const prepared = await prepareDepositSteps(priced, issued, nonceTag)
    this.#checkSteps(route.origin.chain, prepared)
    if (!context.withSteps || !id) return response
    response.steps = apiSteps(prepared, id, issued.depositAddress, route.destination.chain)
    const parts = {
      fees: response.fees,
      details: response.details,
      prepared,
      depositTag: nonceTag?.tag,
      apiKeyId: context.apiKeyId,
    }
    const request = quotedRequest(priced, { ...issued, id }, parts)
    const book = this.#options.liquidity
    if (!liquidity) {
      await this.#options.saveRequest(request)
      return response
    }
    if (!book) {
      await this.#checkLiquidity(liquidity)
      await this.#options.saveRequest(request)
      return response
    }
    await book.reserve({ ...liquidity.claim, requestId: id, expiresAt: priced.expiresAt }, liquidity.describe)
    try {
      await this.#options.saveRequest(request)
    } catch (error) {
      // Not answered, so not promised: give the liquidity back now rather than at expiry.
      await book.release(id).catch(() => undefined)
      throw error
    }
    return response
  }

  /**
   * The solver's account on `chain` (its family's key), for fill costs and liquidity. Only the
   * destination's plugin can name it: a chain without filling cannot be paid on.
   */
  #solverOn(chain: RegisteredChain): string {
    let address = this.#solverAddresses.get(chain.id)
    if (address === undefined) {
      const filling = chain.adapter.filling
      if (!filling) {
        throw new PontisError(
          'UNSUPPORTED_CHAIN',
          `${chain.record.displayName} (${chain.id}) cannot be used as destination: its ${chain.record.vmType} plugin has no filling capability, so no solver can pay there.`,
          { chainId: chain.id },
        )
      }
      address = filling.solverAddress(solverCredentialsFor(this.#options.settings, chain.record.vmType))
      this.#solverAddresses.set(chain.id, address)
    }
    return address
  }
}
