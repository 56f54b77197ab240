/**
 * JSON-RPC errors and Solana transaction errors in the shapes the real RPC uses: transaction errors
 * serialize like agave's serde output (`"BlockhashNotFound"`, `{"InstructionError":[0,{"Custom":1}]}`)
 * and print like its Display implementation ("Error processing Instruction 0: custom program error:
 * 0x1"), which is what preflight failures put into their message.
 */
import type { FailedTransactionMetadata } from 'litesvm'

/** JSON-RPC 2.0 and Solana RPC error codes. */
export const RPC_ERROR = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** sendTransaction: the preflight simulation failed (`data` is the simulation result). */
  sendTransactionPreflightFailure: -32002,
  /** sendTransaction / simulateTransaction with sigVerify: a signature does not verify. */
  transactionSignatureVerificationFailure: -32003,
  /** getBlockTime and friends: the slot has no block (yet). */
  blockNotAvailable: -32004,
  /** getTransaction & co: a v0 transaction without `maxSupportedTransactionVersion`. */
  unsupportedTransactionVersion: -32015,
  /** `minContextSlot` is ahead of the node. */
  minContextSlotNotReached: -32016,
})

/** An error answered to the client as a JSON-RPC error object. */
export class RpcError extends Error {
  readonly code: number
  readonly data: unknown

  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.name = 'RpcError'
    this.code = code
    this.data = data
  }
}

/** A -32602 error; `detail` says what is wrong with which parameter. */
export function invalidParams(detail: string): RpcError {
  return new RpcError(RPC_ERROR.invalidParams, `Invalid params: ${detail}`)
}

/** A transaction error as the RPC serializes it: a bare variant name or a one-key object. */
export type TransactionErrorJson = string | { readonly [variant: string]: unknown }

/** A transaction error with its RPC JSON and its human-readable text. */
export interface TransactionErrorInfo {
  readonly json: TransactionErrorJson
  readonly message: string
}

// Index = LiteSVM's `TransactionErrorFieldless` value (an ambient const enum, not importable).
const TRANSACTION_ERRORS: readonly (readonly [string, string])[] = [
  ['AccountInUse', 'Account in use'],
  ['AccountLoadedTwice', 'Account loaded twice'],
  ['AccountNotFound', 'Attempt to debit an account but found no record of a prior credit.'],
  ['ProgramAccountNotFound', 'Attempt to load a program that does not exist'],
  ['InsufficientFundsForFee', 'Insufficient funds for fee'],
  ['InvalidAccountForFee', 'This account may not be used to pay transaction fees'],
  ['AlreadyProcessed', 'This transaction has already been processed'],
  ['BlockhashNotFound', 'Blockhash not found'],
  ['CallChainTooDeep', 'Loader call chain is too deep'],
  ['MissingSignatureForFee', 'Transaction requires a fee but has no signature present'],
  ['InvalidAccountIndex', 'Transaction contains an invalid account reference'],
  ['SignatureFailure', 'Transaction did not pass signature verification'],
  ['InvalidProgramForExecution', 'This program may not be used for executing instructions'],
  ['SanitizeFailure', 'Transaction failed to sanitize accounts offsets correctly'],
  ['ClusterMaintenance', 'Transactions are currently disabled due to cluster maintenance'],
  [
    'AccountBorrowOutstanding',
    'Transaction processing left an account with an outstanding borrowed reference',
  ],
  ['WouldExceedMaxBlockCostLimit', 'Transaction would exceed max Block Cost Limit'],
  ['UnsupportedVersion', 'Transaction version is unsupported'],
  ['InvalidWritableAccount', 'Transaction loads a writable account that cannot be written'],
  ['WouldExceedMaxAccountCostLimit', 'Transaction would exceed max account limit within the block'],
  ['WouldExceedAccountDataBlockLimit', 'Transaction would exceed account data limit within the block'],
  ['TooManyAccountLocks', 'Transaction locked too many accounts'],
  ['AddressLookupTableNotFound', "Transaction loads an address table account that doesn't exist"],
  ['InvalidAddressLookupTableOwner', 'Transaction loads an address table account with an invalid owner'],
  ['InvalidAddressLookupTableData', 'Transaction loads an address table account with invalid data'],
  ['InvalidAddressLookupTableIndex', 'Transaction address table lookup uses an invalid index'],
  ['InvalidRentPayingAccount', 'Transaction leaves an account with a lower balance than rent-exempt minimum'],
  ['WouldExceedMaxVoteCostLimit', 'Transaction would exceed max Vote Cost Limit'],
  ['WouldExceedAccountDataTotalLimit', 'Transaction would exceed total account data limit'],
  ['MaxLoadedAccountsDataSizeExceeded', 'Transaction exceeded max loaded accounts data size cap'],
  ['ResanitizationNeeded', 'ResanitizationNeeded'],
  [
    'InvalidLoadedAccountsDataSizeLimit',
    'LoadedAccountsDataSizeLimit set for transaction must be greater than 0.',
  ],
  ['UnbalancedTransaction', 'Sum of account balances before and after transaction do not match'],
  ['ProgramCacheHitMaxLimit', 'Program cache hit max limit'],
  ['CommitCancelled', 'CommitCancelled'],
]

