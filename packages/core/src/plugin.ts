/**
 * The plugin contract. A VM-family plugin is a package whose default export is
 * `definePlugin({...})`; the registry turns each configured chain of that family into a
 * `ChainAdapter` through it. Core and the services only ever talk to adapters, so nothing outside
 * a plugin needs to know what family a chain is.
 */

import type { ChainConfig } from './chains.js'
import { deepFreeze } from './deep-freeze.js'
import { type ErrorCode, PontisError } from './errors.js'
import type { Logger } from './logger.js'
import { assertValidRange } from './semver.js'
import type { JsonSchema } from './validation.js'
import type { VmType } from './vm-type.js'

/** The version of this contract. A plugin's `coreApi` range must include it. */
export const CORE_API_VERSION = '1.0.0'

// ------------------------------------------------------------------------------------------------
// identity

/**
 * What an address is for. It picks the error code (`recipient` → INVALID_RECIPIENT, anything
 * else → INVALID_ADDRESS) and words the message, so a client knows which field was wrong.
 */
export type AddressRole =
  | 'user'
  | 'recipient'
  | 'refundTo'
  | 'recoveryAddress'
  | 'referrerAddress'
  | 'appFeeRecipient'
  | 'depositFeePayer'
  | 'depositor'
  | 'solver'
  | 'contract'
  | 'address'

/** What a currency id is for: `input`/`output` pick INVALID_INPUT/OUTPUT_CURRENCY, `currency` UNSUPPORTED_CURRENCY. */
export type CurrencyRole = 'input' | 'output' | 'currency'

const CURRENCY_ROLES: ReadonlySet<string> = new Set<CurrencyRole>(['input', 'output', 'currency'])

/** True when `role` names a currency field rather than an address field (for `encodeAddress`). */
export function isCurrencyRole(role: AddressRole | CurrencyRole): role is CurrencyRole {
  return CURRENCY_ROLES.has(role)
}

/** Required of every family: recognise and normalise its own addresses and currency ids. */
export interface IdentityCapability {
  /**
   * The canonical form of `address` (EVM: EIP-55 checksummed), the one stored and compared.
   * @throws PontisError INVALID_RECIPIENT (role `recipient`) or INVALID_ADDRESS (other roles)
   * with a message naming the role and the value; {@link invalidAddressError} builds it.
   */
  normalizeAddress(address: string, role: AddressRole): string
  /** True when `normalizeAddress` would accept `address`. Never throws. */
  isValidAddress(address: string): boolean
  /**
   * The canonical form of a currency id (EVM: checksummed token address; the native currency is
   * `0x` followed by 40 zeros).
   * @throws PontisError per {@link CurrencyRole}; {@link invalidCurrencyError} builds it.
   */
  normalizeCurrency(currencyId: string, role?: CurrencyRole): string
  /** The canonical id of the chain's native currency. */
  readonly nativeCurrencyId: string
  /**
   * The bytes an address or currency id stands for in signed protocol messages and order hashes
   * (EVM: the 20 address bytes; SVM: the base58-decoded key; Bitcoin: the output script), 0x-hex.
   * @throws PontisError as {@link normalizeAddress} / {@link normalizeCurrency} for invalid input.
   */
  encodeAddress(address: string, role: AddressRole | CurrencyRole): `0x${string}`
  /**
   * The bytes of a transaction id in signed messages (EVM: the 32-byte hash), 0x-hex.
   * @throws PontisError INVALID_REQUEST naming the expected form.
   */
  encodeTransactionId(transactionId: string): `0x${string}`
  /**
   * True when `signature` is `signer`'s signature of the raw bytes `message` under the family's
   * message-signing scheme (EVM: EIP-191 `personal_sign`; SVM: ed25519). Never throws for a bad
   * signature, only answers false. Families without such a scheme omit it.
   */
  verifyMessage?(signer: string, message: `0x${string}`, signature: `0x${string}`): Promise<boolean>
}

// ------------------------------------------------------------------------------------------------
// quoting

/** A cost in the chain's native currency, smallest unit, with the fee terms it was priced at. */
export interface CostEstimate {
  /** Native currency id of the chain. */
  readonly currencyId: string
  /** units × unitPrice (plus any fixed part such as an L1 data fee), smallest unit. */
  readonly amount: bigint
  /** Gas, compute units, vbytes…: the family's own unit, when it has one. */
  readonly units?: bigint
  /** Price per unit (EVM: maxFeePerGas), when it has one. */
  readonly unitPrice?: bigint
  /**
   * The part of `amount` that is rent: deposits that keep new accounts alive (SVM token accounts),
   * priced as the `rent` fee component rather than execution. Absent or 0 on families without rent.
   */
  readonly rent?: bigint
}

/**
 * Family-specific quote request members, as the request gave them; the engine passes them only to
 * an origin that lists them in {@link QuotingCapability.originRequestOptions}.
 */
export interface OriginRequestOptions {
  /** SVM: the account that pays the deposit transaction's fees and rent instead of the user. */
  readonly depositFeePayer?: string
  /** SVM: most hops an origin swap route may take. */
  readonly maxRouteLength?: number
  /** SVM: no associated-token-account creation instructions (shared program accounts instead). */
  readonly useSharedAccounts?: boolean
  /** SVM: add a compute-unit-limit instruction to the origin transaction. */
  readonly includeComputeUnitLimit?: boolean
  /** Bitcoin: the user's public key (hex), needed to spend P2SH outputs. */
  readonly userPublicKey?: string
  /**
   * `explicitDeposit: false`: the user's wallet is a plain account, so the deposit may be a direct
   * transfer carrying the request id (EVM: to the chain's deposit receiver or the depository)
   * instead of a depository call. Only `false` is handed over: `true` is the default.
   */
  readonly explicitDeposit?: boolean
}

/**
 * The quote request members a family may honour as origin, by request path, with the
 * {@link OriginRequestOptions} key each is handed over as. A plugin lists the ones it honours in
 * {@link QuotingCapability.originRequestOptions}; the engine refuses the others on its chains.
 */
export const ORIGIN_REQUEST_OPTIONS = Object.freeze({
  depositFeePayer: 'depositFeePayer',
  maxRouteLength: 'maxRouteLength',
  useSharedAccounts: 'useSharedAccounts',
  includeComputeUnitLimit: 'includeComputeUnitLimit',
  'additionalData.userPublicKey': 'userPublicKey',
  explicitDeposit: 'explicitDeposit',
} as const satisfies Record<string, keyof OriginRequestOptions>)

/**
 * Origin options whose documented default means what leaving them out means: a request member at
 * this value is not handed over, and no origin refuses it (generated clients send defaults).
 */
export const ORIGIN_REQUEST_OPTION_DEFAULTS: Readonly<Partial<Record<OriginRequestOption, unknown>>> =
  Object.freeze({ explicitDeposit: true })

