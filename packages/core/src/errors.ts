/**
 * The error catalog: every `errorCode` either service can answer, its HTTP status and whether a
 * client may retry. The codes are the enum `ErrorCode` of `openapi/intents.yaml`; a test keeps the
 * two identical, so the document stays the single public list.
 */

/** How a client should treat an error. */
export type ErrorKind = 'expected' | 'transient' | 'unexpected'

export interface ErrorCatalogEntry {
  /** HTTP status the code is answered with. */
  readonly status: number
  /** True when the same request may succeed later (RPC hiccup, price feed down). */
  readonly retryable: boolean
  readonly kind: ErrorKind
}

const expected = (status = 400): ErrorCatalogEntry => ({ status, retryable: false, kind: 'expected' })
const transient = (status = 503): ErrorCatalogEntry => ({ status, retryable: true, kind: 'transient' })
const unexpected = (status = 500): ErrorCatalogEntry => ({ status, retryable: false, kind: 'unexpected' })

export const ERROR_CATALOG = {
  // Expected (4xx) codes of the public interface.
  AMOUNT_TOO_LOW: expected(),
  CHAIN_DISABLED: expected(),
  EXTRA_TXS_NOT_SUPPORTED: expected(),
  FORBIDDEN: expected(403),
  INSUFFICIENT_FUNDS: expected(),
  INSUFFICIENT_LIQUIDITY: expected(),
  INVALID_ADDRESS: expected(),
  INVALID_EXTRA_TXS: expected(),
  INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS: expected(),
  INVALID_INPUT_CURRENCY: expected(),
  INVALID_OUTPUT_CURRENCY: expected(),
  INVALID_RECIPIENT: expected(),
  INVALID_SLIPPAGE_TOLERANCE: expected(),
  NO_INTERNAL_SWAP_ROUTES_FOUND: expected(),
  NO_QUOTES: expected(),
  NO_SWAP_ROUTES_FOUND: expected(),
  ROUTE_TEMPORARILY_RESTRICTED: expected(),
  SANCTIONED_CURRENCY: expected(),
  SANCTIONED_WALLET_ADDRESS: expected(),
  SOLANA_TX_TOO_LARGE: expected(),
  SWAP_IMPACT_TOO_HIGH: expected(),
  UNAUTHORIZED: expected(401),
  UNSUPPORTED_CHAIN: expected(),
  UNSUPPORTED_CURRENCY: expected(),
  UNSUPPORTED_EXECUTION_TYPE: expected(),
  UNSUPPORTED_ROUTE: expected(),
  USER_RECIPIENT_MISMATCH: expected(),
  // Pontis additions: request-shape and lookup failures the public list leaves unnamed.
  INVALID_REQUEST: expected(),
  MALFORMED_JSON: expected(),
  UNSUPPORTED_MEDIA_TYPE: expected(415),
  PAYLOAD_TOO_LARGE: expected(413),
  ROUTE_NOT_FOUND: expected(404),
  METHOD_NOT_ALLOWED: expected(405),
  REQUEST_NOT_FOUND: expected(404),
  TRANSACTION_NOT_FOUND: expected(404),
  NOT_A_DEPOSIT: expected(),
  INVALID_SIGNATURE: expected(),
  SIGNATURE_EXPIRED: expected(),
  RATE_LIMITED: expected(429),
  INVALID_WEBHOOK_URL: expected(),
  INVALID_CONTINUATION: expected(),
  // Transient: retry later.
  SERVICE_UNAVAILABLE: transient(),
  PRICE_FETCH_FAILED: transient(),
  REQUEST_TIMED_OUT: transient(),
  RPC_HTTP_ERROR: transient(),
  // Unexpected (5xx).
  DESTINATION_TX_FAILED: unexpected(),
  ERC20_ROUTER_ADDRESS_NOT_FOUND: unexpected(),
  UNKNOWN_ERROR: unexpected(),
  SWAP_QUOTE_FAILED: unexpected(),
  PERMIT_FAILED: unexpected(),
  NOT_IMPLEMENTED: unexpected(501),
} as const satisfies Record<string, ErrorCatalogEntry>

export type ErrorCode = keyof typeof ERROR_CATALOG

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[]

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, value)
}

/**
 * The one error type engines, plugins and handlers throw for an answer the client should see.
 * The HTTP layer turns it into `{ message, errorCode, errorData?, requestId }` with the catalog's status.
 */
export class PontisError extends Error {
  readonly code: ErrorCode
  readonly errorData: Record<string, unknown> | undefined

  constructor(code: ErrorCode, message: string, errorData?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options)
    this.name = 'PontisError'
    this.code = code
    this.errorData = errorData
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status
  }

  get retryable(): boolean {
    return ERROR_CATALOG[this.code].retryable
  }
}

export function isPontisError(error: unknown): error is PontisError {
  return error instanceof PontisError
}
