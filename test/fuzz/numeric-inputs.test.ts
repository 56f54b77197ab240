/**
 * Every numeric input of both documents (JSON numbers, digit and decimal strings, in bodies and
 * query parameters), found by walking each operation's schemas, gets hostile values on a devnet:
 * negative, fractional, exponent notation, 2^53 and beyond, 1e308, 2^256 and more digits. What the
 * field's own schema refuses must be answered 400 `INVALID_REQUEST` naming the field; what it
 * admits (the largest uint256, the largest safe integer, ...) must still never be a 5xx. Every
 * answer conforms to its document, and every 4xx carries a catalogued `errorCode`. The documents
 * themselves must bound every integer input by 2^53 - 1 and every amount by 2^256 - 1.
 */

import { request as httpRequest } from 'node:http'
import {
  answerProblems,
  type CaseAnswer,
  isJsonObject,
  type Operation,
  type RequestCase,
  sendCase,
} from '@pontis/cli'
import { isUint256, MAX_UINT256, UINT256_FORMAT } from '@pontis/core'
import { STABLECOIN_ADDRESS, USERS } from '@pontis/devnet'
import t from 'tap'
import {
  describeFailure,
  type FuzzTarget,
  startFullDevnet,
  startIntentsTarget,
  startOracleTarget,
} from './fixtures/fuzz.js'

type Json = Record<string, unknown>

/** One numeric input: where it is in the request and where its schema is in the document. */
interface NumericInput {
  readonly location: 'body' | 'query'
  /** Member names from the body root, `[]` for "an item of this array". */
  readonly segments: readonly string[]
  /** The field's schema (as the property declares it, `$ref` and siblings): what a value must pass. */
  readonly pointer: string
  readonly types: readonly string[]
  /** The numeric schema found in it (itself, or one of its allOf/oneOf/anyOf parts), resolved. */
  readonly schema: Json
}

const NATIVE = '0x0000000000000000000000000000000000000000'
const USER = USERS[0]!.address
const OTHER = USERS[1]!.address
const SIGNATURE = `0x${'11'.repeat(65)}`

/** Hostile and boundary values; each field gets the forms its schema types allow. */
const NUMBERS: readonly number[] = [-1, 0, 1.5, 1e-7, 2 ** 53 - 1, 2 ** 53, 2 ** 64, 1e308, -1e308]
const STRINGS: readonly string[] = [
  '-1',
  '0',
  '1.5',
  '1e308',
  '0x10',
  '',
  '10001',
  '9'.repeat(20),
  '9'.repeat(21),
  String(2 ** 53),
  MAX_UINT256.toString(),
  (MAX_UINT256 + 1n).toString(),
  '9'.repeat(78),
  '9'.repeat(79),
  `0.${'0'.repeat(30)}1`,
]

function segment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

/** True for a string schema whose pattern admits only digits (and a point or comma between them). */
function isNumericString(schema: Json): boolean {
  const pattern = schema.pattern
  return typeof pattern === 'string' && pattern.includes('0-9') && !/[a-zA-Z]-[a-zA-Z]|x/.test(pattern)
}

function typesOf(schema: Json): string[] {
  return Array.isArray(schema.type)
    ? schema.type.map(String)
    : typeof schema.type === 'string'
      ? [schema.type]
      : []
}

/** Every numeric input of an operation: query parameters and body members at any depth. */
function numericInputs(target: FuzzTarget, operation: Operation): NumericInput[] {
  const found = new Map<string, NumericInput>()
  // `field` is the pointer of the member as its parent declares it: a value is valid or not for the
  // whole of it (all its allOf/oneOf/anyOf parts), not for the one numeric part found.
  const walk = (
    pointer: string,
    segments: string[],
    location: 'body' | 'query',
    depth: number,
    field = pointer,
  ): void => {
    if (depth > 16) return
    const { schema, pointer: resolved } = target.arbitraries.resolve(pointer)
    if (!isJsonObject(schema)) return
    const types = typesOf(schema)
    const numeric =
      types.includes('integer') ||
      types.includes('number') ||
      (types.includes('string') && isNumericString(schema))
    if (numeric && schema.enum === undefined && schema.const === undefined) {
      const key = `${location}:${segments.join('.')}`
      if (!found.has(key)) found.set(key, { location, segments, pointer: field, types, schema })
    }
    for (const keyword of ['allOf', 'oneOf', 'anyOf'] as const) {
      const parts = schema[keyword]
      if (!Array.isArray(parts)) continue
      for (const index of parts.keys())
        walk(`${resolved}/${keyword}/${index}`, segments, location, depth + 1, field)
    }
    if (isJsonObject(schema.properties)) {
      for (const name of Object.keys(schema.properties))
        walk(`${resolved}/properties/${segment(name)}`, [...segments, name], location, depth + 1)
    }
    if (schema.items !== undefined) walk(`${resolved}/items`, [...segments, '[]'], location, depth + 1)
  }
  for (const parameter of operation.parameters) {
    if (parameter.in === 'query') walk(parameter.schemaPointer, [parameter.name], 'query', 0)
  }
  if (operation.bodySchemaPointer !== undefined) walk(operation.bodySchemaPointer, [], 'body', 0)
  return [...found.values()]
}