/** A quote request member a family may honour as origin (its path in the request). */
export type OriginRequestOption = keyof typeof ORIGIN_REQUEST_OPTIONS

/**
 * Which swap sources a quote may use, by name, as the request's `includedSwapSources`,
 * `excludedSwapSources`, `includedOriginSwapSources` and `includedDestinationSwapSources` give
 * them: the same meaning on every family. Names compare case-insensitively.
 */
export interface SwapSourceFilter {
  /** Only these (absent: any). */
  readonly included?: readonly string[]
  /** Never these. */
  readonly excluded?: readonly string[]
}

/** True when `filter` lets a swap go through the source or venue `name`. */
export function swapSourceAllowed(filter: SwapSourceFilter, name: string): boolean {
  const key = name.toLowerCase()
  const named = (names: readonly string[] | undefined) => names?.some((n) => n.toLowerCase() === key)
  if (filter.included && filter.included.length > 0 && !named(filter.included)) return false
  return !named(filter.excluded)
}

/** Swap `amount` of `fromCurrency` into `toCurrency` (or buy `amount` of it) through one swap source. */
export interface SwapQuoteRequest {
  /** The account that sends the swap (the user, or the deposit transaction's signer). */
  readonly user: string
  readonly fromCurrency: string
  readonly toCurrency: string
  /** EXACT_INPUT: `amount` of `fromCurrency` goes in. EXACT_OUTPUT: `amount` of `toCurrency` must come out. */
  readonly tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT'
  readonly amount: bigint
  /** Slippage the route may take, basis points. */
  readonly slippageBps: number
  /**
   * EXACT_INPUT only: the output floor to enforce instead of the one `slippageBps` gives (an exact
   * output bought as an exact input of its most input, the surplus going to the recipient). Sources
   * that cannot honour it answer their own floor; callers check it.
   */
  readonly minimumAmountOut?: bigint
  /** The sources and venues the request allows; a source applies it to every name it routes through. */
  readonly filter: SwapSourceFilter
  /** The family options the request set (only those in `originRequestOptions`, e.g. SVM `maxRouteLength`). */
  readonly options: OriginRequestOptions
}

/** A priced swap route of one source. */
export interface SwapQuote {
  /** The {@link SwapSource.name} that priced it. */
  readonly source: string
  readonly fromCurrency: string
  readonly fromDecimals: number
  readonly toCurrency: string
  readonly toDecimals: number
  /** Input taken: exact for EXACT_INPUT, the most it may take for EXACT_OUTPUT. */
  readonly amountIn: bigint
  /** Output the route expects. */
  readonly amountOut: bigint
  /** Output guaranteed (after slippage), enforced on chain by the route. */
  readonly minimumAmountOut: bigint
  readonly hops: number
  /** Liquidity venue labels, one per hop. */
  readonly sources: readonly string[]
  /**
   * What the trade loses against the venues' mid prices before it, basis points of its value
   * (LP fees included; 0 when the source cannot tell). Decides SWAP_IMPACT_TOO_HIGH.
   */
  readonly priceImpactBps: number
  /**
   * The source's own route data, handed back to {@link SwapSource.buildSwapSteps}, the deposit steps
   * or the fill. JSON-safe (strings, numbers, arrays, objects): a destination swap's route is stored
   * with its request and read back when the fill is signed.
   */
  readonly route: unknown
}

/**
 * A destination swap the fill runs in its own transaction: the fill's payment (`currencyId`,
 * `amount`, the solver's inventory) goes into the swap as an exact input, and the recipient gets the
 * swap's output in `quote.toCurrency`, at least `minimumAmountOut` or the whole fill reverts (and the
 * request is refunded on its origin). Only offered on chains with {@link QuotingCapability.fillsCanSwap}.
 */
export interface DestinationSwap {
  /** The route, priced by one of the chain's {@link QuotingCapability.swapSources}. */
  readonly quote: SwapQuote
  /** The output the recipient must get; enforced on chain. */
  readonly minimumAmountOut: bigint
}

/** A quote's origin swap, run inside the deposit transaction. */
export type OriginSwapQuote = SwapQuote

/** The steps of a self-executed swap: the user swaps and the output goes straight to `recipient`. */
export interface SwapStepsRequest {
  readonly quote: SwapQuote
  readonly user: string
  readonly recipient: string
  /** The request id (32-byte hex) the swap transaction carries, so the service can find it. */
  readonly requestId: string
  /** Unix seconds after which the swap must not run. */
  readonly deadline: number
}

/**
 * A source of swap routes on one chain (EVM: a Uniswap v3 deployment; SVM: its route aggregator).
 * The engine asks every source of a chain and keeps the best route the request's filter allows.
 */
export interface SwapSource {
  /** The name requests filter by (`includedSwapSources` …). */
  readonly name: string
  /**
   * Prices a route.
   * @throws PontisError NO_SWAP_ROUTES_FOUND (no route within the request's limits or filter),
   *   UNSUPPORTED_CURRENCY (not tradeable) or SWAP_QUOTE_FAILED (the source did not answer).
   */
  quote(request: SwapQuoteRequest): Promise<SwapQuote>
  /**
   * The user's steps for a same-chain swap (approve, then swap), for sources that can run one on
   * their own; absent where swaps only run inside a deposit.
   */
  buildSwapSteps?(request: SwapStepsRequest): Promise<readonly PreparedStep[]>
  /** What the swap transaction of `request` costs the user, in the chain's native currency. */
  estimateSwapCost?(request: SwapStepsRequest): Promise<CostEstimate>
  /**
   * False for a source whose swaps cannot run inside our own transactions (an aggregator API whose
   * transaction pays the user, not the depository or the fill's executor): origin and destination
   * swaps never ask it. Absent: true.
   */
  readonly usableInDeposits?: boolean
}

/** A call the solver runs on the destination chain after paying (the quote's `txs`). */
export interface DestinationCall {
  readonly to: string
  /** Native value sent with the call, smallest unit. */
  readonly value: bigint
  /** Calldata, 0x-hex. */
  readonly data: string
}

/**
 * A signed delegation of an account's code that the fill carries, so the destination calls run
 * against that code (the request's `authorizationList`; EVM: an EIP-7702 authorization tuple).
 * Opaque to core: only a family with {@link QuotingCapability.supportsDestinationAuthorizations}
 * reads it.
 */
export interface DestinationAuthorization {
  /** Chain the authorization is valid on; 0 means any. */
  readonly chainId: number
  /** The code the authority delegates to. */
  readonly address: string
  /** The authority's account nonce the authorization is signed for. */
  readonly nonce: number
  readonly yParity: number
  readonly r: string
  readonly s: string
}

