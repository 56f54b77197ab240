/**
 * The Bitcoin devnet's Esplora API against the Esplora documentation: the shapes of transactions,
 * statuses, UTXOs, address statistics (chain and mempool sums, exactly), histories and their paging,
 * outspends, blocks (real, parseable blocks), fee estimates, the `/dev/*` extensions and the errors.
 */
import { Block, opcodes, payments, script } from 'bitcoinjs-lib'
import t from 'tap'
import { BITCOIN_MINER, BITCOIN_USERS, BITCOIN_VAULT, bitcoinDevnetKeypair } from '../src/bitcoin/accounts.js'
import { startBitcoinDevnet } from '../src/bitcoin/devnet.js'
import type { EsploraBlock, EsploraTx, EsploraUtxo } from '../src/bitcoin/esplora.js'
import { type Coin, Esplora, signWithBitcoinjs } from './fixtures/bitcoin-wallet.js'

const FEE_RATES = { '1': 12.5, '2': 9, '3': 7, '6': 3, '144': 1.01 }
const devnet = await startBitcoinDevnet({ feeRates: FEE_RATES })
t.teardown(() => devnet.stop())
const esplora = new Esplora(devnet.url)
const previousHex = (txid: string) => esplora.text(`/tx/${txid}/hex`)
const wpkh = BITCOIN_USERS.p2wpkh

/** The real regtest genesis block. */
const GENESIS_HASH = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206'
const TX_KEYS = ['fee', 'locktime', 'size', 'status', 'txid', 'version', 'vin', 'vout', 'weight']
const STATUS_KEYS = ['block_hash', 'block_height', 'block_time', 'confirmed']

/** A fresh P2WPKH address (its own key) so its statistics start from zero. */
function freshAccount(name: string) {
  const keypair = bitcoinDevnetKeypair(`test/${name}`)
  const payment = payments.p2wpkh({ pubkey: keypair.publicKey, network: keypair.network })
  return {
    ...wpkh,
    name: `test/${name}`,
    keypair,
    signer: keypair,
    publicKey: keypair.publicKey,
    address: payment.address!,
    outputScript: payment.output!,
  }
}

t.test('tip and blocks: the chain starts at the regtest genesis block', async (t) => {
  const height = await esplora.request('GET', '/blocks/tip/height')
  t.equal(height.contentType, 'text/plain')
  t.equal(height.body, String(devnet.chain.height))
  t.equal(await esplora.text('/blocks/tip/hash'), devnet.chain.tip.hash)
  t.equal(await esplora.text('/block-height/0'), GENESIS_HASH)

  const genesis = await esplora.json<EsploraBlock>(`/block/${GENESIS_HASH}`)
  t.same(genesis, {
    id: GENESIS_HASH,
    height: 0,
    version: 1,
    timestamp: 1296688602,
    tx_count: 1,
    size: 285,
    weight: 1140,
    merkle_root: '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b',
    previousblockhash: null,
    mediantime: 1296688602,
    nonce: 2,
    bits: 0x207fffff,
    // bitcoind prints 4.656542373906925e-10 (16 digits); electrs the shortest round-trip text.
    difficulty: 4.6565423739069247e-10,
  })
  const funding = await esplora.json<EsploraBlock>(`/block/${await esplora.text('/block-height/1')}`)
  t.equal(funding.previousblockhash, GENESIS_HASH)
  t.equal(funding.height, 1)
  t.same(Object.keys(funding).sort(), Object.keys(genesis).sort())
})

