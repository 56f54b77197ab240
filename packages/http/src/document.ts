import { readFile } from 'node:fs/promises'
import { Validator } from '@seriousme/openapi-schema-validator'
import { load as parseYaml } from 'js-yaml'

/** An OpenAPI 3.1 document as parsed JSON. Shapes below the top level are read through helpers. */
export interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string; description?: string }
  paths: Record<string, Record<string, unknown>>
  components?: Record<string, unknown>
  [key: string]: unknown
}

export interface LoadedDocument {
  /** The document as written (with `$ref`s), served at /documentation/openapi.json. */
  readonly document: OpenApiDocument
  /** The YAML source, served at /documentation/openapi.yaml. */
  readonly source: string
  readonly path: string
}

/**
 * Reads an OpenAPI document and validates it as OpenAPI 3.1. openapi-backend only knows 3.0 and
 * would otherwise drop every operation silently, so a document that fails here never serves.
 */
export async function loadOpenApiDocument(path: string): Promise<LoadedDocument> {
  const source = await readFile(path, 'utf8')
  const cached = loadedDocuments.get(path)
  if (cached?.source === source) return cached.loaded
  const loaded = parseAndValidate(path, source)
  const entry = { source, loaded }
  loadedDocuments.set(path, entry)
  loaded.catch(() => {
    if (loadedDocuments.get(path) === entry) loadedDocuments.delete(path)
  })
  return loaded
}

/**
 * Documents already parsed and validated in this process, by path, while their text is unchanged: a
 * process that starts several services (tests, benchmarks) parses and validates each once (about
 * 0.3-0.8 CPU-s per start). The document is shared, and read-only by convention.
 */
const loadedDocuments = new Map<string, { source: string; loaded: Promise<LoadedDocument> }>()

async function parseAndValidate(path: string, source: string): Promise<LoadedDocument> {
  // js-yaml: the same JSON as the yaml package for our documents, in about a fifth of the CPU.
  const document = parseYaml(source) as OpenApiDocument
  await assertValidOpenApi31(document, path)
  return { document, source, path }
}

export async function assertValidOpenApi31(document: OpenApiDocument, name: string): Promise<void> {
  if (typeof document?.openapi !== 'string' || !document.openapi.startsWith('3.1.')) {
    throw new Error(`${name}: expected an OpenAPI 3.1 document, found openapi: ${String(document?.openapi)}`)
  }
  const validator = new Validator()
  const result = await validator.validate(structuredClone(document))
  if (!result.valid) {
    const details = JSON.stringify(result.errors, null, 2)
    throw new Error(`${name} is not a valid OpenAPI 3.1 document:\n${details}`)
  }
}

/** JSON pointer escaping for a path segment. */
export function pointerSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1')
}
