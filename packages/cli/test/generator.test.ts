/**
 * The schema-driven generator and the verdict, without a server: generated requests are valid
 * against the documents, mutated ones are judged by the documents, and a non-conforming answer is
 * reported with the JSON path of the offending field.
 */
import { loadOpenApiDocument } from '@pontis/http'
import { ConformanceChecker } from '@pontis/http/testing'
import fc from 'fast-check'
import t from 'tap'
import {
  answerProblems,
  errorCatalog,
  exampleCases,
  INTENTS_DOCUMENT,
  invalidCases,
  listOperations,
  ORACLE_DOCUMENT,
  SchemaArbitraries,
  validCases,
} from '../src/index.js'

const intents = (await loadOpenApiDocument(INTENTS_DOCUMENT)).document
const oracle = (await loadOpenApiDocument(ORACLE_DOCUMENT)).document

t.test('every operation of both documents is listed, with its examples and security', async (t) => {
  const arbitraries = new SchemaArbitraries(intents)
  const operations = listOperations(intents, arbitraries)
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]))
  t.ok(byId.has('getQuoteV2') && byId.has('redeliverWebhookEvent'))
  t.equal(byId.get('getQuoteV2')?.needsCredential, false, 'anonymous quotes are allowed')
  t.same(byId.get('createApiKey')?.securitySchemes, ['adminToken'])
  t.equal(byId.get('getDocumentation')?.needsCredential, false, 'security: [] needs nothing')
  t.ok((byId.get('getQuoteV2')?.bodyExamples.length ?? 0) >= 6, 'shared request body examples are resolved')
  const status = exampleCases(byId.get('getIntentStatusV3')!)
  t.same(
    status.map((request) => Object.keys(request.query)),
    [['requestId'], ['requestId', 'referrer']],
    'required parameters first, then every documented parameter',
  )
  const oracleOperations = listOperations(oracle, new SchemaArbitraries(oracle))
  t.ok(
    oracleOperations.every((operation) => !operation.needsCredential),
    'every oracle route takes anonymous calls',
  )
})

t.test('generated requests are valid against their schemas', async (t) => {
  for (const document of [intents, oracle]) {
    const arbitraries = new SchemaArbitraries(document, { hints: { originChainId: [31337] } })
    for (const operation of listOperations(document, arbitraries)) {
      for (const request of fc.sample(validCases(operation, arbitraries), { seed: 1, numRuns: 15 })) {
        t.equal(request.valid, true)
        if (operation.bodySchemaPointer !== undefined && request.body !== undefined) {
          const problems = arbitraries.problems(operation.bodySchemaPointer, request.body)
          if (problems.length > 0) t.fail(`${operation.operationId}: ${problems.join('; ')}`)
        }
        for (const parameter of operation.parameters.filter((candidate) => candidate.required)) {
          const value = parameter.in === 'path' ? request.path : request.query[parameter.name]
          t.ok(value, `${operation.operationId} has its required ${parameter.name}`)
        }
      }
    }
  }
  const arbitraries = new SchemaArbitraries(intents, { hints: { originChainId: [31337] } })
  const quote = listOperations(intents, arbitraries).find(
    (operation) => operation.operationId === 'getQuoteV2',
  )!
  const chains = fc
    .sample(validCases(quote, arbitraries), { seed: 2, numRuns: 50 })
    .map((request) => (request.body as { originChainId: number }).originChainId)
  t.ok(chains.filter((chain) => chain === 31337).length > 25, 'hints are preferred over generated values')
})

