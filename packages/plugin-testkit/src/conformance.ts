/**
 * The conformance suite: the contract of `@pontis/core`'s plugin interface, checked as tap subtests
 * against a real adapter on a devnet, for the capabilities the adapter declares.
 */
import {
  type AddressRole,
  type ChainAdapter,
  CORE_API_VERSION,
  type CostEstimate,
  type CurrencyRole,
  createAjv,
  createRegistry,
  type DepositStepsRequest,
  type FillCostRequest,
  isPontisPlugin,
  type OriginCostRequest,
  PontisError,
  type PontisPlugin,
  type PreparedStep,
  type RegisteredChain,
  type Registry,
  satisfiesRange,
  silentLogger,
  type TransactionSizeCheck,
} from '@pontis/core'
import type { Test } from 'tap'
import { checkExecution } from './execution.js'
import type { IdentityTable, PluginConformanceFixtures } from './fixtures.js'
import { loadStepItemValidator, type StepItemValidator } from './step-items.js'

/** Step ids the document's `Step.id` enum allows for origin steps a plugin builds. */
const STEP_IDS: ReadonlySet<string> = new Set([
  'deposit',
  'approve',
  'authorize',
  'authorize1',
  'authorize2',
  'swap',
  'send',
])

/** 0x followed by whole bytes: what `encodeAddress` and `encodeTransactionId` answer. */
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})*$/

/** Strings no family takes as a transaction id. */
const GARBAGE_TRANSACTION_IDS = ['', ' ', 'not a transaction id', '0x', '0x12', '!@#$%^&*()']

/** Values that are not strings at all: `isValidAddress` answers false and never throws. */
const NOT_STRINGS: readonly unknown[] = [undefined, null, 42, {}, ['0x']]

/** Error messages echo at most this much of the offending value (core's `invalidAddressError`). */
const ECHOED_LENGTH = 100

/** Calls `run` and answers what it threw, or undefined. */
function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

/** Awaits `run` and answers what it rejected with, or undefined. */
async function rejected(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  return undefined
}

function describeError(error: unknown): string {
  if (error === undefined) return 'nothing was thrown'
  if (error instanceof PontisError) return `${error.code}: ${error.message}`
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}

/** Asserts `error` is a PontisError with `code` whose message names `value`. */
function assertPontisError(t: Test, error: unknown, code: string, value: string, label: string): void {
  if (!(error instanceof PontisError)) {
    t.fail(`${label}: expected PontisError ${code}, got ${describeError(error)}`)
    return
  }
  t.equal(error.code, code, `${label}: code ${code}`)
  t.ok(error.message.includes(value.slice(0, ECHOED_LENGTH)), `${label}: the message names the value`, {
    found: error.message,
  })
}

function checkTable(t: Test, table: IdentityTable, what: string): boolean {
  const ok = table.valid.length > 0 && table.invalid.length > 0
  t.ok(ok, `fixtures.${what} lists at least one valid and one invalid value`)
  return ok
}

function checkCost(t: Test, cost: CostEstimate, nativeCurrencyId: string, label: string): void {
  t.equal(cost.currencyId, nativeCurrencyId, `${label}: priced in the native currency`)
  t.equal(typeof cost.amount, 'bigint', `${label}: amount is a bigint`)
  t.ok(cost.amount >= 0n, `${label}: amount ${cost.amount} is not negative`)
  for (const member of ['units', 'unitPrice', 'rent'] as const) {
    const value = cost[member]
    if (value === undefined) continue
    t.ok(
      typeof value === 'bigint' && value >= 0n,
      `${label}: ${member} ${String(value)} is a non-negative bigint`,
    )
  }
  if (cost.rent !== undefined) t.ok(cost.rent <= cost.amount, `${label}: rent is part of amount`)
}

/** The top-level defaults of a config schema, by property. */
function schemaDefaults(schema: Readonly<Record<string, unknown>>): Map<string, unknown> {
  return new Map(Object.entries(pluginConfigDefaults(schema)))
}

