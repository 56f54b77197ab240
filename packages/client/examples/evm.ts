/**
 * EVM example: bridge 25 USDC from devnet chain 31337 to 31338 with the partner client and a viem
 * wallet of the first devnet user. Run against `npm start`:
 *
 *   npx tsx packages/client/examples/evm.ts
 *
 * Environment: PONTIS_URL (default http://127.0.0.1:4000), EVM_RPC_URL (default
 * http://127.0.0.1:8545, the devnet's chain 31337), PONTIS_API_KEY (optional).
 */
import { pathToFileURL } from 'node:url'
import { STABLECOIN_ADDRESS, USERS } from '@pontis/devnet'
import { createWalletClient, defineChain, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import {
  createPontisClient,
  type ExecutionResult,
  type QuoteResponse,
  viemWalletAdapter,
} from '../src/index.js'

/** Settings of {@link runEvmExample}. */
export interface EvmExampleOptions {
  baseUrl: string
  /** JSON-RPC URL of origin chain 31337. */
  rpcUrl: string
  apiKey?: string
  /** Recipient on chain 31338; default the second devnet user. */
  recipient?: string
  /** Poll interval of the status check; default 1000 ms. */
  pollIntervalMs?: number
  log?: (line: string) => void
}

/** Quotes and executes the bridge; answers the quote and the execution result. */
export async function runEvmExample(
  options: EvmExampleOptions,
): Promise<{ quote: QuoteResponse; result: ExecutionResult }> {
  const log = options.log ?? console.log
  const user = USERS[0]
  if (!user) throw new Error('the devnet has no users')
  const pontis = createPontisClient({
    baseUrl: options.baseUrl,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  })
  const chain = defineChain({
    id: 31337,
    name: 'Pontis devnet 31337',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  })
  const walletClient = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain,
    transport: http(options.rpcUrl),
  })

  const quote = await pontis.getQuote({
    user: user.address,
    recipient: options.recipient ?? USERS[1]?.address ?? user.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '25000000',
    tradeType: 'EXACT_INPUT',
  })
  log(`quote: ${quote.steps.map((step) => step.id).join(' -> ')}, out ${quote.details.currencyOut.amount}`)

  const result = await pontis.executeQuote(quote, [viemWalletAdapter(walletClient)], {
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
    timeoutMs: 120_000,
    onProgress(event) {
      if (event.type === 'step') log(`step ${event.step.id}: ${event.step.description}`)
      if (event.type === 'transaction') log(`  sent ${event.txHash} on ${event.chainId}`)
      if (event.type === 'status') log(`  status ${event.status.status}`)
    },
  })
  log(`done: ${result.status.status}, fill ${result.status.txHashes.join(', ')}`)
  return { quote, result }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runEvmExample({
    baseUrl: process.env.PONTIS_URL ?? 'http://127.0.0.1:4000',
    rpcUrl: process.env.EVM_RPC_URL ?? 'http://127.0.0.1:8545',
    ...(process.env.PONTIS_API_KEY ? { apiKey: process.env.PONTIS_API_KEY } : {}),
  })
}
