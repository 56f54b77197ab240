/**
 * The Lighter devnet: a simulator of the perpetuals exchange's REST API (see README.md), its fixed
 * cast of accounts and API keys, and the transfer signing rules a client mirrors.
 */
export {
  LIGHTER_ACCOUNTS,
  LIGHTER_EMPTY,
  LIGHTER_SOLVER,
  LIGHTER_UNKNOWN_ACCOUNT_INDEX,
  LIGHTER_UNKNOWN_L1_ADDRESS,
  LIGHTER_USERS,
  type LighterDevAccount,
  lighterDevnetApiKeySeed,
} from './accounts.js'
export {
  LIGHTER_DEFAULT_TRANSFER_FEE_USDC,
  type LighterDevnet,
  type LighterDevnetOptions,
  lighterDevnetEnvironment,
  startLighterDevnet,
} from './devnet.js'
export {
  LIGHTER_DEVNET_CHAIN_ID,
  LIGHTER_MAX_ACCOUNT_INDEX,
  LIGHTER_MAX_API_KEY_INDEX,
  LIGHTER_ROUTE_PERPS,
  LIGHTER_ROUTE_SPOT,
  LIGHTER_TX_STATUS_EXECUTED,
  LIGHTER_TX_STATUS_FAILED,
  LIGHTER_TX_TYPE_TRANSFER,
  LIGHTER_USDC_ASSET_INDEX,
  LIGHTER_USDC_DECIMALS,
  type LighterTransferFields,
  type LighterTransferInfo,
  lighterApiPublicKey,
  lighterSignTransfer,
  lighterTransferHash,
  lighterTransferMessage,
  lighterUsdcDecimal,
  lighterVerifyTransfer,
} from './protocol.js'
export {
  LIGHTER_ACCOUNT_TXS_MAX_LIMIT,
  LIGHTER_ERROR_CODES,
  type LighterAccountState,
  LighterRejection,
  type LighterTxRecord,
  LighterVenue,
} from './venue.js'

/** The venue's native currency id in the service: "0", USDC perps, 6 decimals. */
export const LIGHTER_USDC_CURRENCY_ID = '0'
