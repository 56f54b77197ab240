/**
 * openapi/intents.yaml covers the intent-service spec: every quote-request field, chain-record
 * field, response member, status, failReason, error code and webhook member is present, and the
 * request rules JSON Schema can express (patterns, ranges, cross-field rules) really reject what
 * they must and accept what they must, under the same Ajv 2020 the service validates with.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import ajvFormats from 'ajv-formats'
import t from 'tap'
import { parse } from 'yaml'
import { ERROR_CATALOG } from '../../packages/core/src/errors.js'
import { addPontisFormats } from '../../packages/core/src/validation.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }
/** The test object tap passes to a subtest. */
type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const root = fileURLToPath(new URL('../../', import.meta.url))
const doc = parse(readFileSync(`${root}openapi/intents.yaml`, 'utf8')) as JsonObject
const DOC_ID = 'https://pontis.invalid/openapi/intents.yaml'

function get(node: Json | undefined, ...path: string[]): Json | undefined {
  let current = node
  for (const key of path) current = isObject(current) ? current[key] : undefined
  return current
}

/** Follows internal `$ref`s. */
function deref(node: Json | undefined): Json | undefined {
  let current = node
  while (isObject(current) && typeof current.$ref === 'string') {
    current = get(doc, ...current.$ref.slice(2).split('/').map(decodePointerSegment))
  }
  return current
}

function decodePointerSegment(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~')
}

const schema = (name: string): JsonObject => {
  const s = get(doc, 'components', 'schemas', name)
  if (!isObject(s)) throw new Error(`no schema ${name}`)
  return s
}

/** Properties of a schema, merged through `$ref` and `allOf`. */
function properties(node: Json | undefined): Map<string, Json> {
  const out = new Map<string, Json>()
  const s = deref(node)
  if (!isObject(s)) return out
  if (isObject(s.properties)) for (const [k, v] of Object.entries(s.properties)) out.set(k, v)
  if (Array.isArray(s.allOf)) for (const part of s.allOf) for (const [k, v] of properties(part)) out.set(k, v)
  return out
}

/** Required members of a schema, merged through `$ref` and `allOf`. */
function required(node: Json | undefined): Set<string> {
  const s = deref(node)
  const out = new Set<string>()
  if (!isObject(s)) return out
  if (Array.isArray(s.required)) for (const r of s.required) if (typeof r === 'string') out.add(r)
  if (Array.isArray(s.allOf)) for (const part of s.allOf) for (const r of required(part)) out.add(r)
  return out
}

/** The schema reached by following property names (and `items` of arrays) from a component. */
function at(name: string, ...path: string[]): Json | undefined {
  let current: Json | undefined = schema(name)
  for (const key of path) {
    const resolved = deref(current)
    current = key === '[]' ? get(resolved, 'items') : properties(resolved).get(key)
    if (current === undefined) return undefined
  }
  return current
}

function enumOf(node: Json | undefined): Json[] {
  const s = deref(node)
  return isObject(s) && Array.isArray(s.enum) ? s.enum : []
}

function missingMembers(
  t: TapTest,
  where: string,
  node: Json | undefined,
  expected: readonly string[],
): void {
  const present = properties(node)
  t.same(
    expected.filter((field) => !present.has(field)),
    [],
    `${where} has ${expected.join(', ')}`,
  )
}

// ------------------------------------------------------------------ field lists copied from the spec

/** Every row of the spec's quote-request table, in its order. */
const QUOTE_REQUEST_FIELDS = [
  'user',
  'recipient',
  'originChainId',
  'destinationChainId',
  'originCurrency',
  'destinationCurrency',
  'amount',
  'tradeType',
  'txs',
  'txsGasLimit',
  'authorizationList',
  'additionalData',
  'referrer',
  'referrerAddress',
  'refundTo',
  'recoveryAddress',
  'refundOnOrigin',
  'topupGas',
  'topupGasAmount',
  'enableTrueExactOutput',
  'explicitDeposit',
  'useExternalLiquidity',
  'useFallbacks',
  'usePermit',
  'permitExpiry',
  'includeProtocolData',
  'useDepositAddress',
  'strict',
  'slippageTolerance',
  'latePaymentSlippageTolerance',
  'appFees',
  'gasLimitForDepositSpecifiedTxs',
  'forceSolverExecution',
  'subsidizeFees',
  'sponsoredFeeComponents',
  'maxSubsidizationAmount',
  'subsidizeRent',
  'includedSwapSources',
  'excludedSwapSources',
  'includedOriginSwapSources',
  'includedDestinationSwapSources',
  'originGasOverhead',
  'depositFeePayer',
  'maxRouteLength',
  'useSharedAccounts',
  'includeComputeUnitLimit',
  'overridePriceImpact',
  'disableSwapProviderPreference',
  'disableOriginSwaps',
  'fixedRate',
  'ttl',
] as const

const QUOTE_REQUEST_REQUIRED = [
  'user',
  'originChainId',
  'destinationChainId',
  'originCurrency',
  'destinationCurrency',
  'amount',
  'tradeType',
]

const CHAIN_RECORD_FIELDS = [
  'id',
  'name',
  'displayName',
  'httpRpcUrl',
  'wsRpcUrl',
  'explorerUrl',
  'explorerName',
  'depositEnabled',
  'tokenSupport',
  'disabled',
  'partialDisableLimit',
  'blockProductionLagging',
  'currency',
  'withdrawalFee',
  'depositFee',
  'surgeEnabled',
  'featuredTokens',
  'erc20Currencies',
  'solverCurrencies',
  'iconUrl',
  'contracts',
  'vmType',
  'baseChainId',
  'solverAddresses',
  'tags',
  'protocol',
] as const

