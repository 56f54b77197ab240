/**
 * Quote arithmetic in smallest units: pure bigint math, no chain or price I/O. Everything is in
 * the INPUT currency until the final conversion, so the identity below holds exactly:
 *
 *   amountIn + subsidized = relayerGas + relayerService + app + swapCost + convertible
 *   amountOut = floor(convertible × rate)
 *
 * `relayerService` may be negative (a rebalance reward); sponsors never pay a negative fee.
 */
import { BPS_DENOMINATOR, mulDiv, PontisError } from '@pontis/core'

/** A sponsorable fee bucket; `relay` is the service's own fee (the specs' `service`). */
export type FeeComponent = 'execution' | 'swap' | 'relay' | 'app' | 'rent'

/** Cap allocation order: destination costs first, the swap last (its size depends on the others). */
export const FEE_COMPONENTS: readonly FeeComponent[] = ['execution', 'rent', 'relay', 'app', 'swap']
/** What `subsidizeFees` sponsors when `sponsoredFeeComponents` is omitted (`rent` stays user-paid). */
export const DEFAULT_SPONSORED_COMPONENTS: readonly FeeComponent[] = ['execution', 'swap', 'relay', 'app']

/** out = in × numerator / denominator; both positive. */
export interface Conversion {
  readonly numerator: bigint
  readonly denominator: bigint
}

/** An app fee of `numerator / denominator` basis points (fractional bps allowed). */
export interface AppFeeTerm {
  readonly numerator: bigint
  readonly denominator: bigint
}

export interface FeeTerms {
  /** Destination fill cost including any gas top-up value, input currency. */
  readonly executionCost: bigint
  /** Destination rent (new accounts), input currency; 0 on families without rent. */
  readonly rentCost: bigint
  readonly serviceBps: bigint
  /** Floor of the service fee before any rebalance reward, input currency. */
  readonly minimumServiceFee: bigint
  /** Reward given back when the fill rebalances solver inventory; 0 otherwise. */
  readonly rebalanceRewardBps: bigint
  readonly appFees: readonly AppFeeTerm[]
  /** Cross-currency spread; 0 when input and output are the same asset. */
  readonly swapSpreadBps: bigint
  readonly sponsorship?: {
    readonly components: ReadonlySet<FeeComponent>
    /** Most the sponsor pays, input currency; unlimited when absent. */
    readonly cap?: bigint
  }
}

export interface ComponentAmounts {
  readonly total: bigint
  readonly sponsored: bigint
}

export interface AmountBreakdown {
  readonly amountIn: bigint
  readonly amountOut: bigint
  /** Input-currency amount converted at the rate. */
  readonly convertible: bigint
  readonly relayerGas: bigint
  readonly relayerService: bigint
  readonly app: bigint
  readonly appFees: readonly bigint[]
  readonly swapCost: bigint
  readonly subsidized: bigint
  readonly capHit: boolean
  readonly components: Readonly<Record<FeeComponent, ComponentAmounts>>
}

const ceilBps = (amount: bigint, bps: bigint) => mulDiv(amount, bps, BPS_DENOMINATOR, 'ceil')
const floorBps = (amount: bigint, bps: bigint) => mulDiv(amount, bps, BPS_DENOMINATOR, 'floor')
const positive = (value: bigint) => (value > 0n ? value : 0n)

