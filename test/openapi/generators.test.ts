/**
 * Partners generate clients from the documents (issue 18). openapi-typescript, the generator most
 * TypeScript partners use, makes every request member that has a `default` required, so a minimal
 * typed request would not compile: no request member of either document may carry one (the
 * default goes in the description). A minimal typed quote, and one with every documented default
 * filled in, must compile against openapi-typescript's and @hey-api/openapi-ts's types (the
 * latter are `generated/`); `test/relay-types/requests.test.ts` sends the filled-in one to the
 * service.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import ts from 'typescript'
import { parse as parseYaml } from 'yaml'

const repo = fileURLToPath(new URL('../../', import.meta.url))
const documents = ['openapi/intents.yaml', 'openapi/oracle.yaml'] as const

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Every `default` inside the request parts (parameters, request bodies) of a document, by pointer. */
function requestDefaults(document: Record<string, Json>): string[] {
  const found: string[] = []
  const seen = new Set<Json>()
  const resolve = (node: Json): Json => {
    let current = node
    while (
      current &&
      typeof current === 'object' &&
      !Array.isArray(current) &&
      typeof current.$ref === 'string'
    ) {
      const ref = current.$ref
      current = ref
        .slice(2)
        .split('/')
        .reduce<Json>(
          (at, part) => (at as Record<string, Json>)[part.replaceAll('~1', '/')] as Json,
          document,
        )
    }
    return current
  }
  const walk = (node: Json, where: string): void => {
    const resolved = resolve(node)
    if (!resolved || typeof resolved !== 'object' || seen.has(resolved)) return
    seen.add(resolved)
    if (Array.isArray(resolved)) {
      for (const [index, item] of resolved.entries()) walk(item, `${where}/${index}`)
      return
    }
    for (const [key, value] of Object.entries(resolved)) {
      if (key === 'default' && !where.endsWith('/properties')) found.push(`${where}/default`)
      if (key === 'examples' || key === 'example') continue
      walk(value, `${where}/${key}`)
    }
  }
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const op = resolve(operation) as Record<string, Json>
      walk(op.parameters ?? [], `${method.toUpperCase()} ${path} parameters`)
      walk(op.requestBody ?? null, `${method.toUpperCase()} ${path} requestBody`)
    }
  }
  return found
}

t.test('no request member of either document carries a `default`', async (t) => {
  for (const file of documents) {
    const document = parseYaml(await readFile(join(repo, file), 'utf8')) as Record<string, Json>
    t.same(requestDefaults(document), [], file)
  }
  // The walk finds one when there is one.
  const planted = parseYaml(await readFile(join(repo, documents[0]), 'utf8')) as Record<string, Json>
  const schemas = (planted.components as Record<string, Record<string, Record<string, Json>>>).schemas!
  ;(schemas.QuoteRequest!.properties as Record<string, Record<string, Json>>).explicitDeposit!.default = true
  t.same(
    requestDefaults(planted),
    ['POST /quote requestBody/content/application/json/schema/properties/explicitDeposit/default'],
    'a planted default is found',
  )
})

const MINIMAL_QUOTE = `{
  user: '0x1acffa0e66fbc4405270b0c1eca2dcd3e2bf4b2e',
  originChainId: 8453,
  destinationChainId: 42161,
  originCurrency: '0x0000000000000000000000000000000000000000',
  destinationCurrency: '0x0000000000000000000000000000000000000000',
  amount: '100000000000000000',
  tradeType: 'EXACT_INPUT',
}`
const WITH_DEFAULTS = MINIMAL_QUOTE.replace(
  "tradeType: 'EXACT_INPUT',",
  "tradeType: 'EXACT_INPUT',\n  topupGasAmount: '2000000',\n  enableTrueExactOutput: false,\n  explicitDeposit: true,\n  permitExpiry: 600,",
)

/** Compiles `program` (a module importing `./intents.js`, the openapi-typescript output) and answers its diagnostics. */
async function compileAgainstOpenapiTypescript(
  document: string | URL | Record<string, Json>,
  program: string,
) {
  const scratch = await mkdtemp(join(tmpdir(), 'pontis-openapi-typescript-'))
  try {
    const generated = astToString(await openapiTS(document as Parameters<typeof openapiTS>[0]))
    await writeFile(join(scratch, 'intents.ts'), generated)
    await writeFile(join(scratch, 'program.ts'), program)
    const compiled = ts.createProgram({
      rootNames: [join(scratch, 'program.ts')],
      options: {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        skipLibCheck: true,
        types: [],
      },
    })
    return ts
      .getPreEmitDiagnostics(compiled)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

const OTS_PROGRAM = `import type { paths } from './intents.js'
type QuoteRequest = paths['/quote/v2']['post']['requestBody']['content']['application/json']
export const minimal: QuoteRequest = ${MINIMAL_QUOTE}
export const withDefaults: QuoteRequest = ${WITH_DEFAULTS}
`

t.test('a minimal typed quote, and one with every default, compile with openapi-typescript', async (t) => {
  const document = new URL('../../openapi/intents.yaml', import.meta.url)
  t.same(await compileAgainstOpenapiTypescript(document, OTS_PROGRAM), [], 'both compile')
  // The same program against the document with a default put back does not: what partners hit.
  const withDefault = parseYaml(await readFile(document, 'utf8')) as Record<string, Json>
  const schemas = (withDefault.components as Record<string, Record<string, Record<string, Json>>>).schemas!
  ;(schemas.QuoteRequest!.properties as Record<string, Record<string, Json>>).explicitDeposit!.default = true
  const refused = await compileAgainstOpenapiTypescript(withDefault, OTS_PROGRAM)
  t.match(
    refused.join('\n'),
    /explicitDeposit/,
    'a default makes the member required, and the minimal quote fail',
  )
})

t.test(
  'a minimal typed quote, and one with every default, compile with @hey-api/openapi-ts (generated/)',
  async (t) => {
    const types = join(repo, 'generated/intents/types.gen.js')
    const scratch = await mkdtemp(join(tmpdir(), 'pontis-hey-api-'))
    t.teardown(() => rm(scratch, { recursive: true, force: true }))
    await writeFile(
      join(scratch, 'program.ts'),
      `import type { GetQuoteV2Data } from ${JSON.stringify(types)}
export const minimal: GetQuoteV2Data['body'] = ${MINIMAL_QUOTE}
export const withDefaults: GetQuoteV2Data['body'] = ${WITH_DEFAULTS}
`,
    )
    const compiled = ts.createProgram({
      rootNames: [join(scratch, 'program.ts')],
      options: {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        skipLibCheck: true,
        types: [],
      },
    })
    const diagnostics = ts
      .getPreEmitDiagnostics(compiled)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    t.same(diagnostics, [], 'both compile')
  },
)