t.test('blocks are real: merkle root, witness commitment, proof of work, BIP34 height', async (t) => {
  const user = BITCOIN_USERS.p2tr
  const funded = devnet.fund(user.address, 500_000n)
  const coin = { txid: funded.txid, vout: 0, value: 500_000n }
  const hex = await signWithBitcoinjs(user, [coin], [{ address: wpkh.address, value: 490_000n }], previousHex)
  const txid = (await esplora.broadcast(hex)).body
  const [hash] = devnet.mine(1)

  const raw = await esplora.request('GET', `/block/${hash}/raw`)
  t.equal(raw.contentType, 'application/octet-stream')
  const response = await fetch(`${devnet.url}/block/${hash}/raw`)
  const block = Block.fromBuffer(new Uint8Array(await response.arrayBuffer()))
  t.equal(block.getId(), hash)
  t.ok(block.checkTxRoots(), 'merkle root and witness commitment match the transactions')
  t.ok(block.checkProofOfWork())
  t.equal(await esplora.text(`/block/${hash}/header`), block.toHex(true))
  const coinbase = block.transactions![0]!
  t.ok(coinbase.isCoinbase())
  const [heightPush] = script.decompile(coinbase.ins[0]!.script)!
  // Heights 1 to 16 are pushed as OP_1…OP_16, higher ones as minimal script numbers.
  const height =
    typeof heightPush === 'number' ? heightPush - opcodes.OP_1 + 1 : script.number.decode(heightPush!)
  t.equal(height, devnet.chain.height, 'BIP34 height')
  t.same(await esplora.json(`/block/${hash}/txids`), [coinbase.getId(), txid])
  t.equal(await esplora.text(`/block/${hash}/txid/1`), txid)

  const info = await esplora.json<EsploraBlock>(`/block/${hash}`)
  t.equal(info.tx_count, 2)
  t.equal(info.size, block.byteLength())
  t.equal(info.weight, block.weight())
  t.equal(info.merkle_root, Buffer.from(block.merkleRoot!).reverse().toString('hex'))
  t.ok(info.timestamp > info.mediantime - 1 && info.mediantime >= 1296688602)

  const txs = await esplora.json<EsploraTx[]>(`/block/${hash}/txs`)
  t.same(
    txs.map((tx) => tx.txid),
    [coinbase.getId(), txid],
  )
  t.notOk('status' in txs[0]!, 'block transaction lists leave the status out')
  t.same(await esplora.json(`/block/${hash}/status`), { in_best_chain: true, height: info.height })
  const previous = await esplora.json(`/block/${info.previousblockhash}/status`)
  t.same(previous, { in_best_chain: true, height: info.height - 1, next_best: hash })

  devnet.mine(8)
  const recent = await esplora.json<EsploraBlock[]>('/blocks')
  t.equal(recent.length, 10)
  t.same(
    recent.map((b) => b.height),
    Array.from({ length: 10 }, (_, index) => devnet.chain.height - index),
  )
  const oldest = await esplora.json<EsploraBlock[]>('/blocks/1')
  t.same(
    oldest.map((b) => b.height),
    [1, 0],
  )
})

