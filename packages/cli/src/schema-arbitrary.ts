import { createOpenApiAjv, type OpenApiDocument, openSchema } from '@pontis/http'
import type { ValidateFunction } from 'ajv'
import fc from 'fast-check'

type JsonObject = Record<string, unknown>

const DOCUMENT_ID = 'https://pontis.invalid/generator.json'
/** Below this depth objects get their required members only, so recursive schemas stay finite. */
const OPTIONAL_MEMBERS_DEPTH = 4
/** At most this many optional members per object: every member at once breaks cross-field rules. */
const MAX_OPTIONAL_MEMBERS = 4
/** Arrays get at most this many items above their `minItems`. */
const EXTRA_ITEMS = 2

export interface SchemaArbitraryOptions {
  /**
   * Realistic values by member name (`originChainId: [31337]`), preferred over values generated
   * from the schema. A deployment only answers 2xx to ids it knows; hints make generated requests
   * reach past the "unknown chain" answers.
   */
  readonly hints?: Readonly<Record<string, readonly unknown[]>>
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** JSON pointer escaping for one segment. */
function segment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

/**
 * Generates values valid against schemas of an OpenAPI 3.1 document, as fast-check arbitraries.
 *
 * The generator is deliberately simple: it follows `type`, `const`, `enum`, `oneOf`/`anyOf`,
 * plain `allOf` parts, string `pattern`s (through `fc.stringMatching`), lengths, ranges and item
 * counts, prefers documented `example(s)` and caller hints, and adds at most a few optional
 * members per object. Rules it does not model (`if`/`then`, `dependentRequired`, `not`) are
 * enforced afterwards: every value is filtered through Ajv against the real schema, so a value
 * the arbitrary yields is always valid.
 */
export class SchemaArbitraries {
  readonly #document: OpenApiDocument
  readonly #hints: Readonly<Record<string, readonly unknown[]>>
  readonly #ajv = createOpenApiAjv()
  readonly #validators = new Map<string, ValidateFunction>()
  readonly #openAjv = createOpenApiAjv()
  readonly #openValidators = new Map<string, ValidateFunction>()

  constructor(document: OpenApiDocument, options: SchemaArbitraryOptions = {}) {
    this.#document = document
    this.#hints = options.hints ?? {}
    this.#ajv.addSchema(document as JsonObject, DOCUMENT_ID, undefined, false)
    this.#openAjv.addSchema(openSchema(document) as JsonObject, DOCUMENT_ID, undefined, false)
  }

  /** The node a JSON pointer (`/components/schemas/Foo`) names in the document. */
  at(pointer: string): unknown {
    return pointer
      .split('/')
      .slice(1)
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>(
        (node, key) => (typeof node === 'object' && node !== null ? (node as JsonObject)[key] : undefined),
        this.#document,
      )
  }

  /** Follows `$ref`s to the schema itself, keeping the pointer it lives at. */
  resolve(pointer: string): { schema: unknown; pointer: string } {
    let at = pointer
    let schema = this.at(pointer)
    for (let hops = 0; isJsonObject(schema) && typeof schema.$ref === 'string' && hops < 20; hops++) {
      if (!schema.$ref.startsWith('#/'))
        throw new Error(`only local $refs are supported, found ${schema.$ref}`)
      at = schema.$ref.slice(1)
      schema = this.at(at)
    }
    return { schema, pointer: at }
  }

  /** Ajv's verdict for `value` against the schema at `pointer`: empty when valid. */
  problems(pointer: string, value: unknown): string[] {
    let validate = this.#validators.get(pointer)
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` })
      this.#validators.set(pointer, validate)
    }
    if (validate(value)) return []
    return (validate.errors ?? []).map(
      (error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`,
    )
  }

