/**
 * The intents document's `StepItemData` is the union of the step formats the plugins declare
 * (`stepFormats` of `definePlugin`): every declared format is a variant of the document with an
 * equal schema (annotations aside), and the document has no variant no plugin declares. Partners
 * keep typed per-family shapes while the shapes stay the plugins' own.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { SIGNATURE_STEP_FORMAT } from '@pontis/core'
import t from 'tap'
import { parse } from 'yaml'
import type { PontisPlugin } from '../../packages/core/src/plugin.js'
import bitcoin from '../../plugins/bitcoin/src/index.js'
import evm from '../../plugins/evm/src/index.js'
import hyperliquid from '../../plugins/hyperliquid/src/index.js'
import lighter from '../../plugins/lighter/src/index.js'
import svm from '../../plugins/svm/src/index.js'
import tron from '../../plugins/tron/src/index.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

const root = fileURLToPath(new URL('../../', import.meta.url))
const doc = parse(readFileSync(`${root}openapi/intents.yaml`, 'utf8')) as JsonObject
const schemas = (doc.components as JsonObject).schemas as JsonObject
const PLUGINS: readonly PontisPlugin[] = [evm, svm, bitcoin, lighter, hyperliquid, tron]

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A document schema as a plugin writes it: `$ref`s inlined (siblings of a `$ref` win), prose
 * (`description`, `examples`) and the OpenAPI-only `discriminator` left out.
 */
function standalone(node: Json): Json {
  if (Array.isArray(node)) return node.map(standalone)
  if (!isObject(node)) return node
  if (typeof node.$ref === 'string') {
    const { $ref, ...siblings } = node
    const target = schemas[$ref.replace('#/components/schemas/', '')]
    if (!isObject(target)) throw new Error(`unresolved ${$ref}`)
    return standalone({ ...target, ...siblings })
  }
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    const annotation =
      (key === 'description' && typeof value === 'string') ||
      (key === 'examples' && Array.isArray(value)) ||
      key === 'discriminator'
    if (!annotation) out[key] = standalone(value)
  }
  return out
}

/** The document's step item variants by their `format` value. */
function documentFormats(): Map<string, Json> {
  const variants = ((schemas.StepItemData as JsonObject).oneOf as JsonObject[]).map((variant) =>
    standalone(variant),
  )
  const formats = new Map<string, Json>()
  for (const variant of variants) {
    const format = ((variant as JsonObject).properties as JsonObject).format as JsonObject
    formats.set(String(format.const), variant)
  }
  return formats
}

t.test('every format a plugin declares is in the document with an equal schema', async (t) => {
  const documented = documentFormats()
  for (const plugin of PLUGINS) {
    const declared = Object.entries(plugin.stepFormats ?? {})
    t.ok(declared.length > 0, `${plugin.name} declares its step formats`)
    for (const [format, schema] of declared) {
      t.ok(documented.has(format), `${plugin.name}: ${format} is a StepItemData variant`)
      t.same(schema, documented.get(format), `${plugin.name}: ${format} has the document's schema`)
    }
  }
})

t.test('the document has no step format no plugin declares, and a family format has one owner', async (t) => {
  const owners = new Map<string, string[]>()
  for (const plugin of PLUGINS) {
    for (const format of Object.keys(plugin.stepFormats ?? {})) {
      owners.set(format, [...(owners.get(format) ?? []), plugin.name])
    }
  }
  for (const format of documentFormats().keys()) {
    // `signature` is the execute API's own format (core's SIGNATURE_STEP_FORMAT): any family may serve it.
    if (format === 'signature') t.ok(owners.get(format)?.length, 'signature is declared by a plugin')
    else t.same(owners.get(format)?.length, 1, `${format} is declared by one plugin (${owners.get(format)})`)
  }
  t.same(
    documentFormats().get('signature'),
    SIGNATURE_STEP_FORMAT,
    "core's shared signature format is the document's SignatureData",
  )
  const mapping = ((schemas.StepItemData as JsonObject).discriminator as JsonObject).mapping as JsonObject
  t.same(
    Object.keys(mapping).sort(),
    [...owners.keys()].sort(),
    'the discriminator maps exactly the declared formats',
  )
})

t.test('the permit kinds a plugin declares are the execute API kinds', async (t) => {
  const kinds = PLUGINS.flatMap((plugin) => plugin.permitKinds ?? [])
  t.same(kinds, ['eip3009-receive'], 'EVM redeems EIP-3009 authorizations; no other family has permits yet')
})
