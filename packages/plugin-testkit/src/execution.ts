/**
 * Executable conformance: the deposit steps a plugin serves are executed as a wallet executes them
 * (transactions sent to the family's devnet, signatures posted to the intent service's execute
 * API) and the deposit must then be observed by the plugin's own reading capability.
 */
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ChainAdapter, DepositFact, DepositStepsRequest, PreparedStep } from '@pontis/core'
import type { Test } from 'tap'
import type { ExecutableItem, ExecutionFixtures, PluginConformanceFixtures } from './fixtures.js'

/** How long a deposit may take to show in reads after its steps ran (devnets confirm in ~1 s). */
const OBSERVE_TIMEOUT_MS = 30_000
const OBSERVE_INTERVAL_MS = 100

/** The steps to run, and the deposit they must make. */
interface Deposit {
  readonly steps: readonly PreparedStep[]
  readonly depositId: string
  readonly depositor: string
  readonly currencyId: string
  readonly amount: bigint
}

/** A served quote, as much as a wallet reads of it (steps are JSON with a PreparedStep's members). */
interface ServedQuote {
  readonly steps?: readonly (PreparedStep & { readonly requestId?: string })[]
  readonly details?: { readonly currencyIn?: { readonly amount?: string } }
}

async function postJson(
  url: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** The deposit of a quote the service serves (POST /quote), or undefined after failing `t`. */
async function servedDeposit(t: Test, execution: ExecutionFixtures): Promise<Deposit | undefined> {
  const served = execution.served
  if (served === undefined) return undefined
  const answer = await postJson(new URL('/quote', served.url).href, served.quoteRequest)
  if (answer.status !== 200) {
    const { errorCode, message } = answer.body
    t.fail(
      `the service serves no quote for execution.served.quoteRequest: ${answer.status} ${errorCode}: ${message}`,
    )
    return undefined
  }
  const quote = answer.body as ServedQuote
  const steps = quote.steps ?? []
  const requestId = steps[0]?.requestId
  t.ok(requestId !== undefined, `the service served ${steps.length} step(s) for request ${requestId}`)
  const request = served.quoteRequest as { user?: string; originCurrency?: string }
  return {
    steps,
    depositId: execution.depositId ?? String(requestId),
    depositor: String(request.user),
    currencyId: String(request.originCurrency),
    amount: BigInt(quote.details?.currencyIn?.amount ?? '0'),
  }
}

async function builtDeposit(
  adapter: ChainAdapter,
  request: DepositStepsRequest,
  depositId?: string,
): Promise<Deposit> {
  const steps: readonly PreparedStep[] = (await adapter.quoting?.buildDepositSteps(request)) ?? []
  return {
    steps,
    depositId: depositId ?? request.requestId,
    depositor: request.depositor,
    currencyId: request.currencyId,
    amount: request.amount,
  }
}

/** Posts a signed signature item to the execute API its `data.post` names; answers the deposit's transaction id. */
async function postSignature(
  t: Test,
  baseUrl: string,
  data: ExecutableItem['data'],
  signature: string,
  label: string,
): Promise<string | undefined> {
  const post = data.post as { endpoint?: string; body?: unknown } | undefined
  if (typeof post?.endpoint !== 'string') {
    t.fail(`${label}: the signature item names no data.post.endpoint to post to`)
    return undefined
  }
  const url = new URL(post.endpoint, baseUrl)
  url.searchParams.set('signature', signature)
  const answer = await postJson(url.href, post.body)
  const refusal =
    answer.status === 200 ? '' : `: refused ${answer.status} ${answer.body.errorCode}: ${answer.body.message}`
  t.equal(answer.status, 200, `${label}: the execute API ${post.endpoint} accepts it${refusal}`)
  const txHash = answer.body.txHash
  t.equal(typeof txHash, 'string', `${label}: the execute API submitted the deposit`)
  return typeof txHash === 'string' ? txHash : undefined
}

/** Runs one item as a wallet does; answers the transaction it made, if any. */
async function executeItem(
  t: Test,
  execution: ExecutionFixtures,
  item: ExecutableItem,
  label: string,
): Promise<string | undefined> {
  try {
    if (item.step.kind === 'transaction') {
      if (execution.sendTransaction === undefined) {
        t.fail(`${label}: a transaction step, and no execution.sendTransaction to send it to the devnet`)
        return undefined
      }
      const transactionId = await execution.sendTransaction(item)
      t.pass(`${label}: the devnet took the transaction ${transactionId}`)
      return transactionId
    }
    if (execution.sign === undefined || execution.served === undefined) {
      t.fail(
        `${label}: a signature step needs execution.sign and execution.served (a running intent service) to be executed`,
      )
      return undefined
    }
    return await postSignature(t, execution.served.url, item.data, await execution.sign(item), label)
  } catch (error) {
    t.fail(`${label}: cannot be executed: ${error instanceof Error ? error.message : String(error)}`)
    return undefined
  }
}

function isTheDeposit(adapter: ChainAdapter, fact: DepositFact, deposit: Deposit): boolean {
  const { identity } = adapter
  return (
    fact.depositId.toLowerCase() === deposit.depositId.toLowerCase() &&
    fact.amount === deposit.amount &&
    fact.currencyId === identity.normalizeCurrency(deposit.currencyId) &&
    fact.depositor === identity.normalizeAddress(deposit.depositor, 'user')
  )
}

/** Reads each transaction until the chain has settled it; answers whether one shows the deposit. */
async function observe(
  adapter: ChainAdapter,
  transactionIds: readonly string[],
  deposit: Deposit,
): Promise<boolean> {
  const reading = adapter.reading
  if (reading === undefined) return false
  const deadline = Date.now() + OBSERVE_TIMEOUT_MS
  for (const transactionId of transactionIds) {
    for (;;) {
      const read = await reading.readDeposits(transactionId)
      if (read.state === 'success' && read.facts.some((fact) => isTheDeposit(adapter, fact, deposit)))
        return true
      // Not yet seen or still pending: the chain may still take it. Anything else is its answer.
      if ((read.state !== 'not_found' && read.state !== 'pending') || Date.now() > deadline) break
      await sleep(OBSERVE_INTERVAL_MS)
    }
  }
  return false
}

/**
 * Executes the deposit steps the plugin serves (those of a quote the intent service serves when
 * `execution.served` is given, else those `buildDepositSteps` builds) and checks the plugin's
 * reading observes the deposit.
 */
export async function checkExecution(t: Test, adapter: ChainAdapter, fixtures: PluginConformanceFixtures) {
  const { execution, quoting } = fixtures
  if (execution === undefined || quoting === undefined) {
    t.fail(
      'the adapter declares quoting: give fixtures.execution so the suite can execute the steps it serves',
    )
    return
  }
  if (adapter.reading === undefined) {
    t.fail('the adapter declares quoting and no reading: a deposit it serves cannot be observed')
    return
  }
  const deposit =
    execution.served === undefined
      ? await builtDeposit(adapter, execution.depositRequest ?? quoting.depositRequest, execution.depositId)
      : await servedDeposit(t, execution)
  if (deposit === undefined) return
  if (!(await runAndObserve(t, adapter, execution, deposit, ''))) return
  // A plugin that declares `explicitDeposit` serves the direct form for `false`: it must run and be
  // read back just the same (under a fresh request id, so the first deposit cannot stand in for it).
  const request = execution.depositRequest ?? quoting.depositRequest
  if (execution.served !== undefined || !adapter.quoting?.originRequestOptions?.includes('explicitDeposit'))
    return
  const direct = await builtDeposit(adapter, {
    ...request,
    requestId: `0x${randomBytes(32).toString('hex')}`,
    options: { ...request.options, explicitDeposit: false },
  })
  await runAndObserve(t, adapter, execution, direct, 'explicitDeposit: false, ')
}

/** Runs every item of the deposit's steps, then checks reading observes it; false when an item could not run. */
async function runAndObserve(
  t: Test,
  adapter: ChainAdapter,
  execution: ExecutionFixtures,
  deposit: Deposit,
  prefix: string,
): Promise<boolean> {
  const transactionIds: string[] = []
  for (const [index, step] of deposit.steps.entries()) {
    for (const [itemIndex, { data }] of step.items.entries()) {
      const label = `${prefix}step ${index} (${step.id}) item ${itemIndex}`
      const item: ExecutableItem = { data, step }
      const transactionId = await executeItem(t, execution, item, label)
      if (transactionId === undefined) return false
      transactionIds.push(transactionId)
    }
  }
  t.ok(
    await observe(adapter, transactionIds, deposit),
    `${prefix}reading observes the deposit ${deposit.depositId} of ${deposit.amount} by ${deposit.depositor}`,
  )
  return true
}
