import type { IncomingHttpHeaders } from 'node:http'
import type { ErrorObject } from 'ajv'
import type { OpenAPIBackend, Operation } from 'openapi-backend'

/** A request as both dispatch paths have it: query and path already split into values. */
export interface ValidationInput {
  /** Query values; a repeated name is an array, as Koa's `ctx.query` gives it. */
  readonly query: Readonly<Record<string, string | string[]>>
  /** Path template values, decoded. */
  readonly params: Readonly<Record<string, string>>
  readonly headers: IncomingHttpHeaders
  /** The parsed JSON body; only looked at for operations with a request body. */
  readonly body?: unknown
}

/** The outcome of validating a request: on success, the query and path coerced to their schema types. */
export type ValidationOutcome =
  | {
      readonly valid: true
      readonly query: Record<string, unknown>
      readonly params: Record<string, unknown>
    }
  | { readonly valid: false; readonly errors: readonly ErrorObject[] }

/** Validates the requests of one operation. */
export type OperationValidator = (input: ValidationInput) => ValidationOutcome

interface ParameterShape {
  readonly in?: string
  readonly name?: string
  readonly content?: unknown
  readonly style?: string
  readonly explode?: boolean
  readonly schema?: { readonly type?: unknown }
}

/**
 * The validator of one operation: openapi-backend's own compiled Ajv validators (body, then the
 * `{path, query, header, cookie}` object), called with the request as the dispatch already split
 * it. `OpenAPIBackend.validateRequest` re-parses the request on every call (lodash deep clones,
 * the path template compiled again, headers copied and lower-cased, cookies parsed), which cost a
 * status poll more than the validation itself (issue 11). What only that parser handles (cookie
 * or header parameters, JSON-encoded or non-exploded query parameters) is refused at start-up;
 * request headers are described by security schemes, not parameters.
 */
export function createOperationValidator(api: OpenAPIBackend, operation: Operation): OperationValidator {
  const operationId = operation.operationId ?? ''
  const parameters = (operation.parameters ?? []) as readonly ParameterShape[]
  const unsupported = parameters.some(
    (parameter) =>
      (parameter.in !== 'query' && parameter.in !== 'path') ||
      parameter.content !== undefined ||
      parameter.style !== undefined ||
      parameter.explode === false,
  )
  if (unsupported) {
    throw new Error(
      `${operationId}: only plain query and path parameters are supported (no cookie or header parameters, no content or style)`,
    )
  }
  const hasBody = operation.requestBody !== undefined

  // openapi-backend wraps a lone value of an array-typed query parameter in an array; so do we.
  const arrayQueryNames = new Set(
    parameters
      .filter((parameter) => parameter.in === 'query' && parameter.schema?.type === 'array')
      .map((parameter) => parameter.name ?? ''),
  )
  const validators = api.validator.getRequestValidatorsForOperation(operationId) ?? []
  return (input) => {
    const query: Record<string, unknown> = {}
    // Copies: Ajv coerces in place, and the caller's objects (Koa caches ctx.query) must stay as sent.
    for (const name in input.query) {
      const value = input.query[name]!
      query[name] = Array.isArray(value) ? [...value] : arrayQueryNames.has(name) ? [value] : value
    }
    const path: Record<string, unknown> = { ...input.params }
    const candidate: Record<string, unknown> = { path, query, header: input.headers, cookie: {} }
    if (hasBody) candidate.requestBody = input.body
    const errors: ErrorObject[] = []
    for (const validate of validators) {
      validate(candidate)
      if (validate.errors) errors.push(...validate.errors)
    }
    if (errors.length > 0) return { valid: false, errors }
    return { valid: true, query, params: path }
  }
}