/** failReason values of REFERENCE.md (the ones a self-hosted solver can produce). */
const FAIL_REASONS = [
  'N/A',
  'UNKNOWN',
  'SLIPPAGE',
  'AMOUNT_TOO_LOW_TO_REFUND',
  'DEPOSIT_ADDRESS_MISMATCH',
  'DEPOSIT_CHAIN_MISMATCH',
  'INCORRECT_DEPOSIT_CURRENCY',
  'DOUBLE_SPEND',
  'SOLVER_CAPACITY_EXCEEDED',
  'SOLVER_BALANCE_TOO_LOW',
  'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL',
  'NEGATIVE_NEW_AMOUNT_AFTER_FEES',
  'NO_QUOTES',
  'EXECUTION_REVERTED',
  'TRANSACTION_REVERTED',
  'TRANSACTION_TOO_LARGE',
  'ORIGIN_CURRENCY_MISMATCH',
  'TOO_LITTLE_RECEIVED',
  'INSUFFICIENT_FUNDS_FOR_RENT',
  'SPONSOR_BALANCE_TOO_LOW',
  'ORDER_EXPIRED',
  'TTL_EXPIRED',
  'SIGNATURE_EXPIRED',
  'INVALID_SIGNATURE',
  'DEPOSIT_CONFIRMATION_TIMEOUT',
  'ORPHANED_DEPOSIT_REFUND',
  'DEPOSIT_REORGED',
  'PROTOCOL_DEADLINE_EXPIRED',
  'TRANSACTION_NOT_INCLUDED',
  'TRANSACTION_SUBMISSION_FAILED',
  'MANUAL_ADMIN_REFUND',
]

const REFUND_FAIL_REASONS = [
  'N/A',
  'AMOUNT_TOO_LOW_TO_REFUND',
  'NEGATIVE_NEW_AMOUNT_AFTER_FEES',
  'SWAP_CURRENCY_NOT_ON_ORIGIN',
]

const STATUSES = ['waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund', 'fallback']
const WEBHOOK_STATUSES = ['waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund']
const FEE_FIELDS = ['currency', 'amount', 'amountFormatted', 'amountUsd', 'minimumAmount'] as const

