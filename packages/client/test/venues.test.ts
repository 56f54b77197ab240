/**
 * The Hyperliquid and Tron examples end to end against the real intent service and the devnet's
 * simulators, started in-process on free ports: `hyperliquidWallet` signs the quoted send as a
 * Hyperliquid user-signed action (the simulator recovers the EIP-712 signer and checks the nonce;
 * the service finds the deposit by scanning, no transaction id is posted), and `tronNodeWallet`
 * checks the node-built transaction's txID, signs it and broadcasts it (the simulator verifies the
 * signature and produces blocks every 40 ms, so the 19 confirmations come on their own). Each run
 * reaches `success` and pays the EVM recipient the quoted amount. Also what the adapters refuse.
 */
import { silentLogger } from '@pontis/core'
import { devnetEnvironment, STABLECOIN_ADDRESS, startDevnet, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '@pontis/intents'
import t from 'tap'
import { type Address, createPublicClient, erc20Abi, http } from 'viem'
import { waitFor } from '../../../test/helpers/wait.js'
import { runHyperliquidExample } from '../examples/hyperliquid.js'
import { runTronExample } from '../examples/tron.js'
import { hyperliquidTypedData, hyperliquidWallet, tronNodeWallet } from '../src/index.js'

const devnet = await startDevnet({
  chains: [{ chainId: 31337, port: 0 }],
  hyperliquid: { port: 0 },
  tron: { port: 0, blockIntervalMs: 40 },
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
// A deposit scan starts at the chain's head when the service first watches it (no history replay),
// so a user sends only to a service that is watching: wait until it has a cursor on each chain it scans.
const scanned = [1337, 728126428].filter((id) => service.registry.chain(id).adapter.reading?.scanDeposits)
await waitFor(
  `the indexer to have a cursor on chains ${scanned.join(', ')}`,
  async () =>
    (
      await service.store.client.query<{ chain_id: number }>(
        'SELECT chain_id FROM chain_cursors WHERE chain_id = ANY($1::bigint[])',
        [scanned],
      )
    ).rows.map((row) => Number(row.chain_id)),
  { until: (watched) => watched.length === scanned.length },
)
const chain = devnet.chains[0] as (typeof devnet.chains)[0]
const usdc = (owner: Address) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) }).readContract({
    address: STABLECOIN_ADDRESS,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  })

t.test('the Hyperliquid example signs the send and reaches success without posting a hash', async (t) => {
  const recipient = USERS[2]?.address as Address
  const before = await usdc(recipient)
  const { quote, result } = await runHyperliquidExample({
    baseUrl: service.url,
    apiUrl: devnet.hyperliquid?.url ?? '',
    recipient,
    pollIntervalMs: 200,
    log: () => undefined,
  })
  t.equal(result.status.status, 'success')
  t.same(result.txHashes, [], 'no transaction id to index: the deposit scan found it')
  t.equal(result.status.inTxHashes.length, 1, 'the service matched the send')
  t.equal((await usdc(recipient)) - before, BigInt(quote.details.currencyOut.amount))
})

t.test('the Tron example checks, signs and broadcasts the node-built transaction', async (t) => {
  const recipient = USERS[3]?.address as Address
  const before = await usdc(recipient)
  const { quote, result } = await runTronExample({
    baseUrl: service.url,
    apiUrl: devnet.tron?.url ?? '',
    recipient,
    pollIntervalMs: 200,
    log: () => undefined,
  })
  t.equal(result.status.status, 'success')
  t.same(result.status.inTxHashes, result.txHashes, 'the broadcast txID is the matched deposit')
  t.equal((await usdc(recipient)) - before, BigInt(quote.details.currencyOut.amount))
})

t.test('the adapters refuse what they cannot vouch for', async (t) => {
  const tron = tronNodeWallet({
    apiUrl: devnet.tron?.url ?? '',
    signTransactionId: async () => 'unreachable',
  })
  await t.rejects(
    tron.signAndSendTransaction({
      format: 'tron-transaction',
      chainId: 728126428,
      transaction: { txID: 'ab'.repeat(32), raw_data_hex: '0a0201' },
    }),
    /not the sha256 of its raw data/,
    'a txID that does not hash the raw data is never signed',
  )
  const venue = hyperliquidWallet({
    apiUrl: devnet.hyperliquid?.url ?? '',
    signTypedData: async () => '0x00',
  })
  const lighterTransfer = {
    format: 'lighter-transfer' as const,
    chainId: 3586256,
    action: {
      type: 'transfer' as const,
      parameters: {
        toAccountIndex: 1,
        assetIndex: 3,
        fromRouteType: 0,
        toRouteType: 0,
        amount: 1,
        usdcFee: 0,
        memo: '0x01',
      },
    },
  }
  t.notOk(venue.claims(lighterTransfer), 'hyperliquidWallet does not claim lighter-transfer items')
  await t.rejects(venue.submit(lighterTransfer), /hyperliquid-action items/, 'nor submits them when asked')
  t.ok(venue.claims({ format: 'hyperliquid-action', chainId: 1337, action: { type: 'usdSend' }, nonce: 1 }))
  const tronOnMainnet = tronNodeWallet({
    apiUrl: 'http://127.0.0.1:9',
    signTransactionId: async () => 'unreachable',
    chainIds: [728126428],
  })
  const tronItem = {
    format: 'tron-transaction' as const,
    chainId: 2494104990,
    transaction: { txID: '', raw_data_hex: '' },
  }
  t.notOk(tronOnMainnet.claims(tronItem), 'an adapter limited to chainIds does not claim another chain')
  t.ok(tronOnMainnet.claims({ ...tronItem, chainId: 728126428 }))
  t.throws(
    () =>
      hyperliquidTypedData({
        format: 'hyperliquid-action',
        chainId: 1337,
        action: { type: 'withdraw3' },
        nonce: 1,
      }),
    /cannot sign Hyperliquid actions of type withdraw3/,
  )
  const typed = hyperliquidTypedData({
    format: 'hyperliquid-action',
    chainId: 1337,
    action: {
      type: 'spotSend',
      hyperliquidChain: 'Mainnet',
      signatureChainId: '0x66eee',
      destination: '0x34c2bf31916bb8eb562555b64658aa934381ea76',
      token: 'USDC:0x6d1e7cde53ba9467b783cb7c530ce054',
      amount: '1.5',
      time: 1767225600000,
    },
    nonce: 1767225600000,
  })
  t.same(typed.domain, {
    name: 'HyperliquidSignTransaction',
    version: '1',
    chainId: 421614,
    verifyingContract: '0x0000000000000000000000000000000000000000',
  })
  t.equal(typed.primaryType, 'HyperliquidTransaction:SpotSend')
  t.same(
    typed.types['HyperliquidTransaction:SpotSend']?.map((field) => field.name),
    ['hyperliquidChain', 'destination', 'token', 'amount', 'time'],
  )
  t.equal(typed.message.time, 1767225600000n)
})
