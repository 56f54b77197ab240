/**
 * The request's options against its route: options a route cannot honour are refused with a code,
 * never silently ignored; the ones it honours become the family options and destination calls.
 */
import {
  type DestinationAuthorization,
  type DestinationCall,
  ORIGIN_REQUEST_OPTION_DEFAULTS,
  ORIGIN_REQUEST_OPTIONS,
  type OriginRequestOption,
  type OriginRequestOptions,
  PontisError,
  type QuotingCapability,
} from '@pontis/core'
import type { QuoteRequest, Route } from './route.js'

/** How long a permit signature is valid when the request does not say, seconds. */
export const PERMIT_EXPIRY_DEFAULT = 600

function reject(
  code: 'UNSUPPORTED_ROUTE' | 'UNSUPPORTED_EXECUTION_TYPE' | 'INVALID_EXTRA_TXS',
  message: string,
): never {
  throw new PontisError(code, message)
}

/**
 * The value of an origin option in the request, by its path (`additionalData.userPublicKey`);
 * undefined when absent or at its documented default, which means the same.
 */
export function optionValue(request: QuoteRequest, option: OriginRequestOption): unknown {
  const value = option
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], request)
  return value === ORIGIN_REQUEST_OPTION_DEFAULTS[option] ? undefined : value
}

/** Why an origin that does not list `option` refuses it: the code and the sentence the message starts with. */
function originOptionRefusal(
  option: OriginRequestOption,
  origin: Route['origin'],
): { code: 'UNSUPPORTED_ROUTE' | 'UNSUPPORTED_EXECUTION_TYPE'; message: string } {
  const chain = `${origin.chain.record.displayName} (${origin.chain.id})`
  if (option === 'explicitDeposit') {
    return {
      code: 'UNSUPPORTED_EXECUTION_TYPE',
      message: `${origin.chain.record.vmType} origins such as ${chain} take no direct transfers: their deposit is the family's own form tagged with the request id. Remove explicitDeposit: false (or set it to true).`,
    }
  }
  return {
    code: 'UNSUPPORTED_ROUTE',
    message: `${option} does not apply to ${origin.chain.record.vmType} origins such as ${chain}; remove it.`,
  }
}

/** Refuses every option `route` cannot honour, in the order the API documents them. */
export function checkOptions(request: QuoteRequest, route: Route): void {
  checkFamilyOptions(request, route)
  checkDeploymentOptions(request)
  checkExecutionOptions(request, route)
  checkDestinationOptions(request, route)
}

/** The request members that filter swap sources on the origin (they mean the same on every family). */
const SWAP_SOURCE_FILTERS = [
  'includedSwapSources',
  'excludedSwapSources',
  'includedOriginSwapSources',
] as const

/** Family options the origin does not honour, swap filters where no source is, and destination swaps, which no fill makes. */
function checkFamilyOptions(request: QuoteRequest, route: Route): void {
  const { origin, destination } = route
  const honoured = new Set(origin.quoting.originRequestOptions ?? [])
  for (const option of Object.keys(ORIGIN_REQUEST_OPTIONS) as OriginRequestOption[]) {
    if (optionValue(request, option) !== undefined && !honoured.has(option)) {
      const refusal = originOptionRefusal(option, origin)
      reject(refusal.code, refusal.message)
    }
  }
  const filters = SWAP_SOURCE_FILTERS.filter((member) => request[member] !== undefined)
  if (filters.length > 0 && !origin.quoting.swapSources?.length) {
    reject(
      'UNSUPPORTED_ROUTE',
      `${filters.join(', ')} choose${filters.length === 1 ? 's' : ''} swap sources, and ${origin.chain.record.displayName} has none; remove ${filters.length === 1 ? 'it' : 'them'}.`,
    )
  }
  if (request.includedDestinationSwapSources !== undefined && !route.destinationSwap) {
    reject(
      'UNSUPPORTED_ROUTE',
      destination.quoting.fillsCanSwap
        ? `includedDestinationSwapSources chooses the sources of a destination swap, and this route has none: the solver pays ${destination.currency.entry.symbol} on ${destination.chain.record.displayName} itself; remove it, or ask for an output of another asset than the input.`
        : `includedDestinationSwapSources does not apply: fills on ${destination.chain.record.displayName} do not swap; remove it.`,
    )
  }
  if (route.destinationSwap && (request.txs?.length ?? 0) > 0) {
    reject(
      'UNSUPPORTED_ROUTE',
      `A destination swap's fill runs the swap as its only call, so txs cannot run with it; ask for ${destination.currency.entry.symbol} on ${destination.chain.record.displayName}, or drop txs.`,
    )
  }
}

