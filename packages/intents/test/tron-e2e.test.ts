/**
 * Tron requests end to end on the devnet (the full-node API simulator, mining on demand, and an
 * anvil chain), through HTTP only: EVM deposits filled on Tron (TRC20 USDT and TRX, the order id in
 * the fill), Tron deposits signed as a wallet would (`tronSignTransaction`) and broadcast to the
 * node, reindexed with a string chain id and acted on at 19 confirmations, and Tron address rules.
 */
import { createHash } from 'node:crypto'
import type { IntentsApi } from '@pontis/core'
import {
  STABLECOIN_ADDRESS,
  TRON_DEVNET_CHAIN_ID,
  TRON_NATIVE_CURRENCY_ID,
  TRON_SOLVER,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  type TronTransactionJson,
  tronAddressBytes,
  tronDecodeRaw,
  tronSignTransaction,
  USERS,
} from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import { startE2e } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
type ErrorAnswer = { message: string; errorCode: string }
type ChainRecord = {
  id: number
  vmType: string
  currency: { id: string; address: string; decimals: number }
  erc20Currencies?: Array<{ id: string; address: string; decimals: number }>
}

const TRON = TRON_DEVNET_CHAIN_ID
const EVM = 31337
const EVM_NATIVE = '0x0000000000000000000000000000000000000000'
/** The plugin's slow finality: a Tron deposit is acted on at this many confirmations. */
const SLOW_CONFIRMATIONS = 19
const e2e = await startE2e(t, { tron: { port: 0, blockIntervalMs: 0 } })
const { devnet, service, loaded } = e2e
const tron = devnet.tron
if (!tron) throw new Error('the devnet was started without Tron')
const evmUsdc = e2e.evm.usdcBalance