/**
 * A plugin's options as the registry fills them from its config schema's top-level `default`s (deep
 * copies), for tests that build chain entries by hand: `{ ...pluginConfigDefaults<Config>(schema), ...overrides }`.
 */
export function pluginConfigDefaults<Config = Record<string, unknown>>(
  schema: Readonly<Record<string, unknown>>,
): Config {
  const defaults: Record<string, unknown> = {}
  const properties = schema.properties
  if (typeof properties !== 'object' || properties === null) return defaults as Config
  for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
    if (typeof property === 'object' && property !== null && 'default' in property) {
      defaults[name] = structuredClone((property as { default: unknown }).default)
    }
  }
  return defaults as Config
}

function pluginOptionsOf(fixtures: PluginConformanceFixtures): Record<string, unknown> {
  const options = fixtures.chain.plugin
  return typeof options === 'object' && options !== null
    ? structuredClone(options as Record<string, unknown>)
    : {}
}

function checkShape(t: Test, plugin: PontisPlugin<unknown>, fixtures: PluginConformanceFixtures): void {
  t.ok(isPontisPlugin(plugin), 'made by definePlugin() (branded and frozen)')
  t.match(plugin.vmType, /^[a-z][a-z0-9-]*$/, 'vmType is a lower-case word')
  t.equal(fixtures.chain.vmType, plugin.vmType, 'the fixture chain is of the plugin family')
  t.ok(typeof plugin.name === 'string' && plugin.name.trim() !== '', 'name is the package name')
  let compatible = false
  try {
    compatible = satisfiesRange(CORE_API_VERSION, plugin.coreApi)
  } catch (error) {
    t.fail(`coreApi '${plugin.coreApi}' is not a readable range: ${describeError(error)}`)
  }
  t.ok(compatible, `coreApi '${plugin.coreApi}' includes this core's API ${CORE_API_VERSION}`)
  t.equal(typeof plugin.createAdapter, 'function', 'createAdapter is a function')
}

/**
 * Checks the config schema with core's Ajv (the one the registry uses) and answers the fixture's
 * options with the defaults applied, or undefined when the schema does not compile.
 */
function checkConfigSchema(
  t: Test,
  plugin: PontisPlugin<unknown>,
  fixtures: PluginConformanceFixtures,
): Record<string, unknown> | undefined {
  const ajv = createAjv()
  let validate: ReturnType<typeof ajv.compile>
  try {
    validate = ajv.compile(plugin.configSchema)
  } catch (error) {
    t.fail(`configSchema does not compile with core's Ajv (2020-12, strict): ${describeError(error)}`)
    return undefined
  }
  t.pass("configSchema compiles with core's Ajv (2020-12, strict)")
  const defaults = schemaDefaults(plugin.configSchema)
  const given = pluginOptionsOf(fixtures)
  const options = structuredClone(given)
  t.ok(validate(options), `the fixture chain's plugin options are valid: ${ajv.errorsText(validate.errors)}`)
  for (const [name, value] of defaults) {
    if (name in given) continue
    t.same(options[name], value, `default of '${name}' applied to the fixture's options`)
  }
  const empty: Record<string, unknown> = {}
  if (validate(empty)) {
    for (const [name, value] of defaults) t.same(empty[name], value, `default of '${name}' applied to {}`)
  }
  for (const invalid of fixtures.invalidPluginOptions ?? []) {
    t.notOk(validate(structuredClone(invalid)), `refuses plugin options ${JSON.stringify(invalid)}`)
  }
  return options
}

function registryOptionsOf(fixtures: PluginConformanceFixtures) {
  return {
    logger: fixtures.context?.logger ?? silentLogger,
    environment: fixtures.context?.environment ?? 'local',
  }
}

/**
 * Registers the plugin and adds the fixture chain to `registry`, as the services do; answers the
 * chain, or undefined (after failing `t`) when the registry refuses them.
 */
