/**
 * The Bitcoin devnet as a whole: the fixed cast (keys from public seeds, re-derived here with
 * node:crypto and @scure/btc-signer), the start-up funding, two devnets in one process, timed block
 * production and stopping.
 */
import { createECDH, createHash } from 'node:crypto'
import * as scure from '@scure/btc-signer'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_FUNDING,
  BITCOIN_MINER,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_NATIVE_DECIMALS,
  BITCOIN_SOLVER,
  BITCOIN_USER_LIST,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  type BitcoinDevAccount,
} from '../src/bitcoin/accounts.js'
import { bitcoinDevnetEnvironment, startBitcoinDevnet } from '../src/bitcoin/devnet.js'
import type { EsploraUtxo } from '../src/bitcoin/esplora.js'
import { Esplora, SCURE_REGTEST } from './fixtures/bitcoin-wallet.js'

const logs: string[] = []
const devnet = await startBitcoinDevnet({ log: (line) => logs.push(line) })
t.teardown(() => devnet.stop())
const esplora = new Esplora(devnet.url)

/** The address of `account` derived from its seed name with node:crypto and @scure/btc-signer only. */
function independentAddress(account: BitcoinDevAccount): string {
  const privateKey = createHash('sha256').update(`pontis-devnet-bitcoin/${account.name}`).digest()
  const ecdh = createECDH('secp256k1')
  ecdh.setPrivateKey(privateKey)
  const publicKey = new Uint8Array(ecdh.getPublicKey(null, 'compressed'))
  switch (account.kind) {
    case 'p2wpkh':
      return scure.p2wpkh(publicKey, SCURE_REGTEST).address!
    case 'p2pkh':
      return scure.p2pkh(publicKey, SCURE_REGTEST).address!
    case 'p2sh-p2wpkh':
      return scure.p2sh(scure.p2wpkh(publicKey, SCURE_REGTEST), SCURE_REGTEST).address!
    case 'p2tr':
      return scure.p2tr(publicKey.subarray(1), undefined, SCURE_REGTEST).address!
  }
}

t.test('the cast: public-seed keys, one user per script type, regtest addresses', async (t) => {
  t.equal(BITCOIN_DEVNET_CHAIN_ID, 8253038)
  t.equal(BITCOIN_NATIVE_CURRENCY_ID, 'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8')
  t.equal(BITCOIN_NATIVE_DECIMALS, 8)
  const prefixes = { p2wpkh: /^bcrt1q/, p2tr: /^bcrt1p/, 'p2sh-p2wpkh': /^2/, p2pkh: /^[mn]/ }
  const cast = [...BITCOIN_USER_LIST, BITCOIN_SOLVER, BITCOIN_VAULT, BITCOIN_MINER]
  for (const account of cast) {
    t.match(account.address, prefixes[account.kind], `${account.name} is a regtest ${account.kind} address`)
    t.equal(account.address, independentAddress(account), `${account.name} derives the same elsewhere`)
    t.equal(account.publicKey.length, 33)
    t.ok(Object.isFrozen(account))
  }
  t.same(
    BITCOIN_USER_LIST.map((user) => user.kind),
    ['p2wpkh', 'p2tr', 'p2sh-p2wpkh', 'p2pkh'],
  )
  t.equal(BITCOIN_USERS.p2tr.signer.publicKey.subarray(1).length, 32)
  t.same(
    Buffer.from(BITCOIN_USERS.p2tr.signer.publicKey.subarray(1)),
    Buffer.from(BITCOIN_USERS.p2tr.outputScript.subarray(2)),
    'the P2TR signer holds the tweaked output key',
  )
  t.equal(new Set(cast.map((account) => account.address)).size, cast.length, 'all distinct')
})

