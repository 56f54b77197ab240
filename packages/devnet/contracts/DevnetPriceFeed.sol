// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

// The devnet's price feeds are Chainlink's own MockV3Aggregator (AggregatorV3Interface: latestRoundData,
// decimals; updateAnswer and updateRoundData move the price or its timestamp), compiled from the
// pinned @chainlink/contracts release: the artifact is the MockV3Aggregator contract of that file.
import "@chainlink/contracts/src/v0.8/tests/MockV3Aggregator.sol";
