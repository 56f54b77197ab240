/**
 * Generic checks of both OpenAPI documents (openapi/intents.yaml and openapi/oracle.yaml):
 * valid OpenAPI 3.1, every internal `$ref` resolves, every schema compiles under Ajv 2020 in strict
 * mode, every example validates against its schema, and every operation has a unique operationId,
 * a `default` response and examples for every request body and response that has content.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import ajvFormats from 'ajv-formats'
import t from 'tap'
import { parse } from 'yaml'
import { addPontisFormats } from '../../packages/core/src/validation.js'

const DOCUMENTS = ['intents', 'oracle'] as const
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
/** Keywords whose value is one subschema. */
const SUBSCHEMA_KEYWORDS = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
] as const
/** Keywords whose value is a map of subschemas. */
const SUBSCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const
/** Keywords whose value is an array of subschemas. */
const SUBSCHEMA_ARRAY_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const
/** OpenAPI's additions to the JSON Schema vocabulary (annotations for validation purposes). */
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs'] as const
/**
 * Fields of the OpenAPI root object. The whole document is added to Ajv as one schema so that
 * `$ref`s resolve; strict mode must see its root members as (inert) keywords.
 */
const ROOT_FIELDS = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'paths',
  'webhooks',
  'components',
  'security',
  'tags',
] as const

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

interface ExampleCase {
  /** JSON pointer of the example value. */
  readonly at: string
  /** JSON pointer of the schema it must satisfy. */
  readonly schemaAt: string
  readonly value: Json
}

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')
const pointer = (base: string, ...segments: (string | number)[]): string =>
  segments.reduce<string>((acc, s) => `${acc}/${escapePointer(String(s))}`, base)

/** Resolves a JSON pointer (`/a/b`) inside the document; undefined when it leads nowhere. */
function resolvePointer(doc: Json, ptr: string): Json | undefined {
  if (ptr === '') return doc
  let node: Json | undefined = doc
  for (const raw of ptr.slice(1).split('/')) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(node)) node = node[Number(segment)]
    else if (isObject(node)) node = Object.hasOwn(node, segment) ? node[segment] : undefined
    else return undefined
  }
  return node
}

/** Follows an internal `$ref` (`#/...`) chain; throws on a dangling or external reference. */
function deref(doc: Json, node: Json | undefined): Json | undefined {
  let current = node
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    const ref: string = current.$ref
    if (!ref.startsWith('#') || hops > 20) throw new Error(`unresolvable $ref ${ref}`)
    const target = resolvePointer(doc, ref.slice(1))
    if (target === undefined) throw new Error(`dangling $ref ${ref}`)
    current = target
  }
  return current
}

/** Every `$ref` string in the document, with where it sits. */
function collectRefs(node: Json, at: string, out: { at: string; ref: string }[]): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) collectRefs(item, pointer(at, i), out)
  } else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push({ at, ref: value })
      else collectRefs(value, pointer(at, key), out)
    }
  }
}

/** Every `x-` key anywhere in the document (registered with Ajv as annotation keywords). */
function collectExtensionKeys(node: Json, out: Set<string>): void {
  if (Array.isArray(node)) for (const item of node) collectExtensionKeys(item, out)
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-')) out.add(key)
      collectExtensionKeys(value, out)
    }
  }
}

/** Schema-level `examples` arrays and `example` values, walking the schema's structure. */
function collectSchemaExamples(schema: Json, at: string, out: ExampleCase[], schemas: string[]): void {
  if (!isObject(schema)) return
  schemas.push(at)
  if (Array.isArray(schema.examples)) {
    schema.examples.forEach((value, i) => {
      out.push({ at: pointer(at, 'examples', i), schemaAt: at, value })
    })
  }
  if (schema.example !== undefined)
    out.push({ at: pointer(at, 'example'), schemaAt: at, value: schema.example })
  for (const keyword of SUBSCHEMA_KEYWORDS) {
    const sub = schema[keyword]
    if (sub !== undefined) collectSchemaExamples(sub, pointer(at, keyword), out, schemas)
  }
  for (const keyword of SUBSCHEMA_MAP_KEYWORDS) {
    const map = schema[keyword]
    if (isObject(map)) {
      for (const [name, sub] of Object.entries(map))
        collectSchemaExamples(sub, pointer(at, keyword, name), out, schemas)
    }
  }
  for (const keyword of SUBSCHEMA_ARRAY_KEYWORDS) {
    const list = schema[keyword]
    if (Array.isArray(list))
      for (const [i, sub] of list.entries()) collectSchemaExamples(sub, pointer(at, keyword, i), out, schemas)
  }
}

