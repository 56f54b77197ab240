/**
 * The six attestations: read chain state through the chain's plugin, then build the typed messages
 * and the hub execution. Nothing here signs or talks HTTP; {@link signAttestation} signs the result.
 */
import {
  type AddressRole,
  type ChainAdapter,
  type CurrencyRole,
  chainByProtocolId,
  chainOrder,
  createTypedDataHasher,
  type Eip712Domain,
  encodeOrder as encodeOrderBytes,
  type FinalityMode,
  type HubConfig,
  hashOrderStruct,
  keccak256Hex,
  ORDER_TYPES,
  type OracleApi,
  PontisError,
  protocolChainIdOf,
  type ReadingCapability,
  type RegisteredChain,
  type Registry,
  settlementConfirmations,
  type TransactionFacts,
} from '@pontis/core'
import { type Hex, isAddressEqual, recoverMessageAddress } from 'viem'
import { abiEncode } from './abi.js'
import {
  encodeHubAction,
  HUB_ACTION,
  type HubReader,
  hubAccountKey,
  hubAssetKey,
  idempotencyKey,
  withdrawalAddressOf,
} from './hub.js'
import {
  type JsonTypedData,
  MESSAGE_TYPES,
  type PrimaryType,
  toSignableValue,
  WITHDRAWAL_REQUEST_TYPES,
} from './typed-data.js'

/** One message before signing. */
export interface UnsignedMessage {
  readonly data: JsonTypedData
  readonly result: Record<string, unknown>
}

/** An attestation before signing: the messages and, for facts the hub acts on, the execution. */
export interface UnsignedAttestation {
  readonly messages: readonly UnsignedMessage[]
  readonly execution?: { readonly idempotencyKey: Hex; readonly actions: readonly Hex[] }
}

export type DepositsRequest = OracleApi.DepositoryDepositsRequest
export type WithdrawalsRequest = OracleApi.DepositoryWithdrawalsRequest
export type FillsRequest = OracleApi.SolverFillsRequest
export type RefundsRequest = OracleApi.SolverRefundsRequest
export type InitiationRequest = OracleApi.WithdrawalInitiationRequest
export type InitiatedRequest = OracleApi.WithdrawalInitiatedRequest

/** The attestations an oracle can make; each throws `PontisError` for what it cannot attest. */
export interface AttestationEngine {
  readonly domain: Eip712Domain
  depositoryDeposits(request: DepositsRequest): Promise<UnsignedAttestation>
  depositoryWithdrawals(request: WithdrawalsRequest): Promise<UnsignedAttestation>
  /** `force`: attest SUCCESSFUL without reading the fill (the caller checked the API key). */
  solverFills(request: FillsRequest): Promise<UnsignedAttestation>
  solverRefunds(request: RefundsRequest): Promise<UnsignedAttestation>
  withdrawalInitiation(request: InitiationRequest): Promise<UnsignedAttestation>
  withdrawalInitiated(request: InitiatedRequest): Promise<UnsignedAttestation>
  /**
   * The `message.data` every message of a route's answer must carry for `request`, computed without
   * reading any chain: peer answers about anything else are refused.
   * @throws PontisError for a request that cannot be attested (before anything is read).
   */
  readonly requestData: RequestDataBuilders
}

/** Per route, the signed `message.data` a request must yield. */
export interface RequestDataBuilders {
  depositoryDeposits(request: DepositsRequest): Record<string, unknown>
  depositoryWithdrawals(request: WithdrawalsRequest): Record<string, unknown>
  solverFills(request: FillsRequest): Record<string, unknown>
  solverRefunds(request: RefundsRequest): Record<string, unknown>
  withdrawalInitiation(request: InitiationRequest): Record<string, unknown>
  withdrawalInitiated(request: InitiatedRequest): Record<string, unknown>
}

export interface AttestationEngineOptions {
  readonly registry: Registry
  readonly hub: HubConfig
  readonly domain: Eip712Domain
  readonly hubReader: HubReader
}