/** What `amountIn` buys after fees and sponsorship. @throws AMOUNT_TOO_LOW when fees eat it all. */
export function breakdownForInput(
  amountIn: bigint,
  terms: FeeTerms,
  conversion: Conversion,
): AmountBreakdown {
  if (amountIn <= 0n) throw new PontisError('AMOUNT_TOO_LOW', 'The amount must be greater than zero.')
  const appFees = terms.appFees.map((fee) =>
    mulDiv(amountIn, fee.numerator, BPS_DENOMINATOR * fee.denominator, 'ceil'),
  )
  const app = appFees.reduce((sum, fee) => sum + fee, 0n)
  const serviceFee = ceilBps(amountIn, terms.serviceBps)
  const relayerService =
    (serviceFee > terms.minimumServiceFee ? serviceFee : terms.minimumServiceFee) -
    floorBps(amountIn, terms.rebalanceRewardBps)
  const relayerGas = terms.executionCost + terms.rentCost

  const selected = terms.sponsorship?.components
  let remaining = terms.sponsorship ? (terms.sponsorship.cap ?? -1n) : 0n
  let capHit = false
  const sponsor = (component: FeeComponent, total: bigint): bigint => {
    if (!selected?.has(component)) return 0n
    const wanted = positive(total)
    if (remaining < 0n) return wanted
    const granted = wanted < remaining ? wanted : remaining
    if (granted < wanted) capHit = true
    remaining -= granted
    return granted
  }
  const components: Partial<Record<FeeComponent, ComponentAmounts>> = {}
  const totals: Record<Exclude<FeeComponent, 'swap'>, bigint> = {
    execution: terms.executionCost,
    rent: terms.rentCost,
    relay: relayerService,
    app,
  }
  let sponsoredBeforeSwap = 0n
  for (const component of FEE_COMPONENTS) {
    if (component === 'swap') continue
    const total = totals[component]
    const sponsored = sponsor(component, total)
    sponsoredBeforeSwap += sponsored
    components[component] = { total, sponsored }
  }
  const swapInput = amountIn + sponsoredBeforeSwap - relayerGas - relayerService - app
  if (swapInput <= 0n) {
    throw new PontisError(
      'AMOUNT_TOO_LOW',
      `The amount ${amountIn} does not cover the fees (${relayerGas + relayerService + app - sponsoredBeforeSwap} in the input currency's smallest unit).`,
      {
        amount: amountIn.toString(),
        fees: (relayerGas + relayerService + app - sponsoredBeforeSwap).toString(),
      },
    )
  }
  const swapCost = ceilBps(swapInput, terms.swapSpreadBps)
  const swapSponsored = sponsor('swap', swapCost)
  components.swap = { total: swapCost, sponsored: swapSponsored }
  const convertible = swapInput - swapCost + swapSponsored
  const amountOut = mulDiv(convertible, conversion.numerator, conversion.denominator, 'floor')
  if (amountOut <= 0n) {
    throw new PontisError('AMOUNT_TOO_LOW', `The amount ${amountIn} converts to nothing after fees.`, {
      amount: amountIn.toString(),
    })
  }
  return {
    amountIn,
    amountOut,
    convertible,
    relayerGas,
    relayerService,
    app,
    appFees,
    swapCost,
    subsidized: sponsoredBeforeSwap + swapSponsored,
    capHit,
    components: components as Record<FeeComponent, ComponentAmounts>,
  }
}

function tryInput(amountIn: bigint, terms: FeeTerms, conversion: Conversion): AmountBreakdown | undefined {
  try {
    return breakdownForInput(amountIn, terms, conversion)
  } catch (error) {
    if (error instanceof PontisError && error.code === 'AMOUNT_TOO_LOW') return undefined
    throw error
  }
}

const MAX_UINT256 = (1n << 256n) - 1n

/**
 * The smallest input (up to rounding steps) whose output reaches `amountOut`; the answer's
 * `amountOut` is at least the target and the surplus is at most a few smallest units.
 */
export function breakdownForOutput(
  amountOut: bigint,
  terms: FeeTerms,
  conversion: Conversion,
): AmountBreakdown {
  if (amountOut <= 0n) throw new PontisError('AMOUNT_TOO_LOW', 'The amount must be greater than zero.')
  const reaches = (input: bigint) => {
    const result = tryInput(input, terms, conversion)
    return result !== undefined && result.amountOut >= amountOut ? result : undefined
  }
  let high = mulDiv(amountOut, conversion.denominator, conversion.numerator, 'ceil')
  if (high < 1n) high = 1n
  while (!reaches(high)) {
    if (high > MAX_UINT256)
      throw new PontisError('AMOUNT_TOO_LOW', 'No input amount reaches the requested output.')
    high *= 2n
  }
  let low = 0n // never reaches (amounts are positive)
  while (high - low > 1n) {
    const middle = (low + high) / 2n
    if (reaches(middle)) high = middle
    else low = middle
  }
  return reaches(high) as AmountBreakdown
}

/** `value` less `bps` basis points, rounded down: the minimum accepted under a slippage tolerance. */
export function withSlippage(value: bigint, bps: bigint): bigint {
  return value - ceilBps(value, bps)
}

/** Parses a non-negative decimal basis-point string ("12.5") into an exact fraction. */
export function parseBps(text: string): AppFeeTerm {
  const match = /^([0-9]+)(?:\.([0-9]{1,18}))?$/.exec(text)
  if (!match)
    throw new PontisError(
      'INVALID_REQUEST',
      `"${text}" is not a non-negative decimal number of basis points.`,
    )
  const fraction = match[2] ?? ''
  return { numerator: BigInt(`${match[1]}${fraction}`), denominator: 10n ** BigInt(fraction.length) }
}
