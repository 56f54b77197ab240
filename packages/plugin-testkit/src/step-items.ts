/**
 * Validation of step item `data` against the intent service's OpenAPI document: the same schema
 * (`StepItemData`) a client reads quote steps with, so a plugin's steps are checked exactly as served.
 */
import { fileURLToPath } from 'node:url'
import { createOpenApiAjv, loadOpenApiDocument, type OpenApiDocument } from '@pontis/http'

/** The intent service's document, `openapi/intents.yaml` at the repository root. */
export const INTENTS_OPENAPI_PATH = fileURLToPath(new URL('../../../openapi/intents.yaml', import.meta.url))

/** The schema step item `data` must match, as a JSON pointer into the document. */
export const STEP_ITEM_DATA_POINTER = '/components/schemas/StepItemData'

const DOCUMENT_ID = 'https://pontis.invalid/plugin-testkit/intents.json'

/**
 * Checks one step item's `data`; answers the mismatches as sentences (empty when it conforms).
 * The value is checked as a client receives it: after a JSON round trip.
 */
export type StepItemValidator = (data: unknown) => readonly string[]

/**
 * A validator of step item `data` against `StepItemData` of `document`.
 * @throws Error when the document has no `StepItemData` schema.
 */
export function createStepItemValidator(document: OpenApiDocument): StepItemValidator {
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>
  if (!('StepItemData' in schemas)) {
    throw new Error(`the OpenAPI document '${document.info.title}' has no components.schemas.StepItemData`)
  }
  const ajv = createOpenApiAjv()
  ajv.addSchema(document as Record<string, unknown>, DOCUMENT_ID, undefined, false)
  const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${STEP_ITEM_DATA_POINTER}` })
  // The `oneOf` reports every variant's errors; the variant named by `format` reports only its own.
  const mapping = ((schemas.StepItemData as { discriminator?: { mapping?: Record<string, string> } })
    .discriminator?.mapping ?? {}) as Record<string, string>
  const variant = (format: unknown) => {
    const ref = typeof format === 'string' && Object.hasOwn(mapping, format) ? mapping[format] : undefined
    return ref?.startsWith('#/') ? ajv.compile({ $ref: `${DOCUMENT_ID}${ref}` }) : undefined
  }
  return (data) => {
    let served: unknown
    try {
      served = JSON.parse(JSON.stringify(data))
    } catch (error) {
      // A bigint (or a cycle) cannot be served: amounts are decimal strings in the document.
      return [`data is not JSON-serializable: ${(error as Error).message}`]
    }
    if (validate(served)) return []
    const format = (served as { format?: unknown } | null)?.format
    const precise = variant(format)
    const errors = precise && !precise(served) ? precise.errors : validate.errors
    const prefix = precise ? `data (format ${String(format)})` : 'data'
    return (errors ?? []).map(
      (error) =>
        `${prefix}${error.instancePath} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
    )
  }
}

/**
 * Loads the intent service's document (default {@link INTENTS_OPENAPI_PATH}) and makes a
 * {@link StepItemValidator} of it.
 */
export async function loadStepItemValidator(path: string = INTENTS_OPENAPI_PATH): Promise<StepItemValidator> {
  const { document } = await loadOpenApiDocument(path)
  return createStepItemValidator(document)
}
