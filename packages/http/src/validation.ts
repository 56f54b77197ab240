import type { IncomingHttpHeaders } from 'node:http'
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { Ajv2020 } from 'ajv/dist/2020.js'
import type { OpenAPIBackend, Operation } from 'openapi-backend'
import { openSchema, UnknownMembers } from './unknown-members.js'

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

/**
 * The outcome of validating a request: on success, the query and path coerced to their schema
 * types, and the members the document does not know, which were left out (see {@link createOperationValidator}).
 */
export type ValidationOutcome =
  | {
      readonly valid: true
      readonly query: Record<string, unknown>
      readonly params: Record<string, unknown>
      /** Paths of the ignored members (`query.foo`, `body.bar`, `body.txs[0].baz`); empty when none. */
      readonly ignored: readonly string[]
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
 * it.
 *
 * Liberal in what it accepts (issue 18: existing clients add members of their own, e.g. the Relay
 * SDK's `referrer` on `GET /chains` and in signature-step bodies): a query parameter the operation
 * does not declare is ignored, and so is a body member the document does not list. Both are left
 * out of what the handler sees and reported in `ignored`, which the app answers as the
 * `Ignored-Members` header, so a typo stays visible to the caller. Every other rule (types,
 * patterns, required members, the cross-field rules) still refuses the request. The closed body
 * schema is tried first; only a body it refuses is checked again with every object open
 * (`openAjv`), so a request with nothing unknown costs one validation. `OpenAPIBackend.validateRequest` re-parses the request on every call (lodash deep clones,
 * the path template compiled again, headers copied and lower-cased, cookies parsed), which cost a
 * status poll more than the validation itself (issue 11). What only that parser handles (cookie
 * or header parameters, JSON-encoded or non-exploded query parameters) is refused at start-up;
 * request headers are described by security schemes, not parameters.
 */
export function createOperationValidator(
  api: OpenAPIBackend,
  operation: Operation,
  openAjv: Ajv2020,
): OperationValidator {
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
  const queryNames = new Set(
    parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name ?? ''),
  )
  // openapi-backend wraps a lone value of an array-typed query parameter in an array; so do we.
  const arrayQueryNames = new Set(
    parameters
      .filter((parameter) => parameter.in === 'query' && parameter.schema?.type === 'array')
      .map((parameter) => parameter.name ?? ''),
  )
  // Compiled on the operation's first request, not at start-up: a process that starts a service
  // answers a few of its operations, and compiling all of them costs about 2 CPU-s per document.
  let compiled:
    | {
        body: BodyValidation | undefined
        closedBody?: ValidateFunction
        parametersValidator?: ValidateFunction
      }
    | undefined
  const compile = () => {
    const validators = api.validator.getRequestValidatorsForOperation(operationId) ?? []
    const body = bodyValidation(operation, openAjv)
    // openapi-backend compiles the body's validator first, then the parameters'.
    const [closedBody, parametersValidator] = body ? validators : [undefined, validators[0]]
    return { body, closedBody, parametersValidator }
  }
  return (input) => {
    compiled ??= compile()
    const { body, closedBody, parametersValidator } = compiled
    const query: Record<string, unknown> = {}
    const ignored: string[] = []
    // Copies: Ajv coerces in place, and the caller's objects (Koa caches ctx.query) must stay as sent.
    for (const name in input.query) {
      if (!queryNames.has(name)) {
        ignored.push(`query.${name}`)
        continue
      }
      const value = input.query[name]!
      query[name] = Array.isArray(value) ? [...value] : arrayQueryNames.has(name) ? [value] : value
    }
    const path: Record<string, unknown> = { ...input.params }
    const candidate: Record<string, unknown> = { path, query, header: input.headers, cookie: {} }
    const errors: ErrorObject[] = []
    if (body && closedBody) {
      candidate.requestBody = input.body
      if (!closedBody(candidate)) {
        // Refused as written: unknown members are ignored, anything else is still an error.
        if (body.open(candidate)) {
          const unknown = body.unknown.strip(body.schema, input.body, 'body')
          ignored.push(...unknown)
        } else errors.push(...(body.open.errors ?? []))
      }
    }
    if (parametersValidator && !parametersValidator(candidate))
      errors.push(...(parametersValidator.errors ?? []))
    if (errors.length > 0) return { valid: false, errors }
    return { valid: true, query, params: path, ignored }
  }
}

interface BodyValidation {
  /** The body schema as the document writes it (dereferenced). */
  readonly schema: unknown
  /** Validates `{requestBody}` against the schema with every object open. */
  readonly open: ValidateFunction
  readonly unknown: UnknownMembers
}

function bodyValidation(operation: Operation, openAjv: Ajv2020): BodyValidation | undefined {
  const requestBody = operation.requestBody as
    | { required?: boolean; content?: Record<string, { schema?: unknown }> }
    | undefined
  const schema = requestBody?.content?.['application/json']?.schema
  if (schema === undefined) return undefined
  const open = openAjv.compile({
    type: 'object',
    properties: { requestBody: openSchema(schema) },
    required: requestBody?.required === true ? ['requestBody'] : [],
  })
  return { schema, open, unknown: new UnknownMembers(openAjv) }
}
