/** The settlement order shared by the intent service (which signs it) and the oracle (which attests it). */
import { createStructHasher } from './eip712.js'
import { chainByProtocolId, protocolChainIdOf, type RegisteredChain, type Registry } from './registry.js'

/** The EIP-712 types of the settlement order; `orderId` is the struct hash of `Order`. */
export const ORDER_TYPES = {
  Order: [
    { name: 'version', type: 'string' },
    { name: 'solverChainId', type: 'string' },
    { name: 'solver', type: 'address' },
    { name: 'salt', type: 'uint256' },
    { name: 'inputs', type: 'Input[]' },
    { name: 'output', type: 'Output' },
    { name: 'fees', type: 'Fee[]' },
  ],
  Input: [
    { name: 'payment', type: 'InputPayment' },
    { name: 'refunds', type: 'InputRefund[]' },
  ],
  InputPayment: [
    { name: 'chainId', type: 'string' },
    { name: 'currency', type: 'bytes' },
    { name: 'amount', type: 'uint256' },
    { name: 'weight', type: 'uint256' },
  ],
  InputRefund: [
    { name: 'chainId', type: 'string' },
    { name: 'recipient', type: 'bytes' },
    { name: 'currency', type: 'bytes' },
    { name: 'minimumAmount', type: 'uint256' },
    { name: 'deadline', type: 'uint32' },
    { name: 'extraData', type: 'bytes' },
  ],
  Output: [
    { name: 'chainId', type: 'string' },
    { name: 'payments', type: 'OutputPayment[]' },
    { name: 'deadline', type: 'uint32' },
    { name: 'calls', type: 'bytes[]' },
    { name: 'extraData', type: 'bytes' },
  ],
  OutputPayment: [
    { name: 'recipient', type: 'bytes' },
    { name: 'currency', type: 'bytes' },
    { name: 'minimumAmount', type: 'uint256' },
    { name: 'expectedAmount', type: 'uint256' },
  ],
  Fee: [
    { name: 'recipientChainId', type: 'string' },
    { name: 'recipient', type: 'bytes' },
    { name: 'currencyChainId', type: 'string' },
    { name: 'currency', type: 'bytes' },
    { name: 'amount', type: 'uint256' },
  ],
} as const

/**
 * The order id: EIP-712 `hashStruct` of an `Order` (no domain), as viem's `hashStruct` over
 * `ORDER_TYPES` computes it. Takes the signable form: integers as bigints or numbers, bytes as hex.
 */
export const hashOrderStruct = createStructHasher(ORDER_TYPES, 'Order')

export const ORDER_VERSION = 'v1'

/** The settlement order as the APIs carry it: addresses and currencies in their chains' own forms. */
export interface SettlementOrder {
  readonly version: string
  readonly solverChainId: string
  readonly solver: string
  readonly salt: string
  readonly inputs: ReadonlyArray<{
    readonly payment: {
      readonly chainId: string
      readonly currency: string
      readonly amount: string
      readonly weight: string
    }
    readonly refunds: ReadonlyArray<{
      readonly chainId: string
      readonly recipient: string
      readonly currency: string
      readonly minimumAmount: string
      readonly deadline: number
      readonly extraData: string
    }>
  }>
  readonly output: {
    readonly chainId: string
    readonly payments: ReadonlyArray<{
      readonly recipient: string
      readonly currency: string
      readonly minimumAmount: string
      readonly expectedAmount: string
    }>
    readonly deadline: number
    readonly calls: readonly string[]
    readonly extraData: string
  }
  readonly fees: ReadonlyArray<{
    readonly recipientChainId: string
    readonly recipient: string
    readonly currencyChainId: string
    readonly currency: string
    readonly amount: string
  }>
}

type Hex = `0x${string}`

/** The order with every address and currency as the bytes its chain signs (0x-hex); numbers stay decimal strings (JSON-safe). */
export interface EncodedOrder {
  readonly version: string
  readonly solverChainId: string
  readonly solver: Hex
  readonly salt: string
  readonly inputs: ReadonlyArray<{
    readonly payment: {
      readonly chainId: string
      readonly currency: Hex
      readonly amount: string
      readonly weight: string
    }
    readonly refunds: ReadonlyArray<{
      readonly chainId: string
      readonly recipient: Hex
      readonly currency: Hex
      readonly minimumAmount: string
      readonly deadline: number
      readonly extraData: Hex
    }>
  }>
  readonly output: {
    readonly chainId: string
    readonly payments: ReadonlyArray<{
      readonly recipient: Hex
      readonly currency: Hex
      readonly minimumAmount: string
      readonly expectedAmount: string
    }>
    readonly deadline: number
    readonly calls: readonly Hex[]
    readonly extraData: Hex
  }
  readonly fees: ReadonlyArray<{
    readonly recipientChainId: string
    readonly recipient: Hex
    readonly currencyChainId: string
    readonly currency: Hex
    readonly amount: string
  }>
}

/**
 * The settlement order as a service builds it: each chain is still the registered chain (its
 * identity encodes the addresses that live on it). It becomes protocol ids only where it is
 * encoded: {@link encodeOrder} for hashing, {@link settlementOrder} for the APIs.
 */
