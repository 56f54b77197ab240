/**
 * The typed partner client: thin wrappers over the SDK generated from openapi/intents.yaml
 * (`generated/intents`) that answer the response body or throw {@link PontisApiError}, plus
 * {@link PontisClient.executeQuote}, the step loop of the document.
 */
import {
  type AppFeeBalances,
  type AppFeeClaim,
  type AppFeeClaimHistory,
  type AppFeeClaimRequest,
  type ChainsResponse,
  claimAppFees,
  type ErrorBody,
  executeAppFeeClaim,
  type GetAppFeeClaimsData,
  type GetChainsData,
  getAppFeeBalances,
  getAppFeeClaims,
  getChains,
  getIntentStatusV3,
  getPrice,
  getQuoteV2,
  type IndexTransactionRequest,
  type IndexTransactionResponse,
  indexTransaction,
  type PriceResponse,
  type QuoteRequest,
  type QuoteResponse,
  type StatusRecordV3,
} from '@pontis/generated/intents'
import { type Client, createClient, createConfig } from '@pontis/generated/intents/client'
import { PontisApiError } from './errors.js'
import { type ExecuteQuoteOptions, type ExecutionResult, executeSteps, type HttpCaller } from './execute.js'
import type { WalletAdapter } from './wallets/adapter.js'
import { adaptersOfWallets, type Wallets } from './wallets/legacy.js'

/** Options of {@link createPontisClient}. */
export interface PontisClientOptions {
  /** Origin of the intent service, for example `http://127.0.0.1:4000`. */
  baseUrl: string
  /** Partner API key, sent as `x-api-key` on every call (raises rate limits, ties requests to its webhook). */
  apiKey?: string
  /** Fetch implementation; default `globalThis.fetch`. */
  fetch?: typeof fetch
}

/** The partner client. Every method answers the 2xx body or throws {@link PontisApiError}. */
export interface PontisClient {
  /** The generated SDK client, configured with the base URL, fetch and API key, for calls not wrapped here. */
  readonly sdk: Client
  /** `POST /quote/v2`: an executable quote (steps, fees, details). */
  getQuote(request: QuoteRequest): Promise<QuoteResponse>
  /** `POST /price`: the same pricing without steps; nothing can be executed from it. */
  getPrice(request: QuoteRequest): Promise<PriceResponse>
  /** `GET /chains`, optionally filtered (`includeChains`, `vmType`). */
  getChains(query?: GetChainsData['query']): Promise<ChainsResponse>
  /** `GET /intents/status/v3`: the status record of a request. */
  getStatus(requestId: string): Promise<StatusRecordV3>
  /** `POST /transactions/index`: tells the service about a freshly broadcast origin transaction. */
  indexTransaction(request: IndexTransactionRequest): Promise<IndexTransactionResponse>
  /** `GET /app-fees/{wallet}/balances`: the app fees `wallet` earned and has not claimed. */
  getAppFeeBalances(wallet: string): Promise<AppFeeBalances>
  /**
   * `GET /app-fees/{wallet}/claims`: `wallet`'s claims, newest first (status, amount, payout hash);
   * pass an answer's `continuation` back for the next page.
   */
  getAppFeeClaims(wallet: string, query?: GetAppFeeClaimsData['query']): Promise<AppFeeClaimHistory>
  /**
   * Claims `wallet`'s app fees in one currency: `POST /app-fees/{wallet}/claim`, then `signMessage`
   * (the wallet's EIP-191 `personal_sign` of the offered text on EVM) and the post of its signature.
   * Answers the claim once its payout is queued (`authorized`); follow it by posting again.
   */
  claimAppFees(
    wallet: string,
    request: AppFeeClaimRequest,
    signMessage: (message: string) => Promise<string>,
  ): Promise<AppFeeClaim>
  /**
   * Runs a quote's steps and follows the request until it is final: each item goes to the first
   * adapter of `adapters` that claims it (a TypeError names an item none claims, before anything is
   * sent). Resolves on `success` (or another of the check's `finalStatuses`); throws
   * {@link PontisExecutionError} on `failure`, `refund` or timeout.
   */
  executeQuote(
    quote: QuoteResponse,
    adapters: readonly WalletAdapter[],
    options?: ExecuteQuoteOptions,
  ): Promise<ExecutionResult>
  /** @deprecated Pass a list of wallet adapters: `[viemWalletAdapter(walletClient), ...]`. */
  executeQuote(
    quote: QuoteResponse,
    wallets: Wallets,
    options?: ExecuteQuoteOptions,
  ): Promise<ExecutionResult>
}

