/**
 * Coverage of the oracle spec by openapi/oracle.yaml: every route, option, configuration variable and
 * rule the spec names is in the document, and the schemas behave as documented (Ajv 2020).
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import t from 'tap'
import { type Hex, hashStruct, hashTypedData, recoverMessageAddress, recoverTypedDataAddress } from 'viem'
import { parse } from 'yaml'
import { ERROR_CATALOG } from '../../packages/core/src/errors.js'
import { addPontisFormats } from '../../packages/core/src/validation.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

const here = dirname(fileURLToPath(import.meta.url))
const documentPath = join(here, '..', '..', 'openapi', 'oracle.yaml')
const doc = parse(readFileSync(documentPath, 'utf8')) as JsonObject
const DOC_ID = 'https://pontis.dev/openapi/oracle.yaml'

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function obj(value: Json | undefined, where: string): JsonObject {
  if (!isObject(value)) throw new Error(`${where}: expected an object`)
  return value
}

function str(value: Json | undefined, where: string): string {
  if (typeof value !== 'string') throw new Error(`${where}: expected a string`)
  return value
}

function arr(value: Json | undefined, where: string): Json[] {
  if (!Array.isArray(value)) throw new Error(`${where}: expected an array`)
  return value
}

/** Follows local `$ref`s (`#/components/...`) until a non-reference object. */
function deref(value: Json | undefined, where: string): JsonObject {
  let current = obj(value, where)
  for (let hops = 0; typeof current.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`${where}: $ref loop`)
    const ref = current.$ref
    if (!ref.startsWith('#/')) throw new Error(`${where}: non-local $ref ${ref}`)
    let target: Json | undefined = doc
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
      target = obj(target, ref)[key]
    }
    current = obj(target, ref)
  }
  return current
}

const paths = obj(doc.paths, 'paths')
const components = obj(doc.components, 'components')
const schemas = obj(components.schemas, 'components.schemas')
const info = obj(doc.info, 'info')
/** Descriptions wrap lines; phrases are searched with whitespace collapsed. */
const flat = (text: string) => text.replace(/\s+/g, ' ')
const description = flat(str(info.description, 'info.description'))

function operation(path: string, method: string): JsonObject {
  return obj(obj(paths[path], path)[method], `${method} ${path}`)
}

function requestSchema(path: string): JsonObject {
  const body = deref(operation(path, 'post').requestBody, `${path} requestBody`)
  const media = obj(obj(body.content, 'content')['application/json'], 'application/json')
  return deref(media.schema, `${path} schema`)
}

const ROUTES = [
  { method: 'get', path: '/lives/v1', operationId: 'getLives' },
  { method: 'get', path: '/chains/v1', operationId: 'getOracleChains' },
  { method: 'get', path: '/documentation', operationId: 'getDocumentation' },
  { method: 'post', path: '/attestations/depository-deposits/v1', operationId: 'attestDepositoryDeposits' },
  {
    method: 'post',
    path: '/attestations/depository-withdrawals/v1',
    operationId: 'attestDepositoryWithdrawals',
  },
  { method: 'post', path: '/attestations/solver-fills/v1', operationId: 'attestSolverFills' },
  { method: 'post', path: '/attestations/solver-refunds/v1', operationId: 'attestSolverRefunds' },
  {
    method: 'post',
    path: '/attestations/withdrawal-initiation/v1',
    operationId: 'attestWithdrawalInitiation',
  },
  { method: 'post', path: '/attestations/withdrawal-initiated/v1', operationId: 'attestWithdrawalInitiated' },
] as const

const ATTESTATION_PATHS = ROUTES.filter((route) => route.method === 'post').map((route) => route.path)
const FORCE_PATHS: readonly string[] = ['/attestations/solver-fills/v1', '/attestations/solver-refunds/v1']

