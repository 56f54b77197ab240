/**
 * The EIP-712 messages the oracle signs, in the JSON form `messages[].data` carries (uint256 and
 * int256 as decimal strings, smaller integers as numbers, bytes as 0x-hex), and their digests.
 */
import { createTypedDataHasher, type Eip712Domain, ORDER_TYPES, type OracleApi } from '@pontis/core'
import type { Hex } from 'viem'

/** One struct definition: its fields in order. */
export type TypeFields = readonly { readonly name: string; readonly type: string }[]
/** Struct definitions by name, without `EIP712Domain`. */
export type TypeDefinitions = Readonly<Record<string, TypeFields>>

export type PrimaryType = OracleApi.OracleTypedData['primaryType']

/** A message's typed data as served: what was signed, exactly. */
export interface JsonTypedData {
  readonly domain: Eip712Domain
  readonly types: TypeDefinitions
  readonly primaryType: PrimaryType
  readonly message: { readonly data: Record<string, unknown>; readonly result: Record<string, unknown> }
}

const INPUT_ENTRY: TypeFields = [
  { name: 'transactionId', type: 'bytes' },
  { name: 'onchainId', type: 'bytes32' },
  { name: 'inputIndex', type: 'uint32' },
]

const SOLVER_RESULT: TypeFields = [
  { name: 'orderId', type: 'bytes32' },
  { name: 'status', type: 'uint8' },
  { name: 'totalWeightedInputPaymentBpsDiff', type: 'int256' },
]

const WITHDRAWAL_REQUEST: TypeFields = [
  { name: 'chainId', type: 'string' },
  { name: 'depository', type: 'bytes' },
  { name: 'currency', type: 'bytes' },
  { name: 'amount', type: 'uint256' },
  { name: 'ownerChainId', type: 'string' },
  { name: 'owner', type: 'bytes' },
  { name: 'recipient', type: 'bytes' },
  { name: 'nonce', type: 'bytes32' },
]

/** The types of each signed message, as listed in openapi/oracle.yaml. */
export const MESSAGE_TYPES = {
  DepositoryDeposit: {
    DepositoryDeposit: [
      { name: 'data', type: 'Data' },
      { name: 'result', type: 'Result' },
    ],
    Data: [
      { name: 'chainId', type: 'string' },
      { name: 'transactionId', type: 'bytes' },
    ],
    Result: [
      { name: 'onchainId', type: 'bytes32' },
      { name: 'depository', type: 'bytes' },
      { name: 'depositId', type: 'bytes32' },
      { name: 'depositor', type: 'bytes' },
      { name: 'currency', type: 'bytes' },
      { name: 'amount', type: 'uint256' },
    ],
  },
  DepositoryWithdrawal: {
    DepositoryWithdrawal: [
      { name: 'data', type: 'Data' },
      { name: 'result', type: 'Result' },
    ],
    Data: [
      { name: 'chainId', type: 'string' },
      { name: 'withdrawal', type: 'bytes' },
    ],
    Result: [
      { name: 'withdrawalId', type: 'bytes32' },
      { name: 'depository', type: 'bytes' },
      { name: 'status', type: 'uint8' },
    ],
  },
  SolverFill: {
    SolverFill: [
      { name: 'data', type: 'Data' },
      { name: 'result', type: 'Result' },
    ],
    Data: [
      { name: 'order', type: 'Order' },
      { name: 'orderSignature', type: 'bytes' },
      { name: 'inputs', type: 'InputEntry[]' },
      { name: 'fill', type: 'FillEntry' },
    ],
    InputEntry: INPUT_ENTRY,
    FillEntry: [{ name: 'transactionId', type: 'bytes' }],
    Result: SOLVER_RESULT,
    ...ORDER_TYPES,
  },
  SolverRefund: {
    SolverRefund: [
      { name: 'data', type: 'Data' },
      { name: 'result', type: 'Result' },
    ],
    Data: [
      { name: 'order', type: 'Order' },
      { name: 'orderSignature', type: 'bytes' },
      { name: 'inputs', type: 'InputEntry[]' },
      { name: 'refunds', type: 'RefundEntry[]' },
    ],
    InputEntry: INPUT_ENTRY,
    RefundEntry: [
      { name: 'transactionId', type: 'bytes' },
      { name: 'inputIndex', type: 'uint32' },
      { name: 'refundIndex', type: 'uint32' },
    ],
    Result: SOLVER_RESULT,
    ...ORDER_TYPES,
  },
  WithdrawalInitiation: {
    WithdrawalInitiation: [
      { name: 'data', type: 'WithdrawalRequest' },
      { name: 'result', type: 'Result' },
    ],
    WithdrawalRequest: WITHDRAWAL_REQUEST,
    Result: [
      { name: 'withdrawalRequestHash', type: 'bytes32' },
      { name: 'withdrawalAddress', type: 'address' },
    ],
  },
  WithdrawalInitiated: {
    WithdrawalInitiated: [
      { name: 'data', type: 'WithdrawalRequest' },
      { name: 'result', type: 'Result' },
    ],
    WithdrawalRequest: WITHDRAWAL_REQUEST,
    Result: [
      { name: 'withdrawalRequestHash', type: 'bytes32' },
      { name: 'withdrawalAddress', type: 'address' },
      { name: 'balance', type: 'uint256' },
    ],
  },
} as const satisfies Record<PrimaryType, TypeDefinitions>