// ------------------------------------------------------------------ Ajv over the document

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true })
ajvFormats.default(ajv)
addPontisFormats(ajv)
ajv.addSchema(doc, DOC_ID)
const validatorFor = (name: string): ValidateFunction =>
  ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` })
const quoteRequest = validatorFor('QuoteRequest')

const MINIMAL_QUOTE = {
  user: '0x1acffa0e66fbc4405270b0c1eca2dcd3e2bf4b2e',
  originChainId: 8453,
  destinationChainId: 42161,
  originCurrency: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  destinationCurrency: '0xaf88d065e77c8cc2239327c5edb3a432268e5831',
  amount: '100000000',
  tradeType: 'EXACT_INPUT',
} as const

const errorsOf = (validate: ValidateFunction): ErrorObject[] => validate.errors ?? []
const describe = (errors: ErrorObject[]): string =>
  errors.map((e) => `${e.instancePath || '/'} ${e.keyword} ${e.message ?? ''}`).join('; ')

function accepts(t: TapTest, validate: ValidateFunction, body: unknown, what: string): void {
  t.ok(validate(body), `${what} is accepted${validate.errors ? `: ${describe(errorsOf(validate))}` : ''}`)
}

function rejects(
  t: TapTest,
  validate: ValidateFunction,
  body: unknown,
  what: string,
  keyword?: string,
): void {
  const valid = validate(body)
  t.notOk(valid, `${what} is rejected`)
  if (!valid && keyword) {
    t.ok(
      errorsOf(validate).some((e) => e.keyword === keyword),
      `${what} fails with ${keyword} (${describe(errorsOf(validate))})`,
    )
  }
}

// ------------------------------------------------------------------ coverage

t.test('operations and operationIds', async (t) => {
  const expected: [string, string, string][] = [
    ['/quote', 'post', 'getQuote'],
    ['/quote/v2', 'post', 'getQuoteV2'],
    ['/price', 'post', 'getPrice'],
    ['/chains', 'get', 'getChains'],
    ['/intents/status/v3', 'get', 'getIntentStatusV3'],
    ['/intents/status', 'get', 'getIntentStatus'],
    ['/transactions/index', 'post', 'indexTransaction'],
    ['/transactions/single', 'post', 'indexSameChainTransaction'],
    ['/execute/permits', 'post', 'executePermit'],
    ['/documentation', 'get', 'getDocumentation'],
  ]
  for (const [path, method, operationId] of expected) {
    t.equal(get(doc, 'paths', path, method, 'operationId'), operationId, `${method.toUpperCase()} ${path}`)
  }
  t.equal(get(doc, 'paths', '/quote', 'post', 'deprecated'), true, 'POST /quote is deprecated')
  t.equal(
    get(doc, 'paths', '/intents/status', 'get', 'deprecated'),
    true,
    'GET /intents/status is deprecated',
  )
  t.notOk(get(doc, 'paths', '/quote/v2', 'post', 'deprecated'), 'POST /quote/v2 is not deprecated')

  for (const path of ['/quote', '/quote/v2', '/price']) {
    t.same(
      get(doc, 'paths', path, 'post', 'security'),
      [{}, { apiKey: [] }],
      `${path}: x-api-key is optional`,
    )
    t.same(
      get(doc, 'paths', path, 'post', 'requestBody'),
      { $ref: '#/components/requestBodies/QuoteRequest' },
      `${path} takes the quote request`,
    )
  }
  t.same(get(doc, 'components', 'securitySchemes', 'apiKey'), {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: get(doc, 'components', 'securitySchemes', 'apiKey', 'description') ?? null,
  })

  for (const path of ['/intents/status/v3', '/intents/status']) {
    const response = deref(get(doc, 'paths', path, 'get', 'responses', '200'))
    t.same(
      get(response, 'content', 'application/json', 'schema'),
      { $ref: '#/components/schemas/StatusRecordV3' },
      `${path} answers StatusRecordV3`,
    )
    const parameters = get(doc, 'paths', path, 'get', 'parameters')
    const requestId = Array.isArray(parameters)
      ? parameters.map(deref).find((p) => get(p, 'name') === 'requestId')
      : null
    t.equal(get(requestId, 'required'), true, `${path}: requestId is a required query parameter`)
    t.equal(get(requestId, 'in'), 'query')
  }

  const permitParameters = get(doc, 'paths', '/execute/permits', 'post', 'parameters')
  const signature = Array.isArray(permitParameters)
    ? permitParameters.map(deref).find((p) => get(p, 'name') === 'signature')
    : undefined
  t.equal(get(signature, 'in'), 'query', 'the signature is a query parameter')
  t.equal(get(signature, 'required'), true, 'the signature is required')
  t.equal(get(signature, 'schema', 'pattern'), '^0x[0-9a-fA-F]+$')

  const html = get(doc, 'paths', '/documentation', 'get', 'responses', '200', 'content')
  t.ok(isObject(html) && Object.hasOwn(html, 'text/html'), '/documentation answers text/html')

  const tooMany = deref(get(doc, 'components', 'responses', 'TooManyRequests'))
  for (const header of ['Retry-After', 'RateLimit', 'RateLimit-Policy']) {
    t.ok(get(tooMany, 'headers', header), `429 carries ${header}`)
  }
  // Probes and the scrape are never rate limited (packages/intents/src/ratelimit/gate.ts), so they
  // must not promise a 429 either.
  const neverLimited = new Set(['/metrics', '/healthz', '/readyz'])
  for (const [path, item] of Object.entries(doc.paths as JsonObject)) {
    for (const [method, op] of Object.entries(item as JsonObject)) {
      t.same(
        get(op, 'responses', '429'),
        neverLimited.has(path) ? undefined : { $ref: '#/components/responses/TooManyRequests' },
        `${method.toUpperCase()} ${path} ${neverLimited.has(path) ? 'documents no 429' : 'documents 429'}`,
      )
      t.same(
        get(op, 'responses', 'default'),
        { $ref: '#/components/responses/UnexpectedError' },
        `${method.toUpperCase()} ${path} has the ErrorBody default`,
      )
    }
  }
})

t.test('QuoteRequest has every field of the spec table, and no other', async (t) => {
  const present = [...properties(schema('QuoteRequest')).keys()]
  t.equal(QUOTE_REQUEST_FIELDS.length, 51, 'the spec table has 51 rows')
  t.same(
    QUOTE_REQUEST_FIELDS.filter((f) => !present.includes(f)),
    [],
    'no spec field is missing',
  )
  t.same(
    present.filter((f) => !(QUOTE_REQUEST_FIELDS as readonly string[]).includes(f)),
    [],
    'no field beyond the spec',
  )
  t.same([...required(schema('QuoteRequest'))].sort(), [...QUOTE_REQUEST_REQUIRED].sort(), 'required list')
  t.equal(
    schema('QuoteRequest').additionalProperties,
    false,
    'the members are closed in the document (the server ignores and names others)',
  )

  const deprecated = present.filter((f) => get(at('QuoteRequest', f), 'deprecated') === true)
  t.same(
    deprecated.sort(),
    ['refundOnOrigin', 'subsidizeRent'],
    'refundOnOrigin and subsidizeRent are deprecated',
  )

  const defaults: [string, Json][] = [
    ['tradeType', 'EXACT_INPUT'],
    ['permitExpiry', 600],
    ['topupGasAmount', '2000000'],
    ['explicitDeposit', true],
    ['enableTrueExactOutput', false],
  ]
  // openapi-typescript makes every member with a `default` required: the default is in the text.
  for (const [field, value] of defaults) {
    t.equal(get(at('QuoteRequest', field), 'default'), undefined, `${field} carries no schema default`)
    t.match(
      String(get(at('QuoteRequest', field), 'description')),
      `Default \`${String(value)}\``,
      `${field}'s description states the default ${String(value)}`,
    )
  }

  t.same(enumOf(at('QuoteRequest', 'tradeType')), ['EXACT_INPUT', 'EXACT_OUTPUT', 'EXPECTED_OUTPUT'])
  // The specs' `service` "stands for the value that carries the service's own name": `relay`.
  t.same(enumOf(at('QuoteRequest', 'sponsoredFeeComponents', '[]')), [
    'execution',
    'swap',
    'relay',
    'service',
    'app',
    'rent',
  ])
  t.equal(get(deref(at('QuoteRequest', 'amount')), 'pattern'), '^[0-9]+$')
  t.equal(get(deref(at('QuoteRequest', 'slippageTolerance')), 'pattern'), '^([0-9]{1,4}|10000)$')
  t.equal(get(deref(at('QuoteRequest', 'originChainId')), 'type'), 'integer')
  t.equal(get(deref(at('QuoteRequest', 'destinationChainId')), 'type'), 'integer')
  missingMembers(t, 'txs items', at('QuoteRequest', 'txs', '[]'), ['to', 'value', 'data', 'originalTxValue'])
  missingMembers(t, 'appFees items', at('QuoteRequest', 'appFees', '[]'), ['recipient', 'fee'])
  missingMembers(t, 'additionalData', at('QuoteRequest', 'additionalData'), ['userPublicKey'])
  t.same(
    [...required(at('QuoteRequest', 'authorizationList', '[]'))].sort(),
    ['address', 'chainId', 'nonce', 'r', 's', 'yParity'],
    'all six authorization members are required',
  )
  for (const [field, max] of [
    ['txs', 32],
    ['appFees', 10],
    ['authorizationList', 16],
  ] as const) {
    t.equal(get(at('QuoteRequest', field), 'maxItems'), max, `${field} holds at most ${max} items`)
  }
})

