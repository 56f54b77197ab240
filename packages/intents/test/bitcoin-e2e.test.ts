/**
 * Bitcoin requests end to end on the devnet (the regtest simulator behind the Esplora API, and an
 * anvil chain): the test signs the quoted PSBT as a wallet would, with @scure/btc-signer (a library
 * independent of the plugin's bitcoinjs-lib), for P2WPKH, P2TR and P2SH-P2WPKH users. Also the
 * mempool-to-pending move, the 1- and 2-confirmation policy, deposit addresses swept to the solver
 * (issue 22), the reindex 404, INSUFFICIENT_FUNDS and Bitcoin address rules.
 */
import { type IntentsApi, silentLogger } from '@pontis/core'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_SOLVER,
  BITCOIN_USERS,
  type BitcoinDevAccount,
  BitcoinECPair,
  devnetEnvironment,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import { erc20Abi } from '@pontis/plugin-evm'
import * as btc from '@scure/btc-signer'
import t, { type Test } from 'tap'
import { type Address, createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { freshIndexerPass, jobsFor } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
type ErrorAnswer = { message: string; errorCode: string }

const BTC = BITCOIN_DEVNET_CHAIN_ID
const EVM = 31337
const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }

const devnet = await startDevnet({ chains: [{ chainId: EVM, port: 0 }], bitcoin: { port: 0 } })
t.teardown(() => devnet.stop())
const bitcoin = devnet.bitcoin
if (!bitcoin) throw new Error('the devnet was started without Bitcoin')
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: loaded,
  indexerIntervalMs: 100,
  solverIntervalMs: 100,
})
t.teardown(() => service.close())
const evmChain = devnet.chains[0] as (typeof devnet.chains)[0]
const evmClient = createPublicClient({
  chain: evmChain.chain,
  transport: http(evmChain.rpcUrl),
}) as PublicClient
const evmBalance = (owner: Address) =>
  evmClient.readContract({
    address: STABLECOIN_ADDRESS,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  })

async function esplora<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${bitcoin?.url}${path}`, init)
  const text = await response.text()
  if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`)
  return (text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text) as T
}

/** Signs the quoted PSBT as `user`'s wallet (P2TR wallets add their internal key) and broadcasts it. */
async function signAndBroadcast(t: Test, quote: Quote, user: BitcoinDevAccount): Promise<string> {
  const data = quote.steps[0]?.items[0]?.data as { format: string; psbt: string; chainId: number }
  t.equal(data.format, 'bitcoin-psbt')
  t.equal(data.chainId, BTC)
  const transaction = btc.Transaction.fromPSBT(Buffer.from(data.psbt, 'hex'), {
    allowUnknownOutputs: true,
  })
  const outputs = Array.from({ length: transaction.outputsLength }, (_, index) =>
    transaction.getOutput(index),
  )
  const requestId = String(quote.steps[0]?.requestId).slice(2)
  t.ok(
    outputs.some((output) => Buffer.from(output.script ?? []).toString('hex') === `6a20${requestId}`),
    'an OP_RETURN output commits the request id',
  )
  for (let index = 0; index < transaction.inputsLength; index++) {
    if (user.kind === 'p2tr' && !transaction.getInput(index).tapInternalKey)
      transaction.updateInput(index, { tapInternalKey: user.internalPublicKey as Uint8Array })
  }
  transaction.sign(user.keypair.privateKey as Uint8Array)
  transaction.finalize()
  return esplora<string>('/tx', { method: 'POST', body: transaction.hex })
}