t.test('transaction JSON: coinbase, legacy and segwit inputs, statuses', async (t) => {
  const fundingTxid = (
    await esplora.json<string[]>(`/block/${await esplora.text('/block-height/1')}/txids`)
  )[0]!
  const funding = await esplora.json<EsploraTx>(`/tx/${fundingTxid}`)
  t.same(Object.keys(funding).sort(), TX_KEYS)
  t.same(Object.keys(funding.status ?? {}).sort(), STATUS_KEYS)
  t.equal(funding.status?.block_height, 1)
  t.equal(funding.fee, 0)
  t.same(funding.vin[0], {
    txid: '0'.repeat(64),
    vout: 0xffffffff,
    prevout: null,
    scriptsig: '5100',
    scriptsig_asm: 'OP_PUSHNUM_1 OP_0',
    witness: ['0'.repeat(64)],
    is_coinbase: true,
    sequence: 0xffffffff,
  })
  t.same(funding.vout[0], {
    scriptpubkey: Buffer.from(wpkh.outputScript).toString('hex'),
    scriptpubkey_asm: `OP_0 OP_PUSHBYTES_20 ${Buffer.from(wpkh.outputScript.subarray(2)).toString('hex')}`,
    scriptpubkey_type: 'v0_p2wpkh',
    scriptpubkey_address: wpkh.address,
    value: 50_000_000,
  })
  const commitment = funding.vout.at(-1)!
  t.equal(commitment.scriptpubkey_type, 'op_return')
  t.match(commitment.scriptpubkey, /^6a24aa21a9ed[0-9a-f]{64}$/)

  const legacy = BITCOIN_USERS.p2pkh
  const [coin] = await esplora.coins(legacy.address)
  const hex = await signWithBitcoinjs(
    legacy,
    [coin!],
    [{ address: BITCOIN_VAULT.address, value: coin!.value - 3_000n }],
    previousHex,
  )
  const txid = (await esplora.broadcast(hex)).body
  const tx = await esplora.json<EsploraTx>(`/tx/${txid}`)
  t.same(Object.keys(tx).sort(), TX_KEYS)
  t.same(tx.status, { confirmed: false })
  t.same(await esplora.json(`/tx/${txid}/status`), { confirmed: false })
  const input = tx.vin[0]!
  t.same(Object.keys(input).sort(), [
    'is_coinbase',
    'prevout',
    'scriptsig',
    'scriptsig_asm',
    'sequence',
    'txid',
    'vout',
  ])
  t.notOk('witness' in input, 'no witness member for a legacy input')
  t.match(input.scriptsig_asm, /^OP_PUSHBYTES_7[12] [0-9a-f]+ OP_PUSHBYTES_33 [0-9a-f]{66}$/)
  t.equal(input.prevout!.scriptpubkey_type, 'p2pkh')
  t.match(
    input.prevout!.scriptpubkey_asm,
    /^OP_DUP OP_HASH160 OP_PUSHBYTES_20 [0-9a-f]{40} OP_EQUALVERIFY OP_CHECKSIG$/,
  )
  t.equal(input.prevout!.scriptpubkey_address, legacy.address)
  t.equal(tx.size, hex.length / 2)
  t.equal(tx.weight, tx.size * 4, 'no witness: weight is four times the size')
  t.equal(tx.fee, 3_000)
  t.equal(await esplora.text(`/tx/${txid}/hex`), hex)
  const raw = await fetch(`${devnet.url}/tx/${txid}/raw`)
  t.equal(Buffer.from(await raw.arrayBuffer()).toString('hex'), hex)

  const [hash] = devnet.mine(1)
  const confirmed = await esplora.json<{ confirmed: boolean; block_hash: string; block_height: number }>(
    `/tx/${txid}/status`,
  )
  t.same(confirmed, {
    confirmed: true,
    block_height: devnet.chain.height,
    block_hash: hash,
    block_time: devnet.chain.tip.timestamp,
  })

  const nested = BITCOIN_USERS['p2sh-p2wpkh']
  const [nestedCoin] = await esplora.coins(nested.address)
  const nestedHex = await signWithBitcoinjs(
    nested,
    [nestedCoin!],
    [{ address: BITCOIN_VAULT.address, value: nestedCoin!.value - 3_000n }],
    previousHex,
  )
  const nestedTx = await esplora.json<EsploraTx>(`/tx/${(await esplora.broadcast(nestedHex)).body}`)
  const nestedInput = nestedTx.vin[0]!
  t.equal(nestedInput.witness?.length, 2)
  t.equal(
    nestedInput.inner_redeemscript_asm,
    `OP_0 OP_PUSHBYTES_20 ${Buffer.from(nested.redeemScript!.subarray(2)).toString('hex')}`,
  )
  t.ok(nestedTx.weight < nestedTx.size * 4, 'witness data is discounted')
})

t.test('address statistics, UTXOs and history: chain and mempool sums exactly', async (t) => {
  const account = freshAccount('stats')
  const empty = { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 }
  t.same(await esplora.json(`/address/${account.address}`), {
    address: account.address,
    chain_stats: empty,
    mempool_stats: empty,
  })
  t.same(await esplora.json(`/address/${account.address}/utxo`), [])
  t.same(await esplora.json(`/address/${account.address}/txs`), [])

  const a = devnet.fund(account.address, 1_000_000n)
  const b = devnet.fund(account.address, 500_000n)
  const coinA: Coin = { txid: a.txid, vout: 0, value: 1_000_000n }
  const spendHex = await signWithBitcoinjs(
    account,
    [coinA],
    [
      { address: BITCOIN_VAULT.address, value: 300_000n },
      { address: account.address, value: 698_000n },
    ],
    previousHex,
  )
  const spend = (await esplora.broadcast(spendHex)).body

  t.same(await esplora.json(`/address/${account.address}`), {
    address: account.address,
    chain_stats: {
      funded_txo_count: 2,
      funded_txo_sum: 1_500_000,
      spent_txo_count: 0,
      spent_txo_sum: 0,
      tx_count: 2,
    },
    mempool_stats: {
      funded_txo_count: 1,
      funded_txo_sum: 698_000,
      spent_txo_count: 1,
      spent_txo_sum: 1_000_000,
      tx_count: 1,
    },
  })
  const utxos = await esplora.json<EsploraUtxo[]>(`/address/${account.address}/utxo`)
  t.same(
    utxos,
    [
      {
        txid: b.txid,
        vout: 0,
        status: {
          confirmed: true,
          block_height: b.blockHeight,
          block_hash: b.blockHash,
          block_time: devnet.chain.block(b.blockHash)!.timestamp,
        },
        value: 500_000,
      },
      { txid: spend, vout: 1, status: { confirmed: false }, value: 698_000 },
    ],
    'the output spent in the mempool is gone, the unconfirmed change is there',
  )

  const history = await esplora.json<EsploraTx[]>(`/address/${account.address}/txs`)
  t.same(
    history.map((tx) => tx.txid),
    [spend, b.txid, a.txid],
    'mempool first, then confirmed newest first',
  )
  t.same(
    (await esplora.json<EsploraTx[]>(`/address/${account.address}/txs/mempool`)).map((tx) => tx.txid),
    [spend],
  )
  t.same(
    (await esplora.json<EsploraTx[]>(`/address/${account.address}/txs/chain`)).map((tx) => tx.txid),
    [b.txid, a.txid],
  )
  t.same(await esplora.json(`/tx/${a.txid}/outspends`), [
    { spent: true, txid: spend, vin: 0, status: { confirmed: false } },
    { spent: false },
    { spent: false },
  ])

  devnet.mine(1)
  const vault = await esplora.json<{ chain_stats: { funded_txo_sum: number } }>(
    `/address/${BITCOIN_VAULT.address}`,
  )
  t.ok(vault.chain_stats.funded_txo_sum >= 300_000)
  const after = await esplora.json<{ chain_stats: unknown; mempool_stats: unknown }>(
    `/address/${account.address}`,
  )
  t.same(after.chain_stats, {
    funded_txo_count: 3,
    funded_txo_sum: 2_198_000,
    spent_txo_count: 1,
    spent_txo_sum: 1_000_000,
    tx_count: 3,
  })
  t.same(after.mempool_stats, empty, 'mining moves the mempool statistics to the chain')
  t.same(devnet.chain.balance(account.outputScript), { confirmed: 1_198_000n, unconfirmed: 0n })
  const spentStatus = (
    await esplora.json<{ status: { confirmed: boolean } }[]>(`/tx/${a.txid}/outspends`)
  )[0]!
  t.equal(spentStatus.status.confirmed, true)
})