/** `txs[0].value`, as error answers name a field. */
function fieldName(segments: readonly string[]): string {
  return segments.reduce(
    (name, part) => (part === '[]' ? `${name}[0]` : name === '' ? part : `${name}.${part}`),
    '',
  )
}

/** A copy of `base` with the field set to `value`, or undefined when the base lacks its parent. */
function withValue(base: Json, segments: readonly string[], value: unknown): Json | undefined {
  const copy = structuredClone(base)
  let node: unknown = copy
  for (const [index, part] of segments.entries()) {
    const last = index === segments.length - 1
    const key = part === '[]' ? 0 : part
    if (last) {
      if (Array.isArray(node) || isJsonObject(node)) (node as Record<string | number, unknown>)[key] = value
      return copy
    }
    node = (node as Record<string | number, unknown>)[key]
    if (node === undefined || node === null || typeof node !== 'object') return undefined
  }
  return undefined
}

/** A request of an operation that the field under test is put into. */
interface BaseRequest {
  readonly name: string
  readonly body?: Json
  readonly query?: Record<string, string>
}

async function postJson(url: string, body: unknown): Promise<Json> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const answer = (await response.json()) as Json
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer)}`)
  return answer
}

/** Requests of the intent service that reach its engine: the field under test is the only odd part. */
async function intentsBases(target: FuzzTarget): Promise<Record<string, readonly BaseRequest[]>> {
  const ethQuote = {
    user: USER,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '100000000000000000',
    tradeType: 'EXACT_INPUT',
  }
  const usdcQuote = {
    ...ethQuote,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '100000000',
  }
  // The smallest request that holds a member's parent goes first, so the engine gets that far.
  const quoteBases: BaseRequest[] = [
    { name: 'minimal', body: ethQuote },
    {
      name: 'txs',
      body: {
        ...ethQuote,
        txs: [{ to: OTHER, value: '0', data: '0x', originalTxValue: '0' }],
        txsGasLimit: 500000,
      },
    },
    {
      name: 'authorizationList',
      body: {
        ...ethQuote,
        authorizationList: [{ chainId: 31338, address: OTHER, nonce: 0, yParity: 0, r: '0x1', s: '0x1' }],
      },
    },
    { name: 'appFees', body: { ...ethQuote, appFees: [{ recipient: USER, fee: '25' }] } },
    { name: 'topupGas', body: { ...usdcQuote, topupGas: true, topupGasAmount: '2000000' } },
    {
      name: 'usePermit',
      body: { ...usdcQuote, usePermit: true, permitExpiry: 600, originGasOverhead: 50000 },
    },
    { name: 'subsidizeFees', body: { ...ethQuote, subsidizeFees: true, maxSubsidizationAmount: '5000000' } },
  ]
  const permitQuote = await postJson(`${target.baseUrl}/quote/v2`, { ...usdcQuote, usePermit: true })
  const steps = permitQuote.steps as Array<{ kind: string; items: Array<{ data: { post: { body: Json } } }> }>
  const permit = steps.find((step) => step.kind === 'signature')?.items[0]?.data.post.body
  if (permit === undefined)
    throw new Error('a usePermit quote on the devnet stablecoin has no signature step')
  return {
    getQuote: quoteBases,
    getQuoteV2: quoteBases,
    getPrice: quoteBases,
    getChains: [{ name: 'all chains', query: {} }],
    listCurrencies: [
      { name: 'search', body: { chainIds: [31337], tokens: [`31337:${NATIVE}`], term: 'eth', limit: 12 } },
    ],
    getTrendingCurrencies: [{ name: 'trending', query: {} }],
    getTokenPrice: [{ name: 'native', query: { address: NATIVE, chainId: '31337' } }],
    // A lookup by user is what anyone may make without a key.
    getRequestsV3: [{ name: 'by user', query: { user: USER } }],
    getRequestsV2: [{ name: 'by user', query: { user: USER } }],
    // Validated before the key is asked for: hostile limits are refused with or without one.
    listPartnerWebhookEvents: [{ name: 'own events', query: {} }],
    // A wallet with no fees: hostile numbers must still be refused as input, never reach a 5xx.
    claimAppFees: [
      {
        name: 'whole balance',
        body: { chainId: 31337, currency: NATIVE, recipient: USER, amount: '1' },
      },
    ],
    indexTransaction: [
      { name: 'unknown transaction', body: { chainId: 31337, txHash: `0x${'ab'.repeat(32)}` } },
    ],
    // The step item as the Relay SDK posts it after a same-chain transaction, of one nobody sent.
    indexSameChainTransaction: [
      {
        name: 'unknown transaction',
        body: { chainId: 31337, tx: JSON.stringify({ txHash: `0x${'ab'.repeat(32)}` }) },
      },
    ],
    getAppFeeClaims: [{ name: 'a wallet with no claims', query: {} }],
    executePermit: [
      { name: 'eip3009', body: permit, query: { signature: SIGNATURE } },
      {
        name: 'eip2612',
        body: {
          kind: 'eip2612',
          requestId: permit.requestId,
          chainId: 31337,
          currency: STABLECOIN_ADDRESS,
          owner: USER,
          spender: permit.to,
          value: permit.value,
          nonce: '0',
          deadline: permit.validBefore,
        },
        query: { signature: SIGNATURE },
      },
    ],
  }
}

/** The oracle's documented examples on the devnet's chains (`force` needs a key, so it is dropped). */
function oracleBases(target: FuzzTarget): Record<string, readonly BaseRequest[]> {
  const bases: Record<string, BaseRequest[]> = {}
  for (const operation of target.operations) {
    bases[operation.operationId] = operation.bodyExamples.map(({ name, value }) => {
      const text = JSON.stringify(value)
        .replaceAll('"ethereum"', '"pontis-local-b"')
        .replaceAll('"base"', '"pontis-local-a"')
        .replaceAll(':8453', ':31337')
        .replaceAll('"ownerChainId":1,', '"ownerChainId":31338,')
      const body = JSON.parse(text) as Json
      delete body.force
      return { name, body }
    })
  }
  return bases
}

/** True when the base holds the member's parent object (query parameters always fit). */
function hasParent(base: BaseRequest, input: NumericInput): boolean {
  if (input.location === 'query') return true
  return base.body !== undefined && withValue(base.body, input.segments, 0) !== undefined
}

/** Which base a member is tried on: the one named after its top-level member, else the first that holds it. */
function baseFor(bases: readonly BaseRequest[], input: NumericInput): BaseRequest | undefined {
  const top = input.segments[0]
  const named = bases.find((base) => base.name === top && hasParent(base, input))
  if (named) return named
  const byMember: Record<string, string> = {
    txsGasLimit: 'txs',
    topupGasAmount: 'topupGas',
    permitExpiry: 'usePermit',
    originGasOverhead: 'usePermit',
    maxSubsidizationAmount: 'subsidizeFees',
  }
  const preferred = top === undefined ? undefined : byMember[top]
  return (
    bases.find((base) => base.name === preferred && hasParent(base, input)) ??
    bases.find((base) => hasParent(base, input))
  )
}

function valuesFor(input: NumericInput): unknown[] {
  const values: unknown[] = []
  if (input.types.includes('integer') || input.types.includes('number')) {
    values.push(...NUMBERS)
    // The declared bounds and one past them.
    for (const bound of [input.schema.minimum, input.schema.maximum]) {
      if (typeof bound === 'number') values.push(bound, bound - 1, bound + 1)
    }
  }
  if (input.types.includes('string')) values.push(...STRINGS)
  if (input.location === 'query') return [...new Set(values.map(String))]
  return [...new Set(values)]
}

/** The limit a value is past, as the refusal must name it: a maximum, or the uint256 range. */
function limitOf(input: NumericInput, value: unknown): string | undefined {
  const { maximum, format } = input.schema
  if (typeof value === 'number' && typeof maximum === 'number' && value > maximum) return String(maximum)
  const digits = typeof value === 'string' && /^[0-9]+$/.test(value)
  if (format === UINT256_FORMAT && digits && !isUint256(value as string)) return '2^256 - 1'
  return undefined
}

/** What is wrong with one answer: the document's rules and the field-level verdict. */
function problemsOf(
  target: FuzzTarget,
  request: RequestCase,
  input: NumericInput,
  value: unknown,
  answer: CaseAnswer,
): string[] {
  const { valid } = request
  const limit = limitOf(input, value)
  const problems = answerProblems(target.checker, target.catalog, request, answer, {
    allowedServerErrors: [],
    requireErrorCode: true,
  })
  if (!valid) {
    const body = isJsonObject(answer.body) ? answer.body : {}
    const field = fieldName(input.segments)
    // errorData is JSON text (existing clients type it as a string).
    const details: unknown = typeof body.errorData === 'string' ? JSON.parse(body.errorData) : undefined
    const errors = isJsonObject(details) && Array.isArray(details.errors) ? details.errors : []
    if (answer.status !== 400 || body.errorCode !== 'INVALID_REQUEST')
      problems.push(
        `the field's schema refuses the value, but the answer is ${answer.status} ${String(body.errorCode)}`,
      )
    else if (
      !errors.some(
        (error) => isJsonObject(error) && error.field === field && error.location === input.location,
      )
    )
      problems.push(`errorData.errors does not name ${input.location} field ${field}`)
    else if (typeof body.message !== 'string' || !body.message.includes(`\`${field}\``))
      problems.push(`the message does not name ${field}`)
    else if (limit !== undefined && !body.message.includes(limit))
      problems.push(`the message does not name the limit ${limit}`)
  }
  return problems
}