/** Estimate what the depositor's origin transactions for one request cost on this chain. */
export interface OriginCostRequest {
  readonly requestId: string
  readonly depositor: string
  readonly currencyId: string
  readonly amount: bigint
  /**
   * The deposit is made by the service with the user's signed authorization (EIP-3009 style):
   * the estimate is then what the service pays to submit it.
   */
  readonly usePermit: boolean
  /** The user pays a per-request deposit address with a plain transfer instead of calling the depository. */
  readonly viaDepositAddress: boolean
  /** The family options the request set (only those in `originRequestOptions`). */
  readonly options?: OriginRequestOptions
  /** The origin swap the deposit transaction runs first, when there is one. */
  readonly originSwap?: OriginSwapQuote
}

/** Estimate what one fill costs the solver on this (destination) chain. */
export interface FillCostRequest {
  readonly orderId: string
  /** The account that pays the fill (the solver). */
  readonly payer: string
  readonly recipient: string
  readonly currencyId: string
  readonly amount: bigint
  /** The request's destination calls; empty when none. */
  readonly calls: readonly DestinationCall[]
  /** Total gas the calls may use (`txsGasLimit`); the family estimates when absent. */
  readonly callsGasLimit?: bigint
  /** Native currency sent to the recipient as a gas top-up, smallest unit (0 when none). */
  readonly topupNativeAmount: bigint
  /** Delegations the fill carries (only with `supportsDestinationAuthorizations`); none when absent. */
  readonly authorizations?: readonly DestinationAuthorization[]
  /** The payment is swapped into another token for the recipient (only with `fillsCanSwap`). */
  readonly destinationSwap?: DestinationSwap
}

/** The origin-chain steps a user executes for one request. */
export interface DepositStepsRequest {
  /** The request id the deposit is tagged with (32-byte hex). */
  readonly requestId: string
  readonly depositor: string
  readonly currencyId: string
  readonly amount: bigint
  /** Sign an authorization instead of sending a deposit transaction (`usePermit`). */
  readonly usePermit: boolean
  /** Seconds the authorization stays valid (`permitExpiry`). */
  readonly permitExpiry: number
  /** Where the signature step posts to (the execute API path). */
  readonly executeEndpoint: string
  /** Pay this per-request deposit address with a plain transfer instead of the depository. */
  readonly depositAddress?: string
  /** Current time in seconds, for authorization validity windows (tests pass a fixed clock). */
  readonly nowSeconds: number
  /** The family options the request set (only those in `originRequestOptions`). */
  readonly options?: OriginRequestOptions
  /** Run this swap first; `amount` is then its guaranteed output in `currencyId`. */
  readonly originSwap?: OriginSwapQuote
  /** The nonce from {@link QuotingCapability.depositNonceTag}, for families that tag by nonce. */
  readonly depositNonce?: bigint
}

/** How a memo-less deposit is recognised: by its sender and the nonce it is signed with. */
export interface DepositNonceTag {
  /** The nonce the deposit must be signed with (Hyperliquid: Unix milliseconds). */
  readonly nonce: bigint
  /** What reads report as the deposit's `depositId` (32-byte hex): a hash of sender and nonce. */
  readonly tag: `0x${string}`
}
/**
 * What a signature item authorizes, kept with the request so the execute API needs nothing but
 * `{kind, requestId}` and the signature: existing clients post the item's `data.post.body` as
 * issued (Relay's shape), and the issued terms, not the client's copy, are what is submitted.
 */
export interface PermitTerms {
  /** The item's `data.post.body.kind` (e.g. `eip3009-receive`). */
  readonly kind: string
  /** Validity window of the authorization, Unix seconds. */
  readonly validAfter: bigint
  readonly validBefore: bigint
}

/** One item the user acts on: a transaction to send or a payload to sign. */
export interface PreparedStepItem {
  /** The item's `data` as served in a quote step: one variant of the document's StepItemData. */
  readonly data: Readonly<Record<string, unknown>>
  /** For a signature the service redeems (`usePermit`): what it authorizes. */
  readonly permit?: PermitTerms
}

/** A quote step built by the family, e.g. `approve` then `deposit`. */
export interface PreparedStep {
  /** Step id from the document's enum: `deposit`, `approve`, `authorize`, … */
  readonly id: 'deposit' | 'approve' | 'authorize' | 'authorize1' | 'authorize2' | 'swap' | 'send'
  readonly kind: 'transaction' | 'signature'
  readonly action: string
  readonly description: string
  readonly items: readonly PreparedStepItem[]
}

/** Size of a built transaction against the family's limit, for families that have one. */
export interface TransactionSizeCheck {
  readonly sizeBytes: number
  readonly limitBytes: number
  readonly fits: boolean
}

/** How a family refuses a deposit transaction over its size limit (see `checkTransactionSize`). */
export interface OversizedTransaction {
  /** The catalogued code the quote is refused with (SVM: SOLANA_TX_TOO_LARGE). */
  readonly errorCode: ErrorCode
  /** What the request can change to fit, for the message; `originSwap` when the deposit swaps first. */
  remedy(originSwap: OriginSwapQuote | undefined): string
}

/** Pricing and step building on this chain. */
export interface QuotingCapability {
  /** The family can run the quote's `txs` calls on this chain as a destination. */
  readonly supportsDestinationCalls: boolean
  /** The family can deliver a native gas top-up to the recipient on this chain. */
  readonly supportsGasTopup: boolean
  /**
   * The family's fill on this chain carries the request's `authorizationList` (EVM: sent as an
   * EIP-7702 transaction). Its `estimateFillCost` checks the authorizations (PontisError
   * INVALID_SIGNATURE or INVALID_EXTRA_TXS) and prices them; the engine refuses the member on any
   * other destination.
   */
  readonly supportsDestinationAuthorizations?: boolean
  /**
   * Family-specific quote request members this chain honours as origin (e.g. SVM `maxRouteLength`,
   * Bitcoin `additionalData.userPublicKey`), named as in {@link ORIGIN_REQUEST_OPTIONS}. The engine
   * rejects such a member on any other origin instead of ignoring it.
   */
  readonly originRequestOptions?: readonly string[]
  /**
   * The bytes of one destination call in the order's `output.calls`, in the family's encoding
   * (EVM: `abi.encode(address to, uint256 value, bytes data)`). Required with
   * `supportsDestinationCalls`.
   */
  encodeDestinationCall?(call: DestinationCall): `0x${string}`
  estimateOriginCost(request: OriginCostRequest): Promise<CostEstimate>
  estimateFillCost(request: FillCostRequest): Promise<CostEstimate>
  buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]>
  /** True when `currencyId` accepts signed transfer authorizations (EIP-3009 on EVM). */
  supportsPermit(currencyId: string): Promise<boolean>
  /** The address the user pays with a plain transfer for one request; derived from the request id, owned by the service. */
  createDepositAddress?(requestId: string): Promise<string>
  /**
   * Deposit-address quotes need a `user` whose balance exceeds the amount (INSUFFICIENT_FUNDS
   * otherwise), as proof of a funded sender (Bitcoin).
   */
  readonly depositAddressNeedsFundedUser?: boolean
  /**
   * Families whose transfers carry no memo (Hyperliquid core): the nonce a deposit from
   * `depositor` must be signed with, and the tag reads report as that deposit's `depositId`
   * (derived from sender and nonce). The engine stores the tag with the request, passes the nonce
   * to {@link buildDepositSteps} as `depositNonce`, and finds the request by the tag.
   */
  depositNonceTag?(depositor: string, nowMs: number): DepositNonceTag
  /** Only for families with a transaction size limit (SVM: 1232 bytes). */
  checkTransactionSize?(step: PreparedStep): TransactionSizeCheck
  /** With `checkTransactionSize`: the error a deposit over the limit gets. */
  readonly oversizedTransaction?: OversizedTransaction
  /**
   * The chain's swap sources. An origin with sources swaps any token they trade into a currency
   * the depository takes inside the deposit (when `buildDepositSteps` honours `originSwap`), and a
   * same-chain request runs as a swap the user executes (sources with `buildSwapSteps`).
   */
  readonly swapSources?: readonly SwapSource[]
  /** True when `buildDepositSteps` can run an `originSwap` before the deposit. */
  readonly depositsCanSwap?: boolean
  /**
   * True when fills on this chain can swap the solver's payment into a token the recipient asked for
   * (a {@link DestinationSwap} through one of `swapSources`), in the fill transaction itself.
   */
  readonly fillsCanSwap?: boolean
}

