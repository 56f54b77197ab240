import {
  type ChainLabel,
  type ChainWitness,
  type CostEstimate,
  type DepositStepsRequest,
  type DestinationCall,
  type FillCostRequest,
  type OriginCostRequest,
  type OriginSwapQuote,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
  type SwapSource,
} from '@pontis/core/plugin'
import {
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  getTypesForEIP712Domain,
  type Hex,
  hashDomain,
  keccak256,
  type PublicClient,
  type SignedAuthorization,
} from 'viem'
import { privateKeyToAddress } from 'viem/accounts'
import { depositoryAbi, erc20Abi, multicallerAbi, RECEIVE_WITH_AUTHORIZATION_TYPES } from './abi.js'
import { checkedAuthorizations } from './authorizations.js'
import { type ReadCache, rpc } from './rpc.js'
import type { DepositSwap, DepositSwapRequest, FillSwap } from './uniswap.js'

const ZERO_ID: Hex = `0x${'00'.repeat(32)}`

/** The execute API's `kind` for an EIP-3009 `receiveWithAuthorization` the depository redeems. */
export const EVM_PERMIT_KIND = 'eip3009-receive'

/** A destination call as the order's `output.calls` carries it: `abi.encode(address, uint256, bytes)`. */
export function encodeEvmDestinationCall(call: DestinationCall): Hex {
  return encodeAbiParameters(
    [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }],
    [call.to as Address, call.value, call.data as Hex],
  )
}

/** Fallback gas limits for when a simulation cannot run (no balance or allowance yet on an indicative quote). */
export const GAS = {
  transfer: 21_000n,
  nativeDeposit: 50_000n,
  erc20Approve: 60_000n,
  erc20Deposit: 90_000n,
  permitDeposit: 130_000n,
  erc20Transfer: 65_000n,
  /** A direct native deposit: the transfer to the deposit receiver and its `depositNative` call. */
  directNativeDeposit: 60_000n,
  /** 32 bytes of non-zero calldata carrying the order id. */
  orderIdTail: 16n * 32n,
  /**
   * A token deposit writes the depository's balance of the token. A repayment or sweep can empty
   * it between the simulation and the deposit, and writing a zero slot costs 17 100 more (20 000
   * against 2 900), plus the 1/64 of it a call keeps back: without this a wallet using the step's
   * limit ran out of gas.
   */
  depositoryBalanceWrite: 17_400n,
} as const

/** Simulated gas of a deposit of `currencyId` plus what its write of the depository's balance may add. */
export function withDepositoryWrite(context: EvmChainContext, currencyId: string, gas: bigint): bigint {
  return isNative(context, currencyId) ? gas : gas + GAS.depositoryBalanceWrite
}

/** Headroom on simulated gas so a wallet's transaction does not run out when state moves a little. */
export const GAS_HEADROOM_PERCENT = 120n

/** What the capabilities of one EVM chain share: its client, cache and configured contracts. */
export interface EvmChainContext {
  readonly label: ChainLabel
  readonly chainId: number
  readonly client: PublicClient
  readonly cache: ReadCache
  readonly depository: Address | undefined
  /** The fill multicaller; none: the chain has no filling capability. */
  readonly multicaller: Address | undefined
  /**
   * The chain record's `contracts.relayReceiver`: takes a plain native transfer whose calldata is
   * the request id and deposits it into the depository (`explicitDeposit: false`). None: native
   * deposits on this chain are depository calls only.
   */
  readonly depositReceiver?: Address | undefined
  readonly nativeCurrencyId: string
  readonly eip1559: boolean
  readonly depositAddressSeed: Hex | undefined
  /** Most blocks per `eth_getLogs` call. */
  readonly maxLogBlockRange: number
  /**
   * The swap router of the chain's origin swaps: its transactions tagged with a request id that pay
   * the depository a token are that request's deposit. None: the chain runs no origin swaps.
   */
  readonly swapRouter?: Address | undefined
  /** The wrapped native token the swap router unwraps native output from (its `Withdrawal` events). */
  readonly wrappedNative?: Address | undefined
  /**
   * The chain's other configured nodes (`rpc.fallbackUrls`), each asked on its own: a fact is
   * trusted only when a majority of all the nodes agree on the hash of its block.
   */
  readonly witnesses?: readonly RpcWitness[]
  /** Told about a witness that answered another block hash for the same height. */
  readonly onDisagreement?: (witness: RpcWitness, blockNumber: bigint) => void
}

