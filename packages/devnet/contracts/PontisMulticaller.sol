// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @notice One payment of a fill.
/// @param token The ERC-20 paid, or the zero address for the native currency (paid from msg.value).
/// @param recipient Who is paid.
/// @param amount How much, smallest unit.
struct Payment {
    address token;
    address recipient;
    uint256 amount;
}

/// @notice One destination call of a fill.
/// @param to The call target.
/// @param value The native value sent with the call (taken from msg.value).
/// @param data The calldata.
struct Call {
    address to;
    uint256 value;
    bytes data;
}

/// @title PontisCallExecutor
/// @notice Runs a fill's destination calls for the multicaller that created it. The calls come from
///         users, so they must not run from the address the solver's token approvals are given to:
///         a call `token.transferFrom(solver, attacker, …)` made by the multicaller itself would
///         spend those approvals. This contract holds no approvals and no funds between fills.
contract PontisCallExecutor {
    /// @notice Only the multicaller may run calls.
    error OnlyMulticaller();
    /// @notice A call reverted; the whole fill reverts with it.
    /// @param index The position of the call in the fill.
    /// @param reason The call's revert data.
    error CallFailed(uint256 index, bytes reason);
    /// @notice Native currency left over after the calls could not be returned.
    error RefundFailed();

    /// @notice The multicaller that deployed this executor.
    address public immutable multicaller;

    constructor() {
        multicaller = msg.sender;
    }

    /// @notice Accepts native currency sent back by call targets (e.g. a router refunding excess).
    receive() external payable {}

    /// @notice Runs `calls` in order; reverts as a whole when one fails. Whatever native currency is
    ///         left afterwards (sent back by a target) goes to `refundTo`.
    /// @param calls The calls.
    /// @param refundTo Who gets native currency left over (the solver).
    function run(Call[] calldata calls, address refundTo) external payable {
        if (msg.sender != multicaller) revert OnlyMulticaller();
        uint256 length = calls.length;
        for (uint256 i; i < length; ++i) {
            Call calldata c = calls[i];
            (bool success, bytes memory reason) = c.to.call{value: c.value}(c.data);
            if (!success) revert CallFailed(i, reason);
        }
        uint256 left = address(this).balance;
        if (left != 0) {
            (bool sent,) = refundTo.call{value: left}("");
            if (!sent) revert RefundFailed();
        }
    }
}

/// @title PontisMulticaller
/// @notice Pays one order in one transaction: the payments (native and ERC-20), then the order's
///         destination calls, all or nothing. The solver approves this contract once per token;
///         ERC-20 payments are pulled from msg.sender only, so nobody can spend another solver's
///         approval. Destination calls run from a separate executor (see {PontisCallExecutor}).
/// @dev Fills are recognised off chain by the order id in the last 32 bytes of the transaction's
///      calldata: the solver appends it after the ABI-encoded `fill` call (the ABI decoder ignores
///      trailing bytes). The `orderId` argument repeats it for the `Filled` event.
contract PontisMulticaller {
    /// @notice msg.value does not cover the native payments and the calls' values.
    /// @param provided msg.value.
    /// @param required The sum of native payments and call values.
    error InsufficientValue(uint256 provided, uint256 required);
    /// @notice A payment failed (token refused the transfer, recipient refused the native currency).
    /// @param index The position of the payment in the fill.
    /// @param reason The revert data of the token or the recipient.
    error PaymentFailed(uint256 index, bytes reason);
    /// @notice A destination call reverted (the executor's error, bubbled up unchanged).
    /// @param index The position of the call in the fill.
    /// @param reason The call's revert data.
    error CallFailed(uint256 index, bytes reason);
    /// @notice The unspent msg.value could not be returned to the solver.
    error RefundFailed();

    /// @notice An order was paid.
    /// @param orderId The order id.
    /// @param solver Who paid (msg.sender).
    event Filled(bytes32 indexed orderId, address indexed solver);

    /// @notice Where destination calls run; created with this contract (its CREATE nonce 1).
    PontisCallExecutor public immutable executor;

    constructor() {
        executor = new PontisCallExecutor();
    }

    /// @notice Pays `payments`, runs `calls`, returns unspent msg.value to msg.sender and emits `Filled`.
    /// @param orderId The order paid.
    /// @param payments The payments, made first and in order.
    /// @param calls The destination calls, run after the payments and in order.
    function fill(bytes32 orderId, Payment[] calldata payments, Call[] calldata calls) external payable {
        uint256 paymentCount = payments.length;
        uint256 callCount = calls.length;
        uint256 nativePaid;
        uint256 callValue;
        for (uint256 i; i < paymentCount; ++i) {
            if (payments[i].token == address(0)) nativePaid += payments[i].amount;
        }
        for (uint256 i; i < callCount; ++i) {
            callValue += calls[i].value;
        }
        // Checked up front, so stray native currency held here can never pay for a fill.
        if (nativePaid + callValue > msg.value) revert InsufficientValue(msg.value, nativePaid + callValue);

        for (uint256 i; i < paymentCount; ++i) {
            Payment calldata payment = payments[i];
            if (payment.token == address(0)) {
                (bool success, bytes memory reason) = payment.recipient.call{value: payment.amount}("");
                if (!success) revert PaymentFailed(i, reason);
            } else {
                _transferFrom(i, payment.token, payment.recipient, payment.amount);
            }
        }

        if (callCount != 0) {
            try executor.run{value: callValue}(calls, msg.sender) {}
            catch (bytes memory reason) {
                // Bubble the executor's CallFailed(index, reason) up unchanged.
                assembly ("memory-safe") {
                    revert(add(reason, 32), mload(reason))
                }
            }
        }

        uint256 unspent = msg.value - nativePaid - callValue;
        if (unspent != 0) {
            (bool refunded,) = msg.sender.call{value: unspent}("");
            if (!refunded) revert RefundFailed();
        }
        emit Filled(orderId, msg.sender);
    }

    /// @dev transferFrom(msg.sender → recipient) that also accepts tokens returning nothing (USDT-style).
    function _transferFrom(uint256 index, address token, address recipient, uint256 amount) private {
        if (token.code.length == 0) revert PaymentFailed(index, "");
        (bool success, bytes memory data) =
            token.call(abi.encodeWithSelector(0x23b872dd, msg.sender, recipient, amount));
        if (!success || (data.length != 0 && (data.length != 32 || !abi.decode(data, (bool))))) {
            revert PaymentFailed(index, data);
        }
    }
}