async function statusOf(client: TestClient, requestId: string): Promise<Status> {
  return (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as Status
}

/** Polls the status until `wanted`, mining a block every `mineEveryMs` when given (as a chain would). */
async function waitForStatus(
  client: TestClient,
  requestId: string,
  wanted: string,
  mineEveryMs?: number,
): Promise<Status> {
  let lastMined = Date.now()
  const record = await waitFor(
    `request ${requestId} to be ${wanted}`,
    () => {
      if (mineEveryMs !== undefined && Date.now() - lastMined >= mineEveryMs) {
        bitcoin?.mine(1)
        lastMined = Date.now()
      }
      return statusOf(client, requestId)
    },
    {
      until: (seen) => seen.status === wanted || ['failure', 'refund'].includes(seen.status),
      describe: (seen) => seen && { status: seen.status, failReason: seen.failReason, details: seen.details },
    },
  )
  if (record.status !== wanted)
    throw new Error(`request ${requestId} ended ${record.status} (${record.failReason}), wanted ${wanted}`)
  return record
}

const toEvm = (user: BitcoinDevAccount, amount: bigint, extra: Record<string, unknown> = {}) => ({
  user: user.address,
  recipient: USERS[0]!.address,
  originChainId: BTC,
  destinationChainId: EVM,
  originCurrency: BITCOIN_NATIVE_CURRENCY_ID,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: amount.toString(),
  tradeType: 'EXACT_INPUT',
  ...extra,
})

const kinds: ReadonlyArray<[string, BitcoinDevAccount, Record<string, unknown>]> = [
  ['P2WPKH', BITCOIN_USERS.p2wpkh, {}],
  ['P2TR', BITCOIN_USERS.p2tr, {}],
  [
    'P2SH-P2WPKH',
    BITCOIN_USERS['p2sh-p2wpkh'],
    {
      additionalData: { userPublicKey: Buffer.from(BITCOIN_USERS['p2sh-p2wpkh'].publicKey).toString('hex') },
    },
  ],
]

for (const [name, user, extra] of kinds) {
  t.test(
    `Bitcoin to EVM from a ${name} user: pending from the mempool, success after one block`,
    async (t) => {
      const client = createTestClient(t, service.url, loaded.document)
      const res = await client.post('/quote/v2', toEvm(user, 5_000_000n, extra))
      t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
      const quote = res.body as Quote
      const requestId = quote.steps[0]?.requestId as string
      const before = await evmBalance(USERS[0]!.address)
      const txid = await signAndBroadcast(t, quote, user)
      const reindex = await client.post('/transactions/index', { chainId: BTC, txHash: txid })
      t.equal(reindex.status, 404, 'a transaction not in a block yet is answered 404')
      t.equal((reindex.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
      const pending = await waitForStatus(client, requestId, 'pending')
      t.ok(pending.inTxHashes.includes(txid), 'pending as soon as the deposit is in the mempool')
      await freshIndexerPass(service)
      t.equal((await statusOf(client, requestId)).status, 'pending', 'still pending before the block')
      t.equal(await jobsFor(service, requestId), 0, 'no fill queued before the block')
      bitcoin.mine(1)
      const indexed = await client.post('/transactions/index', { chainId: BTC, txHash: txid })
      t.equal(indexed.status, 200, 'in a block: indexed')
      await waitForStatus(client, requestId, 'success')
      t.ok((await evmBalance(USERS[0]!.address)) - before >= BigInt(quote.details.currencyOut.minimumAmount))
    },
  )
}

t.test('a high-value deposit waits for two blocks, and the quote says so', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = BITCOIN_USERS.p2wpkh
  const low = (await client.post('/price', toEvm(user, 5_000_000n))).body as Quote
  const res = await client.post('/quote/v2', toEvm(user, 20_000_000n))
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  t.ok(quote.details.timeEstimate > low.details.timeEstimate, 'timeEstimate reflects the 2-block rule')
  const requestId = quote.steps[0]?.requestId as string
  await signAndBroadcast(t, quote, user)
  await waitForStatus(client, requestId, 'pending')
  bitcoin.mine(1)
  await freshIndexerPass(service)
  t.equal((await statusOf(client, requestId)).status, 'pending')
  t.equal(await jobsFor(service, requestId), 0, 'one block is not enough above the threshold')
  bitcoin.mine(1)
  await waitForStatus(client, requestId, 'success')
})

t.test('EVM to Bitcoin: the solver pays the recipient with the order id in OP_RETURN', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[1]!
  const recipient = BITCOIN_USERS.p2tr.address
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: EVM,
    destinationChainId: BTC,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: BITCOIN_NATIVE_CURRENCY_ID,
    amount: '3000000000',
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const wallet = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: evmChain.chain,
    transport: http(evmChain.rpcUrl),
  })
  let txHash: Hex | undefined
  for (const step of quote.steps) {
    for (const item of step.items) {
      const data = item.data as { to: Address; data: Hex; value: string; gas?: string }
      txHash = await wallet.sendTransaction({
        to: data.to,
        data: data.data,
        value: BigInt(data.value),
        // The step's limit, as the Relay SDK sends it: a bare estimate runs out of gas when a
        // repayment empties the depository's balance first.
        ...(data.gas ? { gas: BigInt(data.gas) } : {}),
      })
      await evmClient.waitForTransactionReceipt({ hash: txHash })
    }
  }
  await client.post('/transactions/index', { chainId: EVM, txHash })
  const before = BigInt(
    (await esplora<{ chain_stats: { funded_txo_sum: number } }>(`/address/${recipient}`)).chain_stats
      .funded_txo_sum,
  )
  const done = await waitForStatus(client, requestId, 'success', 300)
  const fill = done.txHashes[0] as string
  const transaction = await esplora<{
    vout: Array<{ scriptpubkey: string; scriptpubkey_address?: string; value: number }>
  }>(`/tx/${fill}`)
  t.ok(
    transaction.vout.some((output) => output.scriptpubkey === `6a20${requestId.slice(2)}`),
    'OP_RETURN order id',
  )
  const paid = transaction.vout
    .filter((output) => output.scriptpubkey_address === recipient)
    .reduce((sum, output) => sum + BigInt(output.value), 0n)
  t.ok(paid >= BigInt(quote.details.currencyOut.minimumAmount), `paid ${paid} sats`)
  const after = BigInt(
    (await esplora<{ chain_stats: { funded_txo_sum: number } }>(`/address/${recipient}`)).chain_stats
      .funded_txo_sum,
  )
  t.equal(after - before, paid)
})

