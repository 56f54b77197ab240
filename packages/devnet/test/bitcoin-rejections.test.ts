/**
 * Transactions the Bitcoin devnet refuses, through `POST /tx`, with bitcoind's error code and reason:
 * bad signatures, missing inputs, double spends (mempool and confirmed), overspends, fees below the
 * relay minimum, dust, oversized or repeated OP_RETURNs, immature coinbases, non-final locktimes,
 * over-long mempool chains, and what the simulator cannot verify.
 */
import { opcodes, Psbt, payments, script, Transaction } from 'bitcoinjs-lib'
import t, { type Test } from 'tap'
import {
  BITCOIN_DEVNET_NETWORK,
  BITCOIN_MINER,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  bitcoinDevnetKeypair,
} from '../src/bitcoin/accounts.js'
import { startBitcoinDevnet } from '../src/bitcoin/devnet.js'
import {
  type Coin,
  Esplora,
  type Pay,
  signP2wpkhRaw,
  signWithBitcoinjs,
  txidOf,
  vsizeOf,
} from './fixtures/bitcoin-wallet.js'

const devnet = await startBitcoinDevnet()
t.teardown(() => devnet.stop())
const esplora = new Esplora(devnet.url)
const previousHex = (txid: string) => esplora.text(`/tx/${txid}/hex`)
const FEE = 2_000n
const wpkh = BITCOIN_USERS.p2wpkh

function freshCoin(address: string = wpkh.address, value = 1_000_000n): Coin {
  const funded = devnet.fund(address, value)
  return { txid: funded.txid, vout: funded.vout, value }
}

function toVault(coin: Coin, fee = FEE): Pay[] {
  return [{ address: BITCOIN_VAULT.address, value: coin.value - fee }]
}

/** Broadcasts and expects a 400 with `code` and a message matching `reason`. */
async function refuse(t: Test, hex: string, code: number, reason: string | RegExp): Promise<void> {
  const mempoolBefore = devnet.chain.mempoolTransactions().length
  const answer = await esplora.broadcast(hex)
  t.equal(answer.status, 400, `refused: ${answer.body}`)
  t.equal(answer.contentType, 'text/plain')
  const match = /^sendrawtransaction RPC error: (\{.*\})$/.exec(answer.body)
  t.ok(match, 'bitcoind-like error text')
  const error = JSON.parse(match?.[1] ?? '{}') as { code: number; message: string }
  t.equal(error.code, code, 'error code')
  if (typeof reason === 'string') t.equal(error.message, reason, 'reason')
  else t.match(error.message, reason, 'reason')
  t.equal(devnet.chain.mempoolTransactions().length, mempoolBefore, 'the mempool is unchanged')
}

async function accept(t: Test, hex: string): Promise<string> {
  const answer = await esplora.broadcast(hex)
  t.equal(answer.status, 200, answer.body)
  return answer.body
}

const NULLFAIL =
  'mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation)'

t.test('a signature that does not cover the transaction is refused, for every script type', async (t) => {
  for (const user of Object.values(BITCOIN_USERS)) {
    const coin = freshCoin(user.address)
    const hex = await signWithBitcoinjs(user, [coin], toVault(coin), previousHex)
    const tampered = Transaction.fromHex(hex)
    tampered.outs[0]!.value -= 1n
    await refuse(
      t,
      tampered.toHex(),
      -26,
      user.kind === 'p2tr' ? 'mandatory-script-verify-flag-failed (Invalid Schnorr signature)' : NULLFAIL,
    )
  }
})

t.test('a key that does not own the output is refused', async (t) => {
  const coin = freshCoin()
  const hex = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex)
  const stranger = bitcoinDevnetKeypair('test/stranger')
  const tx = Transaction.fromHex(hex)
  const digest = tx.hashForWitnessV0(
    0,
    payments.p2pkh({ pubkey: stranger.publicKey }).output!,
    coin.value,
    Transaction.SIGHASH_ALL,
  )
  tx.setWitness(0, [
    script.signature.encode(stranger.sign(digest), Transaction.SIGHASH_ALL),
    stranger.publicKey,
  ])
  await refuse(
    t,
    tx.toHex(),
    -26,
    'mandatory-script-verify-flag-failed (Script failed an OP_EQUALVERIFY operation)',
  )

  // A taproot output signed with the untweaked internal key.
  const trCoin = freshCoin(BITCOIN_USERS.p2tr.address)
  const trHex = await signWithBitcoinjs(BITCOIN_USERS.p2tr, [trCoin], toVault(trCoin), previousHex)
  const trTx = Transaction.fromHex(trHex)
  const trDigest = trTx.hashForWitnessV1(
    0,
    [BITCOIN_USERS.p2tr.outputScript],
    [trCoin.value],
    Transaction.SIGHASH_DEFAULT,
  )
  trTx.setWitness(0, [BITCOIN_USERS.p2tr.keypair.signSchnorr(trDigest)])
  await refuse(t, trTx.toHex(), -26, 'mandatory-script-verify-flag-failed (Invalid Schnorr signature)')
})