async function registerChain(
  t: Test,
  registry: Registry,
  plugin: PontisPlugin<unknown>,
  fixtures: PluginConformanceFixtures,
  expectedOptions: Record<string, unknown> | undefined,
): Promise<RegisteredChain | undefined> {
  const registryOptions = registryOptionsOf(fixtures)
  try {
    registry.registerPlugin(plugin, plugin.name, plugin.vmType)
    const [chain] = await registry.addChains([fixtures.chain], 'conformance fixtures')
    if (chain === undefined) throw new Error('addChains created no chain')
    t.pass(`the registry created the adapter of chain ${chain.id} (${chain.entry.name})`)
    if (expectedOptions !== undefined) {
      t.same(chain.entry.plugin, expectedOptions, 'createAdapter got the options with defaults applied')
    }
    for (const [index, invalid] of (fixtures.invalidPluginOptions ?? []).entries()) {
      const other = createRegistry(registryOptions)
      other.registerPlugin(plugin, plugin.name, plugin.vmType)
      const error = await rejected(() => other.addChains([{ ...fixtures.chain, plugin: invalid }]))
      t.match(
        describeError(error),
        /chains\[0\]\.plugin/,
        `the registry refuses invalidPluginOptions[${index}], naming the plugin options`,
      )
      await other.close()
    }
    return chain
  } catch (error) {
    t.fail(`the registry could not load the plugin and the fixture chain: ${describeError(error)}`)
    return undefined
  }
}

function checkIdentity(t: Test, adapter: ChainAdapter, fixtures: PluginConformanceFixtures): void {
  const { identity } = adapter
  if (!checkTable(t, fixtures.addresses, 'addresses') || !checkTable(t, fixtures.currencies, 'currencies')) {
    return
  }
  for (const address of fixtures.addresses.valid) {
    const label = `address ${JSON.stringify(address)}`
    t.ok(identity.isValidAddress(address), `${label} is valid`)
    const error = thrown(() => identity.normalizeAddress(address, 'user'))
    if (error !== undefined) {
      t.fail(`${label}: normalizeAddress threw ${describeError(error)}`)
      continue
    }
    const normalized = identity.normalizeAddress(address, 'user')
    t.equal(identity.normalizeAddress(normalized, 'user'), normalized, `${label}: normalizing is idempotent`)
    t.ok(identity.isValidAddress(normalized), `${label}: the canonical form is valid`)
    t.equal(
      identity.normalizeAddress(address, 'recipient'),
      normalized,
      `${label}: the role does not change it`,
    )
    const encoded = identity.encodeAddress(address, 'user')
    t.match(encoded, HEX_BYTES, `${label}: encodeAddress answers 0x-hex`)
    t.equal(identity.encodeAddress(normalized, 'recipient'), encoded, `${label}: encodeAddress is stable`)
  }
  for (const address of fixtures.addresses.invalid) {
    const label = `address ${JSON.stringify(address)}`
    t.notOk(identity.isValidAddress(address), `${label} is not valid`)
    const roles: ReadonlyArray<[AddressRole, string]> = [
      ['recipient', 'INVALID_RECIPIENT'],
      ['user', 'INVALID_ADDRESS'],
      ['refundTo', 'INVALID_ADDRESS'],
    ]
    for (const [role, code] of roles) {
      const error = thrown(() => identity.normalizeAddress(address, role))
      assertPontisError(t, error, code, address, `${label} as ${role}`)
      if (error instanceof PontisError)
        t.match(error.message, role, `${label} as ${role}: the message names the role`)
    }
    assertPontisError(
      t,
      thrown(() => identity.encodeAddress(address, 'user')),
      'INVALID_ADDRESS',
      address,
      `${label}: encodeAddress`,
    )
  }
  for (const value of NOT_STRINGS) {
    let answer: unknown
    const error = thrown(() => {
      answer = identity.isValidAddress(value as string)
    })
    t.ok(
      error === undefined && answer === false,
      `isValidAddress(${String(value)}) is false and does not throw`,
    )
  }

  const currencyRoles: ReadonlyArray<[CurrencyRole | undefined, string]> = [
    ['input', 'INVALID_INPUT_CURRENCY'],
    ['output', 'INVALID_OUTPUT_CURRENCY'],
    ['currency', 'UNSUPPORTED_CURRENCY'],
    [undefined, 'UNSUPPORTED_CURRENCY'],
  ]
  const native = identity.nativeCurrencyId
  t.ok(typeof native === 'string' && native !== '', 'nativeCurrencyId is a string')
  for (const currency of new Set([...fixtures.currencies.valid, native])) {
    const label = `currency ${JSON.stringify(currency)}`
    const error = thrown(() => identity.normalizeCurrency(currency, 'input'))
    if (error !== undefined) {
      t.fail(`${label}: normalizeCurrency threw ${describeError(error)}`)
      continue
    }
    const normalized = identity.normalizeCurrency(currency, 'input')
    t.equal(
      identity.normalizeCurrency(normalized, 'output'),
      normalized,
      `${label}: normalizing is idempotent`,
    )
    t.equal(identity.normalizeCurrency(currency), normalized, `${label}: the role does not change it`)
    const encoded = identity.encodeAddress(currency, 'currency')
    t.match(encoded, HEX_BYTES, `${label}: encodeAddress answers 0x-hex`)
    t.equal(identity.encodeAddress(normalized, 'input'), encoded, `${label}: encodeAddress is stable`)
  }
  t.equal(identity.normalizeCurrency(native), native, 'the native currency id normalizes to itself')
  t.equal(
    identity.normalizeCurrency(fixtures.chain.currency.address),
    native,
    "the chain entry's currency.address is the native currency id",
  )
  for (const currency of fixtures.currencies.invalid) {
    const label = `currency ${JSON.stringify(currency)}`
    for (const [role, code] of currencyRoles) {
      const error = thrown(() => identity.normalizeCurrency(currency, role))
      assertPontisError(t, error, code, currency, `${label} as ${role ?? 'no role'}`)
    }
  }

  for (const garbage of [...GARBAGE_TRANSACTION_IDS, ...(fixtures.invalidTransactionIds ?? [])]) {
    const error = thrown(() => identity.encodeTransactionId(garbage))
    if (error instanceof PontisError) {
      t.equal(
        error.code,
        'INVALID_REQUEST',
        `encodeTransactionId(${JSON.stringify(garbage)}) is INVALID_REQUEST`,
      )
    } else {
      t.fail(
        `encodeTransactionId(${JSON.stringify(garbage)}): expected INVALID_REQUEST, got ${describeError(error)}`,
      )
    }
  }
}