for (const [amount, blocks] of [
  [4_000_000n, 1],
  [15_000_000n, 2],
] as const) {
  t.test(
    `deposit address: a plain payment of ${amount} sats is counted after ${blocks} block(s), then filled`,
    async (t) => {
      const client = createTestClient(t, service.url, loaded.document)
      const user = BITCOIN_USERS.p2wpkh
      const res = await client.post(
        '/quote/v2',
        toEvm(user, amount, { useDepositAddress: true, refundTo: user.address }),
      )
      t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
      const quote = res.body as Quote
      const requestId = quote.steps[0]?.requestId as string
      const depositAddress = quote.steps[0]?.depositAddress as string
      const amountIn = BigInt(quote.details.currencyIn.amount)
      // The wallet's own payment: one confirmed coin in, the deposit address and change out.
      const coins = await esplora<
        Array<{ txid: string; vout: number; value: number; status: { confirmed: boolean } }>
      >(`/address/${user.address}/utxo`)
      const coin = coins.find(
        (candidate) => candidate.status.confirmed && BigInt(candidate.value) > amountIn + 10_000n,
      )
      if (!coin) throw new Error('no spendable coin')
      const payment = new btc.Transaction()
      payment.addInput({
        txid: coin.txid,
        index: coin.vout,
        witnessUtxo: { script: user.outputScript, amount: BigInt(coin.value) },
      })
      payment.addOutputAddress(depositAddress, amountIn, REGTEST)
      payment.addOutputAddress(user.address, BigInt(coin.value) - amountIn - 1_000n, REGTEST)
      payment.sign(user.keypair.privateKey as Uint8Array)
      payment.finalize()
      await esplora<string>('/tx', { method: 'POST', body: payment.hex })
      await freshIndexerPass(service)
      t.equal((await statusOf(client, requestId)).status, 'waiting', 'an unconfirmed payment is not counted')
      t.equal(await jobsFor(service, requestId), 0, 'nothing queued for it')
      for (let mined = 1; mined < blocks; mined++) {
        bitcoin.mine(1)
        await freshIndexerPass(service)
        t.equal((await statusOf(client, requestId)).status, 'waiting', `not counted after ${mined} block(s)`)
        t.equal(await jobsFor(service, requestId), 0, 'nothing queued for it')
      }
      bitcoin.mine(1)
      await waitForStatus(client, requestId, 'success')

      // The solver is paid back by a sweep of the deposit address to its own (issue 22), its fee
      // out of the swept coin.
      const sweep = await waitFor(
        'the deposit address to be swept',
        async () => {
          bitcoin.mine(1)
          const { rows } = await service.store.client.query<{
            state: string
            destination: string
            amount: string
            swept_amount: string | null
            fee: string | null
            transaction_id: string | null
          }>(
            `SELECT state, destination, amount::text, swept_amount::text, fee::text, transaction_id
             FROM deposit_address_sweeps WHERE request_id = $1`,
            [requestId],
          )
          return rows[0]
        },
        {
          until: (row) => row?.state === 'swept' || row?.state === 'failed',
          describe: (row) => row,
          intervalMs: 250,
        },
      )
      t.match(
        sweep,
        { state: 'swept', destination: 'solver', amount: amountIn.toString() },
        'swept to the solver',
      )
      if (!sweep) throw new Error('no sweep recorded')
      const fee = BigInt(sweep.fee ?? '-1')
      t.ok(fee > 0n, 'the sweep fee is recorded')
      t.equal(
        BigInt(sweep.swept_amount ?? '0') + fee,
        amountIn,
        'what reached the solver is the credit less the fee',
      )
      const sent = await esplora<{
        fee: number
        vin: Array<{ prevout: { scriptpubkey_address?: string } | null }>
        vout: Array<{ scriptpubkey_address?: string; scriptpubkey_type: string; value: number }>
      }>(`/tx/${sweep.transaction_id}`)
      t.same(
        sent.vin.map((input) => input.prevout?.scriptpubkey_address),
        [depositAddress],
        'the sweep spends the deposit address’s coin, and only that',
      )
      t.same(
        sent.vout.map((output) => [
          output.scriptpubkey_address ?? output.scriptpubkey_type,
          BigInt(output.value),
        ]),
        [
          [BITCOIN_SOLVER.address, BigInt(sweep.swept_amount ?? '0')],
          ['op_return', 0n],
        ],
        'into one output to the solver, beside the OP_RETURN that names it',
      )
      t.equal(BigInt(sent.fee), fee, 'the recorded fee is the one the chain took')
      t.same(await esplora(`/address/${depositAddress}/utxo`), [], 'the deposit address holds nothing more')
      t.equal(await service.repayments.tick(), 0, 'a second pass sweeps nothing')
    },
  )
}