const WITHDRAWAL_STATUS = { pending: 0, executed: 1, expired: 2 } as const
const FAILED = 0
const SUCCESSFUL = 1
/** `totalWeightedInputPaymentBpsDiff` is a fraction scaled by 10^18. */
const DIFF_SCALE = 10n ** 18n

const hashWithdrawalRequest = createTypedDataHasher(WITHDRAWAL_REQUEST_TYPES, 'WithdrawalRequest')

// A chain whose plugin cannot read a kind of fact cannot have it attested: that is a property of the
// request (400 UNSUPPORTED_CHAIN), not a fault of the server.
function readingOf(chain: RegisteredChain): ReadingCapability {
  const reading = chain.adapter.reading
  if (!reading) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${chain.record.displayName} (${chain.id}) cannot be attested: its plugin reads no chain state.`,
      { chainId: chain.id },
    )
  }
  return reading
}

function need<T>(capability: T | undefined, chain: RegisteredChain, what: string): T {
  if (capability === undefined) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${chain.record.displayName} (${chain.id}) cannot attest ${what}: its plugin does not read them (payments on this chain carry no order id to attest by).`,
      { chainId: chain.id },
    )
  }
  return capability
}

/**
 * Refuses facts of a transaction that is not there or not final for `mode` yet (404: retry later),
 * so nothing is signed that a reorg can take back.
 */
function requireFinal<Fact>(
  facts: TransactionFacts<Fact>,
  adapter: ChainAdapter,
  chain: RegisteredChain,
  mode: FinalityMode,
): void {
  const where = `transaction ${facts.transactionId} on ${chain.record.displayName}`
  if (facts.state === 'not_found') {
    throw new PontisError('TRANSACTION_NOT_FOUND', `The ${where} was not found.`, {
      transactionId: facts.transactionId,
    })
  }
  if (facts.state === 'pending') {
    throw new PontisError('TRANSACTION_NOT_FOUND', `The ${where} is not mined yet; retry later.`, {
      transactionId: facts.transactionId,
    })
  }
  // Slow: the family's rule and as deep as the chain entry's `finality` asks.
  const final =
    mode === 'fast'
      ? (facts.confirmations ?? 0) >= adapter.finality.fastConfirmations
      : facts.final && (facts.confirmations ?? Number.POSITIVE_INFINITY) >= settlementConfirmations(chain)
  if (!final) {
    throw new PontisError(
      'TRANSACTION_NOT_FOUND',
      `The ${where} is not final for mode '${mode}' yet (${facts.confirmations ?? 0} confirmations); retry later.`,
      { transactionId: facts.transactionId, confirmations: facts.confirmations ?? 0 },
    )
  }
}

function invalid(message: string, field?: string): PontisError {
  return new PontisError(
    'INVALID_REQUEST',
    message,
    field === undefined ? undefined : { errors: [{ location: 'body', field, message }] },
  )
}

