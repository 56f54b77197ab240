// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @notice One call made by the depository on behalf of the allocator.
/// @param to The call target (an ERC-20 for a token payout, the recipient for a native payout).
/// @param data The calldata (empty for a plain native transfer).
/// @param value The native value sent with the call.
/// @param allowFailure When false, a failing call reverts the whole request.
struct Call {
    address to;
    bytes data;
    uint256 value;
    bool allowFailure;
}

/// @notice A batch of calls signed by the allocator under EIP-712.
/// @param calls The calls, executed in order.
/// @param nonce Makes otherwise identical requests distinct.
/// @param expiration The last timestamp at which the request may be executed.
struct CallRequest {
    Call[] calls;
    uint256 nonce;
    uint256 expiration;
}

/// @notice The outcome of one executed call.
/// @param success Whether the call succeeded.
/// @param returnData The data the call returned (or its revert data).
struct CallResult {
    bool success;
    bytes returnData;
}

/// @notice The EIP-3009 entry point the depository uses for signed deposits.
interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}

/// @title PontisDepository
/// @notice Holds deposits for cross-chain intents and pays out (withdrawals, refunds) only through
///         call requests signed by the allocator. Interface-compatible with Relay's RelayDepository:
///         same functions, events, errors and EIP-712 domain ("RelayDepository", version "1").
/// @dev The request id (event id and replay key) is the EIP-712 struct hash of the CallRequest, as in
///      RelayDepository; the signed digest is the full EIP-712 hash. The allocator is an EOA:
///      signatures are 65-byte (r, s, v), low-s only.
contract PontisDepository {
    /// @notice The allocator address given to the constructor is zero.
    error AddressCannotBeZero();
    /// @notice The signature is malformed, malleable or not from the allocator.
    error InvalidSignature();
    /// @notice The request's expiration is in the past.
    error CallRequestExpired();
    /// @notice The request was already executed.
    error CallRequestAlreadyUsed();
    /// @notice A call with `allowFailure == false` failed.
    /// @param returnData The revert data of the failed call.
    error CallFailed(bytes returnData);
    /// @notice The token transfer into the depository failed.
    error TransferFailed();

    /// @notice A native deposit was made.
    /// @param from The depositor credited (msg.sender unless another depositor was named).
    /// @param amount The amount of native currency deposited.
    /// @param id The deposit id (the intent's request id).
    event RelayNativeDeposit(address from, uint256 amount, bytes32 id);

    /// @notice An ERC-20 deposit was made; emitted right after the token's `Transfer`.
    /// @param from The depositor credited (msg.sender unless another depositor was named).
    /// @param token The token.
    /// @param amount The amount deposited.
    /// @param id The deposit id (the intent's request id).
    event RelayErc20Deposit(address from, address token, uint256 amount, bytes32 id);

    /// @notice A call of an executed request succeeded.
    /// @param id The request id (EIP-712 struct hash of the CallRequest).
    /// @param call The call.
    event RelayCallExecuted(bytes32 id, Call call);

    /// @notice EIP-712 typehash of `Call`.
    bytes32 public constant _CALL_TYPEHASH = keccak256("Call(address to,bytes data,uint256 value,bool allowFailure)");
    /// @notice EIP-712 typehash of `CallRequest` (with the referenced `Call` type appended).
    bytes32 public constant _CALL_REQUEST_TYPEHASH = keccak256(
        "CallRequest(Call[] calls,uint256 nonce,uint256 expiration)Call(address to,bytes data,uint256 value,bool allowFailure)"
    );

    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant _NAME_HASH = keccak256("RelayDepository");
    bytes32 private constant _VERSION_HASH = keccak256("1");
    /// @dev secp256k1n / 2: larger s values are the malleable twin of a valid signature.
    uint256 private constant _HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice The key whose EIP-712 signature authorises `execute`.
    address public immutable allocator;
    /// @notice Executed requests, by request id.
    mapping(bytes32 => bool) public callRequests;

    uint256 private immutable _cachedChainId;
    bytes32 private immutable _cachedDomainSeparator;

    /// @notice Sets the allocator.
    /// @param allocator_ The address whose signatures `execute` accepts.
    constructor(address allocator_) {
        if (allocator_ == address(0)) revert AddressCannotBeZero();
        allocator = allocator_;
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _buildDomainSeparator();
    }

    /// @notice Accepts plain native transfers (e.g. solver top-ups); they are not deposits.
    receive() external payable {}

    /// @notice Deposits native currency and emits `RelayNativeDeposit`.
    /// @param depositor The depositor to credit; zero credits msg.sender.
    /// @param id The deposit id.
    function depositNative(address depositor, bytes32 id) external payable {
        emit RelayNativeDeposit(depositor == address(0) ? msg.sender : depositor, msg.value, id);
    }

    /// @notice Pulls `amount` of `token` from msg.sender and emits `RelayErc20Deposit`.
    /// @param depositor The depositor to credit; zero credits msg.sender.
    /// @param token The ERC-20 token.
    /// @param amount The amount to pull (msg.sender must have approved it).
    /// @param id The deposit id.
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) public {
        _safeTransferFrom(token, msg.sender, amount);
        emit RelayErc20Deposit(depositor == address(0) ? msg.sender : depositor, token, amount, id);
    }

    /// @notice Deposits msg.sender's whole allowance of `token` to this contract.
    /// @param depositor The depositor to credit; zero credits msg.sender.
    /// @param token The ERC-20 token.
    /// @param id The deposit id.
    function depositErc20(address depositor, address token, bytes32 id) external {
        depositErc20(depositor, token, _allowance(token, msg.sender), id);
    }

    /// @notice Pulls `amount` of `token` from `depositor` with their EIP-3009 `ReceiveWithAuthorization`
    ///         (payee: this contract, nonce: `id`) and emits `RelayErc20Deposit`. Anyone may submit it:
    ///         the signature binds depositor, amount, validity window and request id, so a relayer can
    ///         pay the gas of a user's deposit.
    /// @param depositor The token holder who signed the authorization.
    /// @param token The EIP-3009 token.
    /// @param amount The authorized amount.
    /// @param id The deposit id, also the authorization nonce.
    /// @param validAfter The authorization is valid after this time (seconds).
    /// @param validBefore The authorization is valid before this time (seconds).
    /// @param signature The depositor's 65-byte EIP-712 signature of the authorization.
    function depositErc20WithAuthorization(
        address depositor,
        address token,
        uint256 amount,
        bytes32 id,
        uint256 validAfter,
        uint256 validBefore,
        bytes calldata signature
    ) external {
        if (token.code.length == 0) revert TransferFailed();
        IERC3009Receive(token).receiveWithAuthorization(
            depositor, address(this), amount, validAfter, validBefore, id, signature
        );
        emit RelayErc20Deposit(depositor, token, amount, id);
    }

    /// @notice Executes a call request signed by the allocator.
    /// @param request The request.
    /// @param signature The allocator's 65-byte EIP-712 signature of the request.
    /// @return results The outcome of each call.
    function execute(CallRequest calldata request, bytes calldata signature)
        external
        returns (CallResult[] memory results)
    {
        (bytes32 id, bytes32 digest) = hashCallRequest(request);
        if (request.expiration < block.timestamp) revert CallRequestExpired();
        if (!_isAllocatorSignature(digest, signature)) revert InvalidSignature();
        if (callRequests[id]) revert CallRequestAlreadyUsed();
        // Marked before the calls run, so a call cannot re-enter with the same request.
        callRequests[id] = true;

        uint256 length = request.calls.length;
        results = new CallResult[](length);
        for (uint256 i; i < length; ++i) {
            Call calldata c = request.calls[i];
            (bool success, bytes memory data) = c.to.call{value: c.value}(c.data);
            if (!success && !c.allowFailure) revert CallFailed(data);
            results[i] = CallResult(success, data);
            // Only calls that took effect are reported, so indexers never count a failed payout.
            if (success) emit RelayCallExecuted(id, c);
        }
    }

    /// @notice Hashes a call request the way `execute` does.
    /// @param request The request.
    /// @return structHash The EIP-712 struct hash: the request id used for replay protection and events.
    /// @return digest The EIP-712 digest the allocator signs.
    function hashCallRequest(CallRequest calldata request) public view returns (bytes32 structHash, bytes32 digest) {
        uint256 length = request.calls.length;
        bytes32[] memory callHashes = new bytes32[](length);
        for (uint256 i; i < length; ++i) {
            Call calldata c = request.calls[i];
            callHashes[i] = keccak256(abi.encode(_CALL_TYPEHASH, c.to, keccak256(c.data), c.value, c.allowFailure));
        }
        structHash = keccak256(
            abi.encode(
                _CALL_REQUEST_TYPEHASH, keccak256(abi.encodePacked(callHashes)), request.nonce, request.expiration
            )
        );
        digest = keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// @notice The EIP-712 domain separator for the current chain.
    /// @return The separator (recomputed if the chain id changed since deployment, e.g. after a fork).
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == _cachedChainId ? _cachedDomainSeparator : _buildDomainSeparator();
    }

    /// @notice EIP-5267 domain description, so clients can discover the domain.
    /// @return fields Bitmap of the fields in use (name, version, chainId, verifyingContract).
    /// @return name The domain name.
    /// @return version The domain version.
    /// @return chainId The chain id.
    /// @return verifyingContract This contract.
    /// @return salt Unused.
    /// @return extensions Unused.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", "RelayDepository", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(_DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, address(this)));
    }

    /// @dev Accepts a canonical 65-byte (r, s, v) signature by the allocator; v may be 0/1 or 27/28.
    function _isAllocatorSignature(bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (signature.length != 65) return false;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > _HALF_ORDER || (v != 27 && v != 28)) return false;
        address signer = ecrecover(digest, v, r, s);
        return signer != address(0) && signer == allocator;
    }

    /// @dev transferFrom(msg.sender → this) that also accepts tokens returning nothing (USDT-style).
    function _safeTransferFrom(address token, address from, uint256 amount) private {
        if (token.code.length == 0) revert TransferFailed();
        (bool success, bytes memory data) =
            token.call(abi.encodeWithSelector(0x23b872dd, from, address(this), amount));
        if (!success && data.length != 0) {
            // Bubble the token's own reason (e.g. insufficient allowance) up to the depositor.
            assembly ("memory-safe") {
                revert(add(data, 32), mload(data))
            }
        }
        if (!success || (data.length != 0 && (data.length != 32 || !abi.decode(data, (bool))))) {
            revert TransferFailed();
        }
    }

    function _allowance(address token, address owner) private view returns (uint256) {
        (bool success, bytes memory data) =
            token.staticcall(abi.encodeWithSelector(0xdd62ed3e, owner, address(this)));
        if (!success || data.length < 32) revert TransferFailed();
        return abi.decode(data, (uint256));
    }
}
