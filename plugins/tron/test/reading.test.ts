/**
 * Tron reading on the devnet: deposits (TRX and TRC20) read back as facts with confirmations and
 * finality, reverted and untagged transactions move nothing, payouts, balances.
 */
import t from 'tap'
import { TRON_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  idOf,
  nodeCall,
  signAndBroadcast,
  startDevnet,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  transactionOf,
  tronAdapter,
} from './fixtures/tron-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await tronAdapter(devnet.url)
const { alice, bob } = TRON_USERS

async function deposit(from: typeof alice, currencyId: string, amount: bigint, n: number): Promise<string> {
  const steps = await adapter.quoting.buildDepositSteps({
    requestId: idOf(n),
    depositor: from.address,
    currencyId,
    amount,
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute',
    nowSeconds: 0,
  })
  const transaction = transactionOf(steps)
  const reply = await signAndBroadcast(devnet, from.privateKey, transaction)
  if (reply.result !== true) throw new Error(JSON.stringify(reply))
  return transaction.txID
}

t.test('a TRX deposit: pending until in a block, then success with confirmations and finality', async (t) => {
  const txId = await deposit(alice, TRON_NATIVE_CURRENCY_ID, 7_000_000n, 1)
  t.same(
    await adapter.reading.readDeposits(txId),
    {
      transactionId: txId,
      state: 'pending',
      final: false,
      facts: [
        {
          index: 0,
          depository: TRON_VAULT.address,
          depositId: idOf(1),
          depositor: alice.address,
          currencyId: TRON_NATIVE_CURRENCY_ID,
          amount: 7_000_000n,
        },
      ],
    },
    'accepted, not mined: pending with its facts and no confirmations',
  )
  t.notOk(adapter.finality.showsUnconfirmedDeposits, 'no mempool semantics: the indexer waits for a block')
  const [block] = devnet.mine(1)
  const read = await adapter.reading.readDeposits(txId)
  t.equal(read.state, 'success')
  t.equal(read.confirmations, 1)
  t.equal(read.blockNumber, BigInt(block?.number ?? -1))
  t.equal(read.final, false)
  t.same(read.facts, [
    {
      index: 0,
      depository: TRON_VAULT.address,
      depositId: idOf(1),
      depositor: alice.address,
      currencyId: TRON_NATIVE_CURRENCY_ID,
      amount: 7_000_000n,
    },
  ])
  devnet.mine(17)
  t.equal((await adapter.reading.readDeposits(txId)).final, false, '18 confirmations')
  devnet.mine(1)
  const solid = await adapter.reading.readDeposits(`0x${txId.toUpperCase()}`)
  t.equal(solid.confirmations, 19)
  t.equal(solid.final, true, '19 confirmations make it final')
})

t.test('a TRC20 deposit reads with the token as currency; a reverted one moves nothing', async (t) => {
  const txId = await deposit(bob, TRON_USDT_ADDRESS, 2_000_000n, 2)
  const pending = await adapter.reading.readDeposits(txId)
  t.equal(pending.state, 'pending')
  t.equal(pending.confirmations, undefined)
  t.equal(pending.blockNumber, undefined)
  t.same(
    pending.facts.map((fact) => [fact.currencyId, fact.amount, fact.depositId]),
    [[TRON_USDT_ADDRESS, 2_000_000n, idOf(2)]],
    'the TRC20 deposit it asks for',
  )
  devnet.mine(1)
  const read = await adapter.reading.readDeposits(txId)
  t.equal(read.state, 'success')
  t.same(read.facts, [
    {
      index: 0,
      depository: TRON_VAULT.address,
      depositId: idOf(2),
      depositor: bob.address,
      currencyId: TRON_USDT_ADDRESS,
      amount: 2_000_000n,
    },
  ])
  const reverted = await deposit(bob, TRON_USDT_ADDRESS, devnet.usdtBalance(bob.address) + 1n, 3)
  devnet.mine(1)
  const revertedRead = await adapter.reading.readDeposits(reverted)
  t.equal(revertedRead.state, 'reverted')
  t.same(revertedRead.facts, [])
})