// ------------------------------------------------------------------------------------------------
// reading (facts the oracle signs and the indexer uses)

/** Where a transaction stands. */
export type TransactionState = 'not_found' | 'pending' | 'success' | 'reverted'

/** The facts of one kind found in one transaction, with the transaction's state. */
export interface TransactionFacts<Fact> {
  readonly transactionId: string
  readonly state: TransactionState
  /** True once the family's finality rule (confirmations, finalized slot…) is met. */
  readonly final: boolean
  readonly blockNumber?: bigint
  /** Blocks (or the family's unit) since inclusion, 1 = just included; callers apply fast/slow policy with it. */
  readonly confirmations?: number
  readonly facts: readonly Fact[]
}

/** A deposit into a depository. */
export interface DepositFact {
  /** Position inside the transaction (log index, output index…). */
  readonly index: number
  readonly depository: string
  /** The id the deposit was tagged with (32-byte hex). */
  readonly depositId: string
  readonly depositor: string
  readonly currencyId: string
  readonly amount: bigint
}

/** A payment tagged with an order id: a solver fill or refund. */
export interface PayoutFact {
  readonly index: number
  readonly orderId: string
  readonly recipient: string
  readonly currencyId: string
  readonly amount: bigint
}

/** How final a read must be: the chain's fast or slow rule of its {@link FinalityPolicy}. */
export type FinalityMode = 'fast' | 'slow'

/** A depository withdrawal request to look up, exactly as the depository verifies it. */
export interface WithdrawalQuery {
  /** The family's encoding of the request (EVM: ABI-encoded `CallRequest`), 0x-hex. */
  readonly withdrawal: `0x${string}`
  readonly depository: string
  /** The status is read at the newest state that meets this rule. */
  readonly mode: FinalityMode
  /** The executing transaction, for families that cannot look a request up by id. */
  readonly transactionId?: string
}

/** One payment a withdrawal request makes when executed. */
export interface WithdrawalTransfer {
  readonly recipient: string
  readonly currencyId: string
  readonly amount: bigint
}

/** State of a depository withdrawal. */
export interface WithdrawalFact {
  /** The id the depository tracks the request by (EVM: its EIP-712 struct hash), 32-byte hex. */
  readonly withdrawalId: string
  readonly depository: string
  readonly status: 'pending' | 'executed' | 'expired'
  /** The request's own reference (EVM: its `nonce` as 32 bytes): the hub withdrawal it pays. */
  readonly reference: `0x${string}`
  /** The plain transfers the request makes, in order; calls of other shapes are not listed. */
  readonly transfers: readonly WithdrawalTransfer[]
}

/** A deposit found by scanning the depository, with where it stands. */
export interface ScannedDeposit extends DepositFact {
  readonly transactionId: string
  readonly blockNumber?: bigint
  /** 1 = just included. */
  readonly confirmations: number
}

/**
 * A same-chain swap the user sent through one of the chain's swap sources (`buildSwapSteps`), tagged
 * with its request id (EVM: the last 32 bytes of the router call). What its calldata names (recipient,
 * output currency) is read even when it reverted; `amount` is what it paid the recipient (0 then).
 */
export interface SwapFact {
  /** The id the swap was tagged with (32-byte hex). */
  readonly swapId: string
  readonly sender: string
  readonly recipient: string
  /** The output currency. */
  readonly currencyId: string
  readonly amount: bigint
}

/** A swap found by a scan, with where it stands. */
export interface ScannedSwap extends SwapFact {
  readonly transactionId: string
  readonly blockNumber?: bigint
  /** 1 = just included. */
  readonly confirmations: number
}

/** One scan step: the deposits found and the cursor to continue from. */
export interface DepositScan {
  readonly deposits: readonly ScannedDeposit[]
  /** Tagged same-chain swaps in the same range (families whose swap sources build user swaps). */
  readonly swaps?: readonly ScannedSwap[]
  /** Opaque to callers (EVM: the last block scanned); pass it back on the next scan. */
  readonly cursor: string
  /** True when the scan reached the chain head; false when more remains (call again now). */
  readonly caughtUp: boolean
}

/**
 * {@link ReadingCapability.startCursor} of families whose scan cursor is the last block height
 * scanned, as a decimal string: the cursor just before `height`.
 */
export function lastScannedBefore(height: bigint): string {
  return (height > 0n ? height - 1n : 0n).toString()
}

/** How a transaction's facts are read. */
export interface ReadOptions {
  /** Read from the chain, skipping any cache of final facts. */
  readonly fresh?: boolean
}

/** How a balance is read. */
export interface BalanceOptions {
  /** Count only funds received this many blocks deep (1 = in a block). */
  readonly minConfirmations?: number
  /**
   * Read from the chain now, never from the read cache: for decisions that move money (a cached
   * balance may be from before the last fill).
   */
  readonly fresh?: boolean
}