/** POSTs to the Tron node's API as a wallet does. */
async function node(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${tron?.url}${path}`, { method: 'POST', body: JSON.stringify(body) })
  return (await response.json()) as Record<string, unknown>
}

const statusOf = e2e.statusOf
const executeEvm = e2e.evm.execute

/** Polls the status until `wanted`, mining a Tron block every `mineEveryMs` when given. */
function waitFor(
  client: TestClient,
  requestId: string,
  wanted: IntentsApi.RequestStatus,
  mineEveryMs?: number,
) {
  let lastMined = Date.now()
  return e2e.waitForStatus(client, requestId, {
    wanted,
    onPoll: () => {
      if (mineEveryMs !== undefined && Date.now() - lastMined >= mineEveryMs) {
        tron?.mine(1)
        lastMined = Date.now()
      }
    },
  })
}

const toTron = (currency: string, destinationCurrency: string, amount: bigint, extra = {}) => ({
  user: USERS[1]!.address,
  recipient: TRON_USERS.alice.address,
  originChainId: EVM,
  destinationChainId: TRON,
  originCurrency: currency,
  destinationCurrency,
  amount: amount.toString(),
  tradeType: 'EXACT_INPUT',
  ...extra,
})

const fromTron = (currency: string, destinationCurrency: string, amount: bigint, extra = {}) => ({
  user: TRON_USERS.alice.address,
  recipient: USERS[2]!.address,
  originChainId: TRON,
  destinationChainId: EVM,
  originCurrency: currency,
  destinationCurrency,
  amount: amount.toString(),
  tradeType: 'EXACT_INPUT',
  ...extra,
})

t.test('/chains lists Tron as a tvm chain with TRX and USDT', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.get('/chains')
  t.equal(res.status, 200)
  const chain = (res.body as { chains: ChainRecord[] }).chains.find((entry) => entry.id === TRON)
  t.ok(chain, 'chain 728126428 is listed')
  t.equal(chain?.vmType, 'tvm')
  t.match(chain?.currency, { id: 'trx', address: TRON_NATIVE_CURRENCY_ID, decimals: 6 })
  t.match(
    chain?.erc20Currencies?.find((currency) => currency.id === 'usdt'),
    { address: TRON_USDT_ADDRESS, decimals: 6 },
  )
  const byFamily = await client.get('/chains?vmType=tvm')
  t.same(
    (byFamily.body as { chains: ChainRecord[] }).chains.map((entry) => entry.id),
    [TRON],
  )
})

for (const [name, originCurrency, destinationCurrency, amount, balanceOf] of [
  ['EVM USDC to Tron USDT', STABLECOIN_ADDRESS, TRON_USDT_ADDRESS, 25_000_000n, 'usdtBalance'],
  ['EVM ETH to TRX', EVM_NATIVE, TRON_NATIVE_CURRENCY_ID, 10n ** 16n, 'trxBalance'],
] as const) {
  t.test(`${name}: the solver pays alice on Tron, tagged with the order id`, async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    const res = await client.post('/quote/v2', toTron(originCurrency, destinationCurrency, amount))
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    const recipient = TRON_USERS.alice.address
    const before = tron[balanceOf](recipient)
    const txHash = await executeEvm(quote, USERS[1]!.privateKey)
    const indexed = await client.post('/transactions/index', { chainId: String(EVM), txHash })
    t.equal(indexed.status, 200, JSON.stringify(indexed.body).slice(0, 300))
    const done = await waitFor(client, requestId, 'success', 200)
    t.ok(done.inTxHashes.includes(txHash), 'the EVM deposit is the input')
    const fill = done.txHashes[0] as string
    t.match(fill, /^[0-9a-f]{64}$/, 'the fill is a Tron txID')
    t.equal(
      tron[balanceOf](recipient) - before,
      BigInt(quote.details.currencyOut.amount),
      'alice received exactly the quoted output',
    )
    // The fill as the node serves it: in a block, SUCCESS, tagged with the order id.
    const transaction = (await node('/wallet/gettransactionbyid', { value: fill })) as unknown as {
      raw_data_hex: string
      ret: Array<{ contractRet: string }>
    }
    t.equal(transaction.ret[0]?.contractRet, 'SUCCESS')
    const raw = tronDecodeRaw(Buffer.from(transaction.raw_data_hex, 'hex'))
    const tag = requestId.slice(2)
    t.equal(Buffer.from(raw.contract.owner).toString('hex'), TRON_SOLVER.hexAddress, 'paid by the solver')
    if (raw.contract.type === 'TransferContract') {
      t.equal(Buffer.from(raw.data).toString('hex'), tag, 'the TRX fill carries the order id as its memo')
      t.equal(raw.contract.amount, BigInt(quote.details.currencyOut.amount))
    } else {
      t.equal(
        Buffer.from(raw.contract.data).toString('hex').slice(-64),
        tag,
        'the TRC20 fill carries the order id after the transfer arguments',
      )
    }
  })
}

/** The `tron-transaction` item of a quote, checked against what a wallet can verify itself. */
function checkTronItem(t: Test, quote: Quote, currency: string, amount: bigint): TronTransactionJson {
  const data = quote.steps[0]?.items[0]?.data as IntentsApi.TronTransactionData
  t.equal(data.format, 'tron-transaction')
  t.equal(data.chainId, TRON)
  t.ok(data.transaction.raw_data, 'the node JSON a wallet signs, raw_data included')
  // The document types raw_data loosely; it is the node's JSON the wallet signs.
  const transaction = data.transaction as unknown as TronTransactionJson
  const rawBytes = Buffer.from(transaction.raw_data_hex, 'hex')
  t.equal(
    transaction.txID,
    createHash('sha256').update(rawBytes).digest('hex'),
    'txID = sha256(raw_data_hex)',
  )
  const raw = tronDecodeRaw(rawBytes)
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
  const tag = String(quote.steps[0]?.requestId).slice(2)
  t.equal(hex(raw.contract.owner), TRON_USERS.alice.hexAddress, 'owned by alice')
  if (raw.contract.type === 'TransferContract') {
    t.equal(currency, TRON_NATIVE_CURRENCY_ID)
    t.equal(hex(raw.contract.to), TRON_VAULT.hexAddress, 'pays the vault')
    t.equal(raw.contract.amount, amount)
    t.equal(hex(raw.data), tag, 'the request id is the memo')
  } else {
    t.equal(currency, TRON_USDT_ADDRESS)
    const calldata = hex(raw.contract.data)
    t.equal(
      hex(raw.contract.contractAddress),
      hex(tronAddressBytes(TRON_USDT_ADDRESS) as Uint8Array),
      'on USDT',
    )
    t.equal(raw.contract.callValue, 0n)
    t.equal(calldata.slice(0, 8), 'a9059cbb', 'transfer(address,uint256)')
    t.equal(calldata.slice(32, 72), TRON_VAULT.hexAddress.slice(2), 'pays the vault')
    t.equal(BigInt(`0x${calldata.slice(72, 136)}`), amount)
    t.equal(calldata.slice(136), tag, 'the request id follows the arguments')
  }
  return transaction
}

for (const [name, originCurrency, amount, balanceOf] of [
  ['TRX', TRON_NATIVE_CURRENCY_ID, 200_000_000n, 'trxBalance'],
  ['USDT', TRON_USDT_ADDRESS, 30_000_000n, 'usdtBalance'],
] as const) {
  t.test(`Tron ${name} to EVM USDC: signed by alice, acted on at 19 confirmations`, async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    const res = await client.post('/quote/v2', fromTron(originCurrency, STABLECOIN_ADDRESS, amount))
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    const transaction = checkTronItem(t, quote, originCurrency, amount)
    const recipient = USERS[2]!.address
    const before = await evmUsdc(recipient)
    const vaultBefore = tron[balanceOf](TRON_VAULT.address)
    const accepted = await node(
      '/wallet/broadcasttransaction',
      tronSignTransaction(TRON_USERS.alice.privateKey, transaction),
    )
    t.equal(accepted.result, true, JSON.stringify(accepted))
    // Posted right after broadcasting, as clients do: not in a block yet, so "keep watching".
    const early = await client.post('/transactions/index', {
      chainId: String(TRON),
      txHash: transaction.txID,
    })
    t.equal(early.status, 202, JSON.stringify(early.body).slice(0, 300))
    t.match(early.body, { indexed: false, message: /not mined yet/ })
    tron.mine(1)
    const indexed = await client.post('/transactions/index', {
      chainId: String(TRON),
      txHash: transaction.txID,
    })
    t.equal(indexed.status, 200, JSON.stringify(indexed.body).slice(0, 300))
    t.equal((indexed.body as { requestId?: string }).requestId, requestId, 'matched by the tag')
    t.equal(tron[balanceOf](TRON_VAULT.address) - vaultBefore, amount, 'the vault holds the deposit')
    // The first block is the deposit's first confirmation; the request waits for the 19th.
    await e2e.freshIndexerPass()
    t.equal((await statusOf(client, requestId)).status, 'waiting', 'one confirmation: still waiting')
    t.equal(await e2e.jobsFor(requestId), 0, 'one confirmation: not acted on')
    tron.mine(SLOW_CONFIRMATIONS - 2)
    // A whole indexer pass that sees the new head.
    await e2e.freshIndexerPass()
    t.equal((await statusOf(client, requestId)).status, 'waiting', '18 confirmations: still waiting')
    t.equal(await e2e.jobsFor(requestId), 0, '18 confirmations: still not acted on')
    tron.mine(1)
    const done = await waitFor(client, requestId, 'success')
    t.ok(done.inTxHashes.includes(transaction.txID), 'inTxHashes holds the txID')
    t.equal(
      (await evmUsdc(recipient)) - before,
      BigInt(quote.details.currencyOut.amount),
      'the EVM recipient got the quoted amount',
    )
  })
}

t.test('Tron address and currency rules: 400 with the catalogued code and a usable message', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const alice = TRON_USERS.alice.address
  const last = alice.at(-1) === 'a' ? 'b' : 'a'
  const broken = `${alice.slice(0, -1)}${last}`
  const cases: ReadonlyArray<[string, Record<string, unknown>, string, RegExp]> = [
    [
      'an EVM address as a Tron recipient',
      toTron(STABLECOIN_ADDRESS, TRON_USDT_ADDRESS, 10_000_000n, { recipient: USERS[0]!.address }),
      'INVALID_RECIPIENT',
      /recipient.*T/i,
    ],
    [
      'a T-address with a broken checksum',
      toTron(STABLECOIN_ADDRESS, TRON_USDT_ADDRESS, 10_000_000n, { recipient: broken }),
      'INVALID_RECIPIENT',
      /recipient/i,
    ],
    [
      'a Bitcoin address as a Tron recipient',
      toTron(STABLECOIN_ADDRESS, TRON_USDT_ADDRESS, 10_000_000n, {
        recipient: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      }),
      'INVALID_RECIPIENT',
      /recipient/i,
    ],
    [
      'a Solana address as a Tron recipient',
      toTron(STABLECOIN_ADDRESS, TRON_USDT_ADDRESS, 10_000_000n, {
        recipient: 'So11111111111111111111111111111111111111112',
      }),
      'INVALID_RECIPIENT',
      /recipient/i,
    ],
    [
      'an EVM address as the Tron user of a withdrawal',
      fromTron(TRON_USDT_ADDRESS, STABLECOIN_ADDRESS, 10_000_000n, { user: USERS[0]!.address }),
      'INVALID_ADDRESS',
      /user/i,
    ],
    [
      'a Tron currency that is no TRC20 of the chain',
      fromTron(TRON_USERS.bob.address, STABLECOIN_ADDRESS, 10_000_000n),
      'UNSUPPORTED_CURRENCY',
      /originCurrency.*supported: TRX .*USDT/,
    ],
    [
      'an EVM token address as the Tron origin currency',
      fromTron(STABLECOIN_ADDRESS, STABLECOIN_ADDRESS, 10_000_000n),
      'INVALID_INPUT_CURRENCY',
      /currency/i,
    ],
    [
      'EIP-7702 authorizations for a Tron destination, whose fills carry none',
      toTron(STABLECOIN_ADDRESS, TRON_USDT_ADDRESS, 10_000_000n, {
        authorizationList: [
          { chainId: 0, address: USERS[1]!.address, nonce: 0, yParity: 0, r: '0x1', s: '0x1' },
        ],
      }),
      'UNSUPPORTED_EXECUTION_TYPE',
      /carry no account-code delegations, so authorizationList could not be executed there; remove it/,
    ],
    [
      'a T-address as the EVM recipient of a withdrawal',
      fromTron(TRON_USDT_ADDRESS, STABLECOIN_ADDRESS, 10_000_000n, { recipient: TRON_USERS.bob.address }),
      'INVALID_RECIPIENT',
      /recipient/i,
    ],
  ]
  for (const [name, body, code, message] of cases) {
    const res = await client.post('/quote/v2', body)
    t.equal(res.status, 400, `${name}: 400`)
    const answer = res.body as ErrorAnswer
    t.equal(answer.errorCode, code, `${name}: ${code} (${answer.message})`)
    t.match(answer.message, message, `${name}: the message names the field`)
  }
})

t.test('/transactions/index with an unknown Tron txID answers 404 TRANSACTION_NOT_FOUND', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post('/transactions/index', { chainId: String(TRON), txHash: 'ab'.repeat(32) })
  t.equal(res.status, 404, JSON.stringify(res.body))
  t.equal((res.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
})
