import { ConformanceChecker } from './conformance.js'
import type { OpenApiDocument } from './document.js'

/** The part of a tap test the client needs: it fails the test on a non-conforming answer. */
export interface AssertingTest {
  fail(message: string): unknown
}

export interface TestRequestOptions {
  /** JSON body; sent with Content-Type: application/json. */
  readonly json?: unknown
  /** Raw body text, sent as is (for malformed JSON and size tests). */
  readonly rawBody?: string
  readonly headers?: Readonly<Record<string, string>>
}

export interface TestResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON when the answer is JSON, otherwise the text. */
  readonly body: unknown
  readonly text: string
  readonly operationId: string | undefined
}

/** The `errorData` of an error answer, parsed (it goes out as JSON text); undefined when absent. */
export function errorDataOf(body: unknown): Record<string, unknown> | undefined {
  const text = (body as { errorData?: unknown } | undefined)?.errorData
  if (text === undefined) return undefined
  if (typeof text !== 'string') throw new Error(`errorData is not JSON text: ${JSON.stringify(text)}`)
  return JSON.parse(text) as Record<string, unknown>
}

export interface TestClient {
  request(method: string, pathAndQuery: string, options?: TestRequestOptions): Promise<TestResponse>
  get(pathAndQuery: string, options?: TestRequestOptions): Promise<TestResponse>
  post(pathAndQuery: string, json: unknown, options?: TestRequestOptions): Promise<TestResponse>
}

/**
 * An HTTP client for tests on loopback that checks every answer against the OpenAPI document and
 * fails the test, naming the mismatch, when an answer does not conform.
 */
/**
 * One checker per document in a process: the validators it compiles serve every client after the
 * first (a test file starts many services and clients; a response schema compiles once).
 */
const checkers = new WeakMap<OpenApiDocument, ConformanceChecker>()

function checkerFor(document: OpenApiDocument): ConformanceChecker {
  let checker = checkers.get(document)
  if (!checker) {
    checker = new ConformanceChecker(document)
    checkers.set(document, checker)
  }
  return checker
}

export function createTestClient(t: AssertingTest, baseUrl: string, document: OpenApiDocument): TestClient {
  const checker = checkerFor(document)
  const request = async (method: string, pathAndQuery: string, options: TestRequestOptions = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    let body: string | undefined = options.rawBody
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers['content-type'] ??= 'application/json'
    }
    const response = await fetch(new URL(pathAndQuery, baseUrl), { method, headers, body })
    const text = await response.text()
    const responseHeaders: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value
    })
    const isJson = (responseHeaders['content-type'] ?? '').includes('json')
    let parsed: unknown = text === '' ? undefined : text
    if (isJson && text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        t.fail(`${method} ${pathAndQuery}: answer says JSON but does not parse: ${text.slice(0, 200)}`)
      }
    }
    const path = new URL(pathAndQuery, baseUrl).pathname
    const { operationId, problems } = checker.check({
      method,
      path,
      status: response.status,
      headers: responseHeaders,
      body: parsed,
    })
    for (const problem of problems) t.fail(`answer does not conform to the OpenAPI document: ${problem}`)
    return { status: response.status, headers: responseHeaders, body: parsed, text, operationId }
  }
  return {
    request,
    get: (pathAndQuery, options) => request('GET', pathAndQuery, options),
    post: (pathAndQuery, json, options) => request('POST', pathAndQuery, { ...options, json }),
  }
}

export { ConformanceChecker, type ConformanceResult, type Exchange } from './conformance.js'
