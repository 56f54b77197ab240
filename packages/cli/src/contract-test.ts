import { fileURLToPath } from 'node:url'
import { timedFetch } from '@pontis/core'
import { loadOpenApiDocument, type OpenApiDocument } from '@pontis/http'
import { ConformanceChecker } from '@pontis/http/testing'
import fc from 'fast-check'
import { exampleCases, listOperations, type Operation, type RequestCase, validCases } from './operations.js'
import { isJsonObject, SchemaArbitraries } from './schema-arbitrary.js'
import { caseUrl, sendCase } from './send.js'
import { answerProblems, errorCatalog } from './verdict.js'

/** The documents in this repository: the contract a deployment is tested against. */
export const INTENTS_DOCUMENT = fileURLToPath(new URL('../../../openapi/intents.yaml', import.meta.url))
export const ORACLE_DOCUMENT = fileURLToPath(new URL('../../../openapi/oracle.yaml', import.meta.url))

/** Generated cases per operation unless told otherwise. */
export const DEFAULT_GENERATED_CASES = 3
export const DEFAULT_SEED = 42

export interface ContractTestOptions {
  /** Base URL of the intent service. */
  readonly intentsUrl: string
  /** Base URL of the oracle; the oracle is not tested without it. */
  readonly oracleUrl?: string
  /** Sent as `Authorization: Bearer` to operations that need the admin token; they are skipped without it. */
  readonly adminToken?: string
  /** Sent as `x-api-key` on every request (higher rate limits). */
  readonly apiKey?: string
  /** Generated cases per operation (default 3; 0 sends the documented examples only). */
  readonly generated?: number
  /** Seed of the generated cases, so a run can be repeated (default 42). */
  readonly seed?: number
  /** Replace the repository's documents (tests). */
  readonly intentsDocument?: OpenApiDocument
  readonly oracleDocument?: OpenApiDocument
  /** Called after each check, for progress output. */
  readonly onCheck?: (check: ContractCheck) => void
}

/** One request sent and its answer checked. */
export interface ContractCheck {
  readonly service: 'intents' | 'oracle'
  readonly operationId: string
  /** `example evmBridge`, `generated #1`. */
  readonly case: string
  readonly method: string
  readonly url: string
  /** The answer's status; undefined when the request failed outright. */
  readonly status: number | undefined
  readonly ok: boolean
  /** Each mismatch names the JSON path and the schema message. */
  readonly problems: readonly string[]
}

export interface SkippedOperation {
  readonly service: 'intents' | 'oracle'
  readonly operationId: string
  readonly reason: string
}

export interface ContractReport {
  readonly checks: readonly ContractCheck[]
  readonly skipped: readonly SkippedOperation[]
  readonly passed: number
  readonly failed: number
  readonly seed: number
}

interface ServiceUnderTest {
  readonly service: 'intents' | 'oracle'
  readonly baseUrl: string
  readonly document: OpenApiDocument
}

/**
 * Runs the contract suite against a deployment: for every operation of the document(s), each
 * documented example and a few generated valid requests are sent, and every answer is checked
 * against the document (status documented for the operation, content type, body and headers valid
 * against the status's schema; no server error other than a documented 503).
 */
export async function runContractTest(options: ContractTestOptions): Promise<ContractReport> {
  const seed = options.seed ?? DEFAULT_SEED
  const generated = options.generated ?? DEFAULT_GENERATED_CASES
  const services: ServiceUnderTest[] = [
    {
      service: 'intents',
      baseUrl: options.intentsUrl,
      document: options.intentsDocument ?? (await loadOpenApiDocument(INTENTS_DOCUMENT)).document,
    },
  ]
  if (options.oracleUrl) {
    services.push({
      service: 'oracle',
      baseUrl: options.oracleUrl,
      document: options.oracleDocument ?? (await loadOpenApiDocument(ORACLE_DOCUMENT)).document,
    })
  }
  const checks: ContractCheck[] = []
  const skipped: SkippedOperation[] = []
  for (const { service, baseUrl, document } of services) {
    const arbitraries = new SchemaArbitraries(document, { hints: await discoverHints(service, baseUrl) })
    const checker = new ConformanceChecker(document)
    const catalog = errorCatalog(arbitraries)
    for (const operation of listOperations(document, arbitraries)) {
      const credentials = credentialHeaders(operation, options)
      if (credentials === undefined) {
        skipped.push({
          service,
          operationId: operation.operationId,
          reason: `needs ${operation.securitySchemes.join(' or ')}${operation.securitySchemes.includes('adminToken') ? ' (pass --admin-token)' : ''}`,
        })
        continue
      }
      for (const request of casesOf(operation, arbitraries, generated, seed)) {
        const url = caseUrl(baseUrl, request).toString()
        let check: ContractCheck
        try {
          const answer = await sendCase(baseUrl, request, credentials)
          const problems = answerProblems(checker, catalog, request, answer)
          check = {
            service,
            operationId: operation.operationId,
            case: request.label,
            method: request.method,
            url,
            status: answer.status,
            ok: problems.length === 0,
            problems,
          }
        } catch (error) {
          const message =
            error instanceof Error
              ? `${error.message}${error.cause ? ` (${String(error.cause)})` : ''}`
              : String(error)
          check = {
            service,
            operationId: operation.operationId,
            case: request.label,
            method: request.method,
            url,
            status: undefined,
            ok: false,
            problems: [`request failed: ${message}`],
          }
        }
        checks.push(check)
        options.onCheck?.(check)
      }
    }
  }
  const failed = checks.filter((check) => !check.ok).length
  return { checks, skipped, passed: checks.length - failed, failed, seed }
}

