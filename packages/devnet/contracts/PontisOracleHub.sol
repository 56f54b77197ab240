// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title PontisOracleHub
/// @notice The settlement hub's oracle contract: applies executions (batches of ledger actions) that a
///         threshold of oracle signers approved under EIP-712, each at most once per idempotency key,
///         to a minimal balance ledger of (account, asset) keys.
/// @dev Signed type: `Execution(bytes32 idempotencyKey,bytes[] actions)`. Signatures are 65-byte
///      `r || s || v` from EOAs, `v` 27 or 28, low-s only, ordered by strictly ascending signer
///      address so a signer cannot be counted twice. Each action is
///      `abi.encode(uint8 kind, bytes32 from, bytes32 to, bytes32 asset, uint256 amount)`.
contract PontisOracleHub {
    /// @notice A constructor signer is the zero address.
    /// @param index The signer's position in the constructor list.
    error ZeroSigner(uint256 index);
    /// @notice A constructor signer appears twice.
    /// @param index The position of the repetition in the constructor list.
    /// @param signer The repeated signer.
    error DuplicateSigner(uint256 index, address signer);
    /// @notice The threshold is zero or larger than the number of signers.
    /// @param threshold The threshold given.
    /// @param signerCount The number of signers given.
    error InvalidThreshold(uint256 threshold, uint256 signerCount);
    /// @notice A signature is not 65 bytes long.
    error InvalidSignatureLength(uint256 index);
    /// @notice A signature's `v` is neither 27 nor 28.
    error InvalidSignatureV(uint256 index);
    /// @notice A signature's `s` is in the upper half of the curve order (the malleable twin).
    error HighS(uint256 index);
    /// @notice A signature recovers to no address.
    error InvalidSignature(uint256 index);
    /// @notice A signature recovers to an address outside the signer set (also the symptom of a
    ///         signature made over other data).
    error UnknownSigner(uint256 index, address signer);
    /// @notice A signature's signer is not above the previous one's (unsorted or repeated).
    error SignersNotSorted(uint256 index);
    /// @notice Fewer signatures than the threshold.
    error BelowThreshold(uint256 count, uint256 threshold);
    /// @notice The idempotency key was executed before.
    error AlreadyExecuted(bytes32 idempotencyKey);
    /// @notice An action is not the ABI encoding of (uint8, bytes32, bytes32, bytes32, uint256).
    error MalformedAction(uint256 index);
    /// @notice An action's kind is none of CREDIT, TRANSFER, LOCK, RELEASE, BURN.
    error UnknownAction(uint256 index, uint8 kind);
    /// @notice A debit exceeds the account's balance of the asset.
    error InsufficientBalance(bytes32 account, bytes32 asset, uint256 balance, uint256 amount);
    /// @notice RELEASE from an account that no LOCK ever credited.
    error NoReturnAccount(bytes32 account);

    /// @notice An execution was applied.
    /// @param idempotencyKey Its key.
    /// @param actionCount The number of actions applied.
    event Executed(bytes32 indexed idempotencyKey, uint256 actionCount);
    /// @notice A balance was written.
    /// @param account The account key.
    /// @param asset The asset key.
    /// @param balance The new balance.
    event BalanceChanged(bytes32 indexed account, bytes32 indexed asset, uint256 balance);

    /// @notice EIP-712 typehash of `Execution`.
    bytes32 public constant EXECUTION_TYPEHASH = keccak256("Execution(bytes32 idempotencyKey,bytes[] actions)");

    uint8 private constant _CREDIT = 0;
    uint8 private constant _TRANSFER = 1;
    uint8 private constant _LOCK = 2;
    uint8 private constant _RELEASE = 3;
    uint8 private constant _BURN = 4;
    /// @dev abi.encode of (uint8, bytes32, bytes32, bytes32, uint256): five words.
    uint256 private constant _ACTION_LENGTH = 160;

    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    /// @dev secp256k1n / 2: larger s values are the malleable twin of a valid signature.
    uint256 private constant _HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice How many distinct signers an execution needs.
    uint256 public immutable threshold;
    /// @notice Executed idempotency keys.
    mapping(bytes32 => bool) public executed;
    /// @notice Where RELEASE sends an account's funds: the `from` of the last LOCK into it.
    mapping(bytes32 => bytes32) public returnAccountOf;

    address[] private _signers;
    mapping(address => bool) private _isSigner;
    mapping(bytes32 => mapping(bytes32 => uint256)) private _balances;

    string private _name;
    string private _version;
    bytes32 private immutable _nameHash;
    bytes32 private immutable _versionHash;
    uint256 private immutable _cachedChainId;
    bytes32 private immutable _cachedDomainSeparator;

    /// @notice Sets the EIP-712 domain and the signer set.
    /// @param name The EIP-712 domain name.
    /// @param version The EIP-712 domain version.
    /// @param signers_ The signers: nonzero and distinct.
    /// @param threshold_ Signatures needed, from 1 to `signers_.length`.
    constructor(string memory name, string memory version, address[] memory signers_, uint256 threshold_) {
        uint256 length = signers_.length;
        if (threshold_ == 0 || threshold_ > length) revert InvalidThreshold(threshold_, length);
        for (uint256 i; i < length; ++i) {
            address signer = signers_[i];
            if (signer == address(0)) revert ZeroSigner(i);
            if (_isSigner[signer]) revert DuplicateSigner(i, signer);
            _isSigner[signer] = true;
        }
        _signers = signers_;
        threshold = threshold_;
        _name = name;
        _version = version;
        _nameHash = keccak256(bytes(name));
        _versionHash = keccak256(bytes(version));
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _buildDomainSeparator();
    }

    /// @notice Verifies the signatures over an execution and applies its actions in order, once per
    ///         idempotency key. Anyone may submit it: the signatures carry the authority.
    /// @param idempotencyKey The execution's key.
    /// @param actions The ABI-encoded actions.
    /// @param signatures At least `threshold` signatures, by ascending signer address.
    function execute(bytes32 idempotencyKey, bytes[] calldata actions, bytes[] calldata signatures) external {
        verifySignatures(hashExecution(idempotencyKey, actions), signatures);
        if (executed[idempotencyKey]) revert AlreadyExecuted(idempotencyKey);
        executed[idempotencyKey] = true;
        uint256 length = actions.length;
        for (uint256 i; i < length; ++i) {
            _apply(i, actions[i]);
        }
        emit Executed(idempotencyKey, length);
    }

    /// @notice The EIP-712 digest of an execution, the hash the signers sign.
    /// @param idempotencyKey The execution's key.
    /// @param actions The ABI-encoded actions.
    /// @return digest `keccak256(0x1901 || DOMAIN_SEPARATOR || structHash)`.
    function hashExecution(bytes32 idempotencyKey, bytes[] calldata actions) public view returns (bytes32 digest) {
        uint256 length = actions.length;
        bytes32[] memory actionHashes = new bytes32[](length);
        for (uint256 i; i < length; ++i) {
            actionHashes[i] = keccak256(actions[i]);
        }
        bytes32 structHash =
            keccak256(abi.encode(EXECUTION_TYPEHASH, idempotencyKey, keccak256(abi.encodePacked(actionHashes))));
        digest = keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// @notice Checks signatures over `digest`; reverts naming the first offending signature.
    /// @param digest The signed EIP-712 digest.
    /// @param signatures 65-byte signatures by ascending signer address.
    /// @return count The number of valid signatures (all of them).
    function verifySignatures(bytes32 digest, bytes[] calldata signatures) public view returns (uint256 count) {
        count = signatures.length;
        address previous;
        for (uint256 i; i < count; ++i) {
            bytes calldata signature = signatures[i];
            if (signature.length != 65) revert InvalidSignatureLength(i);
            bytes32 r = bytes32(signature[0:32]);
            bytes32 s = bytes32(signature[32:64]);
            uint8 v = uint8(signature[64]);
            if (v != 27 && v != 28) revert InvalidSignatureV(i);
            if (uint256(s) > _HALF_ORDER) revert HighS(i);
            address signer = ecrecover(digest, v, r, s);
            if (signer == address(0)) revert InvalidSignature(i);
            if (!_isSigner[signer]) revert UnknownSigner(i, signer);
            if (uint160(signer) <= uint160(previous)) revert SignersNotSorted(i);
            previous = signer;
        }
        if (count < threshold) revert BelowThreshold(count, threshold);
    }

    /// @notice The signer set, in constructor order.
    function signers() external view returns (address[] memory) {
        return _signers;
    }

    /// @notice Whether `account` is in the signer set.
    function isSigner(address account) external view returns (bool) {
        return _isSigner[account];
    }

    /// @notice An account's balance of an asset.
    /// @param account The account key (see {accountKey}).
    /// @param asset The asset key (see {assetKey}).
    function balanceOf(bytes32 account, bytes32 asset) external view returns (uint256) {
        return _balances[account][asset];
    }

    /// @notice The ledger key of an owner on a chain.
    /// @param chainId The protocol chain id (e.g. "ethereum").
    /// @param owner The owner's address bytes on that chain.
    function accountKey(string calldata chainId, bytes calldata owner) external pure returns (bytes32) {
        return keccak256(abi.encode(chainId, owner));
    }

    /// @notice The ledger key of a currency on a chain.
    /// @param chainId The protocol chain id.
    /// @param currency The currency's address bytes on that chain.
    function assetKey(string calldata chainId, bytes calldata currency) external pure returns (bytes32) {
        return keccak256(abi.encode(chainId, currency));
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
        return (hex"0f", _name, _version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(_DOMAIN_TYPEHASH, _nameHash, _versionHash, block.chainid, address(this)));
    }

    function _apply(uint256 index, bytes calldata action) private {
        if (action.length != _ACTION_LENGTH) revert MalformedAction(index);
        // Decoded as uint256 so a kind word above 255 is reported instead of failing the decoder.
        (uint256 kindWord, bytes32 from, bytes32 to, bytes32 asset, uint256 amount) =
            abi.decode(action, (uint256, bytes32, bytes32, bytes32, uint256));
        if (kindWord > type(uint8).max) revert MalformedAction(index);
        uint8 kind = uint8(kindWord);
        if (kind == _CREDIT) {
            _credit(to, asset, amount);
        } else if (kind == _TRANSFER) {
            _debit(from, asset, amount);
            _credit(to, asset, amount);
        } else if (kind == _LOCK) {
            _debit(from, asset, amount);
            _credit(to, asset, amount);
            returnAccountOf[to] = from;
        } else if (kind == _RELEASE) {
            bytes32 returnAccount = returnAccountOf[from];
            if (returnAccount == bytes32(0)) revert NoReturnAccount(from);
            _debit(from, asset, amount);
            _credit(returnAccount, asset, amount);
        } else if (kind == _BURN) {
            _debit(from, asset, amount);
        } else {
            revert UnknownAction(index, kind);
        }
    }

    function _credit(bytes32 account, bytes32 asset, uint256 amount) private {
        uint256 balance = _balances[account][asset] + amount;
        _balances[account][asset] = balance;
        emit BalanceChanged(account, asset, balance);
    }

    function _debit(bytes32 account, bytes32 asset, uint256 amount) private {
        uint256 balance = _balances[account][asset];
        if (balance < amount) revert InsufficientBalance(account, asset, balance, amount);
        unchecked {
            balance -= amount;
        }
        _balances[account][asset] = balance;
        emit BalanceChanged(account, asset, balance);
    }
}
