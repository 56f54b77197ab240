/**
 * Wire shapes of the aggregator's v1 swap API as the route simulator speaks them (the subset
 * Pontis uses), and the error the simulator answers with. Amounts are integer strings.
 */

export type SwapMode = 'ExactIn' | 'ExactOut'

/** One hop of a quote's route plan. */
export interface QuoteSwapInfo {
  ammKey: string
  label: string
  inputMint: string
  outputMint: string
  inAmount: string
  outAmount: string
  feeAmount: string
  feeMint: string
}

export interface QuoteRoutePlanStep {
  swapInfo: QuoteSwapInfo
  /** Always 100: the simulator never splits a hop across pools. */
  percent: number
}

/** `GET /quote` answer. */
export interface QuoteResponse {
  inputMint: string
  inAmount: string
  outputMint: string
  outAmount: string
  /** ExactIn: the minimum output after slippage; ExactOut: the maximum input after slippage. */
  otherAmountThreshold: string
  swapMode: SwapMode
  slippageBps: number
  platformFee: null
  priceImpactPct: string
  routePlan: QuoteRoutePlanStep[]
  contextSlot: number
  /** Seconds spent routing. */
  timeTaken: number
}

/** An instruction as the API serializes it (data in base64). */
export interface ApiInstruction {
  programId: string
  accounts: { pubkey: string; isSigner: boolean; isWritable: boolean }[]
  data: string
}

/** `POST /swap-instructions` body. */
export interface SwapInstructionsRequest {
  quoteResponse: QuoteResponse
  userPublicKey: string
  /** Default true: wrap SOL input in setup, unwrap SOL output in cleanup. */
  wrapAndUnwrapSol?: boolean
  /** Default false: with it, intermediate hops go pool vault to pool vault (no intermediate ATAs). */
  useSharedAccounts?: boolean
  /** An initialized token account of the output mint to receive the output (default: the user's ATA). */
  destinationTokenAccount?: string
}

/**
 * `POST /swap-instructions` answer. The route is a sequence of SPL Token instructions:
 * `swapInstruction` is the first one and `otherInstructions` carries the rest IN ORDER; a client
 * appends them right after `swapInstruction`, before `cleanupInstruction`.
 */
export interface SwapInstructionsResponse {
  tokenLedgerInstruction: null
  computeBudgetInstructions: ApiInstruction[]
  setupInstructions: ApiInstruction[]
  swapInstruction: ApiInstruction
  cleanupInstruction: ApiInstruction | null
  otherInstructions: ApiInstruction[]
  addressLookupTableAddresses: string[]
  prioritizationFeeLamports: number
  computeUnitLimit: number
}

/**
 * Error codes. All but `SLIPPAGE_TOLERANCE_EXCEEDED` are the aggregator's own; that one stands for
 * its on-chain error 6001, which the simulator reports at `/swap-instructions` time instead (its
 * rates are fixed, so only an altered quote can trip it). `NOT_SUPPORTED` is the generic code, used
 * for invalid parameters too.
 */
export type RouteErrorCode =
  | 'COULD_NOT_FIND_ANY_ROUTE'
  | 'TOKEN_NOT_TRADABLE'
  | 'CIRCULAR_ARBITRAGE_IS_DISABLED'
  | 'CANNOT_COMPUTE_OTHER_AMOUNT_THRESHOLD'
  | 'MARKET_NOT_FOUND'
  | 'NOT_SUPPORTED'
  | 'SLIPPAGE_TOLERANCE_EXCEEDED'

/** Body of every error answer. */
export interface RouteApiError {
  error: string
  errorCode: RouteErrorCode | 'INTERNAL_ERROR'
}

/** A request the simulator refuses (answered with HTTP 400). */
export class RouteError extends Error {
  constructor(
    readonly errorCode: RouteErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'RouteError'
  }
}