  /**
   * True when `value` breaks the schema at `pointer` only by members the document does not list:
   * valid once no object refuses unknown members. Pontis documents ignore such members in requests
   * and name them in the `Ignored-Members` header.
   */
  validButForUnknownMembers(pointer: string, value: unknown): boolean {
    let validate = this.#openValidators.get(pointer)
    if (!validate) {
      validate = this.#openAjv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` })
      this.#openValidators.set(pointer, validate)
    }
    return validate(value) && this.problems(pointer, value).length > 0
  }

  /** Values valid against the schema at `pointer` (checked by Ajv). */
  valid(pointer: string): fc.Arbitrary<unknown> {
    return this.#build(pointer, 0, undefined).filter((value) => this.problems(pointer, value).length === 0)
  }

  #examplesOf(node: unknown): unknown[] {
    if (!isJsonObject(node)) return []
    const found: unknown[] = []
    if ('example' in node) found.push(node.example)
    if (Array.isArray(node.examples)) found.push(...node.examples)
    return found
  }

  #build(pointer: string, depth: number, member: string | undefined): fc.Arbitrary<unknown> {
    const raw = this.at(pointer)
    const { schema, pointer: resolved } = this.resolve(pointer)
    const generated = this.#generate(schema, resolved, depth)
    const hinted = member !== undefined ? (this.#hints[member] ?? []) : []
    const examples = [...this.#examplesOf(raw), ...(raw === schema ? [] : this.#examplesOf(schema))]
    // fast-check leans to the first choice on small sizes, so the most realistic values go first.
    const choices: fc.WeightedArbitrary<unknown>[] = []
    if (hinted.length > 0) choices.push({ weight: 8, arbitrary: fc.constantFrom(...hinted) })
    if (examples.length > 0)
      choices.push({ weight: hinted.length > 0 ? 1 : 3, arbitrary: fc.constantFrom(...examples) })
    if (choices.length === 0) return generated
    return fc.oneof(...choices, { weight: 1, arbitrary: generated })
  }

  #generate(schema: unknown, pointer: string, depth: number): fc.Arbitrary<unknown> {
    if (schema === true || schema === undefined) return fc.jsonValue({ maxDepth: 1 })
    if (!isJsonObject(schema)) return fc.constant(null)
    if ('const' in schema) return fc.constant(schema.const)
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum)
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      const branches = schema[keyword]
      if (Array.isArray(branches) && branches.length > 0) {
        return fc.oneof(
          ...branches.map((_, index) => this.#build(`${pointer}/${keyword}/${index}`, depth, undefined)),
        )
      }
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined]
    if (types.length > 1) return fc.oneof(...types.map((type) => this.#ofType(schema, pointer, type, depth)))
    return this.#ofType(schema, pointer, types[0], depth)
  }

  #ofType(
    schema: JsonObject,
    pointer: string,
    type: string | undefined,
    depth: number,
  ): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null)
      case 'boolean':
        return fc.boolean()
      case 'integer':
        return this.#integer(schema)
      case 'number':
        return fc.double({
          noNaN: true,
          noDefaultInfinity: true,
          ...(typeof schema.minimum === 'number' ? { min: schema.minimum } : {}),
          ...(typeof schema.maximum === 'number' ? { max: schema.maximum } : {}),
        })
      case 'string':
        return this.#string(schema)
      case 'array':
        return this.#array(schema, pointer, depth)
      default:
        if (type === 'object' || isJsonObject(schema.properties) || Array.isArray(schema.allOf))
          return this.#object(schema, pointer, depth)
        return fc.jsonValue({ maxDepth: 1 })
    }
  }

  #integer(schema: JsonObject): fc.Arbitrary<number> {
    let min = typeof schema.minimum === 'number' ? schema.minimum : Number.MIN_SAFE_INTEGER
    let max = typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER
    if (typeof schema.exclusiveMinimum === 'number') min = Math.max(min, schema.exclusiveMinimum + 1)
    if (typeof schema.exclusiveMaximum === 'number') max = Math.min(max, schema.exclusiveMaximum - 1)
    min = Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER)
    max = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER)
    // Small values are the common case in requests; big ones still come up.
    const small = fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1_000_000) })
    const any = fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number)
    return min <= 1_000_000 && max >= -1000 ? fc.oneof(small, any) : any
  }

  #string(schema: JsonObject): fc.Arbitrary<string> {
    const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0
    const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined
    const fits = (value: string) =>
      value.length >= minLength && (maxLength === undefined || value.length <= maxLength)
    if (typeof schema.pattern === 'string') {
      return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter(fits)
    }
    switch (schema.format) {
      case 'uri':
        return fc.webUrl({ validSchemes: ['https'] }).filter(fits)
      case 'date-time':
        return fc
          .date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true })
          .map((date) => date.toISOString())
      case 'email':
        return fc.emailAddress().filter(fits)
      default:
        return fc.string({ minLength, maxLength: Math.min(maxLength ?? 24, minLength + 24) })
    }
  }

  #array(schema: JsonObject, pointer: string, depth: number): fc.Arbitrary<unknown[]> {
    const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0
    const maxLength = Math.min(
      typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY,
      minLength + EXTRA_ITEMS,
    )
    const items =
      schema.items === undefined
        ? fc.jsonValue({ maxDepth: 1 })
        : this.#build(`${pointer}/items`, depth + 1, undefined)
    if (schema.uniqueItems === true) {
      return fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(item) })
    }
    return fc.array(items, { minLength, maxLength })
  }

  /** Object schemas, with the plain (non-conditional) parts of an `allOf` merged in. */
  #object(schema: JsonObject, pointer: string, depth: number): fc.Arbitrary<JsonObject> {
    const members = new Map<string, string>()
    const required = new Set<string>()
    const collect = (part: JsonObject, at: string) => {
      if (isJsonObject(part.properties))
        for (const name of Object.keys(part.properties))
          members.set(name, `${at}/properties/${segment(name)}`)
      if (Array.isArray(part.required)) for (const name of part.required) required.add(String(name))
    }
    collect(schema, pointer)
    if (Array.isArray(schema.allOf)) {
      schema.allOf.forEach((_, index) => {
        const { schema: part, pointer: at } = this.resolve(`${pointer}/allOf/${index}`)
        if (isJsonObject(part) && !('if' in part)) collect(part, at)
      })
    }
    const requiredMembers = [...members.keys()].filter((name) => required.has(name))
    const optionalMembers =
      depth < OPTIONAL_MEMBERS_DEPTH ? [...members.keys()].filter((name) => !required.has(name)) : []
    const arbitraries = (names: readonly string[]) =>
      Object.fromEntries(
        names.map((name) => [name, this.#build(members.get(name) as string, depth + 1, name)]),
      )
    // A free-form map (`additionalProperties: {schema}`, no declared members): a few entries.
    if (members.size === 0 && isJsonObject(schema.additionalProperties)) {
      const minKeys = typeof schema.minProperties === 'number' ? schema.minProperties : 0
      const keys = isJsonObject(schema.propertyNames)
        ? this.#build(`${pointer}/propertyNames`, depth + 1, undefined).map(String)
        : fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/)
      return fc.dictionary(keys, this.#build(`${pointer}/additionalProperties`, depth + 1, undefined), {
        minKeys,
        maxKeys: minKeys + EXTRA_ITEMS,
      })
    }
    const base = fc.record(arbitraries(requiredMembers))
    if (optionalMembers.length === 0) return base
    return fc
      .tuple(
        base,
        fc.subarray(optionalMembers, { maxLength: Math.min(MAX_OPTIONAL_MEMBERS, optionalMembers.length) }),
      )
      .chain(([requiredPart, chosen]) =>
        fc.record(arbitraries(chosen)).map((optionalPart) => ({ ...requiredPart, ...optionalPart })),
      )
  }
}
