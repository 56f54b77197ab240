import { type DepositStepsRequest, PontisError } from '@pontis/core/plugin'
import * as btc from '@scure/btc-signer'
import { Psbt } from 'bitcoinjs-lib'
import t from 'tap'
import { BITCOIN_NATIVE_CURRENCY_ID, estimateVsize } from '../src/index.js'
import {
  BITCOIN_USERS,
  BITCOIN_VAULT,
  type BitcoinDevAccount,
  bitcoinAdapter,
  decodePsbt,
  psbtOf,
  REGTEST,
  scriptHexOf,
  signAsWallet,
  startDevnet,
} from './fixtures/bitcoin-devnet.js'

// The devnet's fee estimates; the plugin takes the 2-block target by default.
const FEE_RATES = { '1': 12, '2': 9, '6': 3 }
const RATE = 9n
const devnet = await startDevnet(FEE_RATES)
t.teardown(() => devnet.stop())
const adapter = await bitcoinAdapter(devnet.url)

const hexKey = (user: BitcoinDevAccount) => Buffer.from(user.publicKey).toString('hex')
let nextId = 1
const newRequestId = () => `0x${(nextId++).toString(16).padStart(64, '0')}`

function depositRequest(
  user: BitcoinDevAccount,
  amount: bigint,
  extra: Partial<DepositStepsRequest> = {},
): DepositStepsRequest {
  return {
    requestId: newRequestId(),
    depositor: user.address,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount,
    usePermit: false,
    permitExpiry: 600,
    executeEndpoint: '/execute',
    nowSeconds: 1_700_000_000,
    ...extra,
  }
}

async function errorOf(run: () => Promise<unknown>): Promise<PontisError> {
  try {
    await run()
  } catch (error) {
    if (error instanceof PontisError) return error
    throw error
  }
  throw new Error('expected a PontisError')
}

const SIGNING_OPTIONS: Record<string, Partial<DepositStepsRequest>> = {
  p2wpkh: {},
  p2tr: {},
  'p2sh-p2wpkh': { options: { userPublicKey: hexKey(BITCOIN_USERS['p2sh-p2wpkh']) } },
  p2pkh: {},
}

for (const user of Object.values(BITCOIN_USERS)) {
  t.test(
    `a ${user.kind} user's deposit PSBT: outputs, tag, signer data, fee; signed and read back`,
    async (t) => {
      const amount = 7_000_000n
      const request = depositRequest(user, amount, SIGNING_OPTIONS[user.kind])
      const steps = await adapter.quoting.buildDepositSteps(request)
      t.equal(steps.length, 1)
      t.match(steps[0], { id: 'deposit', kind: 'transaction' })
      t.match(steps[0]?.items[0]?.data, { format: 'bitcoin-psbt', chainId: 8253038 })
      const psbt = psbtOf(steps)
      // Relay's shape: hex without 0x, which bitcoinjs-lib's Psbt.fromHex (what wallet adapters call) reads.
      t.match(psbt, /^70736274ff([0-9a-f]{2})+$/, 'the PSBT is hex, starting with the magic "psbt\\xff"')
      t.equal(Psbt.fromHex(psbt).txInputs.length, 1, 'Psbt.fromHex reads it')

      // Decoded independently.
      const decoded = decodePsbt(psbt)
      t.equal(decoded.inputsLength, 1, 'one 0.5 BTC coin covers the deposit')
      t.equal(decoded.outputsLength, 3)
      const [vault, tag, change] = [0, 1, 2].map((index) => decoded.getOutput(index))
      t.equal(Buffer.from(vault?.script as Uint8Array).toString('hex'), scriptHexOf(BITCOIN_VAULT.address))
      t.equal(vault?.amount, amount)
      t.same(btc.OutScript.decode(tag?.script as Uint8Array), { type: 'unknown', script: tag?.script })
      t.equal(Buffer.from(tag?.script as Uint8Array).toString('hex'), `6a20${request.requestId.slice(2)}`)
      t.equal(tag?.amount, 0n)
      t.equal(btc.Address(REGTEST).encode(btc.OutScript.decode(change?.script as Uint8Array)), user.address)
      const input = decoded.getInput(0)
      if (user.kind === 'p2pkh') {
        t.ok(input.nonWitnessUtxo, 'P2PKH carries the whole previous transaction')
        t.notOk(input.witnessUtxo)
      } else {
        t.equal(
          Buffer.from(input.witnessUtxo?.script as Uint8Array).toString('hex'),
          scriptHexOf(user.address),
        )
      }
      if (user.kind === 'p2sh-p2wpkh') t.same(input.redeemScript, user.redeemScript)
      if (user.kind === 'p2tr')
        t.notOk(input.tapInternalKey, 'unknown without the user key: the wallet adds it')

      // Signed as a wallet would: the fee is the rate times the real vsize, within the signature slack.
      const signed = signAsWallet(psbt, user)
      const fee = signed.fee
      t.equal(fee, 50_000_000n - amount - (change?.amount as bigint))
      t.ok(fee >= RATE * BigInt(signed.vsize), `fee ${fee} ≥ ${RATE} × ${signed.vsize}`)
      t.ok(fee <= RATE * BigInt(signed.vsize + 1), `fee ${fee} ≤ ${RATE} × (${signed.vsize} + 1)`)

      // The price a quote gives is the same number.
      const cost = await adapter.quoting.estimateOriginCost({
        requestId: request.requestId,
        depositor: user.address,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount,
        usePermit: false,
        viaDepositAddress: false,
      })
      t.same(cost, {
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: fee,
        units: fee / RATE,
        unitPrice: RATE,
      })

      // Broadcast: pending with its fact at once, final after one block (below the high-value threshold).
      await adapter.filling.broadcast(signed.hex)
      const pending = await adapter.reading.readDeposits(signed.id)
      t.match(pending, { transactionId: signed.id, state: 'pending', final: false, confirmations: 0 })
      t.same(pending.facts, [
        {
          index: 0,
          depository: BITCOIN_VAULT.address,
          depositId: request.requestId,
          depositor: user.address,
          currencyId: BITCOIN_NATIVE_CURRENCY_ID,
          amount,
        },
      ])
      devnet.mine(1)
      const mined = await adapter.reading.readDeposits(signed.id)
      t.match(mined, { state: 'success', final: true, confirmations: 1 })
      t.equal(mined.facts.length, 1)
    },
  )
}

