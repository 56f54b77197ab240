import { joinPath, UINT256_FORMAT, UINT256_RANGE } from '@pontis/core'
import type { ErrorObject } from 'ajv'

/** One field-level problem of a rejected request, as returned in `errorData.errors`. */
export interface FieldProblem {
  /** Where the field is: body, query, path or header. */
  readonly location: string
  /** Dotted path of the field inside its location, e.g. `txs[0].to`; empty for the whole location. */
  readonly field: string
  readonly message: string
}

const LOCATIONS: Record<string, string> = {
  requestBody: 'body',
  query: 'query',
  path: 'path',
  header: 'header',
  cookie: 'cookie',
}

// Wrapper keywords only say "a sub-schema failed"; the sub-schema's own error is the useful one.
const WRAPPER_KEYWORDS = new Set(['if', 'then', 'else', 'allOf', 'anyOf', 'not', '$ref'])

function fieldPath(segments: string[]): string {
  return segments.map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~')).reduce(joinPath, '')
}

function describe(error: ErrorObject): { extra?: string; message: string } {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return { extra: String(params.missingProperty), message: 'is required' }
    case 'additionalProperties':
      return { extra: String(params.additionalProperty), message: 'is not a known field' }
    case 'dependentRequired':
      return {
        extra: String(params.missingProperty),
        message: `is required when \`${String(params.property)}\` is set`,
      }
    case 'enum':
      return {
        message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      }
    case 'const':
      return { message: `must be ${JSON.stringify(params.allowedValue)}` }
    case 'pattern':
      return { message: `must match the pattern ${String(params.pattern)}` }
    case 'type':
      return { message: `must be of type ${String(params.type)}` }
    case 'format':
      // An amount past uint256 matches its digits pattern; say what the limit is.
      if (params.format === UINT256_FORMAT) return { message: `must be ${UINT256_RANGE}` }
      return { message: `must be a valid ${String(params.format)}` }
    case 'parse':
      return { message: `is not valid JSON: ${error.message ?? ''}` }
    default:
      return { message: error.message ?? `fails the ${error.keyword} rule` }
  }
}

/**
 * Turns Ajv errors from openapi-backend (instance paths like `/requestBody/txs/0/to`) into problems
 * that name the field, dropping the wrapper errors that say nothing a person can act on.
 */
export function toFieldProblems(errors: readonly ErrorObject[]): FieldProblem[] {
  const specific = errors.filter((error) => !WRAPPER_KEYWORDS.has(error.keyword))
  const chosen = specific.length > 0 ? specific : errors
  const seen = new Set<string>()
  const problems: FieldProblem[] = []
  for (const error of chosen) {
    const [root = '', ...rest] = error.instancePath.split('/').filter((part) => part !== '')
    const { extra, message } = describe(error)
    if (extra !== undefined) rest.push(extra)
    // An empty root is the request body itself (a missing or non-object body).
    const problem = {
      location: LOCATIONS[root] ?? (root === '' ? 'body' : root),
      field: fieldPath(rest),
      message,
    }
    const key = `${problem.location}|${problem.field}|${problem.message}`
    if (seen.has(key)) continue
    seen.add(key)
    problems.push(problem)
  }
  return problems
}

export function describeProblems(problems: readonly FieldProblem[]): string {
  const parts = problems.map((p) =>
    p.field ? `\`${p.field}\` (${p.location}) ${p.message}` : `${p.location} ${p.message}`,
  )
  return `Invalid request: ${parts.join('; ')}.`
}