t.test('response shapes carry every member the spec lists', async (t) => {
  missingMembers(t, 'QuoteResponse', schema('QuoteResponse'), [
    'steps',
    'fees',
    'feeSponsorship',
    'details',
    'protocol',
  ])
  missingMembers(t, 'PriceResponse', schema('PriceResponse'), [
    'fees',
    'feeSponsorship',
    'details',
    'protocol',
  ])
  t.notOk(properties(schema('PriceResponse')).has('steps'), 'PriceResponse has no steps')
  for (const member of ['fees', 'feeSponsorship', 'details', 'protocol']) {
    t.same(
      properties(schema('PriceResponse')).get(member),
      properties(schema('QuoteResponse')).get(member),
      `price and quote share ${member}`,
    )
  }

  const step = ['id', 'action', 'description', 'kind', 'requestId', 'depositAddress', 'items'] as const
  missingMembers(t, 'Step', schema('Step'), step)
  t.same([...required(schema('Step'))].sort(), ['action', 'description', 'id', 'items', 'kind'])
  t.same(enumOf(at('Step', 'id')), [
    'deposit',
    'approve',
    'authorize',
    'authorize1',
    'authorize2',
    'swap',
    'send',
  ])
  t.same(enumOf(at('Step', 'kind')), ['transaction', 'signature'])
  missingMembers(t, 'StepItem', at('Step', 'items', '[]'), ['status', 'data', 'check'])
  t.same(enumOf(at('StepItem', 'status')), ['complete', 'incomplete'])
  missingMembers(t, 'StepItem.check', at('StepItem', 'check'), ['endpoint', 'method'])

  const variants: [string, string, readonly string[]][] = [
    [
      'evm-transaction',
      'EvmTransactionData',
      ['from', 'to', 'data', 'value', 'chainId', 'gas', 'maxFeePerGas', 'maxPriorityFeePerGas'],
    ],
    [
      'svm-transaction',
      'SvmTransactionData',
      [
        'transaction',
        'chainId',
        'instructions',
        'addressLookupTableAddresses',
        'size',
        'sizeLimit',
        'headroom',
      ],
    ],
    ['bitcoin-psbt', 'BitcoinPsbtData', ['psbt', 'chainId']],
    ['lighter-transfer', 'LighterTransferData', ['action', 'chainId']],
    ['hyperliquid-action', 'HyperliquidActionData', ['action', 'chainId']],
    ['tron-transaction', 'TronTransactionData', ['transaction', 'chainId']],
    ['signature', 'SignatureData', ['sign', 'post']],
  ]
  const stepItemData = schema('StepItemData')
  t.equal(
    get(stepItemData, 'discriminator', 'propertyName'),
    'format',
    'step item data is discriminated by format',
  )
  t.same(
    Object.keys(get(stepItemData, 'discriminator', 'mapping') as JsonObject).sort(),
    variants.map(([format]) => format).sort(),
  )
  for (const [format, name, members] of variants) {
    t.equal(get(at(name, 'format'), 'const'), format, `${name}.format is ${format}`)
    missingMembers(t, name, schema(name), members)
  }
  t.same([...required(schema('EvmTransactionData'))].sort(), ['chainId', 'data', 'format', 'to', 'value'])
  t.equal(get(deref(at('EvmTransactionData', 'chainId')), 'type'), 'integer', 'EVM chainId is a number')
  t.equal(get(at('SvmTransactionData', 'sizeLimit'), 'const'), 1232, 'SVM size limit is 1232 bytes')

  const lighter = at('LighterTransferData', 'action')
  t.equal(get(at('LighterTransferAction', 'type'), 'const'), 'transfer')
  const lighterParameters = [
    'toAccountIndex',
    'assetIndex',
    'fromRouteType',
    'toRouteType',
    'amount',
    'usdcFee',
  ]
  missingMembers(t, 'transfer parameters', get(deref(lighter), 'properties', 'parameters'), [
    ...lighterParameters,
    'memo',
  ])
  for (const p of lighterParameters) {
    t.equal(
      get(at('LighterTransferAction', 'parameters', p), 'type'),
      'integer',
      `parameters.${p} is an integer`,
    )
  }
  missingMembers(t, 'signature post', at('SignatureData', 'post'), ['endpoint', 'method', 'body'])
  const signKinds = Object.keys(get(schema('SignPayload'), 'discriminator', 'mapping') as JsonObject)
  t.same(signKinds.sort(), ['eip191', 'eip712'])
  missingMembers(t, 'eip191 payload', schema('Eip191SignPayload'), ['signatureKind', 'message'])
  missingMembers(t, 'eip712 payload', schema('Eip712SignPayload'), [
    'signatureKind',
    'domain',
    'types',
    'primaryType',
    'value',
  ])

  missingMembers(t, 'Fee', schema('Fee'), FEE_FIELDS)
  missingMembers(t, 'SignedFee', schema('SignedFee'), FEE_FIELDS)
  missingMembers(t, 'Currency', at('Fee', 'currency'), [
    'chainId',
    'address',
    'symbol',
    'name',
    'decimals',
    'metadata',
  ])
  missingMembers(t, 'Currency.metadata', at('Currency', 'metadata'), ['logoURI', 'verified', 'isNative'])
  t.equal(get(deref(at('Currency', 'chainId')), 'type'), 'integer', 'currency chainId is a number')
  const fees = ['gas', 'relayer', 'relayerGas', 'relayerService', 'app', 'subsidized'] as const
  missingMembers(t, 'Fees', schema('Fees'), fees)
  t.equal(
    get(deref(at('Fees', 'relayerService', 'amount')), 'pattern'),
    '^-?[0-9]+$',
    'relayerService may be negative',
  )

  const quoted = at('FeeSponsorship', 'quoted')
  missingMembers(t, 'feeSponsorship.quoted', quoted, [
    'selectedComponents',
    'maxSubsidizationAmount',
    'capHit',
    'components',
  ])
  // `relay` is the specs' `service` bucket (the value carrying the service's own name).
  missingMembers(t, 'feeSponsorship buckets', at('FeeSponsorship', 'quoted', 'components'), [
    'execution',
    'swap',
    'relay',
    'app',
    'rent',
  ])
  t.same(
    [...required(at('FeeSponsorship', 'quoted', 'components', 'execution'))].sort(),
    ['selected', 'sponsored', 'total', 'userPays'],
    'all four bucket members are required',
  )

  missingMembers(t, 'Details', schema('Details'), [
    'operation',
    'sender',
    'recipient',
    'currencyIn',
    'currencyOut',
    'refundCurrency',
    'totalImpact',
    'swapImpact',
    'expandedPriceImpact',
    'rate',
    'slippageTolerance',
    'timeEstimate',
    'userBalance',
    'isFixedRate',
    'route',
  ])
  for (const member of ['currencyIn', 'currencyOut', 'refundCurrency']) {
    missingMembers(t, `details.${member}`, at('Details', member), FEE_FIELDS)
  }
  missingMembers(t, 'details.totalImpact', at('Details', 'totalImpact'), ['usd', 'percent'])
  missingMembers(t, 'details.swapImpact', at('Details', 'swapImpact'), ['usd', 'percent'])
  for (const member of ['swap', 'execution', 'service', 'app', 'sponsored']) {
    missingMembers(t, `expandedPriceImpact.${member}`, at('Details', 'expandedPriceImpact', member), ['usd'])
  }
  for (const leg of ['origin', 'destination']) {
    missingMembers(t, `slippageTolerance.${leg}`, at('Details', 'slippageTolerance', leg), [
      'usd',
      'value',
      'percent',
    ])
    missingMembers(t, `route.${leg}`, at('Details', 'route', leg), [
      'inputCurrency',
      'outputCurrency',
      'router',
    ])
  }

  missingMembers(t, 'protocol.v2', at('Protocol', 'v2'), [
    'orderId',
    'orderData',
    'orderSignature',
    'paymentDetails',
  ])
  missingMembers(t, 'orderData', at('Protocol', 'v2', 'orderData'), [
    'version',
    'solverChainId',
    'solver',
    'salt',
    'inputs',
    'output',
    'fees',
  ])
  missingMembers(t, 'orderData.inputs[]', at('Order', 'inputs', '[]'), ['payment', 'refunds'])
  missingMembers(t, 'inputs[].payment', at('OrderInput', 'payment'), [
    'chainId',
    'currency',
    'amount',
    'weight',
  ])
  missingMembers(t, 'inputs[].refunds[]', at('OrderInput', 'refunds', '[]'), [
    'chainId',
    'recipient',
    'currency',
    'minimumAmount',
    'deadline',
    'extraData',
  ])
  missingMembers(t, 'orderData.output', at('Order', 'output'), [
    'chainId',
    'payments',
    'calls',
    'deadline',
    'extraData',
  ])
  missingMembers(t, 'output.payments[]', at('OrderOutput', 'payments', '[]'), [
    'recipient',
    'currency',
    'minimumAmount',
    'expectedAmount',
  ])
  missingMembers(t, 'paymentDetails', at('ProtocolV2', 'paymentDetails'), [
    'chainId',
    'depository',
    'currency',
    'amount',
  ])
  t.equal(get(deref(at('OrderInput', 'payment', 'chainId')), 'type'), 'string', 'order chain ids are strings')
})