/** One more node of the chain, asked separately to confirm what the main client read. */
export interface RpcWitness extends ChainWitness {
  readonly client: PublicClient
}

/** EIP-1559 fee caps (both the gas price on legacy chains). */
export interface FeeTerms {
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

/** The native currency id compared without regard to case (a checksummed zero address is still native). */
export const isNativeCurrency = (context: EvmChainContext, currency: string): boolean =>
  currency.toLowerCase() === context.nativeCurrencyId.toLowerCase()
const isNative = isNativeCurrency

function depositoryOf(context: EvmChainContext): Address {
  if (!context.depository) {
    throw new PontisError(
      'UNSUPPORTED_ROUTE',
      `${context.label.displayName} has no depository configured (protocol.v2.depository).`,
    )
  }
  return context.depository
}

/** EIP-1559 fee terms from the chain (legacy gas price where the chain has no 1559), cached for a block or so. */
export function feeTerms(context: EvmChainContext): Promise<FeeTerms> {
  return context.cache.read('fees', () =>
    rpc(context.label, async () => {
      if (!context.eip1559) {
        const gasPrice = await context.client.getGasPrice()
        return { maxFeePerGas: gasPrice, maxPriorityFeePerGas: gasPrice }
      }
      const fees = await context.client.estimateFeesPerGas({ type: 'eip1559', chain: null })
      return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas }
    }),
  )
}

/** A transaction to simulate; with `authorizationList`, as the EIP-7702 transaction that carries it. */
export interface GasCall {
  readonly account: Address
  readonly to: Address
  readonly data?: Hex
  readonly value?: bigint
  readonly authorizationList?: readonly SignedAuthorization[]
}

/** The part of a simulation's cache key the authorizations make (empty without them). */
function authorizationsKey(call: GasCall): string {
  return (call.authorizationList ?? [])
    .map((item) => `:${item.address}:${item.nonce}:${item.r}:${item.s}`)
    .join('')
}

/**
 * Simulated gas (with headroom unless told otherwise), or the fallback when the simulation reverts;
 * transport trouble still throws. Uncached: signing wants a fresh figure.
 */
export async function estimateGasOr(
  context: EvmChainContext,
  call: GasCall,
  fallback: bigint,
  headroom = true,
): Promise<bigint> {
  try {
    const gas = await rpc(context.label, () => context.client.estimateGas(call))
    return headroom ? (gas * GAS_HEADROOM_PERCENT) / 100n : gas
  } catch (error) {
    if (error instanceof PontisError) throw error
    return fallback
  }
}

/** {@link estimateGasOr} memoised for the read-cache TTL: quotes of the same shape share one simulation. */
export function simulateGas(context: EvmChainContext, call: GasCall, fallback: bigint): Promise<bigint> {
  const key = `gas:${call.account}:${call.to}:${call.value ?? 0n}:${call.data ?? '0x'}${authorizationsKey(call)}`
  return context.cache.read(key, () => estimateGasOr(context, call, fallback))
}

export function readAllowance(
  context: EvmChainContext,
  owner: string,
  spender: string,
  token: string,
): Promise<bigint> {
  return context.cache.read(`allowance:${token}:${owner}:${spender}`, () =>
    rpc(context.label, () =>
      context.client.readContract({
        address: token as Address,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [owner as Address, spender as Address],
      }),
    ),
  )
}