t.test('confirmed history pages by 25 after the last seen txid', async (t) => {
  const account = freshAccount('paging')
  const txids = Array.from({ length: 27 }, () => devnet.fund(account.address, 10_000n).txid).reverse()
  const first = await esplora.json<EsploraTx[]>(`/address/${account.address}/txs/chain`)
  t.same(
    first.map((tx) => tx.txid),
    txids.slice(0, 25),
  )
  t.same(
    (await esplora.json<EsploraTx[]>(`/address/${account.address}/txs`)).map((tx) => tx.txid),
    txids.slice(0, 25),
    '/txs: 25 confirmed (no mempool)',
  )
  const second = await esplora.json<EsploraTx[]>(
    `/address/${account.address}/txs/chain/${first.at(-1)!.txid}`,
  )
  t.same(
    second.map((tx) => tx.txid),
    txids.slice(25),
  )
  t.same(await esplora.json(`/address/${account.address}/txs/chain/${txids.at(-1)}`), [])
})

t.test('fee estimates and mempool statistics', async (t) => {
  t.same(await esplora.json('/fee-estimates'), FEE_RATES)
  const updated = await esplora.dev('/dev/fee-estimates', { '1': 30, '6': 5 })
  t.same(updated, { '1': 30, '6': 5 })
  t.same(await esplora.json('/fee-estimates'), { '1': 30, '6': 5 })
  const refused = await esplora.request('POST', '/dev/fee-estimates', JSON.stringify({ soon: 3 }))
  t.equal(refused.status, 400)
  devnet.chain.setFeeRates(FEE_RATES)

  devnet.mine(1)
  t.same(await esplora.json('/mempool'), { count: 0, vsize: 0, total_fee: 0, fee_histogram: [] })
  const coin = (await esplora.coins(wpkh.address))[0]!
  const hex = await signWithBitcoinjs(
    wpkh,
    [coin],
    [{ address: BITCOIN_VAULT.address, value: coin.value - 1_410n }],
    previousHex,
  )
  const txid = (await esplora.broadcast(hex)).body
  const record = devnet.chain.transaction(txid)!
  const mempool = await esplora.json<{ count: number; vsize: number; total_fee: number }>('/mempool')
  t.same(mempool, {
    count: 1,
    vsize: record.vsize,
    total_fee: 1_410,
    fee_histogram: [[Math.round((1_410 / record.vsize) * 100) / 100, record.vsize]],
  })
  t.same(await esplora.json('/mempool/recent'), [
    { txid, fee: 1_410, vsize: record.vsize, value: Number(coin.value) - 1_410 },
  ])
})