t.test('mutations are judged by the document', async (t) => {
  const arbitraries = new SchemaArbitraries(intents)
  const operations = listOperations(intents, arbitraries)
  const quote = operations.find((operation) => operation.operationId === 'getQuoteV2')!
  const index = operations.find((operation) => operation.operationId === 'indexTransaction')!
  const mutated = fc.sample(invalidCases(quote, arbitraries), { seed: 3, numRuns: 200 })
  const extra = mutated.filter((request) => request.label.startsWith('mutation extra-member'))
  t.ok(
    extra.length > 0 &&
      extra.every(
        (request) =>
          !request.valid &&
          request.unknownMembers?.length === 1 &&
          request.unknownMembers[0] === 'body.fuzzExtraMember',
      ),
    'QuoteRequest does not list the member: the request is invalid, but a service may ignore and name it',
  )
  const extraIndex = fc
    .sample(invalidCases(index, arbitraries), { seed: 3, numRuns: 200 })
    .filter((request) => request.label.startsWith('mutation extra-member'))
  t.ok(
    extraIndex.length > 0 && extraIndex.every((request) => request.valid),
    'IndexTransactionRequest ignores them',
  )
  for (const kind of [
    'wrong-type',
    'missing-required',
    'malformed-json',
    'wrong-media-type',
    'missing-body',
  ]) {
    const cases = mutated.filter((request) => request.label.startsWith(`mutation ${kind}`))
    t.ok(cases.length > 0 && cases.every((request) => !request.valid), `${kind} breaks a quote request`)
  }
  t.ok(
    mutated.some((request) => typeof request.body === 'object' && JSON.stringify(request.body).length > 1000),
    'huge strings are sent',
  )
})

t.test('an answer is checked against the document and mismatches name the field', async (t) => {
  const arbitraries = new SchemaArbitraries(intents)
  const checker = new ConformanceChecker(intents)
  const catalog = errorCatalog(arbitraries)
  t.ok(catalog.has('INVALID_REQUEST') && catalog.has('UNSUPPORTED_CHAIN'))
  const request = {
    operationId: 'getChains',
    label: 'example',
    method: 'GET',
    path: '/chains',
    query: {},
    headers: {},
    valid: true,
  }
  const json = { 'content-type': 'application/json; charset=utf-8' }
  const problems = answerProblems(checker, catalog, request, {
    status: 200,
    headers: json,
    body: { chains: [{ id: '31337' }] },
    text: '',
  })
  t.match(problems.join('\n'), /^body\/chains\/0\/id must be integer/m)
  t.same(
    answerProblems(checker, catalog, request, {
      status: 418,
      headers: json,
      body: { message: 'teapot' },
      text: '',
    }),
    [],
    'an undocumented status is answered by `default` here',
  )
  t.match(
    answerProblems(checker, catalog, request, {
      status: 200,
      headers: { 'content-type': 'text/plain' },
      body: 'x',
      text: 'x',
    }),
    [/content type "text\/plain" is not one of application\/json/],
  )
  const server = answerProblems(checker, catalog, request, {
    status: 500,
    headers: json,
    body: { message: 'boom', errorCode: 'UNKNOWN_ERROR' },
    text: '{"message":"boom"}',
  })
  t.match(server, [/^server error 500/])
  t.same(
    answerProblems(checker, catalog, request, {
      status: 503,
      headers: json,
      body: { message: 'down' },
      text: '',
    }),
    [],
    'a documented 503 is no fault of the contract',
  )
  const invalid = { ...request, valid: false }
  t.match(
    answerProblems(checker, catalog, invalid, { status: 200, headers: json, body: { chains: [] }, text: '' }),
    [/breaks the document but was answered 200/],
  )
  const unknownOnly = { ...invalid, unknownMembers: ['body.fuzzExtraMember'] }
  t.match(
    answerProblems(checker, catalog, unknownOnly, {
      status: 200,
      headers: json,
      body: { chains: [] },
      text: '',
    }),
    [/does not list \(body.fuzzExtraMember\) and was answered 200, not a 4xx, without naming them/],
    'an unknown member silently accepted is a problem',
  )
  t.same(
    answerProblems(checker, catalog, unknownOnly, {
      status: 200,
      headers: { ...json, 'ignored-members': 'body.other, body.fuzzExtraMember' },
      body: { chains: [] },
      text: '',
    }),
    [],
    'an unknown member ignored and named in Ignored-Members is what the document allows',
  )
  t.match(
    answerProblems(checker, catalog, invalid, {
      status: 400,
      headers: json,
      body: { message: 'no' },
      text: '',
    }),
    [/body\/errorCode is missing/],
  )
  const unknownCode = answerProblems(
    checker,
    catalog,
    request,
    { status: 400, headers: json, body: { message: 'no', errorCode: 'NOPE' }, text: '' },
    { requireErrorCode: true },
  ).join('\n')
  t.match(unknownCode, /body\/errorCode "NOPE" is not in the error catalog/)
})