/** The EIP-712 domain of an EIP-3009 token: its name and the version its DOMAIN_SEPARATOR was built with. */
export async function tokenDomain(context: EvmChainContext, token: Address) {
  return context.cache.read(
    `domain:${token}`,
    async () => {
      const [name, separator] = await rpc(context.label, () =>
        Promise.all([
          context.client.readContract({ address: token, abi: erc20Abi, functionName: 'name' }),
          context.client.readContract({ address: token, abi: erc20Abi, functionName: 'DOMAIN_SEPARATOR' }),
        ]),
      )
      for (const version of ['2', '1']) {
        const domain = { name, version, chainId: context.chainId, verifyingContract: token }
        const types = { EIP712Domain: getTypesForEIP712Domain({ domain }) } as const
        const candidate = hashDomain({ domain, types } as Parameters<typeof hashDomain>[0])
        if (candidate === separator) return domain
      }
      return undefined
    },
    60 * 60_000,
  )
}

function depositCall(
  context: EvmChainContext,
  request: Pick<DepositStepsRequest, 'requestId' | 'depositor' | 'currencyId' | 'amount'>,
) {
  const depository = depositoryOf(context)
  const id = request.requestId as Hex
  if (isNative(context, request.currencyId)) {
    return {
      to: depository,
      value: request.amount,
      data: encodeFunctionData({
        abi: depositoryAbi,
        functionName: 'depositNative',
        args: [request.depositor as Address, id],
      }),
    }
  }
  return {
    to: depository,
    value: 0n,
    data: encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'depositErc20',
      args: [request.depositor as Address, request.currencyId as Address, request.amount, id],
    }),
  }
}

/**
 * The direct form of a deposit (`explicitDeposit: false`, for plain-account wallets), which the
 * depository still attributes to the request and which needs no approval:
 * - native: a transfer to the deposit receiver whose calldata is the request id; the receiver
 *   forwards it as `depositNative(sender, id)`, so the depository emits the usual deposit event;
 * - ERC-20: `transfer(depository, amount)` with the request id appended to the calldata; reads
 *   find the id in the transaction and the amount in the token's `Transfer`.
 */
function directDepositCall(
  context: EvmChainContext,
  request: Pick<DepositStepsRequest, 'requestId' | 'currencyId' | 'amount'>,
) {
  const id = request.requestId as Hex
  if (isNative(context, request.currencyId)) {
    if (!context.depositReceiver) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `${context.label.displayName} lists no deposit receiver (contracts.relayReceiver), so a native deposit there cannot be a direct transfer; remove explicitDeposit: false.`,
      )
    }
    return { to: context.depositReceiver, value: request.amount, data: id }
  }
  return {
    to: request.currencyId as Address,
    value: 0n,
    data: concat([
      encodeFunctionData({
        abi: erc20Abi,
        functionName: 'transfer',
        args: [depositoryOf(context), request.amount],
      }),
      id,
    ]),
  }
}

/**
 * Gas of a direct deposit, simulated with a zero id (shared by every quote of the same shape); the
 * id's calldata is added on top, to the fallback as well (the transfer fallbacks carry no tail).
 */
function directDepositGas(
  context: EvmChainContext,
  request: Pick<DepositStepsRequest, 'depositor' | 'currencyId' | 'amount'>,
): Promise<bigint> {
  const fallback = isNative(context, request.currencyId) ? GAS.directNativeDeposit : GAS.erc20Transfer
  const call = directDepositCall(context, { ...request, requestId: ZERO_ID })
  return simulateGas(context, { account: request.depositor as Address, ...call }, fallback).then(
    (gas) =>
      (gas === fallback ? gas : withDepositoryWrite(context, request.currencyId, gas)) + GAS.orderIdTail,
  )
}

/**
 * A direct token deposit is recognised from the transaction a plain account sends itself (its `to`
 * is the token, its calldata carries the id); a contract account, or an account delegating to code
 * (EIP-7702), may send it wrapped in another call, where nothing could attribute it. Such an account
 * keeps the explicit form, as the public SDK decides on its side too.
 */
