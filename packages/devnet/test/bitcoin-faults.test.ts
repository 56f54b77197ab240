/**
 * The Bitcoin devnet's fault powers, seen through its Esplora API as a client sees them: rollbacks
 * and reorganisations remove blocks and their transactions, a dropped transaction (and what spends
 * it) leaves the mempool, a replacement paying more takes its place (full RBF, BIP125 fee rules),
 * and a paused block timer mines nothing.
 */
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import { BITCOIN_USERS, BITCOIN_VAULT } from '../src/bitcoin/accounts.js'
import { startBitcoinDevnet } from '../src/bitcoin/devnet.js'
import { type Coin, Esplora, signWithBitcoinjs, txidOf } from './fixtures/bitcoin-wallet.js'

const devnet = await startBitcoinDevnet()
t.teardown(() => devnet.stop())
const esplora = new Esplora(devnet.url)
const previousHex = (txid: string) => esplora.text(`/tx/${txid}/hex`)
const wpkh = BITCOIN_USERS.p2wpkh
const faults = devnet.faults

function freshCoin(value = 1_000_000n): Coin {
  const funded = devnet.fund(wpkh.address, value)
  return { txid: funded.txid, vout: funded.vout, value }
}

/** Pays the vault all of `coin` but `fee`. */
const payVault = (coin: Coin, fee: bigint) =>
  signWithBitcoinjs(wpkh, [coin], [{ address: BITCOIN_VAULT.address, value: coin.value - fee }], previousHex)

const txStatus = (txid: string) => esplora.request('GET', `/tx/${txid}/status`)
const tip = async () => BigInt(await esplora.text('/blocks/tip/height'))
const vaultUtxos = () => esplora.json<Array<{ txid: string }>>(`/address/${BITCOIN_VAULT.address}/utxo`)

t.equal(faults.vmType, 'bvm')

t.test('rollback removes the newest blocks and their transactions', async (t) => {
  const hex = await payVault(freshCoin(), 2_000n)
  const txid = (await esplora.broadcast(hex)).body
  const [mined] = devnet.mine(1)
  t.equal((await txStatus(txid)).status, 200, 'mined')
  const head = await faults.head()
  t.equal(head, await tip())
  await faults.rollback(1)
  t.equal(await tip(), head - 1n, 'the tip went back one block')
  t.equal((await txStatus(txid)).status, 404, 'the transaction is gone, not back in the mempool')
  t.equal((await esplora.request('GET', `/block/${mined}`)).status, 404, 'the block is gone')
  t.notOk(
    (await vaultUtxos()).some((utxo) => utxo.txid === txid),
    'its output is no longer spendable',
  )
  t.throws(() => devnet.chain.rollback(devnet.chain.height + 1), RangeError, 'the genesis block stays')
})

t.test('reorg replaces the newest blocks at the same height, with other hashes', async (t) => {
  const coin = freshCoin()
  const txid = (await esplora.broadcast(await payVault(coin, 2_000n))).body
  const [old] = devnet.mine(1)
  const head = await faults.head()
  const below = await esplora.text(`/block-height/${head - 1n}`)
  await faults.reorg(2)
  t.equal(await faults.head(), head, 'same height')
  t.not(await esplora.text('/blocks/tip/hash'), old, 'another block at the tip')
  t.not(await esplora.text(`/block-height/${head - 1n}`), below, 'and below it')
  t.equal((await txStatus(txid)).status, 404, 'the transaction is gone')
  t.equal((await txStatus(coin.txid)).status, 404, 'so is the funding block reorganised away')
  devnet.mine(1)
  t.equal(await faults.head(), head + 1n, 'the chain goes on from the new blocks')
})

t.test('a dropped transaction leaves the mempool with its descendants; its coin is free again', async (t) => {
  const coin = freshCoin()
  const hex = await payVault(coin, 2_000n)
  const txid = (await esplora.broadcast(hex)).body
  t.equal((await txStatus(txid)).status, 200)
  const childHex = await signWithBitcoinjs(
    BITCOIN_VAULT,
    [{ txid, vout: 0, value: coin.value - 2_000n }],
    [{ address: wpkh.address, value: coin.value - 4_000n }],
    previousHex,
  )
  const child = (await esplora.broadcast(childHex)).body
  t.equal((await txStatus(child)).status, 200, 'a child spends it in the mempool')
  await faults.dropTransaction(txid)
  t.equal((await txStatus(txid)).status, 404, 'not found any more')
  t.equal((await txStatus(child)).status, 404, 'nor is its child')
  t.notOk((await esplora.json<string[]>('/mempool/txids')).includes(txid), 'not in the mempool')
  await t.rejects(faults.dropTransaction(txid), /not in the mempool/)
  // The same coin can be spent again, by the same bytes or another transaction.
  t.equal((await esplora.broadcast(hex)).status, 200, 'the same bytes are accepted again')
  await faults.dropTransaction(txid)
  const other = await payVault(coin, 3_000n)
  t.equal((await esplora.broadcast(other)).status, 200, 'another spend of the coin is accepted')
  devnet.mine(1)
  t.equal((await txStatus(txidOf(other))).status, 200)
})

t.test('a replacement paying more takes the place of the transaction it conflicts with', async (t) => {
  const coin = freshCoin()
  const first = await payVault(coin, 2_000n)
  const firstId = (await esplora.broadcast(first)).body
  const same = await payVault(coin, 2_000n + 50n)
  const tooLittle = await esplora.broadcast(same)
  t.equal(tooLittle.status, 400, 'a replacement must add at least its own relay fee')
  t.match(tooLittle.body, /not enough additional fees to relay/)
  const replacement = await payVault(coin, 4_000n)
  const answer = await esplora.broadcast(replacement)
  t.equal(answer.status, 200, answer.body)
  t.equal(answer.body, txidOf(replacement))
  t.equal((await txStatus(firstId)).status, 404, 'the replaced one is gone')
  t.equal(
    devnet.chain.spender(coin.txid, coin.vout)?.txid,
    answer.body,
    'the coin is spent by the replacement',
  )
  const older = await esplora.broadcast(first)
  t.equal(older.status, 400, 'the replaced one cannot come back paying less')
  t.match(older.body, /insufficient fee, rejecting replacement/)
  devnet.mine(1)
  t.equal((await txStatus(answer.body)).status, 200)
})

t.test('paused mining holds the block timer back; resuming mines what waited', async (t) => {
  const timed = await startBitcoinDevnet({ blockIntervalMs: 50 })
  t.teardown(() => timed.stop())
  await timed.faults.pauseMining()
  const paused = await timed.faults.head()
  const coin = timed.fund(wpkh.address, 1_000_000n)
  const hex = await signWithBitcoinjs(
    wpkh,
    [{ txid: coin.txid, vout: coin.vout, value: coin.value }],
    [{ address: BITCOIN_VAULT.address, value: coin.value - 2_000n }],
    (txid) => new Esplora(timed.url).text(`/tx/${txid}/hex`),
  )
  const txid = timed.chain.submit(hex)
  // The timer fires several times meanwhile; only the funding block was added.
  const started = Date.now()
  await waitFor('a few timer periods', async () => Date.now() - started > 300)
  t.equal(await timed.faults.head(), paused + 1n, 'no block while paused')
  t.notOk(timed.chain.transaction(txid)?.block, 'still in the mempool')
  await timed.faults.resumeMining()
  t.ok(timed.chain.transaction(txid)?.block, 'mined on resume')
  await timed.faults.mine(2)
  t.equal(await timed.faults.head(), paused + 4n)
})
