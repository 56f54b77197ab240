/**
 * Tron wire formats (base58check addresses, the protobuf `Transaction.raw`, txID = sha256 of it,
 * r‖s‖v signatures): the Tron plugin's codec, used here as is. One implementation, checked against
 * real node output (raw data, txIDs and signatures from mainnet) in `test/tron-codec.test.ts`; the
 * simulator's own checks (balances, fees, expiry, owners) stay independent of the plugin.
 */
export * from '@pontis/plugin-tron/codec'
