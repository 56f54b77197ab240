import type { ValidateFunction } from 'ajv'
import type { Ajv2020 } from 'ajv/dist/2020.js'

/** A JSON Schema as the dereferenced document holds it; only the keywords the walk needs are named. */
interface SchemaNode {
  readonly type?: unknown
  readonly properties?: Readonly<Record<string, SchemaNode>>
  readonly additionalProperties?: boolean | SchemaNode
  readonly patternProperties?: Readonly<Record<string, SchemaNode>>
  readonly items?: SchemaNode
  readonly prefixItems?: readonly SchemaNode[]
  readonly allOf?: readonly SchemaNode[]
  readonly oneOf?: readonly SchemaNode[]
  readonly anyOf?: readonly SchemaNode[]
  readonly then?: SchemaNode
  readonly else?: SchemaNode
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A copy of `schema` in which no object refuses members it does not list (`additionalProperties:
 * false` dropped): what the service accepts. The document keeps the closed shapes, so generated
 * types stay exact and the walk below can tell which members were not the document's.
 */
export function openSchema<T>(schema: T, seen = new WeakMap<object, unknown>()): T {
  if (Array.isArray(schema)) return schema.map((item) => openSchema(item, seen)) as T
  if (!isObject(schema)) return schema
  const known = seen.get(schema)
  if (known !== undefined) return known as T
  const copy: Record<string, unknown> = {}
  seen.set(schema, copy)
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'additionalProperties' && value === false) continue
    copy[key] = openSchema(value, seen)
  }
  return copy as T
}

function joinField(path: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`
}

/**
 * Finds the members of `value` that `schema` does not list, removes them from `value`, and returns
 * their paths (`body.foo`, `body.txs[0].bar`). Only called for a value the open schema accepts,
 * so a `oneOf`/`anyOf` has a branch that matches; that branch decides what is known.
 */
export class UnknownMembers {
  readonly #ajv: Ajv2020
  readonly #branchValidators = new WeakMap<object, ValidateFunction>()

  constructor(ajv: Ajv2020) {
    this.#ajv = ajv
  }

  strip(schema: unknown, value: unknown, path: string): string[] {
    const found: string[] = []
    this.#walk(schema as SchemaNode, value, path, found)
    return found
  }

  #walk(schema: SchemaNode | undefined, value: unknown, path: string, found: string[]): void {
    if (!isObject(schema)) return
    if (Array.isArray(value)) {
      const parts = this.#parts(schema, value)
      value.forEach((item, index) => {
        for (const part of parts) {
          const itemSchema = part.prefixItems?.[index] ?? part.items
          this.#walk(itemSchema, item, `${path}[${index}]`, found)
        }
      })
      return
    }
    if (!isObject(value)) return
    const parts = this.#parts(schema, value)
    const closed = parts.some((part) => part.additionalProperties === false)
    for (const name of Object.keys(value)) {
      const memberSchemas: SchemaNode[] = []
      let listed = false
      for (const part of parts) {
        const property = part.properties?.[name]
        if (property !== undefined) {
          listed = true
          memberSchemas.push(property)
        }
        for (const [pattern, patternSchema] of Object.entries(part.patternProperties ?? {})) {
          if (new RegExp(pattern, 'u').test(name)) {
            listed = true
            memberSchemas.push(patternSchema)
          }
        }
        if (isObject(part.additionalProperties)) memberSchemas.push(part.additionalProperties)
      }
      const memberPath = joinField(path, name)
      if (!listed && closed) {
        found.push(memberPath)
        delete value[name]
        continue
      }
      for (const memberSchema of memberSchemas) this.#walk(memberSchema, value[name], memberPath, found)
    }
  }

  /** The schema and every sub-schema that applies to `value`: `allOf`, `then`/`else`, the matching branch. */
  #parts(schema: SchemaNode, value: unknown): SchemaNode[] {
    const parts: SchemaNode[] = [schema]
    for (const sub of [...(schema.allOf ?? []), schema.then, schema.else]) {
      if (isObject(sub)) parts.push(...this.#parts(sub, value))
    }
    for (const branches of [schema.oneOf, schema.anyOf]) {
      const branch = branches?.find((candidate) => this.#matches(candidate, value))
      if (branch) parts.push(...this.#parts(branch, value))
    }
    return parts
  }

  #matches(branch: SchemaNode, value: unknown): boolean {
    let validate = this.#branchValidators.get(branch)
    if (validate === undefined) {
      validate = this.#ajv.compile(openSchema(branch))
      this.#branchValidators.set(branch, validate)
    }
    return validate(structuredClone(value)) === true
  }
}