t.test('transfers that are no deposits: untagged, or not to the vault', async (t) => {
  const untagged = (await nodeCall(devnet, '/wallet/createtransaction', {
    owner_address: alice.address,
    to_address: TRON_VAULT.address,
    amount: 1000,
    visible: true,
  })) as unknown as Parameters<typeof signAndBroadcast>[2]
  await signAndBroadcast(devnet, alice.privateKey, untagged)
  const elsewhere = (await nodeCall(devnet, '/wallet/createtransaction', {
    owner_address: alice.address,
    to_address: bob.address,
    amount: 1000,
    extra_data: idOf(4).slice(2),
    visible: true,
  })) as unknown as Parameters<typeof signAndBroadcast>[2]
  await signAndBroadcast(devnet, alice.privateKey, elsewhere)
  t.same(
    await adapter.reading.readDeposits(untagged.txID),
    { transactionId: untagged.txID, state: 'pending', final: false, facts: [] },
    'pending and no deposit',
  )
  const pendingFill = await adapter.reading.readFills?.(elsewhere.txID)
  t.equal(pendingFill?.state, 'pending', 'a payout not in a block yet is pending')
  t.equal(pendingFill?.final, false)
  t.equal(pendingFill?.facts[0]?.orderId, idOf(4))
  t.equal((await adapter.reading.readRefunds?.(elsewhere.txID))?.state, 'pending')
  devnet.mine(1)
  const untaggedRead = await adapter.reading.readDeposits(untagged.txID)
  t.equal(untaggedRead.state, 'success')
  t.same(untaggedRead.facts, [])
  t.same((await adapter.reading.readDeposits(elsewhere.txID)).facts, [], 'tagged but not to the vault')
  const payout = await adapter.reading.readFills?.(elsewhere.txID)
  t.same(
    payout?.facts,
    [
      {
        index: 0,
        orderId: idOf(4),
        recipient: bob.address,
        currencyId: TRON_NATIVE_CURRENCY_ID,
        amount: 1000n,
      },
    ],
    'a tagged payment is a payout',
  )
  t.same((await adapter.reading.readRefunds?.(elsewhere.txID))?.facts, payout?.facts)
})

t.test(
  'a TRC20 deposit whose address word carries the 41 prefix (as some wallets encode it) reads',
  async (t) => {
    const to20 = TRON_VAULT.hexAddress.slice(2)
    const parameter = `${'0'.repeat(22)}41${to20}${4_000n.toString(16).padStart(64, '0')}${idOf(9).slice(2)}`
    const answer = await nodeCall(devnet, '/wallet/triggersmartcontract', {
      owner_address: alice.address,
      contract_address: TRON_USDT_ADDRESS,
      function_selector: 'transfer(address,uint256)',
      parameter,
      fee_limit: 100_000_000,
      visible: true,
    })
    const transaction = answer.transaction as Parameters<typeof signAndBroadcast>[2]
    t.equal((await signAndBroadcast(devnet, alice.privateKey, transaction)).result, true)
    devnet.mine(1)
    t.same((await adapter.reading.readDeposits(transaction.txID)).facts, [
      {
        index: 0,
        depository: TRON_VAULT.address,
        depositId: idOf(9),
        depositor: alice.address,
        currencyId: TRON_USDT_ADDRESS,
        amount: 4_000n,
      },
    ])
  },
)

t.test('unknown and malformed ids', async (t) => {
  t.equal((await adapter.reading.readDeposits('cd'.repeat(32))).state, 'not_found')
  await t.rejects(adapter.reading.readDeposits('nope'), { code: 'INVALID_REQUEST' })
})

t.test('balances', async (t) => {
  t.equal(
    await adapter.reading.readBalance(alice.address, TRON_NATIVE_CURRENCY_ID),
    devnet.trxBalance(alice.address),
  )
  t.equal(
    await adapter.reading.readBalance(alice.hexAddress, TRON_USDT_ADDRESS),
    devnet.usdtBalance(alice.address),
  )
  t.equal(
    await adapter.reading.readBalance('TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', TRON_NATIVE_CURRENCY_ID),
    0n,
    'no account',
  )
  await t.rejects(adapter.reading.readBalance(alice.address, bob.address), { code: 'UNSUPPORTED_CURRENCY' })
})
