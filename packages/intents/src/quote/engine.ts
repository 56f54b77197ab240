import {
  type ChainAdapter,
  type DestinationCall,
  formatUnits,
  type IntentsApi,
  type Logger,
  ORDER_VERSION,
  ORIGIN_REQUEST_OPTIONS,
  type OriginRequestOption,
  type OriginRequestOptions,
  type OriginSwapQuote,
  type PermitTerms,
  PontisError,
  type PreparedStep,
  parseUnits,
  protocolChainIdOf,
  type QuotingCapability,
  type RegisteredChain,
  type Registry,
} from '@pontis/core'
import type { Hex } from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { DepositTagTakenError } from '../store/index.js'
import { type ChainCurrency, CurrencyCatalog } from './currencies.js'
import {
  type AmountBreakdown,
  breakdownForInput,
  breakdownForOutput,
  type Conversion,
  DEFAULT_SPONSORED_COMPONENTS,
  FEE_COMPONENTS,
  type FeeComponent,
  type FeeTerms,
  parseBps,
  withSlippage,
} from './fees.js'
import { type InventoryLookup, inventoryLookup } from './inventory.js'
import { orderId, randomSalt, signOrder } from './order.js'
import {
  convert,
  formatUsd,
  fromUsd,
  type PricedCurrency,
  type PriceSource,
  USD_SCALE,
  usdValue,
} from './prices.js'
import { type SolverSettings, solverCredentialsFor } from './settings.js'
import { createStepCheck, type StepCheck } from './step-check.js'

export type QuoteRequest = IntentsApi.QuoteRequest

/** Everything later stages (indexer, solver, webhooks) need about a quoted request. */
export interface QuotedRequest {
  readonly id: Hex
  readonly originChainId: number
  readonly destinationChainId: number
  readonly user: string
  readonly recipient: string
  readonly refundTo: string
  readonly originCurrency: string
  readonly destinationCurrency: string
  readonly tradeType: QuoteRequest['tradeType']
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly minimumAmountOut: bigint
  readonly depositAddress: string | null
  readonly depositAddressType: 'open' | 'strict' | null
  /** The deposit's tag when the origin family tags deposits by sender and nonce (Hyperliquid core). */
  readonly depositTag?: Hex
  readonly referrer: string | null
  readonly apiKeyId: string | null
  readonly createdAt: number
  readonly expiresAt: number
  /** JSON-safe record of the request, order and amounts; opaque to the store. */
  readonly quote: StoredQuote
}

export interface StoredQuote {
  readonly request: QuoteRequest
  readonly order: IntentsApi.Order
  /** Present when the quote returned protocol data; the solver signs the order id again when it needs to. */
  readonly orderSignature?: Hex
  readonly fees: IntentsApi.Fees
  readonly calls: ReadonlyArray<{ to: string; value: string; data: string }>
  readonly topupNativeAmount: string
  readonly slippageBps: number
  /** The authorizations the quote's signature items issued, for the execute API. */
  readonly permits?: readonly StoredPermit[]
}

/** {@link PermitTerms} as JSON: what the execute API redeems for a `usePermit` request. */
export interface StoredPermit {
  readonly kind: string
  readonly validAfter: string
  readonly validBefore: string
}

function storedPermit(terms: PermitTerms): StoredPermit {
  return {
    kind: terms.kind,
    validAfter: terms.validAfter.toString(),
    validBefore: terms.validBefore.toString(),
  }
}

export interface QuoteEngineOptions {
  readonly registry: Registry
  readonly prices: PriceSource
  readonly settings: SolverSettings
  readonly logger: Logger
  /** Persists a quoted request (status `waiting`); not called for `/price`. */
  readonly saveRequest: (request: QuotedRequest) => Promise<void>
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number
}

export interface QuoteContext {
  /** Build steps and store the request (`/quote`, `/quote/v2`) or only price it (`/price`). */
  readonly withSteps: boolean
  readonly apiKeyId?: string
}

const PLACEHOLDER_ID: Hex = `0x${'00'.repeat(32)}`
/** Nonces tried for a memo-less deposit before a quote gives up (each taken one is another instance's). */
const DEPOSIT_TAG_ATTEMPTS = 3
const TOPUP_DEFAULT_USD_MICRO = 2_000_000n
const PERMIT_EXPIRY_DEFAULT = 600
const STATUS_PATH = '/intents/status'
const EXECUTE_PATH = '/execute/permits'

interface Side {
  readonly chain: RegisteredChain
  readonly quoting: QuotingCapability
  readonly catalog: CurrencyCatalog
  readonly currency: ChainCurrency
  readonly priced: PricedCurrency
  readonly nativePriced: PricedCurrency
}

