/** Quote stage 1, resolve the route: the two chains, the parties' addresses and the currencies. */
import {
  type ChainAdapter,
  type IntentsApi,
  PontisError,
  type QuotingCapability,
  type RegisteredChain,
  type Registry,
  type SwapSource,
} from '@pontis/core'
import type { ChainCurrency, CurrencyCatalog } from './currencies.js'

export type QuoteRequest = IntentsApi.QuoteRequest

/** One end of a route: its chain, the chain's quoting plugin and currencies, and the currency paid there. */
export interface RouteEnd {
  readonly chain: RegisteredChain
  readonly quoting: QuotingCapability
  readonly catalog: CurrencyCatalog
  readonly currency: ChainCurrency
}

/** A swap of the requested input into `origin.currency` inside the deposit (origins whose deposits can swap). */
export interface OriginSwapRoute {
  readonly from: string
  readonly sources: readonly SwapSource[]
}

/**
 * A swap of the fill's payment (the solver's inventory, `destination.currency`) into the requested
 * token, inside the fill transaction (destinations whose fills can swap).
 */
export interface DestinationSwapRoute {
  /** The requested destination currency (canonical id), which the solver does not pay out itself. */
  readonly to: string
  readonly sources: readonly SwapSource[]
}

/** A same-chain request the user executes as a swap through the chain's swap sources. */
export interface SelfSwapRoute {
  readonly chain: RegisteredChain
  readonly quoting: QuotingCapability
  readonly catalog: CurrencyCatalog
  readonly user: string
  readonly recipient: string
  /** Canonical currency ids; either may be a token the chain does not list. */
  readonly fromCurrency: string
  readonly toCurrency: string
  /** The sources that can build a swap the user sends. */
  readonly sources: readonly SwapSource[]
}

/** Where a quote goes: both ends, who pays, who is paid and where refunds go, in each chain's own rules. */
export interface Route {
  readonly origin: RouteEnd
  readonly destination: RouteEnd
  readonly user: string
  readonly recipient: string
  readonly refundTo: string
  /** `request.appFees[i].recipient` as origin addresses. */
  readonly appFeeRecipients: readonly string[]
  readonly swap: OriginSwapRoute | undefined
  /** The destination swap, when the requested output is not what the solver pays. */
  readonly destinationSwap: DestinationSwapRoute | undefined
  readonly sameAsset: boolean
}

interface Parties {
  readonly user: string
  readonly recipient: string
  readonly refundTo: string
  readonly appFeeRecipients: readonly string[]
}

/** The currency catalogs of a registry's chains, by chain id. */
export type Catalogs = ReadonlyMap<number, CurrencyCatalog>

/**
 * The route of `request`.
 * @throws PontisError CHAIN_DISABLED, UNSUPPORTED_CHAIN, USER_RECIPIENT_MISMATCH, a currency's
 * error, UNSUPPORTED_ROUTE or NO_SWAP_ROUTES_FOUND for a same-chain request.
 */
export function resolveRoute(request: QuoteRequest, registry: Registry, catalogs: Catalogs): Route {
  const originChain = usableChain(registry, request.originChainId, 'origin')
  const destinationChain = usableChain(registry, request.destinationChainId, 'destination')
  const originQuoting = quotingOf(originChain, 'origin')
  const destinationQuoting = quotingOf(destinationChain, 'destination')
  const parties = resolveParties(request, originChain, destinationChain)

  const originCatalog = catalogs.get(originChain.id) as CurrencyCatalog
  const destinationCatalog = catalogs.get(destinationChain.id) as CurrencyCatalog
  const requestedIn = originChain.adapter.identity.normalizeCurrency(request.originCurrency, 'input')
  const requestedOut = destinationChain.adapter.identity.normalizeCurrency(
    request.destinationCurrency,
    'output',
  )
  const destinationSwap = destinationSwapRoute(
    request,
    destinationQuoting,
    destinationCatalog,
    requestedOut,
    originCatalog.find(requestedIn),
  )
  const outCurrency = destinationSwap
    ? destinationCatalog.settlementFor((originCatalog.find(requestedIn) as ChainCurrency).entry.id)
    : destinationCatalog.get(requestedOut, destinationChain, 'output')
  const swap = originSwapRoute(
    request,
    originChain,
    originQuoting,
    originCatalog.has(requestedIn),
    requestedIn,
  )
  const inCurrency = swap
    ? originCatalog.settlementFor(outCurrency.entry.id)
    : originCatalog.get(requestedIn, originChain, 'input')
  const route: Route = {
    origin: { chain: originChain, quoting: originQuoting, catalog: originCatalog, currency: inCurrency },
    destination: {
      chain: destinationChain,
      quoting: destinationQuoting,
      catalog: destinationCatalog,
      currency: outCurrency,
    },
    ...parties,
    swap,
    destinationSwap,
    sameAsset: !destinationSwap && inCurrency.entry.id === outCurrency.entry.id,
  }
  refuseSameChain(request, route)
  return route
}