const CONFIGURATION_VARIABLES = [
  'ENVIRONMENT',
  'SIGNING_MODULE',
  'raw-private-key',
  'aws-kms',
  'ECDSA_PRIVATE_KEY',
  'AWS_KMS_KEY_ID',
  'AWS_REGION',
  'API_KEYS',
  'HTTP_PORT',
  'PORT',
  'UNAUTHENTICATED_RATE_LIMIT_MAX',
  'UNAUTHENTICATED_RATE_LIMIT_WINDOW_MS',
  'PEERS',
  'pass-through',
  'PEER_REQUEST_TIMEOUT_MS',
  'ORACLE_SIGNERS',
  'ORACLE_SIGNERS_THRESHOLD',
  '<CHAIN>_RPC_URL',
  '/vault/secrets',
]

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false })
  addFormats.default(ajv)
  addPontisFormats(ajv)
  // Strict mode catches misspelt schema keywords; OpenAPI's own fields and annotations are declared.
  const openApiFields = ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components']
  const annotations = [
    'security',
    'tags',
    'externalDocs',
    'example',
    'xml',
    'discriminator',
    'x-enum-varnames',
  ]
  for (const keyword of [...openApiFields, ...annotations]) {
    ajv.addKeyword({ keyword })
  }
  ajv.addSchema(doc, DOC_ID)
  return ajv
}

const ajv = createAjv()

