import { PontisError, type ScannedDeposit } from '@pontis/core/plugin'
import * as btc from '@scure/btc-signer'
import t from 'tap'
import { BITCOIN_NATIVE_CURRENCY_ID, type BitcoinPluginConfig } from '../src/index.js'
import {
  BITCOIN_SOLVER,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  type BitcoinDevAccount,
  bitcoinAdapter,
  psbtOf,
  REGTEST,
  SOLVER_KEY,
  signAsWallet,
  startDevnet,
} from './fixtures/bitcoin-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
// High-value threshold: 0.1 BTC (the default).
const adapter = await bitcoinAdapter(devnet.url)
const reading = adapter.reading

let nextId = 1
const newId = () => `0x${(0xd000 + nextId++).toString(16).padStart(64, '0')}`

/** A deposit from `user` through the plugin's own PSBT, signed by the wallet and broadcast. */
async function deposit(user: BitcoinDevAccount, amount: bigint, requestId = newId()): Promise<string> {
  const steps = await adapter.quoting.buildDepositSteps({
    requestId,
    depositor: user.address,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount,
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute',
    nowSeconds: 0,
  })
  const signed = signAsWallet(psbtOf(steps), user)
  await adapter.filling.broadcast(signed.hex)
  return signed.id
}

async function stats(address: string) {
  return (await (await fetch(`${devnet.url}/address/${address}`)).json()) as {
    chain_stats: { funded_txo_sum: number; spent_txo_sum: number }
    mempool_stats: { funded_txo_sum: number; spent_txo_sum: number }
  }
}

let firstDeposit = ''

t.test('a deposit scan starts at the head and sees mempool deposits at once', async (t) => {
  const first = await reading.scanDeposits?.(undefined)
  const tip = Number(await (await fetch(`${devnet.url}/blocks/tip/height`)).text())
  t.same(first, { deposits: [], cursor: JSON.stringify({ height: tip }), caughtUp: true })

  const requestId = newId()
  const txid = await deposit(BITCOIN_USERS.p2tr, 2_000_000n, requestId)
  firstDeposit = txid
  const pending = await reading.scanDeposits?.(first?.cursor)
  t.match(pending?.deposits, [
    { transactionId: txid, depositId: requestId, confirmations: 0, amount: 2_000_000n },
  ])
  t.equal(pending?.deposits[0]?.blockNumber, undefined)
  t.equal(pending?.cursor, first?.cursor, 'nothing mined: the cursor stays')

  devnet.mine(1)
  const mined = await reading.scanDeposits?.(pending?.cursor)
  t.match(mined?.deposits, [{ transactionId: txid, confirmations: 1, blockNumber: BigInt(tip + 1) }])
  t.equal(mined?.cursor, JSON.stringify({ height: tip + 1 }))
  t.equal(mined?.caughtUp, true)
  await t.rejects(reading.scanDeposits?.('{"nope":1}') as Promise<unknown>, { code: 'INVALID_REQUEST' })
})

t.test('a backlog larger than one scan step is walked page by page', async (t) => {
  const scanner = await bitcoinAdapter(devnet.url, { maxScanPages: 1 })
  const start = await scanner.reading.scanDeposits?.(undefined)
  // 30 tagged payments to the vault (the solver paying it looks exactly like a deposit).
  const expected = new Set<string>()
  for (let index = 0; index < 30; index++) {
    const signed = await adapter.filling.signFill(
      {
        orderId: newId(),
        recipient: BITCOIN_VAULT.address,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: 100_000n,
        calls: [],
        topupNativeAmount: 0n,
      },
      { solverKey: SOLVER_KEY },
    )
    await adapter.filling.broadcast(signed.raw)
    expected.add(signed.transactionId)
    // Stay below the mempool's 25-ancestor limit on the solver's change chain.
    if (index % 10 === 9) devnet.mine(1)
  }
  const found: ScannedDeposit[] = []
  const first = await scanner.reading.scanDeposits?.(start?.cursor)
  t.equal(first?.caughtUp, false, 'one page of 25 does not reach the previous head')
  t.equal(first?.deposits.length, 25)
  found.push(...(first?.deposits ?? []))
  const second = await scanner.reading.scanDeposits?.(first?.cursor)
  t.equal(second?.caughtUp, true)
  found.push(...(second?.deposits ?? []))
  const fresh = found.filter((one) => one.transactionId !== firstDeposit)
  t.same(new Set(fresh.map((one) => one.transactionId)), expected)
  t.equal(fresh.length, 30, 'each once')
  t.ok(fresh.every((one) => one.depositor === BITCOIN_SOLVER.address && one.confirmations >= 1))
  // The newest blocks below the previous head are read again (reorg safety): re-reports are harmless.
  t.ok(found.length - fresh.length <= 1)
})