/** Reading chain state as facts. */
export interface ReadingCapability {
  /**
   * `options.fresh`: from the chain now, never from facts kept because they were final (the
   * indexer asks so when it checks that a deposit it acted on was not reorganised away).
   */
  readDeposits(transactionId: string, options?: ReadOptions): Promise<TransactionFacts<DepositFact>>
  /**
   * Deposits into the chain's depository after `cursor` (from the current head when absent: a new
   * indexer does not replay history), in bounded steps.
   */
  scanDeposits?(cursor: string | undefined): Promise<DepositScan>
  /**
   * The cursor from which {@link scanDeposits} reads block `height` first: the indexer's first run
   * starts there when the chain entry sets `indexer.startBlock`. Families whose scans can start at a
   * height implement it; a chain entry with `startBlock` on any other family fails start-up.
   */
  startCursor?(height: bigint): string
  readFills?(transactionId: string): Promise<TransactionFacts<PayoutFact>>
  readRefunds?(transactionId: string): Promise<TransactionFacts<PayoutFact>>
  /**
   * The tagged same-chain swap a transaction made ({@link SwapFact}); unlike the other reads, a
   * reverted transaction still answers its fact (amount 0), so its request can fail.
   */
  readSwaps?(transactionId: string, options?: ReadOptions): Promise<TransactionFacts<SwapFact>>
  /**
   * Where a withdrawal request stands at the newest state meeting `query.mode`.
   * @throws PontisError INVALID_REQUEST when `query.withdrawal` is not a request of this family.
   */
  readWithdrawal?(query: WithdrawalQuery): Promise<WithdrawalFact>
  /**
   * Balance of `owner` in `currencyId`, smallest unit. With `minConfirmations`, only funds received
   * at least that deep count (families that cannot tell ignore it and answer their latest state).
   */
  readBalance(owner: string, currencyId: string, options?: BalanceOptions): Promise<bigint>
  /** How much of `currencyId` `owner` lets `spender` move (families without allowances: unlimited). */
  readAllowance?(owner: string, spender: string, currencyId: string): Promise<bigint>
}

// ------------------------------------------------------------------------------------------------
// filling (reference solver)

/** Keys the reference solver signs with on a family; names are the family's (EVM: hex private keys). */
export interface SolverCredentials {
  /** Pays fills and submits deposits/refunds. */
  readonly solverKey: string
  /** Authorizes payouts out of the depository (EVM: the EIP-712 signer `execute` trusts). */
  readonly allocatorKey?: string
}

/** Pay one order on this (destination) chain: payment, calls and gas top-up, tagged with the order id. */
export interface FillRequest {
  readonly orderId: string
  readonly recipient: string
  readonly currencyId: string
  readonly amount: bigint
  readonly calls: readonly DestinationCall[]
  /** Total gas the calls may use; the family estimates when absent. */
  readonly callsGasLimit?: bigint
  readonly topupNativeAmount: bigint
  /**
   * Delegations the fill carries, checked again at signing (an authority whose nonce moved since the
   * quote would be skipped by the chain: PontisError INVALID_EXTRA_TXS instead).
   */
  readonly authorizations?: readonly DestinationAuthorization[]
  /**
   * The payment (`currencyId`, `amount`) is swapped into `destinationSwap.quote.toCurrency` for the
   * recipient in the same transaction (only on chains with `fillsCanSwap`); reads of the fill then
   * report the recipient's payout in that token, as the swap's logs show it.
   */
  readonly destinationSwap?: DestinationSwap
}

/** Where refunded (or swept) funds come from on this (origin) chain. */
export type RefundSource =
  /** Out of the depository, authorized by the allocator. */
  | { readonly kind: 'depository' }
  /** Out of a request's deposit address, whose key the family derives from the request id. */
  | { readonly kind: 'depositAddress'; readonly requestId: string }

/** Send `amount` of `currencyId` to `recipient` from `source` (refunds, excess returns, sweeps). */
export interface RefundRequest {
  /** Unique per refund leg (32-byte hex); replay protection on chain where the family has it. */
  readonly refundId: string
  readonly source: RefundSource
  readonly recipient: string
  readonly currencyId: string
  /** For a deposit-address source the family may deduct the transfer's own fee from it. */
  readonly amount: bigint
}

/**
 * A transaction signed but maybe not broadcast. The solver stores it before broadcasting, so after a
 * crash it re-broadcasts the same bytes: the chain accepts them once, nobody is paid twice.
 */
export interface SignedTransaction {
  readonly transactionId: string
  readonly raw: string
  /** What was actually sent (a deposit-address refund pays its own fee out of the amount). */
  readonly amount: bigint
  /**
   * The last block height at which the chain may still include it, where the family bounds a
   * transaction's life (SVM: its blockhash's `lastValidBlockHeight`). Stored with the bytes and
   * handed back to {@link FillingCapability.replace}.
   */
  readonly validThrough?: bigint
}

/** A re-signed transaction that replaces another one (same nonce); it moves the same amount. */
export interface ReplacementTransaction {
  readonly transactionId: string
  readonly raw: string
  /** As {@link SignedTransaction.validThrough}. */
  readonly validThrough?: bigint
}

/** What the solver stored about the transaction {@link FillingCapability.replace} may replace. */
export interface StoredTransaction {
  /** {@link SignedTransaction.validThrough} as stored with it; absent when none was. */
  readonly validThrough?: bigint
}

/** What became of a submitted transaction. */
export interface TransactionOutcome {
  readonly transactionId: string
  readonly state: TransactionState
  /** True once the family's finality rule is met (slow policy). */
  readonly final: boolean
  readonly confirmations?: number
  /** Decoded revert data of a reverted transaction, for the status record's `details`. */
  readonly revert?: Readonly<Record<string, unknown>>
}

/** A deposit the user authorized by signature (`usePermit`), submitted by the service. */
export interface PermitDeposit {
  readonly requestId: string
  readonly depositor: string
  readonly currencyId: string
  readonly amount: bigint
  /** Validity window of the authorization, seconds. */
  readonly validAfter: bigint
  readonly validBefore: bigint
}

/** One currency's share of a repayment: what the filled orders' deposits owe the solver in it. */
export interface RepaymentLeg {
  readonly currencyId: string
  readonly amount: bigint
}

/**
 * Pay the solver back out of the depository (vault) for orders it filled: several legs in one
 * transaction where the family can, sent to the solver's own account on this (origin) chain.
 */
export interface RepaymentRequest {
  /** Unique per batch (32-byte hex); the on-chain replay key where the family has one. */
  readonly repaymentId: string
  /** The solver's account on this chain. */
  readonly recipient: string
  /** At most {@link FillingCapability.maxRepaymentLegs}, one per currency. */
  readonly legs: readonly RepaymentLeg[]
}

/** An oracle execution as the hub applies it: its key, its actions and the oracles' signatures. */
export interface HubExecution {
  readonly idempotencyKey: string
  readonly actions: readonly string[]
  /** Each oracle signer with its signature over the execution (the family orders them as the hub wants). */
  readonly signatures: ReadonlyArray<{ readonly signer: string; readonly signature: string }>
}