t.test('ChainRecord has every chain-record field of the spec', async (t) => {
  missingMembers(t, 'ChainRecord', schema('ChainRecord'), CHAIN_RECORD_FIELDS)
  t.same([...required(schema('ChainRecord'))].sort(), [
    'currency',
    'depositEnabled',
    'disabled',
    'displayName',
    'id',
    'name',
    'vmType',
  ])
  t.equal(get(deref(at('ChainRecord', 'id')), 'type'), 'integer', 'chain id is a number')
  missingMembers(t, 'ChainRecord.currency', at('ChainRecord', 'currency'), [
    'id',
    'symbol',
    'name',
    'address',
    'decimals',
    'supportsBridging',
  ])
  missingMembers(t, 'featuredTokens[]', at('ChainRecord', 'featuredTokens', '[]'), ['metadata'])
  missingMembers(t, 'erc20Currencies[]', at('ChainRecord', 'erc20Currencies', '[]'), [
    'withdrawalFee',
    'depositFee',
    'surgeEnabled',
  ])
  missingMembers(t, 'contracts', at('ChainRecord', 'contracts'), [
    'multicall3',
    'multicaller',
    'onlyOwnerMulticaller',
    'relayReceiver',
    'erc20Router',
    'approvalProxy',
    'v3',
  ])
  missingMembers(t, 'contracts.v3', at('ChainRecord', 'contracts', 'v3'), ['erc20Router', 'approvalProxy'])
  missingMembers(t, 'protocol.v2', at('ChainRecord', 'protocol', 'v2'), ['chainId', 'depository'])
  t.same(enumOf(at('ChainRecord', 'vmType')), ['evm', 'svm', 'bvm', 'lvm', 'hypevm', 'tvm', 'tonvm'])
  t.same(
    get(
      deref(get(doc, 'paths', '/chains', 'get', 'responses', '200', 'content', 'application/json', 'schema')),
      'required',
    ),
    ['chains'],
    'GET /chains answers {chains}',
  )
})