async function checkVerifyMessage(t: Test, adapter: ChainAdapter, fixtures: PluginConformanceFixtures) {
  const verify = adapter.identity.verifyMessage
  if (verify === undefined) return
  const [signer] = fixtures.addresses.valid
  const [stranger] = fixtures.addresses.invalid
  if (signer === undefined || stranger === undefined) return
  const answers = await Promise.all([
    verify.call(adapter.identity, signer, '0x00', '0x00'),
    verify.call(adapter.identity, signer, '0x1234', `0x${'11'.repeat(65)}`),
    verify.call(adapter.identity, stranger, '0x1234', '0x00'),
  ])
  t.same(answers, [false, false, false], 'verifyMessage answers false for bad signatures and signers')
}

function checkFinality(t: Test, adapter: ChainAdapter): void {
  const { finality } = adapter
  const { fastConfirmations: fast, slowConfirmations: slow } = finality
  t.ok(Number.isInteger(fast) && fast >= 1, `fastConfirmations ${fast} is an integer >= 1`)
  t.ok(Number.isInteger(slow) && slow >= fast, `slowConfirmations ${slow} is an integer >= fast`)
  t.equal(typeof finality.slowRequiresFinalized, 'boolean', 'slowRequiresFinalized is a boolean')
  if (finality.showsUnconfirmedDeposits !== undefined) {
    t.equal(typeof finality.showsUnconfirmedDeposits, 'boolean', 'showsUnconfirmedDeposits is a boolean')
  }
  if (finality.blockTimeSeconds !== undefined) {
    t.ok(finality.blockTimeSeconds > 0, `blockTimeSeconds ${finality.blockTimeSeconds} is positive`)
  }
  if (finality.confirmationsFor !== undefined) {
    const native = adapter.identity.nativeCurrencyId
    for (const amount of [1n, 10n ** 30n]) {
      const needed = finality.confirmationsFor(native, amount)
      t.ok(
        Number.isInteger(needed) && needed >= fast,
        `confirmationsFor(native, ${amount}) = ${needed} is an integer >= fastConfirmations`,
      )
    }
  }
}

