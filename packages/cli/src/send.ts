import { timedFetch } from '@pontis/core'
import type { RequestCase } from './operations.js'

/** An answer as the conformance checker wants it, plus the raw text. */
export interface CaseAnswer {
  readonly status: number
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>
  /** Parsed JSON for JSON answers (the text when it does not parse), text otherwise, undefined when empty. */
  readonly body: unknown
  readonly text: string
  /** Set when a JSON answer does not parse. */
  readonly parseError?: string
}

/** The URL of a case under `baseUrl` (a base with a path prefix keeps it). */
export function caseUrl(baseUrl: string, request: RequestCase): URL {
  const base = baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl
  const url = new URL(`${base}${request.path}`)
  for (const [name, value] of Object.entries(request.query)) url.searchParams.set(name, value)
  return url
}

/** Sends one case over HTTP and reads the whole answer. */
export async function sendCase(
  baseUrl: string,
  request: RequestCase,
  extraHeaders: Readonly<Record<string, string>> = {},
  timeoutMs = 30_000,
): Promise<CaseAnswer> {
  const headers: Record<string, string> = { ...extraHeaders, ...request.headers }
  let body: string | undefined = request.rawBody
  if (request.body !== undefined) {
    body = JSON.stringify(request.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await timedFetch(
    caseUrl(baseUrl, request),
    { method: request.method, headers, body },
    { timeoutMs },
  )
  const { text } = response
  const responseHeaders: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    responseHeaders[name] = value
  })
  if (text === '') return { status: response.status, headers: responseHeaders, body: undefined, text }
  if (!(responseHeaders['content-type'] ?? '').includes('json'))
    return { status: response.status, headers: responseHeaders, body: text, text }
  try {
    return { status: response.status, headers: responseHeaders, body: JSON.parse(text), text }
  } catch (error) {
    return {
      status: response.status,
      headers: responseHeaders,
      body: text,
      text,
      parseError: `the answer says JSON but does not parse: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
}
