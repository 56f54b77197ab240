import { parseAbi } from 'viem'

/** The depository interface of the settlement protocol (see REFERENCE: EVM depository). */
export const depositoryAbi = parseAbi([
  'struct DepositoryCall { address to; bytes data; uint256 value; bool allowFailure; }',
  'struct CallRequest { DepositoryCall[] calls; uint256 nonce; uint256 expiration; }',
  'struct CallResult { bool success; bytes returnData; }',
  'function depositNative(address depositor, bytes32 id) payable',
  'function depositErc20(address depositor, address token, uint256 amount, bytes32 id)',
  'function depositErc20WithAuthorization(address depositor, address token, uint256 amount, bytes32 id, uint256 validAfter, uint256 validBefore, bytes signature)',
  'function execute(CallRequest request, bytes signature) returns (CallResult[] results)',
  'function callRequests(bytes32 id) view returns (bool)',
  'event RelayNativeDeposit(address from, uint256 amount, bytes32 id)',
  'event RelayErc20Deposit(address from, address token, uint256 amount, bytes32 id)',
  'event RelayCallExecuted(bytes32 id, DepositoryCall call)',
  'error AddressCannotBeZero()',
  'error InvalidSignature()',
  'error CallRequestExpired()',
  'error CallRequestAlreadyUsed()',
  'error CallFailed(bytes returnData)',
  'error TransferFailed()',
])

/**
 * EIP-712 types of the depository's `execute` request (domain "RelayDepository", version "1"); the
 * request id the depository emits and replay-protects is the struct hash of `CallRequest`.
 */
export const CALL_REQUEST_TYPES = {
  CallRequest: [
    { name: 'calls', type: 'Call[]' },
    { name: 'nonce', type: 'uint256' },
    { name: 'expiration', type: 'uint256' },
  ],
  Call: [
    { name: 'to', type: 'address' },
    { name: 'data', type: 'bytes' },
    { name: 'value', type: 'uint256' },
    { name: 'allowFailure', type: 'bool' },
  ],
} as const

/**
 * The fill multicaller: `fill` pays, then runs the destination calls from its executor, all or
 * nothing. The solver appends the order id after the ABI data, so the calldata ends with it.
 */
export const multicallerAbi = parseAbi([
  'struct Payment { address token; address recipient; uint256 amount; }',
  'struct Call { address to; uint256 value; bytes data; }',
  'function fill(bytes32 orderId, Payment[] payments, Call[] calls) payable',
  'function executor() view returns (address)',
  'event Filled(bytes32 indexed orderId, address indexed solver)',
  'error InsufficientValue(uint256 provided, uint256 required)',
  'error PaymentFailed(uint256 index, bytes reason)',
  'error CallFailed(uint256 index, bytes reason)',
  'error RefundFailed()',
  'error OnlyMulticaller()',
])

/** Errors tokens commonly revert with (OpenZeppelin 5, the devnet stablecoin), to name a failed payout. */
export const tokenErrorsAbi = parseAbi([
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  'error ERC20InvalidReceiver(address receiver)',
  'error ERC20InvalidSender(address sender)',
  'error InsufficientBalance()',
  'error InsufficientAllowance()',
  'error ZeroAddress()',
])

export const erc20Abi = parseAbi([
  'function balanceOf(address owner) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function name() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
])

/** EIP-3009: the depository pulls the user's tokens with a signed authorization naming itself as `to`. */
export const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const