// Index = LiteSVM's `InstructionErrorFieldless` value.
const INSTRUCTION_ERRORS: readonly (readonly [string, string])[] = [
  ['GenericError', 'generic instruction error'],
  ['InvalidArgument', 'invalid program argument'],
  ['InvalidInstructionData', 'invalid instruction data'],
  ['InvalidAccountData', 'invalid account data for instruction'],
  ['AccountDataTooSmall', 'account data too small for instruction'],
  ['InsufficientFunds', 'insufficient funds for instruction'],
  ['IncorrectProgramId', 'incorrect program id for instruction'],
  ['MissingRequiredSignature', 'missing required signature for instruction'],
  ['AccountAlreadyInitialized', 'instruction requires an uninitialized account'],
  ['UninitializedAccount', 'instruction requires an initialized account'],
  ['UnbalancedInstruction', 'sum of account balances before and after instruction do not match'],
  ['ModifiedProgramId', 'instruction illegally modified the program id of an account'],
  ['ExternalAccountLamportSpend', 'instruction spent from the balance of an account it does not own'],
  ['ExternalAccountDataModified', 'instruction modified data of an account it does not own'],
  ['ReadonlyLamportChange', 'instruction changed the balance of a read-only account'],
  ['ReadonlyDataModified', 'instruction modified data of a read-only account'],
  ['DuplicateAccountIndex', 'instruction contains duplicate accounts'],
  ['ExecutableModified', 'instruction changed executable bit of an account'],
  ['RentEpochModified', 'instruction modified rent epoch of an account'],
  ['NotEnoughAccountKeys', 'insufficient account keys for instruction'],
  ['AccountDataSizeChanged', "program other than the account's owner changed the size of the account data"],
  ['AccountNotExecutable', 'instruction expected an executable account'],
  ['AccountBorrowFailed', 'instruction tries to borrow reference for an account which is already borrowed'],
  ['AccountBorrowOutstanding', 'instruction left account with an outstanding borrowed reference'],
  ['DuplicateAccountOutOfSync', 'instruction modifications of multiply-passed account differ'],
  ['InvalidError', 'program returned invalid error code'],
  ['ExecutableDataModified', 'instruction changed executable accounts data'],
  ['ExecutableLamportChange', 'instruction changed the balance of an executable account'],
  ['ExecutableAccountNotRentExempt', 'executable accounts must be rent exempt'],
  ['UnsupportedProgramId', 'Unsupported program id'],
  ['CallDepth', 'Cross-program invocation call depth too deep'],
  ['MissingAccount', 'An account required by the instruction is missing'],
  ['ReentrancyNotAllowed', 'Cross-program invocation reentrancy not allowed for this instruction'],
  ['MaxSeedLengthExceeded', 'Length of the seed is too long for address generation'],
  ['InvalidSeeds', 'Provided seeds do not result in a valid address'],
  ['InvalidRealloc', 'Failed to reallocate account data'],
  ['ComputationalBudgetExceeded', 'Computational budget exceeded'],
  ['PrivilegeEscalation', 'Cross-program invocation with unauthorized signer or writable account'],
  ['ProgramEnvironmentSetupFailure', 'Failed to create program execution environment'],
  ['ProgramFailedToComplete', 'Program failed to complete'],
  ['ProgramFailedToCompile', 'Program failed to compile'],
  ['Immutable', 'Account is immutable'],
  ['IncorrectAuthority', 'Incorrect authority provided'],
  ['AccountNotRentExempt', 'An account does not have enough lamports to be rent-exempt'],
  ['InvalidAccountOwner', 'Invalid account owner'],
  ['ArithmeticOverflow', 'Program arithmetic overflowed'],
  ['UnsupportedSysvar', 'Unsupported sysvar'],
  ['IllegalOwner', 'Provided owner is not allowed'],
  [
    'MaxAccountsDataAllocationsExceeded',
    'Accounts data allocations exceeded the maximum allowed per transaction',
  ],
  ['MaxAccountsExceeded', 'Max accounts exceeded'],
  ['MaxInstructionTraceLengthExceeded', 'Max instruction trace length exceeded'],
  ['BuiltinProgramsMustConsumeComputeUnits', 'Builtin programs must consume compute units'],
  ['BorshIoError', 'Failed to serialize or deserialize account data'],
]

