import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import Router from '@koa/router'
import { isPontisError, type Logger, PontisError } from '@pontis/core'
import Koa from 'koa'
import { type Document, OpenAPIBackend, type Operation, ValidationContext } from 'openapi-backend'
import { createOpenApiAjv } from './ajv.js'
import { isJsonContentType, parseJsonBody, readTextBody } from './body.js'
import { documentationPage, registerDocumentationAssets } from './docs.js'
import type { LoadedDocument } from './document.js'
import { describeProblems, toFieldProblems } from './problems.js'

/** The request as a handler sees it: validated against the document, query and path coerced to their types. */
export interface OperationRequest<
  Body = unknown,
  Query = Record<string, unknown>,
  Path = Record<string, unknown>,
> {
  readonly operationId: string
  readonly body: Body
  readonly query: Query
  readonly path: Path
  readonly headers: IncomingHttpHeaders
  /** Correlation id of this HTTP request (`x-request-id`), echoed in error bodies. */
  readonly requestId: string
  /** Client address as Koa sees it (honours `X-Forwarded-For` only when proxy trust is on). */
  readonly clientIp: string
  /** The exact body text received, for signature checks. */
  readonly rawBody: string | undefined
}

export interface OperationResponse<Status extends number = number, Body = unknown> {
  readonly status: Status
  readonly body: Body
  readonly headers?: Readonly<Record<string, string>>
  /** Content type; JSON when omitted. */
  readonly type?: string
}

/** The success responses of an operation, from the generated `XxxResponses` type. */
export type ResponseOf<Responses> = {
  [Status in keyof Responses & number]: OperationResponse<Status, Responses[Status]>
}[keyof Responses & number]

/** The request shape from the generated `XxxData` type (`body`, `query`, `path`). */
export type RequestOf<Data> = OperationRequest<
  Data extends { body?: infer B } ? B : undefined,
  Data extends { query?: infer Q } ? Q : Record<string, never>,
  Data extends { path?: infer P } ? P : Record<string, never>
>

/** Handlers return their success answer; failures are thrown as `PontisError`. */
export type OperationHandler<Request = OperationRequest, Response = OperationResponse> = (
  request: Request,
) => Promise<Response> | Response

// Handler maps are checked against the document at start-up; the per-operation types live in the services.
// biome-ignore lint/suspicious/noExplicitAny: a map of handlers whose request types differ per operation
export type HandlerMap = Readonly<Record<string, OperationHandler<any, OperationResponse>>>

export interface ApiAppOptions {
  readonly loaded: LoadedDocument
  readonly handlers: HandlerMap
  readonly logger: Logger
  /** Largest accepted request body. Default 256 KiB. */
  readonly bodyLimitBytes?: number
  /** Trust `X-Forwarded-For` for the client address. Default false. */
  readonly trustProxy?: boolean
  /** Runs after request ids and error handling, before routing (rate limits, auth). */
  readonly middleware?: readonly Koa.Middleware[]
}

export interface ApiApp {
  readonly koa: Koa
  readonly api: OpenAPIBackend
  readonly operationIds: readonly string[]
}

export const DEFAULT_BODY_LIMIT_BYTES = 256 * 1024

const CORS_ALLOW_HEADERS = 'content-type, x-api-key, x-request-id, relay-sdk-version, authorization'
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

function toKoaPath(openApiPath: string): string {
  return openApiPath.replaceAll(/\{([^}]+)\}/g, ':$1')
}

function errorBody(error: PontisError, requestId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { message: error.message, errorCode: error.code, requestId }
  if (error.errorData !== undefined) body.errorData = error.errorData
  return body
}

/**
 * Builds the Koa app for one OpenAPI document: every operation is routed by @koa/router from the
 * document's paths, validated by openapi-backend with Ajv 2020, and answered by the handler of its
 * operationId. Failures of any kind answer the document's error body; nothing escapes as a bare 500.
 */