/** The hub's oracle contract on this chain, as the solver's repayment uses it. */
export interface HubRelayCapability {
  /** Whether the hub at `contract` applied the execution with `idempotencyKey` (at the chain's latest state). */
  executed(contract: string, idempotencyKey: string): Promise<boolean>
  /** The signer set and threshold the hub at `contract` verifies executions against. */
  signers(contract: string): Promise<{ readonly signers: readonly string[]; readonly threshold: number }>
  /**
   * Signs the transaction that hands `execution` to the hub at `contract`, from the solver's
   * account. Applying it twice is refused by the hub (one execution per idempotency key).
   */
  signExecution(
    contract: string,
    execution: HubExecution,
    credentials: SolverCredentials,
    options?: SigningOptions,
  ): Promise<SignedTransaction>
}

/**
 * Coins (outputs of UTXO families) held for transactions the solver signed but the chain may not
 * have seen yet, kept in the service's store so every worker on one database sees every hold: two
 * workers never spend the same coin. A hold lapses after its time (the signed transaction, once
 * broadcast, spends the coin on chain). Coin ids are the family's (Bitcoin: `txid:vout`).
 */
export interface CoinReservations {
  /** Of `coinIds`, those another signed transaction holds now. */
  held(coinIds: readonly string[]): Promise<ReadonlySet<string>>
  /**
   * Holds `coinIds` for the transaction being signed, for `ttlMs`, in the same store transaction
   * that stores its bytes. False (nothing held) when another one holds any of them meanwhile: the
   * family chooses coins again.
   */
  hold(coinIds: readonly string[], ttlMs: number): Promise<boolean>
}

/** How to sign: the solver allocates sequence numbers and coins itself so concurrent solvers never collide. */
export interface SigningOptions {
  /** Account sequence number (EVM nonce) to sign with; the family picks one when absent. */
  readonly nonce?: bigint
  /**
   * Where UTXO families hold the coins they spend (shared by every worker); absent outside the
   * solver, where a family keeps its own per-process holds.
   */
  readonly coins?: CoinReservations
}

/** Paying out and refunding on this chain, for the reference solver. */
export interface FillingCapability {
  /** The account `credentials.solverKey` signs as (whose nonces the solver allocates). */
  solverAddress(credentials: SolverCredentials): string
  /** The next sequence number the chain expects from `address`, counting pending transactions. */
  nextNonce(address: string): Promise<bigint>
  signFill(
    request: FillRequest,
    credentials: SolverCredentials,
    options?: SigningOptions,
  ): Promise<SignedTransaction>
  /** Deposit-address sources sign as the deposit address and ignore `options.nonce`. */
  signRefund(
    request: RefundRequest,
    credentials: SolverCredentials,
    options?: SigningOptions,
  ): Promise<SignedTransaction>
  /**
   * Checks the user's signed authorization (PontisError INVALID_SIGNATURE or SIGNATURE_EXPIRED,
   * 400) and signs the deposit that uses it, from the solver account.
   */
  signPermitDeposit?(
    permit: PermitDeposit,
    signature: string,
    credentials: SolverCredentials,
    options?: SigningOptions,
  ): Promise<SignedTransaction>
  /**
   * Signs the solver's repayment out of the depository (vault), authorized by
   * `credentials.allocatorKey`; the result's `amount` is the legs' sum. Signing the same request
   * again must not pay twice where the family has on-chain replay protection (EVM: the same
   * `execute` request). Absent where deposits land in the solver's own account (Lighter, and
   * Hyperliquid in its default set-up): there is nothing to pay back.
   */
  signRepayment?(
    request: RepaymentRequest,
    credentials: SolverCredentials,
    options?: SigningOptions,
  ): Promise<SignedTransaction>
  /**
   * The family's encoding of the withdrawal {@link signRepayment} pays for `request` (EVM: the
   * ABI-encoded `CallRequest`), as {@link ReadingCapability.readWithdrawal} takes it: the hub path
   * has the oracles attest it once paid, so the hub clears what it held for the withdrawal. Families
   * without `readWithdrawal` omit it.
   */
  repaymentWithdrawal?(request: RepaymentRequest): string
  /**
   * Signs one transaction item of a quote another intent API answered (a step's `data`, as that API
   * wrote it) from the solver's own account: the solver as a user of another service, moving its
   * own funds between chains (rebalancing). Refuses (PontisError INVALID_REQUEST) an item that is
   * not this family's transaction, is for another chain, names another sender, or could spend more
   * of the solver's funds than `spend` (at most `spend.amount` of `spend.currencyId`, nothing of
   * anything else): the other API is not trusted with more than the move. Absent where the family
   * cannot send such an item with the solver's key; the rebalancer then leaves its moves planned and
   * says so.
   */
  signStep?(
    item: Readonly<Record<string, unknown>>,
    spend: { readonly currencyId: string; readonly amount: bigint },
    credentials: SolverCredentials,
    options?: SigningOptions,
  ): Promise<SignedTransaction>
  /** How many legs (currencies) one repayment transaction carries; 1 when absent. */
  readonly maxRepaymentLegs?: number
  /**
   * Relaying oracle executions to the settlement hub's oracle contract when it lives on this chain
   * (the hub path of repayment). Absent on families that cannot host the hub.
   */
  readonly hubRelay?: HubRelayCapability
  /**
   * A replacement of the signed transaction `raw` that is not being mined (underpriced after a
   * fee spike, dropped from the mempool): the same nonce re-signed with higher fees, so the chain
   * mines at most one of the two. Undefined when the fees would pass the chain's configured cap,
   * or when `raw` is not the solver's to re-sign (a deposit address's). Families without a fee
   * market omit it; the solver then keeps re-broadcasting the same bytes.
   *
   * Families whose transactions expire instead of being replaced by sequence number re-sign only
   * once the expiry is provable (SVM: the finalized height beyond `stored.validThrough`; Tron: a
   * solid block stamped past the expiration the bytes carry), so the chain can include at most one
   * of the two; undefined before then, or when nothing bounds it.
   */
  replace?(
    raw: string,
    credentials: SolverCredentials,
    stored?: StoredTransaction,
  ): Promise<ReplacementTransaction | undefined>
  /** Hands a signed transaction to the chain; broadcasting one the chain already has is not an error. */
  broadcast(raw: string): Promise<void>
  /**
   * Where the transaction stands now. Also asked for up to an hour after it counted as final (the
   * intent service's check for deep reorganisations, which sends the bytes again on `not_found`):
   * answer `not_found` only when the chain no longer has it, never because a node pruned its history.
   */
  outcome(transactionId: string): Promise<TransactionOutcome>
}

// ------------------------------------------------------------------------------------------------
// adapter and plugin

/**
 * When a chain's facts count as final. The indexer and the oracle read it instead of knowing
 * families: `fast` attestations wait for `fastConfirmations`, `slow` ones for `slowConfirmations`
 * and, when the chain has a finalized checkpoint, for that too.
 */
