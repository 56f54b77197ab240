/**
 * The Bitcoin devnet: a regtest chain simulator behind the Esplora HTTP API (see README.md), and its
 * fixed cast of keys and addresses.
 */
export {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_DEVNET_NETWORK,
  BITCOIN_FUNDING,
  BITCOIN_MINER,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_NATIVE_DECIMALS,
  BITCOIN_SOLVER,
  BITCOIN_USER_LIST,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  type BitcoinDevAccount,
  BitcoinECPair,
  type BitcoinScriptKind,
  bitcoinDevnetKeypair,
  bitcoinDevnetPrivateKey,
  bitcoinTaprootSigner,
} from './accounts.js'
export {
  BITCOIN_DEFAULT_FEE_RATES,
  BITCOIN_REGTEST_BITS,
  type BitcoinAddressStats,
  type BitcoinBlock,
  BitcoinChain,
  type BitcoinChainOptions,
  type BitcoinOutput,
  type BitcoinPayment,
  type BitcoinSpend,
  type BitcoinTxRecord,
} from './chain.js'
export {
  type BitcoinDevnet,
  type BitcoinDevnetOptions,
  type BitcoinFundedOutput,
  bitcoinDevnetEnvironment,
  bitcoinDevnetFunding,
  startBitcoinDevnet,
} from './devnet.js'
export { BITCOIN_RPC_ERROR, BitcoinRejection } from './errors.js'
export type {
  EsploraAddress,
  EsploraBlock,
  EsploraOutspend,
  EsploraStatus,
  EsploraTx,
  EsploraTxIn,
  EsploraTxOut,
  EsploraUtxo,
} from './esplora.js'
export { type BitcoinFaultPowers, type BitcoinFaultTarget, bitcoinFaultPowers } from './faults.js'
export {
  BITCOIN_COINBASE_MATURITY,
  BITCOIN_MAX_FEE_RATE,
  BITCOIN_MAX_OP_RETURN_DATA,
  BITCOIN_MIN_RELAY_FEE_RATE,
} from './validation.js'