t.test('status record, statuses and reasons', async (t) => {
  missingMembers(t, 'StatusRecord', schema('StatusRecord'), [
    'requestId',
    'status',
    'inTxHashes',
    'txHashes',
    'updatedAt',
    'originChainId',
    'destinationChainId',
    'details',
    'failReason',
    'refundFailReason',
  ])
  missingMembers(t, 'StatusRecordV3', schema('StatusRecordV3'), ['status', 'quoteCreatedAt'])
  t.ok(required(schema('StatusRecordV3')).has('quoteCreatedAt'), 'quoteCreatedAt is required on v3')
  t.same(enumOf(at('StatusRecord', 'status')), STATUSES)
  t.same(get(at('StatusRecord', 'details'), 'type'), ['object', 'null'], 'details is an object or null')
  t.same(enumOf(at('StatusRecord', 'failReason')).sort(), [...FAIL_REASONS].sort(), 'failReason enum')
  t.same(enumOf(at('StatusRecord', 'refundFailReason')), REFUND_FAIL_REASONS, 'refundFailReason enum')

  const transitions = String(get(at('StatusRecord', 'status'), 'description'))
  const rows = [
    ['waiting', 'depositing'],
    ['waiting', 'pending'],
    ['depositing', 'pending'],
    ['pending', 'submitted'],
    ['submitted', 'success'],
    ['submitted', 'failure'],
    ['waiting', 'refund'],
    ['pending', 'refund'],
    ['failure', 'refund'],
  ]
  for (const [from, to] of rows) {
    t.match(transitions, `| ${from} | ${to} |`, `the transition table has ${from} -> ${to}`)
  }
  t.match(transitions, /idempotent/, 'transitions are idempotent')
  t.match(transitions, /never go backwards/, 'transitions never go backwards')

  const status = validatorFor('StatusRecordV3')
  const record = {
    requestId: '0x58996a9d6f25c081df05b335921e58cfe6cb540ab9444e8a0b3add4a7796b302',
    status: 'waiting',
    inTxHashes: [],
    txHashes: [],
    updatedAt: 1767225600000,
    originChainId: 8453,
    destinationChainId: 42161,
    details: null,
    failReason: 'N/A',
    refundFailReason: 'N/A',
    quoteCreatedAt: 1767225600000,
  }
  accepts(t, status, record, 'a fresh waiting record')
  rejects(t, status, { ...record, originChainId: '8453' }, 'a string chain id in a status record', 'type')
  rejects(t, status, { ...record, status: 'done' }, 'an unknown status', 'enum')
  rejects(
    t,
    status,
    { ...record, quoteCreatedAt: undefined },
    'a v3 record without quoteCreatedAt',
    'required',
  )
})

t.test('ErrorCode is exactly the error catalog', async (t) => {
  const codes = enumOf(schema('ErrorCode'))
  const catalog = Object.keys(ERROR_CATALOG)
  t.equal(new Set(codes).size, codes.length, 'no duplicate codes')
  t.same([...codes].sort(), [...catalog].sort(), 'ErrorCode enum = ERROR_CATALOG keys')
  t.same(get(at('ErrorBody', 'errorCode'), '$ref'), '#/components/schemas/ErrorCode')
  t.same([...required(schema('ErrorBody'))], ['message'], 'only message is required')
  missingMembers(t, 'ErrorBody', schema('ErrorBody'), ['message', 'errorCode', 'errorData', 'requestId'])

  // The description's table states each code's status and retryability; it must match the catalog.
  const description = String(schema('ErrorCode').description)
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    const row = description.split('\n').find((line) => line.startsWith(`| ${code} |`))
    t.ok(row, `${code} is described`)
    const cells = (row ?? '').split('|').map((c) => c.trim())
    t.equal(Number(cells[2]), entry.status, `${code} is documented with HTTP ${entry.status}`)
    t.equal(cells[3], entry.kind, `${code} is documented as ${entry.kind}`)
    t.equal(cells[4], entry.retryable ? 'yes' : 'no', `${code} retryability`)
  }
  const body = validatorFor('ErrorBody')
  accepts(t, body, { message: 'Too many requests' }, 'a 429 body with only message')
  rejects(t, body, { message: 'x', errorCode: 'NOT_A_CODE' }, 'an unknown error code', 'enum')
  rejects(t, body, { errorCode: 'UNKNOWN_ERROR' }, 'an error without message', 'required')
})