/**
 * The value as the service validates it: query text that reads as a number is coerced for a
 * numeric parameter (Ajv's `coerceTypes`, `"7"` to 7), as for the currency routes' `chainId`; a
 * parameter whose schema also takes strings is validated as the text it is.
 */
function asValidated(input: NumericInput, value: unknown): unknown {
  const numeric = input.types.includes('integer') || input.types.includes('number')
  // A schema that also takes strings (`ChainIdInput`) keeps query text as text: Ajv coerces only to
  // a type the value does not already have.
  if (input.location !== 'query' || !numeric || input.types.includes('string')) return value
  if (typeof value !== 'string' || value === '') return value
  const number = Number(value)
  return Number.isNaN(number) ? value : number
}

/** Sends every value to every numeric input of one operation; returns the failures. */
async function sendHostileValues(
  target: FuzzTarget,
  operation: Operation,
  bases: readonly BaseRequest[],
): Promise<{ failures: string[]; sent: number; inputs: string[] }> {
  const failures: string[] = []
  const inputs = numericInputs(target, operation)
  const cases: Array<() => Promise<void>> = []
  for (const input of inputs) {
    const base = baseFor(bases, input)
    if (base === undefined) {
      failures.push(`${operation.operationId}: no base request holds ${fieldName(input.segments)}`)
      continue
    }
    for (const value of valuesFor(input)) {
      cases.push(async () => {
        const query = { ...base.query }
        let body = base.body
        if (input.location === 'query') query[input.segments[0]!] = String(value)
        else body = withValue(base.body ?? {}, input.segments, value)
        const request: RequestCase = {
          operationId: operation.operationId,
          label: `${base.name}: ${input.location} ${fieldName(input.segments)} = ${JSON.stringify(value)}`,
          method: operation.method.toUpperCase(),
          path: operation.path,
          query,
          headers: {},
          ...(body === undefined ? {} : { body }),
          // The field's own schema decides; the rest of the request is valid.
          valid: target.arbitraries.problems(input.pointer, asValidated(input, value)).length === 0,
        }
        const answer = await sendCase(target.baseUrl, request, target.headersFor(operation))
        const problems = problemsOf(target, request, input, value, answer)
        if (problems.length > 0) failures.push(describeFailure(request, answer, problems))
      })
    }
  }
  // A few at a time: the devnet answers the ones that reach a chain in tens of milliseconds.
  for (let start = 0; start < cases.length; start += 8) {
    await Promise.all(cases.slice(start, start + 8).map((run) => run()))
  }
  return { failures, sent: cases.length, inputs: inputs.map((input) => fieldName(input.segments)) }
}

