/**
 * Spends the Bitcoin devnet accepts: every script type of the cast signed with bitcoinjs-lib and with
 * @scure/btc-signer (an independent implementation), P2WSH (native and nested), other sighash types,
 * chained mempool spends and OP_RETURN outputs, all through `POST /tx`.
 */
import { opcodes, Psbt, payments, script, Transaction } from 'bitcoinjs-lib'
import t, { type Test } from 'tap'
import {
  BITCOIN_DEVNET_NETWORK,
  BITCOIN_SOLVER,
  BITCOIN_USER_LIST,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  bitcoinDevnetKeypair,
} from '../src/bitcoin/accounts.js'
import { startBitcoinDevnet } from '../src/bitcoin/devnet.js'
import type { EsploraTx } from '../src/bitcoin/esplora.js'
import {
  type Coin,
  Esplora,
  p2wshSingleKey,
  signP2wsh,
  signWithBitcoinjs,
  signWithScure,
  txidOf,
} from './fixtures/bitcoin-wallet.js'

const devnet = await startBitcoinDevnet()
t.teardown(() => devnet.stop())
const esplora = new Esplora(devnet.url)
const previousHex = (txid: string) => esplora.text(`/tx/${txid}/hex`)
const FEE = 2_000n

/** Takes `count` fresh confirmed coins of `address` (funded for the test). */
function freshCoins(address: string, count: number, value = 1_000_000n): Coin[] {
  return Array.from({ length: count }, () => {
    const funded = devnet.fund(address, value)
    return { txid: funded.txid, vout: funded.vout, value }
  })
}

/** Broadcasts and expects acceptance; returns the txid. */
async function accept(t: Test, hex: string, what: string): Promise<string> {
  const answer = await esplora.broadcast(hex)
  t.equal(answer.status, 200, `${what}: ${answer.body}`)
  t.equal(answer.body, txidOf(hex), `${what}: the answer is the txid`)
  return answer.body
}

t.test('each user type spends its start-up coins, signed with bitcoinjs-lib', async (t) => {
  for (const user of BITCOIN_USER_LIST) {
    const [coin] = await esplora.coins(user.address)
    t.ok(coin, `${user.kind} has a coin`)
    const hex = await signWithBitcoinjs(
      user,
      [coin!],
      [
        { address: BITCOIN_VAULT.address, value: 10_000_000n },
        { address: user.address, value: coin!.value - 10_000_000n - FEE },
      ],
      previousHex,
    )
    const txid = await accept(t, hex, user.kind)
    const tx = await esplora.json<EsploraTx>(`/tx/${txid}`)
    t.equal(tx.fee, Number(FEE), `${user.kind} fee`)
    t.equal(tx.vin[0]!.prevout!.scriptpubkey_address, user.address)
    t.same(tx.status, { confirmed: false })
  }
  devnet.mine(1)
})

t.test('each user type spends, signed with @scure/btc-signer', async (t) => {
  for (const user of BITCOIN_USER_LIST) {
    const coins = freshCoins(user.address, 2)
    const hex = await signWithScure(
      user,
      coins,
      [{ address: BITCOIN_SOLVER.address, value: 2_000_000n - FEE }],
      previousHex,
    )
    const txid = await accept(t, hex, `scure ${user.kind}`)
    t.equal(devnet.chain.transaction(txid)?.fee, FEE)
  }
})

t.test('P2TR key-path signatures: 64-byte SIGHASH_DEFAULT and 65-byte SIGHASH_ALL', async (t) => {
  const user = BITCOIN_USERS.p2tr
  const pays = (value: bigint) => [{ address: BITCOIN_VAULT.address, value: value - FEE }]
  const [defaultCoin, allCoin] = freshCoins(user.address, 2)
  const defaultHex = await signWithBitcoinjs(user, [defaultCoin!], pays(defaultCoin!.value), previousHex)
  t.equal(Transaction.fromHex(defaultHex).ins[0]!.witness[0]!.length, 64)
  await accept(t, defaultHex, 'SIGHASH_DEFAULT')
  const allHex = await signWithBitcoinjs(user, [allCoin!], pays(allCoin!.value), previousHex, {
    sighashType: Transaction.SIGHASH_ALL,
  })
  const signature = Transaction.fromHex(allHex).ins[0]!.witness[0]!
  t.equal(signature.length, 65)
  t.equal(signature[64], Transaction.SIGHASH_ALL)
  await accept(t, allHex, 'SIGHASH_ALL')
})