function originCostOf(request: DepositStepsRequest): OriginCostRequest {
  return {
    requestId: request.requestId,
    depositor: request.depositor,
    currencyId: request.currencyId,
    amount: request.amount,
    usePermit: false,
    viaDepositAddress: false,
    ...(request.options ? { options: request.options } : {}),
  }
}

function fillCostOf(request: DepositStepsRequest): FillCostRequest {
  return {
    orderId: request.requestId,
    payer: request.depositor,
    recipient: request.depositor,
    currencyId: request.currencyId,
    amount: request.amount,
    calls: [],
    topupNativeAmount: 0n,
  }
}

function checkStep(
  t: Test,
  step: PreparedStep,
  index: number,
  chainId: number,
  validateItem: StepItemValidator,
): void {
  const label = `step ${index} (${step.id})`
  t.ok(STEP_IDS.has(step.id), `${label}: id is one of ${[...STEP_IDS].join(', ')}`)
  t.ok(step.kind === 'transaction' || step.kind === 'signature', `${label}: kind is transaction or signature`)
  t.ok(typeof step.action === 'string' && step.action !== '', `${label}: has an action`)
  t.ok(typeof step.description === 'string' && step.description !== '', `${label}: has a description`)
  t.ok(step.items.length >= 1, `${label}: has at least one item`)
  for (const [itemIndex, item] of step.items.entries()) {
    const itemLabel = `${label} item ${itemIndex}`
    t.same(validateItem(item.data), [], `${itemLabel}: data is a valid StepItemData`)
    const format = item.data.format
    t.equal(
      format === 'signature',
      step.kind === 'signature',
      `${itemLabel}: format ${String(format)} fits a ${step.kind} step`,
    )
    if ('chainId' in item.data) t.equal(item.data.chainId, chainId, `${itemLabel}: chainId is the chain's`)
  }
}

function checkSizes(t: Test, adapter: ChainAdapter, steps: readonly PreparedStep[]): void {
  const check = adapter.quoting?.checkTransactionSize
  if (check === undefined) return
  for (const [index, step] of steps.entries()) {
    if (step.kind !== 'transaction') continue
    const label = `step ${index} (${step.id}) size`
    const size: TransactionSizeCheck = check.call(adapter.quoting, step)
    t.ok(Number.isInteger(size.sizeBytes) && size.sizeBytes > 0, `${label}: ${size.sizeBytes} bytes`)
    t.ok(Number.isInteger(size.limitBytes) && size.limitBytes > 0, `${label}: limit ${size.limitBytes} bytes`)
    t.equal(size.fits, size.sizeBytes <= size.limitBytes, `${label}: fits agrees with size and limit`)
    t.ok(size.fits, `${label}: a step the plugin serves fits`)
    const [item, ...others] = step.items
    if (item === undefined || others.length > 0) continue
    // Items that declare their size (SVM: size, sizeLimit, headroom) must agree with the check.
    const { size: declared, sizeLimit, headroom }: Readonly<Record<string, unknown>> = item.data
    if (typeof declared === 'number') t.equal(declared, size.sizeBytes, `${label}: item size agrees`)
    if (typeof sizeLimit === 'number') t.equal(sizeLimit, size.limitBytes, `${label}: item sizeLimit agrees`)
    if (typeof headroom === 'number') {
      t.equal(headroom, size.limitBytes - size.sizeBytes, `${label}: item headroom agrees`)
    }
  }
}

