/** Quote stage 1, resolve the route: the two chains, the parties' addresses and the currencies. */
import {
  type ChainAdapter,
  type IntentsApi,
  PontisError,
  type QuotingCapability,
  type RegisteredChain,
  type Registry,
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

/** A swap of the requested input into `origin.currency` inside the deposit (families with `quoteOriginSwap`). */
export interface OriginSwapRoute {
  readonly from: string
  readonly quoteOriginSwap: NonNullable<QuotingCapability['quoteOriginSwap']>
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
  const outCurrency = destinationCatalog.get(
    destinationChain.adapter.identity.normalizeCurrency(request.destinationCurrency, 'output'),
    destinationChain,
    'output',
  )
  // A token the depository does not take is swapped into one it does inside the deposit, on
  // families that can (SVM through its route source); elsewhere it is unsupported.
  const quoteOriginSwap = originQuoting.quoteOriginSwap?.bind(originQuoting)
  const swap =
    !originCatalog.has(requestedIn) && quoteOriginSwap ? { from: requestedIn, quoteOriginSwap } : undefined
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
    sameAsset: inCurrency.entry.id === outCurrency.entry.id,
  }
  refuseSameChain(request, route)
  return route
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

/** A same-chain request is a swap, which only the solver can fill (`forceSolverExecution`). */
function refuseSameChain(request: QuoteRequest, { origin, destination }: Route): void {
  if (origin.chain.id !== destination.chain.id || request.forceSolverExecution) return
  if (origin.currency.address === destination.currency.address) {
    throw new PontisError(
      'UNSUPPORTED_ROUTE',
      'Origin and destination are the same currency on the same chain: there is nothing to bridge or swap.',
    )
  }
  throw new PontisError(
    'NO_SWAP_ROUTES_FOUND',
    `${origin.chain.record.displayName} has no swap router for a self-executed ${origin.currency.entry.symbol} to ${destination.currency.entry.symbol} swap; set forceSolverExecution to have the solver fill it.`,
  )
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
