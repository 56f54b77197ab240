/**
 * Hyperliquid example: bridge 30 perps USDC from Hyperliquid core (1337) to USDC on EVM chain 31337
 * with the partner client, signing the quoted send as a Hyperliquid user-signed action with a viem
 * account (the devnet's user alice). Run against `npm start`:
 *
 *   npx tsx packages/client/examples/hyperliquid.ts
 *
 * Environment: PONTIS_URL (default http://127.0.0.1:4000), HYPERLIQUID_API_URL (default
 * http://127.0.0.1:8920), PONTIS_API_KEY (optional).
 */
import { pathToFileURL } from 'node:url'
import {
  HYPERLIQUID_DEVNET_CHAIN_ID,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_USERS,
  STABLECOIN_ADDRESS,
  USERS,
} from '@pontis/devnet'
import { privateKeyToAccount } from 'viem/accounts'
import {
  createPontisClient,
  type ExecutionResult,
  hyperliquidWallet,
  type QuoteResponse,
} from '../src/index.js'

/** Settings of {@link runHyperliquidExample}. */
export interface HyperliquidExampleOptions {
  baseUrl: string
  /** Hyperliquid API origin (`/exchange` is posted to). */
  apiUrl: string
  apiKey?: string
  /** Recipient on chain 31337; default the first devnet user. */
  recipient?: string
  pollIntervalMs?: number
  log?: (line: string) => void
}

/** Quotes and executes the withdrawal; answers the quote and the execution result. */
export async function runHyperliquidExample(
  options: HyperliquidExampleOptions,
): Promise<{ quote: QuoteResponse; result: ExecutionResult }> {
  const log = options.log ?? console.log
  const account = privateKeyToAccount(HYPERLIQUID_USERS.alice.privateKey)
  const pontis = createPontisClient({
    baseUrl: options.baseUrl,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  })
  const quote = await pontis.getQuote({
    user: account.address,
    recipient: options.recipient ?? USERS[0]?.address ?? '',
    originChainId: HYPERLIQUID_DEVNET_CHAIN_ID,
    destinationChainId: 31337,
    originCurrency: HYPERLIQUID_PERPS_USDC_ID,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '3000000000',
    tradeType: 'EXACT_INPUT',
  })
  log(`quote: ${quote.steps.map((step) => step.id).join(' -> ')}, out ${quote.details.currencyOut.amount}`)
  const result = await pontis.executeQuote(
    quote,
    // Any EIP-712 signer works: a viem local account here, a browser wallet's walletClient elsewhere.
    [
      hyperliquidWallet({
        apiUrl: options.apiUrl,
        signTypedData: (typedData) => account.signTypedData(typedData as never),
      }),
    ],
    {
      ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
      timeoutMs: 120_000,
      onProgress(event) {
        if (event.type === 'status') log(`  status ${event.status.status}`)
      },
    },
  )
  log(`done: ${result.status.status}, fill ${result.status.txHashes.join(', ')}`)
  return { quote, result }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runHyperliquidExample({
    baseUrl: process.env.PONTIS_URL ?? 'http://127.0.0.1:4000',
    apiUrl: process.env.HYPERLIQUID_API_URL ?? 'http://127.0.0.1:8920',
    ...(process.env.PONTIS_API_KEY ? { apiKey: process.env.PONTIS_API_KEY } : {}),
  })
}