t.test('a high-S ECDSA signature is refused as non-standard', async (t) => {
  const coin = freshCoin()
  const tx = Transaction.fromHex(await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex))
  const [encoded, publicKey] = tx.ins[0]!.witness as [Uint8Array, Uint8Array]
  const { signature, hashType } = script.signature.decode(encoded)
  const order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
  const s = BigInt(`0x${Buffer.from(signature.subarray(32)).toString('hex')}`)
  const highS = Buffer.from((order - s).toString(16).padStart(64, '0'), 'hex')
  const malleated = Buffer.concat([signature.subarray(0, 32), highS])
  tx.setWitness(0, [script.signature.encode(malleated, hashType), publicKey])
  await refuse(
    t,
    tx.toHex(),
    -26,
    'non-mandatory-script-verify-flag (Non-canonical signature: S value is unnecessarily high)',
  )
})

t.test('an input that does not exist is refused', async (t) => {
  const ghost = { txid: 'ab'.repeat(32), vout: 0, value: 1_000_000n }
  const hex = await signWithBitcoinjs(wpkh, [ghost], toVault(ghost), previousHex)
  await refuse(t, hex, -25, 'bad-txns-inputs-missingorspent')
  const coin = freshCoin()
  const outOfRange = { ...coin, vout: 5 }
  await refuse(
    t,
    await signWithBitcoinjs(wpkh, [outOfRange], toVault(coin), previousHex),
    -25,
    'bad-txns-inputs-missingorspent',
  )
})

t.test('double spends: against the mempool, then against the chain', async (t) => {
  const coin = freshCoin()
  const first = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex)
  // Paying less than the first: no replacement (BIP125), a refused double spend.
  const second = await signWithBitcoinjs(wpkh, [coin], toVault(coin, FEE / 2n), previousHex)
  t.not(txidOf(first), txidOf(second))
  const txid = await accept(t, first)
  t.equal(await accept(t, first), txid, 'the same transaction again is accepted (already in the mempool)')
  await refuse(
    t,
    second,
    -26,
    new RegExp(`^insufficient fee, rejecting replacement ${txidOf(second)}; new feerate .* <= old feerate`),
  )
  t.same(devnet.chain.spender(coin.txid, coin.vout), { txid, vin: 0 }, 'the first spend stands')

  devnet.mine(1)
  await refuse(t, second, -25, 'bad-txns-inputs-missingorspent')
  await refuse(t, first, -27, 'Transaction outputs already in utxo set')
})

t.test('outputs worth more than the inputs are refused', async (t) => {
  const coin = freshCoin(wpkh.address, 1_000_000n)
  // bitcoinjs' PSBT will not finalize an overspend: sign the raw transaction.
  const hex = signP2wpkhRaw(wpkh, [coin], [{ address: BITCOIN_VAULT.address, value: 1_010_000n }])
  await refuse(t, hex, -26, 'bad-txns-in-belowout, value in (0.01) < value out (0.0101)')
})

t.test('the minimum relay fee is 1 sat/vB', async (t) => {
  // Schnorr signatures have a fixed size, so the virtual size does not move with the fee.
  const user = BITCOIN_USERS.p2tr
  const coin = freshCoin(user.address)
  const vsize = BigInt(vsizeOf(await signWithBitcoinjs(user, [coin], toVault(coin), previousHex)))
  const below = await signWithBitcoinjs(user, [coin], toVault(coin, vsize - 1n), previousHex)
  t.equal(BigInt(vsizeOf(below)), vsize)
  await refuse(t, below, -26, `min relay fee not met, ${vsize - 1n} < ${vsize}`)
  const exact = await signWithBitcoinjs(user, [coin], toVault(coin, vsize), previousHex)
  await accept(t, exact)
  t.equal(devnet.chain.transaction(txidOf(exact))?.fee, vsize)
})

t.test('dust outputs are refused; the dust limit itself is accepted', async (t) => {
  const coin = freshCoin()
  const pays = (dust: bigint): Pay[] => [
    { address: BITCOIN_VAULT.address, value: dust },
    { address: wpkh.address, value: coin.value - dust - FEE },
  ]
  await refuse(t, await signWithBitcoinjs(wpkh, [coin], pays(293n), previousHex), -26, 'dust')
  await accept(t, await signWithBitcoinjs(wpkh, [coin], pays(294n), previousHex))
})

