// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @notice The depository entry point the receiver forwards to (RelayDepository's `depositNative`).
interface IDepositoryNative {
    function depositNative(address depositor, bytes32 id) external payable;
}

/// @title PontisDepositReceiver
/// @notice Turns a plain native transfer whose calldata is a request id (the "direct" deposit form
///         wallets send for `explicitDeposit: false`) into a depository deposit: the value goes on to
///         `depositNative(sender, id)` in the same call, so the depository holds the funds and emits
///         `RelayNativeDeposit(sender, amount, id)` exactly as for an explicit deposit.
/// @dev Deployed next to an existing depository (which is not upgradable), and listed as the chain
///      record's `contracts.relayReceiver`. It has no functions besides the fallback, so no request id
///      can be mistaken for a function selector; it keeps nothing (no balance, no storage).
contract PontisDepositReceiver {
    /// @notice The calldata of a transfer is not exactly one 32-byte request id.
    error InvalidRequestId();
    /// @notice The depository address given to the constructor has no code.
    error DepositoryHasNoCode();

    IDepositoryNative private immutable _depository;

    /// @param depository_ The depository deposits are forwarded to.
    constructor(address depository_) {
        if (depository_.code.length == 0) revert DepositoryHasNoCode();
        _depository = IDepositoryNative(depository_);
    }

    /// @notice Forwards `msg.value` to the depository as a deposit of `msg.sender` tagged with the
    ///         32-byte calldata. A transfer without an id (or with anything else) reverts, so funds are
    ///         never taken that nothing could attribute.
    fallback() external payable {
        if (msg.data.length != 32) revert InvalidRequestId();
        _depository.depositNative{value: msg.value}(msg.sender, bytes32(msg.data));
    }
}