/**
 * The destination swap of a request, when its fill must swap: the requested output is a token the
 * destination does not list (the solver holds none of it), or the request names the destination's
 * swap sources (`includedDestinationSwapSources`) for an output of another asset than its input, which
 * the solver then buys in the fill instead of paying out of its own stock. The solver pays the
 * destination's currency of the input's asset (else its native currency) into the swap.
 * @throws PontisError UNSUPPORTED_CURRENCY for an unlisted output where fills cannot swap;
 *   NO_SWAP_ROUTES_FOUND when the input is itself an unlisted token (one swap per request).
 */
function destinationSwapRoute(
  request: QuoteRequest,
  quoting: QuotingCapability,
  catalog: CurrencyCatalog,
  requestedOut: string,
  listedIn: ChainCurrency | undefined,
): DestinationSwapRoute | undefined {
  // Only a source whose swaps run inside our own transactions can swap inside a fill.
  const fillSources = (quoting.swapSources ?? []).filter((source) => source.usableInDeposits !== false)
  const canSwap = quoting.fillsCanSwap === true && fillSources.length > 0
  const listedOut = catalog.find(requestedOut)
  if (listedOut) {
    const asked = (request.includedDestinationSwapSources?.length ?? 0) > 0
    if (!canSwap || !asked || !listedIn || listedIn.entry.id === listedOut.entry.id) return undefined
    if (catalog.settlementFor(listedIn.entry.id).address === listedOut.address) return undefined
    return { to: requestedOut, sources: fillSources }
  }
  if (!canSwap) return undefined // refused below as an unsupported currency
  if (!listedIn) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `Both ${request.originCurrency} and ${request.destinationCurrency} are tokens the solver does not hold, which would take a swap on each chain; one swap per request is supported: send or receive a listed currency.`,
    )
  }
  return { to: requestedOut, sources: fillSources }
}

/**
 * A token the depository does not take is swapped into one it does inside the deposit, on
 * families that can (SVM through its route source); elsewhere it is unsupported.
 * @throws PontisError NO_SWAP_ROUTES_FOUND when it needs one and `disableOriginSwaps` forbids it.
 */
function originSwapRoute(
  request: QuoteRequest,
  chain: RegisteredChain,
  quoting: QuotingCapability,
  listed: boolean,
  from: string,
): OriginSwapRoute | undefined {
  // Only sources whose swaps can run inside the deposit transaction.
  const sources = (quoting.swapSources ?? []).filter((source) => source.usableInDeposits !== false)
  if (listed || !quoting.depositsCanSwap || sources.length === 0) return undefined
  if (request.disableOriginSwaps) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `${from} is not a currency the ${chain.record.displayName} depository takes, so it needs an origin swap, and disableOriginSwaps forbids one; deposit a listed currency or drop disableOriginSwaps.`,
    )
  }
  return { from, sources }
}

/**
 * The route of a same-chain request between two currencies that the user executes as a swap
 * (the default; `forceSolverExecution` has the solver pay instead), or undefined for any other request.
 * @throws PontisError NO_SWAP_ROUTES_FOUND when the chain has no source that builds such a swap, or
 *   `disableOriginSwaps` forbids a swap on the origin chain.
 */