/** Integer inputs are exact JSON numbers only up to 2^53 - 1; amounts fit a uint256. */
function documentProblems(target: FuzzTarget): string[] {
  const problems: string[] = []
  for (const operation of target.operations) {
    for (const input of numericInputs(target, operation)) {
      const name = `${target.name} ${operation.operationId} ${input.location} ${fieldName(input.segments)}`
      const own = isJsonObject(input.schema) ? input.schema : {}
      if (input.types.includes('integer') || input.types.includes('number')) {
        if (typeof own.maximum !== 'number' || own.maximum > Number.MAX_SAFE_INTEGER)
          problems.push(`${name}: an integer without a maximum of at most 2^53 - 1`)
        if (typeof own.minimum !== 'number') problems.push(`${name}: an integer without a minimum`)
      }
      const pattern = typeof own.pattern === 'string' ? own.pattern : ''
      // Whole numbers as digits (decimals and lists are not amounts): at most 77 digits always fit.
      if (input.types.includes('string') && !pattern.includes('.') && !pattern.includes(',')) {
        const short = typeof own.maxLength === 'number' && own.maxLength < 78
        const upperBounds = [...pattern.matchAll(/\{[0-9]+,([0-9]+)\}/g)].map((match) => Number(match[1]))
        const shortPattern = !/[+*]/.test(pattern) && upperBounds.every((bound) => bound < 77)
        if (own.format !== 'uint256' && !short && !shortPattern)
          problems.push(`${name}: digits without format uint256 or a bound below 78 digits`)
      }
    }
  }
  return problems
}