/**
 * Every example of the document: media types, parameters, headers and any other object that
 * pairs a `schema` with `example`/`examples` (the websocket messages), plus schema-level examples.
 */
function collectExamples(doc: Json): { cases: ExampleCase[]; problems: string[]; schemas: string[] } {
  const cases: ExampleCase[] = []
  const problems: string[] = []
  const schemas: string[] = []
  const visit = (node: Json, at: string): void => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) visit(item, pointer(at, i))
      return
    }
    if (!isObject(node)) return
    if (at === '/components/schemas') {
      for (const [name, schema] of Object.entries(node))
        collectSchemaExamples(schema, pointer(at, name), cases, schemas)
      return
    }
    const schema = node.schema
    if (isObject(schema)) {
      const schemaAt = pointer(at, 'schema')
      collectSchemaExamples(schema, schemaAt, cases, schemas)
      if (node.example !== undefined)
        cases.push({ at: pointer(at, 'example'), schemaAt, value: node.example })
      const examples = node.examples
      if (isObject(examples)) {
        for (const [name, entry] of Object.entries(examples)) {
          const exampleAt = pointer(at, 'examples', name)
          let example: Json | undefined
          try {
            example = deref(doc, entry)
          } catch (error) {
            problems.push(`${exampleAt}: ${String(error)}`)
            continue
          }
          if (isObject(example) && Object.hasOwn(example, 'value')) {
            cases.push({ at: exampleAt, schemaAt, value: example.value ?? null })
          } else problems.push(`${exampleAt}: example without an inline value`)
        }
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'schema' || key === 'example' || key === 'examples') continue
      visit(value, pointer(at, key))
    }
  }
  visit(doc, '')
  return { cases, problems, schemas }
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
    .join('; ')
}

function makeAjv(doc: Json, id: string): { schemaAt: (ptr: string) => ValidateFunction; ajv: Ajv2020 } {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateFormats: true,
  })
  ajvFormats.default(ajv)
  // The documents' own formats (`uint256`), as the servers register them.
  addPontisFormats(ajv)
  const extensions = new Set<string>()
  collectExtensionKeys(doc, extensions)
  for (const keyword of [...OPENAPI_KEYWORDS, ...ROOT_FIELDS, ...extensions]) ajv.addKeyword({ keyword })
  ajv.addSchema(doc as object, id)
  const cache = new Map<string, ValidateFunction>()
  const schemaAt = (ptr: string): ValidateFunction => {
    let validate = cache.get(ptr)
    if (!validate) {
      const fragment = ptr
        .split('/')
        .map((segment) => encodeURIComponent(segment))
        .join('/')
      validate = ajv.compile({ $ref: `${id}#${fragment}` })
      cache.set(ptr, validate)
    }
    return validate
  }
  return { schemaAt, ajv }
}

/** The tag value a variant declares for `propertyName` (a `const` or a one-value `enum`). */
function declaredTag(variant: Json | undefined, propertyName: string): string | undefined {
  if (!isObject(variant) || !isObject(variant.properties)) return undefined
  const property = variant.properties[propertyName]
  if (!isObject(property)) return undefined
  if (typeof property.const === 'string') return property.const
  if (Array.isArray(property.enum) && property.enum.length === 1 && typeof property.enum[0] === 'string') {
    return property.enum[0]
  }
  return undefined
}

