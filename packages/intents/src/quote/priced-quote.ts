import type { DestinationCall, OriginRequestOptions, OriginSwapQuote } from '@pontis/core'
import type { Charges, Payout } from './amounts.js'
import type { DestinationSwapLeg } from './destination-swap.js'
import type { Costs, PricedRoute } from './pricing.js'
import type { QuoteRequest, Route } from './route.js'

/**
 * A quote as the route, pricing and fee stages leave it: everything the order, the answer, the
 * steps and the stored request are built from.
 */
export interface PricedQuote {
  readonly request: QuoteRequest
  readonly route: Route
  readonly sides: PricedRoute
  readonly costs: Costs
  readonly charges: Charges
  readonly payout: Payout
  /** The origin swap, exact input or exact output, when the route has one. */
  readonly originSwap: OriginSwapQuote | undefined
  /** The destination swap the fill runs, when the requested output is not what the solver pays. */
  readonly destinationSwap: DestinationSwapLeg | undefined
  readonly calls: readonly DestinationCall[]
  readonly familyOptions: OriginRequestOptions
  readonly usePermit: boolean
  /** When the quote was priced, Unix milliseconds. */
  readonly nowMs: number
  /** Unix milliseconds after which the request is no longer filled. */
  readonly expiresAt: number
}