/** One request over node:http, whose methods include TRACE (fetch refuses it). */
function rawRequest(baseUrl: string, method: string, path: string): Promise<CaseAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, baseUrl), { method }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => {
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') headers[name] = value
        resolve({
          status: response.statusCode ?? 0,
          headers,
          body: text === '' ? undefined : JSON.parse(text),
          text,
        })
      })
    })
    request.on('error', reject)
    request.end()
  })
}

const devnet = await startFullDevnet()
const intents = await startIntentsTarget(devnet)
const oracle = await startOracleTarget(devnet)
t.teardown(async () => {
  await intents.close()
  await oracle.close()
  await devnet.stop()
})

// Every await before the first test: tap ends the file once its queue runs dry.
const quoteBases = await intentsBases(intents)
const targets: Array<[FuzzTarget, Record<string, readonly BaseRequest[]>]> = [
  [intents, quoteBases],
  [oracle, oracleBases(oracle)],
]

t.test('the documents bound every integer by 2^53 - 1 and every amount by 2^256 - 1', async (t) => {
  t.same([...documentProblems(intents), ...documentProblems(oracle)], [])
})
for (const [target, bases] of targets) {
  for (const operation of target.operations) {
    const operationBases = bases[operation.operationId] ?? []
    if (numericInputs(target, operation).length === 0) continue
    t.test(
      `${target.name} ${operation.operationId}: hostile numbers are answered 4xx, never 5xx`,
      async (t) => {
        const { failures, sent, inputs } = await sendHostileValues(target, operation, operationBases)
        t.ok(sent > 0, `${sent} requests to ${inputs.join(', ')}`)
        t.same(failures, [], 'every answer as the field and the document say')
      },
    )
  }
}

t.test('the quote bases reach the engine: each is quoted', async (t) => {
  for (const base of quoteBases.getQuoteV2 ?? []) {
    const answer = await fetch(`${intents.baseUrl}/quote/v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(base.body),
    })
    t.equal(answer.status, 200, `${base.name}: ${answer.status === 200 ? 'quoted' : await answer.text()}`)
  }
})

t.test(
  'a method no route takes answers 405 with Allow on both services, on either dispatch path',
  async (t) => {
    const cases: Array<[FuzzTarget, string]> = [
      [intents, '/chains'],
      [intents, '/intents/status/v3'],
      [oracle, '/chains/v1'],
    ]
    for (const [target, path] of cases) {
      for (const method of ['TRACE', 'PROPFIND']) {
        const answer = await rawRequest(target.baseUrl, method, path)
        t.equal(answer.status, 405, `${target.name} ${method} ${path}: status`)
        t.equal(
          (answer.body as Json).errorCode,
          'METHOD_NOT_ALLOWED',
          `${target.name} ${method} ${path}: errorCode`,
        )
        t.match(answer.headers.allow, 'GET', `${target.name} ${method} ${path}: Allow names GET`)
      }
    }
  },
)