async function requirePlainAccount(context: EvmChainContext, depositor: string): Promise<void> {
  const code = await context.cache.read(`code:${depositor}`, () =>
    rpc(context.label, () => context.client.getCode({ address: depositor as Address })),
  )
  if (code !== undefined && code !== '0x') {
    throw new PontisError(
      'UNSUPPORTED_EXECUTION_TYPE',
      `${depositor} on ${context.label.displayName} is a contract account (or delegates to code); a direct token deposit is recognised from a transaction a plain account sends itself. Remove explicitDeposit: false.`,
    )
  }
}

/** The request asked for the direct deposit form. */
const wantsDirectDeposit = (request: { options?: { explicitDeposit?: boolean } }): boolean =>
  request.options?.explicitDeposit === false

/** An `evm-transaction` step item's data. */
export function transactionData(
  context: EvmChainContext,
  from: string,
  call: { to: Address; value: bigint; data: Hex },
  gas: bigint,
  fees: FeeTerms,
) {
  return {
    format: 'evm-transaction',
    from,
    to: call.to,
    data: call.data,
    value: call.value.toString(),
    chainId: context.chainId,
    gas: gas.toString(),
    maxFeePerGas: fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
  }
}

/**
 * Gas of the deposit call, simulated with a zero id so every quote of the same shape shares one
 * cached simulation; the id's calldata (up to 16 gas a byte) is added on top.
 */
function depositGas(
  context: EvmChainContext,
  request: Pick<DepositStepsRequest, 'depositor' | 'currencyId' | 'amount'>,
  fallback: bigint,
): Promise<bigint> {
  const call = depositCall(context, { ...request, requestId: ZERO_ID })
  return simulateGas(context, { account: request.depositor as Address, ...call }, fallback).then((gas) =>
    gas === fallback ? gas : withDepositoryWrite(context, request.currencyId, gas + GAS.orderIdTail),
  )
}