t.test('readDeposits: one fact per paying output; high value waits for 2 blocks', async (t) => {
  const requestId = newId()
  const txid = await deposit(BITCOIN_USERS.p2wpkh, 20_000_000n, requestId)
  const pending = await reading.readDeposits(txid)
  t.match(pending, { state: 'pending', confirmations: 0, final: false, facts: [{ depositId: requestId }] })
  devnet.mine(1)
  const one = await reading.readDeposits(txid)
  t.match(one, { state: 'success', confirmations: 1, final: false })
  t.equal(typeof one.blockNumber, 'bigint')
  devnet.mine(1)
  t.match(await reading.readDeposits(txid), { state: 'success', confirmations: 2, final: true })
  // Without a threshold for the currency, nothing is high value: one block is enough.
  const strict = await bitcoinAdapter(devnet.url, { highValueThreshold: {}, highValueConfirmations: 3 })
  t.match(await strict.reading.readDeposits(txid), { final: true })
})

t.test('a payment to the vault without a 32-byte tag is no deposit', async (t) => {
  const user = BITCOIN_USERS.p2wpkh
  const utxos = (await (await fetch(`${devnet.url}/address/${user.address}/utxo`)).json()) as Array<{
    txid: string
    vout: number
    value: number
  }>
  const coin = utxos.sort((a, b) => b.value - a.value)[0] as { txid: string; vout: number; value: number }
  const transaction = new btc.Transaction({ allowUnknownOutputs: true })
  transaction.addInput({
    txid: coin.txid,
    index: coin.vout,
    witnessUtxo: { script: user.outputScript, amount: BigInt(coin.value) },
  })
  transaction.addOutputAddress(BITCOIN_VAULT.address, 1_000_000n, REGTEST)
  // OP_RETURN pushing 31 bytes: data, but not an id.
  transaction.addOutput({ script: Uint8Array.from([0x6a, 31, ...new Uint8Array(31).fill(1)]), amount: 0n })
  transaction.addOutputAddress(user.address, BigInt(coin.value) - 1_000_000n - 5_000n, REGTEST)
  transaction.sign(user.keypair.privateKey as Uint8Array)
  transaction.finalize()
  await adapter.filling.broadcast(transaction.hex)
  const facts = await reading.readDeposits(transaction.id)
  t.equal(facts.state, 'pending')
  t.same(facts.facts, [])
  t.same((await reading.readFills?.(transaction.id))?.facts, [])
  // Nor is an untagged funding of the vault.
  const funded = devnet.fund(BITCOIN_VAULT.address, 1_000_000n)
  t.match(await reading.readDeposits(funded.txid), { state: 'success', facts: [] })

  t.match(await reading.readDeposits('ab'.repeat(32)), { state: 'not_found', final: false, facts: [] })
  await t.rejects(reading.readDeposits('not-a-txid'), { code: 'INVALID_REQUEST' })
})