export function createAttestationEngine(options: AttestationEngineOptions): AttestationEngine {
  const { registry, hub, domain, hubReader } = options

  const typed = (primaryType: PrimaryType, data: object, result: object): JsonTypedData => ({
    domain,
    types: MESSAGE_TYPES[primaryType],
    primaryType,
    message: { data: data as Record<string, unknown>, result: result as Record<string, unknown> },
  })

  const encode = (chain: RegisteredChain, value: string, role: AddressRole | CurrencyRole): Hex =>
    chain.adapter.identity.encodeAddress(value, role)

  const depositoryOf = (chain: RegisteredChain, requested: string | undefined): string => {
    const depository = requested ?? chain.record.protocol?.v2?.depository
    if (depository === undefined) {
      throw new PontisError('UNSUPPORTED_CHAIN', `${chain.record.displayName} has no depository.`)
    }
    return chain.adapter.identity.normalizeAddress(depository, 'contract')
  }

  /** The order as signed: addresses and currencies as bytes of their chains. */
  const encodeOrder = (order: OracleApi.Order) => encodeOrderBytes(chainOrder(registry, order))

  /** A deposit's id on the hub: chain, transaction and position. */
  const onchainIdOf = (protocolChainId: string, transactionId: Hex, index: number): Hex =>
    keccak256Hex(
      abiEncode([
        { type: 'string', value: protocolChainId },
        { type: 'bytes', value: transactionId },
        { type: 'uint256', value: BigInt(index) },
      ]),
    )

  interface BoundDeposit {
    readonly chain: RegisteredChain
    readonly inputIndex: number
    readonly depositor: string
    readonly currency: Hex
    readonly amount: bigint
  }

  /**
   * Verifies the order signature and reads every listed deposit: final, found by `onchainId`, paying
   * the order (deposit id = order id) in the input's currency. Returns the order id, the signed
   * data's common part and the deposits.
   */
  const readOrderInputs = async (request: FillsRequest | RefundsRequest) => {
    const order = request.order
    const encodedOrder = encodeOrder(order)
    const orderId = hashOrderStruct(toSignableValue(ORDER_TYPES, 'Order', encodedOrder) as object)
    let signer: Hex
    try {
      signer = await recoverMessageAddress({
        message: { raw: orderId },
        signature: request.orderSignature as Hex,
      })
    } catch {
      throw new PontisError('INVALID_SIGNATURE', 'orderSignature is not a valid secp256k1 signature.')
    }
    if (!isAddressEqual(signer, order.solver as Hex)) {
      throw new PontisError(
        'INVALID_SIGNATURE',
        `orderSignature recovers to ${signer}, not to the order's solver ${order.solver} (it must be an EIP-191 signature of the 32-byte order id ${orderId}).`,
      )
    }
    const entries = inputEntriesOf(request)
    const seen = new Set<string>()
    const deposits = await Promise.all(
      request.inputs.map(async (entry, position): Promise<BoundDeposit> => {
        const field = `inputs[${position}]`
        const input = order.inputs[entry.inputIndex]!
        const { transactionId, onchainId: key } = entries[position]!
        if (seen.has(key))
          throw invalid(`${field} lists deposit ${entry.onchainId} twice.`, `${field}.onchainId`)
        seen.add(key)
        const chain = chainByProtocolId(registry, input.payment.chainId)
        const facts = await readingOf(chain).readDeposits(entry.transactionId)
        requireFinal(facts, chain.adapter, chain, 'slow')
        const protocolChainId = protocolChainIdOf(chain)
        const fact = facts.facts.find(
          (candidate) => onchainIdOf(protocolChainId, transactionId, candidate.index) === key,
        )
        if (fact === undefined) {
          throw new PontisError(
            'NOT_A_DEPOSIT',
            `${field}: transaction ${entry.transactionId} holds no deposit with onchainId ${entry.onchainId}.`,
          )
        }
        if (fact.depositId.toLowerCase() !== orderId) {
          throw new PontisError(
            'NOT_A_DEPOSIT',
            `${field}: deposit ${entry.onchainId} pays ${fact.depositId}, not order ${orderId}.`,
          )
        }
        const currency = encode(chain, fact.currencyId, 'currency')
        if (currency !== encodedOrder.inputs[entry.inputIndex]!.payment.currency) {
          throw new PontisError(
            'NOT_A_DEPOSIT',
            `${field}: deposit ${entry.onchainId} is in ${fact.currencyId}, not the input's currency ${input.payment.currency}.`,
          )
        }
        return {
          chain,
          inputIndex: entry.inputIndex,
          depositor: fact.depositor,
          currency,
          amount: fact.amount,
        }
      }),
    )
    // Σ weight·(deposited − quoted)/quoted over Σ weight, scaled by 10^18: 0 when paid exactly.
    let weighted = 0n
    let totalWeight = 0n
    order.inputs.forEach((input, index) => {
      const quoted = BigInt(input.payment.amount)
      const weight = BigInt(input.payment.weight)
      if (quoted === 0n) return
      const deposited = deposits
        .filter((deposit) => deposit.inputIndex === index)
        .reduce((sum, deposit) => sum + deposit.amount, 0n)
      weighted += (weight * (deposited - quoted) * DIFF_SCALE) / quoted
      totalWeight += weight
    })
    const diff = totalWeight === 0n ? 0n : weighted / totalWeight
    return {
      orderId,
      encodedOrder,
      deposits,
      diff,
    }
  }

  /** Σ of the payout facts of `transactionId` for `orderId` to `recipient` in `currency`, or undefined when it reverted. */
  const paidIn = async (
    chain: RegisteredChain,
    read: (
      transactionId: string,
    ) => Promise<
      TransactionFacts<{ orderId: string; recipient: string; currencyId: string; amount: bigint }>
    >,
    transactionId: string,
    orderId: Hex,
  ) => {
    const facts = await read(transactionId)
    requireFinal(facts, chain.adapter, chain, 'slow')
    return (recipient: Hex, currency: Hex): bigint =>
      facts.facts
        .filter(
          (fact) =>
            fact.orderId.toLowerCase() === orderId &&
            encode(chain, fact.recipient, 'recipient') === recipient &&
            encode(chain, fact.currencyId, 'currency') === currency,
        )
        .reduce((sum, fact) => sum + fact.amount, 0n)
  }

  const solverResult = (orderId: Hex, status: number, diff: bigint) => ({
    orderId,
    status,
    totalWeightedInputPaymentBpsDiff: diff.toString(),
  })

  /** The withdrawal request as the owner signs it, with its digest. */
  const withdrawalRequestOf = (request: InitiationRequest | InitiatedRequest) => {
    const chain = registry.chain(request.chainId)
    const ownerChain = registry.chain(request.ownerChainId)
    const depository = depositoryOf(chain, request.depository)
    const data = {
      chainId: protocolChainIdOf(chain),
      depository: encode(chain, depository, 'contract'),
      currency: encode(chain, request.currency, 'currency'),
      amount: request.amount,
      ownerChainId: protocolChainIdOf(ownerChain),
      owner: encode(ownerChain, request.owner, 'user'),
      recipient: encode(chain, request.recipient, 'recipient'),
      nonce: request.nonce.toLowerCase() as Hex,
    }
    const hash = hashWithdrawalRequest(domain, { ...data, amount: BigInt(data.amount) })
    const withdrawalAddress = withdrawalAddressOf(hash)
    return {
      chain,
      ownerChain,
      data,
      hash,
      withdrawalAddress,
      ownerAccount: hubAccountKey(data.ownerChainId, data.owner),
      withdrawalAccount: hubAccountKey(hub.name, withdrawalAddress.toLowerCase() as Hex),
      asset: hubAssetKey(data.chainId, data.currency),
    }
  }

  /** The input entries as signed; validates each `inputIndex`. */
  const inputEntriesOf = (request: FillsRequest | RefundsRequest) =>
    request.inputs.map((entry, position) => {
      const input = request.order.inputs[entry.inputIndex]
      if (input === undefined) {
        throw invalid(
          `inputs[${position}].inputIndex ${entry.inputIndex} is not an input of the order (it has ${request.order.inputs.length}).`,
          `inputs[${position}].inputIndex`,
        )
      }
      const chain = chainByProtocolId(registry, input.payment.chainId)
      return {
        transactionId: chain.adapter.identity.encodeTransactionId(entry.transactionId),
        onchainId: entry.onchainId.toLowerCase() as Hex,
        inputIndex: entry.inputIndex,
      }
    })

  /** The refund entries with their option and chain; every order input must be named. */
  const refundEntriesOf = (request: RefundsRequest) => {
    const order = request.order
    const missing = order.inputs
      .map((_, index) => index)
      .filter((index) => !request.refunds.some((refund) => refund.inputIndex === index))
    if (missing.length > 0) {
      throw invalid(
        `refunds must name the refund of every order input; missing input(s) ${missing.join(', ')}.`,
        'refunds',
      )
    }
    return request.refunds.map((entry, position) => {
      const field = `refunds[${position}]`
      const option = order.inputs[entry.inputIndex]?.refunds[entry.refundIndex]
      if (option === undefined) {
        throw invalid(
          `${field} names refund option ${entry.refundIndex} of input ${entry.inputIndex}, which the order does not have.`,
          field,
        )
      }
      const chain = chainByProtocolId(registry, option.chainId)
      return {
        entry,
        chain,
        option,
        transactionId: chain.adapter.identity.encodeTransactionId(entry.transactionId),
      }
    })
  }

  const requestData: RequestDataBuilders = {
    depositoryDeposits(request) {
      const chain = registry.chain(request.chainId)
      return {
        chainId: protocolChainIdOf(chain),
        transactionId: chain.adapter.identity.encodeTransactionId(request.transactionId),
      }
    },
    depositoryWithdrawals(request) {
      return {
        chainId: protocolChainIdOf(registry.chain(request.chainId)),
        withdrawal: request.withdrawal.toLowerCase(),
      }
    },
    solverFills(request) {
      const output = chainByProtocolId(registry, request.order.output.chainId)
      return {
        order: encodeOrder(request.order),
        orderSignature: request.orderSignature.toLowerCase(),
        inputs: inputEntriesOf(request),
        fill: { transactionId: output.adapter.identity.encodeTransactionId(request.fill.transactionId) },
      }
    },
    solverRefunds(request) {
      return {
        order: encodeOrder(request.order),
        orderSignature: request.orderSignature.toLowerCase(),
        inputs: inputEntriesOf(request),
        refunds: refundEntriesOf(request).map(({ entry, transactionId }) => ({
          transactionId,
          inputIndex: entry.inputIndex,
          refundIndex: entry.refundIndex,
        })),
      }
    },
    withdrawalInitiation: (request) => withdrawalRequestOf(request).data,
    withdrawalInitiated: (request) => withdrawalRequestOf(request).data,
  }

  return {
    domain,
    requestData,

    async depositoryDeposits(request) {
      const chain = registry.chain(request.chainId)
      const transactionId = chain.adapter.identity.encodeTransactionId(request.transactionId)
      const facts = await readingOf(chain).readDeposits(request.transactionId)
      requireFinal(facts, chain.adapter, chain, request.mode ?? 'slow')
      if (facts.state === 'reverted' || facts.facts.length === 0) {
        throw new PontisError(
          'NOT_A_DEPOSIT',
          `Transaction ${request.transactionId} on ${chain.record.displayName} ${facts.state === 'reverted' ? 'reverted' : 'paid nothing into the depository'}.`,
        )
      }
      const protocolChainId = protocolChainIdOf(chain)
      const deposits = facts.facts.map((fact) => ({
        fact,
        onchainId: onchainIdOf(protocolChainId, transactionId, fact.index),
        depositor: encode(chain, fact.depositor, 'depositor'),
        currency: encode(chain, fact.currencyId, 'currency'),
      }))
      return {
        messages: deposits.map(({ fact, onchainId, depositor, currency }) => ({
          data: typed('DepositoryDeposit', requestData.depositoryDeposits(request), {
            onchainId,
            depository: encode(chain, fact.depository, 'contract'),
            depositId: fact.depositId.toLowerCase(),
            depositor,
            currency,
            amount: fact.amount.toString(),
          }),
          result: {
            onchainId,
            depository: fact.depository,
            depositId: fact.depositId.toLowerCase(),
            depositor: fact.depositor,
            currency: fact.currencyId,
            amount: fact.amount.toString(),
          },
        })),
        execution: {
          idempotencyKey: idempotencyKey('DepositoryDeposit', protocolChainId, transactionId),
          actions: deposits.map(({ fact, depositor, currency }) =>
            encodeHubAction({
              kind: HUB_ACTION.CREDIT,
              to: hubAccountKey(protocolChainId, depositor),
              asset: hubAssetKey(protocolChainId, currency),
              amount: fact.amount,
            }),
          ),
        },
      }
    },

    async depositoryWithdrawals(request) {
      const chain = registry.chain(request.chainId)
      const readWithdrawal = need(readingOf(chain).readWithdrawal, chain, 'withdrawals')
      const fact = await readWithdrawal({
        withdrawal: request.withdrawal as Hex,
        depository: depositoryOf(chain, undefined),
        mode: request.mode ?? 'slow',
        ...(request.transactionId === undefined ? {} : { transactionId: request.transactionId }),
      })
      const protocolChainId = protocolChainIdOf(chain)
      const status = WITHDRAWAL_STATUS[fact.status]
      const withdrawalId = fact.withdrawalId.toLowerCase() as Hex
      const message: UnsignedMessage = {
        data: typed('DepositoryWithdrawal', requestData.depositoryWithdrawals(request), {
          withdrawalId,
          depository: encode(chain, fact.depository, 'contract'),
          status,
        }),
        result: { withdrawalId, depository: fact.depository, status },
      }
      if (fact.status === 'pending') return { messages: [message] }
      if (fact.transfers.length === 0) {
        throw invalid(
          'The call request makes no transfers, so it is not a withdrawal the hub can settle.',
          'withdrawal',
        )
      }
      const account = hubAccountKey(hub.name, withdrawalAddressOf(fact.reference).toLowerCase() as Hex)
      return {
        messages: [message],
        execution: {
          idempotencyKey: idempotencyKey('DepositoryWithdrawal', protocolChainId, withdrawalId),
          actions: fact.transfers.map((transfer) =>
            encodeHubAction({
              // Paid out: the funds waiting at the withdrawal address are gone. Expired: they go back.
              kind: fact.status === 'executed' ? HUB_ACTION.BURN : HUB_ACTION.RELEASE,
              from: account,
              asset: hubAssetKey(protocolChainId, encode(chain, transfer.currencyId, 'currency')),
              amount: transfer.amount,
            }),
          ),
        },
      }
    },

    async solverFills(request) {
      const inputs = await readOrderInputs(request)
      const output = chainByProtocolId(registry, request.order.output.chainId)
      let status = SUCCESSFUL
      if (request.force !== true) {
        const readFills = need(readingOf(output).readFills, output, 'fills')
        const paid = await paidIn(output, readFills, request.fill.transactionId, inputs.orderId)
        const complete = inputs.encodedOrder.output.payments.every(
          (payment) => paid(payment.recipient, payment.currency) >= BigInt(payment.minimumAmount),
        )
        status = complete ? SUCCESSFUL : FAILED
      }
      const result = solverResult(inputs.orderId, status, inputs.diff)
      const message: UnsignedMessage = {
        data: typed('SolverFill', requestData.solverFills(request), result),
        result,
      }
      if (status !== SUCCESSFUL) return { messages: [message] }
      const solver = hubAccountKey(request.order.solverChainId, request.order.solver.toLowerCase() as Hex)
      return {
        messages: [message],
        execution: {
          idempotencyKey: idempotencyKey('SolverFill', inputs.orderId),
          actions: inputs.deposits.map((deposit) => {
            const protocolChainId = protocolChainIdOf(deposit.chain)
            return encodeHubAction({
              kind: HUB_ACTION.TRANSFER,
              from: hubAccountKey(protocolChainId, encode(deposit.chain, deposit.depositor, 'depositor')),
              to: solver,
              asset: hubAssetKey(protocolChainId, deposit.currency),
              amount: deposit.amount,
            })
          }),
        },
      }
    },

    async solverRefunds(request) {
      const inputs = await readOrderInputs(request)
      const refundEntries = refundEntriesOf(request)
      let status = SUCCESSFUL
      if (request.force !== true) {
        const paid = await Promise.all(
          refundEntries.map(async ({ entry, chain, option }) => {
            const readRefunds = need(readingOf(chain).readRefunds, chain, 'refunds')
            const sum = await paidIn(chain, readRefunds, entry.transactionId, inputs.orderId)
            return (
              sum(encode(chain, option.recipient, 'recipient'), encode(chain, option.currency, 'currency')) >=
              BigInt(option.minimumAmount)
            )
          }),
        )
        status = paid.every(Boolean) ? SUCCESSFUL : FAILED
      }
      const result = solverResult(inputs.orderId, status, inputs.diff)
      const message: UnsignedMessage = {
        data: typed('SolverRefund', requestData.solverRefunds(request), result),
        result,
      }
      if (status !== SUCCESSFUL) return { messages: [message] }
      return {
        messages: [message],
        execution: {
          idempotencyKey: idempotencyKey('SolverRefund', inputs.orderId),
          // The deposits went back to their owners: their hub credit is used up.
          actions: inputs.deposits.map((deposit) => {
            const protocolChainId = protocolChainIdOf(deposit.chain)
            return encodeHubAction({
              kind: HUB_ACTION.BURN,
              from: hubAccountKey(protocolChainId, encode(deposit.chain, deposit.depositor, 'depositor')),
              asset: hubAssetKey(protocolChainId, deposit.currency),
              amount: deposit.amount,
            })
          }),
        },
      }
    },

    async withdrawalInitiation(request) {
      const withdrawal = withdrawalRequestOf(request)
      const verify = withdrawal.ownerChain.adapter.identity.verifyMessage
      if (verify === undefined) {
        throw new PontisError(
          'UNSUPPORTED_CHAIN',
          `${withdrawal.ownerChain.record.displayName} (${withdrawal.ownerChain.id}) cannot own hub balances here: its plugin cannot verify owner signatures.`,
          { chainId: withdrawal.ownerChain.id },
        )
      }
      const valid = await verify(request.owner, withdrawal.hash, request.ownerSignature as Hex)
      if (!valid) {
        throw new PontisError(
          'INVALID_SIGNATURE',
          `ownerSignature is not ${request.owner}'s signature of the withdrawal request hash ${withdrawal.hash}.`,
        )
      }
      const amount = BigInt(request.amount)
      const balance = await hubReader.balanceOf(withdrawal.ownerAccount, withdrawal.asset)
      if (balance < amount) {
        throw new PontisError(
          'INSUFFICIENT_FUNDS',
          `The owner's hub balance is ${balance}, below the ${amount} to withdraw.`,
          {
            balance: balance.toString(),
            amount: amount.toString(),
          },
        )
      }
      const result = {
        withdrawalRequestHash: withdrawal.hash,
        withdrawalAddress: withdrawal.withdrawalAddress.toLowerCase(),
      }
      return {
        messages: [{ data: typed('WithdrawalInitiation', withdrawal.data, result), result }],
        execution: {
          idempotencyKey: withdrawal.hash,
          actions: [
            encodeHubAction({
              kind: HUB_ACTION.LOCK,
              from: withdrawal.ownerAccount,
              to: withdrawal.withdrawalAccount,
              asset: withdrawal.asset,
              amount,
            }),
          ],
        },
      }
    },

    async withdrawalInitiated(request) {
      const withdrawal = withdrawalRequestOf(request)
      const amount = BigInt(request.amount)
      const balance = await hubReader.balanceOf(withdrawal.withdrawalAccount, withdrawal.asset)
      if (balance < amount) {
        throw new PontisError(
          'INSUFFICIENT_FUNDS',
          `The withdrawal address ${withdrawal.withdrawalAddress} holds ${balance}, below ${amount}: relay the initiation's execution to the hub first.`,
          { balance: balance.toString(), amount: amount.toString() },
        )
      }
      const result = {
        withdrawalRequestHash: withdrawal.hash,
        withdrawalAddress: withdrawal.withdrawalAddress.toLowerCase(),
        balance: balance.toString(),
      }
      return { messages: [{ data: typed('WithdrawalInitiated', withdrawal.data, result), result }] }
    },
  }
}