export interface ChainOrder extends Pick<SettlementOrder, 'version' | 'solverChainId' | 'solver' | 'salt'> {
  readonly inputs: ReadonlyArray<{
    readonly payment: OnChain<SettlementInput['payment']>
    readonly refunds: ReadonlyArray<OnChain<SettlementInput['refunds'][number]>>
  }>
  readonly output: OnChain<SettlementOrder['output']>
  readonly fees: ReadonlyArray<
    Omit<SettlementOrder['fees'][number], 'recipientChainId' | 'currencyChainId'> & {
      readonly recipientChain: RegisteredChain
      readonly currencyChain: RegisteredChain
    }
  >
}

type SettlementInput = SettlementOrder['inputs'][number]
/** A part of the order with its `chainId` as the chain itself. */
type OnChain<Part extends { readonly chainId: string }> = Omit<Part, 'chainId'> & {
  readonly chain: RegisteredChain
}

/** The order as the APIs carry it: each chain named by its protocol id (`protocolChainIdOf`). */
export function settlementOrder(order: ChainOrder): SettlementOrder {
  const id = protocolChainIdOf
  const {
    inputs,
    output: { chain: outputChain, ...output },
    fees,
    ...head
  } = order
  return {
    ...head,
    inputs: inputs.map(({ payment: { chain, ...payment }, refunds }) => ({
      payment: { chainId: id(chain), ...payment },
      refunds: refunds.map(({ chain: refundChain, ...refund }) => ({ chainId: id(refundChain), ...refund })),
    })),
    output: { chainId: id(outputChain), ...output },
    fees: fees.map(({ recipientChain, currencyChain, ...fee }) => ({
      recipientChainId: id(recipientChain),
      recipient: fee.recipient,
      currencyChainId: id(currencyChain),
      currency: fee.currency,
      amount: fee.amount,
    })),
  }
}

/**
 * An order received in its API form, with its chains looked up: what {@link encodeOrder} takes.
 * @throws PontisError UNSUPPORTED_CHAIN for a chain not served.
 */
export function chainOrder(registry: Registry, order: SettlementOrder): ChainOrder {
  const on = (protocolChainId: string) => chainByProtocolId(registry, protocolChainId)
  const {
    inputs,
    output: { chainId: outputChainId, ...output },
    fees,
    ...head
  } = order
  return {
    ...head,
    inputs: inputs.map(({ payment: { chainId, ...payment }, refunds }) => ({
      payment: { chain: on(chainId), ...payment },
      refunds: refunds.map(({ chainId: refundChainId, ...refund }) => ({
        chain: on(refundChainId),
        ...refund,
      })),
    })),
    output: { chain: on(outputChainId), ...output },
    fees: fees.map(({ recipientChainId, currencyChainId, ...fee }) => ({
      recipientChain: on(recipientChainId),
      currencyChain: on(currencyChainId),
      ...fee,
    })),
  }
}

/**
 * Encodes an order for hashing and signing: each address and currency through the identity of the
 * chain it lives on (`encodeAddress`: EVM 20 bytes, SVM the base58-decoded key, …), each chain as
 * its protocol id, so the intent service that issues an order id and the oracle that attests it
 * hash the same bytes.
 * @throws PontisError the identity's error for a bad address.
 */
export function encodeOrder(order: ChainOrder): EncodedOrder {
  const id = protocolChainIdOf
  const output = order.output.chain.adapter.identity
  const lower = (value: string) => value.toLowerCase() as Hex
  return {
    version: order.version,
    solverChainId: order.solverChainId,
    // The solver is the hub's (EVM) account, whatever chain the order pays on.
    solver: lower(order.solver),
    salt: order.salt,
    inputs: order.inputs.map((input) => {
      const payment = input.payment.chain.adapter.identity
      return {
        payment: {
          chainId: id(input.payment.chain),
          currency: payment.encodeAddress(input.payment.currency, 'currency'),
          amount: input.payment.amount,
          weight: input.payment.weight,
        },
        refunds: input.refunds.map((refund) => {
          const chain = refund.chain.adapter.identity
          return {
            chainId: id(refund.chain),
            recipient: chain.encodeAddress(refund.recipient, 'recipient'),
            currency: chain.encodeAddress(refund.currency, 'currency'),
            minimumAmount: refund.minimumAmount,
            deadline: refund.deadline,
            extraData: lower(refund.extraData),
          }
        }),
      }
    }),
    output: {
      chainId: id(order.output.chain),
      payments: order.output.payments.map((payment) => ({
        recipient: output.encodeAddress(payment.recipient, 'recipient'),
        currency: output.encodeAddress(payment.currency, 'currency'),
        minimumAmount: payment.minimumAmount,
        expectedAmount: payment.expectedAmount,
      })),
      deadline: order.output.deadline,
      calls: order.output.calls.map(lower),
      extraData: lower(order.output.extraData),
    },
    fees: order.fees.map((fee) => ({
      recipientChainId: id(fee.recipientChain),
      recipient: fee.recipientChain.adapter.identity.encodeAddress(fee.recipient, 'recipient'),
      currencyChainId: id(fee.currencyChain),
      currency: fee.currencyChain.adapter.identity.encodeAddress(fee.currency, 'currency'),
      amount: fee.amount,
    })),
  }
}

/**
 * The form a transaction id or address is stored and compared in: 0x-hex values (EVM hashes and
 * addresses) are case-insensitive and lower-cased; other encodings (SVM base58 keys and
 * signatures) are case-sensitive and kept exactly.
 */
export function canonicalId(value: string): string {
  return /^0x[0-9a-fA-F]+$/.test(value) ? value.toLowerCase() : value
}