/** The account the intent document's examples use; any EVM address would do. */
const DOCUMENTED_EVM_ACCOUNT = '0x1acffa0e66fbc4405270b0c1eca2dcd3e2bf4b2e'

/**
 * Realistic values from the deployment itself: the chain ids and currencies its chain list names,
 * so generated requests ask about chains the deployment serves instead of only being refused.
 * The intent service's hints name its EVM chains only, which the documented EVM addresses fit.
 * A deployment whose chain list cannot be read gets no hints (its checks still run).
 */
export async function discoverHints(
  service: 'intents' | 'oracle',
  baseUrl: string,
): Promise<Record<string, unknown[]>> {
  try {
    const response = await timedFetch(
      `${baseUrl.replace(/\/$/, '')}${service === 'intents' ? '/chains' : '/chains/v1'}`,
      {},
      { timeoutMs: 10_000 },
    )
    if (!response.ok) return {}
    const body = JSON.parse(response.text) as { chains?: unknown }
    const all = Array.isArray(body.chains) ? body.chains.filter(isJsonObject) : []
    // One family keeps generated requests coherent (an EVM user on an EVM chain with its currency).
    const evm = all.filter((chain) => chain.vmType === 'evm')
    const chains = service === 'intents' && evm.length > 0 ? evm : all
    const ids = chains.map((chain) => chain.id).filter((id) => typeof id === 'number')
    if (service === 'oracle') return { chainId: ids, ownerChainId: ids }
    const currencies = chains.flatMap((chain) => {
      const native = isJsonObject(chain.currency) ? [chain.currency.address] : []
      const tokens = Array.isArray(chain.erc20Currencies)
        ? chain.erc20Currencies.filter(isJsonObject).map((currency) => currency.address)
        : []
      return [...native, ...tokens].filter((address) => typeof address === 'string')
    })
    return {
      user: [DOCUMENTED_EVM_ACCOUNT],
      recipient: [DOCUMENTED_EVM_ACCOUNT],
      refundTo: [DOCUMENTED_EVM_ACCOUNT],
      originChainId: ids,
      destinationChainId: ids,
      chainId: ids,
      originCurrency: currencies,
      destinationCurrency: currencies,
    }
  } catch {
    return {}
  }
}

/** The headers an operation's security needs, or undefined when the options lack the credential. */
function credentialHeaders(
  operation: Operation,
  options: ContractTestOptions,
): Record<string, string> | undefined {
  const headers: Record<string, string> = options.apiKey ? { 'x-api-key': options.apiKey } : {}
  if (!operation.needsCredential) return headers
  if (operation.securitySchemes.includes('adminToken') && options.adminToken) {
    const { 'x-api-key': _key, ...rest } = headers
    return { ...rest, authorization: `Bearer ${options.adminToken}` }
  }
  if (operation.securitySchemes.includes('apiKey') && options.apiKey) return headers
  return undefined
}

function casesOf(
  operation: Operation,
  arbitraries: SchemaArbitraries,
  generated: number,
  seed: number,
): RequestCase[] {
  const cases = exampleCases(operation)
  if (generated > 0) {
    const samples = fc.sample(validCases(operation, arbitraries), { seed, numRuns: generated })
    samples.forEach((sample, index) => {
      cases.push({ ...sample, label: `generated #${index + 1}` })
    })
  }
  return cases
}

/** The report as people read it: one line per check, the skipped operations, a summary. */
export function formatReport(report: ContractReport, options: { readonly checks?: boolean } = {}): string {
  const lines = options.checks === false ? [] : report.checks.map(formatCheck)
  for (const skip of report.skipped)
    lines.push(`- ${skip.service} ${skip.operationId}: skipped, ${skip.reason}`)
  const limited = report.checks.filter((check) => check.status === 429).length
  if (limited > 0) {
    // A 429 conforms, but it checks nothing behind the limiter.
    lines.push(
      `! ${limited} answers were rate limited (429); pass --api-key or lower --generated to check more`,
    )
  }
  lines.push(
    '',
    `${report.checks.length} checks: ${report.passed} passed, ${report.failed} failed, ${report.skipped.length} operations skipped (seed ${report.seed})`,
  )
  return `${lines.join('\n')}\n`
}

/** One check as one line (and an indented line per further problem). */
export function formatCheck(check: ContractCheck): string {
  const head = `${check.ok ? '✓' : '✗'} ${check.service} ${check.operationId} [${check.case}] ${check.method} ${check.url} -> ${check.status ?? 'no answer'}`
  if (check.ok) return head
  const [first, ...rest] = check.problems
  return [`${head}: ${first}`, ...rest.map((problem) => `    ${problem}`)].join('\n')
}
