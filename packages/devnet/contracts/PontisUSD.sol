// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title PontisUSD
/// @notice A 6-decimals USDC-like stablecoin for the Pontis devnet: ERC-20, owner-only mint,
///         EIP-2612 `permit` and EIP-3009 transfer/receive/cancel authorizations.
/// @dev Mirrors the parts of FiatToken v2.2 that clients rely on (EIP-712 name "Pontis USD",
///      version "2", the standard typehashes, (v,r,s) and `bytes signature` overloads).
///      Signatures come from EOAs only; high-s signatures are rejected.
contract PontisUSD {
    /// @notice The caller is not the owner.
    error Unauthorized();
    /// @notice The zero address was given where an account is required.
    error ZeroAddress();
    /// @notice The sender's balance is below the transferred amount.
    error InsufficientBalance();
    /// @notice The spender's allowance is below the transferred amount.
    error InsufficientAllowance();
    /// @notice The signature is malformed, malleable or not from the expected signer.
    error InvalidSignature();
    /// @notice The permit deadline has passed.
    error PermitExpired();
    /// @notice The authorization's `validAfter` time has not passed yet.
    error AuthorizationNotYetValid();
    /// @notice The authorization's `validBefore` time has passed.
    error AuthorizationExpired();
    /// @notice The authorization nonce was already used or canceled.
    error AuthorizationUsedOrCanceled();
    /// @notice `receiveWithAuthorization` was called by someone other than the payee.
    error CallerMustBePayee();

    /// @notice ERC-20 transfer (also emitted for mints, with `from` zero).
    event Transfer(address indexed from, address indexed to, uint256 value);
    /// @notice ERC-20 allowance change.
    event Approval(address indexed owner, address indexed spender, uint256 value);
    /// @notice EIP-3009: an authorization nonce was consumed by a transfer.
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    /// @notice EIP-3009: an authorization nonce was canceled before use.
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    /// @notice EIP-2612 permit typehash.
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    /// @notice EIP-3009 transferWithAuthorization typehash.
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );
    /// @notice EIP-3009 receiveWithAuthorization typehash.
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );
    /// @notice EIP-3009 cancelAuthorization typehash.
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant _NAME_HASH = keccak256("Pontis USD");
    bytes32 private constant _VERSION_HASH = keccak256("2");
    /// @dev secp256k1n / 2: larger s values are the malleable twin of a valid signature.
    uint256 private constant _HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice ERC-20 name.
    string public constant name = "Pontis USD";
    /// @notice ERC-20 symbol (the devnet stands in for USDC).
    string public constant symbol = "USDC";
    /// @notice ERC-20 decimals.
    uint8 public constant decimals = 6;
    /// @notice EIP-712 domain version, as FiatToken exposes it.
    string public constant version = "2";

    /// @notice The only account allowed to mint.
    address public immutable owner;
    /// @notice ERC-20 total supply.
    uint256 public totalSupply;
    /// @notice ERC-20 balances.
    mapping(address => uint256) public balanceOf;
    /// @notice ERC-20 allowances.
    mapping(address => mapping(address => uint256)) public allowance;
    /// @notice EIP-2612 permit nonces.
    mapping(address => uint256) public nonces;
    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;

    uint256 private immutable _cachedChainId;
    bytes32 private immutable _cachedDomainSeparator;

    /// @notice Sets the minting owner.
    /// @param owner_ The only account allowed to mint (the devnet uses a dedicated minter account so the
    ///        deployer's nonce, which fixes contract addresses, is not spent on funding).
    constructor(address owner_) {
        if (owner_ == address(0)) revert ZeroAddress();
        owner = owner_;
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _buildDomainSeparator();
    }

    // ---------------------------------------------------------------- ERC-20

    /// @notice Creates `value` tokens for `to`.
    /// @param to The recipient.
    /// @param value The amount, in 6-decimals units.
    function mint(address to, uint256 value) external {
        if (msg.sender != owner) revert Unauthorized();
        if (to == address(0)) revert ZeroAddress();
        totalSupply += value;
        unchecked {
            balanceOf[to] += value; // cannot overflow: bounded by totalSupply
        }
        emit Transfer(address(0), to, value);
    }

    /// @notice ERC-20 transfer.
    /// @param to The recipient.
    /// @param value The amount.
    /// @return Always true (reverts on failure).
    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    /// @notice ERC-20 transferFrom; an allowance of type(uint256).max is never decreased.
    /// @param from The payer.
    /// @param to The recipient.
    /// @param value The amount.
    /// @return Always true (reverts on failure).
    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert InsufficientAllowance();
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _transfer(from, to, value);
        return true;
    }

    /// @notice ERC-20 approve.
    /// @param spender The spender.
    /// @param value The new allowance.
    /// @return Always true.
    function approve(address spender, uint256 value) external returns (bool) {
        _approve(msg.sender, spender, value);
        return true;
    }

    // ---------------------------------------------------------------- EIP-712

    /// @notice The EIP-712 domain separator for the current chain.
    /// @return The separator (recomputed if the chain id changed since deployment, e.g. after a fork).
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == _cachedChainId ? _cachedDomainSeparator : _buildDomainSeparator();
    }

    /// @notice EIP-5267 domain description, so clients can discover the domain.
    /// @return fields Bitmap of the fields in use (name, version, chainId, verifyingContract).
    /// @return name_ The domain name.
    /// @return version_ The domain version.
    /// @return chainId The chain id.
    /// @return verifyingContract This contract.
    /// @return salt Unused.
    /// @return extensions Unused.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version_,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", name, version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- EIP-2612

    /// @notice Sets `spender`'s allowance over `owner_`'s tokens from `owner_`'s signature.
    /// @param owner_ The token holder who signed.
    /// @param spender The spender.
    /// @param value The allowance.
    /// @param deadline The last timestamp at which the permit is valid.
    /// @param v Signature recovery id.
    /// @param r Signature r.
    /// @param s Signature s.
    function permit(
        address owner_,
        address spender,
        uint256 value,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) public {
        if (block.timestamp > deadline) revert PermitExpired();
        bytes32 structHash = keccak256(
            abi.encode(PERMIT_TYPEHASH, owner_, spender, value, nonces[owner_]++, deadline)
        );
        _requireSigner(owner_, _digest(structHash), v, r, s);
        _approve(owner_, spender, value);
    }

    /// @notice `permit` with a packed 65-byte signature (r, s, v).
    /// @param owner_ The token holder who signed.
    /// @param spender The spender.
    /// @param value The allowance.
    /// @param deadline The last timestamp at which the permit is valid.
    /// @param signature The signature.
    function permit(address owner_, address spender, uint256 value, uint256 deadline, bytes calldata signature)
        external
    {
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        permit(owner_, spender, value, deadline, v, r, s);
    }

    // ---------------------------------------------------------------- EIP-3009

    /// @notice Whether `authorizer` has used or canceled the authorization `nonce`.
    /// @param authorizer The signer of the authorization.
    /// @param nonce The authorization nonce.
    /// @return True once used or canceled.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    /// @notice Executes a transfer signed by `from`; anyone may submit it.
    /// @param from The payer and signer.
    /// @param to The payee.
    /// @param value The amount.
    /// @param validAfter The authorization is valid strictly after this timestamp.
    /// @param validBefore The authorization is valid strictly before this timestamp.
    /// @param nonce A unique nonce chosen by the signer.
    /// @param v Signature recovery id.
    /// @param r Signature r.
    /// @param s Signature s.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) public {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s
        );
    }

    /// @notice `transferWithAuthorization` with a packed 65-byte signature (r, s, v).
    /// @param from The payer and signer.
    /// @param to The payee.
    /// @param value The amount.
    /// @param validAfter The authorization is valid strictly after this timestamp.
    /// @param validBefore The authorization is valid strictly before this timestamp.
    /// @param nonce A unique nonce chosen by the signer.
    /// @param signature The signature.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s);
    }

    /// @notice Executes a transfer signed by `from`; only the payee may submit it, which stops
    ///         front-running of a deposit made through a contract.
    /// @param from The payer and signer.
    /// @param to The payee; must be the caller.
    /// @param value The amount.
    /// @param validAfter The authorization is valid strictly after this timestamp.
    /// @param validBefore The authorization is valid strictly before this timestamp.
    /// @param nonce A unique nonce chosen by the signer.
    /// @param v Signature recovery id.
    /// @param r Signature r.
    /// @param s Signature s.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) public {
        if (to != msg.sender) revert CallerMustBePayee();
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s
        );
    }

    /// @notice `receiveWithAuthorization` with a packed 65-byte signature (r, s, v).
    /// @param from The payer and signer.
    /// @param to The payee; must be the caller.
    /// @param value The amount.
    /// @param validAfter The authorization is valid strictly after this timestamp.
    /// @param validBefore The authorization is valid strictly before this timestamp.
    /// @param nonce A unique nonce chosen by the signer.
    /// @param signature The signature.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s);
    }

    /// @notice Cancels an unused authorization nonce.
    /// @param authorizer The signer of the cancellation.
    /// @param nonce The nonce to cancel.
    /// @param v Signature recovery id.
    /// @param r Signature r.
    /// @param s Signature s.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) public {
        if (_authorizationStates[authorizer][nonce]) revert AuthorizationUsedOrCanceled();
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        _requireSigner(authorizer, _digest(structHash), v, r, s);
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    /// @notice `cancelAuthorization` with a packed 65-byte signature (r, s, v).
    /// @param authorizer The signer of the cancellation.
    /// @param nonce The nonce to cancel.
    /// @param signature The signature.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes calldata signature) external {
        (uint8 v, bytes32 r, bytes32 s) = _split(signature);
        cancelAuthorization(authorizer, nonce, v, r, s);
    }

    // ---------------------------------------------------------------- internals

    function _transferWithAuthorization(
        bytes32 typehash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        if (block.timestamp <= validAfter) revert AuthorizationNotYetValid();
        if (block.timestamp >= validBefore) revert AuthorizationExpired();
        if (_authorizationStates[from][nonce]) revert AuthorizationUsedOrCanceled();
        bytes32 structHash = keccak256(abi.encode(typehash, from, to, value, validAfter, validBefore, nonce));
        _requireSigner(from, _digest(structHash), v, r, s);
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _transfer(address from, address to, uint256 value) private {
        if (to == address(0)) revert ZeroAddress();
        uint256 balance = balanceOf[from];
        if (balance < value) revert InsufficientBalance();
        unchecked {
            balanceOf[from] = balance - value;
            balanceOf[to] += value; // cannot overflow: bounded by totalSupply
        }
        emit Transfer(from, to, value);
    }

    function _approve(address owner_, address spender, uint256 value) private {
        if (spender == address(0)) revert ZeroAddress();
        allowance[owner_][spender] = value;
        emit Approval(owner_, spender, value);
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(_DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, address(this)));
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// @dev Reverts unless (v, r, s) is a canonical (low-s) signature of `digest` by `signer`.
    function _requireSigner(address signer, bytes32 digest, uint8 v, bytes32 r, bytes32 s) private pure {
        if (uint256(s) > _HALF_ORDER || (v != 27 && v != 28)) revert InvalidSignature();
        address recovered = ecrecover(digest, v, r, s);
        if (recovered == address(0) || recovered != signer) revert InvalidSignature();
    }

    /// @dev Splits a 65-byte (r, s, v) signature; v may be given as 0/1 or 27/28.
    function _split(bytes calldata signature) private pure returns (uint8 v, bytes32 r, bytes32 s) {
        if (signature.length != 65) revert InvalidSignature();
        r = bytes32(signature[0:32]);
        s = bytes32(signature[32:64]);
        v = uint8(signature[64]);
        if (v < 27) v += 27;
    }
}
