/**
 * The filling capability of an EVM chain, for the reference solver: fills through the multicaller,
 * refunds out of the depository (allocator-signed `execute`) or out of a request's deposit address.
 *
 * Signing never broadcasts. The solver stores `{transactionId, raw}` first and broadcasts after, so
 * a crash between the two is healed by broadcasting the same bytes again: the chain takes them once.
 * When a simulation reverts, the transaction is still signed (with a fallback gas limit): the chain's
 * verdict is the one the solver records, through {@link FillingCapability.outcome}'s decoded revert.
 */

import {
  type AddressRole,
  type DestinationSwap,
  type FillingCapability,
  type FillRequest,
  type FinalityPolicy,
  type HubExecution,
  type HubRelayCapability,
  invalidAddressError,
  invalidCurrencyError,
  type PermitDeposit,
  PontisError,
  type RefundRequest,
  type RepaymentRequest,
  type ReplacementTransaction,
  repaymentLegs,
  type SignedTransaction,
  type SigningOptions,
  type SolverCredentials,
  stepItemRefusal,
  type TransactionOutcome,
} from '@pontis/core/plugin'
import {
  type Address,
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  isAddress,
  isAddressEqual,
  isHex,
  keccak256,
  maxUint256,
  type PrivateKeyAccount,
  parseAbi,
  parseTransaction,
  recoverTransactionAddress,
  recoverTypedDataAddress,
  type SignedAuthorization,
  size,
  slice,
  type Transaction,
  type TransactionReceipt,
  type TransactionSerialized,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import {
  CALL_REQUEST_TYPES,
  depositoryAbi,
  erc20Abi,
  multicallerAbi,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
} from './abi.js'
import { checkedAuthorizations } from './authorizations.js'
import {
  depositAddressKey,
  type EvmChainContext,
  estimateGasOr,
  type FeeTerms,
  feeTerms,
  GAS,
  GAS_HEADROOM_PERCENT,
  type GasCall,
  isNativeCurrency,
  tokenDomain,
} from './quoting.js'
import { CALL_REQUEST_PARAMETERS } from './reading.js'
import { rpc } from './rpc.js'
import {
  confirmationsOf,
  decodeRevert,
  findTransaction,
  lookUpReceipt,
  revertDataOf,
} from './transactions.js'
import { type FillSwap, type FillSwapPlan, type FillSwapRequest, multicallerExecutor } from './uniswap.js'

/**
 * Expiration of depository refund requests: none. The depository's replay key is the struct hash of
 * the whole request, so a time-based expiration would make a re-signed refund (same refund id) a new
 * request that pays again. With a fixed expiration the same refund id, recipient, currency and amount
 * always hash to the same request, and the chain pays it at most once.
 */
export const REFUND_EXPIRATION = maxUint256

/** Currencies one repayment `execute` pays back at most: a bounded transaction size and gas. */
export const MAX_REPAYMENT_LEGS = 16

/** Gas limits used when a simulation reverts: the transaction is signed anyway and the chain decides. */
export const FALLBACK_GAS = {
  /** A whole fill (payments and calls). */
  fill: 500_000n,
  /** The payment part of a fill whose calls have a caller-given gas limit. */
  fillPayments: 200_000n,
  /** A depository `execute`, per payout. */
  refund: 250_000n,
} as const

// Running calls through the executor: its own call (cold account, calldata copy) and, per call, a
// value-bearing CALL to a cold account.
const EXECUTOR_OVERHEAD_GAS = 30_000n
const PER_CALL_OVERHEAD_GAS = 15_000n
const CALLDATA_GAS_PER_BYTE = 16n

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/
/** secp256k1n / 2: a larger s is the malleable twin of a valid signature. */
const SECP256K1_HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n

/** The signer of a key; the key itself never appears in an error. */
function signerOf(key: string | undefined, name: 'solverKey' | 'allocatorKey'): PrivateKeyAccount {
  if (typeof key !== 'string' || !PRIVATE_KEY.test(key)) {
    throw new TypeError(`credentials.${name} must be a 0x-prefixed 32-byte hex private key`)
  }
  return privateKeyToAccount(key as Hex)
}

function bytes32(value: string, field: string): Hex {
  if (typeof value !== 'string' || !isHex(value, { strict: true }) || size(value) !== 32) {
    throw new PontisError(
      'INVALID_REQUEST',
      `${field} must be 32 bytes of 0x-hex, got '${String(value).slice(0, 80)}'`,
    )
  }
  return value
}

/** Messages of an error and its causes, for matching node replies such as "nonce too low". */
function messagesOf(error: unknown): string {
  const parts: string[] = []
  for (let current = error, depth = 0; current && depth < 10; depth++) {
    const { message, details } = current as { message?: unknown; details?: unknown }
    if (typeof message === 'string') parts.push(message)
    if (typeof details === 'string') parts.push(details)
    current = (current as { cause?: unknown }).cause
  }
  return parts.join(' | ')
}

/** The parts of the hub's oracle contract (PontisOracleHub) the repayment's relays use. */
const hubAbi = parseAbi([
  'function execute(bytes32 idempotencyKey, bytes[] actions, bytes[] signatures)',
  'function executed(bytes32 idempotencyKey) view returns (bool)',
  'function signers() view returns (address[])',
  'function threshold() view returns (uint256)',
])
/** Gas of a hub execution when the node cannot estimate it: a few storage writes per action. */
const HUB_EXECUTION_FALLBACK_GAS = 250_000n

/** A replacement offers at least 25 % more per gas than the transaction it replaces (nodes want 10 %). */
const REPLACEMENT_BUMP_PERCENT = 125n
/** The cap on replacement fees when the chain entry sets none: 1000 gwei. */
export const DEFAULT_MAX_REPLACEMENT_FEE_PER_GAS = 1_000_000_000_000n

/** The amount of an ERC-20 `approve(spender, amount)` call; undefined for any other call. */
function approvedAmount(data: Hex): bigint | undefined {
  try {
    const call = decodeFunctionData({ abi: erc20Abi, data })
    return call.functionName === 'approve' ? (call.args[1] as bigint) : undefined
  } catch {
    return undefined
  }
}

/** The filling capability of a chain with a multicaller (and, for depository refunds, a depository). */
export function createEvmFilling(
  context: EvmChainContext,
  finality: FinalityPolicy,
  options: { readonly maxReplacementFeePerGas?: bigint; readonly fillSwap?: FillSwap } = {},
): FillingCapability {
  const fillSwap = options.fillSwap
  const maxReplacementFee = options.maxReplacementFeePerGas ?? DEFAULT_MAX_REPLACEMENT_FEE_PER_GAS
  const chainName = `${context.label.displayName} (${context.label.id})`
  const isNative = (currency: string) => isNativeCurrency(context, currency)

  const address = (value: string, role: AddressRole): Address => {
    if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
      throw invalidAddressError(
        role,
        value,
        'expected 0x followed by 40 hexadecimal characters',
        context.label,
      )
    }
    return value as Address
  }
  const currency = (value: string): Address => {
    if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
      throw invalidCurrencyError(
        'currency',
        value,
        'expected a token address or the zero address',
        context.label,
      )
    }
    return value as Address
  }

  const estimate = (call: GasCall, fallback: bigint, headroom = true) =>
    estimateGasOr(context, call, fallback, headroom)

  const nextNonce = async (owner: Address): Promise<bigint> =>
    BigInt(
      await rpc(context.label, () =>
        context.client.getTransactionCount({ address: owner, blockTag: 'pending' }),
      ),
    )

  /**
   * Signs with `nonce` when the caller allocated one (the solver does, per chain and signer), else
   * with the sender's next nonce counting its pending transactions.
   */
  const signTransaction = async (
    account: PrivateKeyAccount,
    transaction: { to: Address; data: Hex; value: bigint; gas: bigint },
    fees: FeeTerms,
    nonce?: bigint,
    authorizationList?: readonly SignedAuthorization[],
  ): Promise<Hex> => {
    const chosen = nonce ?? (await nextNonce(account.address))
    if (chosen < 0n || chosen > BigInt(Number.MAX_SAFE_INTEGER))
      throw new RangeError(`nonce ${chosen} is out of range`)
    const common = { chainId: context.chainId, nonce: Number(chosen), ...transaction }
    if (authorizationList) {
      // EIP-7702: a type-4 transaction, EIP-1559 fee terms (the quote only offers it on such chains).
      return account.signTransaction({
        ...common,
        type: 'eip7702',
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        authorizationList: [...authorizationList],
      })
    }
    return context.eip1559
      ? account.signTransaction({
          ...common,
          type: 'eip1559',
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        })
      : account.signTransaction({ ...common, type: 'legacy', gasPrice: fees.maxFeePerGas })
  }

  const signed = (raw: Hex, amount: bigint): SignedTransaction => ({
    transactionId: keccak256(raw),
    raw,
    amount,
  })

  const fillData = (
    orderId: Hex,
    payments: readonly { token: Address; recipient: Address; amount: bigint }[],
    calls: readonly { to: Address; value: bigint; data: Hex }[],
  ): Hex =>
    // The order id is also the last 32 bytes of the calldata: that is how fills are recognised.
    concat([
      encodeFunctionData({ abi: multicallerAbi, functionName: 'fill', args: [orderId, payments, calls] }),
      orderId,
    ])

  /** The payments and calls of a fill whose payment is swapped (only on chains with a fill swap). */
  async function destinationSwapPlan(multicaller: Address, request: FillSwapRequest): Promise<FillSwapPlan> {
    if (!fillSwap) {
      throw new PontisError('NO_SWAP_ROUTES_FOUND', `${chainName} runs no destination swaps in its fills.`)
    }
    return fillSwap.plan(request, await multicallerExecutor(context, multicaller))
  }

  async function signFill(
    request: FillRequest,
    credentials: SolverCredentials,
    options: SigningOptions = {},
  ): Promise<SignedTransaction> {
    const multicaller = context.multicaller
    if (!multicaller) {
      throw new PontisError('UNSUPPORTED_ROUTE', `${chainName} has no multicaller configured for fills.`)
    }
    const solver = signerOf(credentials.solverKey, 'solverKey')
    const orderId = bytes32(request.orderId, 'orderId')
    const recipient = address(request.recipient, 'recipient')
    const token = currency(request.currencyId)
    const native = context.nativeCurrencyId as Address
    const userCalls = request.calls.map((call, index) => {
      // Whole bytes only: an odd digit count is a truncated or mangled call.
      if (!isHex(call.data, { strict: true }) || call.data.length % 2 !== 0) {
        throw new PontisError('INVALID_EXTRA_TXS', `txs[${index}].data must be 0x-hex calldata.`, { index })
      }
      return { to: address(call.to, 'contract'), value: call.value, data: call.data }
    })
    const swap = request.destinationSwap
      ? await destinationSwapPlan(multicaller, {
          swap: request.destinationSwap,
          currencyId: token,
          amount: request.amount,
          recipient,
          orderId,
        })
      : undefined
    if (swap && userCalls.length > 0) {
      throw new PontisError('UNSUPPORTED_ROUTE', 'A fill that swaps runs no other destination calls.')
    }
    const payments = swap
      ? [...swap.payments]
      : [{ token: isNative(token) ? native : token, recipient, amount: request.amount }]
    if (request.topupNativeAmount > 0n)
      payments.push({ token: native, recipient, amount: request.topupNativeAmount })
    const calls = swap ? [...swap.calls] : userCalls
    const paymentsValue = payments.reduce(
      (sum, payment) => (isNative(payment.token) ? sum + payment.amount : sum),
      0n,
    )
    const value = paymentsValue + calls.reduce((sum, call) => sum + call.value, 0n)
    const data = fillData(orderId, payments, calls)
    const authorizationList = request.authorizations?.length
      ? await checkedAuthorizations(context, request.authorizations)
      : undefined
    const delegations = authorizationList ? { authorizationList } : {}

    const gas =
      request.callsGasLimit === undefined
        ? estimate(
            { account: solver.address, to: multicaller, data, value, ...delegations },
            // A swap that would revert now (its minimum) is still sent: the chain's verdict refunds it.
            swap && fillSwap
              ? FALLBACK_GAS.fill + fillSwap.gas(request.destinationSwap as DestinationSwap)
              : FALLBACK_GAS.fill,
          )
        : estimate(
            {
              account: solver.address,
              to: multicaller,
              data: fillData(orderId, payments, []),
              value: paymentsValue,
              ...delegations,
            },
            FALLBACK_GAS.fillPayments,
          ).then((paymentsGas) => {
            const callsLimit = request.callsGasLimit ?? 0n
            const callsCalldata = BigInt(size(data) - size(fillData(orderId, payments, [])))
            // 1/32 more than the limit: each call level keeps back 1/64 of the gas it forwards.
            return (
              paymentsGas +
              callsLimit +
              callsLimit / 32n +
              (calls.length > 0 ? EXECUTOR_OVERHEAD_GAS + PER_CALL_OVERHEAD_GAS * BigInt(calls.length) : 0n) +
              CALLDATA_GAS_PER_BYTE * callsCalldata
            )
          })
    const [gasLimit, fees] = await Promise.all([gas, feeTerms(context)])
    const raw = await signTransaction(
      solver,
      { to: multicaller, data, value, gas: gasLimit },
      fees,
      options.nonce,
      authorizationList,
    )
    return signed(raw, request.amount)
  }

  /** A depository payout of `amount` of `token` to `recipient`: a native transfer or an ERC-20 `transfer`. */
  const payoutCall = (token: Address, recipient: Address, amount: bigint) =>
    isNative(token)
      ? { to: recipient, data: '0x' as Hex, value: amount, allowFailure: false }
      : {
          to: token,
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, amount] }),
          value: 0n,
          allowFailure: false,
        }

  /**
   * The depository's allocator-signed `execute` of `calls`, sent from the solver account. `id` is
   * the request's nonce: with the fixed expiration, the same id and calls always hash to the same
   * request, which the depository executes at most once.
   */
  async function signDepositoryExecute(
    id: Hex,
    calls: readonly ReturnType<typeof payoutCall>[],
    credentials: SolverCredentials,
    options: SigningOptions,
  ): Promise<Hex> {
    const depository = context.depository
    if (!depository) {
      throw new PontisError(
        'UNSUPPORTED_ROUTE',
        `${chainName} has no depository configured (protocol.v2.depository).`,
      )
    }
    const solver = signerOf(credentials.solverKey, 'solverKey')
    if (credentials.allocatorKey === undefined) {
      throw new TypeError('credentials.allocatorKey is required for payouts out of the depository')
    }
    const allocator = signerOf(credentials.allocatorKey, 'allocatorKey')
    const callRequest = { calls, nonce: hexToBigInt(id), expiration: REFUND_EXPIRATION }
    const signature = await allocator.signTypedData({
      domain: {
        name: 'RelayDepository',
        version: '1',
        chainId: context.chainId,
        verifyingContract: depository,
      },
      types: CALL_REQUEST_TYPES,
      primaryType: 'CallRequest',
      message: callRequest,
    })
    const data = encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'execute',
      args: [callRequest, signature],
    })
    const fallbackGas = FALLBACK_GAS.refund * BigInt(Math.max(1, calls.length))
    const [gas, fees] = await Promise.all([
      estimate({ account: solver.address, to: depository, data, value: 0n }, fallbackGas),
      feeTerms(context),
    ])
    return signTransaction(solver, { to: depository, data, value: 0n, gas }, fees, options.nonce)
  }

  async function signDepositoryRefund(
    request: RefundRequest,
    credentials: SolverCredentials,
    options: SigningOptions,
  ): Promise<SignedTransaction> {
    const refundId = bytes32(request.refundId, 'refundId')
    const call = payoutCall(
      currency(request.currencyId),
      address(request.recipient, 'recipient'),
      request.amount,
    )
    return signed(await signDepositoryExecute(refundId, [call], credentials, options), request.amount)
  }

  /** All legs in one `execute`: one payout call per currency, to the solver. */
  async function signRepayment(
    request: RepaymentRequest,
    credentials: SolverCredentials,
    options: SigningOptions = {},
  ): Promise<SignedTransaction> {
    const repaymentId = bytes32(request.repaymentId, 'repaymentId')
    const total = request.legs.reduce((sum, leg) => sum + leg.amount, 0n)
    return signed(
      await signDepositoryExecute(repaymentId, repaymentCalls(request), credentials, options),
      total,
    )
  }

  /** One payout call per leg, to the solver: what {@link signRepayment} signs. */
  function repaymentCalls(request: RepaymentRequest) {
    const recipient = address(request.recipient, 'recipient')
    return repaymentLegs(request, MAX_REPAYMENT_LEGS, context.label).map((leg) =>
      payoutCall(currency(leg.currencyId), recipient, leg.amount),
    )
  }

  /** The ABI-encoded `CallRequest` {@link signRepayment} has the allocator sign (what `readWithdrawal` takes). */
  function repaymentWithdrawal(request: RepaymentRequest): Hex {
    const callRequest = {
      calls: repaymentCalls(request),
      nonce: hexToBigInt(bytes32(request.repaymentId, 'repaymentId')),
      expiration: REFUND_EXPIRATION,
    }
    return encodeAbiParameters(CALL_REQUEST_PARAMETERS, [callRequest])
  }

  const hubRelay: HubRelayCapability = {
    executed: (contract, key) =>
      rpc(context.label, () =>
        context.client.readContract({
          address: address(contract, 'contract'),
          abi: hubAbi,
          functionName: 'executed',
          args: [bytes32(key, 'idempotencyKey')],
        }),
      ),
    async signers(contract) {
      const hub = address(contract, 'contract')
      const [signers, threshold] = await rpc(context.label, () =>
        Promise.all([
          context.client.readContract({ address: hub, abi: hubAbi, functionName: 'signers' }),
          context.client.readContract({ address: hub, abi: hubAbi, functionName: 'threshold' }),
        ]),
      )
      return { signers: signers.map((signer) => signer.toLowerCase()), threshold: Number(threshold) }
    },
    /** The hub wants the signatures by strictly ascending signer address. */
    async signExecution(
      contract: string,
      execution: HubExecution,
      credentials,
      options: SigningOptions = {},
    ) {
      const hub = address(contract, 'contract')
      const solver = signerOf(credentials.solverKey, 'solverKey')
      const signatures = [...execution.signatures]
        .sort((a, b) => (hexToBigInt(a.signer as Hex) < hexToBigInt(b.signer as Hex) ? -1 : 1))
        .map((entry) => entry.signature as Hex)
      const data = encodeFunctionData({
        abi: hubAbi,
        functionName: 'execute',
        args: [
          bytes32(execution.idempotencyKey, 'idempotencyKey'),
          execution.actions.map((action) => action as Hex),
          signatures,
        ],
      })
      const [gas, fees] = await Promise.all([
        estimate({ account: solver.address, to: hub, data, value: 0n }, HUB_EXECUTION_FALLBACK_GAS),
        feeTerms(context),
      ])
      return signed(await signTransaction(solver, { to: hub, data, value: 0n, gas }, fees, options.nonce), 0n)
    },
  }

  async function signDepositAddressRefund(
    request: RefundRequest,
    requestId: string,
  ): Promise<SignedTransaction> {
    const seed = context.depositAddressSeed
    if (!seed) {
      throw new PontisError(
        'UNSUPPORTED_ROUTE',
        `${chainName} has no deposit addresses (plugin.depositAddressSeed).`,
      )
    }
    if (!isNative(currency(request.currencyId))) {
      throw invalidCurrencyError(
        'currency',
        request.currencyId,
        'refunds out of a deposit address are made in the native currency only',
        context.label,
      )
    }
    const recipient = address(request.recipient, 'recipient')
    const owner = privateKeyToAccount(depositAddressKey(seed, bytes32(requestId, 'source.requestId')))
    const [code, balance, fees] = await Promise.all([
      rpc(context.label, () => context.client.getCode({ address: recipient })),
      rpc(context.label, () => context.client.getBalance({ address: owner.address })),
      feeTerms(context),
    ])
    // A plain transfer to an account without code costs exactly what the node estimates; a contract
    // recipient may run code on receipt, so it gets headroom.
    const hasCode = code !== undefined && code !== '0x'
    const gas = await estimate({ account: owner.address, to: recipient, value: 0n }, GAS.transfer, hasCode)
    const fee = gas * fees.maxFeePerGas
    if (request.amount <= fee) {
      throw new PontisError(
        'INSUFFICIENT_FUNDS',
        `The refund of ${request.amount} does not cover its own transfer fee of ${fee} on ${chainName}.`,
        { chainId: context.chainId, amount: request.amount.toString(), fee: fee.toString() },
      )
    }
    if (balance < request.amount) {
      throw new PontisError(
        'INSUFFICIENT_FUNDS',
        `The deposit address ${owner.address} holds ${balance}, less than the refund amount ${request.amount} on ${chainName}.`,
        { chainId: context.chainId, amount: request.amount.toString(), balance: balance.toString() },
      )
    }
    // The address pays its own fee out of the amount; what it sends is the rest.
    const value = request.amount - fee
    const raw = await signTransaction(owner, { to: recipient, data: '0x', value, gas }, fees)
    return signed(raw, value)
  }

  /** Replays a reverted transaction at its block to get the revert data, and names it (best effort). */
  async function revertOf(
    transaction: Transaction,
    receipt: TransactionReceipt,
  ): Promise<Record<string, unknown>> {
    const outOfGas = receipt.gasUsed >= transaction.gas ? { outOfGas: true } : {}
    if (!transaction.to) return { error: 'unknown', ...outOfGas }
    const to = transaction.to
    try {
      await rpc(context.label, () =>
        context.client.call({
          account: transaction.from,
          to,
          data: transaction.input,
          value: transaction.value,
          gas: transaction.gas,
          blockNumber: receipt.blockNumber,
        }),
      )
    } catch (error) {
      if (error instanceof PontisError) throw error
      const data = revertDataOf(error)
      if (data !== undefined) return { ...decodeRevert(data), ...outOfGas }
      return { error: 'unknown', ...outOfGas }
    }
    // The replay succeeded: the revert depended on state that has moved on since.
    return { error: 'unknown', replayed: 'succeeded', ...outOfGas }
  }

  async function signPermitDeposit(
    permit: PermitDeposit,
    signature: string,
    credentials: SolverCredentials,
    options: SigningOptions = {},
  ): Promise<SignedTransaction> {
    const depository = context.depository
    if (!depository) {
      throw new PontisError(
        'UNSUPPORTED_ROUTE',
        `${chainName} has no depository configured (protocol.v2.depository).`,
      )
    }
    const solver = signerOf(credentials.solverKey, 'solverKey')
    const requestId = bytes32(permit.requestId, 'requestId')
    const depositor = address(permit.depositor, 'depositor')
    const token = currency(permit.currencyId)
    if (!isHex(signature, { strict: true }) || size(signature) !== 65) {
      throw new PontisError(
        'INVALID_SIGNATURE',
        'The authorization signature must be 65 bytes of 0x-hex (r, s, v).',
      )
    }
    // The token rejects the malleable twin of a signature; say so now rather than after a revert.
    if (hexToBigInt(slice(signature, 32, 64)) > SECP256K1_HALF_ORDER) {
      throw new PontisError('INVALID_SIGNATURE', 'The authorization signature is not canonical (high s).')
    }
    if (permit.validBefore * 1000n <= BigInt(Date.now())) {
      throw new PontisError(
        'SIGNATURE_EXPIRED',
        `The authorization expired at ${new Date(Number(permit.validBefore) * 1000).toISOString()}; quote again.`,
      )
    }
    const domain = await tokenDomain(context, token)
    if (!domain) {
      throw new PontisError(
        'PERMIT_FAILED',
        `Could not determine the EIP-712 domain of ${token} on ${chainName}.`,
      )
    }
    const message = {
      from: depositor,
      to: depository,
      value: permit.amount,
      validAfter: permit.validAfter,
      validBefore: permit.validBefore,
      nonce: requestId,
    }
    let signer: Address
    try {
      signer = await recoverTypedDataAddress({
        domain,
        types: RECEIVE_WITH_AUTHORIZATION_TYPES,
        primaryType: 'ReceiveWithAuthorization',
        message,
        signature,
      })
    } catch {
      throw new PontisError('INVALID_SIGNATURE', 'The authorization signature cannot be recovered.')
    }
    if (!isAddressEqual(signer, depositor)) {
      throw new PontisError(
        'INVALID_SIGNATURE',
        `The authorization is not signed by the depositor ${depositor}: check the token, amount, validity window and request id.`,
      )
    }
    const data = encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'depositErc20WithAuthorization',
      args: [depositor, token, permit.amount, requestId, permit.validAfter, permit.validBefore, signature],
    })
    const [gas, fees] = await Promise.all([
      estimate({ account: solver.address, to: depository, data, value: 0n }, GAS.permitDeposit),
      feeTerms(context),
    ])
    const raw = await signTransaction(solver, { to: depository, data, value: 0n, gas }, fees, options.nonce)
    return signed(raw, permit.amount)
  }

  /**
   * One transaction item of another intent API's quote (Relay's and Pontis's `evm-transaction`
   * items: `to`, `data`, `value`, `chainId`, optional `from` and `gas`), sent from the solver's
   * account with the nonce the solver allocated and this chain's own fee terms.
   */
  async function signStep(
    item: Readonly<Record<string, unknown>>,
    spend: { readonly currencyId: string; readonly amount: bigint },
    credentials: SolverCredentials,
    options: SigningOptions = {},
  ): Promise<SignedTransaction> {
    const solver = signerOf(credentials.solverKey, 'solverKey')
    const refuse = stepItemRefusal(item, 'evm-transaction', context.label)
    if (typeof item.to !== 'string' || !isAddress(item.to, { strict: false }))
      refuse('its `to` is no address')
    if (
      item.from !== undefined &&
      (typeof item.from !== 'string' || !isAddress(item.from, { strict: false }))
    )
      refuse('its `from` is no address')
    if (typeof item.from === 'string' && !isAddressEqual(item.from as Address, solver.address))
      refuse(`it is to be sent by ${item.from}, not by the solver`)
    const data = item.data ?? '0x'
    if (typeof data !== 'string' || !isHex(data, { strict: true })) refuse('its `data` is not 0x-hex')
    const decimal = (value: unknown, field: string): bigint | undefined => {
      if (value === undefined || value === null) return undefined
      if (typeof value !== 'string' || !/^[0-9]+$/.test(value))
        return refuse(`its \`${field}\` is not a decimal`)
      return BigInt(value)
    }
    const to = item.to as Address
    const value = decimal(item.value, 'value') ?? 0n
    // The solver's account holds no standing allowances, so what an item can take is its value and
    // what it approves; both are bounded by the move.
    if (isNativeCurrency(context, spend.currencyId)) {
      if (value > spend.amount) refuse(`it sends ${value}, more than the move's ${spend.amount}`)
    } else {
      if (value > 0n) refuse(`it sends ${value} of the native currency in a move of a token`)
      if (isAddressEqual(to, spend.currencyId as Address)) {
        const approved = approvedAmount(data as Hex)
        if (approved === undefined) refuse('its call to the token is not an approve')
        if ((approved as bigint) > spend.amount)
          refuse(`it approves ${approved}, more than the move's ${spend.amount}`)
      }
    }
    const given = decimal(item.gas, 'gas')
    const [gas, fees] = await Promise.all([
      // No limit given: it must simulate (a step that reverts now is not worth sending).
      given ??
        rpc(context.label, () =>
          context.client.estimateGas({ account: solver.address, to, data: data as Hex, value }),
        ).then((simulated) => (simulated * GAS_HEADROOM_PERCENT) / 100n),
      feeTerms(context),
    ])
    const raw = await signTransaction(solver, { to, data: data as Hex, value, gas }, fees, options.nonce)
    return signed(raw, value)
  }

  return {
    solverAddress: (credentials: SolverCredentials): string =>
      signerOf(credentials.solverKey, 'solverKey').address,

    nextNonce: (owner: string): Promise<bigint> => nextNonce(address(owner, 'solver')),

    signFill,

    signStep,

    signRefund(
      request: RefundRequest,
      credentials: SolverCredentials,
      options: SigningOptions = {},
    ): Promise<SignedTransaction> {
      // A deposit address signs as itself: its nonce is its own, never the solver's.
      return request.source.kind === 'depository'
        ? signDepositoryRefund(request, credentials, options)
        : signDepositAddressRefund(request, request.source.requestId)
    },

    ...(context.depository
      ? { signPermitDeposit, signRepayment, repaymentWithdrawal, maxRepaymentLegs: MAX_REPAYMENT_LEGS }
      : {}),

    hubRelay,

    async replace(raw: string, credentials: SolverCredentials): Promise<ReplacementTransaction | undefined> {
      const solver = signerOf(credentials.solverKey, 'solverKey')
      if (!isHex(raw, { strict: true })) throw new PontisError('INVALID_REQUEST', 'raw must be 0x-hex')
      // Only the solver's own transactions: a deposit address signs as itself.
      const sender = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized })
      if (!isAddressEqual(sender, solver.address)) return undefined
      const stuck = parseTransaction(raw)
      if (stuck.to === undefined || stuck.to === null || stuck.nonce === undefined) return undefined
      const bump = (fee: bigint) => (fee * REPLACEMENT_BUMP_PERCENT + 99n) / 100n
      const oldMax = stuck.maxFeePerGas ?? stuck.gasPrice ?? 0n
      const oldPriority = stuck.maxPriorityFeePerGas ?? stuck.gasPrice ?? 0n
      // Fresh fees: the read cache may still hold the ones from before a spike.
      const market = await rpc(context.label, () =>
        context.eip1559
          ? context.client.estimateFeesPerGas({ type: 'eip1559', chain: null })
          : context.client
              .getGasPrice()
              .then((gasPrice) => ({ maxFeePerGas: gasPrice, maxPriorityFeePerGas: gasPrice })),
      )
      const maxFeePerGas = [bump(oldMax), market.maxFeePerGas ?? 0n].reduce((a, b) => (a > b ? a : b))
      if (maxFeePerGas > maxReplacementFee) return undefined
      const wantedPriority = [bump(oldPriority), market.maxPriorityFeePerGas ?? 0n].reduce((a, b) =>
        a > b ? a : b,
      )
      const maxPriorityFeePerGas = wantedPriority < maxFeePerGas ? wantedPriority : maxFeePerGas
      const replacement = await signTransaction(
        solver,
        {
          to: stuck.to,
          data: stuck.data ?? '0x',
          value: stuck.value ?? 0n,
          gas: stuck.gas ?? FALLBACK_GAS.fill,
        },
        { maxFeePerGas, maxPriorityFeePerGas },
        BigInt(stuck.nonce),
        // A type-4 fill keeps the delegations it carries (authorizationList).
        stuck.authorizationList?.length ? stuck.authorizationList : undefined,
      )
      return { transactionId: keccak256(replacement), raw: replacement }
    },

    async broadcast(raw: string): Promise<void> {
      if (!isHex(raw, { strict: true }))
        throw new PontisError('INVALID_REQUEST', 'raw must be a 0x-hex signed transaction')
      const parsed = (() => {
        try {
          return parseTransaction(raw)
        } catch {
          throw new PontisError('INVALID_REQUEST', 'raw is not a signed EVM transaction')
        }
      })()
      if (parsed.chainId !== undefined && parsed.chainId !== context.chainId) {
        throw new PontisError(
          'INVALID_REQUEST',
          `The transaction is for chain ${parsed.chainId}, not ${chainName}.`,
        )
      }
      const hash = keccak256(raw)
      try {
        await rpc(context.label, () =>
          context.client.request({ method: 'eth_sendRawTransaction', params: [raw] }),
        )
      } catch (error) {
        if (error instanceof PontisError) throw error
        const reason = messagesOf(error)
        // The node has it already (in the mempool or mined): the same bytes, so nothing to do.
        if (
          /already known|already imported|known transaction|already exists|nonce too low|nonce.*(used|lower)/i.test(
            reason,
          )
        ) {
          if (await findTransaction(context, hash)) return
          if (!/nonce/i.test(reason)) return
          throw new PontisError(
            'UNKNOWN_ERROR',
            `${chainName} refused the transaction: its nonce was used by another transaction.`,
            { chainId: context.chainId, reason: 'nonce_used' },
          )
        }
        if (/insufficient funds/i.test(reason)) {
          throw new PontisError(
            'INSUFFICIENT_FUNDS',
            `The sender cannot pay the transaction's value and gas on ${chainName}.`,
            { chainId: context.chainId, reason: 'insufficient_funds' },
          )
        }
        const short = reason.split(' | ')[0]?.slice(0, 200) ?? 'unknown reason'
        throw new PontisError('UNKNOWN_ERROR', `${chainName} refused the transaction: ${short}`, {
          chainId: context.chainId,
          reason: 'rejected',
        })
      }
    },

    async outcome(transactionId: string): Promise<TransactionOutcome> {
      const hash = bytes32(transactionId, 'transactionId')
      const lookup = await lookUpReceipt(context, hash)
      if (!lookup.mined) {
        return { transactionId, state: lookup.state, final: false }
      }
      const { confirmations, final } = await confirmationsOf(context, lookup.receipt.blockNumber, finality)
      if (lookup.state === 'success') return { transactionId, state: 'success', final, confirmations }
      const transaction = await findTransaction(context, hash)
      const revert = transaction ? await revertOf(transaction, lookup.receipt) : { error: 'unknown' }
      return { transactionId, state: 'reverted', final, confirmations, revert }
    },
  }
}