async function checkQuoting(
  t: Test,
  chain: RegisteredChain,
  fixtures: PluginConformanceFixtures,
  validateItem: StepItemValidator,
): Promise<void> {
  const { adapter } = chain
  const quoting = adapter.quoting
  if (quoting === undefined) return
  if (fixtures.quoting === undefined) {
    t.fail('the adapter declares quoting: give fixtures.quoting so the suite can check it')
    return
  }
  const { depositRequest } = fixtures.quoting
  t.equal(typeof quoting.supportsDestinationCalls, 'boolean', 'supportsDestinationCalls is a boolean')
  t.equal(typeof quoting.supportsGasTopup, 'boolean', 'supportsGasTopup is a boolean')
  if (quoting.originRequestOptions !== undefined) {
    t.ok(
      quoting.originRequestOptions.every((name) => typeof name === 'string' && name !== ''),
      'originRequestOptions are names',
    )
  }
  const steps = await quoting.buildDepositSteps(depositRequest)
  t.ok(steps.length >= 1, `buildDepositSteps gives ${steps.length} step(s)`)
  for (const [index, step] of steps.entries()) checkStep(t, step, index, chain.id, validateItem)
  checkSizes(t, adapter, steps)
  if (quoting.originRequestOptions?.includes('explicitDeposit')) {
    // Declared: `explicitDeposit: false` is honoured with a direct form, as valid and priced as the default.
    const options = { ...depositRequest.options, explicitDeposit: false }
    const direct = await quoting.buildDepositSteps({ ...depositRequest, options })
    t.ok(direct.length >= 1, `explicitDeposit: false gives ${direct.length} step(s)`)
    for (const [index, step] of direct.entries()) checkStep(t, step, index, chain.id, validateItem)
    checkSizes(t, adapter, direct)
    const directCost = await quoting.estimateOriginCost({
      ...(fixtures.quoting.originCostRequest ?? originCostOf(depositRequest)),
      options,
    })
    checkCost(t, directCost, adapter.identity.nativeCurrencyId, 'estimateOriginCost (explicitDeposit: false)')
  }

  const native = adapter.identity.nativeCurrencyId
  const originCost = await quoting.estimateOriginCost(
    fixtures.quoting.originCostRequest ?? originCostOf(depositRequest),
  )
  checkCost(t, originCost, native, 'estimateOriginCost')
  const fillCost = await quoting.estimateFillCost(
    fixtures.quoting.fillCostRequest ?? fillCostOf(depositRequest),
  )
  checkCost(t, fillCost, native, 'estimateFillCost')
  t.equal(
    typeof (await quoting.supportsPermit(depositRequest.currencyId)),
    'boolean',
    'supportsPermit answers',
  )
  if (quoting.createDepositAddress !== undefined) {
    const address = await quoting.createDepositAddress(depositRequest.requestId)
    t.ok(adapter.identity.isValidAddress(address), `deposit address ${address} is a valid address`)
    t.equal(
      await quoting.createDepositAddress(depositRequest.requestId),
      address,
      'the deposit address of a request id is stable',
    )
  }
}

