/**
 * The Tron devnet's fault powers on its simulator, seen through the node API as a client sees
 * them: forks of non-solid blocks, paused and interval production, evicted pool transactions, a
 * clock moved ahead.
 */
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  startTronDevnet,
  TRON_SOLID_CONFIRMATIONS,
  TRON_USERS,
  type TronTransactionJson,
  tronSignTransaction,
} from '../src/index.js'

const devnet = await startTronDevnet({ port: 0, blockIntervalMs: 0 })
t.teardown(() => devnet.stop())
const { faults } = devnet
const { alice, bob } = TRON_USERS

async function call(path: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${devnet.url}${path}`, { method: 'POST', body: JSON.stringify(body) })
  return (await response.json()) as Record<string, unknown>
}

/** A signed TRX transfer of `amount` sun from alice to `to`, broadcast; answers its id. */
async function send(to: string, amount: number): Promise<string> {
  const tx = (await call('/wallet/createtransaction', {
    owner_address: alice.address,
    to_address: to,
    amount,
    visible: true,
  })) as unknown as TronTransactionJson
  const answer = await call('/wallet/broadcasttransaction', tronSignTransaction(alice.privateKey, tx))
  if (answer.result !== true) throw new Error(`broadcast refused: ${JSON.stringify(answer)}`)
  return tx.txID
}
const info = (txId: string, solid = false) =>
  call(`/${solid ? 'walletsolidity' : 'wallet'}/gettransactioninfobyid`, { value: txId })
const nowBlock = async () =>
  (await call('/wallet/getnowblock')) as { blockID: string; block_header: { raw_data: { number: number } } }

t.equal(faults.vmType, 'tvm')

t.test('rollback removes the newest blocks; their transactions are undone and forgotten', async (t) => {
  const aliceBefore = devnet.trxBalance(alice.address)
  const bobBefore = devnet.trxBalance(bob.address)
  const head = await faults.head()
  const txId = await send(bob.address, 1_000_000)
  await faults.mine(1)
  t.equal((await info(txId)).blockNumber, Number(head) + 1, 'in a block')
  await faults.rollback(1)
  t.equal(await faults.head(), head, 'the head went back one block')
  t.same(await info(txId), {}, 'the node no longer knows it')
  t.equal(devnet.trxBalance(bob.address), bobBefore, 'the transfer is undone')
  t.equal(devnet.trxBalance(alice.address), aliceBefore, 'the fee is back too')
})

t.test('a fork (reorg) replaces the newest blocks at the same height, with other ids', async (t) => {
  const txId = await send(bob.address, 2_000_000)
  await faults.mine(1)
  const forked = await nowBlock()
  await faults.reorg(1)
  const replacing = await nowBlock()
  t.equal(replacing.block_header.raw_data.number, forked.block_header.raw_data.number, 'same height')
  t.not(replacing.blockID, forked.blockID, 'another block')
  t.same(await info(txId), {}, 'the transaction is gone')
  t.same(
    await call('/wallet/getblockbynum', { num: forked.block_header.raw_data.number }),
    await call('/wallet/getnowblock'),
    'the height now serves the replacing block',
  )
})

t.test('solid blocks never fork', async (t) => {
  await faults.mine(TRON_SOLID_CONFIRMATIONS + 1)
  await t.rejects(faults.rollback(TRON_SOLID_CONFIRMATIONS), RangeError)
  const txId = await send(bob.address, 3_000_000)
  await faults.mine(TRON_SOLID_CONFIRMATIONS)
  t.ok((await info(txId, true)).blockNumber, 'solid')
  await faults.reorg(TRON_SOLID_CONFIRMATIONS - 1)
  t.ok((await info(txId, true)).blockNumber, 'still there after the deepest fork allowed')
})

t.test('an evicted pool transaction never lands and is undone', async (t) => {
  const bobBefore = devnet.trxBalance(bob.address)
  const kept = await send(bob.address, 4_000_000)
  const dropped = await send(bob.address, 5_000_000)
  t.same(await faults.pool(), [kept, dropped])
  await faults.dropTransaction(dropped)
  t.same(await faults.pool(), [kept], 'evicted')
  t.same(await info(dropped), {}, 'unknown to the node')
  await faults.mine(1)
  t.ok((await info(kept)).blockNumber, 'the kept one is in a block')
  t.same(await info(dropped), {})
  t.equal(devnet.trxBalance(bob.address) - bobBefore, 4_000_000n, 'only the kept one paid')
})

t.test('paused production, interval production and resuming', async (t) => {
  await faults.intervalMining(30)
  const txId = await send(bob.address, 6_000_000)
  await waitFor('a block on the timer to take the transfer', async () => (await info(txId)).blockNumber)
  await faults.pauseMining()
  const paused = await send(bob.address, 7_000_000)
  const head = await faults.head()
  // The timer is off: only mine or resume produce blocks.
  t.equal((await info(paused)).blockNumber, undefined, 'waits in the pool')
  await faults.resumeMining()
  t.equal(await faults.head(), head + 1n, 'resuming produces a block now')
  t.ok((await info(paused)).blockNumber, 'with what waited')
})

t.test(
  'a clock moved ahead stamps the next blocks later: a transaction expires without waiting',
  async (t) => {
    const tx = (await call('/wallet/createtransaction', {
      owner_address: alice.address,
      to_address: bob.address,
      amount: 8_000_000,
      visible: true,
    })) as unknown as TronTransactionJson & { raw_data: { expiration: number } }
    const { expiration } = tx.raw_data
    const headTime = async () =>
      ((await call('/wallet/getnowblock')) as { block_header: { raw_data: { timestamp: number } } })
        .block_header.raw_data.timestamp
    t.ok((await headTime()) < expiration, 'not expired yet')
    await faults.advanceClock(expiration - (await headTime()))
    await faults.mine(1)
    t.ok((await headTime()) >= expiration, 'the new head is stamped at or past the expiration')
    const answer = await call('/wallet/broadcasttransaction', tronSignTransaction(alice.privateKey, tx))
    t.equal(answer.code, 'TRANSACTION_EXPIRATION_ERROR', 'the node refuses it as expired')
    await t.rejects(faults.advanceClock(0), RangeError, 'only forward')
  },
)
