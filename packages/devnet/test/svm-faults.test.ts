/**
 * The SVM devnet's fault powers on a real LiteSVM ledger, seen through its JSON-RPC as a client
 * sees them: each one changes what the node answers the way the fault would on a live cluster.
 */
import { Keypair, LAMPORTS_PER_SOL, SystemProgram } from '@solana/web3.js'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import { svmFaultPowers } from '../src/svm/faults.js'
import { MAX_BLOCKHASH_AGE, startSvmRpcServer } from '../src/svm/rpc.js'
import { rpc, signedLegacy } from './fixtures/svm-rpc-client.js'

const payer = Keypair.generate()
const server = await startSvmRpcServer({ finalizedDepth: 2 })
t.teardown(() => server.stop())
const { ledger } = server
ledger.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL)
const faults = svmFaultPowers(ledger)

const balanceOf = async (address: string): Promise<number> =>
  (
    (await rpc(server.rpcUrl, 'getBalance', [address, { commitment: 'processed' }])).result as {
      value: number
    }
  ).value
const statusOf = async (signature: string): Promise<unknown> =>
  (
    (await rpc(server.rpcUrl, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }]))
      .result as { value: unknown[] }
  ).value[0]
const latest = async (): Promise<{ blockhash: string; lastValidBlockHeight: number }> =>
  (
    (await rpc(server.rpcUrl, 'getLatestBlockhash', [{ commitment: 'processed' }])).result as {
      value: { blockhash: string; lastValidBlockHeight: number }
    }
  ).value
/** Sends a transfer of `lamports` to a fresh account over RPC; answers its signature and the recipient. */
async function transfer(lamports: number, blockhash?: string): Promise<{ signature: string; to: string }> {
  const to = Keypair.generate().publicKey
  const wire = signedLegacy(payer, blockhash ?? (await latest()).blockhash, [
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }),
  ])
  const answer = await rpc(server.rpcUrl, 'sendTransaction', [
    wire.toString('base64'),
    { encoding: 'base64' },
  ])
  if (answer.error) throw new Error(answer.error.message)
  return { signature: answer.result as string, to: to.toBase58() }
}

t.equal(faults.vmType, 'svm')

t.test('rollback removes the newest slots, undoes their transactions and forgets them', async (t) => {
  const payerBefore = await balanceOf(payer.publicKey.toBase58())
  const head = await faults.head()
  const { signature, to } = await transfer(1_000_000)
  t.equal(await balanceOf(to), 1_000_000, 'landed')
  const landedBlockhash = ledger.block(ledger.slot)?.blockhash as string
  await faults.rollback(1)
  t.equal(await faults.head(), head, 'the head went back one slot')
  t.equal(await statusOf(signature), null, 'the signature is unknown again')
  t.equal(await balanceOf(to), 0, 'the recipient holds nothing')
  t.equal(await balanceOf(payer.publicKey.toBase58()), payerBefore, 'the payer got its lamports and fee back')
  t.equal(
    ((await rpc(server.rpcUrl, 'isBlockhashValid', [landedBlockhash])).result as { value: boolean }).value,
    false,
    "the rolled-back slot's blockhash is gone",
  )
  t.throws(() => ledger.rollback(ledger.slot + 1), RangeError, 'slot 0 stays')
})

t.test('a rolled-back transaction lands again when sent again (same bytes)', async (t) => {
  const { blockhash } = await latest()
  const to = Keypair.generate().publicKey
  const wire = signedLegacy(payer, blockhash, [
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 2_000_000 }),
  ]).toString('base64')
  const send = () => rpc(server.rpcUrl, 'sendTransaction', [wire, { encoding: 'base64' }])
  const signature = (await send()).result as string
  await faults.rollback(1)
  t.equal(await statusOf(signature), null)
  t.equal((await send()).result, signature, 'accepted again')
  t.not(await statusOf(signature), null, 'landed again')
  t.equal(await balanceOf(to.toBase58()), 2_000_000, 'paid once')
})

t.test('reorg replaces the newest slots by empty ones at the same height', async (t) => {
  const { signature, to } = await transfer(3_000_000)
  const head = await faults.head()
  await faults.reorg(1)
  t.equal(await faults.head(), head, 'same height')
  t.equal(await statusOf(signature), null, 'the transaction is gone')
  t.equal(await balanceOf(to), 0)
})

t.test('paused production keeps transactions waiting; dropping one evicts it', async (t) => {
  await faults.pauseMining()
  const head = await faults.head()
  const kept = await transfer(4_000_000)
  const dropped = await transfer(5_000_000)
  t.equal(await faults.head(), head, 'no slot while paused')
  t.same(await faults.waiting(), [kept.signature, dropped.signature], 'both wait')
  t.equal(await statusOf(kept.signature), null, 'not landed while paused')
  await faults.dropTransaction(dropped.signature)
  t.same(await faults.waiting(), [kept.signature], 'dropped from the mempool')
  await faults.mine(2)
  t.equal(await faults.head(), head + 2n, 'mine produces the slots asked for')
  t.not(await statusOf(kept.signature), null, 'the kept one landed')
  t.equal(await balanceOf(kept.to), 4_000_000)
  t.equal(await statusOf(dropped.signature), null, 'the dropped one never does')
  t.equal(await balanceOf(dropped.to), 0)
  await faults.resumeMining()
  const after = await transfer(6_000_000)
  t.not(await statusOf(after.signature), null, 'lands at once again')
})

t.test('expiring a blockhash makes it invalid and drops what waited on it', async (t) => {
  const { blockhash, lastValidBlockHeight } = await latest()
  await faults.pauseMining()
  t.teardown(() => faults.resumeMining())
  const stale = await transfer(7_000_000, blockhash)
  const head = await faults.expireBlockhash(blockhash)
  t.equal(head, BigInt(lastValidBlockHeight + 1), 'the block height is just past its last valid one')
  t.equal(head - BigInt(lastValidBlockHeight - MAX_BLOCKHASH_AGE), BigInt(MAX_BLOCKHASH_AGE + 1))
  t.equal(
    (
      (await rpc(server.rpcUrl, 'isBlockhashValid', [blockhash, { commitment: 'processed' }])).result as {
        value: boolean
      }
    ).value,
    false,
    'the node calls it invalid',
  )
  t.same(await faults.waiting(), [], 'the transaction that used it was dropped')
  await faults.resumeMining()
  t.equal(await statusOf(stale.signature), null, 'and never lands')
  const answer = await rpc(server.rpcUrl, 'sendTransaction', [
    signedLegacy(payer, blockhash, [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: payer.publicKey, lamports: 1 }),
    ]).toString('base64'),
    { encoding: 'base64' },
  ])
  t.match(answer.error?.message, /Blockhash not found/i, 'a new transaction with it is refused')
})

t.test('interval production lands waiting transactions one slot per tick', async (t) => {
  await faults.intervalMining(50)
  t.teardown(() => faults.intervalMining(0))
  const sent = await transfer(8_000_000)
  t.equal(ledger.paused, true, 'transactions wait for the next tick')
  await waitFor('the transfer to land on a tick', () => statusOf(sent.signature))
  t.equal(await balanceOf(sent.to), 8_000_000, 'landed on a tick')
  await faults.intervalMining(0)
  t.equal(ledger.paused, false, 'one slot per transaction again')
})