t.test('ECDSA inputs signed SIGHASH_ALL|ANYONECANPAY and SIGHASH_NONE', async (t) => {
  for (const sighashType of [
    Transaction.SIGHASH_ALL | Transaction.SIGHASH_ANYONECANPAY,
    Transaction.SIGHASH_NONE,
  ]) {
    for (const user of [BITCOIN_USERS.p2wpkh, BITCOIN_USERS.p2pkh]) {
      const coins = freshCoins(user.address, 2)
      const hex = await signWithBitcoinjs(
        user,
        coins,
        [{ address: BITCOIN_VAULT.address, value: 2_000_000n - FEE }],
        previousHex,
        { sighashType },
      )
      await accept(t, hex, `${user.kind} sighash ${sighashType}`)
    }
  }
})

t.test('P2WSH single-key spends, native and nested in P2SH', async (t) => {
  const keypair = bitcoinDevnetKeypair('test/p2wsh')
  const { address, witnessScript } = p2wshSingleKey(keypair.publicKey)
  const [coin] = freshCoins(address, 1)
  const hex = signP2wsh(keypair, [coin!], [{ address: BITCOIN_VAULT.address, value: coin!.value - FEE }])
  const txid = await accept(t, hex, 'P2WSH')
  const tx = await esplora.json<EsploraTx>(`/tx/${txid}`)
  t.equal(tx.vin[0]!.prevout!.scriptpubkey_type, 'v0_p2wsh')
  t.equal(
    tx.vin[0]!.inner_witnessscript_asm,
    `OP_PUSHBYTES_33 ${Buffer.from(keypair.publicKey).toString('hex')} OP_CHECKSIG`,
  )
  t.equal(
    Buffer.from(witnessScript).toString('hex'),
    tx.vin[0]!.witness!.at(-1),
    'the witness script is revealed',
  )

  const network = BITCOIN_DEVNET_NETWORK
  const nestedAddress = payments.p2sh({
    redeem: payments.p2wsh({ redeem: payments.p2pk({ pubkey: keypair.publicKey, network }), network }),
    network,
  }).address!
  const [nestedCoin] = freshCoins(nestedAddress, 1)
  const nestedHex = signP2wsh(
    keypair,
    [nestedCoin!],
    [{ address: BITCOIN_VAULT.address, value: nestedCoin!.value - FEE }],
    { nested: true },
  )
  const nestedTxid = await accept(t, nestedHex, 'P2SH-P2WSH')
  const nestedTx = await esplora.json<EsploraTx>(`/tx/${nestedTxid}`)
  t.equal(nestedTx.vin[0]!.prevout!.scriptpubkey_type, 'p2sh')
  t.match(nestedTx.vin[0]!.inner_redeemscript_asm, /^OP_0 OP_PUSHBYTES_32 [0-9a-f]{64}$/)
  t.match(nestedTx.vin[0]!.inner_witnessscript_asm, /^OP_PUSHBYTES_33 [0-9a-f]{66} OP_CHECKSIG$/)

  // A key-hash witness script: OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG.
  const keyHash = payments.p2pkh({ pubkey: keypair.publicKey, network })
  const wshPkh = payments.p2wsh({ redeem: keyHash, network })
  const [pkhCoin] = freshCoins(wshPkh.address!, 1)
  const psbt = new Psbt({ network })
  psbt.addInput({
    hash: pkhCoin!.txid,
    index: pkhCoin!.vout,
    witnessUtxo: { script: wshPkh.output!, value: pkhCoin!.value },
    witnessScript: keyHash.output!,
  })
  psbt.addOutput({ address: BITCOIN_VAULT.address, value: pkhCoin!.value - FEE })
  psbt.signAllInputs(keypair).finalizeAllInputs()
  const pkhTxid = await accept(t, psbt.extractTransaction().toHex(), 'P2WSH key-hash script')
  const pkhTx = await esplora.json<EsploraTx>(`/tx/${pkhTxid}`)
  t.match(
    pkhTx.vin[0]!.inner_witnessscript_asm,
    /^OP_DUP OP_HASH160 OP_PUSHBYTES_20 [0-9a-f]{40} OP_EQUALVERIFY OP_CHECKSIG$/,
  )
})

