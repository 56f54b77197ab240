/**
 * SVM example: bridge 50 USDC from the devnet's SVM chain (792703809) to EVM chain 31337 with the
 * partner client, signing with the first SVM devnet user's keypair and sending over plain JSON-RPC.
 * Run against `npm start`:
 *
 *   npx tsx packages/client/examples/svm.ts
 *
 * Environment: PONTIS_URL (default http://127.0.0.1:4000), SVM_RPC_URL (default
 * http://127.0.0.1:8899), PONTIS_API_KEY (optional).
 */
import { pathToFileURL } from 'node:url'
import { STABLECOIN_ADDRESS, SVM_DEVNET_CHAIN_ID, SVM_STABLECOIN, SVM_USERS, USERS } from '@pontis/devnet'
import {
  createPontisClient,
  type ExecutionResult,
  type QuoteResponse,
  svmKeypairWallet,
} from '../src/index.js'

/** Settings of {@link runSvmExample}. */
export interface SvmExampleOptions {
  baseUrl: string
  /** Solana JSON-RPC URL of the SVM devnet. */
  rpcUrl: string
  apiKey?: string
  /** Recipient on chain 31337; default the first devnet user. */
  recipient?: string
  pollIntervalMs?: number
  log?: (line: string) => void
}

/** Quotes and executes the bridge; answers the quote and the execution result. */
export async function runSvmExample(
  options: SvmExampleOptions,
): Promise<{ quote: QuoteResponse; result: ExecutionResult }> {
  const log = options.log ?? console.log
  const user = SVM_USERS[0]
  if (!user) throw new Error('the devnet has no SVM users')
  const pontis = createPontisClient({
    baseUrl: options.baseUrl,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  })
  const quote = await pontis.getQuote({
    user: user.address,
    recipient: options.recipient ?? USERS[0]?.address ?? '',
    originChainId: SVM_DEVNET_CHAIN_ID,
    destinationChainId: 31337,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '50000000',
    tradeType: 'EXACT_INPUT',
  })
  log(`quote: ${quote.steps.map((step) => step.id).join(' -> ')}, out ${quote.details.currencyOut.amount}`)
  const result = await pontis.executeQuote(
    quote,
    // A web3.js Keypair is keypair-like (it has `secretKey`); signing uses WebCrypto Ed25519.
    [svmKeypairWallet(user.keypair, options.rpcUrl)],
    {
      ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
      timeoutMs: 120_000,
      onProgress(event) {
        if (event.type === 'transaction') log(`  sent ${event.txHash} on ${event.chainId}`)
        if (event.type === 'status') log(`  status ${event.status.status}`)
      },
    },
  )
  log(`done: ${result.status.status}, fill ${result.status.txHashes.join(', ')}`)
  return { quote, result }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runSvmExample({
    baseUrl: process.env.PONTIS_URL ?? 'http://127.0.0.1:4000',
    rpcUrl: process.env.SVM_RPC_URL ?? 'http://127.0.0.1:8899',
    ...(process.env.PONTIS_API_KEY ? { apiKey: process.env.PONTIS_API_KEY } : {}),
  })
}
