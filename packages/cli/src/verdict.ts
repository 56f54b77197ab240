import type { ConformanceChecker } from '@pontis/http/testing'
import type { RequestCase } from './operations.js'
import { isJsonObject, type SchemaArbitraries } from './schema-arbitrary.js'
import type { CaseAnswer } from './send.js'

/** What an answer is held to besides the document. */
export interface VerdictRules {
  /**
   * Server errors that are no fault: by default 503 (a documented transient failure: a dependency
   * is down) and 501 (`NOT_IMPLEMENTED`: the deployment does not offer this for that chain).
   * Every other 5xx is a problem.
   */
  readonly allowedServerErrors?: readonly number[]
  /** Every 4xx must carry an `errorCode` of the catalog (the document makes it optional). */
  readonly requireErrorCode?: boolean
}

export const DEFAULT_ALLOWED_SERVER_ERRORS: readonly number[] = [501, 503]

/** The error codes of the document's catalog: the enum of `ErrorBody.errorCode`. */
export function errorCatalog(arbitraries: SchemaArbitraries): ReadonlySet<string> {
  const { pointer } = arbitraries.resolve('/components/schemas/ErrorBody')
  const { schema } = arbitraries.resolve(`${pointer}/properties/errorCode`)
  return new Set(isJsonObject(schema) && Array.isArray(schema.enum) ? schema.enum.map(String) : [])
}

/**
 * The problems of one answer: everything the conformance checker finds (status documented for the
 * operation, content type, body and headers valid), an answer that claims JSON but does not parse,
 * server errors, and for a request the document calls invalid anything but a 4xx with a catalogued
 * `errorCode`. Problems name the offending JSON path (`body/chains/0/id must be integer`).
 */
export function answerProblems(
  checker: ConformanceChecker,
  catalog: ReadonlySet<string>,
  request: RequestCase,
  answer: CaseAnswer,
  rules: VerdictRules = {},
): string[] {
  const problems: string[] = []
  if (answer.parseError) problems.push(answer.parseError)
  const { problems: conformance } = checker.check({
    method: request.method,
    path: request.path,
    status: answer.status,
    headers: answer.headers,
    body: answer.body,
  })
  // The checker prefixes "METHOD /path -> status"; the report line already says that.
  const prefix = `${request.method.toUpperCase()} ${request.path} -> ${answer.status}`
  for (const problem of conformance) {
    const trimmed = problem.startsWith(prefix) ? problem.slice(prefix.length).replace(/^[: ]+/, '') : problem
    problems.push(trimmed)
  }
  if (
    answer.status >= 500 &&
    !(rules.allowedServerErrors ?? DEFAULT_ALLOWED_SERVER_ERRORS).includes(answer.status)
  ) {
    problems.push(`server error ${answer.status}: ${answer.text.slice(0, 300)}`)
  }
  const errorCode = isJsonObject(answer.body) ? answer.body.errorCode : undefined
  const isClientError = answer.status >= 400 && answer.status < 500
  if (!request.valid && !isClientError && answer.status < 500) {
    const ignored = (answer.headers['ignored-members'] ?? '').split(',').map((path) => path.trim())
    const unknown = request.unknownMembers ?? []
    if (unknown.length === 0)
      problems.push(`the request breaks the document but was answered ${answer.status}, not a 4xx`)
    else if (!unknown.every((path) => ignored.includes(path)))
      problems.push(
        `the request has members the document does not list (${unknown.join(', ')}) and was answered ${answer.status}, not a 4xx, without naming them in Ignored-Members`,
      )
  }
  if (isClientError && (rules.requireErrorCode || !request.valid)) {
    if (typeof errorCode !== 'string')
      problems.push(`body/errorCode is missing from a ${answer.status} answer`)
    else if (!catalog.has(errorCode))
      problems.push(`body/errorCode "${errorCode}" is not in the error catalog`)
  }
  return problems
}