t.test('OP_RETURN: more than 80 bytes, two outputs, or a burnt value are refused', async (t) => {
  const coin = freshCoin()
  const opReturn = (bytes: number) => script.compile([opcodes.OP_RETURN, Buffer.alloc(bytes, 1)])
  const sign = (extra: Pay[]) => signWithBitcoinjs(wpkh, [coin], [...toVault(coin), ...extra], previousHex)
  await refuse(t, await sign([{ script: opReturn(81), value: 0n }]), -26, 'scriptpubkey')
  await refuse(
    t,
    await sign([
      { script: opReturn(4), value: 0n },
      { script: opReturn(4), value: 0n },
    ]),
    -26,
    'multi-op-return',
  )
  await refuse(
    t,
    await signWithBitcoinjs(
      wpkh,
      [coin],
      [...toVault(coin, FEE + 1_000n), { script: opReturn(4), value: 1_000n }],
      previousHex,
    ),
    -25,
    'Unspendable output exceeds maximum configured by user (maxburnamount)',
  )
})

t.test('a block reward matures after 100 blocks', async (t) => {
  const [hash] = devnet.mine(1)
  const block = devnet.chain.block(hash!)!
  const coinbase = devnet.chain.transaction(block.txids[0]!)!
  const reward = { txid: coinbase.txid, vout: 0, value: coinbase.tx.outs[0]!.value }
  const fees = block.txids.slice(1).reduce((sum, txid) => sum + devnet.chain.transaction(txid)!.fee, 0n)
  t.equal(reward.value, 5_000_000_000n + fees, 'the 50 BTC subsidy and the fees')
  const hex = await signWithBitcoinjs(BITCOIN_MINER, [reward], toVault(reward), previousHex)
  await refuse(t, hex, -26, 'bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth 1')
  devnet.mine(98)
  await refuse(t, hex, -26, 'bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth 99')
  devnet.mine(1)
  await accept(t, hex)
})

t.test('time locks: a locktime above the next block is non-final', async (t) => {
  const coin = freshCoin()
  const next = devnet.chain.height + 1
  const locked = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex, {
    locktime: next,
    sequence: 0xfffffffe,
  })
  await refuse(t, locked, -26, 'non-final')
  const relative = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex, { sequence: 5 })
  await refuse(t, relative, -26, 'non-BIP68-final')
  const ready = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex, {
    locktime: next - 1,
    sequence: 0xfffffffe,
  })
  await accept(t, ready)
})

t.test('more than 25 unconfirmed ancestors are refused', async (t) => {
  let coin = freshCoin(wpkh.address, 10_000_000n)
  for (let depth = 1; depth <= 25; depth++) {
    const hex = await signWithBitcoinjs(
      wpkh,
      [coin],
      [{ address: wpkh.address, value: coin.value - FEE }],
      previousHex,
    )
    coin = { txid: await accept(t, hex), vout: 0, value: coin.value - FEE }
  }
  const hex = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex)
  await refuse(t, hex, -26, 'too-long-mempool-chain, too many unconfirmed ancestors [limit: 25]')
  devnet.mine(1)
  await accept(t, hex)
})

t.test('a fee rate above maxfeerate is refused', async (t) => {
  const coin = freshCoin(wpkh.address, 100_000_000n)
  const hex = await signWithBitcoinjs(wpkh, [coin], toVault(coin, 50_000_000n), previousHex)
  await refuse(t, hex, -25, 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)')
})

t.test('what the simulator cannot verify is refused, not waved through', async (t) => {
  const keypair = bitcoinDevnetKeypair('test/p2sh-p2pk')
  const redeem = payments.p2pk({ pubkey: keypair.publicKey, network: BITCOIN_DEVNET_NETWORK })
  const p2sh = payments.p2sh({ redeem, network: BITCOIN_DEVNET_NETWORK })
  const coin = freshCoin(p2sh.address!)
  const psbt = new Psbt({ network: BITCOIN_DEVNET_NETWORK })
  psbt.addInput({
    hash: coin.txid,
    index: coin.vout,
    nonWitnessUtxo: Buffer.from(await previousHex(coin.txid), 'hex'),
    redeemScript: redeem.output!,
  })
  psbt.addOutput({ address: BITCOIN_VAULT.address, value: coin.value - FEE })
  psbt.signAllInputs(keypair).finalizeAllInputs()
  await refuse(
    t,
    psbt.extractTransaction().toHex(),
    -26,
    /^simulator-unsupported-input, input 0: P2SH redeem script other than a v0 witness program/,
  )
})

t.test('malformed transactions', async (t) => {
  await refuse(t, 'zz', -22, 'TX decode failed. Make sure the tx has at least one input.')
  await refuse(t, '0200000000', -22, 'TX decode failed. Make sure the tx has at least one input.')
  const coin = freshCoin()
  const hex = await signWithBitcoinjs(wpkh, [coin], toVault(coin), previousHex)
  await refuse(t, `${hex}00`, -22, 'TX decode failed. Make sure the tx has at least one input.')
  const tx = Transaction.fromHex(hex)
  tx.addInput(tx.ins[0]!.hash, tx.ins[0]!.index)
  await refuse(t, tx.toHex(), -26, 'bad-txns-inputs-duplicate')
})
