import { randomUUID } from 'node:crypto'
import {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http'
import Router from '@koa/router'
import { isPontisError, type Logger, PontisError } from '@pontis/core'
import Koa from 'koa'
import { type Document, OpenAPIBackend, type Operation, ValidationContext } from 'openapi-backend'
import { createOpenApiAjv } from './ajv.js'
import { isJsonContentType, parseJsonBody, readTextBody } from './body.js'
import { documentationPage, registerDocumentationAssets } from './docs.js'
import type { LoadedDocument } from './document.js'
import {
  createHttpObserver,
  type HttpObserver,
  type MetricsRegistry,
  UNMATCHED_OPERATION,
} from './metrics.js'
import { describeProblems, toFieldProblems } from './problems.js'
import { clientAddressFrom } from './ratelimit.js'
import { createOperationValidator, type OperationValidator } from './validation.js'

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
  /** The socket peer, or with proxy trust on the `X-Forwarded-For` entry the proxy appended. */
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
  /**
   * Decides about every request after request ids and error handling, before routing (API keys,
   * rate limits). Unlike `middleware` it also runs for `directOperations`.
   */
  readonly gate?: RequestGate
  /** Koa middleware after the gate, before routing. Not allowed with `directOperations`. */
  readonly middleware?: readonly Koa.Middleware[]
  /**
   * GET and POST operations with a fixed path answered by {@link ApiApp.handle} without Koa: the
   * same steps in the same order (request id, CORS headers, gate, for a POST the media type check
   * and the body read under the same limit, validation, handler, error body), without a Koa
   * context, middleware chain or router per request. For the hottest routes (issue 11: the Koa
   * stack cost a status poll four times what bare Koa costs; issue 19: the attestation POST, three
   * times per aggregated attestation). Any other method (HEAD, OPTIONS, ...) or a path that is not
   * exactly the operation's (trailing slash, other case, escapes) goes through Koa.
   */
  readonly directOperations?: readonly string[]
  /**
   * Where the HTTP families (requests by operation, status and errorCode; latency) are recorded,
   * on both dispatch paths. None: nothing is recorded.
   */
  readonly metrics?: MetricsRegistry
}

/** What a {@link RequestGate} sees of a request. */
export interface GateRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The socket peer's address. */
  readonly peerAddress: string
  /** Whether `X-Forwarded-For` may be believed (the app's `trustProxy`). */
  readonly trustProxy: boolean
}

/** A gate's decision: headers every answer carries, and a refusal when the request must not go on. */
export interface GateOutcome {
  /** Sent with the answer whatever it is (rate-limit headers). */
  readonly headers?: Readonly<Record<string, string>>
  /** Answered instead of the operation (its status and error body), with `headers`. */
  readonly refusal?: PontisError
  /** Left on Koa's `ctx.state` for routes and middleware. */
  readonly state?: Readonly<Record<string, unknown>>
}

/** Authentication and admission of a request, independent of Koa so direct operations share it. */
export type RequestGate = (request: GateRequest) => Promise<GateOutcome>

export interface ApiApp {
  readonly koa: Koa
  readonly api: OpenAPIBackend
  readonly operationIds: readonly string[]
  /** The server's request listener: direct operations first, everything else through Koa. */
  readonly handle: RequestListener
  /** The request validator of an operation, as both dispatch paths use it. */
  validatorOf(operationId: string): OperationValidator
}

export const DEFAULT_BODY_LIMIT_BYTES = 256 * 1024

// Relay's clients name themselves in headers: the SDK in relay-sdk-version, the swap widget's quote calls
// (relay-kit-hooks' useQuote) in relay-kit-ui-version too; a preflight refusing one fails the browser's call.
const CORS_ALLOW_HEADERS =
  'content-type, x-api-key, x-request-id, relay-sdk-version, relay-kit-ui-version, authorization'
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

function toKoaPath(openApiPath: string): string {
  return openApiPath.replaceAll(/\{([^}]+)\}/g, ':$1')
}

