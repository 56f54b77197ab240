/**
 * Tron example: bridge 20 USDT from Tron (728126428) to USDC on EVM chain 31337 with the partner
 * client: the quoted transaction (built by the Tron node) is checked, its txID signed with the
 * devnet user alice's secp256k1 key and broadcast to the node. Run against `npm start`:
 *
 *   npx tsx packages/client/examples/tron.ts
 *
 * Environment: PONTIS_URL (default http://127.0.0.1:4000), TRON_API_URL (default
 * http://127.0.0.1:8090), PONTIS_API_KEY (optional).
 */
import { pathToFileURL } from 'node:url'
import {
  STABLECOIN_ADDRESS,
  TRON_DEVNET_CHAIN_ID,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  USERS,
} from '@pontis/devnet'
import { sign } from 'viem/accounts'
import { createPontisClient, type ExecutionResult, type QuoteResponse, tronNodeWallet } from '../src/index.js'

/** Settings of {@link runTronExample}. */
export interface TronExampleOptions {
  baseUrl: string
  /** Tron full-node HTTP API origin. */
  apiUrl: string
  apiKey?: string
  /** Recipient on chain 31337; default the first devnet user. */
  recipient?: string
  pollIntervalMs?: number
  log?: (line: string) => void
}

/** Quotes and executes the withdrawal; answers the quote and the execution result. */
export async function runTronExample(
  options: TronExampleOptions,
): Promise<{ quote: QuoteResponse; result: ExecutionResult }> {
  const log = options.log ?? console.log
  const user = TRON_USERS.alice
  const pontis = createPontisClient({
    baseUrl: options.baseUrl,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  })
  const quote = await pontis.getQuote({
    user: user.address,
    recipient: options.recipient ?? USERS[0]?.address ?? '',
    originChainId: TRON_DEVNET_CHAIN_ID,
    destinationChainId: 31337,
    originCurrency: TRON_USDT_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '20000000',
    tradeType: 'EXACT_INPUT',
  })
  log(`quote: ${quote.steps.map((step) => step.id).join(' -> ')}, out ${quote.details.currencyOut.amount}`)
  const result = await pontis.executeQuote(
    quote,
    [
      tronNodeWallet({
        apiUrl: options.apiUrl,
        // r‖s‖v over the txID, v = 27 + recovery, as TronWeb signs.
        signTransactionId: (txID) =>
          sign({ hash: `0x${txID}`, privateKey: user.privateKey as `0x${string}`, to: 'hex' }),
      }),
    ],
    {
      ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
      timeoutMs: 180_000,
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
  await runTronExample({
    baseUrl: process.env.PONTIS_URL ?? 'http://127.0.0.1:4000',
    apiUrl: process.env.TRON_API_URL ?? 'http://127.0.0.1:8090',
    ...(process.env.PONTIS_API_KEY ? { apiKey: process.env.PONTIS_API_KEY } : {}),
  })
}