/** Options for what this deployment does not run at all, whatever the route. */
function checkDeploymentOptions(request: QuoteRequest): void {
  if (request.useExternalLiquidity)
    reject(
      'UNSUPPORTED_ROUTE',
      'This deployment has no external (canonical) bridge liquidity; remove useExternalLiquidity.',
    )
  if (request.useFallbacks)
    reject('UNSUPPORTED_ROUTE', 'This deployment has no fallback routes; remove useFallbacks.')
  if (request.disableSwapProviderPreference)
    reject(
      'UNSUPPORTED_ROUTE',
      'This deployment prefers no swap provider over another, so there is no preference to disable; remove disableSwapProviderPreference (or set it to false).',
    )
  // Every refund leg is paid on the origin chain; `true` is what the service always does.
  if (request.refundOnOrigin === false)
    reject(
      'UNSUPPORTED_ROUTE',
      'This deployment refunds on the origin chain only; refundOnOrigin: false (refunds allowed on the destination) cannot be honoured. Remove it or set it to true.',
    )
  if (request.gasLimitForDepositSpecifiedTxs !== undefined) {
    throw new PontisError(
      'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS',
      'This deployment runs no transactions inside the deposit, so gasLimitForDepositSpecifiedTxs has nothing to limit; remove it.',
    )
  }
}

/** Options that only mean something together with another one (permits, deposit addresses, exact output). */
function checkExecutionOptions(request: QuoteRequest, { origin, destination }: Route): void {
  if (request.originGasOverhead !== undefined && !request.usePermit) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      'originGasOverhead prices a gasless (usePermit) deposit; remove it or set usePermit.',
    )
  }
  if (request.strict && !request.useDepositAddress) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      'strict ties a deposit address to one order; it needs useDepositAddress: true.',
    )
  }
  // A member at its documented default means what leaving it out means (generated clients fill them in).
  if (
    request.permitExpiry !== undefined &&
    request.permitExpiry !== PERMIT_EXPIRY_DEFAULT &&
    !request.usePermit
  ) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      'permitExpiry sets how long a permit signature is valid; it needs usePermit: true.',
    )
  }
  if (request.latePaymentSlippageTolerance !== undefined && request.ttl !== undefined) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      'ttl refunds a request not filled within its window, while latePaymentSlippageTolerance fills a deposit that arrives after it; pick one.',
    )
  }
  if (request.enableTrueExactOutput && request.tradeType !== 'EXACT_OUTPUT') {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      `enableTrueExactOutput decides where EXACT_OUTPUT surplus goes; this request is ${request.tradeType}.`,
    )
  }
  if (request.topupGas) {
    if (!destination.quoting.supportsGasTopup) {
      reject(
        'UNSUPPORTED_ROUTE',
        `Gas top-ups are not available on ${destination.chain.record.displayName} (${destination.chain.record.vmType}).`,
      )
    }
    if (destination.currency.isNative) {
      reject(
        'UNSUPPORTED_ROUTE',
        `topupGas adds ${destination.currency.entry.symbol} gas to a non-native output; the output already is ${destination.currency.entry.symbol}.`,
      )
    }
  }
  if (request.useDepositAddress) {
    if (!origin.quoting.createDepositAddress) {
      reject(
        'UNSUPPORTED_EXECUTION_TYPE',
        `Deposit addresses are not available on ${origin.chain.record.displayName}.`,
      )
    }
    if (!origin.currency.isNative) {
      reject(
        'UNSUPPORTED_EXECUTION_TYPE',
        `Deposit addresses take the native currency only; ${origin.currency.entry.symbol} is a token.`,
      )
    }
    if (request.usePermit)
      reject('UNSUPPORTED_EXECUTION_TYPE', 'useDepositAddress and usePermit exclude each other; pick one.')
  }
  // A permit deposit is a signature the service submits, never a transfer from the wallet.
  if (request.usePermit && request.explicitDeposit === false) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      'explicitDeposit: false asks for a direct transfer from the wallet, but usePermit deposits with a signature the service submits; pick one.',
    )
  }
}