/** The typed data of a withdrawal request alone: what the owner signs (its digest). */
export const WITHDRAWAL_REQUEST_TYPES = { WithdrawalRequest: WITHDRAWAL_REQUEST } as const

/** The type of execution signatures (REFERENCE: `Execution(bytes32 idempotencyKey, bytes[] actions)`). */
export const EXECUTION_TYPES = {
  Execution: [
    { name: 'idempotencyKey', type: 'bytes32' },
    { name: 'actions', type: 'bytes[]' },
  ],
} as const

const INTEGER_TYPE = /^u?int(\d*)$/

/**
 * `value` of EIP-712 type `type` in the form viem hashes: 256-bit (and any over 48-bit) integers from
 * their decimal strings to bigints, structs and arrays recursively. The JSON form keeps them as
 * strings because JSON numbers lose precision above 2^53.
 */
export function toSignableValue(types: TypeDefinitions, type: string, value: unknown): unknown {
  if (type.endsWith('[]')) {
    const element = type.slice(0, -2)
    return (Array.isArray(value) ? value : []).map((item) => toSignableValue(types, element, item))
  }
  const fields = types[type]
  if (fields !== undefined) {
    const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
    return Object.fromEntries(
      fields.map((field) => [field.name, toSignableValue(types, field.type, record[field.name])]),
    )
  }
  if (INTEGER_TYPE.test(type) && (typeof value === 'string' || typeof value === 'number'))
    return BigInt(value)
  return value
}

// One digest hasher per message type (type hashes computed once), used when a message carries
// exactly the types of MESSAGE_TYPES, which every message this oracle or a peer of it signs does.
const MESSAGE_HASHERS = new Map(
  (Object.entries(MESSAGE_TYPES) as [PrimaryType, TypeDefinitions][]).map(([primaryType, types]) => [
    primaryType,
    { types, json: JSON.stringify(types), digest: createTypedDataHasher(types, primaryType) },
  ]),
)

const hashExecution = createTypedDataHasher(EXECUTION_TYPES, 'Execution')

/** The EIP-712 digest of a message in its JSON form. */
export function typedDataDigest(data: JsonTypedData): Hex {
  const known = MESSAGE_HASHERS.get(data.primaryType)
  const digest =
    known !== undefined && (data.types === known.types || JSON.stringify(data.types) === known.json)
      ? known.digest
      : createTypedDataHasher(data.types, data.primaryType)
  return digest(data.domain, toSignableValue(data.types, data.primaryType, data.message) as object)
}

/** The EIP-712 digest of an execution under the oracle domain. */
export function executionDigest(domain: Eip712Domain, idempotencyKey: Hex, actions: readonly Hex[]): Hex {
  return hashExecution(domain, { idempotencyKey, actions })
}