t.test('deposit-address quotes need a funded user; P2SH needs its public key; address rules', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const poor = btc.p2wpkh(BitcoinECPair.makeRandom().publicKey, REGTEST).address as string
  const insufficient = await client.post(
    '/quote/v2',
    toEvm({ ...BITCOIN_USERS.p2wpkh, address: poor }, 5_000_000n, {
      useDepositAddress: true,
      refundTo: BITCOIN_USERS.p2wpkh.address,
    }),
  )
  t.equal(insufficient.status, 400)
  t.equal((insufficient.body as ErrorAnswer).errorCode, 'INSUFFICIENT_FUNDS')
  const funded = await client.post(
    '/quote/v2',
    toEvm(BITCOIN_USERS.p2wpkh, 5_000_000n, {
      useDepositAddress: true,
      refundTo: BITCOIN_USERS.p2wpkh.address,
    }),
  )
  t.equal(funded.status, 200, JSON.stringify(funded.body).slice(0, 300))
  t.match(
    (funded.body as Quote).steps[0]?.depositAddress,
    /^bcrt1q/,
    'a deposit address of the regtest network',
  )
  const noKey = await client.post('/quote/v2', toEvm(BITCOIN_USERS['p2sh-p2wpkh'], 5_000_000n))
  t.equal(noKey.status, 400)
  t.match((noKey.body as ErrorAnswer).message, /additionalData\.userPublicKey/)
  const cases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
    [
      'EVM address as Bitcoin user',
      { ...toEvm(BITCOIN_USERS.p2wpkh, 5_000_000n), user: USERS[0]!.address },
      'INVALID_ADDRESS',
    ],
    [
      'mainnet address on regtest',
      { ...toEvm(BITCOIN_USERS.p2wpkh, 5_000_000n), user: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
      'INVALID_ADDRESS',
    ],
    [
      'the native id as a recipient',
      {
        user: USERS[0]!.address,
        recipient: BITCOIN_NATIVE_CURRENCY_ID,
        originChainId: EVM,
        destinationChainId: BTC,
        originCurrency: STABLECOIN_ADDRESS,
        destinationCurrency: BITCOIN_NATIVE_CURRENCY_ID,
        amount: '100000000',
        tradeType: 'EXACT_INPUT',
      },
      'INVALID_RECIPIENT',
    ],
  ]
  for (const [name, body, code] of cases) {
    const res = await client.post('/quote/v2', body)
    t.equal(res.status, 400, `${name}: 400`)
    t.equal((res.body as ErrorAnswer).errorCode, code, `${name}: ${code}`)
  }
})