async function checkReading(
  t: Test,
  adapter: ChainAdapter,
  fixtures: PluginConformanceFixtures,
): Promise<void> {
  const reading = adapter.reading
  if (reading === undefined) return
  if (fixtures.reading === undefined) {
    t.fail('the adapter declares reading: give fixtures.reading so the suite can check it')
    return
  }
  const { identity } = adapter
  const trip = await fixtures.reading.makeDeposit(adapter)
  t.match(
    identity.encodeTransactionId(trip.transactionId),
    HEX_BYTES,
    'a real transaction id encodes to 0x-hex',
  )
  const read = await reading.readDeposits(trip.transactionId)
  t.equal(read.transactionId, trip.transactionId, 'readDeposits answers for the transaction asked')
  t.equal(read.state, trip.state ?? 'success', `the devnet deposit reads as ${trip.state ?? 'success'}`)
  t.same(read.facts, trip.facts, 'the devnet deposit reads back as the expected facts')
  t.equal(typeof read.final, 'boolean', 'final is a boolean')
  if (trip.final !== undefined) t.equal(read.final, trip.final, `final is ${trip.final}`)
  if (read.confirmations !== undefined) {
    t.ok(Number.isInteger(read.confirmations) && read.confirmations >= 0, 'confirmations is a count')
  }
  if (read.blockNumber !== undefined) t.equal(typeof read.blockNumber, 'bigint', 'blockNumber is a bigint')
  for (const [index, fact] of read.facts.entries()) {
    t.ok(identity.isValidAddress(fact.depositor), `fact ${index}: the depositor is an address`)
    t.equal(
      identity.normalizeCurrency(fact.currencyId),
      fact.currencyId,
      `fact ${index}: currency id is canonical`,
    )
    t.ok(fact.amount > 0n, `fact ${index}: amount is positive`)
  }

  const unknown = fixtures.reading.unknownTransactionId
  const missing = await reading.readDeposits(unknown)
  t.match(missing, { transactionId: unknown, state: 'not_found', facts: [] }, 'an unknown id is not_found')
  // The contract leaves open how a malformed id is refused (callers check it with
  // encodeTransactionId first); it must never read as a transaction with facts.
  let malformed: unknown
  const refusal = await rejected(async () => {
    malformed = await reading.readDeposits('not a transaction id')
  })
  t.ok(
    refusal !== undefined || (malformed as { state?: unknown } | undefined)?.state === 'not_found',
    'readDeposits of a malformed id rejects or answers not_found',
  )

  const owner = fixtures.reading.balanceOwner ?? fixtures.addresses.valid[0]
  if (owner !== undefined) {
    const balance = await reading.readBalance(owner, identity.nativeCurrencyId)
    t.ok(typeof balance === 'bigint' && balance >= 0n, `readBalance of ${owner} is a non-negative bigint`)
  }
}

async function checkFilling(
  t: Test,
  adapter: ChainAdapter,
  fixtures: PluginConformanceFixtures,
): Promise<void> {
  const filling = adapter.filling
  if (filling === undefined) return
  if (fixtures.filling === undefined) {
    t.fail('the adapter declares filling: give fixtures.filling so the suite can check it')
    return
  }
  const solver = filling.solverAddress(fixtures.filling.credentials)
  t.ok(adapter.identity.isValidAddress(solver), `solverAddress ${solver} is a valid address`)
  t.equal(adapter.identity.normalizeAddress(solver, 'solver'), solver, 'solverAddress is canonical')
  const nonce = await filling.nextNonce(solver)
  t.ok(typeof nonce === 'bigint' && nonce >= 0n, `nextNonce ${nonce} is a non-negative bigint`)
  const unknown = fixtures.reading?.unknownTransactionId
  if (unknown !== undefined) {
    t.match(
      await filling.outcome(unknown),
      { state: 'not_found' },
      'the outcome of an unknown id is not_found',
    )
  }
}

async function checkProbe(t: Test, adapter: ChainAdapter): Promise<void> {
  const { head } = await adapter.probe()
  if (head === undefined) t.pass('the node answers (this family reports no head)')
  else t.match(head, /^(0|[1-9][0-9]*)$/, `head ${head} is a decimal height`)
}