export interface FinalityPolicy {
  readonly fastConfirmations: number
  /** At least `fastConfirmations`. */
  readonly slowConfirmations: number
  readonly slowRequiresFinalized: boolean
  /**
   * Confirmations a deposit of `amount` in `currencyId` must reach before it is acted on, when they
   * depend on the amount (Bitcoin: 1 block, 2 above a per-currency threshold). Default:
   * `slowConfirmations`.
   */
  confirmationsFor?(currencyId: string, amount: bigint): number
  /**
   * The chain shows deposits before they are in a block (a mempool): reads report such a
   * transaction as `pending` with its facts, the watcher moves its request to `pending` on first
   * sight (the fill still waits for the confirmations), and a manual reindex of it answers 404
   * until it is in a block.
   */
  readonly showsUnconfirmedDeposits?: boolean
  /** Seconds between blocks, for time estimates; families with fast blocks may omit it. */
  readonly blockTimeSeconds?: number
  /**
   * A transaction is final once executed and no deeper confirmation is ever counted (a venue's
   * API): a chain entry asking for more than one (`finality.confirmations`, `finality.highValue`)
   * could never be met, and stops start-up.
   */
  readonly finalOnExecution?: boolean
  /**
   * A fill sent on this chain as a destination takes long to confirm (Bitcoin: blocks of ten
   * minutes), so clients may stop following the request once it is `submitted`: the quote's
   * `check.finalStatuses` says so.
   */
  readonly clientsStopAtSubmitted?: boolean
}

/** What a chain's node answered a readiness probe. */
export interface ChainProbe {
  /** The newest block height or slot, decimal. */
  readonly head?: string
}

/** Everything one chain can do, grouped by capability. `identity` and `finality` are required. */
export interface ChainAdapter {
  readonly identity: IdentityCapability
  readonly finality: FinalityPolicy
  readonly quoting?: QuotingCapability
  readonly reading?: ReadingCapability
  /** Price reads from contracts on this chain (feeds, pools), for the service's price sources. */
  readonly marketData?: MarketDataCapability
  readonly filling?: FillingCapability
  /**
   * Base URLs of the chain's own API this adapter calls besides `rpc.url` and `rpc.fallbackUrls`
   * (a separate Esplora, node or explorer URL from the plugin's options), so the service counts
   * calls to them as the chain's RPC calls. Third-party APIs (swap routes) are not listed.
   */
  readonly apiUrls?: readonly string[]
  /**
   * Readiness probe: one cheap call proving the chain's node (or venue API) answers with sane data,
   * reporting its head (the newest block height or slot, decimal) when the family has one. Rejects
   * when the node is unreachable or its answer is not what the family expects; the caller bounds it.
   */
  probe(): Promise<ChainProbe>
  /** Releases connections and timers; called once when the registry closes. */
  close?(): Promise<void>
}

// ------------------------------------------------------------------------------------------------
// market data

/**
 * The latest round of a price feed with the Chainlink AggregatorV3Interface shape, read in one
 * block. The reader applies its own freshness and round rules to it.
 */
export interface PriceFeedRound {
  readonly roundId: bigint
  /** The price, scaled by 10^`decimals`. */
  readonly answer: bigint
  readonly decimals: number
  /** Unix seconds the answer was last updated. */
  readonly updatedAt: bigint
  /** The round the answer was computed in; below `roundId` means the answer is carried over. */
  readonly answeredInRound: bigint
  /** Unix seconds of the block the round was read at: the feed's age is measured against it. */
  readonly blockTimestamp: bigint
}

/** A pool's price of one of its tokens in the other, as exact smallest-unit ratios. */
export interface PoolPrice {
  /** The token priced (the request's `base`) and the token it is priced in. */
  readonly base: string
  readonly quote: string
  readonly baseDecimals: number
  readonly quoteDecimals: number
  /** Smallest units of `quote` per smallest unit of `base` = numerator / denominator. */
  readonly numerator: bigint
  readonly denominator: bigint
  /** Unix seconds of the block read. */
  readonly blockTimestamp: bigint
}

/** Reads prices from contracts on this chain. */
export interface MarketDataCapability {
  /**
   * `latestRoundData` and `decimals` of an AggregatorV3Interface feed at `feed`.
   * @throws PontisError RPC_HTTP_ERROR / REQUEST_TIMED_OUT on transport trouble, PRICE_FETCH_FAILED
   *   when the contract does not answer as a feed.
   */
  readPriceFeed(feed: string): Promise<PriceFeedRound>
  /**
   * The spot price of `base` in a pool (EVM: a Uniswap v3 pool's `slot0`), or its time-weighted
   * average over the last `twapSeconds` (the pool's `observe`) when given.
   */
  readPoolPrice?(request: { pool: string; base: string; twapSeconds?: number }): Promise<PoolPrice>
}

/** What a plugin gets besides the chain's config. */
export interface AdapterContext {
  /** Already tagged with the chain id and name. */
  readonly logger: Logger
  /** The `ENVIRONMENT` in use (`local`, `testnet`, `mainnet`, …). */
  readonly environment: string
}

/** What a plugin author writes. */
export interface PluginDefinition<Config> {
  /** The family this plugin serves; must match its key under `plugins` in the chains file. */
  readonly vmType: VmType
  /** Package name, e.g. `@pontis/plugin-evm`. */
  readonly name: string
  /** Semver range of core API versions this plugin works with, e.g. `^1.0.0`. */
  readonly coreApi: string
  /** JSON Schema (2020-12) of a chain entry's `plugin` options; its defaults are applied. */
  readonly configSchema: JsonSchema
  /**
   * JSON Schema (2020-12) of each step item `data` format this family serves, by `format` value
   * (e.g. `evm-transaction`); each pins `properties.format.const` to its key. The intents document's
   * `StepItemData` is checked against these, and served items are checked against them.
   */
  readonly stepFormats?: Readonly<Record<string, JsonSchema>>
  /**
   * The signed authorizations (`data.post.body.kind` of its signature items) this family's chains
   * accept as origin; the execute API refuses any other kind for their requests.
   */
  readonly permitKinds?: readonly string[]
  /** Turns one chain's config into its adapter. */
  createAdapter(chain: ChainConfig<Config>, context: AdapterContext): ChainAdapter | Promise<ChainAdapter>
}

// Symbol.for, so a plugin that resolved its own copy of core is still recognised.
const PLUGIN_BRAND = Symbol.for('@pontis/core/plugin')

/** A plugin made by {@link definePlugin}: frozen, branded, checked. */
export interface PontisPlugin<Config = unknown> extends PluginDefinition<Config> {
  readonly [PLUGIN_BRAND]: true
}

const VM_TYPE = /^[a-z][a-z0-9-]*$/

/**
 * Declares a plugin. Checks the definition now, so a mistake fails in the plugin's own tests
 * rather than at an operator's start-up.
 * @throws TypeError naming the member that is wrong.
 */