function validator(schemaName: string) {
  return ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${schemaName}` })
}

/** Named examples of the operation's JSON request body or of one of its responses. */
function examples(path: string, method: string, status?: string): Json[] {
  const op = operation(path, method)
  const holder =
    status === undefined
      ? deref(op.requestBody, `${path} requestBody`)
      : deref(obj(op.responses, 'responses')[status], `${path} ${status}`)
  const media = obj(obj(holder.content, 'content')['application/json'], 'application/json')
  return Object.values(obj(media.examples, 'examples')).map(
    (example) => obj(example, 'example').value ?? null,
  )
}

t.test('the nine routes exist with their operationIds', async (t) => {
  for (const route of ROUTES) {
    const op = operation(route.path, route.method)
    t.equal(op.operationId, route.operationId, `${route.method.toUpperCase()} ${route.path}`)
  }
  const operationIds = Object.values(paths).flatMap((item) =>
    Object.values(obj(item, 'path item')).map((op) => obj(op, 'operation').operationId),
  )
  t.equal(new Set(operationIds).size, operationIds.length, 'operationIds are unique')
  t.equal(doc.openapi, '3.1.0')
})

t.test('every operation answers a default ErrorBody; attestation routes the documented errors', async (t) => {
  for (const route of ROUTES) {
    const responses = obj(operation(route.path, route.method).responses, 'responses')
    const fallback = deref(responses.default, `${route.path} default`)
    const media = obj(obj(fallback.content, 'content')['application/json'], 'json')
    t.equal(obj(media.schema, 'schema').$ref, '#/components/schemas/ErrorBody', `${route.path} default`)
  }
  for (const path of ATTESTATION_PATHS) {
    const responses = obj(operation(path, 'post').responses, 'responses')
    for (const status of ['200', '400', '413', '415', '429', '500', '503']) {
      t.ok(responses[status], `${path} documents ${status}`)
    }
    t.equal(Boolean(responses['401']), FORCE_PATHS.includes(path), `${path} documents 401 only with force`)
    t.same(operation(path, 'post').security, [{}, { apiKey: [] }], `${path} security`)
  }
  const apiKey = obj(obj(components.securitySchemes, 'securitySchemes').apiKey, 'apiKey')
  t.match(apiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' }, 'apiKey is the x-api-key header')
})

t.test(
  'the six attestation routes accept requestPeerSignatures; only fills and refunds accept force',
  async (t) => {
    for (const path of ATTESTATION_PATHS) {
      const schema = requestSchema(path)
      const properties = obj(schema.properties, `${path} properties`)
      t.ok(properties.requestPeerSignatures, `${path} has requestPeerSignatures`)
      t.equal(deref(properties.requestPeerSignatures, 'requestPeerSignatures').type, 'boolean')
      t.equal(Boolean(properties.force), FORCE_PATHS.includes(path), `${path} force`)
      t.equal(schema.additionalProperties, false, `${path} refuses unknown fields`)
    }
    const force = str(deref(schemas.Force, 'Force').description, 'Force.description')
    t.match(force, /x-api-key/)
    t.match(force, /401 `UNAUTHORIZED`/)
  },
)

t.test(
  'requestPeerSignatures documents the nine aggregation rules and the stricter Pontis checks',
  async (t) => {
    const raw = str(deref(schemas.RequestPeerSignatures, 'RequestPeerSignatures').description, 'description')
    const text = flat(raw)
    for (let rule = 1; rule <= 9; rule++) t.match(raw, new RegExp(`^${rule}\\. `, 'm'), `rule ${rule}`)
    for (const phrase of [
      'start concurrently',
      'ORACLE_SIGNERS_THRESHOLD',
      'remote peers alone can satisfy it',
      'signing domains and non-signature array order match',
      'signers missing from any signature array',
      'does not enforce quorum',
      'never sends it to peers',
      'PEER_REQUEST_TIMEOUT_MS',
      'does not by itself fail the request',
      'skipped',
      'recovered against this instance',
      'High-s',
      'deduplicated',
      'sorted ascending by signer address',
    ]) {
      t.ok(text.includes(phrase), phrase)
    }
  },
)

t.test('429 carries retry-after and rate-limit headers; the limit is documented', async (t) => {
  let seen = 0
  for (const route of ROUTES) {
    const responses = obj(operation(route.path, route.method).responses, 'responses')
    if (!responses['429']) continue
    seen++
    const limited = deref(responses['429'], `${route.path} 429`)
    const headers = Object.keys(obj(limited.headers, 'headers')).map((name) => name.toLowerCase())
    t.ok(headers.includes('retry-after'), `${route.path} 429 retry-after`)
    t.ok(headers.includes('ratelimit'), `${route.path} 429 RateLimit`)
    t.ok(headers.includes('ratelimit-policy'), `${route.path} 429 RateLimit-Policy`)
  }
  t.equal(seen, 7, '/chains/v1 and the six attestation routes can answer 429')
  for (const exempt of ['/lives/v1', '/documentation']) {
    t.notOk(obj(operation(exempt, 'get').responses, 'responses')['429'], `${exempt} is exempt`)
  }
  for (const phrase of [
    'fixed window per client IP',
    '2',
    '1000 ms',
    '`/documentation`',
    '`/lives/*`',
    'bypasses',
  ]) {
    t.ok(description.includes(phrase), `info.description: ${phrase}`)
  }
})

t.test('info.description names every configuration variable and the security expectations', async (t) => {
  for (const name of CONFIGURATION_VARIABLES) t.ok(description.includes(`\`${name}\``), name)
  t.match(description, /`API_KEYS` does \*\*not\*\* protect `\/chains\/v1` or the attestation routes/)
  t.match(description, /HTTPS is expected/)
  t.match(description, /Startup fails when/)
  t.match(description, /threshold exceeds the number of unique allowlist entries/)
  t.match(description, /local signer address is not in the allowlist/)
})

t.test('every ErrorBody errorCode is in the error catalog', async (t) => {
  const errorCode = deref(
    obj(deref(schemas.ErrorBody, 'ErrorBody').properties, 'props').errorCode,
    'errorCode',
  )
  const codes = arr(errorCode.enum, 'errorCode.enum')
  t.ok(codes.length > 0)
  for (const code of codes)
    t.ok(Object.hasOwn(ERROR_CATALOG, str(code, 'code')), `${String(code)} is catalogued`)
  t.same(deref(schemas.ErrorBody, 'ErrorBody').required, ['message'])
})

t.test('deposit requests validate as documented', async (t) => {
  const validate = validator('DepositoryDepositsRequest')
  const valid = {
    chainId: 8453,
    transactionId: '0x8a3e5b5f1c2d7e9a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a',
    mode: 'fast',
    requestPeerSignatures: true,
  }
  t.ok(validate(valid), 'a valid deposit request passes')
  t.ok(validate({ chainId: 792703809, transactionId: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9' }), 'mode is optional')
  const { transactionId: _omitted, ...withoutTransaction } = valid
  t.notOk(validate(withoutTransaction), 'missing transactionId fails')
  t.notOk(validate({ ...valid, mode: 'instant' }), 'bad mode fails')
  t.notOk(validate({ ...valid, chainId: '8453' }), 'chainId must be a JSON integer')
  t.notOk(validate({ ...valid, chainId: 0 }), 'chainId must be positive')
  t.notOk(validate({ ...valid, transactionId: '' }), 'empty transactionId fails')
  t.notOk(validate({ ...valid, requestPeerSignatures: 'yes' }), 'requestPeerSignatures is a boolean')
  t.notOk(validate({ ...valid, force: true }), 'force is not a deposit option')
  t.notOk(validate({ ...valid, hint: 1 }), 'unknown property fails')
})

t.test('fill, refund and withdrawal requests validate as documented', async (t) => {
  const fill = obj(examples('/attestations/solver-fills/v1', 'post')[0], 'fill example')
  const validateFill = validator('SolverFillsRequest')
  t.ok(validateFill(fill), 'the fill example passes')
  t.ok(validateFill({ ...fill, force: true }), 'force is a fill option')
  t.notOk(validateFill({ ...fill, fill: undefined }), 'fill is required')
  t.notOk(validateFill({ ...fill, inputs: [] }), 'at least one input')
  const order = obj(fill.order, 'order')
  t.ok(validateFill({ ...fill, order: { ...order, salt: '0x01' } }), 'the salt may be hex, as quotes give it')
  t.notOk(validateFill({ ...fill, order: { ...order, salt: '0x' } }), 'hex salt has digits')
  t.notOk(validateFill({ ...fill, order: { ...order, salt: `0x${'f'.repeat(65)}` } }), 'hex salt is 256 bits')
  t.notOk(validateFill({ ...fill, order: { ...order, salt: '01' } }), 'decimal salt has no leading zero')
  t.notOk(validateFill({ ...fill, order: { ...order, version: 'v2' } }), 'unknown order version fails')
  t.notOk(validateFill({ ...fill, orderSignature: '0x1234' }), 'orderSignature is 65 bytes')

  const validateRefund = validator('SolverRefundsRequest')
  const { fill: _fill, ...withoutFill } = fill
  const refund = { ...withoutFill, refunds: [{ transactionId: '0x01', inputIndex: 0, refundIndex: 0 }] }
  t.ok(validateRefund(refund), 'a refund request passes')
  t.notOk(validateRefund({ ...refund, fill: fill.fill }), 'a refund request has no fill')
  t.notOk(validateRefund({ ...refund, refunds: [{ transactionId: '0x01', inputIndex: -1, refundIndex: 0 }] }))

  const validateWithdrawal = validator('DepositoryWithdrawalsRequest')
  t.ok(validateWithdrawal({ chainId: 8453, withdrawal: '0x00', mode: 'slow' }))
  t.notOk(validateWithdrawal({ chainId: 8453, withdrawal: '0x0' }), 'withdrawal is whole bytes')
  t.notOk(validateWithdrawal({ chainId: 8453, withdrawal: '0x00', force: true }), 'no force on withdrawals')

  const initiation = obj(examples('/attestations/withdrawal-initiation/v1', 'post')[0], 'initiation example')
  t.ok(validator('WithdrawalInitiationRequest')(initiation))
  const { ownerSignature: _signature, ...initiated } = initiation
  t.notOk(validator('WithdrawalInitiationRequest')(initiated), 'initiation needs the owner signature')
  t.ok(validator('WithdrawalInitiatedRequest')(initiated), 'initiated takes the same request unsigned')
  t.notOk(validator('WithdrawalInitiatedRequest')({ ...initiated, amount: '0' }), 'amount is positive')
})

t.test('every request and response example validates against its schema', async (t) => {
  const pointer = (...segments: string[]) =>
    segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')
  for (const route of ROUTES) {
    const op = operation(route.path, route.method)
    // [label, media type object, JSON pointer of the object holding `content`]
    const holders: [string, Json | undefined, string][] = []
    if (op.requestBody)
      holders.push(['request', op.requestBody, pointer('paths', route.path, route.method, 'requestBody')])
    for (const [status, response] of Object.entries(obj(op.responses, 'responses'))) {
      holders.push([status, response, pointer('paths', route.path, route.method, 'responses', status)])
    }
    for (const [label, holder, at] of holders) {
      const ref = obj(holder, label).$ref
      const base = typeof ref === 'string' ? ref.slice(2) : at
      const content = deref(holder, label).content
      if (!content) continue
      for (const [type, media] of Object.entries(obj(content, 'content'))) {
        const validate = ajv.compile({ $ref: `${DOC_ID}#/${base}/${pointer('content', type, 'schema')}` })
        const named = Object.entries(obj(obj(media, type).examples, `${route.path} ${label} examples`))
        t.ok(named.length > 0, `${route.path} ${label} ${type} has an example`)
        for (const [name, example] of named) {
          const ok = validate(obj(example, name).value)
          t.ok(ok, `${route.path} ${label} ${type} example ${name}`, { errors: validate.errors ?? [] })
        }
      }
    }
  }
})

t.test('response examples carry real, sorted, low-s signatures and validate', async (t) => {
  const responseSchemas: Record<string, string> = {
    '/attestations/depository-deposits/v1': 'DepositoryDepositsResponse',
    '/attestations/depository-withdrawals/v1': 'DepositoryWithdrawalsResponse',
    '/attestations/solver-fills/v1': 'SolverFillsResponse',
    '/attestations/solver-refunds/v1': 'SolverRefundsResponse',
    '/attestations/withdrawal-initiation/v1': 'WithdrawalInitiationResponse',
    '/attestations/withdrawal-initiated/v1': 'WithdrawalInitiatedResponse',
  }
  const halfN = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n
  const isLowS = (signature: string) => BigInt(`0x${signature.slice(66, 130)}`) <= halfN
  const sortedUnique = (signers: string[]) =>
    signers.every((signer, i) => i === 0 || BigInt(signers[i - 1]!) < BigInt(signer))

  // The examples describe one deployment: its hub domain is the one /chains/v1 shows.
  const chainsExample = obj(examples('/chains/v1', 'get', '200')[0], 'chains example')
  const hub = obj(chainsExample.hub, 'hub')
  const hubDomain = obj(hub.domain, 'hub.domain') as {
    name: string
    version: string
    chainId: number
    verifyingContract: Hex
  }
  t.equal(hubDomain.verifyingContract, hub.oracleContract, 'the domain verifies at the oracle contract')
  t.equal(hubDomain.chainId, hub.chainId, 'the domain is on the hub chain')
  for (const [path, schemaName] of Object.entries(responseSchemas)) {
    const validate = validator(schemaName)
    for (const example of examples(path, 'post', '200')) {
      t.ok(validate(example), `${path}: the example is a valid ${schemaName}`, {
        errors: validate.errors ?? [],
      })
      const body = obj(example, 'response')
      for (const message of arr(body.messages, 'messages')) {
        const { data, signatures } = obj(message, 'message')
        const typed = obj(data, 'data')
        t.same(typed.domain, hubDomain, `${path}: messages are signed under the hub domain`)
        const list = arr(signatures, 'signatures').map((entry) => obj(entry, 'signature'))
        t.ok(
          sortedUnique(list.map((entry) => str(entry.signer, 'signer'))),
          `${path}: message signers sorted`,
        )
        for (const entry of list) {
          const signature = str(entry.signature, 'signature') as Hex
          t.ok(isLowS(signature), `${path}: message signature is low-s`)
          const recovered = await recoverTypedDataAddress({
            domain: obj(typed.domain, 'domain'),
            types: obj(typed.types, 'types'),
            primaryType: str(typed.primaryType, 'primaryType'),
            message: obj(typed.message, 'message'),
            signature,
          } as Parameters<typeof recoverTypedDataAddress>[0])
          t.equal(recovered.toLowerCase(), entry.signer, `${path}: message signature recovers to its signer`)
        }
      }
      if (!isObject(body.execution)) continue
      const execution = body.execution
      const list = arr(execution.signatures, 'signatures').map((entry) => obj(entry, 'signature'))
      t.ok(
        sortedUnique(list.map((entry) => str(entry.oracleSigner, 'oracleSigner'))),
        `${path}: execution sorted`,
      )
      for (const entry of list) {
        const signature = str(entry.signature, 'signature') as Hex
        t.ok(isLowS(signature), `${path}: execution signature is low-s`)
        t.equal(entry.oracleChainId, hubDomain.chainId, `${path}: oracleChainId is the hub chain`)
        t.equal(
          entry.oracleContract,
          hubDomain.verifyingContract,
          `${path}: oracleContract is the oracle contract`,
        )
        const recovered = await recoverTypedDataAddress({
          domain: hubDomain,
          types: {
            Execution: [
              { name: 'idempotencyKey', type: 'bytes32' },
              { name: 'actions', type: 'bytes[]' },
            ],
          },
          primaryType: 'Execution',
          message: {
            idempotencyKey: str(execution.idempotencyKey, 'idempotencyKey') as Hex,
            actions: arr(execution.actions, 'actions').map((action) => str(action, 'action') as Hex),
          },
          signature,
        })
        t.equal(
          recovered.toLowerCase(),
          entry.oracleSigner,
          `${path}: execution signature recovers to its signer`,
        )
      }
    }
  }

  const deposit = obj(examples('/attestations/depository-deposits/v1', 'post', '200')[0], 'deposit response')
  const validate = validator('DepositoryDepositsResponse')
  t.notOk(validate({ ...deposit, messages: [] }), 'a deposit answer has at least one message')
  t.notOk(validate({ ...deposit, extra: true }), 'unknown response fields fail')
  const initiated = obj(examples('/attestations/withdrawal-initiated/v1', 'post', '200')[0], 'initiated')
  t.notOk(
    validator('WithdrawalInitiatedResponse')({ ...initiated, execution: deposit.execution }),
    'withdrawal-initiated never carries an execution',
  )
})

t.test(
  'order and withdrawal examples are consistent with their documented hashes and signatures',
  async (t) => {
    type TypedDataArgs = Parameters<typeof hashTypedData>[0]
    const fillRequest = obj(examples('/attestations/solver-fills/v1', 'post')[0], 'fill request')
    const fillMessage = obj(
      arr(obj(examples('/attestations/solver-fills/v1', 'post', '200')[0], 'r').messages, 'm')[0],
      'm',
    )
    const fillTyped = obj(fillMessage.data, 'data')
    const orderId = str(obj(fillMessage.result, 'result').orderId, 'orderId') as Hex
    const order = obj(fillRequest.order, 'order')
    t.same(
      obj(obj(fillTyped.message, 'message').data, 'data').order,
      order,
      'the signed message carries the order',
    )
    const computed = hashStruct({
      types: obj(fillTyped.types, 'types'),
      primaryType: 'Order',
      data: order,
    } as Parameters<typeof hashStruct>[0])
    t.equal(computed, orderId, 'orderId is the EIP-712 struct hash of the order')
    const solver = await recoverMessageAddress({
      message: { raw: orderId },
      signature: str(fillRequest.orderSignature, 'orderSignature') as Hex,
    })
    t.equal(solver.toLowerCase(), order.solver, 'orderSignature is the solver personal_sign of the order id')

    const initiation = obj(
      examples('/attestations/withdrawal-initiation/v1', 'post')[0],
      'initiation request',
    )
    const response = obj(examples('/attestations/withdrawal-initiation/v1', 'post', '200')[0], 'initiation')
    const message = obj(arr(response.messages, 'messages')[0], 'message')
    const typed = obj(message.data, 'data')
    const hash = str(obj(message.result, 'result').withdrawalRequestHash, 'hash') as Hex
    const withdrawalRequest = hashTypedData({
      domain: obj(typed.domain, 'domain'),
      types: obj(typed.types, 'types'),
      primaryType: 'WithdrawalRequest',
      message: obj(obj(typed.message, 'message').data, 'data'),
    } as TypedDataArgs)
    t.equal(withdrawalRequest, hash, 'withdrawalRequestHash is the EIP-712 digest of the withdrawal request')
    const owner = await recoverMessageAddress({
      message: { raw: hash },
      signature: str(initiation.ownerSignature, 'ownerSignature') as Hex,
    })
    t.equal(owner.toLowerCase(), initiation.owner, 'ownerSignature is the owner personal_sign of the hash')
    t.equal(
      obj(response.execution, 'execution').idempotencyKey,
      hash,
      'the execution is keyed by the request hash',
    )
    const initiated = obj(examples('/attestations/withdrawal-initiated/v1', 'post', '200')[0], 'initiated')
    const initiatedResult = obj(obj(arr(initiated.messages, 'messages')[0], 'message').result, 'result')
    t.equal(initiatedResult.withdrawalRequestHash, hash, 'initiated attests the same request')
    t.equal(initiatedResult.withdrawalAddress, obj(message.result, 'result').withdrawalAddress)
  },
)

t.test('lives and chains answer the documented shapes', async (t) => {
  const lives = validator('LivesResponse')
  t.ok(lives({ status: 'ok' }))
  t.notOk(lives({ status: 'degraded' }), 'status is always ok')
  const chains = validator('OracleChainsResponse')
  const example = obj(examples('/chains/v1', 'get', '200')[0] ?? null, 'chains example')
  t.ok(chains(example))
  const [first] = arr(example.chains, 'chains')
  t.notOk(
    chains({ ...example, chains: [{ ...obj(first, 'chain'), vmType: 'ethereum-vm' }] }),
    'vmType is an enum',
  )
  t.notOk(chains({ ...example, chains: [{ ...obj(first, 'chain'), id: '1' }] }), 'chain ids are integers')
  const vmTypes = arr(deref(schemas.VmType, 'VmType').enum, 'VmType.enum')
  t.same(vmTypes, ['evm', 'svm', 'bvm', 'lvm', 'hypevm', 'tvm', 'tonvm'])
})