t.test('webhook and websocket', async (t) => {
  const webhook = get(doc, 'webhooks', 'request.status.updated', 'post')
  t.ok(isObject(webhook), 'the request.status.updated webhook is documented')
  const headers = (get(webhook, 'parameters') as Json[]).map(deref).map((p) => [get(p, 'name'), get(p, 'in')])
  t.same(
    headers,
    [
      ['X-Signature-Timestamp', 'header'],
      ['X-Signature-SHA256', 'header'],
      ['X-Event-Id', 'header'],
    ],
    'signature and event-id headers',
  )
  const rule = String(get(webhook, 'description'))
  for (const words of [
    '<timestamp>.<body>',
    'constant time',
    'non-2xx',
    'up to 10 times',
    'exponential backoff',
  ]) {
    t.match(rule, words, `the verification rule mentions ${words}`)
  }
  missingMembers(t, 'webhook payload', schema('WebhookEvent'), ['event', 'timestamp', 'data'])
  t.equal(get(at('WebhookEvent', 'event'), 'const'), 'request.status.updated')
  missingMembers(t, 'webhook data', at('WebhookEvent', 'data'), [
    'status',
    'inTxHashes',
    'txHashes',
    'updatedAt',
    'originChainId',
    'destinationChainId',
    'depositAddress',
    'requestId',
    'referrer',
    'details',
    'failReason',
    'refundFailReason',
  ])
  t.same(enumOf(at('WebhookEvent', 'data', 'status')), WEBHOOK_STATUSES, 'webhook statuses')
  missingMembers(t, 'depositAddress', schema('DepositAddressInfo'), [
    'address',
    'depositAddressType',
    'depositor',
    'depositTxHash',
  ])

  const event = validatorFor('WebhookEvent')
  const payload = {
    event: 'request.status.updated',
    timestamp: 1767225605100,
    data: {
      status: 'success',
      inTxHashes: ['0x92a2f476f3b832ec2eb22252001c940b7c8c7b1296f3f1703765121cdf8cc352'],
      txHashes: [],
      updatedAt: 1767225605000,
      originChainId: 8453,
      destinationChainId: 42161,
      depositAddress: null,
      requestId: '0x58996a9d6f25c081df05b335921e58cfe6cb540ab9444e8a0b3add4a7796b302',
      referrer: null,
      details: null,
      failReason: 'N/A',
      refundFailReason: 'N/A',
    },
  }
  accepts(t, event, payload, 'a webhook payload with null deposit address and referrer')
  rejects(
    t,
    event,
    { ...payload, data: { ...payload.data, status: 'fallback' } },
    'a fallback webhook status',
    'enum',
  )
  rejects(
    t,
    event,
    { ...payload, data: { ...payload.data, depositAddress: { address: 'x', depositAddressType: 'loose' } } },
    'a malformed deposit address',
  )

  const ws = get(doc, 'x-websocket')
  t.equal(get(ws, 'path'), '/intents/ws', 'the websocket path')
  const subscribe = validatorFor('WsSubscribeMessage')
  const requestId = '0x58996a9d6f25c081df05b335921e58cfe6cb540ab9444e8a0b3add4a7796b302'
  accepts(
    t,
    subscribe,
    JSON.parse(`{"type":"subscribe","event":"request.status.updated","filters":{"id":"${requestId}"}}`),
    'the subscribe message existing clients send',
  )
  rejects(t, subscribe, { type: 'subscribe', event: 'request.status.updated' }, 'a subscribe without filters')
  accepts(
    t,
    validatorFor('WsConnectionMessage'),
    { type: 'connection', status: 'ready', data: { id: 'c1' } },
    'the ready message',
  )
  missingMembers(t, 'status update data', at('WsStatusUpdateMessage', 'data'), [
    'status',
    'inTxHashes',
    'txHashes',
    'updatedAt',
    'originChainId',
    'destinationChainId',
  ])
})

// ------------------------------------------------------------------ behaviour of the request schemas

t.test('QuoteRequest: minimal body and field rules', async (t) => {
  accepts(t, quoteRequest, MINIMAL_QUOTE, 'the minimal body')
  for (const field of QUOTE_REQUEST_REQUIRED) {
    const { [field as keyof typeof MINIMAL_QUOTE]: _omitted, ...rest } = MINIMAL_QUOTE
    rejects(t, quoteRequest, rest, `a body without ${field}`, 'required')
  }

  const unknown = quoteRequest({ ...MINIMAL_QUOTE, slipageTolerance: '50' })
  t.notOk(unknown, 'an unknown (typo) field is rejected')
  t.ok(
    errorsOf(quoteRequest).some(
      (e) => e.keyword === 'additionalProperties' && e.params.additionalProperty === 'slipageTolerance',
    ),
    'the error names the unknown field',
  )

  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, amount: '1.5' }, 'amount "1.5"', 'pattern')
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, amount: '-1' }, 'amount "-1"', 'pattern')
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, amount: 100 }, 'a numeric amount', 'type')
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, originChainId: '8453' }, 'a string originChainId', 'type')
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, originChainId: 0 }, 'originChainId 0', 'minimum')
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, tradeType: 'EXACT' }, 'an unknown tradeType', 'enum')

  for (const field of ['slippageTolerance', 'latePaymentSlippageTolerance']) {
    for (const bad of ['10001', '99999', '-1', 'abc', '', '100000']) {
      rejects(t, quoteRequest, { ...MINIMAL_QUOTE, [field]: bad }, `${field} "${bad}"`)
    }
    for (const good of ['0', '50', '9999', '10000']) {
      accepts(t, quoteRequest, { ...MINIMAL_QUOTE, [field]: good }, `${field} "${good}"`)
    }
  }

  const txs = (n: number) =>
    Array.from({ length: n }, () => ({
      to: '0x82af49447d8a07e3bd95bd0d56f35241523fbab1',
      value: '0',
      data: '0x',
    }))
  accepts(t, quoteRequest, { ...MINIMAL_QUOTE, txs: txs(32) }, '32 txs')
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, txs: txs(33) }, '33 txs', 'maxItems')
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, txs: [{ to: '0x1234', data: '0x' }] },
    'a txs item with a bad to',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, txs: [{ to: txs(1)[0]?.to, data: 'zz' }] },
    'txs data without 0x',
  )
  const fee = { recipient: '0x9b0d748fd459a7cbdacdc9ab4438152625391c96', fee: '12.5' }
  accepts(t, quoteRequest, { ...MINIMAL_QUOTE, appFees: [fee] }, 'an app fee of 12.5 bps')
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, appFees: [{ ...fee, fee: '-1' }] },
    'a negative app fee',
    'pattern',
  )
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, appFees: Array(11).fill(fee) }, '11 app fees', 'maxItems')
  const authorization = {
    chainId: 42161,
    address: '0x82af49447d8a07e3bd95bd0d56f35241523fbab1',
    nonce: 0,
    yParity: 1,
    r: '0xe7c9ff44f3964377a7ff732b6ef5e08039da137244e26058a8bd3232730e764a',
    s: '0x6afe63e3dd3a02421afe47566ef707faec9592ca20b2b2d7c535cab18a2d2637',
  }
  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, authorizationList: [authorization] },
    'a complete authorization',
  )
  for (const member of Object.keys(authorization)) {
    const { [member as keyof typeof authorization]: _omitted, ...partial } = authorization
    rejects(
      t,
      quoteRequest,
      { ...MINIMAL_QUOTE, authorizationList: [partial] },
      `an authorization without ${member}`,
    )
  }
  accepts(t, quoteRequest, { ...MINIMAL_QUOTE, additionalData: { userPublicKey: '02ab' } }, 'additionalData')
})

