/** Errors thrown by the partner client. */
import type { ErrorBody, StatusRecord } from '@pontis/generated/intents'

/** An HTTP answer of the service that is not a 2xx; `body` is the `ErrorBody` when the service sent one. */
export class PontisApiError extends Error {
  override readonly name = 'PontisApiError'
  /** HTTP status of the answer (0 when the request never got an answer). */
  readonly status: number
  /** The catalogued error code (`INVALID_REQUEST`, `RATE_LIMITED`, ...) when the body carries one. */
  readonly errorCode: string | undefined
  /** The parsed error body, or undefined when the answer was not an `ErrorBody`. */
  readonly body: ErrorBody | undefined

  constructor(status: number, body: ErrorBody | undefined, message?: string, options?: ErrorOptions) {
    super(message ?? body?.message ?? `the service answered ${status}`, options)
    this.status = status
    this.body = body
    this.errorCode = body?.errorCode
  }
}

/**
 * Why an execution stopped without `success`: the request failed (`failure`, or the terminal
 * `fallback`), its deposit was refunded (`refund`), or it did not finish within `timeoutMs` (`timeout`).
 */
export type PontisExecutionErrorKind = 'failure' | 'refund' | 'timeout'

/** Thrown by `executeQuote` when a request ends without `success`; carries the last status record seen. */
export class PontisExecutionError extends Error {
  override readonly name = 'PontisExecutionError'
  readonly kind: PontisExecutionErrorKind
  /** The request the quote created. */
  readonly requestId: string | undefined
  /** The last status record read; undefined only when a timeout struck before any status was read. */
  readonly status: StatusRecord | undefined

  constructor(
    kind: PontisExecutionErrorKind,
    requestId: string | undefined,
    status: StatusRecord | undefined,
    options?: ErrorOptions,
  ) {
    const reason = status && status.failReason !== 'N/A' ? ` (${status.failReason})` : ''
    super(
      kind === 'timeout'
        ? `request ${requestId ?? '(unknown)'} did not finish in time; last status ${status?.status ?? 'unknown'}`
        : `request ${requestId ?? '(unknown)'} ended with ${status?.status ?? kind}${reason}`,
      options,
    )
    this.kind = kind
    this.requestId = requestId
    this.status = status
  }
}
