import { parseAbi } from 'viem'

/** The depository interface of the settlement protocol (see REFERENCE: EVM depository). */
export const depositoryAbi = parseAbi([
  'function depositNative(address depositor, bytes32 id) payable',
  'function depositErc20(address depositor, address token, uint256 amount, bytes32 id)',
  'function depositErc20WithAuthorization(address depositor, address token, uint256 amount, bytes32 id, uint256 validAfter, uint256 validBefore, bytes signature)',
  'event RelayNativeDeposit(address from, uint256 amount, bytes32 id)',
  'event RelayErc20Deposit(address from, address token, uint256 amount, bytes32 id)',
])

export const erc20Abi = parseAbi([
  'function balanceOf(address owner) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
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