/** Headers of every answer, on both dispatch paths. */
const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'x-request-id, retry-after, ratelimit, ratelimit-policy, ignored-members',
}

/** The answer's header naming the request members that were ignored (see `createOperationValidator`). */
const IGNORED_MEMBERS_HEADER = 'ignored-members'
const IGNORED_MEMBERS_LISTED = 20

/**
 * `Ignored-Members`: the first {@link IGNORED_MEMBERS_LISTED} paths, comma-separated, in printable
 * ASCII (a member's name is the caller's text, and a header refuses control and wide characters).
 */
function ignoredMembersHeader(ignored: readonly string[]): string {
  const listed = ignored
    .slice(0, IGNORED_MEMBERS_LISTED)
    .map((path) =>
      path.replaceAll(/[^\x20-\x7e]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`),
    )
  const more = ignored.length - listed.length
  return more > 0 ? `${listed.join(', ')}, and ${more} more` : listed.join(', ')
}

/** The caller's `x-request-id` when it is a plausible id, else a fresh one. */
function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID()
}

/**
 * `{message, errorCode, errorData?, requestId}`. `errorData` goes out as JSON text: existing clients
 * type it as a string (Relay's published API types), and the details stay one `JSON.parse` away.
 */
function errorBody(error: PontisError, requestId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { message: error.message, errorCode: error.code, requestId }
  if (error.errorData !== undefined)
    body.errorData = JSON.stringify(error.errorData, (_key, value: unknown) =>
      typeof value === 'bigint' ? value.toString() : value,
    )
  return body
}

/** The error answered for anything thrown while answering; 5xx are logged with the request. */
function failureOf(
  caught: unknown,
  logger: Logger,
  request: { requestId: string; method: string; path: string },
): PontisError {
  const error = isPontisError(caught) ? caught : toPontisError(caught)
  if (error.status >= 500) {
    logger.error('request failed', {
      ...request,
      error: String(caught),
      stack: caught instanceof Error ? caught.stack : undefined,
    })
  }
  return error
}

function retryAfterOf(error: PontisError): string | undefined {
  const seconds = error.errorData?.retryAfterSeconds
  return seconds === undefined ? undefined : String(seconds)
}

/** Throws the validator's problems as `INVALID_REQUEST`, or returns the coerced query and path. */
function checked(outcome: ReturnType<OperationValidator>): {
  query: Record<string, unknown>
  params: Record<string, unknown>
  ignored: readonly string[]
} {
  if (!outcome.valid) {
    const problems = toFieldProblems(outcome.errors)
    throw new PontisError('INVALID_REQUEST', describeProblems(problems), { errors: problems })
  }
  return outcome
}

/**
 * Builds the Koa app for one OpenAPI document: every operation is routed by @koa/router from the
 * document's paths, validated by openapi-backend with Ajv 2020, and answered by the handler of its
 * operationId. Failures of any kind answer the document's error body; nothing escapes as a bare 500.
 */
export async function createApiApp(options: ApiAppOptions): Promise<ApiApp> {
  const { loaded, logger } = options
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES
  const { api, operations, validators } = await compiledDocument(loaded)
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
  const validatorOf = (operationId: string): OperationValidator => {
    const validator = validators.get(operationId)
    if (!validator) throw new Error(`no operation ${operationId} in ${loaded.path}`)
    return validator
  }

  const koa = new Koa({ proxy: options.trustProxy ?? false })
  koa.on('error', (error: unknown) => logger.error('unhandled koa error', { error: String(error) }))
  const observe = options.metrics ? createHttpObserver(options.metrics, operationIds) : undefined

  koa.use(async (ctx, next) => {
    const started = performance.now()
    const requestId = requestIdFor(ctx.req.headers['x-request-id'])
    ctx.state.requestId = requestId
    ctx.set('x-request-id', requestId)
    ctx.set(COMMON_HEADERS)
    let errorCode: string | undefined
    try {
      await next()
    } catch (caught) {
      const error = failureOf(caught, logger, { requestId, method: ctx.method, path: ctx.path })
      errorCode = error.code
      ctx.status = error.status
      ctx.body = errorBody(error, requestId)
      const retryAfter = retryAfterOf(error)
      if (retryAfter !== undefined) ctx.set('retry-after', retryAfter)
    }
    observe?.(
      typeof ctx.state.operationId === 'string'
        ? ctx.state.operationId
        : // Refused before routing (API key, rate limit): the operation its path and method name.
          (api.matchOperation({ method: ctx.method, path: ctx.path, headers: {} })?.operationId ??
            UNMATCHED_OPERATION),
      ctx.status,
      errorCode,
      (performance.now() - started) / 1000,
    )
  })

  // CORS preflight: browsers send it before any cross-origin JSON POST.
  koa.use(async (ctx, next) => {
    if (ctx.method !== 'OPTIONS' || !ctx.get('access-control-request-method')) return next()
    ctx.set('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
    ctx.set('access-control-allow-headers', CORS_ALLOW_HEADERS)
    ctx.set('access-control-max-age', '600')
    ctx.status = 204
  })

  const { gate } = options
  const trustProxy = options.trustProxy ?? false
  if (gate) {
    koa.use(async (ctx, next) => {
      const outcome = await gate({
        method: ctx.method,
        path: ctx.path,
        headers: ctx.req.headers,
        peerAddress: ctx.req.socket.remoteAddress ?? '',
        trustProxy,
      })
      if (outcome.headers) ctx.set(outcome.headers)
      if (outcome.refusal) throw outcome.refusal
      if (outcome.state) Object.assign(ctx.state, outcome.state)
      await next()
    })
  }
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
    // The router answers 501 to a method it routes nowhere (TRACE, PROPFIND, ...). On a path the
    // document has, that is a method the path does not take, like any other; elsewhere no route.
    if (ctx.status === 501) {
      const allowed = ctx.response.get('allow')
      if (allowed === '') {
        ctx.remove('allow')
        throw new PontisError(
          'ROUTE_NOT_FOUND',
          `No route for ${ctx.method} ${ctx.path}. The API reference is at /documentation.`,
        )
      }
      throw new PontisError(
        'METHOD_NOT_ALLOWED',
        `${ctx.path} does not accept ${ctx.method}. Allowed: ${allowed}.`,
      )
    }
  })

  const router = new Router()
  registerDocumentationAssets(router, loaded)
  for (const operation of operations) {
    const route = routeFor(operation, handlers, validatorOf(operation.operationId ?? ''), {
      bodyLimitBytes,
      trustProxy,
    })
    router.register(toKoaPath(operation.path), [operation.method.toUpperCase()], route)
  }
  koa.use(router.routes())
  koa.use(router.allowedMethods())

  const viaKoa = koa.callback()
  const direct = directRoutes(options, operations, handlers, validatorOf)
  const handle: RequestListener =
    direct.size === 0
      ? viaKoa
      : (req, res) => {
          const route =
            req.method === 'GET' || req.method === 'POST'
              ? direct.get(directKey(req.method, pathOf(req.url ?? '')))
              : undefined
          if (route === undefined) return viaKoa(req, res)
          answerDirectly(route, req, res, { gate, trustProxy, logger, bodyLimitBytes, observe }).catch(
            (error: unknown) => {
              // Only writing the answer can fail here (everything before is caught and answered);
              // never an unhandled rejection, which would stop the process.
              logger.error('could not write a direct answer', { path: route.path, error: String(error) })
              res.destroy()
            },
          )
        }
  return { koa, api, operationIds, handle, validatorOf }
}

interface DirectRoute {
  readonly operationId: string
  readonly method: 'GET' | 'POST'
  readonly path: string
  /** The operation declares a request body: it is read and parsed as the Koa route does. */
  readonly hasBody: boolean
  readonly handler: OperationHandler<OperationRequest, OperationResponse>
  readonly validate: OperationValidator
}

function directRoutes(
  options: ApiAppOptions,
  operations: readonly Operation[],
  handlers: Readonly<Record<string, OperationHandler<OperationRequest, OperationResponse>>>,
  validatorOf: (operationId: string) => OperationValidator,
): Map<string, DirectRoute> {
  const routes = new Map<string, DirectRoute>()
  const ids = options.directOperations ?? []
  if (ids.length > 0 && (options.middleware?.length ?? 0) > 0)
    throw new Error('directOperations cannot run Koa middleware: give admission rules as a gate')
  for (const id of ids) {
    const operation = operations.find((candidate) => candidate.operationId === id)
    const handler = handlers[id]
    if (!operation || !handler) throw new Error(`direct operation ${id} has no operation or no handler`)
    if ((operation.method !== 'get' && operation.method !== 'post') || operation.path.includes('{'))
      throw new Error(`direct operation ${id} must be a GET or POST with a fixed path`)
    const method = operation.method === 'get' ? 'GET' : 'POST'
    routes.set(directKey(method, operation.path), {
      operationId: id,
      method,
      path: operation.path,
      hasBody: operation.requestBody !== undefined,
      handler,
      validate: validatorOf(id),
    })
  }
  return routes
}

const directKey = (method: string, path: string) => `${method} ${path}`

/**
 * Koa's `ctx.request.length`: the Content-Length header's leading integer, undefined without one or
 * when it has none. Only its truthiness decides (a body that is announced must be JSON), so it is
 * copied exactly.
 */
function announcedLength(header: string | undefined): number | undefined {
  if (header === undefined || header === '') return undefined
  const parsed = Number.parseInt(header, 10)
  return Number.isNaN(parsed) ? undefined : parsed
}

/**
 * The request body as the Koa route reads it: refused with 415 when one is announced in another
 * media type than JSON, read as UTF-8 text under the limit, parsed (empty text: no body).
 */
async function readJsonRequest(
  req: IncomingMessage,
  limitBytes: number,
): Promise<{ rawBody: string; body: unknown }> {
  if (
    announcedLength(req.headers['content-length']) &&
    !isJsonContentType(req.headers['content-type'] ?? '')
  ) {
    throw new PontisError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the request body as JSON with Content-Type: application/json.',
    )
  }
  const rawBody = await readTextBody(req, { limitBytes })
  return { rawBody, body: parseJsonBody(rawBody) }
}

function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/** The query as Koa's `ctx.query` has it: a repeated name becomes an array of its values. */
function queryOf(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  const start = url.indexOf('?')
  if (start === -1) return query
  for (const [name, value] of new URLSearchParams(url.slice(start + 1))) {
    const previous = query[name]
    query[name] =
      previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value]
  }
  return query
}

/** One direct operation, step for step what the Koa path does for it. */
async function answerDirectly(
  route: DirectRoute,
  req: IncomingMessage,
  res: ServerResponse,
  context: {
    gate: RequestGate | undefined
    trustProxy: boolean
    logger: Logger
    bodyLimitBytes: number
    observe: HttpObserver | undefined
  },
): Promise<void> {
  const started = performance.now()
  let errorCode: string | undefined
  const requestId = requestIdFor(req.headers['x-request-id'])
  const headers: Record<string, string> = { 'x-request-id': requestId, ...COMMON_HEADERS }
  let status: number
  let body: string
  try {
    const outcome = context.gate
      ? await context.gate({
          method: route.method,
          path: route.path,
          headers: req.headers,
          peerAddress: req.socket.remoteAddress ?? '',
          trustProxy: context.trustProxy,
        })
      : undefined
    if (outcome?.headers) Object.assign(headers, outcome.headers)
    if (outcome?.refusal) throw outcome.refusal
    const url = req.url ?? ''
    const { rawBody, body: requestBody } = route.hasBody
      ? await readJsonRequest(req, context.bodyLimitBytes)
      : { rawBody: undefined, body: undefined }
    const { query, params, ignored } = checked(
      route.validate({ query: queryOf(url), params: {}, headers: req.headers, body: requestBody }),
    )
    if (ignored.length > 0) headers[IGNORED_MEMBERS_HEADER] = ignoredMembersHeader(ignored)
    const response = await route.handler({
      operationId: route.operationId,
      body: requestBody,
      query,
      path: params,
      headers: req.headers,
      requestId,
      clientIp: clientAddressFrom(req.socket.remoteAddress ?? '', req.headers, context.trustProxy),
      rawBody,
    })
    // Checked one by one as Koa's ctx.set checks them, so a bad header fails the same way here.
    for (const [name, value] of Object.entries(response.headers ?? {})) {
      validateHeaderName(name)
      validateHeaderValue(name, value)
      headers[name.toLowerCase()] = value
    }
    status = response.status
    headers['content-type'] = response.type ?? 'application/json; charset=utf-8'
    body = response.type ? String(response.body) : JSON.stringify(response.body)
  } catch (caught) {
    const error = failureOf(caught, context.logger, { requestId, method: route.method, path: route.path })
    errorCode = error.code
    status = error.status
    const retryAfter = retryAfterOf(error)
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter
    headers['content-type'] = 'application/json; charset=utf-8'
    body = JSON.stringify(errorBody(error, requestId))
  }
  headers['content-length'] = String(Buffer.byteLength(body))
  context.observe?.(route.operationId, status, errorCode, (performance.now() - started) / 1000)
  res.writeHead(status, headers)
  res.end(body)
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
  validate: OperationValidator,
  { bodyLimitBytes, trustProxy }: { bodyLimitBytes: number; trustProxy: boolean },
): Koa.Middleware {
  const operationId = operation.operationId ?? ''
  const hasBody = operation.requestBody !== undefined
  const label = `${operationId} (${operation.method.toUpperCase()} ${operation.path})`
  return async (ctx) => {
    // Before anything can fail, so a refused request is counted under its operation.
    ctx.state.operationId = operationId
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
    const { query, params, ignored } = checked(
      validate({
        query: ctx.query as Record<string, string | string[]>,
        params: ctx.params as Record<string, string>,
        headers: ctx.req.headers,
        body,
      }),
    )
    if (ignored.length > 0) ctx.set(IGNORED_MEMBERS_HEADER, ignoredMembersHeader(ignored))
    const handler = handlers[operationId]
    if (!handler) throw new PontisError('NOT_IMPLEMENTED', `${label} is not implemented yet.`)
    const response = await handler({
      operationId,
      body,
      query,
      path: params,
      headers: ctx.headers,
      requestId: String(ctx.state.requestId),
      clientIp: clientAddressFrom(ctx.req.socket.remoteAddress ?? '', ctx.req.headers, trustProxy),
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

interface CompiledDocument {
  readonly api: OpenAPIBackend
  readonly operations: readonly Operation[]
  readonly validators: ReadonlyMap<string, OperationValidator>
}

/**
 * openapi-backend and Ajv compile a document once per process (about 1 CPU-s for the intents
 * document): the router, matcher and validators depend on the document only, never on the handlers,
 * so every app built on one loaded document shares them.
 */
const compiledDocuments = new WeakMap<LoadedDocument, Promise<CompiledDocument>>()

function compiledDocument(loaded: LoadedDocument): Promise<CompiledDocument> {
  const cached = compiledDocuments.get(loaded)
  if (cached) return cached
  const compiled = compileDocument(loaded)
  compiledDocuments.set(loaded, compiled)
  compiled.catch(() => compiledDocuments.delete(loaded))
  return compiled
}

async function compileDocument(loaded: LoadedDocument): Promise<CompiledDocument> {
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

  // Each operation's schemas are compiled on its first request (see createOperationValidator).
  const openAjv = createOpenApiAjv({ coerceTypes: false })
  const validators = new Map(
    operations.map((operation) => [
      operation.operationId ?? '',
      createOperationValidator(api, operation, openAjv),
    ]),
  )
  return { api, operations, validators }
}