function quotingOf(chain: RegisteredChain, role: 'origin' | 'destination'): QuotingCapability {
  const quoting = (chain.adapter as ChainAdapter).quoting
  if (!quoting) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${chain.record.displayName} (${chain.id}) cannot be used as ${role} yet: its ${chain.record.vmType} plugin has no quoting capability.`,
      { chainId: chain.id },
    )
  }
  return quoting
}

function reject(
  code: 'UNSUPPORTED_ROUTE' | 'UNSUPPORTED_EXECUTION_TYPE' | 'INVALID_EXTRA_TXS',
  message: string,
): never {
  throw new PontisError(code, message)
}

/** One destination call in the order's encoding, which is the destination family's. */
function encodeCall(quoting: QuotingCapability, chain: RegisteredChain, call: DestinationCall): Hex {
  if (!quoting.encodeDestinationCall) {
    throw new PontisError(
      'EXTRA_TXS_NOT_SUPPORTED',
      `${chain.record.displayName} (${chain.record.vmType}) cannot run txs calls: its plugin does not encode them.`,
    )
  }
  return quoting.encodeDestinationCall(call)
}

/** The value of an origin option in the request, by its path (`additionalData.userPublicKey`). */
function optionValue(request: QuoteRequest, option: OriginRequestOption): unknown {
  return option
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], request)
}

/**
 * Turns a validated quote request into a quote: checks the route through the chain plugins,
 * prices costs from the chains and the price source, computes fees exactly (see fees.ts), builds
 * the origin steps and the protocol order, and stores the request as `waiting`.
 */
export class QuoteEngine {
  readonly #options: QuoteEngineOptions
  readonly #catalogs = new Map<number, CurrencyCatalog>()
  readonly #solver: PrivateKeyAccount
  readonly #solverAddresses = new Map<number, string>()
  readonly #now: () => number
  readonly #inventory: InventoryLookup
  readonly #checkSteps: StepCheck

  constructor(options: QuoteEngineOptions) {
    this.#options = options
    this.#inventory = inventoryLookup(options.registry, options.settings.inventory)
    this.#checkSteps = createStepCheck(options.registry)
    this.#now = options.now ?? Date.now
    this.#solver = privateKeyToAccount(options.settings.solver.privateKey)
    for (const chain of options.registry.chains()) this.#catalogs.set(chain.id, new CurrencyCatalog(chain))
  }

  get solverAddress(): Hex {
    return this.#solver.address
  }

  async quote(request: QuoteRequest, context: QuoteContext): Promise<IntentsApi.QuoteResponse> {
    const { registry, settings } = this.#options
    const originChain = this.#usableChain(request.originChainId, 'origin')
    const destinationChain = this.#usableChain(request.destinationChainId, 'destination')
    const originQuoting = quotingOf(originChain, 'origin')
    const destinationQuoting = quotingOf(destinationChain, 'destination')
    const sameChain = originChain.id === destinationChain.id

    // Addresses, in each chain's own rules.
    const originIdentity = originChain.adapter.identity
    const destinationIdentity = destinationChain.adapter.identity
    const user = originIdentity.normalizeAddress(request.user, 'user')
    let recipient: string
    if (request.recipient !== undefined)
      recipient = destinationIdentity.normalizeAddress(request.recipient, 'recipient')
    else if (destinationIdentity.isValidAddress(request.user))
      recipient = destinationIdentity.normalizeAddress(request.user, 'recipient')
    else {
      throw new PontisError(
        'USER_RECIPIENT_MISMATCH',
        `user ${request.user} is not an address on ${destinationChain.record.displayName}; set recipient to a ${destinationChain.record.vmType} address.`,
      )
    }
    const refundTo =
      request.refundTo !== undefined ? originIdentity.normalizeAddress(request.refundTo, 'refundTo') : user
    if (request.recoveryAddress !== undefined)
      originIdentity.normalizeAddress(request.recoveryAddress, 'recoveryAddress')
    const appFeeRecipients = (request.appFees ?? []).map((fee) =>
      originIdentity.normalizeAddress(fee.recipient, 'appFeeRecipient'),
    )

    // Currencies.
    const originCatalog = this.#catalogs.get(originChain.id) as CurrencyCatalog
    const destinationCatalog = this.#catalogs.get(destinationChain.id) as CurrencyCatalog
    const requestedIn = originIdentity.normalizeCurrency(request.originCurrency, 'input')
    const outCurrency = destinationCatalog.get(
      destinationIdentity.normalizeCurrency(request.destinationCurrency, 'output'),
      destinationChain,
      'output',
    )
    // A token the depository does not take is swapped into one it does inside the deposit, on
    // families that can (SVM through its route source); elsewhere it is unsupported.
    const quoteOriginSwap = originQuoting.quoteOriginSwap?.bind(originQuoting)
    const swap =
      !originCatalog.has(requestedIn) && quoteOriginSwap ? { from: requestedIn, quoteOriginSwap } : undefined
    const swapFrom = swap?.from
    const inCurrency = swapFrom
      ? originCatalog.settlementFor(outCurrency.entry.id)
      : originCatalog.get(requestedIn, originChain, 'input')
    const sameAsset = inCurrency.entry.id === outCurrency.entry.id
    if (sameChain && !request.forceSolverExecution) {
      if (inCurrency.address === outCurrency.address) {
        reject(
          'UNSUPPORTED_ROUTE',
          'Origin and destination are the same currency on the same chain: there is nothing to bridge or swap.',
        )
      }
      throw new PontisError(
        'NO_SWAP_ROUTES_FOUND',
        `${originChain.record.displayName} has no swap router for a self-executed ${inCurrency.entry.symbol} to ${outCurrency.entry.symbol} swap; set forceSolverExecution to have the solver fill it.`,
      )
    }

    this.#checkOptions(
      request,
      originChain,
      destinationChain,
      originQuoting,
      destinationQuoting,
      inCurrency,
      outCurrency,
    )
    const usePermit = request.usePermit === true
    if (usePermit && !(await originQuoting.supportsPermit(inCurrency.address))) {
      reject(
        'UNSUPPORTED_EXECUTION_TYPE',
        `${inCurrency.entry.symbol} on ${originChain.record.displayName} does not accept signed transfer authorizations; remove usePermit.`,
      )
    }
    const calls = this.#calls(request, destinationChain, outCurrency)
    const familyOptions = this.#familyOptions(request, originQuoting)
    const solverOnDestination = this.#solverOn(destinationChain)

    // Prices.
    const prices = this.#options.prices
    const [inPrice, outPrice, originNativePrice, destinationNativePrice] = await Promise.all([
      prices.usdPrice(inCurrency.entry),
      prices.usdPrice(outCurrency.entry),
      prices.usdPrice(originCatalog.native.entry),
      prices.usdPrice(destinationCatalog.native.entry),
    ])
    const origin: Side = {
      chain: originChain,
      quoting: originQuoting,
      catalog: originCatalog,
      currency: inCurrency,
      priced: { decimals: inCurrency.entry.decimals, usdPrice: inPrice },
      nativePriced: { decimals: originCatalog.native.entry.decimals, usdPrice: originNativePrice },
    }
    const destination: Side = {
      chain: destinationChain,
      quoting: destinationQuoting,
      catalog: destinationCatalog,
      currency: outCurrency,
      priced: { decimals: outCurrency.entry.decimals, usdPrice: outPrice },
      nativePriced: { decimals: destinationCatalog.native.entry.decimals, usdPrice: destinationNativePrice },
    }

    const nowMs = this.#now()
    const ttlSeconds = request.ttl ?? settings.quote.ttlSeconds
    const expiresAt = nowMs + ttlSeconds * 1000

    // Costs from the chains (in parallel; each plugin caches its reads).
    const topupNativeAmount = request.topupGas
      ? fromUsd(
          BigInt(request.topupGasAmount ?? TOPUP_DEFAULT_USD_MICRO.toString()) * 10n ** 12n,
          destination.nativePriced,
          'floor',
        )
      : 0n
    const slippageBps = this.#slippageBps(request, sameAsset)
    let amount = BigInt(request.amount)
    let originSwap: OriginSwapQuote | undefined
    if (swap && request.tradeType === 'EXACT_INPUT') {
      originSwap = await swap.quoteOriginSwap({
        user,
        fromCurrency: swap.from,
        toCurrency: inCurrency.address,
        tradeType: 'EXACT_INPUT',
        amount,
        slippageBps,
        options: familyOptions,
      })
      // The deposit pays what the route guarantees; that is the input the rest is priced on.
      amount = originSwap.minimumAmountOut
    }
    const roughAmount = amount
    const [originCost, fillCost, userBalance, solverBalance] = await Promise.all([
      originQuoting.estimateOriginCost({
        requestId: PLACEHOLDER_ID,
        depositor: user,
        currencyId: inCurrency.address,
        amount: roughAmount,
        usePermit,
        viaDepositAddress: request.useDepositAddress === true,
        options: familyOptions,
        ...(originSwap ? { originSwap } : {}),
      }),
      destinationQuoting.estimateFillCost({
        orderId: PLACEHOLDER_ID,
        payer: solverOnDestination,
        recipient,
        currencyId: outCurrency.address,
        amount: roughAmount,
        calls,
        ...(request.txsGasLimit !== undefined ? { callsGasLimit: BigInt(request.txsGasLimit) } : {}),
        topupNativeAmount,
      }),
      originChain.adapter.reading?.readBalance(user, swapFrom ?? inCurrency.address),
      destinationChain.adapter.reading?.readBalance(solverOnDestination, outCurrency.address),
    ])
    const gasOverhead =
      usePermit && request.originGasOverhead
        ? BigInt(request.originGasOverhead) * (originCost.unitPrice ?? 0n)
        : 0n
    const solverPaidOrigin = usePermit ? originCost.amount + gasOverhead : 0n

    // Fee terms in the input currency.
    const fillRent = fillCost.rent ?? 0n
    const executionCost =
      convert(
        fillCost.amount - fillRent + topupNativeAmount,
        destination.nativePriced,
        origin.priced,
        'ceil',
      ) + convert(solverPaidOrigin, origin.nativePriced, origin.priced, 'ceil')
    const target = this.#inventory(destinationChain.id, outCurrency.address)
    const rebalances =
      target !== undefined && solverBalance !== undefined && solverBalance > BigInt(target.targetAmount)
    const sponsoredComponents = this.#sponsoredComponents(request)
    const terms: FeeTerms = {
      executionCost,
      rentCost: fillRent > 0n ? convert(fillRent, destination.nativePriced, origin.priced, 'ceil') : 0n,
      serviceBps: BigInt(settings.fees.serviceBps),
      minimumServiceFee: fromUsd(parseUnits(settings.fees.minimumServiceFeeUsd, 18), origin.priced, 'ceil'),
      rebalanceRewardBps: rebalances ? BigInt(settings.fees.rebalanceRewardBps) : 0n,
      appFees: (request.appFees ?? []).map((fee) => parseBps(fee.fee)),
      swapSpreadBps: sameAsset || request.fixedRate !== undefined ? 0n : BigInt(settings.fees.swapSpreadBps),
      ...(sponsoredComponents
        ? {
            sponsorship: {
              components: sponsoredComponents,
              ...(request.maxSubsidizationAmount !== undefined
                ? {
                    cap: fromUsd(BigInt(request.maxSubsidizationAmount) * 10n ** 12n, origin.priced, 'floor'),
                  }
                : {}),
            },
          }
        : {}),
    }
    const conversion = this.#conversion(request, origin, destination)
    const breakdown =
      request.tradeType === 'EXACT_INPUT'
        ? breakdownForInput(amount, terms, conversion)
        : breakdownForOutput(amount, terms, conversion)
    if (
      request.useDepositAddress &&
      originQuoting.depositAddressNeedsFundedUser &&
      (userBalance ?? 0n) <= breakdown.amountIn
    ) {
      throw new PontisError(
        'INSUFFICIENT_FUNDS',
        `user ${user} holds ${formatUnits(userBalance ?? 0n, inCurrency.entry.decimals)} ${inCurrency.entry.symbol} on ${originChain.record.displayName}; a deposit-address quote needs a user whose balance exceeds the ${formatUnits(breakdown.amountIn, inCurrency.entry.decimals)} ${inCurrency.entry.symbol} quoted (any funded address will do for an indicative quote).`,
        { balance: (userBalance ?? 0n).toString(), required: breakdown.amountIn.toString() },
      )
    }
    const minimumUsd = parseUnits(settings.quote.minimumAmountUsd, 18)
    if (usdValue(breakdown.amountIn, origin.priced) < minimumUsd) {
      throw new PontisError(
        'AMOUNT_TOO_LOW',
        `The input is worth less than the $${settings.quote.minimumAmountUsd} minimum.`,
      )
    }

    if (swap && request.tradeType === 'EXACT_OUTPUT') {
      originSwap = await swap.quoteOriginSwap({
        user,
        fromCurrency: swap.from,
        toCurrency: inCurrency.address,
        tradeType: 'EXACT_OUTPUT',
        amount: breakdown.amountIn,
        slippageBps,
        options: familyOptions,
      })
    }

    // What the recipient gets, and the least they accept.
    const exactOutput = request.tradeType === 'EXACT_OUTPUT'
    const paidOut = exactOutput && request.enableTrueExactOutput ? amount : breakdown.amountOut
    const minimumAmountOut = exactOutput ? amount : withSlippage(paidOut, BigInt(slippageBps))
    const callValue = calls.reduce((sum, call) => sum + call.value, 0n)
    if (callValue > minimumAmountOut) {
      reject(
        'INVALID_EXTRA_TXS',
        `The txs send ${callValue} in value, more than the ${minimumAmountOut} the fill guarantees.`,
      )
    }
    const neededLiquidity = paidOut + (outCurrency.isNative ? topupNativeAmount : 0n)
    if (solverBalance !== undefined && solverBalance < neededLiquidity) {
      throw new PontisError(
        'INSUFFICIENT_LIQUIDITY',
        `The solver holds ${formatUnits(solverBalance, outCurrency.entry.decimals)} ${outCurrency.entry.symbol} on ${destinationChain.record.displayName}, less than the ${formatUnits(neededLiquidity, outCurrency.entry.decimals)} this fill needs.`,
        { available: solverBalance.toString(), required: neededLiquidity.toString() },
      )
    }

    // The order: its struct hash is the request id that tags the deposit and the fill.
    const deadline = Math.floor(expiresAt / 1000)
    const protocolChainId = protocolChainIdOf
    const order: IntentsApi.Order = {
      version: ORDER_VERSION,
      solverChainId: registry.hub()?.name ?? protocolChainId(originChain),
      solver: this.#solver.address,
      salt: randomSalt(),
      inputs: [
        {
          payment: {
            chainId: protocolChainId(originChain),
            currency: inCurrency.address,
            amount: breakdown.amountIn.toString(),
            weight: '1',
          },
          refunds: [
            {
              chainId: protocolChainId(originChain),
              recipient: refundTo,
              currency: inCurrency.address,
              minimumAmount: '0',
              deadline: deadline + 3600,
              extraData: '0x',
            },
          ],
        },
      ],
      output: {
        chainId: protocolChainId(destinationChain),
        payments: [
          {
            recipient,
            currency: outCurrency.address,
            minimumAmount: minimumAmountOut.toString(),
            expectedAmount: paidOut.toString(),
          },
        ],
        calls: calls.map((call) => encodeCall(destinationQuoting, destinationChain, call)),
        deadline,
        extraData: '0x',
      },
      fees: breakdown.appFees.map((fee, index) => ({
        recipientChainId: protocolChainId(originChain),
        recipient: appFeeRecipients[index] as string,
        currencyChainId: protocolChainId(originChain),
        currency: inCurrency.address,
        amount: fee.toString(),
      })),
    }
    // The id (a struct hash) and the signature are the costly part of a quote: a price without
    // protocol data needs neither, and only protocol data returns the signature.
    const id = context.withSteps || request.includeProtocolData ? orderId(registry, order) : undefined
    const orderSignature = id && request.includeProtocolData ? await signOrder(this.#solver, id) : undefined
    const depositAddress =
      id && request.useDepositAddress
        ? await (originQuoting.createDepositAddress as (requestId: string) => Promise<string>)(id)
        : undefined

    const fees = this.#fees(breakdown, origin, originCost.amount, usePermit)
    const response: IntentsApi.QuoteResponse = {
      steps: [],
      fees,
      details: this.#details({
        request,
        breakdown,
        origin,
        destination,
        user,
        recipient,
        paidOut,
        minimumAmountOut,
        slippageBps,
        sameAsset,
        userBalance,
        calls,
        originSwap,
      }),
    }
    if (sponsoredComponents)
      response.feeSponsorship = this.#sponsorship(breakdown, origin, sponsoredComponents, request)
    if (id && orderSignature) {
      response.protocol = {
        v2: {
          orderId: id,
          orderData: order,
          orderSignature,
          paymentDetails: {
            chainId: protocolChainIdOf(originChain),
            depository: depositAddress ?? originChain.record.protocol?.v2?.depository ?? '',
            currency: inCurrency.address,
            amount: breakdown.amountIn.toString(),
          },
        },
      }
    }
    // Families with a size limit compile the deposit for every quote, prices included: an oversized
    // route must be refused before anyone relies on it.
    const sizeLimited = originQuoting.checkTransactionSize !== undefined
    if ((!context.withSteps || !id) && !sizeLimited) return response

    // Memo-less families: the deposit is known by its sender and the nonce fixed here. Another
    // instance may hand out the same nonce in the same millisecond; the store then refuses the tag
    // (unique per origin chain) and the steps are built again with the adapter's next nonce.
    for (let attempt = 1; ; attempt++) {
      try {
        const nonceTag = id ? originQuoting.depositNonceTag?.(user, nowMs) : undefined
        const prepared = await originQuoting.buildDepositSteps({
          requestId: id ?? PLACEHOLDER_ID,
          depositor: user,
          currencyId: inCurrency.address,
          amount: breakdown.amountIn,
          usePermit,
          permitExpiry: request.permitExpiry ?? PERMIT_EXPIRY_DEFAULT,
          executeEndpoint: EXECUTE_PATH,
          nowSeconds: Math.floor(nowMs / 1000),
          options: familyOptions,
          ...(originSwap ? { originSwap } : {}),
          ...(depositAddress ? { depositAddress } : {}),
          ...(nonceTag ? { depositNonce: nonceTag.nonce } : {}),
        })
        this.#checkSize(originQuoting, prepared, originSwap)
        this.#checkSteps(originChain, prepared)
        if (!context.withSteps || !id) return response
        response.steps = prepared.map((step) => ({
          id: step.id,
          action: step.action,
          description: step.description,
          kind: step.kind,
          requestId: id,
          depositAddress: depositAddress ?? '',
          items: step.items.map((item) => ({
            status: 'incomplete' as const,
            data: item.data as IntentsApi.StepItemData,
            // Every item but an approval ends in the request's status: a client polls it until the
            // fill (the Relay SDK keeps polling a signature item only when it has a check).
            ...(step.id !== 'approve'
              ? {
                  check: {
                    endpoint: `${STATUS_PATH}?requestId=${id}`,
                    method: 'GET' as const,
                    finalStatuses: destinationChain.adapter.finality.clientsStopAtSubmitted
                      ? (['submitted', 'success'] as const)
                      : (['success'] as const),
                  },
                }
              : {}),
          })),
        }))

        await this.#options.saveRequest({
          id,
          originChainId: originChain.id,
          destinationChainId: destinationChain.id,
          user,
          recipient,
          refundTo,
          originCurrency: inCurrency.address,
          destinationCurrency: outCurrency.address,
          tradeType: request.tradeType,
          amountIn: breakdown.amountIn,
          amountOut: paidOut,
          minimumAmountOut,
          depositAddress: depositAddress ?? null,
          depositAddressType: depositAddress ? (request.strict ? 'strict' : 'open') : null,
          ...(nonceTag ? { depositTag: nonceTag.tag } : {}),
          referrer: request.referrer ?? null,
          apiKeyId: context.apiKeyId ?? null,
          createdAt: nowMs,
          expiresAt,
          quote: {
            request,
            order,
            ...(orderSignature ? { orderSignature } : {}),
            fees,
            calls: calls.map((call) => ({ to: call.to, value: call.value.toString(), data: call.data })),
            topupNativeAmount: topupNativeAmount.toString(),
            slippageBps,
            permits: prepared.flatMap((step) =>
              step.items.flatMap((item) => (item.permit ? [storedPermit(item.permit)] : [])),
            ),
          },
        })
        return response
      } catch (error) {
        if (!(error instanceof DepositTagTakenError) || attempt >= DEPOSIT_TAG_ATTEMPTS) throw error
      }
    }
  }

  /**
   * Seconds until the fill: the origin's confirmations (amount-dependent where the family says so)
   * at its block time, then the fill itself.
   */
  #timeEstimate(origin: Side, amountIn: bigint): number {
    const finality = origin.chain.adapter.finality
    const fill = this.#options.settings.quote.fillTimeEstimateSeconds
    const confirmations =
      finality.confirmationsFor?.(origin.currency.address, amountIn) ?? finality.fastConfirmations
    return fill + (finality.blockTimeSeconds ?? fill) * confirmations
  }

  /**
   * The solver's account on `chain` (its family's key), for fill costs and liquidity. Only the
   * destination's plugin can name it: a chain without filling cannot be paid on.
   */
  #solverOn(chain: RegisteredChain): string {
    let address = this.#solverAddresses.get(chain.id)
    if (address === undefined) {
      const filling = chain.adapter.filling
      if (!filling) {
        throw new PontisError(
          'UNSUPPORTED_CHAIN',
          `${chain.record.displayName} (${chain.id}) cannot be used as destination: its ${chain.record.vmType} plugin has no filling capability, so no solver can pay there.`,
          { chainId: chain.id },
        )
      }
      address = filling.solverAddress(solverCredentialsFor(this.#options.settings, chain.record.vmType))
      this.#solverAddresses.set(chain.id, address)
    }
    return address
  }

  /** The family options the request set; `#checkOptions` already refused those the origin does not honour. */
  #familyOptions(request: QuoteRequest, quoting: QuotingCapability): OriginRequestOptions {
    const honoured = new Set(quoting.originRequestOptions ?? [])
    const options: Record<string, unknown> = {}
    for (const [option, key] of Object.entries(ORIGIN_REQUEST_OPTIONS)) {
      const value = optionValue(request, option as OriginRequestOption)
      if (value !== undefined && honoured.has(option)) options[key] = value
    }
    return options as OriginRequestOptions
  }

  /** Refuses a deposit transaction over its family's wire-size limit, with the family's error and remedy. */
  #checkSize(
    quoting: QuotingCapability,
    steps: readonly PreparedStep[],
    originSwap: OriginSwapQuote | undefined,
  ): void {
    const check = quoting.checkTransactionSize
    if (!check) return
    for (const step of steps) {
      const { sizeBytes, limitBytes, fits } = check(step)
      if (fits) continue
      const overBy = sizeBytes - limitBytes
      const oversized = quoting.oversizedTransaction
      throw new PontisError(
        oversized?.errorCode ?? 'UNSUPPORTED_ROUTE',
        `transaction is ${sizeBytes} bytes, ${overBy} over the ${limitBytes} byte limit; ${oversized?.remedy(originSwap) ?? 'change the amount'}.`,
        { size: sizeBytes, limit: limitBytes, overBy },
      )
    }
  }

  #usableChain(chainId: number, role: 'origin' | 'destination'): RegisteredChain {
    const chain = this.#options.registry.chain(chainId)
    if (chain.record.disabled) {
      throw new PontisError(
        'CHAIN_DISABLED',
        `${chain.record.displayName} (${chain.id}) is disabled right now; try again later.`,
        {
          chainId,
        },
      )
    }
    if (role === 'origin' && chain.record.depositEnabled === false) {
      throw new PontisError(
        'CHAIN_DISABLED',
        `Deposits on ${chain.record.displayName} (${chain.id}) are disabled right now.`,
        {
          chainId,
        },
      )
    }
    return chain
  }

  /** Options a route cannot honour are refused with a code, never silently ignored. */
  #checkOptions(
    request: QuoteRequest,
    originChain: RegisteredChain,
    destinationChain: RegisteredChain,
    originQuoting: QuotingCapability,
    destinationQuoting: QuotingCapability,
    inCurrency: ChainCurrency,
    outCurrency: ChainCurrency,
  ): void {
    const honoured = new Set(originQuoting.originRequestOptions ?? [])
    for (const option of Object.keys(ORIGIN_REQUEST_OPTIONS) as OriginRequestOption[]) {
      if (optionValue(request, option) !== undefined && !honoured.has(option)) {
        reject(
          'UNSUPPORTED_ROUTE',
          `${option} does not apply to ${originChain.record.vmType} origins such as ${originChain.record.displayName} (${originChain.id}); remove it.`,
        )
      }
    }
    if (request.includedDestinationSwapSources !== undefined) {
      reject(
        'UNSUPPORTED_ROUTE',
        `includedDestinationSwapSources does not apply: fills on ${destinationChain.record.displayName} do not swap; remove it.`,
      )
    }
    if (request.useExternalLiquidity)
      reject(
        'UNSUPPORTED_ROUTE',
        'This deployment has no external (canonical) bridge liquidity; remove useExternalLiquidity.',
      )
    if (request.useFallbacks)
      reject('UNSUPPORTED_ROUTE', 'This deployment has no fallback routes; remove useFallbacks.')
    if (request.explicitDeposit === false) {
      reject(
        'UNSUPPORTED_EXECUTION_TYPE',
        'The depository only takes explicit deposits tagged with the request id; remove explicitDeposit: false.',
      )
    }
    if (request.gasLimitForDepositSpecifiedTxs !== undefined) {
      throw new PontisError(
        'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS',
        'This deployment runs no transactions inside the deposit, so gasLimitForDepositSpecifiedTxs has nothing to limit; remove it.',
      )
    }
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
    if (request.enableTrueExactOutput && request.tradeType !== 'EXACT_OUTPUT') {
      reject(
        'UNSUPPORTED_EXECUTION_TYPE',
        `enableTrueExactOutput decides where EXACT_OUTPUT surplus goes; this request is ${request.tradeType}.`,
      )
    }
    if (request.topupGas) {
      if (!destinationQuoting.supportsGasTopup) {
        reject(
          'UNSUPPORTED_ROUTE',
          `Gas top-ups are not available on ${destinationChain.record.displayName} (${destinationChain.record.vmType}).`,
        )
      }
      if (outCurrency.isNative) {
        reject(
          'UNSUPPORTED_ROUTE',
          `topupGas adds ${outCurrency.entry.symbol} gas to a non-native output; the output already is ${outCurrency.entry.symbol}.`,
        )
      }
    }
    if (request.useDepositAddress) {
      if (!originQuoting.createDepositAddress) {
        reject(
          'UNSUPPORTED_EXECUTION_TYPE',
          `Deposit addresses are not available on ${originChain.record.displayName}.`,
        )
      }
      if (!inCurrency.isNative) {
        reject(
          'UNSUPPORTED_EXECUTION_TYPE',
          `Deposit addresses take the native currency only; ${inCurrency.entry.symbol} is a token.`,
        )
      }
      if (request.usePermit)
        reject('UNSUPPORTED_EXECUTION_TYPE', 'useDepositAddress and usePermit exclude each other; pick one.')
    }
    if ((request.txs?.length ?? 0) > 0 || request.authorizationList !== undefined) {
      if (!destinationQuoting.supportsDestinationCalls) {
        throw new PontisError(
          'EXTRA_TXS_NOT_SUPPORTED',
          `${destinationChain.record.displayName} (${destinationChain.record.vmType}) cannot run txs calls.`,
        )
      }
    }
    for (const [index, authorization] of (request.authorizationList ?? []).entries()) {
      if (authorization.chainId !== 0 && authorization.chainId !== destinationChain.id) {
        reject(
          'INVALID_EXTRA_TXS',
          `authorizationList[${index}].chainId is ${authorization.chainId}; it must be ${destinationChain.id} (the destination) or 0.`,
        )
      }
    }
    if (request.txsGasLimit !== undefined && (request.txs?.length ?? 0) === 0) {
      reject(
        'INVALID_EXTRA_TXS',
        'txsGasLimit limits the txs calls, but the request has none; remove it or add txs.',
      )
    }
  }

  #calls(
    request: QuoteRequest,
    destinationChain: RegisteredChain,
    outCurrency: ChainCurrency,
  ): DestinationCall[] {
    return (request.txs ?? []).map((tx, index) => {
      if (!destinationChain.adapter.identity.isValidAddress(tx.to)) {
        reject(
          'INVALID_EXTRA_TXS',
          `txs[${index}].to ${tx.to} is not an address on ${destinationChain.record.displayName}.`,
        )
      }
      const value = BigInt(tx.value ?? '0')
      if (value > 0n && !outCurrency.isNative) {
        reject(
          'INVALID_EXTRA_TXS',
          `txs[${index}] sends native value, but the output currency ${outCurrency.entry.symbol} is a token.`,
        )
      }
      return {
        to: destinationChain.adapter.identity.normalizeAddress(tx.to, 'contract'),
        value,
        data: tx.data ?? '0x',
      }
    })
  }

  #sponsoredComponents(request: QuoteRequest): ReadonlySet<FeeComponent> | undefined {
    if (!request.subsidizeFees && !request.subsidizeRent) return undefined
    const requested = request.sponsoredFeeComponents ?? DEFAULT_SPONSORED_COMPONENTS
    // `service` is the specs' name for the `relay` bucket.
    const components = new Set<FeeComponent>(
      request.subsidizeFees
        ? requested.map((component) => (component === 'service' ? 'relay' : component))
        : [],
    )
    if (request.subsidizeRent) components.add('rent')
    return components
  }

  #conversion(request: QuoteRequest, origin: Side, destination: Side): Conversion {
    const inScale = 10n ** BigInt(origin.priced.decimals)
    const outScale = 10n ** BigInt(destination.priced.decimals)
    if (request.fixedRate !== undefined) {
      const rate = parseUnits(request.fixedRate, 18, 'fixedRate')
      if (rate <= 0n) throw new PontisError('INVALID_REQUEST', 'fixedRate must be greater than zero.')
      return { numerator: rate * outScale, denominator: USD_SCALE * inScale }
    }
    return {
      numerator: origin.priced.usdPrice * outScale,
      denominator: destination.priced.usdPrice * inScale,
    }
  }

  #slippageBps(request: QuoteRequest, sameAsset: boolean): number {
    if (request.slippageTolerance !== undefined) return Number(request.slippageTolerance)
    return sameAsset
      ? this.#options.settings.slippage.sameAssetBps
      : this.#options.settings.slippage.crossAssetBps
  }

  /** A fee object; `pricedAmount` is what `priced` values when that is not `amount` itself. */
  #fee(
    amount: bigint,
    currency: ChainCurrency,
    chainId: number,
    priced: PricedCurrency,
    pricedAmount: bigint = amount,
  ): IntentsApi.Fee {
    const catalog = this.#catalogs.get(chainId) as CurrencyCatalog
    const usd = pricedAmount < 0n ? -usdValue(-pricedAmount, priced) : usdValue(pricedAmount, priced)
    return {
      currency: catalog.toApi(currency, chainId),
      amount: amount.toString(),
      amountFormatted: formatUnits(amount, currency.entry.decimals),
      amountUsd: formatUsd(usd),
      minimumAmount: amount.toString(),
    }
  }

  #fees(breakdown: AmountBreakdown, origin: Side, originGas: bigint, usePermit: boolean): IntentsApi.Fees {
    const chainId = origin.chain.id
    const inFee = (amount: bigint) => this.#fee(amount, origin.currency, chainId, origin.priced)
    return {
      // With a permit the service submits (and charges for) the deposit; the user sends nothing.
      gas: this.#fee(usePermit ? 0n : originGas, origin.catalog.native, chainId, origin.nativePriced),
      relayer: inFee(breakdown.relayerGas + breakdown.relayerService),
      relayerGas: inFee(breakdown.relayerGas),
      relayerService: inFee(breakdown.relayerService),
      app: inFee(breakdown.app),
      subsidized: inFee(breakdown.subsidized),
    }
  }

  #sponsorship(
    breakdown: AmountBreakdown,
    origin: Side,
    selected: ReadonlySet<FeeComponent>,
    request: QuoteRequest,
  ): IntentsApi.FeeSponsorship {
    const inFee = (amount: bigint) => this.#fee(amount, origin.currency, origin.chain.id, origin.priced)
    const bucket = (component: FeeComponent): IntentsApi.FeeSponsorshipBucket => {
      const { total, sponsored } = breakdown.components[component]
      return {
        selected: selected.has(component),
        total: inFee(total),
        sponsored: inFee(sponsored),
        userPays: inFee(total - sponsored),
      }
    }
    const components = Object.fromEntries(FEE_COMPONENTS.map((component) => [component, bucket(component)]))
    const userPays = FEE_COMPONENTS.reduce((sum, component) => {
      const { total, sponsored } = breakdown.components[component]
      return sum + total - sponsored
    }, 0n)
    return {
      quoted: {
        selectedComponents: FEE_COMPONENTS.filter((component) => selected.has(component)),
        ...(request.maxSubsidizationAmount !== undefined
          ? { maxSubsidizationAmount: request.maxSubsidizationAmount }
          : {}),
        capHit: breakdown.capHit,
        components: components as IntentsApi.FeeSponsorship['quoted']['components'],
        sponsoredTotal: inFee(breakdown.subsidized),
        userPaysTotal: inFee(userPays),
      },
    }
  }

  #details(input: {
    request: QuoteRequest
    breakdown: AmountBreakdown
    origin: Side
    destination: Side
    user: string
    recipient: string
    paidOut: bigint
    minimumAmountOut: bigint
    slippageBps: number
    sameAsset: boolean
    userBalance: bigint | undefined
    calls: readonly DestinationCall[]
    originSwap: OriginSwapQuote | undefined
  }): IntentsApi.Details {
    const { breakdown, origin, destination, request } = input
    const usdIn = usdValue(breakdown.amountIn, origin.priced)
    const usdOut = usdValue(input.paidOut, destination.priced)
    const inUsd = (amount: bigint) =>
      amount < 0n ? -usdValue(-amount, origin.priced) : usdValue(amount, origin.priced)
    const percent = (part: bigint) => (usdIn === 0n ? '0' : formatUnits((part * 100n * 10n ** 4n) / usdIn, 4))
    const swapNet = breakdown.components.swap.total - breakdown.components.swap.sponsored
    const currencyIn = this.#fee(breakdown.amountIn, origin.currency, origin.chain.id, origin.priced)
    const currencyOut = {
      ...this.#fee(input.paidOut, destination.currency, destination.chain.id, destination.priced),
      minimumAmount: input.minimumAmountOut.toString(),
    }
    const slipValue = input.paidOut - input.minimumAmountOut
    const operation = input.calls.length > 0 ? 'call' : input.sameAsset ? 'bridge' : 'swap'
    const rate =
      breakdown.amountIn === 0n
        ? '0'
        : formatUnits(
            (input.paidOut * 10n ** BigInt(origin.priced.decimals) * USD_SCALE) /
              (breakdown.amountIn * 10n ** BigInt(destination.priced.decimals)),
            18,
          )
    return {
      operation,
      sender: input.user,
      recipient: input.recipient,
      currencyIn,
      currencyOut,
      refundCurrency: currencyIn,
      totalImpact: { usd: formatUsd(usdOut - usdIn), percent: percent(usdOut - usdIn) },
      swapImpact: { usd: formatUsd(-inUsd(swapNet)), percent: percent(-inUsd(swapNet)) },
      expandedPriceImpact: {
        swap: { usd: formatUsd(-inUsd(breakdown.components.swap.total)) },
        execution: { usd: formatUsd(-inUsd(breakdown.relayerGas)) },
        relay: { usd: formatUsd(-inUsd(breakdown.relayerService)) },
        service: { usd: formatUsd(-inUsd(breakdown.relayerService)) },
        app: { usd: formatUsd(-inUsd(breakdown.app)) },
        sponsored: { usd: formatUsd(inUsd(breakdown.subsidized)) },
      },
      rate,
      slippageTolerance: {
        origin: { usd: '0', value: '0', percent: '0' },
        destination: {
          usd: formatUsd(usdValue(slipValue, destination.priced)),
          value: slipValue.toString(),
          percent: formatUnits(BigInt(input.slippageBps), 2),
        },
      },
      timeEstimate: this.#timeEstimate(origin, breakdown.amountIn),
      ...(input.userBalance !== undefined ? { userBalance: input.userBalance.toString() } : {}),
      isFixedRate: request.fixedRate !== undefined,
      route: {
        origin: input.originSwap
          ? {
              // The swap's input is priced at what it buys: the origin currency it turns into.
              inputCurrency: this.#fee(
                input.originSwap.amountIn,
                origin.catalog.unlisted(input.originSwap.fromCurrency, input.originSwap.fromDecimals),
                origin.chain.id,
                origin.priced,
                input.originSwap.amountOut,
              ),
              outputCurrency: {
                ...this.#fee(input.originSwap.amountOut, origin.currency, origin.chain.id, origin.priced),
                minimumAmount: input.originSwap.minimumAmountOut.toString(),
              },
              router: input.originSwap.sources.join(' > '),
              includedSwapSources: [...input.originSwap.sources],
            }
          : {
              inputCurrency: currencyIn,
              outputCurrency: currencyIn,
              router: origin.chain.record.protocol?.v2?.depository ?? 'depository',
            },
        destination: {
          inputCurrency: currencyOut,
          outputCurrency: currencyOut,
          router: 'pontis-solver',
        },
      },
    }
  }
}
