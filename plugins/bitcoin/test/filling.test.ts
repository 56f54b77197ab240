import {
  type CoinReservations,
  type FillRequest,
  isPontisError,
  PontisError,
  type RefundRequest,
  type SignedTransaction,
} from '@pontis/core/plugin'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import * as btc from '@scure/btc-signer'
import { networks, Psbt } from 'bitcoinjs-lib'
import t from 'tap'
import { BITCOIN_NATIVE_CURRENCY_ID, EsploraBroadcastError } from '../src/index.js'
import {
  BITCOIN_SOLVER,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  bitcoinAdapter,
  SOLVER_KEY,
  scriptHexOf,
  startDevnet,
  VAULT_KEY,
} from './fixtures/bitcoin-devnet.js'

const RATE = 5n
const devnet = await startDevnet({ '2': Number(RATE) })
t.teardown(() => devnet.stop())
const adapter = await bitcoinAdapter(devnet.url)
const credentials = { solverKey: SOLVER_KEY, allocatorKey: VAULT_KEY }

let nextId = 1
const newId = () => `0x${(0xf000 + nextId++).toString(16).padStart(64, '0')}`

function fill(
  amount: bigint,
  recipient = BITCOIN_USERS.p2tr.address,
  extra: Partial<FillRequest> = {},
): FillRequest {
  return {
    orderId: newId(),
    recipient,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount,
    calls: [],
    topupNativeAmount: 0n,
    ...extra,
  }
}

