import type { ValidateFunction } from 'ajv'
import { createOpenApiAjv } from './ajv.js'
import { type OpenApiDocument, pointerSegment } from './document.js'

/** One HTTP answer to check against the document. */
export interface Exchange {
  readonly method: string
  /** Path without the query string. */
  readonly path: string
  readonly status: number
  /** Response headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON for JSON answers, text otherwise, undefined when empty. */
  readonly body: unknown
}

export interface ConformanceResult {
  readonly operationId: string | undefined
  /** Human-readable mismatches; empty when the answer conforms. */
  readonly problems: readonly string[]
}

type JsonObject = Record<string, unknown>

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const DOCUMENT_ID = 'https://pontis.invalid/openapi.json'

interface Route {
  readonly regex: RegExp
  readonly path: string
  readonly method: string
  readonly operation: JsonObject
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase()
}

/**
 * Checks answers against an OpenAPI 3.1 document: the status must be documented (exact, range or
 * `default`), the content type declared, the body valid against its schema, and every required
 * response header present and valid. Used by the test client so every answer in tests is checked.
 */
export class ConformanceChecker {
  readonly #document: OpenApiDocument
  readonly #routes: Route[] = []
  readonly #ajv = createOpenApiAjv()
  readonly #validators = new Map<string, ValidateFunction>()

  constructor(document: OpenApiDocument) {
    this.#document = document
    this.#ajv.addSchema(document as JsonObject, DOCUMENT_ID, undefined, false)
    for (const [path, item] of Object.entries(document.paths)) {
      const pattern = path.replaceAll(/[.*+?^$()|[\]\\]/g, '\\$&').replaceAll(/\\?\{[^}]+\\?\}/g, '[^/]+')
      const regex = new RegExp(`^${pattern.replaceAll(/\{[^}]+\}/g, '[^/]+')}$`)
      for (const method of HTTP_METHODS) {
        const operation = item[method]
        if (isObject(operation)) this.#routes.push({ regex, path, method, operation })
      }
    }
  }

  /** Resolves a local `$ref` chain, returning the object and the JSON pointer it lives at. */
  #resolve(value: unknown, pointer: string): { value: unknown; pointer: string } {
    let current = value
    let at = pointer
    for (let hops = 0; isObject(current) && typeof current.$ref === 'string' && hops < 20; hops++) {
      const ref = current.$ref
      if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, found ${ref}`)
      at = ref.slice(1)
      current = at
        .split('/')
        .slice(1)
        .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
        .reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), this.#document)
    }
    return { value: current, pointer: at }
  }

  #validator(pointer: string): ValidateFunction {
    let validate = this.#validators.get(pointer)
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` })
      this.#validators.set(pointer, validate)
    }
    return validate
  }

  #validate(pointer: string, data: unknown, what: string): string[] {
    const validate = this.#validator(pointer)
    if (validate(data)) return []
    return (validate.errors ?? []).map(
      (error) =>
        `${what}${error.instancePath || ''} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
    )
  }

  operationFor(method: string, path: string): Route | undefined {
    const lower = method.toLowerCase()
    return this.#routes.find((route) => route.method === lower && route.regex.test(path))
  }

  check(exchange: Exchange): ConformanceResult {
    const route = this.operationFor(exchange.method, exchange.path)
    const label = `${exchange.method.toUpperCase()} ${exchange.path} -> ${exchange.status}`
    if (!route) {
      // Paths outside the document (documentation assets) are only held to the error body when failing.
      if (exchange.status < 400) return { operationId: undefined, problems: [] }
      return {
        operationId: undefined,
        problems: this.#validate('/components/schemas/ErrorBody', exchange.body, `${label} body`),
      }
    }
    const operationId =
      typeof route.operation.operationId === 'string' ? route.operation.operationId : undefined
    const base = `/paths/${pointerSegment(route.path)}/${route.method}/responses`
    const responses = isObject(route.operation.responses) ? route.operation.responses : {}
    const status = String(exchange.status)
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => candidate in responses)
    if (!key)
      return { operationId, problems: [`${label}: status ${status} is not documented for ${operationId}`] }
    const { value: response, pointer } = this.#resolve(responses[key], `${base}/${pointerSegment(key)}`)
    if (!isObject(response)) return { operationId, problems: [`${label}: response ${key} is not an object`] }
    const problems: string[] = []

    const content = isObject(response.content) ? response.content : undefined
    const mediaType = mediaTypeOf(exchange.headers['content-type'])
    if (!content) {
      if (exchange.body !== undefined && exchange.body !== '')
        problems.push(`${label}: a body was sent but none is documented`)
    } else if (!(mediaType in content)) {
      problems.push(`${label}: content type "${mediaType}" is not one of ${Object.keys(content).join(', ')}`)
    } else {
      const media = content[mediaType]
      if (isObject(media) && media.schema !== undefined) {
        const schemaPointer = `${pointer}/content/${pointerSegment(mediaType)}/schema`
        problems.push(...this.#validate(schemaPointer, exchange.body, `${label} body`))
      }
    }

    const headers = isObject(response.headers) ? response.headers : {}
    for (const [name, declared] of Object.entries(headers)) {
      const { value: header, pointer: headerPointer } = this.#resolve(
        declared,
        `${pointer}/headers/${pointerSegment(name)}`,
      )
      if (!isObject(header)) continue
      const actual = exchange.headers[name.toLowerCase()]
      if (actual === undefined) {
        if (header.required === true) problems.push(`${label}: required header ${name} is missing`)
        continue
      }
      if (isObject(header.schema)) {
        const schema = header.schema
        const typed = schema.type === 'integer' || schema.type === 'number' ? Number(actual) : actual
        problems.push(...this.#validate(`${headerPointer}/schema`, typed, `${label} header ${name}`))
      }
    }
    return { operationId, problems }
  }
}