/**
 * OpenAPI semantics of `discriminator`: every variant is a `$ref` that requires the tag property
 * and fixes its value; `mapping` (or, without one, the implicit schema-name mapping) must name
 * exactly the variants with the values they declare.
 */
function checkDiscriminator(doc: Json, at: string, schema: JsonObject): string[] {
  const problems: string[] = []
  const discriminator = schema.discriminator as JsonObject
  const propertyName = discriminator.propertyName
  if (typeof propertyName !== 'string') return [`${at}: discriminator without propertyName`]
  const variants = schema.oneOf ?? schema.anyOf
  if (!Array.isArray(variants)) return [`${at}: discriminator without oneOf/anyOf`]
  const refs: string[] = []
  for (const variant of variants) {
    if (!isObject(variant) || typeof variant.$ref !== 'string') {
      problems.push(`${at}: discriminated variant is not a $ref`)
      continue
    }
    refs.push(variant.$ref)
    const target = deref(doc, variant)
    const required = isObject(target) && Array.isArray(target.required) ? target.required : []
    if (!required.includes(propertyName)) problems.push(`${variant.$ref}: does not require ${propertyName}`)
    if (declaredTag(target, propertyName) === undefined) {
      problems.push(`${variant.$ref}: no const value for ${propertyName}`)
    }
  }
  const mapping = isObject(discriminator.mapping)
    ? Object.entries(discriminator.mapping)
    : refs.map((ref) => [ref.slice(ref.lastIndexOf('/') + 1), ref] as const)
  for (const [value, ref] of mapping) {
    if (typeof ref !== 'string' || !refs.includes(ref)) {
      problems.push(`${at}: mapping ${value} -> ${String(ref)} is not a variant`)
      continue
    }
    const tag = declaredTag(deref(doc, { $ref: ref }), propertyName)
    if (tag !== value)
      problems.push(`${at}: mapping ${value} -> ${ref}, but the variant declares ${String(tag)}`)
  }
  const mapped = new Set(mapping.map(([, ref]) => ref))
  for (const ref of refs) if (!mapped.has(ref)) problems.push(`${at}: variant ${ref} has no mapping entry`)
  return problems
}

interface Operation {
  readonly at: string
  readonly label: string
  readonly op: JsonObject
}

function collectOperations(doc: JsonObject): Operation[] {
  const operations: Operation[] = []
  for (const section of ['paths', 'webhooks'] as const) {
    const items = doc[section]
    if (!isObject(items)) continue
    for (const [path, item] of Object.entries(items)) {
      if (!isObject(item)) continue
      for (const method of HTTP_METHODS) {
        const op = item[method]
        if (isObject(op)) {
          operations.push({
            at: pointer('', section, path, method),
            label: `${method.toUpperCase()} ${path}`,
            op,
          })
        }
      }
    }
  }
  return operations
}

const root = fileURLToPath(new URL('../../', import.meta.url))

