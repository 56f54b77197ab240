/**
 * Bitcoin example: bridge 0.05 BTC from the devnet's regtest chain (8253038) to USDC on EVM chain
 * 31337 with the partner client. The quoted PSBT is signed with @scure/btc-signer as the P2WPKH
 * devnet user and broadcast through Esplora. `npm start` mines a block every 10 s, so expect
 * `pending` for a few seconds before `success`. Run against `npm start`:
 *
 *   npx tsx packages/client/examples/bitcoin.ts
 *
 * Environment: PONTIS_URL (default http://127.0.0.1:4000), ESPLORA_URL (default
 * http://127.0.0.1:3002), PONTIS_API_KEY (optional).
 */
import { pathToFileURL } from 'node:url'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_USERS,
  STABLECOIN_ADDRESS,
  USERS,
} from '@pontis/devnet'
import * as btc from '@scure/btc-signer'
import {
  createPontisClient,
  type ExecuteQuoteOptions,
  type ExecutionResult,
  esploraBitcoinWallet,
  hexToBytes,
  type QuoteResponse,
} from '../src/index.js'

/** Settings of {@link runBitcoinExample}. */
export interface BitcoinExampleOptions {
  baseUrl: string
  /** Esplora API of the regtest devnet. */
  esploraUrl: string
  apiKey?: string
  /** Recipient on chain 31337; default the first devnet user. */
  recipient?: string
  pollIntervalMs?: number
  log?: (line: string) => void
  /** Extra progress hook (the test mines a block once the deposit is pending). */
  onProgress?: ExecuteQuoteOptions['onProgress']
}

/** Quotes and executes the bridge; answers the quote and the execution result. */
export async function runBitcoinExample(
  options: BitcoinExampleOptions,
): Promise<{ quote: QuoteResponse; result: ExecutionResult }> {
  const log = options.log ?? console.log
  const user = BITCOIN_USERS.p2wpkh
  const privateKey = user.keypair.privateKey
  if (!privateKey) throw new Error('the devnet user has no private key')
  const pontis = createPontisClient({
    baseUrl: options.baseUrl,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  })
  const quote = await pontis.getQuote({
    user: user.address,
    recipient: options.recipient ?? USERS[0]?.address ?? '',
    originChainId: BITCOIN_DEVNET_CHAIN_ID,
    destinationChainId: 31337,
    originCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '5000000',
    tradeType: 'EXACT_INPUT',
  })
  log(`quote: ${quote.steps.map((step) => step.id).join(' -> ')}, out ${quote.details.currencyOut.amount}`)
  const wallet = esploraBitcoinWallet({
    esploraUrl: options.esploraUrl,
    async signPsbt(psbt) {
      const transaction = btc.Transaction.fromPSBT(hexToBytes(psbt), { allowUnknownOutputs: true })
      transaction.sign(privateKey)
      transaction.finalize()
      return transaction.hex
    },
  })
  const result = await pontis.executeQuote(quote, [wallet], {
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
    timeoutMs: 180_000,
    onProgress(event) {
      if (event.type === 'transaction') log(`  broadcast ${event.txHash}`)
      if (event.type === 'status') log(`  status ${event.status.status}`)
      options.onProgress?.(event)
    },
  })
  log(`done: ${result.status.status}, fill ${result.status.txHashes.join(', ')}`)
  return { quote, result }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runBitcoinExample({
    baseUrl: process.env.PONTIS_URL ?? 'http://127.0.0.1:4000',
    esploraUrl: process.env.ESPLORA_URL ?? 'http://127.0.0.1:3002',
    ...(process.env.PONTIS_API_KEY ? { apiKey: process.env.PONTIS_API_KEY } : {}),
  })
}
