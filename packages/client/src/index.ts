/**
 * `@pontis/client`: the partner client of a Pontis intent service. Typed calls over the SDK
 * generated from openapi/intents.yaml, `executeQuote` (the document's step loop) handing each item
 * to the first wallet adapter that claims it, and webhook verification. Browser-safe: nothing here
 * imports a Node built-in (checked by test/browser-bundle.test.ts).
 */
export type {
  AppFeeBalances,
  AppFeeClaim,
  AppFeeClaimRequest,
  BitcoinPsbtData,
  ChainsResponse,
  ErrorBody,
  EvmTransactionData,
  HyperliquidActionData,
  IndexTransactionRequest,
  IndexTransactionResponse,
  LighterTransferData,
  PriceResponse,
  QuoteRequest,
  QuoteResponse,
  RequestStatus,
  SignatureData,
  StatusRecord,
  StatusRecordV3,
  Step,
  StepCheck,
  StepItem,
  StepItemData,
  SvmTransactionData,
  TronTransactionData,
} from '@pontis/generated/intents'
export { createPontisClient, type PontisClient, type PontisClientOptions } from './client.js'
export { PontisApiError, PontisExecutionError, type PontisExecutionErrorKind } from './errors.js'
export type { ExecuteQuoteOptions, ExecutionProgress, ExecutionResult } from './execute.js'
export {
  type ChainIdsOption,
  claimsFormat,
  type ItemContext,
  type ItemData,
  type ItemResult,
  type WalletAdapter,
  type WalletAdapterOptions,
} from './wallets/adapter.js'
export {
  type BitcoinWallet,
  bitcoinWalletAdapter,
  type EsploraBitcoinWalletOptions,
  esploraBitcoinWallet,
} from './wallets/bitcoin.js'
export {
  type EvmItemData,
  type EvmTransactionRequest,
  type EvmWallet,
  evmWalletAdapter,
  type ViemWalletAdapterOptions,
  type ViemWalletClient,
  viemWalletAdapter,
} from './wallets/evm.js'
export {
  type HyperliquidTypedData,
  type HyperliquidWalletOptions,
  hyperliquidTypedData,
  hyperliquidWallet,
} from './wallets/hyperliquid.js'
export type { VenueSigner, Wallets } from './wallets/legacy.js'
export { base64ToBytes, bytesToBase64, hexToBytes } from './wallets/shared.js'
export {
  type SvmKeypairLike,
  type SvmKeypairWalletOptions,
  type SvmSigner,
  type SvmWallet,
  signSvmTransaction,
  svmKeypairSigner,
  svmKeypairWallet,
  svmWalletAdapter,
} from './wallets/svm.js'
export {
  type TronNodeWalletOptions,
  type TronWallet,
  tronNodeWallet,
  tronWalletAdapter,
} from './wallets/tron.js'
export {
  constantTimeEqual,
  type VerifyWebhookOptions,
  verifyWebhook,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookDepositAddress,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookPayloadData,
  type WebhookStatus,
  type WebhookVerifyFailure,
  type WebhookVerifyResult,
} from './webhook.js'