export function createEvmQuoting(
  context: EvmChainContext,
  swapSources: readonly SwapSource[] = [],
  depositSwap?: DepositSwap,
  fillSwap?: FillSwap,
): QuotingCapability {
  /** The swap-and-deposit of a request with an origin swap (only offered with `depositSwap`). */
  const swapDepositOf = (request: {
    requestId: string
    depositor: string
    amount: bigint
    originSwap: OriginSwapQuote
    usePermit: boolean
  }): { swap: DepositSwap; request: DepositSwapRequest } => {
    if (!depositSwap) {
      throw new PontisError('NO_SWAP_ROUTES_FOUND', `${context.label.displayName} runs no origin swaps.`)
    }
    if (request.usePermit) {
      throw new PontisError(
        'UNSUPPORTED_EXECUTION_TYPE',
        `An origin swap on ${context.label.displayName} is a transaction the user sends; remove usePermit or deposit a listed currency.`,
      )
    }
    return {
      swap: depositSwap,
      request: {
        quote: request.originSwap,
        depositor: request.depositor,
        depository: depositoryOf(context),
        amount: request.amount,
        requestId: request.requestId,
      },
    }
  }

  const supportsPermit = (currencyId: string): Promise<boolean> => {
    if (isNative(context, currencyId)) return Promise.resolve(false)
    return context.cache.read(
      `permit:${currencyId}`,
      async () => {
        try {
          await rpc(context.label, () =>
            context.client.readContract({
              address: currencyId as Address,
              abi: erc20Abi,
              functionName: 'authorizationState',
              args: [context.depository ?? (currencyId as Address), `0x${'00'.repeat(32)}`],
            }),
          )
        } catch (error) {
          if (error instanceof PontisError) throw error
          return false
        }
        return (await tokenDomain(context, currencyId as Address)) !== undefined
      },
      60 * 60_000,
    )
  }

  const originGas = async (request: OriginCostRequest): Promise<bigint> => {
    if (request.originSwap) {
      const { swap, request: deposit } = swapDepositOf({ ...request, originSwap: request.originSwap })
      return swap.gas(deposit)
    }
    if (request.viaDepositAddress) return GAS.transfer
    if (request.usePermit) return GAS.permitDeposit
    if (wantsDirectDeposit(request)) {
      if (!isNative(context, request.currencyId)) await requirePlainAccount(context, request.depositor)
      return directDepositGas(context, request)
    }
    const call = depositCall(context, request)
    if (isNative(context, request.currencyId)) {
      return simulateGas(context, { account: request.depositor as Address, ...call }, GAS.nativeDeposit)
    }
    const allowance = await readAllowance(
      context,
      request.depositor,
      depositoryOf(context),
      request.currencyId,
    )
    if (allowance >= request.amount) return depositGas(context, request, GAS.erc20Deposit)
    return GAS.erc20Approve + GAS.erc20Deposit
  }

  return {
    supportsDestinationCalls: true,
    // Fills carry them as EIP-7702 transactions, which are EIP-1559 style; fills go through the multicaller.
    supportsDestinationAuthorizations: context.eip1559 && context.multicaller !== undefined,
    // explicitDeposit: false takes the direct deposit form (see directDepositCall).
    originRequestOptions: ['explicitDeposit'],
    encodeDestinationCall: encodeEvmDestinationCall,
    supportsGasTopup: true,
    supportsPermit,
    ...(swapSources.length > 0 ? { swapSources } : {}),
    ...(depositSwap && context.depository ? { depositsCanSwap: true } : {}),
    ...(fillSwap && context.multicaller ? { fillsCanSwap: true } : {}),

    async estimateOriginCost(request: OriginCostRequest): Promise<CostEstimate> {
      const [units, fees] = await Promise.all([originGas(request), feeTerms(context)])
      return {
        currencyId: context.nativeCurrencyId,
        amount: units * fees.maxFeePerGas,
        units,
        unitPrice: fees.maxFeePerGas,
      }
    },

    async estimateFillCost(request: FillCostRequest): Promise<CostEstimate> {
      if (request.destinationSwap) {
        if (!fillSwap || !context.multicaller || request.calls.length > 0) {
          throw new PontisError(
            'UNSUPPORTED_ROUTE',
            `Fills on ${context.label.displayName} swap only through its multicaller, and run no other calls then.`,
          )
        }
        // Not simulated: the solver's payment to the executor and its approval are made in the fill
        // itself, so a simulation would price a state that does not exist yet.
        const units =
          GAS.orderIdTail +
          MULTICALLER_OVERHEAD +
          fillSwap.gas(request.destinationSwap) +
          (request.topupNativeAmount > 0n ? GAS.transfer : 0n)
        const fees = await feeTerms(context)
        return {
          currencyId: context.nativeCurrencyId,
          amount: units * fees.maxFeePerGas,
          units,
          unitPrice: fees.maxFeePerGas,
        }
      }
      if (context.multicaller) return estimateMulticallerFill(context, context.multicaller, request)
      const payer = request.payer as Address
      const tail = request.orderId as Hex
      const payment = isNative(context, request.currencyId)
        ? simulateGas(
            context,
            { account: payer, to: request.recipient as Address, value: request.amount, data: tail },
            GAS.transfer + GAS.orderIdTail,
          )
        : simulateGas(
            context,
            {
              account: payer,
              to: request.currencyId as Address,
              data: concat([
                encodeFunctionData({
                  abi: erc20Abi,
                  functionName: 'transfer',
                  args: [request.recipient as Address, request.amount],
                }),
                tail,
              ]),
            },
            GAS.erc20Transfer + GAS.orderIdTail,
          )
      const calls =
        request.callsGasLimit !== undefined
          ? Promise.resolve(request.callsGasLimit)
          : Promise.all(
              request.calls.map((call, index) =>
                rpc(context.label, () =>
                  context.client.estimateGas({
                    account: payer,
                    to: call.to as Address,
                    value: call.value,
                    data: call.data as Hex,
                  }),
                ).catch((error: unknown) => {
                  if (error instanceof PontisError) throw error
                  throw new PontisError(
                    'INVALID_EXTRA_TXS',
                    `txs[${index}] reverts when simulated on ${context.label.displayName}; fix the call or pass txsGasLimit.`,
                    { index },
                  )
                }),
              ),
            ).then((gases) => gases.reduce((sum, gas) => sum + gas, 0n))
      const topup = request.topupNativeAmount > 0n ? GAS.transfer : 0n
      const [paymentGas, callsGas, fees] = await Promise.all([payment, calls, feeTerms(context)])
      const units = paymentGas + callsGas + topup
      return {
        currencyId: context.nativeCurrencyId,
        amount: units * fees.maxFeePerGas,
        units,
        unitPrice: fees.maxFeePerGas,
      }
    },

    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      if (request.originSwap) {
        const { swap, request: deposit } = swapDepositOf({ ...request, originSwap: request.originSwap })
        return swap.steps(deposit)
      }
      const fees = await feeTerms(context)
      if (request.depositAddress) {
        const call = { to: request.depositAddress as Address, value: request.amount, data: '0x' as Hex }
        return [
          {
            id: 'deposit',
            kind: 'transaction',
            action: 'Confirm transaction in your wallet',
            description: `Send the deposit to your request's deposit address`,
            items: [{ data: transactionData(context, request.depositor, call, GAS.transfer, fees) }],
          },
        ]
      }
      if (request.usePermit) {
        const token = request.currencyId as Address
        const domain = await tokenDomain(context, token)
        if (!domain)
          throw new PontisError('PERMIT_FAILED', `Could not determine the EIP-712 domain of ${token}.`)
        const validAfter = 0n
        const validBefore = BigInt(request.nowSeconds + request.permitExpiry)
        const value = {
          from: request.depositor,
          to: depositoryOf(context),
          value: request.amount.toString(),
          validAfter: validAfter.toString(),
          validBefore: validBefore.toString(),
          nonce: request.requestId,
        }
        return [
          {
            id: 'authorize',
            kind: 'signature',
            action: 'Sign the transfer authorization',
            description: 'Authorize the deposit; the service submits it for you, no gas needed',
            items: [
              {
                data: {
                  format: 'signature',
                  sign: {
                    signatureKind: 'eip712',
                    domain,
                    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
                    primaryType: 'ReceiveWithAuthorization',
                    value,
                  },
                  post: {
                    endpoint: request.executeEndpoint,
                    method: 'POST',
                    body: { kind: EVM_PERMIT_KIND, requestId: request.requestId },
                  },
                },
                permit: { kind: EVM_PERMIT_KIND, validAfter, validBefore },
              },
            ],
          },
        ]
      }
      if (wantsDirectDeposit(request)) {
        if (!isNative(context, request.currencyId)) await requirePlainAccount(context, request.depositor)
        const call = directDepositCall(context, request)
        const gas = await directDepositGas(context, request)
        return [
          {
            id: 'deposit',
            kind: 'transaction',
            action: 'Confirm transaction in your wallet',
            description: 'Send the deposit to the depository, tagged with your request id',
            items: [{ data: transactionData(context, request.depositor, call, gas, fees) }],
          },
        ]
      }
      const steps: PreparedStep[] = []
      const call = depositCall(context, request)
      if (!isNative(context, request.currencyId)) {
        const depository = depositoryOf(context)
        const allowance = await readAllowance(context, request.depositor, depository, request.currencyId)
        if (allowance < request.amount) {
          const approve = {
            to: request.currencyId as Address,
            value: 0n,
            data: encodeFunctionData({
              abi: erc20Abi,
              functionName: 'approve',
              args: [depository, request.amount],
            }),
          }
          steps.push({
            id: 'approve',
            kind: 'transaction',
            action: 'Approve the deposit',
            description: 'Allow the depository to take the deposit amount',
            items: [{ data: transactionData(context, request.depositor, approve, GAS.erc20Approve, fees) }],
          })
          return [
            ...steps,
            {
              id: 'deposit',
              kind: 'transaction',
              action: 'Confirm transaction in your wallet',
              description: 'Deposit into the depository, tagged with your request id',
              items: [{ data: transactionData(context, request.depositor, call, GAS.erc20Deposit, fees) }],
            },
          ]
        }
      }
      const gas = await depositGas(
        context,
        request,
        isNative(context, request.currencyId) ? GAS.nativeDeposit : GAS.erc20Deposit,
      )
      return [
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transaction in your wallet',
          description: 'Deposit into the depository, tagged with your request id',
          items: [{ data: transactionData(context, request.depositor, call, gas, fees) }],
        },
      ]
    },

    ...(context.depositAddressSeed
      ? {
          async createDepositAddress(requestId: string): Promise<string> {
            return privateKeyToAddress(depositAddressKey(context.depositAddressSeed as Hex, requestId))
          },
        }
      : {}),
  }
}