/** The signed transaction decoded independently, with the fee from the solver coins it spends. */
async function decode(raw: string) {
  const transaction = btc.Transaction.fromRaw(Buffer.from(raw, 'hex'), { allowUnknownOutputs: true })
  let spent = 0n
  const inputs: string[] = []
  for (let index = 0; index < transaction.inputsLength; index++) {
    const input = transaction.getInput(index)
    const txid = Buffer.from(input.txid as Uint8Array).toString('hex')
    inputs.push(`${txid}:${input.index}`)
    const previous = (await (await fetch(`${devnet.url}/tx/${txid}`)).json()) as {
      vout: Array<{ value: number }>
    }
    spent += BigInt(previous.vout[input.index as number]?.value as number)
  }
  const outputs = Array.from({ length: transaction.outputsLength }, (_, index) => {
    const output = transaction.getOutput(index)
    return {
      script: Buffer.from(output.script as Uint8Array).toString('hex'),
      amount: output.amount as bigint,
    }
  })
  const paid = outputs.reduce((sum, output) => sum + output.amount, 0n)
  return { transaction, inputs, spent, outputs, fee: spent - paid }
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

t.test('the solver signs as its P2WPKH address; Bitcoin has no nonces', async (t) => {
  t.equal(adapter.filling.solverAddress(credentials), BITCOIN_SOLVER.address)
  t.equal(await adapter.filling.nextNonce(BITCOIN_SOLVER.address), 0n)
})

t.test(
  'a fill pays the recipient, tags the order id, returns change; read back and followed to final',
  async (t) => {
    const request = fill(12_345_678n)
    const signed = await adapter.filling.signFill(request, credentials)
    t.equal(signed.amount, request.amount)
    const { transaction, outputs, fee } = await decode(signed.raw)
    t.equal(transaction.id, signed.transactionId)
    t.equal(outputs.length, 3)
    t.same(outputs[0], { script: scriptHexOf(request.recipient), amount: request.amount })
    t.same(outputs[1], { script: `6a20${request.orderId.slice(2)}`, amount: 0n })
    t.equal(outputs[2]?.script, scriptHexOf(BITCOIN_SOLVER.address))
    t.ok(fee >= RATE * BigInt(transaction.vsize) && fee <= RATE * BigInt(transaction.vsize + 1), `fee ${fee}`)

    t.match(await adapter.filling.outcome(signed.transactionId), { state: 'not_found', final: false })
    await adapter.filling.broadcast(signed.raw)
    await adapter.filling.broadcast(signed.raw) // already in the mempool: not an error
    t.match(await adapter.filling.outcome(signed.transactionId), {
      state: 'pending',
      confirmations: 0,
      final: false,
    })
    const facts = await adapter.reading.readFills?.(signed.transactionId)
    t.same(facts?.facts, [
      {
        index: 0,
        orderId: request.orderId,
        recipient: request.recipient,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: request.amount,
      },
    ])
    devnet.mine(1)
    await adapter.filling.broadcast(signed.raw) // already mined: not an error either
    t.match(await adapter.filling.outcome(signed.transactionId), {
      state: 'success',
      confirmations: 1,
      final: false,
    })
    devnet.mine(1)
    t.match(await adapter.filling.outcome(signed.transactionId), {
      state: 'success',
      confirmations: 2,
      final: true,
    })
  },
)

t.test('fills signed in a row, or at once, never spend the same coin', async (t) => {
  const first = await adapter.filling.signFill(fill(1_000_000n), credentials)
  const second = await adapter.filling.signFill(fill(1_000_000n), credentials)
  const [third, fourth] = await Promise.all([
    adapter.filling.signFill(fill(1_000_000n), credentials),
    adapter.filling.signFill(fill(1_000_000n), credentials),
  ])
  const signed = [first, second, third, fourth] as SignedTransaction[]
  const spent = (await Promise.all(signed.map(async (one) => (await decode(one.raw)).inputs))).flat()
  t.equal(new Set(spent).size, spent.length, `disjoint inputs: ${spent.join(' ')}`)
  // All four are valid together: none conflicts with another.
  for (const one of signed) await adapter.filling.broadcast(one.raw)
  devnet.mine(1)
  for (const one of signed) t.match(await adapter.filling.outcome(one.transactionId), { state: 'success' })
})

t.test('a refund out of the vault, signed with the vault key', async (t) => {
  devnet.fund(BITCOIN_VAULT.address, 30_000_000n)
  const request: RefundRequest = {
    refundId: newId(),
    source: { kind: 'depository' },
    recipient: BITCOIN_USERS.p2pkh.address,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount: 4_000_000n,
  }
  const signed = await adapter.filling.signRefund(request, credentials)
  t.equal(signed.amount, request.amount)
  const { outputs } = await decode(signed.raw)
  t.same(outputs[0], { script: scriptHexOf(request.recipient), amount: request.amount })
  t.equal(outputs[2]?.script, scriptHexOf(BITCOIN_VAULT.address), 'change back to the vault')
  await adapter.filling.broadcast(signed.raw)
  const facts = await adapter.reading.readRefunds?.(signed.transactionId)
  t.same(facts?.facts, [
    {
      index: 0,
      orderId: request.refundId,
      recipient: request.recipient,
      currencyId: BITCOIN_NATIVE_CURRENCY_ID,
      amount: request.amount,
    },
  ])

  const noKey = await errorOf(() => adapter.filling.signRefund(request, { solverKey: SOLVER_KEY }))
  t.equal(noKey.code, 'UNSUPPORTED_EXECUTION_TYPE')
  const wrongKey = await errorOf(() =>
    adapter.filling.signRefund(request, { solverKey: SOLVER_KEY, allocatorKey: SOLVER_KEY }),
  )
  t.match(wrongKey.message, /is not the vault/)
})

t.test(
  'a repayment pays the solver back out of the vault, tagged with its id, its fee out of the leg',
  async (t) => {
    devnet.fund(BITCOIN_VAULT.address, 30_000_000n)
    const repayment = {
      repaymentId: newId(),
      recipient: adapter.filling.solverAddress(credentials),
      legs: [{ currencyId: BITCOIN_NATIVE_CURRENCY_ID, amount: 7_000_000n }],
    }
    t.equal(adapter.filling.maxRepaymentLegs, 1)
    const signed = await adapter.filling.signRepayment!(repayment, credentials)
    const { outputs, fee, spent } = await decode(signed.raw)
    // The vault holds exactly what it owes: a fee on top would come out of another request's deposit
    // (the soak run's last Bitcoin repayment could never pay).
    t.equal(signed.amount + fee, 7_000_000n, 'the vault parts with the leg exactly, fee included')
    t.ok(fee > 0n)
    t.same(
      outputs[0],
      { script: scriptHexOf(BITCOIN_SOLVER.address), amount: signed.amount },
      'to the solver',
    )
    t.equal(outputs[2]?.script, scriptHexOf(BITCOIN_VAULT.address), 'change back to the vault')
    t.equal(outputs[2]?.amount, spent - 7_000_000n, 'the change is what the vault keeps')
    const head = await adapter.reading.scanDeposits?.(undefined)
    await adapter.filling.broadcast(signed.raw)
    const facts = await adapter.reading.readRefunds?.(signed.transactionId)
    t.equal(facts?.facts[0]?.orderId, repayment.repaymentId, 'tagged with the repayment id')
    t.same(
      (await adapter.reading.readDeposits(signed.transactionId)).facts,
      [],
      'its change to the vault is no deposit (it was refunded as an orphan to the vault itself)',
    )
    const scan = await adapter.reading.scanDeposits?.(head?.cursor)
    t.notOk(
      scan?.deposits.some((one) => one.transactionId === signed.transactionId),
      'nor does a deposit scan report it',
    )
    const twoLegs = await errorOf(() =>
      adapter.filling.signRepayment!(
        { ...repayment, legs: [...repayment.legs, ...repayment.legs] },
        credentials,
      ),
    )
    t.equal(twoLegs.code, 'INVALID_REQUEST')
    const noKey = await errorOf(() => adapter.filling.signRepayment!(repayment, { solverKey: SOLVER_KEY }))
    t.equal(noKey.code, 'UNSUPPORTED_EXECUTION_TYPE')
  },
)

t.test('a refund out of a deposit address pays its own fee out of the amount', async (t) => {
  const requestId = newId()
  const address = await adapter.quoting.createDepositAddress?.(requestId)
  if (!address) throw new Error('deposit addresses are configured')
  devnet.fund(address, 2_000_000n)
  const request: RefundRequest = {
    refundId: newId(),
    source: { kind: 'depositAddress', requestId },
    recipient: BITCOIN_USERS['p2sh-p2wpkh'].address,
    currencyId: BITCOIN_NATIVE_CURRENCY_ID,
    amount: 2_000_000n,
  }
  const signed = await adapter.filling.signRefund(request, credentials)
  const { outputs, fee, transaction } = await decode(signed.raw)
  t.equal(outputs.length, 2, 'the whole balance goes: no change')
  t.same(outputs[0], { script: scriptHexOf(request.recipient), amount: signed.amount })
  t.equal(signed.amount + fee, request.amount)
  t.ok(fee >= RATE * BigInt(transaction.vsize), `fee ${fee} for ${transaction.vsize} vB`)
  await adapter.filling.broadcast(signed.raw)
  devnet.mine(1)
  t.equal(await adapter.reading.readBalance(address, BITCOIN_NATIVE_CURRENCY_ID), 0n)
  t.equal(
    (await adapter.reading.readBalance(request.recipient, BITCOIN_NATIVE_CURRENCY_ID)) >= signed.amount,
    true,
  )

  const tooSmall = await errorOf(() =>
    adapter.filling.signRefund({ ...request, refundId: newId(), amount: 600n }, credentials),
  )
  t.equal(tooSmall.code, 'INSUFFICIENT_FUNDS', 'an empty address cannot refund')
  const withoutSeed = await bitcoinAdapter(devnet.url, { depositAddressSeed: undefined })
  t.equal(
    (await errorOf(() => withoutSeed.filling.signRefund(request, credentials))).code,
    'UNSUPPORTED_ROUTE',
  )
})

t.test('what a Bitcoin fill refuses', async (t) => {
  const calls = await errorOf(() =>
    adapter.filling.signFill(
      fill(1_000_000n, undefined, { calls: [{ to: 'x', value: 0n, data: '0x' }] }),
      credentials,
    ),
  )
  t.equal(calls.code, 'EXTRA_TXS_NOT_SUPPORTED')
  const topup = await errorOf(() =>
    adapter.filling.signFill(fill(1_000_000n, undefined, { topupNativeAmount: 1n }), credentials),
  )
  t.equal(topup.code, 'UNSUPPORTED_ROUTE')
  const recipient = await errorOf(() =>
    adapter.filling.signFill(fill(1_000_000n, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'), credentials),
  )
  t.equal(recipient.code, 'INVALID_RECIPIENT')
  t.match(recipient.message, /Bitcoin mainnet address but this chain is Bitcoin regtest/)
  const dust = await errorOf(() => adapter.filling.signFill(fill(545n), credentials))
  t.equal(dust.code, 'AMOUNT_TOO_LOW')
  const tooMuch = await errorOf(() => adapter.filling.signFill(fill(100_000_000_000n), credentials))
  t.equal(tooMuch.code, 'INSUFFICIENT_FUNDS')
  const badKey = await errorOf(() => adapter.filling.signFill(fill(1_000_000n), { solverKey: 'not a key' }))
  t.equal(badKey.code, 'INVALID_REQUEST')
})

t.test(
  "another API's deposit PSBT: its payment and tag sent from the solver's coins; what could take more is refused",
  async (t) => {
    const signStep = adapter.filling.signStep
    if (!signStep) throw new Error('the Bitcoin plugin has no signStep')
    const requestId = newId()
    const steps = await adapter.quoting.buildDepositSteps(
      depositStepsRequest({
        requestId,
        depositor: BITCOIN_SOLVER.address,
        currencyId: BITCOIN_NATIVE_CURRENCY_ID,
        amount: 2_000_000n,
      }),
    )
    const item = steps[0]?.items[0]?.data as unknown as Readonly<Record<string, unknown>>
    const spend = { currencyId: BITCOIN_NATIVE_CURRENCY_ID, amount: 2_000_000n }
    const signed = await signStep(item, spend, credentials)
    t.equal(signed.amount, 2_000_000n)
    const { transaction, outputs, fee } = await decode(signed.raw)
    t.same(
      outputs[0],
      { script: scriptHexOf(BITCOIN_VAULT.address), amount: 2_000_000n },
      'the deposit to the vault',
    )
    t.same(outputs[1], { script: `6a20${requestId.slice(2)}`, amount: 0n }, 'tagged with the request id')
    t.equal(outputs[2]?.script, scriptHexOf(BITCOIN_SOLVER.address), 'change back to the solver')
    t.ok(fee >= RATE * BigInt(transaction.vsize), 'the fee on top')
    await adapter.filling.broadcast(signed.raw)
    devnet.mine(1)
    t.match(
      (await adapter.reading.readDeposits(signed.transactionId)).facts,
      [{ depositId: requestId, currencyId: BITCOIN_NATIVE_CURRENCY_ID, amount: 2_000_000n }],
      'read back as the deposit',
    )

    const psbt = Psbt.fromHex(item.psbt as string, { network: networks.regtest })
    const withOutput = (script: Uint8Array, value: bigint) => {
      const changed = psbt.clone()
      changed.addOutput({ script, value })
      return { ...item, psbt: changed.toHex() }
    }
    const untagged = new Psbt({ network: networks.regtest })
    untagged.addInput({ hash: '11'.repeat(32), index: 0 })
    untagged.addOutput({ script: Buffer.from(scriptHexOf(BITCOIN_VAULT.address), 'hex'), value: 1_000_000n })
    const cases: Array<[string, Readonly<Record<string, unknown>>, typeof spend, RegExp]> = [
      [
        'more than the move',
        item,
        { ...spend, amount: 1_999_999n },
        /sends 2000000, more than the move's 1999999/,
      ],
      ['a token', item, { ...spend, currencyId: 'usdc' }, /has only its native currency/],
      ['another chain', { ...item, chainId: 1 }, spend, /it is for chain 1/],
      [
        'another format',
        { ...item, format: 'svm-transaction' },
        spend,
        /'svm-transaction' item, not 'bitcoin-psbt'/,
      ],
      ['no PSBT', { ...item, psbt: 'zz' }, spend, /is not a hex PSBT/],
      [
        'a second payment',
        withOutput(Buffer.from(scriptHexOf(BITCOIN_USERS.p2wpkh.address), 'hex'), 10_000n),
        spend,
        /pays 2 addresses, not one/,
      ],
      [
        'other data',
        withOutput(Buffer.from('6a0401020304', 'hex'), 0n),
        spend,
        /data other than one 32-byte tag/,
      ],
      ['no tag', { ...item, psbt: untagged.toHex() }, spend, /carries 0 tags, not one/],
    ]
    for (const [what, candidate, caseSpend, message] of cases)
      await t.rejects(signStep(candidate, caseSpend, credentials), { code: 'INVALID_REQUEST', message }, what)
  },
)

t.test('a conflicting transaction is refused at broadcast', async (t) => {
  // A fresh adapter has no reservations: it picks the same coin as the one signed above.
  const other = await bitcoinAdapter(devnet.url)
  const request = fill(2_000_000n, BITCOIN_USERS.p2wpkh.address)
  const first = await adapter.filling.signFill(request, credentials)
  const second = await other.filling.signFill({ ...request, orderId: newId() }, credentials)
  t.same((await decode(first.raw)).inputs, (await decode(second.raw)).inputs)
  await adapter.filling.broadcast(first.raw)
  await t.rejects(other.filling.broadcast(second.raw), EsploraBroadcastError)
})

t.test('two adapters sharing coin holds (two workers on one store) never spend the same coin', async (t) => {
  // The holds as the solver's store keeps them, shared by two adapters that know nothing of each other.
  const holds = new Map<string, number>()
  const coins: CoinReservations = {
    async held(ids) {
      return new Set(ids.filter((id) => holds.has(id)))
    },
    async hold(ids, ttlMs) {
      t.equal(ttlMs, 600_000, 'held for reservationSeconds')
      if (ids.some((id) => holds.has(id))) return false
      for (const id of ids) holds.set(id, ttlMs)
      return true
    },
  }
  const workers = [await bitcoinAdapter(devnet.url), await bitcoinAdapter(devnet.url)]
  const signed = await Promise.all(
    Array.from({ length: 4 }, (_, index) =>
      workers[index % 2]!.filling.signFill(fill(1_000_000n, BITCOIN_USERS.p2wpkh.address), credentials, {
        coins,
      }),
    ),
  )
  const spent = (await Promise.all(signed.map(async (one) => (await decode(one.raw)).inputs))).flat()
  t.equal(new Set(spent).size, spent.length, `disjoint inputs: ${spent.join(' ')}`)
  t.same([...holds.keys()].sort(), [...spent].sort(), 'every spent coin is held in the shared holds')
  for (const one of signed) await workers[0]!.filling.broadcast(one.raw)
  devnet.mine(1)
  for (const one of signed) t.match(await adapter.filling.outcome(one.transactionId), { state: 'success' })
})

t.test('short only because every coin is held: a retryable error, never INSUFFICIENT_FUNDS', async (t) => {
  // Every coin held, as by transactions signed before a restart and not yet on chain.
  const everything: CoinReservations = {
    async held(ids) {
      return new Set(ids)
    },
    async hold() {
      return false
    },
  }
  const error = await adapter.filling
    .signFill(fill(1_000_000n, BITCOIN_USERS.p2wpkh.address), credentials, { coins: everything })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    )
  t.ok(error instanceof Error, 'signing fails')
  t.notOk(isPontisError(error), 'not a catalogued refusal, so the solver retries the job')
  t.match(String(error), /held by signed transactions not yet on chain/)
  const none: CoinReservations = {
    async held() {
      return new Set()
    },
    async hold() {
      return true
    },
  }
  await t.rejects(
    adapter.filling.signFill(fill(10n ** 15n, BITCOIN_USERS.p2wpkh.address), credentials, { coins: none }),
    { code: 'INSUFFICIENT_FUNDS' },
    'truly short, with nothing held: refused as before',
  )
})

t.test('a stuck fill is replaced by fee (RBF) up to maxReplacementFeeRate, and mined once', async (t) => {
  // Capped at 10 sat/vB: 5 → 7 → 9 → (11 is over the cap) none.
  const capped = await bitcoinAdapter(devnet.url, { maxReplacementFeeRate: 10 })
  const recipient = BITCOIN_USERS.p2pkh.address
  const first = await capped.filling.signFill(fill(700_000n, recipient), credentials)
  await capped.filling.broadcast(first.raw)
  const replace = capped.filling.replace as NonNullable<typeof capped.filling.replace>
  const chainOf: SignedTransaction[] = [first]
  for (;;) {
    const last = chainOf.at(-1) as SignedTransaction
    const next = await replace(last.raw, credentials)
    if (!next) break
    const [before, after] = await Promise.all([decode(last.raw), decode(next.raw)])
    t.same(after.inputs, before.inputs, 'the same coins: only one of them can be mined')
    t.ok(after.fee > before.fee, `pays more: ${before.fee} -> ${after.fee}`)
    t.same(after.outputs.slice(0, 2), before.outputs.slice(0, 2), 'the same payment and tag')
    await capped.filling.broadcast(next.raw)
    t.match(await capped.filling.outcome(last.transactionId), { state: 'not_found' }, 'the old one is gone')
    chainOf.push({ ...next, amount: last.amount })
  }
  t.equal(chainOf.length, 3, 'replaced twice, then the cap is reached')
  const last = chainOf.at(-1) as SignedTransaction
  const { fee, transaction } = await decode(last.raw)
  t.ok(fee <= 10n * BigInt(transaction.vsize), 'within the cap')
  devnet.mine(1)
  t.match(await capped.filling.outcome(last.transactionId), { state: 'success' })
  for (const earlier of chainOf.slice(0, -1))
    t.match(await capped.filling.outcome(earlier.transactionId), { state: 'not_found' }, 'never mined')
  t.equal(
    await capped.filling.replace?.(last.raw, { solverKey: VAULT_KEY }),
    undefined,
    'a transaction that is not the signer’s is not replaced',
  )
})