/** `txs`, `authorizationList` and `txsGasLimit`: calls and delegations the fill carries on the destination. */
function checkDestinationOptions(request: QuoteRequest, { destination }: Route): void {
  const chain = `${destination.chain.record.displayName} (${destination.chain.record.vmType})`
  if ((request.txs?.length ?? 0) > 0 && !destination.quoting.supportsDestinationCalls) {
    throw new PontisError('EXTRA_TXS_NOT_SUPPORTED', `${chain} cannot run txs calls.`)
  }
  if (
    (request.authorizationList?.length ?? 0) > 0 &&
    !destination.quoting.supportsDestinationAuthorizations
  ) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      `${chain} fills carry no account-code delegations, so authorizationList could not be executed there; remove it.`,
    )
  }
  if (request.txsGasLimit !== undefined && (request.txs?.length ?? 0) === 0) {
    reject(
      'INVALID_EXTRA_TXS',
      'txsGasLimit limits the txs calls, but the request has none; remove it or add txs.',
    )
  }
}

/** Refuses `usePermit` for an input currency that takes no signed transfer authorizations. */
export async function checkPermit(request: QuoteRequest, { origin }: Route): Promise<void> {
  if (request.usePermit === true && !(await origin.quoting.supportsPermit(origin.currency.address))) {
    reject(
      'UNSUPPORTED_EXECUTION_TYPE',
      `${origin.currency.entry.symbol} on ${origin.chain.record.displayName} does not accept signed transfer authorizations; remove usePermit.`,
    )
  }
}

/** The request's `authorizationList` as the fill carries it; empty when none. */
export function destinationAuthorizations(request: QuoteRequest): DestinationAuthorization[] {
  return (request.authorizationList ?? []).map(({ chainId, address, nonce, yParity, r, s }) => ({
    chainId,
    address,
    nonce,
    yParity,
    r,
    s,
  }))
}

/** The request's `txs` as calls on the destination, addresses in its rules. */
export function destinationCalls(request: QuoteRequest, { destination }: Route): DestinationCall[] {
  const { chain, currency } = destination
  return (request.txs ?? []).map((tx, index) => {
    if (!chain.adapter.identity.isValidAddress(tx.to)) {
      reject(
        'INVALID_EXTRA_TXS',
        `txs[${index}].to ${tx.to} is not an address on ${chain.record.displayName}.`,
      )
    }
    const value = BigInt(tx.value ?? '0')
    if (value > 0n && !currency.isNative) {
      reject(
        'INVALID_EXTRA_TXS',
        `txs[${index}] sends native value, but the output currency ${currency.entry.symbol} is a token.`,
      )
    }
    return { to: chain.adapter.identity.normalizeAddress(tx.to, 'contract'), value, data: tx.data ?? '0x' }
  })
}

/** The family options the request set; {@link checkOptions} already refused those the origin does not honour. */
export function familyOptions(request: QuoteRequest, quoting: QuotingCapability): OriginRequestOptions {
  const honoured = new Set(quoting.originRequestOptions ?? [])
  const options: Record<string, unknown> = {}
  for (const [option, key] of Object.entries(ORIGIN_REQUEST_OPTIONS)) {
    const value = optionValue(request, option as OriginRequestOption)
    if (value !== undefined && honoured.has(option)) options[key] = value
  }
  return options as OriginRequestOptions
}