t.test(
  'balance: confirmed funded − confirmed spent − mempool spent; mempool funding is not counted',
  async (t) => {
    const payerRequest = newId()
    const payer = (await adapter.quoting.createDepositAddress?.(payerRequest)) as string
    const payee = (await adapter.quoting.createDepositAddress?.(newId())) as string
    devnet.fund(payer, 1_000_000n)
    t.equal(await reading.readBalance(payer, BITCOIN_NATIVE_CURRENCY_ID), 1_000_000n)
    t.equal(await reading.readBalance(payee, BITCOIN_NATIVE_CURRENCY_ID), 0n)

    const signed = await adapter.filling.signRefund(
      {
        refundId: newId(),
        source: { kind: 'depositAddress', requestId: payerRequest },
        recipient: payee,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: 1_000_000n,
      },
      { solverKey: SOLVER_KEY },
    )
    await adapter.filling.broadcast(signed.raw)
    const [payerStats, payeeStats] = await Promise.all([stats(payer), stats(payee)])
    t.equal(payerStats.mempool_stats.spent_txo_sum, 1_000_000, 'the spend is in the mempool')
    t.equal(payeeStats.mempool_stats.funded_txo_sum, Number(signed.amount), 'so is the payment')
    t.equal(await reading.readBalance(payer, BITCOIN_NATIVE_CURRENCY_ID), 0n, 'spent at once')
    t.equal(await reading.readBalance(payee, BITCOIN_NATIVE_CURRENCY_ID), 0n, 'received only once mined')
    devnet.mine(1)
    t.equal(await reading.readBalance(payee, BITCOIN_NATIVE_CURRENCY_ID), signed.amount)

    await t.rejects(reading.readBalance(payee, '0x0000000000000000000000000000000000000000'), {
      code: 'UNSUPPORTED_CURRENCY',
    })
    await t.rejects(
      reading.readBalance('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', BITCOIN_NATIVE_CURRENCY_ID),
      PontisError,
    )
  },
)

t.test('an unreachable Esplora is the transient RPC_HTTP_ERROR, after trying every URL', async (t) => {
  const dead = await bitcoinAdapter('http://127.0.0.1:9')
  const error = await dead.reading
    .readBalance(BITCOIN_VAULT.address, BITCOIN_NATIVE_CURRENCY_ID)
    .catch((caught) => caught)
  t.equal((error as PontisError).code, 'RPC_HTTP_ERROR')
  t.equal((error as PontisError).retryable, true)
  // With a fallback, the second URL answers.
  const { bitcoinEntry } = await import('./fixtures/bitcoin-devnet.js')
  const { default: plugin } = await import('../src/index.js')
  const entry = bitcoinEntry('http://127.0.0.1:9')
  const withFallback = await plugin.createAdapter(
    { ...entry, rpc: { ...entry.rpc, fallbackUrls: [devnet.url] } },
    { logger: (await import('@pontis/core')).silentLogger, environment: 'local' },
  )
  t.equal(
    typeof (await withFallback.reading?.readBalance(BITCOIN_VAULT.address, BITCOIN_NATIVE_CURRENCY_ID)),
    'bigint',
  )
})

t.test('fee rate: the configured target, else the nearest faster one, rounded up and bounded', async (t) => {
  const rateOf = async (rates: Record<string, number>, options: Partial<BitcoinPluginConfig> = {}) => {
    devnet.chain.setFeeRates(rates)
    const priced = await bitcoinAdapter(devnet.url, options)
    const cost = await priced.quoting.estimateFillCost({
      orderId: newId(),
      payer: BITCOIN_SOLVER.address,
      recipient: BITCOIN_VAULT.address,
      currencyId: BITCOIN_NATIVE_CURRENCY_ID,
      amount: 1_000_000n,
      calls: [],
      topupNativeAmount: 0n,
    })
    return cost.unitPrice
  }
  t.equal(await rateOf({ '1': 20, '2': 7.2, '6': 3 }), 8n, 'target 2, rounded up')
  t.equal(await rateOf({ '1': 20, '3': 4 }), 20n, 'no 2: the faster 1')
  t.equal(await rateOf({ '6': 3, '144': 1 }), 3n, 'nothing faster: the fastest there is')
  t.equal(await rateOf({}), 1n, 'no estimates (regtest): the minimum')
  t.equal(await rateOf({}, { minFeeRate: 2.5 }), 3n)
  t.equal(await rateOf({ '1': 5000, '2': 4000 }, { maxFeeRate: 300 }), 300n, 'capped')
  t.equal(await rateOf({ '1': 20, '2': 7 }, { feeTargetBlocks: 1 }), 20n)
})