t.test('dev endpoints: mine to an address, fund an address', async (t) => {
  const account = freshAccount('dev')
  const height = devnet.chain.height
  const mined = await esplora.dev<{ height: number; hashes: string[] }>('/dev/mine', {
    blocks: 2,
    address: account.address,
  })
  t.equal(mined.height, height + 2)
  t.equal(mined.hashes.length, 2)
  t.equal(await esplora.text('/blocks/tip/hash'), mined.hashes[1])
  const stats = await esplora.json<{ chain_stats: { funded_txo_count: number; funded_txo_sum: number } }>(
    `/address/${account.address}`,
  )
  t.equal(stats.chain_stats.funded_txo_count, 2, 'both block rewards pay the address')
  const rewards = mined.hashes.map((hash) => {
    const coinbase = devnet.chain.transaction(devnet.chain.block(hash)!.txids[0]!)!
    t.same(coinbase.tx.outs[0]!.script, account.outputScript)
    return Number(coinbase.tx.outs[0]!.value)
  })
  t.equal(stats.chain_stats.funded_txo_sum, rewards[0]! + rewards[1]!)
  // The first block also took the transaction the previous test left in the mempool: its fee.
  t.same(rewards, [5_000_000_000 + 1_410, 5_000_000_000], 'subsidy plus fees')

  const funded = await esplora.dev<EsploraUtxo>('/dev/fund', { address: account.address, value: '123456' })
  t.equal(funded.value, 123_456)
  t.equal(funded.vout, 0)
  t.equal(funded.status.confirmed, true)
  t.equal(funded.status.block_height, height + 3)
  const utxos = await esplora.json<EsploraUtxo[]>(`/address/${account.address}/utxo`)
  t.ok(utxos.some((utxo) => utxo.txid === funded.txid && utxo.value === 123_456))

  const defaultMine = await esplora.dev<{ height: number; hashes: string[] }>('/dev/mine', {})
  t.equal(defaultMine.hashes.length, 1)
  const reward = devnet.chain.transaction(devnet.chain.tip.txids[0]!)!
  t.same(reward.tx.outs[0]!.script, BITCOIN_MINER.outputScript, 'rewards go to the miner by default')

  for (const [path, body] of [
    ['/dev/fund', { address: 'nope', value: 1 }],
    ['/dev/fund', { address: account.address, value: -5 }],
    ['/dev/fund', { address: account.address, value: 1.5 }],
    ['/dev/mine', { blocks: 0 }],
    ['/dev/mine', { blocks: 1, address: 'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8' }],
    ['/dev/mine', '['],
  ] as const) {
    const answer = await esplora.request('POST', path, typeof body === 'string' ? body : JSON.stringify(body))
    t.equal(answer.status, 400, `${path} ${JSON.stringify(body)}: ${answer.body}`)
  }
})

t.test('errors: bad addresses, unknown transactions and blocks, unknown routes', async (t) => {
  for (const address of [
    'not-an-address',
    'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8',
    // A valid mainnet address: not one of this regtest chain.
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    `${wpkh.address.slice(0, -1)}${wpkh.address.endsWith('q') ? 'p' : 'q'}`,
  ]) {
    for (const suffix of ['', '/utxo', '/txs']) {
      const answer = await esplora.request('GET', `/address/${address}${suffix}`)
      t.same([answer.status, answer.body], [400, 'Invalid Bitcoin address'], `${address}${suffix}`)
    }
  }
  const unknown = 'cd'.repeat(32)
  for (const suffix of ['', '/status', '/hex', '/raw', '/outspends', '/outspend/0']) {
    const answer = await esplora.request('GET', `/tx/${unknown}${suffix}`)
    t.same([answer.status, answer.body], [404, 'Transaction not found'], `/tx/:txid${suffix}`)
  }
  const badHash = await esplora.request('GET', '/tx/1234')
  t.same([badHash.status, badHash.body], [400, 'Invalid hash string'])
  for (const path of [`/block/${unknown}`, `/block-height/${devnet.chain.height + 1}`]) {
    const answer = await esplora.request('GET', path)
    t.same([answer.status, answer.body], [404, 'Block not found'], path)
  }
  const badHeight = await esplora.request('GET', '/block-height/abc')
  t.same([badHeight.status, badHeight.body], [400, 'Invalid number'])
  const route = await esplora.request('GET', '/nowhere')
  t.same([route.status, route.body], [404, 'endpoint does not exist "/nowhere"'])
})