export function definePlugin<Config>(definition: PluginDefinition<Config>): PontisPlugin<Config> {
  const label = typeof definition?.name === 'string' ? `plugin '${definition.name}'` : 'plugin'
  if (typeof definition !== 'object' || definition === null) {
    throw new TypeError('definePlugin needs an object { vmType, name, coreApi, configSchema, createAdapter }')
  }
  if (typeof definition.name !== 'string' || definition.name.trim() === '') {
    throw new TypeError('definePlugin: name must be a non-empty string (the package name)')
  }
  if (typeof definition.vmType !== 'string' || !VM_TYPE.test(definition.vmType)) {
    throw new TypeError(
      `${label}: vmType must be a lower-case word such as 'evm', got ${JSON.stringify(definition.vmType)}`,
    )
  }
  try {
    assertValidRange(definition.coreApi)
  } catch (error) {
    throw new TypeError(
      `${label}: coreApi must be a semver range such as '^1.0.0': ${(error as Error).message}`,
    )
  }
  const schema: unknown = definition.configSchema
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError(`${label}: configSchema must be a JSON Schema object`)
  }
  checkStepFormats(label, definition.stepFormats)
  const permitKinds: unknown = definition.permitKinds
  if (
    permitKinds !== undefined &&
    !(Array.isArray(permitKinds) && permitKinds.every((kind) => typeof kind === 'string' && kind !== ''))
  ) {
    throw new TypeError(`${label}: permitKinds must be a list of non-empty strings`)
  }
  if (typeof definition.createAdapter !== 'function') {
    throw new TypeError(`${label}: createAdapter must be a function`)
  }
  const createAdapter = definition.createAdapter
  return Object.freeze({
    vmType: definition.vmType,
    name: definition.name,
    coreApi: definition.coreApi,
    configSchema: deepFreeze(structuredClone(definition.configSchema)),
    ...(definition.stepFormats ? { stepFormats: deepFreeze(structuredClone(definition.stepFormats)) } : {}),
    ...(definition.permitKinds ? { permitKinds: Object.freeze([...definition.permitKinds]) } : {}),
    createAdapter: (chain: ChainConfig<Config>, context: AdapterContext) =>
      createAdapter.call(definition, chain, context),
    [PLUGIN_BRAND]: true as const,
  })
}

/** Each step format is a schema object that pins `format` to its own name. */
function checkStepFormats(label: string, formats: unknown): void {
  if (formats === undefined) return
  if (typeof formats !== 'object' || formats === null || Array.isArray(formats)) {
    throw new TypeError(`${label}: stepFormats must be an object of JSON Schemas by format name`)
  }
  for (const [format, schema] of Object.entries(formats)) {
    const pinned = (schema as { properties?: { format?: { const?: unknown } } } | null)?.properties?.format
      ?.const
    if (typeof schema !== 'object' || schema === null || pinned !== format) {
      throw new TypeError(
        `${label}: stepFormats['${format}'] must be a JSON Schema object whose properties.format.const is '${format}'`,
      )
    }
  }
}

/** True for a value made by {@link definePlugin} (by this or another copy of core). */
export function isPontisPlugin(value: unknown): value is PontisPlugin {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[PLUGIN_BRAND] === true &&
    Object.isFrozen(value)
  )
}

// ------------------------------------------------------------------------------------------------
// helpers for plugin authors, so every family words its errors the same way

const MAX_ECHOED_LENGTH = 100

function echo(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value)
  return text.length > MAX_ECHOED_LENGTH ? `${text.slice(0, MAX_ECHOED_LENGTH)}…` : text
}

/** A chain as error messages name it. */
export interface ChainLabel {
  readonly id: number
  readonly displayName: string
}

/**
 * The legs of `request`, checked to number 1 to `maxLegs` (the family's `maxRepaymentLegs`).
 * @throws PontisError INVALID_REQUEST naming the chain and the count.
 */
export function repaymentLegs(
  request: RepaymentRequest,
  maxLegs: number,
  chain: ChainLabel,
): readonly [RepaymentLeg, ...RepaymentLeg[]] {
  const [first, ...rest] = request.legs
  if (!first || request.legs.length > maxLegs) {
    throw new PontisError(
      'INVALID_REQUEST',
      `A repayment on ${chain.displayName} (${chain.id}) carries 1 to ${maxLegs} legs, got ${request.legs.length}.`,
    )
  }
  return [first, ...rest]
}

/**
 * The checks every {@link FillingCapability.signStep} starts with: `item` is a `format` item (or
 * names no format) for `chain`. Answers the refusal the plugin's own checks throw: a PontisError
 * INVALID_REQUEST naming the chain and why.
 * @throws PontisError INVALID_REQUEST for another format or chain.
 */
export function stepItemRefusal(
  item: Readonly<Record<string, unknown>>,
  format: string,
  chain: ChainLabel,
): (why: string) => never {
  const refuse = (why: string): never => {
    throw new PontisError('INVALID_REQUEST', `The step item cannot be sent on ${chain.displayName}: ${why}.`)
  }
  if (item.format !== undefined && item.format !== format)
    refuse(`it is a '${String(item.format)}' item, not '${format}'`)
  if (Number(item.chainId) !== chain.id) refuse(`it is for chain ${String(item.chainId)}`)
  return refuse
}

/**
 * The error `normalizeAddress` throws: INVALID_RECIPIENT for role `recipient`, else INVALID_ADDRESS.
 * Message: `recipient '0x12' is not a valid address on Base (8453): expected …`.
 */
export function invalidAddressError(
  role: AddressRole,
  address: unknown,
  reason: string,
  chain?: ChainLabel,
): PontisError {
  const where = chain === undefined ? '' : ` on ${chain.displayName} (${chain.id})`
  return new PontisError(
    role === 'recipient' ? 'INVALID_RECIPIENT' : 'INVALID_ADDRESS',
    `${role} '${echo(address)}' is not a valid address${where}: ${reason}`,
    { role, address: echo(address), ...(chain === undefined ? {} : { chainId: chain.id }) },
  )
}

/**
 * The error `normalizeCurrency` throws: INVALID_INPUT_CURRENCY, INVALID_OUTPUT_CURRENCY or
 * UNSUPPORTED_CURRENCY by role, with a message naming the value and the chain.
 */
export function invalidCurrencyError(
  role: CurrencyRole,
  currencyId: unknown,
  reason: string,
  chain?: ChainLabel,
): PontisError {
  const code =
    role === 'input'
      ? 'INVALID_INPUT_CURRENCY'
      : role === 'output'
        ? 'INVALID_OUTPUT_CURRENCY'
        : 'UNSUPPORTED_CURRENCY'
  const noun = role === 'currency' ? 'currency' : `${role} currency`
  const where = chain === undefined ? '' : ` on ${chain.displayName} (${chain.id})`
  return new PontisError(
    code,
    `${noun} '${echo(currencyId)}' is not a valid currency id${where}: ${reason}`,
    {
      role,
      currency: echo(currencyId),
      ...(chain === undefined ? {} : { chainId: chain.id }),
    },
  )
}
