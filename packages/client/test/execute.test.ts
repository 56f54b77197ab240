/**
 * The examples end to end against the real intent service and devnet chains, all started
 * in-process on free ports: the EVM example (a stablecoin bridge with an approval, through
 * `viemWalletAdapter`), the SVM example (LiteSVM behind the devnet's JSON-RPC verifies the keypair
 * signature made with WebCrypto) and the Bitcoin example (a PSBT signed with @scure/btc-signer,
 * broadcast through Esplora), each run by `executeQuote` to `success`.
 */
import { silentLogger } from '@pontis/core'
import { devnetEnvironment, STABLECOIN_ADDRESS, startDevnet, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '@pontis/intents'
import t from 'tap'
import { type Address, createPublicClient, erc20Abi, http } from 'viem'
import { runBitcoinExample } from '../examples/bitcoin.js'
import { runEvmExample } from '../examples/evm.js'
import { runSvmExample } from '../examples/svm.js'

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
  svm: { port: 0, routesPort: 0, slotIntervalMs: 40 },
  bitcoin: { port: 0 },
})
t.teardown(() => devnet.stop())
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: await loadOpenApiDocument(INTENTS_DOCUMENT_PATH),
  indexerIntervalMs: 150,
  solverIntervalMs: 100,
})
t.teardown(() => service.close())
const [chainA, chainB] = devnet.chains as [(typeof devnet.chains)[0], (typeof devnet.chains)[0]]
const usdcOn = (chain: typeof chainA, owner: Address) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) }).readContract({
    address: STABLECOIN_ADDRESS,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  })

t.test('the EVM example runs a USDC bridge to success on the devnet', async (t) => {
  const recipient = USERS[3]?.address as Address
  const balance = () => usdcOn(chainB, recipient)
  const before = await balance()
  const lines: string[] = []
  const { quote, result } = await runEvmExample({
    baseUrl: service.url,
    rpcUrl: chainA.rpcUrl,
    recipient,
    pollIntervalMs: 200,
    log: (line) => lines.push(line),
  })
  t.same(
    quote.steps.map((step) => step.id),
    ['approve', 'deposit'],
    'the first USDC deposit needs an approval',
  )
  t.equal(result.status.status, 'success')
  t.equal(result.txHashes.length, 2, 'approval and deposit were sent')
  t.ok(result.status.inTxHashes.includes(result.txHashes[1] as string), 'the service matched the deposit')
  t.equal(result.status.txHashes.length, 1, 'one fill')
  t.equal(
    (await balance()) - before,
    BigInt(quote.details.currencyOut.amount),
    'the recipient got the quoted output',
  )
  t.ok(
    lines.some((line) => line.startsWith('done: success')),
    'the example reports success',
  )
})

t.test('the SVM example signs with the keypair over JSON-RPC and reaches success', async (t) => {
  const recipient = USERS[2]?.address as Address
  const before = await usdcOn(chainA, recipient)
  const { quote, result } = await runSvmExample({
    baseUrl: service.url,
    rpcUrl: devnet.svm?.rpcUrl as string,
    recipient,
    pollIntervalMs: 200,
    log: () => {},
  })
  t.equal(quote.steps[0]?.items[0]?.data.format, 'svm-transaction')
  t.equal(result.status.status, 'success')
  t.match(result.txHashes[0], /^[1-9A-HJ-NP-Za-km-z]{86,88}$/, 'the deposit signature is base58')
  t.ok(result.status.inTxHashes.includes(result.txHashes[0] as string), 'the service matched the deposit')
  t.ok(
    (await usdcOn(chainA, recipient)) - before >= BigInt(quote.details.currencyOut.minimumAmount),
    'the recipient got at least the minimum output',
  )
})

t.test('the Bitcoin example broadcasts the signed PSBT and reaches success after a block', async (t) => {
  const recipient = USERS[1]?.address as Address
  const before = await usdcOn(chainA, recipient)
  let mined = false
  const { quote, result } = await runBitcoinExample({
    baseUrl: service.url,
    esploraUrl: devnet.bitcoin?.url as string,
    recipient,
    pollIntervalMs: 200,
    log: () => {},
    // The devnet mines on demand here: one block once the deposit is seen in the mempool.
    onProgress(event) {
      if (event.type === 'status' && event.status.status === 'pending' && !mined) {
        mined = true
        devnet.bitcoin?.mine(1)
      }
    },
  })
  t.equal(quote.steps[0]?.items[0]?.data.format, 'bitcoin-psbt')
  t.ok(mined, 'the request was pending from the mempool before the block')
  t.equal(result.status.status, 'success')
  t.match(result.txHashes[0], /^[0-9a-f]{64}$/, 'the txid Esplora answered')
  t.ok(result.status.inTxHashes.includes(result.txHashes[0] as string), 'the service matched the deposit')
  t.ok(
    (await usdcOn(chainA, recipient)) - before >= BigInt(quote.details.currencyOut.minimumAmount),
    'the recipient got at least the minimum output',
  )
})