for (const name of DOCUMENTS) {
  t.test(`openapi/${name}.yaml`, async (t) => {
    const file = `${root}openapi/${name}.yaml`
    t.ok(existsSync(file), `openapi/${name}.yaml exists`)
    if (!existsSync(file)) return
    const doc = parse(readFileSync(file, 'utf8'), { strict: true, uniqueKeys: true }) as Json
    if (!isObject(doc)) {
      t.fail('document is a mapping')
      return
    }

    t.test('is a valid OpenAPI 3.1 document', async (t) => {
      t.equal(doc.openapi, '3.1.0')
      const validator = new Validator()
      const result = await validator.validate(doc as Record<string, unknown>)
      t.ok(
        result.valid,
        result.valid ? 'valid' : `OpenAPI schema errors: ${JSON.stringify(result.errors).slice(0, 4000)}`,
      )
      t.equal(validator.version, '3.1')
    })

    t.test('every internal $ref resolves', async (t) => {
      const refs: { at: string; ref: string }[] = []
      collectRefs(doc, '', refs)
      t.ok(refs.length > 0, 'the document uses $ref')
      const broken = refs.filter(
        ({ ref }) => !ref.startsWith('#') || resolvePointer(doc, ref.slice(1)) === undefined,
      )
      t.same(
        broken.map((b) => `${b.at} -> ${b.ref}`),
        [],
        'no dangling or external $ref',
      )
    })

    const id = `https://pontis.invalid/openapi/${name}.yaml`
    const { schemaAt, ajv } = makeAjv(doc, id)
    const { cases, problems, schemas } = collectExamples(doc)

    t.test('every schema compiles under Ajv 2020 (strict) and passes the meta-schema', async (t) => {
      const componentSchemas = isObject(doc.components) ? doc.components.schemas : undefined
      t.ok(
        isObject(componentSchemas) && Object.keys(componentSchemas).length > 0,
        'components.schemas is not empty',
      )
      const failures: string[] = []
      for (const at of schemas) {
        const schema = resolvePointer(doc, at)
        if (isObject(schema) && !ajv.validateSchema(schema))
          failures.push(`${at}: ${formatErrors(ajv.errors)}`)
        try {
          schemaAt(at)
        } catch (error) {
          failures.push(`${at}: ${String(error)}`)
        }
      }
      t.same(failures, [], 'all schemas compile')
    })

    t.test('discriminators agree with the const values of their variants', async (t) => {
      const problems: string[] = []
      let count = 0
      for (const at of schemas) {
        const schema = resolvePointer(doc, at)
        if (!isObject(schema) || !isObject(schema.discriminator)) continue
        count++
        problems.push(...checkDiscriminator(doc, at, schema))
      }
      t.same(problems, [], `${count} discriminators are consistent`)
    })

    t.test('every example validates against its schema', async (t) => {
      t.same(problems, [], 'every examples entry carries an inline value')
      t.ok(cases.length > 0, 'the document has examples')
      const failures: string[] = []
      for (const c of cases) {
        let validate: ValidateFunction
        try {
          validate = schemaAt(c.schemaAt)
        } catch (error) {
          failures.push(`${c.at}: schema ${c.schemaAt} does not compile: ${String(error)}`)
          continue
        }
        if (!validate(c.value))
          failures.push(`${c.at} (schema ${c.schemaAt}): ${formatErrors(validate.errors)}`)
      }
      t.same(failures, [], `${cases.length} examples validate`)
    })

    t.test('operations: unique operationId, default response, examples everywhere', async (t) => {
      const operations = collectOperations(doc)
      t.ok(operations.length > 0, 'the document has operations')
      const seen = new Map<string, string>()
      const missing: string[] = []
      for (const { at, label, op } of operations) {
        const operationId = op.operationId
        if (typeof operationId !== 'string' || operationId === '') {
          missing.push(`${label}: no operationId`)
        } else if (seen.has(operationId)) {
          missing.push(`${label}: operationId ${operationId} already used by ${seen.get(operationId)}`)
        } else seen.set(operationId, label)

        const responses = op.responses
        if (!isObject(responses) || !Object.hasOwn(responses, 'default'))
          missing.push(`${label}: no default response`)

        const mediaTypes: { where: string; media: Json }[] = []
        const body = deref(doc, op.requestBody)
        if (isObject(body) && isObject(body.content)) {
          for (const [type, media] of Object.entries(body.content)) {
            mediaTypes.push({ where: `${at}/requestBody ${type}`, media })
          }
        }
        if (isObject(responses)) {
          for (const [status, response] of Object.entries(responses)) {
            const resolved = deref(doc, response)
            if (isObject(resolved) && isObject(resolved.content)) {
              for (const [type, media] of Object.entries(resolved.content)) {
                mediaTypes.push({ where: `${at}/responses/${status} ${type}`, media })
              }
            }
          }
        }
        for (const { where, media } of mediaTypes) {
          const hasExample =
            isObject(media) &&
            (media.example !== undefined ||
              (isObject(media.examples) && Object.keys(media.examples).length > 0))
          if (!hasExample) missing.push(`${where}: no example`)
        }
      }
      t.same(missing, [], `${operations.length} operations are complete`)
    })
  })
}
