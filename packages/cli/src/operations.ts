import type { OpenApiDocument } from '@pontis/http'
import fc from 'fast-check'
import { isJsonObject, type SchemaArbitraries } from './schema-arbitrary.js'

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

/** One parameter of an operation, its schema located by JSON pointer. */
export interface OperationParameter {
  readonly name: string
  readonly in: 'query' | 'path' | 'header'
  readonly required: boolean
  readonly schemaPointer: string
  readonly example: unknown
}

/** What a request to one operation needs, read from the document. */
export interface Operation {
  readonly operationId: string
  readonly method: string
  /** The path template, `/admin/keys/{keyId}`. */
  readonly path: string
  readonly parameters: readonly OperationParameter[]
  /** Pointer of the JSON request body schema, when the operation takes a body. */
  readonly bodySchemaPointer: string | undefined
  readonly bodyRequired: boolean
  /** Documented request body examples, by name. */
  readonly bodyExamples: readonly { readonly name: string; readonly value: unknown }[]
  /** True when every security requirement of the operation needs a credential. */
  readonly needsCredential: boolean
  /** The security schemes one of which the operation needs (empty when it needs none). */
  readonly securitySchemes: readonly string[]
}

/** One concrete HTTP request to send. */
export interface RequestCase {
  readonly operationId: string
  /** What the case is: `example evmBridge`, `generated #2`, `mutation wrong-type /amount`. */
  readonly label: string
  readonly method: string
  /** The path with its parameters filled in, without the query string. */
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly headers: Readonly<Record<string, string>>
  /** JSON body, sent as application/json. */
  readonly body?: unknown
  /** Raw body text, sent as is with `headers['content-type']` (malformed JSON, wrong media types). */
  readonly rawBody?: string
  /** False when the document says the request is invalid, so the answer must be a 4xx. */
  readonly valid: boolean
  /**
   * For an invalid request that breaks the document only by members it does not list: their paths
   * (`body.fuzzExtraMember`). The service may instead ignore them, answering as if they were absent
   * and naming them in its `Ignored-Members` header.
   */
  readonly unknownMembers?: readonly string[]
}

function segment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

