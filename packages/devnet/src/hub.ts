/**
 * The EIP-712 domain the devnet deploys PontisOracleHub (contracts/PontisOracleHub.sol) with, as in
 * `configs/chains.hub.local.json`. The encoders of its actions and keys belong to the oracle, which
 * produces them: `@pontis/oracle` (`encodeHubAction`, `hubAccountKey`, `hubAssetKey`).
 */

/** The EIP-712 domain name of the devnet's hub. */
export const HUB_ORACLE_DOMAIN_NAME = 'PontisOracle'
/** The EIP-712 domain version of the devnet's hub. */
export const HUB_ORACLE_DOMAIN_VERSION = '1'