const API_KEY_SECURITY = [{ name: 'x-api-key', type: 'apiKey' as const }]

interface SdkResult<T> {
  data?: T | undefined
  error?: unknown
  response?: Response | undefined
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).message === 'string'
}

/** Turns an SDK result into its body, or a {@link PontisApiError} for anything but a 2xx answer. */
function unwrap<T>(result: SdkResult<T>): T {
  const status = result.response?.status ?? 0
  if (result.error === undefined && result.response?.ok && result.data !== undefined) return result.data
  if (status === 0) {
    const cause = result.error
    const reason = cause instanceof Error ? cause.message : String(cause)
    throw new PontisApiError(0, undefined, `request failed: ${reason}`, { cause })
  }
  throw new PontisApiError(status, isErrorBody(result.error) ? result.error : undefined)
}

function isAdapterList(wallets: readonly WalletAdapter[] | Wallets): wallets is readonly WalletAdapter[] {
  return Array.isArray(wallets)
}

/**
 * Creates a partner client for one intent service.
 *
 * @example
 * const pontis = createPontisClient({ baseUrl: 'http://127.0.0.1:4000' })
 * const quote = await pontis.getQuote({ user, recipient, originChainId: 31337, ... })
 * const { status } = await pontis.executeQuote(quote, [viemWalletAdapter(walletClient)])
 */
export function createPontisClient(options: PontisClientOptions): PontisClient {
  const sdk = createClient(
    createConfig({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.apiKey ? { auth: options.apiKey } : {}),
    }),
  )

  // Check endpoints and signature posts are relative paths chosen by the service at quote time.
  const call: HttpCaller = async (method, path, body, signal) => {
    const result = await sdk.request<Record<number, unknown>, Record<number, unknown>, false>({
      method,
      url: path,
      security: API_KEY_SECURITY,
      ...(signal ? { signal } : {}),
      ...(body === undefined ? {} : { body, headers: { 'Content-Type': 'application/json' } }),
    })
    return unwrap(result as SdkResult<unknown>)
  }

  const client: PontisClient = {
    sdk,
    async getQuote(request) {
      return unwrap(await getQuoteV2({ client: sdk, body: request }))
    },
    async getPrice(request) {
      return unwrap(await getPrice({ client: sdk, body: request }))
    },
    async getChains(query) {
      return unwrap(await getChains({ client: sdk, ...(query ? { query } : {}) }))
    },
    async getStatus(requestId) {
      return unwrap(await getIntentStatusV3({ client: sdk, query: { requestId } }))
    },
    async indexTransaction(request) {
      return unwrap(await indexTransaction({ client: sdk, body: request }))
    },
    async getAppFeeBalances(wallet) {
      return unwrap(await getAppFeeBalances({ client: sdk, path: { wallet } }))
    },
    async getAppFeeClaims(wallet, query) {
      return unwrap(await getAppFeeClaims({ client: sdk, path: { wallet }, ...(query ? { query } : {}) }))
    },
    async claimAppFees(wallet, request, signMessage) {
      const { claim, steps } = unwrap(await claimAppFees({ client: sdk, path: { wallet }, body: request }))
      const item = steps[0]?.items[0]
      if (!item) throw new TypeError(`claim ${claim.claimId} came without its signature step`)
      const signature = await signMessage(item.data.sign.message)
      return unwrap(
        await executeAppFeeClaim({
          client: sdk,
          path: { wallet },
          query: { signature },
          body: item.data.post.body,
        }),
      )
    },
    executeQuote(quote: QuoteResponse, wallets: readonly WalletAdapter[] | Wallets, executeOptions = {}) {
      return executeSteps(
        quote,
        isAdapterList(wallets) ? wallets : adaptersOfWallets(wallets),
        executeOptions,
        {
          call,
          indexTransaction: (request) => client.indexTransaction(request),
        },
      )
    },
  }
  return client
}