t.test('chained mempool spends: a child and a grandchild of unconfirmed outputs', async (t) => {
  const user = BITCOIN_USERS.p2wpkh
  const [coin] = freshCoins(user.address, 1)
  const parentHex = await signWithBitcoinjs(
    user,
    [coin!],
    [{ address: user.address, value: coin!.value - FEE }],
    previousHex,
  )
  const parent = await accept(t, parentHex, 'parent')
  const childCoin = { txid: parent, vout: 0, value: coin!.value - FEE }
  const childHex = await signWithBitcoinjs(
    user,
    [childCoin],
    [{ address: user.address, value: childCoin.value - FEE }],
    previousHex,
  )
  const child = await accept(t, childHex, 'child of an unconfirmed parent')
  const grandchildHex = await signWithBitcoinjs(
    user,
    [{ txid: child, vout: 0, value: childCoin.value - FEE }],
    [{ address: BITCOIN_VAULT.address, value: childCoin.value - 2n * FEE }],
    previousHex,
  )
  const grandchild = await accept(t, grandchildHex, 'grandchild')
  const mempool = await esplora.json<string[]>('/mempool/txids')
  for (const txid of [parent, child, grandchild]) t.ok(mempool.includes(txid), `${txid} in the mempool`)

  const [hash] = devnet.mine(1)
  const txids = await esplora.json<string[]>(`/block/${hash}/txids`)
  t.ok(
    txids.indexOf(parent) < txids.indexOf(child) && txids.indexOf(child) < txids.indexOf(grandchild),
    'the block holds them parents first',
  )
  t.same(await esplora.json<string[]>('/mempool/txids'), [], 'mining empties the mempool')
  const status = await esplora.json<{ confirmed: boolean; block_hash: string }>(`/tx/${grandchild}/status`)
  t.equal(status.confirmed, true)
  t.equal(status.block_hash, hash)
})

t.test('OP_RETURN outputs are accepted and kept', async (t) => {
  const user = BITCOIN_USERS.p2wpkh
  const [coin] = freshCoins(user.address, 1)
  const data = Buffer.from('pontis:order:0123456789abcdef', 'utf8')
  const opReturn = script.compile([opcodes.OP_RETURN, data])
  const hex = await signWithBitcoinjs(
    user,
    [coin!],
    [
      { address: BITCOIN_VAULT.address, value: coin!.value - FEE },
      { script: opReturn, value: 0n },
    ],
    previousHex,
  )
  const txid = await accept(t, hex, 'OP_RETURN')
  devnet.mine(1)
  const tx = await esplora.json<EsploraTx>(`/tx/${txid}`)
  const out = tx.vout[1]!
  t.equal(out.scriptpubkey_type, 'op_return')
  t.equal(out.scriptpubkey, Buffer.from(opReturn).toString('hex'))
  t.equal(out.scriptpubkey_asm, `OP_RETURN OP_PUSHBYTES_${data.length} ${data.toString('hex')}`)
  t.equal(out.value, 0)
  t.notOk('scriptpubkey_address' in out, 'an OP_RETURN output has no address')
  t.same(await esplora.json(`/tx/${txid}/outspend/1`), { spent: false })

  const full = script.compile([opcodes.OP_RETURN, Buffer.alloc(80, 7)])
  const [second] = freshCoins(user.address, 1)
  const fullHex = await signWithBitcoinjs(
    user,
    [second!],
    [
      { address: BITCOIN_VAULT.address, value: second!.value - FEE },
      { script: full, value: 0n },
    ],
    previousHex,
  )
  await accept(t, fullHex, '80 bytes of OP_RETURN data')
})

t.test('a multi-input transaction mixing every script type', async (t) => {
  const coins = BITCOIN_USER_LIST.map((user) => ({ user, coin: freshCoins(user.address, 1)[0]! }))
  // bitcoinjs signs one account per PSBT; build the transaction by hand, then sign input by input.
  const psbt = new Psbt({ network: BITCOIN_DEVNET_NETWORK })
  for (const { user, coin } of coins) {
    const witnessUtxo = { script: user.outputScript, value: coin.value }
    if (user.kind === 'p2pkh') {
      psbt.addInput({
        hash: coin.txid,
        index: coin.vout,
        nonWitnessUtxo: Buffer.from(await previousHex(coin.txid), 'hex'),
      })
    } else if (user.kind === 'p2tr') {
      psbt.addInput({
        hash: coin.txid,
        index: coin.vout,
        witnessUtxo,
        tapInternalKey: user.internalPublicKey!,
      })
    } else if (user.kind === 'p2sh-p2wpkh') {
      psbt.addInput({ hash: coin.txid, index: coin.vout, witnessUtxo, redeemScript: user.redeemScript! })
    } else {
      psbt.addInput({ hash: coin.txid, index: coin.vout, witnessUtxo })
    }
  }
  const total = coins.reduce((sum, { coin }) => sum + coin.value, 0n)
  psbt.addOutput({ address: BITCOIN_VAULT.address, value: total - 5_000n })
  coins.forEach(({ user }, index) => {
    psbt.signInput(index, user.signer)
  })
  psbt.finalizeAllInputs()
  const txid = await accept(t, psbt.extractTransaction().toHex(), 'mixed inputs')
  const tx = await esplora.json<EsploraTx>(`/tx/${txid}`)
  t.same(
    tx.vin.map((input) => input.prevout?.scriptpubkey_type),
    ['v0_p2wpkh', 'v1_p2tr', 'p2sh', 'p2pkh'],
  )
  t.equal(tx.fee, 5_000)
})