export function resolveSelfSwap(
  request: QuoteRequest,
  registry: Registry,
  catalogs: Catalogs,
): SelfSwapRoute | undefined {
  if (request.originChainId !== request.destinationChainId || request.forceSolverExecution) return undefined
  const chain = usableChain(registry, request.originChainId, 'origin')
  const { identity } = chain.adapter
  const fromCurrency = identity.normalizeCurrency(request.originCurrency, 'input')
  const toCurrency = identity.normalizeCurrency(request.destinationCurrency, 'output')
  if (fromCurrency === toCurrency) return undefined // refused by resolveRoute: nothing to swap
  // A same-chain swap is a swap on the origin chain.
  if (request.disableOriginSwaps) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `A same-chain swap on ${chain.record.displayName} swaps on the origin chain, and disableOriginSwaps forbids that; drop disableOriginSwaps.`,
    )
  }
  const quoting = quotingOf(chain, 'origin')
  const sources = (quoting.swapSources ?? []).filter((source) => source.buildSwapSteps)
  if (sources.length === 0) {
    throw new PontisError(
      'NO_SWAP_ROUTES_FOUND',
      `${chain.record.displayName} has no swap source for a self-executed swap; set forceSolverExecution to have the solver fill it.`,
    )
  }
  const { user, recipient } = resolveParties(request, chain, chain)
  const catalog = catalogs.get(chain.id) as CurrencyCatalog
  return { chain, quoting, catalog, user, recipient, fromCurrency, toCurrency, sources }
}

/** The user, recipient, refund and app fee addresses, each normalized by the chain it lives on. */
function resolveParties(
  request: QuoteRequest,
  originChain: RegisteredChain,
  destinationChain: RegisteredChain,
): Parties {
  const originIdentity = originChain.adapter.identity
  const destinationIdentity = destinationChain.adapter.identity
  const user = originIdentity.normalizeAddress(request.user, 'user')
  let recipient: string
  if (request.recipient !== undefined)
    recipient = destinationIdentity.normalizeAddress(request.recipient, 'recipient')
  else if (destinationIdentity.isValidAddress(request.user))
    recipient = destinationIdentity.normalizeAddress(request.user, 'recipient')
  else {
    throw new PontisError(
      'USER_RECIPIENT_MISMATCH',
      `user ${request.user} is not an address on ${destinationChain.record.displayName}; set recipient to a ${destinationChain.record.vmType} address.`,
    )
  }
  const refundTo =
    request.refundTo !== undefined ? originIdentity.normalizeAddress(request.refundTo, 'refundTo') : user
  if (request.recoveryAddress !== undefined)
    originIdentity.normalizeAddress(request.recoveryAddress, 'recoveryAddress')
  const appFeeRecipients = (request.appFees ?? []).map((fee) =>
    originIdentity.normalizeAddress(fee.recipient, 'appFeeRecipient'),
  )
  return { user, recipient, refundTo, appFeeRecipients }
}

/** The same currency on the same chain has nothing to bridge or swap (other same-chain requests are swaps). */
function refuseSameChain(request: QuoteRequest, { origin, destination }: Route): void {
  if (origin.chain.id !== destination.chain.id || request.forceSolverExecution) return
  if (origin.currency.address === destination.currency.address) {
    throw new PontisError(
      'UNSUPPORTED_ROUTE',
      'Origin and destination are the same currency on the same chain: there is nothing to bridge or swap.',
    )
  }
}

function usableChain(registry: Registry, chainId: number, role: 'origin' | 'destination'): RegisteredChain {
  const chain = registry.chain(chainId)
  if (chain.record.disabled) {
    throw new PontisError(
      'CHAIN_DISABLED',
      `${chain.record.displayName} (${chain.id}) is disabled right now; try again later.`,
      { chainId },
    )
  }
  if (role === 'origin' && chain.record.depositEnabled === false) {
    throw new PontisError(
      'CHAIN_DISABLED',
      `Deposits on ${chain.record.displayName} (${chain.id}) are disabled right now.`,
      { chainId },
    )
  }
  return chain
}

function quotingOf(chain: RegisteredChain, role: 'origin' | 'destination'): QuotingCapability {
  const quoting = (chain.adapter as ChainAdapter).quoting
  if (!quoting) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${chain.record.displayName} (${chain.id}) cannot be used as ${role} yet: its ${chain.record.vmType} plugin has no quoting capability.`,
      { chainId: chain.id },
    )
  }
  return quoting
}