export async function createApiApp(options: ApiAppOptions): Promise<ApiApp> {
  const { loaded, logger } = options
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES
  const api = new OpenAPIBackend({
    definition: structuredClone(loaded.document) as unknown as Document,
    // The document was validated as 3.1 by loadOpenApiDocument; `quick` skips openapi-backend's
    // 3.0-only check, which would otherwise leave the router with no operations.
    quick: true,
    strict: true,
    coerceTypes: true,
    // Query and path values arrive as text and are coerced; JSON bodies are validated as sent.
    customizeAjv: (_ajv, ajvOptions, context) =>
      createOpenApiAjv({
        coerceTypes: context === ValidationContext.Params ? (ajvOptions.coerceTypes ?? false) : false,
      }),
  })
  await api.init()
  const operations = api.getOperations()
  if (operations.length === 0) throw new Error(`${loaded.path}: openapi-backend found no operations`)

  const handlers: Record<string, OperationHandler<OperationRequest, OperationResponse>> = {
    getDocumentation: () => ({
      status: 200,
      type: 'text/html; charset=utf-8',
      body: documentationPage(loaded.document.info.title),
    }),
    ...options.handlers,
  }
  const operationIds = operations.map((operation) => operation.operationId ?? '')
  const unknown = Object.keys(options.handlers).filter((id) => !operationIds.includes(id))
  if (unknown.length > 0)
    throw new Error(`handlers for operations not in ${loaded.path}: ${unknown.join(', ')}`)
  // Compile every validator now so the first request does not pay for it.
  for (const id of operationIds) api.validator.getRequestValidatorsForOperation(id)

  const koa = new Koa({ proxy: options.trustProxy ?? false })
  koa.on('error', (error: unknown) => logger.error('unhandled koa error', { error: String(error) }))

  koa.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id')
    const requestId = REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID()
    ctx.state.requestId = requestId
    ctx.set('x-request-id', requestId)
    ctx.set('access-control-allow-origin', '*')
    ctx.set('access-control-expose-headers', 'x-request-id, retry-after, ratelimit, ratelimit-policy')
    try {
      await next()
    } catch (caught) {
      const error = isPontisError(caught) ? caught : toPontisError(caught)
      if (error.status >= 500) {
        logger.error('request failed', {
          requestId,
          method: ctx.method,
          path: ctx.path,
          error: String(caught),
          stack: caught instanceof Error ? caught.stack : undefined,
        })
      }
      ctx.status = error.status
      ctx.body = errorBody(error, requestId)
      if (error.errorData?.retryAfterSeconds !== undefined)
        ctx.set('retry-after', String(error.errorData.retryAfterSeconds))
    }
  })

  // CORS preflight: browsers send it before any cross-origin JSON POST.
  koa.use(async (ctx, next) => {
    if (ctx.method !== 'OPTIONS' || !ctx.get('access-control-request-method')) return next()
    ctx.set('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
    ctx.set('access-control-allow-headers', CORS_ALLOW_HEADERS)
    ctx.set('access-control-max-age', '600')
    ctx.status = 204
  })

  for (const middleware of options.middleware ?? []) koa.use(middleware)

  // Answers @koa/router left as bare statuses (no route, wrong method, unknown method) get the error body.
  koa.use(async (ctx, next) => {
    await next()
    if (ctx.body !== undefined && ctx.body !== null) return
    if (ctx.status === 404) {
      throw new PontisError(
        'ROUTE_NOT_FOUND',
        `No route for ${ctx.method} ${ctx.path}. The API reference is at /documentation.`,
      )
    }
    if (ctx.status === 405) {
      throw new PontisError(
        'METHOD_NOT_ALLOWED',
        `${ctx.path} does not accept ${ctx.method}. Allowed: ${ctx.response.get('allow')}.`,
      )
    }
    if (ctx.status === 501)
      throw new PontisError('NOT_IMPLEMENTED', `The HTTP method ${ctx.method} is not supported.`)
  })

  const router = new Router()
  registerDocumentationAssets(router, loaded)
  for (const operation of operations) {
    const route = routeFor(operation, handlers, api, bodyLimitBytes)
    router.register(toKoaPath(operation.path), [operation.method.toUpperCase()], route)
  }
  koa.use(router.routes())
  koa.use(router.allowedMethods())
  return { koa, api, operationIds }
}

function toPontisError(caught: unknown): PontisError {
  return new PontisError(
    'UNKNOWN_ERROR',
    'The server hit an unexpected error. It has been logged.',
    undefined,
    {
      cause: caught,
    },
  )
}

function routeFor(
  operation: Operation,
  handlers: Record<string, OperationHandler<OperationRequest, OperationResponse>>,
  api: OpenAPIBackend,
  bodyLimitBytes: number,
): Koa.Middleware {
  const operationId = operation.operationId ?? ''
  const hasBody = operation.requestBody !== undefined
  const label = `${operationId} (${operation.method.toUpperCase()} ${operation.path})`
  return async (ctx) => {
    let rawBody: string | undefined
    let body: unknown
    if (hasBody) {
      if (ctx.request.length && !isJsonContentType(ctx.get('content-type'))) {
        throw new PontisError(
          'UNSUPPORTED_MEDIA_TYPE',
          'Send the request body as JSON with Content-Type: application/json.',
        )
      }
      rawBody = await readTextBody(ctx.req, { limitBytes: bodyLimitBytes })
      body = parseJsonBody(rawBody)
    }
    const result = api.validateRequest(
      {
        method: ctx.method,
        path: ctx.path,
        query: ctx.query as Record<string, string | string[]>,
        headers: ctx.headers as Record<string, string | string[]>,
        body,
      },
      operation,
    )
    if (!result.valid) {
      const problems = toFieldProblems(result.errors ?? [])
      throw new PontisError('INVALID_REQUEST', describeProblems(problems), { errors: problems })
    }
    const handler = handlers[operationId]
    if (!handler) throw new PontisError('NOT_IMPLEMENTED', `${label} is not implemented yet.`)
    const response = await handler({
      operationId,
      body,
      query: (result.coerced?.query as Record<string, unknown> | undefined) ?? { ...ctx.query },
      path: (result.coerced?.params as Record<string, unknown> | undefined) ?? { ...ctx.params },
      headers: ctx.headers,
      requestId: String(ctx.state.requestId),
      clientIp: ctx.ip,
      rawBody,
    })
    ctx.status = response.status
    for (const [name, value] of Object.entries(response.headers ?? {})) ctx.set(name, value)
    if (response.type) {
      ctx.type = response.type
      ctx.body = response.body
    } else {
      ctx.type = 'application/json'
      ctx.body = JSON.stringify(response.body)
    }
  }
}