/** A fieldless transaction error by its variant name (for errors the ledger raises itself). */
export function transactionError(variant: string): TransactionErrorInfo {
  const known = TRANSACTION_ERRORS.find(([name]) => name === variant)
  return { json: variant, message: known?.[1] ?? variant }
}

type LiteSvmTransactionError = ReturnType<FailedTransactionMetadata['err']>
type LiteSvmInstructionError = ReturnType<Extract<LiteSvmTransactionError, { err(): unknown }>['err']>

function instructionError(error: LiteSvmInstructionError): TransactionErrorInfo {
  if (typeof error === 'number') {
    const [name, message] = INSTRUCTION_ERRORS[error] ?? [
      `InstructionError${error}`,
      `instruction error ${error}`,
    ]
    return { json: name, message }
  }
  if ('code' in error) {
    return { json: { Custom: error.code }, message: `custom program error: 0x${error.code.toString(16)}` }
  }
  return {
    json: { BorshIoError: error.msg },
    message: `Failed to serialize or deserialize account data: ${error.msg}`,
  }
}

/** Converts the error of a failed LiteSVM transaction to its RPC JSON and text. */
export function fromLiteSvmError(error: LiteSvmTransactionError): TransactionErrorInfo {
  if (typeof error === 'number') {
    const [name, message] = TRANSACTION_ERRORS[error] ?? [
      `TransactionError${error}`,
      `transaction error ${error}`,
    ]
    return { json: name, message }
  }
  if ('err' in error) {
    const inner = instructionError(error.err())
    return {
      json: { InstructionError: [error.index, inner.json] },
      message: `Error processing Instruction ${error.index}: ${inner.message}`,
    }
  }
  if ('index' in error) {
    return {
      json: { DuplicateInstruction: error.index },
      message: `Transaction contains a duplicate instruction (${error.index}) that is not allowed`,
    }
  }
  // The two remaining variants carry the same field; only the class tells them apart.
  if (error.constructor.name === 'TransactionErrorProgramExecutionTemporarilyRestricted') {
    return {
      json: { ProgramExecutionTemporarilyRestricted: { account_index: error.accountIndex } },
      message: `Execution of the program referenced by account at index ${error.accountIndex} is temporarily restricted.`,
    }
  }
  return {
    json: { InsufficientFundsForRent: { account_index: error.accountIndex } },
    message: `Transaction results in an account (${error.accountIndex}) with insufficient funds for rent`,
  }
}