t.test('QuoteRequest: cross-field rules', async (t) => {
  const refundTo = '0x1acffa0e66fbc4405270b0c1eca2dcd3e2bf4b2e'
  const recovery = { recoveryAddress: refundTo }
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, ...recovery }, 'recoveryAddress without useDepositAddress')
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, ...recovery, useDepositAddress: false },
    'recoveryAddress with useDepositAddress false',
  )
  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, ...recovery, useDepositAddress: true },
    'recoveryAddress with a deposit address',
  )

  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, strict: true },
    'strict true without refundTo',
    'dependentRequired',
  )
  accepts(t, quoteRequest, { ...MINIMAL_QUOTE, strict: true, refundTo }, 'strict true with refundTo')

  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, topupGasAmount: '2000000' },
    'topupGasAmount at its default without topupGas (the default counts as absent)',
  )
  rejects(t, quoteRequest, { ...MINIMAL_QUOTE, topupGasAmount: '5000000' }, 'topupGasAmount without topupGas')
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, topupGasAmount: '5000000', topupGas: false },
    'topupGasAmount with topupGas false',
  )
  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, topupGasAmount: '2000000', topupGas: true },
    'topupGasAmount with topupGas',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, topupGasAmount: '2.5', topupGas: true },
    'a fractional topupGasAmount',
  )

  const components = { sponsoredFeeComponents: ['execution', 'rent'] }
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, ...components },
    'sponsoredFeeComponents without subsidizeFees',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, ...components, subsidizeFees: false },
    'sponsoredFeeComponents with subsidizeFees false',
  )
  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, ...components, subsidizeFees: true },
    'sponsoredFeeComponents with subsidizeFees',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, sponsoredFeeComponents: [], subsidizeFees: true },
    'empty sponsoredFeeComponents',
    'minItems',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, sponsoredFeeComponents: ['swap', 'swap'], subsidizeFees: true },
    'duplicate sponsoredFeeComponents',
    'uniqueItems',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, sponsoredFeeComponents: ['gas'], subsidizeFees: true },
    'an unknown fee component',
    'enum',
  )

  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, maxSubsidizationAmount: '1000000' },
    'maxSubsidizationAmount alone',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, maxSubsidizationAmount: '1000000', subsidizeFees: false },
    'maxSubsidizationAmount with subsidizeFees false',
  )
  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, maxSubsidizationAmount: '1000000', subsidizeFees: true },
    'maxSubsidizationAmount with subsidizeFees',
  )
  rejects(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, maxSubsidizationAmount: '1.5', subsidizeFees: true },
    'a fractional maxSubsidizationAmount',
    'pattern',
  )

  const exactOutputDeposit = { ...MINIMAL_QUOTE, tradeType: 'EXACT_OUTPUT', useDepositAddress: true }
  rejects(t, quoteRequest, exactOutputDeposit, 'EXACT_OUTPUT with a deposit address but not strict')
  accepts(
    t,
    quoteRequest,
    { ...exactOutputDeposit, strict: true, refundTo },
    'EXACT_OUTPUT with a strict deposit address',
  )
  accepts(
    t,
    quoteRequest,
    { ...MINIMAL_QUOTE, tradeType: 'EXACT_OUTPUT' },
    'EXACT_OUTPUT without a deposit address',
  )
})

t.test('other request bodies', async (t) => {
  const index = validatorFor('IndexTransactionRequest')
  const txHash = '0x92a2f476f3b832ec2eb22252001c940b7c8c7b1296f3f1703765121cdf8cc352'
  accepts(
    t,
    index,
    { txHash, chainId: '8453', referrer: 'app' },
    'chainId as a digit string (existing clients)',
  )
  accepts(t, index, { txHash, chainId: 8453 }, 'chainId as a number')
  for (const bad of ['abc', '0', '', '-1', '8453.0', 0, -1, 1.5, null]) {
    rejects(t, index, { txHash, chainId: bad }, `chainId ${JSON.stringify(bad)}`)
  }
  rejects(t, index, { chainId: 8453 }, 'an index call without txHash', 'required')

  const permit = validatorFor('ExecutePermitRequest')
  const issued = {
    kind: 'eip3009-receive',
    requestId: '0x56891e830fd134611e1995331aff5af49675c6e26f99b01826eceecaae5bbe1b',
  }
  accepts(t, permit, issued, "the signature step's body as issued ({kind, requestId}, Relay's shape)")
  accepts(t, permit, { ...issued, api: 'bridge' }, "with Relay's optional api")
  rejects(t, permit, { ...issued, kind: '' }, 'an empty kind')
  rejects(t, permit, { kind: 'eip3009-receive' }, 'a permit without requestId')
  rejects(t, permit, { ...issued, api: 'teleport' }, 'an api value Relay does not define')
})
