/**
 * The Tron devnet: a simulator of the Tron full-node HTTP API (see README.md), its fixed cast,
 * and the wire helpers a wallet needs in tests (encode/decode raw data, sign a txID).
 */
export {
  TRON_DEVNET_CHAIN_ID,
  TRON_EMPTY,
  TRON_FUNDING,
  TRON_NATIVE_CURRENCY_ID,
  TRON_NATIVE_DECIMALS,
  TRON_SOLVER,
  TRON_USDT_ADDRESS,
  TRON_USDT_DECIMALS,
  TRON_USERS,
  TRON_VAULT,
  type TronDevAccount,
} from './accounts.js'
export {
  TRON_DEFAULT_EXPIRATION_MS,
  TRON_ENERGY_FEE_SUN,
  TRON_MAX_EXPIRATION_MS,
  TRON_SOLID_CONFIRMATIONS,
  TRON_TRANSACTION_FEE_SUN,
  TRON_TRANSFER_TOPIC,
  TRON_TRC20_BALANCE_OF_ENERGY,
  TRON_TRC20_NEW_HOLDER_ENERGY,
  TRON_TRC20_TRANSFER_ENERGY,
  type TronBlock,
  type TronBroadcastCode,
  TronChain,
  type TronChainOptions,
  type TronLog,
  TronRejection,
  type TronTxRecord,
  tronBandwidthBytes,
} from './chain.js'
export {
  TRON_ADDRESS_PREFIX,
  type TronContract,
  type TronRawDataJson,
  type TronRawTransaction,
  type TronTransactionJson,
  tronAddressBytes,
  tronAddressOfKey,
  tronBase58,
  tronDecodeRaw,
  tronEncodeRaw,
  tronRawToJson,
  tronRecoverSigner,
  tronSelector,
  tronSignTransaction,
  tronSignTransactionId,
  tronTransactionId,
  tronTransactionJson,
  tronWithExpiration,
} from './codec.js'
export { startTronDevnet, type TronDevnet, type TronDevnetOptions, tronDevnetEnvironment } from './devnet.js'
export { type TronBlockTimer, type TronFaultPowers, tronFaultPowers } from './faults.js'
export { startTronApiServer, TRON_BLOCK_LIMIT_NUM, type TronApiServer, tronApiCall } from './server.js'