/**
 * Runs the plugin contract as one tap subtest of `t`, against an adapter the core registry makes
 * from `fixtures.chain` (so it runs against the plugin's devnet), checking only the capabilities
 * the adapter declares:
 *
 * - **definePlugin**: branded, lower-case `vmType` matching the chain's, a `coreApi` range that
 *   includes {@link CORE_API_VERSION}, a `configSchema` that compiles with core's Ajv and whose
 *   defaults apply; the registry loads it and refuses `invalidPluginOptions`.
 * - **identity** (always): the valid/invalid tables (normalizing is idempotent, `isValidAddress`
 *   agrees, codes by role: `recipient` → INVALID_RECIPIENT else INVALID_ADDRESS; `input`/`output`/
 *   other → INVALID_INPUT_CURRENCY/INVALID_OUTPUT_CURRENCY/UNSUPPORTED_CURRENCY; messages name the
 *   value), the native id normalizes to itself, `encodeAddress` is stable 0x-hex,
 *   `encodeTransactionId` refuses garbage with INVALID_REQUEST, `verifyMessage` answers false.
 * - **finality** (always): `slowConfirmations >= fastConfirmations >= 1`.
 * - **probe** (always): the readiness probe answers from the devnet, with a decimal head when the
 *   family reports one.
 * - **quoting**: deposit steps whose every item validates against the document's `StepItemData`,
 *   sizes that agree with `checkTransactionSize`, non-negative native costs; for a plugin listing
 *   `explicitDeposit` in `originRequestOptions`, the same of its `explicitDeposit: false` steps.
 * - **execution** (with quoting): the deposit steps served (by `fixtures.execution.served`'s intent
 *   service, else `buildDepositSteps`) are executed as a wallet does, transactions on the devnet
 *   and signatures through the execute API, and reading observes the deposit; with
 *   `explicitDeposit` declared, the built direct form (`false`) too.
 * - **reading**: `fixtures.reading.makeDeposit()` reads back as expected, an unknown id is
 *   `not_found`, balances are non-negative.
 * - **filling**: `solverAddress` is a valid canonical address.
 *
 * `fixtures.close` runs when the subtest ends, pass or fail.
 */
export async function runPluginConformance<Config>(
  t: Test,
  plugin: PontisPlugin<Config>,
  fixtures: PluginConformanceFixtures,
): Promise<void> {
  // The suite only reads members common to every plugin: its options type does not matter here.
  const anyPlugin = plugin as unknown as PontisPlugin<unknown>
  await t.test(`plugin conformance: ${String(plugin?.name)} (${String(plugin?.vmType)})`, async (t) => {
    if (fixtures.close !== undefined) t.teardown(async () => fixtures.close?.())
    let options: Record<string, unknown> | undefined
    await t.test('definePlugin: shape, core API range, config schema', async (t) => {
      checkShape(t, anyPlugin, fixtures)
      options = checkConfigSchema(t, anyPlugin, fixtures)
    })
    // Closing the registry closes the adapter, once every check is done.
    const registry = createRegistry(registryOptionsOf(fixtures))
    t.teardown(() => registry.close())
    let chain: RegisteredChain | undefined
    await t.test('registry: loads the plugin and creates the chain adapter', async (t) => {
      chain = await registerChain(t, registry, anyPlugin, fixtures, options)
    })
    if (chain === undefined) return
    const registered = chain
    const { adapter } = registered
    await t.test('identity: addresses, currency ids, encodings', async (t) => {
      checkIdentity(t, adapter, fixtures)
      await checkVerifyMessage(t, adapter, fixtures)
    })
    await t.test('finality: slow >= fast >= 1', async (t) => checkFinality(t, adapter))
    await t.test('probe: the node answers the readiness probe', async (t) => checkProbe(t, adapter))
    if (adapter.quoting !== undefined) {
      const validateItem = await loadStepItemValidator(fixtures.openApiDocumentPath)
      await t.test('quoting: deposit steps valid against StepItemData, sizes, costs', async (t) =>
        checkQuoting(t, registered, fixtures, validateItem),
      )
    }
    if (adapter.quoting !== undefined) {
      await t.test('execution: the served deposit steps run on the devnet and are read back', async (t) =>
        checkExecution(t, adapter, fixtures),
      )
    }
    if (adapter.reading !== undefined) {
      await t.test('reading: a devnet deposit round trip, not_found, balances', async (t) =>
        checkReading(t, adapter, fixtures),
      )
    }
    if (adapter.filling !== undefined) {
      await t.test('filling: the solver address', async (t) => checkFilling(t, adapter, fixtures))
    }
  })
}
