/**
 * The public Relay SDK (7.0.3) and its Bitcoin wallet adapter (`@relayprotocol/relay-bitcoin-wallet-adapter`
 * 18.0.1), unmodified, against the stack `npm start` serves: BTC on the regtest devnet to USDC on 31337.
 * The adapter reads the step's PSBT as hex, has the wallet sign it (bitcoinjs-lib, as the devnet's
 * P2WPKH user), finalizes it and broadcasts it to a hard-coded public mempool API: that one call, and
 * only calls to that host, are sent to the devnet's Esplora instead (a request interceptor on the SDK's
 * axios instance, which the adapter uses). The SDK returns once the deposit is broadcast (it never
 * follows a Bitcoin-origin request), so the test then follows the status until the fill.
 */
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_DEVNET_NETWORK,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_USERS,
} from '@pontis/devnet'
import { adaptBitcoinWallet } from '@relayprotocol/relay-bitcoin-wallet-adapter'
import { axios } from '@relayprotocol/relay-sdk'
import { Psbt } from 'bitcoinjs-lib'
import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_USDC, relay, requestIdOf, startSdkStack } from './fixtures/sdk-stack.js'

// Starting the stack npm start serves (two anvil chains, LiteSVM, the simulators, both services) takes
// 15–40 s on a busy 2-core machine, and the flows wait for blocks: beyond tap's 120 s default.
t.setTimeout(300_000)

/** The public broadcast endpoint the adapter hard-codes. */
const MEMPOOL_HOST = 'mempool.space'

t.test(
  'the Relay SDK bridges BTC to EVM against npm start (only the adapter’s hard-coded mempool.space broadcast is redirected to the devnet Esplora)',
  async (t) => {
    const sdk = await startSdkStack(t)
    const esplora = sdk.devnet.bitcoin?.url
    if (!esplora) throw new Error('the local stack started no Bitcoin devnet')
    const redirected: string[] = []
    const interceptor = axios.interceptors.request.use((config) => {
      const url = new URL(config.url ?? '', config.baseURL)
      if (url.host !== MEMPOOL_HOST) return config
      // mempool.space serves the Esplora API under /api: the same path on the devnet's Esplora.
      redirected.push(url.pathname)
      return { ...config, url: `${esplora}${url.pathname.replace(/^\/api/, '')}` }
    })
    t.teardown(() => axios.interceptors.request.eject(interceptor))

    const user = BITCOIN_USERS.p2wpkh
    const recipient = privateKeyToAccount(generatePrivateKey()).address
    const wallet = adaptBitcoinWallet(user.address, async (_address, psbt) => {
      // The wallet's side: sign every input the user owns, hand the PSBT back (base64) unfinalized.
      const signing = Psbt.fromBase64(psbt.toBase64(), { network: BITCOIN_DEVNET_NETWORK })
      signing.signAllInputs(user.keypair)
      return signing.toBase64()
    })
    const quote = await relay().actions.getQuote(
      {
        chainId: BITCOIN_DEVNET_CHAIN_ID,
        toChainId: 31337,
        currency: BITCOIN_NATIVE_CURRENCY_ID,
        toCurrency: EVM_USDC,
        amount: '5000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    t.ok(quoted > 0n, 'the quote promises an output')
    const { data } = await relay().actions.execute({ quote, wallet })
    const [txHash] = data.steps.flatMap((step) => (step.items ?? []).flatMap((item) => item.txHashes ?? []))
    t.match(txHash?.txHash, /^[0-9a-f]{64}$/, 'the adapter broadcast the signed deposit and got its txid')
    t.same(redirected, ['/api/tx'], 'only the broadcast went to the public host, and was redirected')
    const tx = await fetch(`${esplora}/tx/${txHash?.txHash}`)
    t.equal(tx.status, 200, 'the devnet knows the deposit')

    // The SDK stops at the broadcast; the request is followed to its end by its status.
    const final = await sdk.waitForFinalStatus(requestIdOf(quote))
    t.equal(final.status, 'success', 'the request was filled')
    t.same(final.inTxHashes, [txHash?.txHash], 'the broadcast transaction is the deposit')
    t.equal(await sdk.usdcBalance(31337, recipient), quoted, 'the EVM recipient got the quoted USDC')
    // The one documented refusal: a Bitcoin deposit still in the mempool is answered 404 by
    // /transactions/index (the watcher picks it up); the SDK posts it fire-and-forget.
    t.same(
      sdk.apiCalls
        .filter((call) => call.status >= 300)
        .map((call) => `${call.method} ${call.path} ${call.status}`),
      ['POST /transactions/index 404'],
      'every other call the SDK made was answered 2xx',
    )
  },
)