t.test('start-up funding: 3 × 0.5 BTC per user, 10 × 1 BTC to the solver, confirmed', async (t) => {
  t.equal(devnet.chain.height, 1, 'one funding block on top of genesis')
  const fundingBlock = devnet.chain.blockAt(1)!
  const expected: [BitcoinDevAccount, number, bigint][] = [
    ...BITCOIN_USER_LIST.map((user): [BitcoinDevAccount, number, bigint] => [
      user,
      BITCOIN_FUNDING.userOutputs,
      BITCOIN_FUNDING.userOutputSats,
    ]),
    [BITCOIN_SOLVER, BITCOIN_FUNDING.solverOutputs, BITCOIN_FUNDING.solverOutputSats],
  ]
  for (const [account, count, value] of expected) {
    const utxos = await esplora.json<EsploraUtxo[]>(`/address/${account.address}/utxo`)
    t.equal(utxos.length, count, `${account.name}: ${count} outputs`)
    for (const utxo of utxos) {
      t.equal(BigInt(utxo.value), value)
      t.same(utxo.status, {
        confirmed: true,
        block_height: 1,
        block_hash: fundingBlock.hash,
        block_time: fundingBlock.timestamp,
      })
    }
    const stats = await esplora.json<{ chain_stats: { funded_txo_sum: number } }>(
      `/address/${account.address}`,
    )
    t.equal(BigInt(stats.chain_stats.funded_txo_sum), BigInt(count) * value)
  }
  t.same(await esplora.json(`/address/${BITCOIN_VAULT.address}/utxo`), [], 'the vault starts empty')
  t.ok(logs.some((line) => line.includes('funded in block 1') && line.includes(BITCOIN_SOLVER.address)))
  t.ok(logs.some((line) => line.includes(devnet.url)))
  t.same(bitcoinDevnetEnvironment(devnet), { LOCAL_BITCOIN_ESPLORA_URL: devnet.url })
  t.match(devnet.url, /^http:\/\/127\.0\.0\.1:\d+$/)
})

t.test('handle: fund and mine', async (t) => {
  const before = devnet.chain.height
  const funded = devnet.fund(BITCOIN_VAULT.address, 12_345n)
  t.equal(funded.blockHeight, before + 1)
  t.equal(funded.value, 12_345n)
  t.same(await esplora.json(`/tx/${funded.txid}/outspends`), [
    { spent: false },
    { spent: false },
    { spent: false },
  ])
  const hashes = devnet.mine(3)
  t.equal(hashes.length, 3)
  t.equal(await esplora.text('/blocks/tip/height'), String(before + 4))
  t.throws(() => devnet.fund('bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8', 1n), /invalid address/)
  t.throws(() => devnet.fund(BITCOIN_VAULT.address, 0n), /invalid funding value/)
})

t.test('a second devnet in the same process is independent', async (t) => {
  const second = await startBitcoinDevnet()
  t.teardown(() => second.stop())
  t.not(second.port, devnet.port)
  t.equal(second.chain.height, 1)
  t.equal(second.chain.blockAt(0)!.hash, devnet.chain.blockAt(0)!.hash, 'same genesis')
  t.equal(
    second.chain.blockAt(1)!.txids[0],
    devnet.chain.blockAt(1)!.txids[0],
    'same (deterministic) funding transaction',
  )
  second.mine(5)
  t.equal(await new Esplora(second.url).text('/blocks/tip/height'), '6')
  t.not(await esplora.text('/blocks/tip/height'), '6')
})

t.test('blockIntervalMs mines on a timer until stopped', async (t) => {
  const timed = await startBitcoinDevnet({ blockIntervalMs: 20 })
  await waitFor('three blocks from the timer', () => timed.chain.height, { until: (height) => height >= 3 })
  await timed.stop()
  const height = timed.chain.height
  t.ok(height >= 3, `mined on the timer (height ${height})`)
  // Longer than the interval: a block timer still armed would be due before this one, so it would
  // have fired first. The timers' order decides, not the machine's speed.
  await new Promise((resolve) => setTimeout(resolve, 80))
  t.equal(timed.chain.height, height, 'no block after stop')
  await timed.stop()
  await t.rejects(fetch(`${timed.url}/blocks/tip/height`), 'the server is closed')
  await t.rejects(startBitcoinDevnet({ blockIntervalMs: 0 }), /invalid blockIntervalMs/)
})

t.test('a taken port is reported', async (t) => {
  await t.rejects(startBitcoinDevnet({ port: devnet.port }), /EADDRINUSE/)
})