/** Every operation under `paths` (webhooks are requests the service sends, not serves). */
export function listOperations(document: OpenApiDocument, arbitraries: SchemaArbitraries): Operation[] {
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const pointer = `/paths/${segment(path)}/${method}`
      const operation = item[method]
      if (!isJsonObject(operation)) continue
      const parameters: OperationParameter[] = []
      const declared = [
        ...(Array.isArray(item.parameters)
          ? item.parameters.map((_, index) => `/paths/${segment(path)}/parameters/${index}`)
          : []),
        ...(Array.isArray(operation.parameters)
          ? operation.parameters.map((_, index) => `${pointer}/parameters/${index}`)
          : []),
      ]
      for (const at of declared) {
        const { schema: parameter, pointer: resolved } = arbitraries.resolve(at)
        if (!isJsonObject(parameter) || typeof parameter.name !== 'string') continue
        const location = parameter.in
        if (location !== 'query' && location !== 'path' && location !== 'header') continue
        parameters.push({
          name: parameter.name,
          in: location,
          required: parameter.required === true,
          schemaPointer: `${resolved}/schema`,
          example:
            parameter.example ??
            (isJsonObject(parameter.examples)
              ? firstExampleValue(parameter.examples, arbitraries)
              : undefined),
        })
      }
      let bodySchemaPointer: string | undefined
      let bodyRequired = false
      const bodyExamples: { name: string; value: unknown }[] = []
      if (operation.requestBody !== undefined) {
        const { schema: body, pointer: bodyPointer } = arbitraries.resolve(`${pointer}/requestBody`)
        const media =
          isJsonObject(body) && isJsonObject(body.content) ? body.content['application/json'] : undefined
        if (isJsonObject(body) && isJsonObject(media)) {
          bodyRequired = body.required === true
          bodySchemaPointer = `${bodyPointer}/content/application~1json/schema`
          if ('example' in media) bodyExamples.push({ name: 'example', value: media.example })
          if (isJsonObject(media.examples)) {
            for (const name of Object.keys(media.examples)) {
              const { schema: example } = arbitraries.resolve(
                `${bodyPointer}/content/application~1json/examples/${segment(name)}`,
              )
              if (isJsonObject(example) && 'value' in example)
                bodyExamples.push({ name, value: example.value })
            }
          }
        }
      }
      const security = Array.isArray(operation.security)
        ? operation.security
        : Array.isArray(document.security)
          ? document.security
          : []
      const requirements = security.filter(isJsonObject)
      const needsCredential =
        requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0)
      operations.push({
        operationId: typeof operation.operationId === 'string' ? operation.operationId : `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        bodySchemaPointer,
        bodyRequired,
        bodyExamples,
        needsCredential,
        securitySchemes: needsCredential
          ? requirements.flatMap((requirement) => Object.keys(requirement))
          : [],
      })
    }
  }
  return operations
}

function firstExampleValue(examples: Record<string, unknown>, arbitraries: SchemaArbitraries): unknown {
  for (const example of Object.values(examples)) {
    const resolved =
      isJsonObject(example) && typeof example.$ref === 'string'
        ? arbitraries.at(example.$ref.slice(1))
        : example
    if (isJsonObject(resolved) && 'value' in resolved) return resolved.value
  }
  return undefined
}

function parameterText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function fillPath(template: string, values: Readonly<Record<string, string>>): string {
  return template.replaceAll(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''))
}

function caseOf(
  operation: Operation,
  label: string,
  parameters: Readonly<Record<string, unknown>>,
  body: { json?: unknown; raw?: string; contentType?: string } | undefined,
  valid: boolean,
  headers: Readonly<Record<string, string>> = {},
): RequestCase {
  const query: Record<string, string> = {}
  const pathValues: Record<string, string> = {}
  const headerValues: Record<string, string> = { ...headers }
  for (const parameter of operation.parameters) {
    if (!(parameter.name in parameters) || parameters[parameter.name] === undefined) continue
    const text = parameterText(parameters[parameter.name])
    if (parameter.in === 'query') query[parameter.name] = text
    else if (parameter.in === 'path') pathValues[parameter.name] = text
    else headerValues[parameter.name.toLowerCase()] = text
  }
  if (body?.contentType !== undefined) headerValues['content-type'] = body.contentType
  return {
    operationId: operation.operationId,
    label,
    method: operation.method,
    path: fillPath(operation.path, pathValues),
    query,
    headers: headerValues,
    ...(body?.json !== undefined ? { body: body.json } : {}),
    ...(body?.raw !== undefined ? { rawBody: body.raw } : {}),
    valid,
  }
}

/**
 * The documented cases of an operation: each request body example with the required parameters'
 * examples, and (for operations without a body) the required parameters alone and then every
 * parameter with its documented example.
 */
export function exampleCases(operation: Operation): RequestCase[] {
  const requiredExamples = Object.fromEntries(
    operation.parameters
      .filter((parameter) => parameter.required)
      .map((parameter) => [parameter.name, parameter.example]),
  )
  const allExamples = Object.fromEntries(
    operation.parameters
      .filter((parameter) => parameter.example !== undefined)
      .map((parameter) => [parameter.name, parameter.example]),
  )
  if (operation.bodyExamples.length > 0) {
    return operation.bodyExamples.map((example) =>
      caseOf(operation, `example ${example.name}`, allExamples, { json: example.value }, true),
    )
  }
  const cases = [caseOf(operation, 'example (required parameters)', requiredExamples, undefined, true)]
  if (Object.keys(allExamples).length > Object.keys(requiredExamples).length) {
    cases.push(caseOf(operation, 'example (documented parameters)', allExamples, undefined, true))
  }
  return cases
}

/** Requests valid against the document: parameters and body generated from their schemas. */
export function validCases(operation: Operation, arbitraries: SchemaArbitraries): fc.Arbitrary<RequestCase> {
  const parameterArbitraries: Record<string, fc.Arbitrary<unknown>> = {}
  const requiredKeys: string[] = []
  for (const parameter of operation.parameters) {
    const values = arbitraries.valid(parameter.schemaPointer)
    parameterArbitraries[parameter.name] =
      parameter.example === undefined ? values : fc.oneof(fc.constant(parameter.example), values)
    if (parameter.required) requiredKeys.push(parameter.name)
  }
  const parameters = fc.record(parameterArbitraries, { requiredKeys })
  const body =
    operation.bodySchemaPointer === undefined
      ? fc.constant(undefined)
      : operation.bodyRequired
        ? arbitraries.valid(operation.bodySchemaPointer)
        : fc.option(arbitraries.valid(operation.bodySchemaPointer), { nil: undefined })
  return fc
    .tuple(parameters, body)
    .map(([values, json]) =>
      caseOf(operation, 'generated', values, json === undefined ? undefined : { json }, true),
    )
}

/** The ways {@link invalidCases} breaks a valid request. */
export const MUTATIONS = [
  'wrong-type',
  'missing-required',
  'extra-member',
  'out-of-range',
  'huge-string',
  'not-an-object',
  'malformed-json',
  'wrong-media-type',
  'missing-body',
  'bad-parameter',
  'missing-parameter',
] as const
export type Mutation = (typeof MUTATIONS)[number]

const VALUES_BY_TYPE: Record<string, unknown> = {
  string: 'fuzz',
  number: 1.5,
  integer: 7,
  boolean: true,
  null: null,
  array: [],
  object: {},
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

interface MutationChoice {
  readonly mutation: Mutation
  readonly pick: number
  readonly size: number
}

/**
 * Valid requests broken in one way each: a member of the wrong type, a required member missing,
 * an unknown member, a number out of range, a huge string, a body that is no object or no JSON, a
 * wrong media type, a missing body, a parameter that breaks its schema or is missing. Whether the
 * result is still valid is decided by Ajv against the document (an unknown member is allowed
 * where `additionalProperties` is), so `valid` is always what the document says.
 */
export function invalidCases(
  operation: Operation,
  arbitraries: SchemaArbitraries,
): fc.Arbitrary<RequestCase> {
  const choice = fc.record({
    mutation: fc.constantFrom(...MUTATIONS),
    pick: fc.nat(),
    size: fc.integer({ min: 1_000, max: 200_000 }),
  })
  return fc
    .tuple(validCases(operation, arbitraries), choice)
    .map(([base, mutationChoice]) => mutate(operation, arbitraries, base, mutationChoice))
}

function mutate(
  operation: Operation,
  arbitraries: SchemaArbitraries,
  base: RequestCase,
  { mutation, pick, size }: MutationChoice,
): RequestCase {
  const label = `mutation ${mutation}`
  const withBody = (json: unknown, detail: string): RequestCase => {
    const { rawBody: _raw, ...rest } = base
    const valid =
      operation.bodySchemaPointer === undefined
        ? false
        : arbitraries.problems(operation.bodySchemaPointer, json).length === 0
    return { ...rest, body: json, label: `${label} ${detail}`, valid }
  }
  const body = base.body
  const members = isJsonObject(body) ? Object.keys(body) : []
  const bodySchema = operation.bodySchemaPointer
    ? arbitraries.resolve(operation.bodySchemaPointer).schema
    : undefined
  const memberSchema = (name: string): Record<string, unknown> | undefined => {
    if (
      !isJsonObject(bodySchema) ||
      !isJsonObject(bodySchema.properties) ||
      operation.bodySchemaPointer === undefined
    )
      return undefined
    const { schema } = arbitraries.resolve(
      `${arbitraries.resolve(operation.bodySchemaPointer).pointer}/properties/${segment(name)}`,
    )
    return isJsonObject(schema) ? schema : undefined
  }
  switch (mutation) {
    case 'wrong-type': {
      if (!isJsonObject(body) || members.length === 0) break
      const name = members[pick % members.length] as string
      const current = jsonTypeOf(body[name])
      const others = Object.entries(VALUES_BY_TYPE).filter(
        ([type]) => type !== current && !(current === 'number' && type === 'integer'),
      )
      const [, value] = others[pick % others.length] as [string, unknown]
      return withBody({ ...body, [name]: value }, `/${name}`)
    }
    case 'missing-required': {
      const required =
        isJsonObject(bodySchema) && Array.isArray(bodySchema.required) ? bodySchema.required.map(String) : []
      if (!isJsonObject(body) || required.length === 0) break
      const name = required[pick % required.length] as string
      const { [name]: _removed, ...rest } = body
      return withBody(rest, `/${name}`)
    }
    case 'extra-member': {
      if (!isJsonObject(body) || operation.bodySchemaPointer === undefined) break
      const json = { ...body, fuzzExtraMember: pick }
      const extra = withBody(json, '/fuzzExtraMember')
      return arbitraries.validButForUnknownMembers(operation.bodySchemaPointer, json)
        ? { ...extra, unknownMembers: ['body.fuzzExtraMember'] }
        : extra
    }
    case 'out-of-range': {
      if (!isJsonObject(body)) break
      for (const name of members) {
        const schema = memberSchema(name)
        if (!schema) continue
        if (typeof schema.maximum === 'number')
          return withBody({ ...body, [name]: schema.maximum + 1 }, `/${name}`)
        if (typeof schema.minimum === 'number')
          return withBody({ ...body, [name]: schema.minimum - 1 }, `/${name}`)
        if (typeof schema.maxLength === 'number')
          return withBody({ ...body, [name]: 'x'.repeat(schema.maxLength + 1) }, `/${name}`)
      }
      if (members.length > 0) return withBody({ ...body, [members[0] as string]: 1e308 }, `/${members[0]}`)
      // No member to push out of range (every member optional, none generated): the one added is
      // unknown to the document, which the service may ignore and name, as for extra-member.
      const json = { ...body, fuzz: 1e308 }
      const added = withBody(json, '/fuzz')
      return operation.bodySchemaPointer !== undefined &&
        arbitraries.validButForUnknownMembers(operation.bodySchemaPointer, json)
        ? { ...added, unknownMembers: ['body.fuzz'] }
        : added
    }
    case 'huge-string': {
      if (!isJsonObject(body) || members.length === 0) break
      const name = members[pick % members.length] as string
      return withBody({ ...body, [name]: 'a'.repeat(size) }, `/${name}`)
    }
    case 'not-an-object': {
      if (operation.bodySchemaPointer === undefined) break
      const values = [[], 'fuzz', 42, null, true]
      return withBody(values[pick % values.length], '')
    }
    case 'malformed-json': {
      if (operation.bodySchemaPointer === undefined) break
      const { body: _body, ...rest } = base
      const text = JSON.stringify(body ?? {})
      return {
        ...rest,
        label,
        rawBody: text.slice(0, Math.max(1, pick % text.length)),
        headers: { ...base.headers, 'content-type': 'application/json' },
        valid: false,
      }
    }
    case 'wrong-media-type': {
      if (operation.bodySchemaPointer === undefined) break
      const { body: _body, ...rest } = base
      return {
        ...rest,
        label,
        rawBody: JSON.stringify(body ?? {}),
        headers: { ...base.headers, 'content-type': 'text/plain' },
        valid: false,
      }
    }
    case 'missing-body': {
      if (!operation.bodyRequired) break
      const { body: _body, ...rest } = base
      return { ...rest, label, valid: false }
    }
    case 'bad-parameter': {
      const query = operation.parameters.filter((parameter) => parameter.in === 'query')
      if (query.length === 0) break
      const parameter = query[pick % query.length] as OperationParameter
      const value = pick % 2 === 0 ? 'x'.repeat(Math.min(size, 4_000)) : '%%not valid%%'
      const valid = arbitraries.problems(parameter.schemaPointer, value).length === 0
      return {
        ...base,
        label: `${label} ${parameter.name}`,
        query: { ...base.query, [parameter.name]: value },
        valid,
      }
    }
    case 'missing-parameter': {
      const required = operation.parameters.filter(
        (parameter) => parameter.required && parameter.in === 'query',
      )
      if (required.length === 0) break
      const parameter = required[pick % required.length] as OperationParameter
      const { [parameter.name]: _removed, ...query } = base.query
      return { ...base, label: `${label} ${parameter.name}`, query, valid: false }
    }
  }
  // The mutation does not apply to this operation (no body, no query): the request stays valid.
  return { ...base, label: `${label} (n/a)` }
}