t.test('P2TR with the user key: the PSBT carries the internal key and signs as is', async (t) => {
  const user = BITCOIN_USERS.p2tr
  const steps = await adapter.quoting.buildDepositSteps(
    depositRequest(user, 1_000_000n, { options: { userPublicKey: hexKey(user) } }),
  )
  const decoded = decodePsbt(psbtOf(steps))
  t.same(decoded.getInput(0).tapInternalKey, user.internalPublicKey)
  decoded.sign(user.keypair.privateKey as Uint8Array)
  decoded.finalize()
  t.ok(decoded.hex.length > 0)
  // A key of someone else is refused, naming the field.
  const wrong = await errorOf(() =>
    adapter.quoting.buildDepositSteps(
      depositRequest(user, 1_000_000n, { options: { userPublicKey: hexKey(BITCOIN_USERS.p2wpkh) } }),
    ),
  )
  t.equal(wrong.code, 'INVALID_REQUEST')
  t.match(wrong.message, /additionalData\.userPublicKey does not match/)
})

t.test('P2SH needs additionalData.userPublicKey, and one that hashes to the address', async (t) => {
  const user = BITCOIN_USERS['p2sh-p2wpkh']
  const missing = await errorOf(() => adapter.quoting.buildDepositSteps(depositRequest(user, 1_000_000n)))
  t.equal(missing.code, 'INVALID_REQUEST')
  t.equal(missing.status, 400)
  t.match(missing.message, /P2SH address: pass the user's public key as additionalData\.userPublicKey/)
  t.same(missing.errorData, { field: 'additionalData.userPublicKey' })
  const wrong = await errorOf(() =>
    adapter.quoting.buildDepositSteps(
      depositRequest(user, 1_000_000n, { options: { userPublicKey: hexKey(BITCOIN_USERS.p2wpkh) } }),
    ),
  )
  t.equal(wrong.code, 'INVALID_REQUEST')
  t.match(wrong.message, /does not hash to the address/)
  const junk = await errorOf(() =>
    adapter.quoting.buildDepositSteps(depositRequest(user, 1_000_000n, { options: { userPublicKey: 'zz' } })),
  )
  t.match(junk.message, /additionalData\.userPublicKey must be a public key in hex/)
  // A price needs no key: it assumes P2SH-P2WPKH.
  const cost = await adapter.quoting.estimateOriginCost({
    requestId: newRequestId(),
    depositor: user.address,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount: 1_000_000n,
    usePermit: false,
    viaDepositAddress: false,
  })
  t.equal(cost.units, BigInt(estimateVsize(['p2sh-p2wpkh'], [22, 34, 23])))
})

t.test('not enough coins: INSUFFICIENT_FUNDS with the balance and the need', async (t) => {
  const user = BITCOIN_USERS.p2wpkh
  const error = await errorOf(() => adapter.quoting.buildDepositSteps(depositRequest(user, 2_000_000_000n)))
  t.equal(error.code, 'INSUFFICIENT_FUNDS')
  const data = error.errorData as { balance: string; required: string; fee: string }
  const utxos = (await (await fetch(`${devnet.url}/address/${user.address}/utxo`)).json()) as Array<{
    value: number
  }>
  t.equal(data.balance, String(utxos.reduce((sum, utxo) => sum + utxo.value, 0)))
  t.equal(BigInt(data.required), 2_000_000_000n + BigInt(data.fee))
  t.match(error.message, new RegExp(`can spend ${data.balance} sat.*needs ${data.required} sat`))
  const dust = await errorOf(() => adapter.quoting.buildDepositSteps(depositRequest(user, 100n)))
  t.equal(dust.code, 'AMOUNT_TOO_LOW')
})

t.test(
  'deposit addresses: derived per request, paid untagged; the quote needs a balance above the amount',
  async (t) => {
    const createDepositAddress = adapter.quoting.createDepositAddress
    if (!createDepositAddress) throw new Error('a seed is configured: deposit addresses exist')
    const requestId = newRequestId()
    const address = await createDepositAddress(requestId)
    t.match(address, /^bcrt1q[a-z0-9]{38}$/)
    t.equal(await createDepositAddress(requestId), address)
    t.not(await createDepositAddress(newRequestId()), address)
    const withoutSeed = await bitcoinAdapter(devnet.url, { depositAddressSeed: undefined })
    t.equal(withoutSeed.quoting.createDepositAddress, undefined)

    const user = BITCOIN_USERS.p2wpkh
    const steps = await adapter.quoting.buildDepositSteps(
      depositRequest(user, 3_000_000n, { requestId, depositAddress: address }),
    )
    const decoded = decodePsbt(psbtOf(steps))
    t.equal(decoded.outputsLength, 2, 'payment and change, no tag')
    t.equal(Buffer.from(decoded.getOutput(0).script as Uint8Array).toString('hex'), scriptHexOf(address))
    t.equal(decoded.getOutput(0).amount, 3_000_000n)

    const quote = (amount: bigint) =>
      adapter.quoting.estimateOriginCost({
        requestId,
        depositor: user.address,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount,
        usePermit: false,
        viaDepositAddress: true,
      })
    const cost = await quote(3_000_000n)
    t.equal(cost.units, BigInt(estimateVsize(['p2wpkh'], [22, 22])))
    const balance = await adapter.reading.readBalance(user.address, BITCOIN_NATIVE_CURRENCY_ID)
    const error = await errorOf(() => quote(balance))
    t.equal(error.code, 'INSUFFICIENT_FUNDS')
    t.match(error.errorData, { balance: balance.toString() })
  },
)

t.test('fill cost: one solver input, the recipient, the tag and change at the fee rate', async (t) => {
  const cost = await adapter.quoting.estimateFillCost({
    orderId: newRequestId(),
    payer: BITCOIN_VAULT.address,
    recipient: BITCOIN_USERS.p2tr.address,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount: 1_000_000n,
    calls: [],
    topupNativeAmount: 0n,
  })
  const vsize = BigInt(estimateVsize(['p2wpkh'], [34, 34, 22]))
  t.same(cost, {
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount: vsize * RATE,
    units: vsize,
    unitPrice: RATE,
  })
})

t.test('what Bitcoin deposits do not offer', async (t) => {
  t.equal(adapter.quoting.supportsDestinationCalls, false)
  t.equal(adapter.quoting.supportsGasTopup, false)
  t.same(adapter.quoting.originRequestOptions, ['additionalData.userPublicKey'])
  t.equal(await adapter.quoting.supportsPermit(BITCOIN_NATIVE_CURRENCY_ID), false)
  const permit = await errorOf(() =>
    adapter.quoting.buildDepositSteps(depositRequest(BITCOIN_USERS.p2wpkh, 1_000_000n, { usePermit: true })),
  )
  t.equal(permit.code, 'UNSUPPORTED_EXECUTION_TYPE')
  const token = await errorOf(() =>
    adapter.quoting.buildDepositSteps(
      depositRequest(BITCOIN_USERS.p2wpkh, 1_000_000n, {
        currencyId: '0x0000000000000000000000000000000000000000',
      }),
    ),
  )
  t.equal(token.code, 'UNSUPPORTED_CURRENCY')
  const evm = await errorOf(() =>
    adapter.quoting.buildDepositSteps({
      ...depositRequest(BITCOIN_USERS.p2wpkh, 1_000_000n),
      depositor: '0x1111111111111111111111111111111111111111',
    }),
  )
  t.equal(evm.code, 'INVALID_ADDRESS')
})
