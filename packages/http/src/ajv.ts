import { createAjv } from '@pontis/core'
import type { Ajv2020, Options as AjvOptions } from 'ajv/dist/2020.js'

/**
 * Keywords OpenAPI 3.1 allows inside schemas that JSON Schema 2020-12 does not define, registered
 * as annotations. `discriminator` is one: each variant of our `oneOf`s fixes its tag with `const`,
 * so validation needs no discriminator support (and Ajv's refuses the `mapping` the clients need).
 */
const OPENAPI_ANNOTATIONS = ['example', 'xml', 'externalDocs', 'discriminator'] as const

/**
 * Ajv 2020 for OpenAPI documents: core's factory without defaults insertion (a default may carry a
 * cross-field rule, e.g. `topupGasAmount` needs `topupGas`) and with the OpenAPI annotations.
 * `x-` extension keywords are tolerated.
 */
export function createOpenApiAjv(options: AjvOptions = {}): Ajv2020 {
  const ajv = createAjv({
    useDefaults: false,
    strict: 'log',
    strictSchema: false,
    strictTypes: false,
    strictTuples: false,
    logger: false,
    ...options,
  })
  for (const keyword of OPENAPI_ANNOTATIONS) ajv.addKeyword({ keyword, schemaType: undefined })
  return ajv
}
