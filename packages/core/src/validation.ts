/**
 * Ajv set-up shared by config loading and the registry, and a translation of Ajv's errors into
 * sentences that name the field, e.g. `chains[0].currency.decimals must be an integer`.
 */

import {
  Ajv2020,
  type Options as AjvOptions,
  type ErrorObject,
  type ValidateFunction,
} from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { isUint256, UINT256_FORMAT, UINT256_RANGE } from './amounts.js'

// ajv-formats is CommonJS: under NodeNext the default import is typed as its module object,
// and at run time the function carries itself as `.default` too.
const addFormats = addFormatsModule.default

/** A JSON Schema object (draft 2020-12), as plugins declare their `configSchema`. */
export type JsonSchema = { readonly [keyword: string]: unknown }

/**
 * The one way Pontis builds an Ajv 2020 instance. By default: all errors (an operator fixes a file
 * in one go), defaults applied, formats enabled, strict so a typo in a schema keyword fails at
 * start-up. Callers with other needs (the HTTP layer validating requests) override options.
 */
export function createAjv(options: AjvOptions = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    useDefaults: true,
    strict: true,
    allowUnionTypes: true,
    ...options,
  })
  addFormats(ajv)
  addPontisFormats(ajv)
  return ajv
}

/**
 * Registers the formats the Pontis documents use beyond JSON Schema's own: `uint256` (an amount
 * from 0 to 2^256 - 1 as decimal digits). For Ajv instances built without {@link createAjv}.
 */
export function addPontisFormats(ajv: Ajv2020): Ajv2020 {
  return ajv.addFormat(UINT256_FORMAT, { type: 'string', validate: isUint256 })
}

/** Appends one JSON-pointer segment to a dotted path: `a` + `b` = `a.b`, `a` + `0` = `a[0]`. */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number' || /^[0-9]+$/.test(segment)) return `${base}[${segment}]`
  const key = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment) ? segment : JSON.stringify(segment)
  return base === '' ? key : `${base}.${key}`
}

function pointerToPath(base: string, pointer: string): string {
  if (pointer === '') return base
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<string>((path, segment) => joinPath(path, segment), base)
}

/** One problem found while validating a value. */
export interface ValidationIssue {
  /** Dotted path of the offending member, e.g. `chains[1].rpc.url`. */
  readonly path: string
  /** A sentence that starts with the path. */
  readonly message: string
}

function describe(error: ErrorObject, path: string): string {
  const where = path === '' ? 'the value' : path
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return `${joinPath(path, String(params.missingProperty))} is required`
    case 'additionalProperties':
      return `${joinPath(path, String(params.additionalProperty))} is not a known field`
    case 'type':
      return `${where} must be ${article(String(params.type))}`
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'const':
      return `${where} must be ${JSON.stringify(params.allowedValue)}`
    case 'pattern':
      return `${where} does not match the expected form ${String(params.pattern)}`
    case 'format':
      if (params.format === UINT256_FORMAT) return `${where} must be ${UINT256_RANGE}`
      return `${where} must be a valid ${String(params.format)}`
    default:
      return `${where} ${error.message ?? 'is invalid'}`
  }
}

function article(type: string): string {
  return type
    .split(',')
    .map((name) => (/^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`))
    .join(' or ')
}

/**
 * Turns Ajv errors into issues whose paths start at `basePath`. Noise from `if`/`anyOf` wrappers
 * is dropped when a more precise error says the same thing.
 */
export function toValidationIssues(
  errors: readonly ErrorObject[] | null | undefined,
  basePath: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  const seen = new Set<string>()
  for (const error of errors ?? []) {
    if (error.keyword === 'if' || error.keyword === 'anyOf' || error.keyword === 'oneOf') continue
    const path = pointerToPath(basePath, error.instancePath)
    const message = describe(error, path)
    if (seen.has(message)) continue
    seen.add(message)
    issues.push({ path, message })
  }
  return issues
}

/** Validates `value` in place (defaults are written into it) and returns the issues found. */
export function validateWith(
  validate: ValidateFunction,
  value: unknown,
  basePath: string,
): ValidationIssue[] {
  return validate(value) ? [] : toValidationIssues(validate.errors, basePath)
}
