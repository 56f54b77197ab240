/**
 * `@pontis/client`: the partner client of a Pontis intent service. Typed calls over the SDK
 * generated from openapi/intents.yaml, `executeQuote` (the document's step loop) with per-family
 * wallet adapters, and webhook verification. Browser-safe: nothing here imports a Node built-in
 * (checked by test/browser-bundle.test.ts).
 */
export type {
  BitcoinPsbtData,
  ChainsResponse,
  ErrorBody,
  EvmTransactionData,
  IndexTransactionRequest,
  IndexTransactionResponse,
  PriceResponse,
  QuoteRequest,
  QuoteResponse,
  RequestStatus,
  SignatureData,
  StatusRecord,
  StatusRecordV3,
  Step,
  StepItem,
  SvmTransactionData,
} from '../../../generated/intents/index.js'
export { createPontisClient, type PontisClient, type PontisClientOptions } from './client.js'
export { PontisApiError, PontisExecutionError, type PontisExecutionErrorKind } from './errors.js'
export type { ExecuteQuoteOptions, ExecutionProgress, ExecutionResult } from './execute.js'
export {
  type BitcoinWallet,
  base64ToBytes,
  bytesToBase64,
  type EsploraBitcoinWalletOptions,
  type EvmTransactionRequest,
  type EvmWallet,
  esploraBitcoinWallet,
  type HyperliquidTypedData,
  type HyperliquidWalletOptions,
  hyperliquidTypedData,
  hyperliquidWallet,
  type SvmKeypairLike,
  type SvmKeypairWalletOptions,
  type SvmSigner,
  type SvmWallet,
  signSvmTransaction,
  svmKeypairSigner,
  svmKeypairWallet,
  type TronNodeWalletOptions,
  type TronWallet,
  tronNodeWallet,
  type VenueSigner,
  type ViemWalletAdapterOptions,
  type ViemWalletClient,
  viemWalletAdapter,
  type Wallets,
} from './wallets.js'
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