/** What the multicaller adds to a bare payment (measured on the devnet: about 9.5k gas for a native fill). */
const MULTICALLER_OVERHEAD = 12_000n

/**
 * Prices the fill as the solver will send it: one multicaller `fill` with the payment, the top-up
 * and the calls, simulated from the solver. Calls that revert in simulation are refused unless the
 * request caps their gas with `txsGasLimit`.
 */
async function estimateMulticallerFill(
  context: EvmChainContext,
  multicaller: Address,
  request: FillCostRequest,
): Promise<CostEstimate> {
  const native = context.nativeCurrencyId as Address
  const outputIsNative = isNative(context, request.currencyId)
  const recipient = request.recipient as Address
  const payments = [
    { token: outputIsNative ? native : (request.currencyId as Address), recipient, amount: request.amount },
  ]
  if (request.topupNativeAmount > 0n)
    payments.push({ token: native, recipient, amount: request.topupNativeAmount })
  const calls = request.calls.map((call) => ({
    to: call.to as Address,
    value: call.value,
    data: call.data as Hex,
  }))
  const value =
    (outputIsNative ? request.amount : 0n) +
    request.topupNativeAmount +
    calls.reduce((sum, call) => sum + call.value, 0n)
  const tail = request.orderId as Hex
  const data = concat([
    encodeFunctionData({ abi: multicallerAbi, functionName: 'fill', args: [tail, payments, calls] }),
    tail,
  ])
  const payment = (outputIsNative ? GAS.transfer : GAS.erc20Transfer) + GAS.orderIdTail + MULTICALLER_OVERHEAD
  const fallback =
    payment + (request.topupNativeAmount > 0n ? GAS.transfer : 0n) + (request.callsGasLimit ?? 0n)
  // The calls run against the code the authorizations delegate to, so they are simulated with them.
  const authorizationList = request.authorizations?.length
    ? await checkedAuthorizations(context, request.authorizations)
    : undefined
  const call: GasCall = {
    account: request.payer as Address,
    to: multicaller,
    data,
    value,
    ...(authorizationList ? { authorizationList } : {}),
  }
  let units: bigint
  if (calls.length > 0 && request.callsGasLimit === undefined) {
    units = await context.cache.read(`fill:${data}:${value}${authorizationsKey(call)}`, () =>
      rpc(context.label, () => context.client.estimateGas(call)).then(
        (gas) => (gas * GAS_HEADROOM_PERCENT) / 100n,
        (error: unknown) => {
          if (error instanceof PontisError) throw error
          throw new PontisError(
            'INVALID_EXTRA_TXS',
            `The txs calls revert when simulated on ${context.label.displayName}; fix them or pass txsGasLimit.`,
          )
        },
      ),
    )
  } else {
    units = await simulateGas(context, call, fallback)
    if (request.callsGasLimit !== undefined && units < fallback) units = fallback
  }
  const fees = await feeTerms(context)
  return {
    currencyId: context.nativeCurrencyId,
    amount: units * fees.maxFeePerGas,
    units,
    unitPrice: fees.maxFeePerGas,
  }
}

/** The key of a request's deposit address: derived from the seed and the request id, so it can be re-derived to sweep. */
export function depositAddressKey(seed: Hex, requestId: string): Hex {
  return keccak256(concat([seed, requestId as Hex]))
}
