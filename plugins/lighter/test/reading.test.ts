/**
 * Reading on the venue simulator: deposits (transfers into the depository tagged with a request
 * id), what is not a deposit, unknown hashes, payouts and balances.
 */
import { PontisError } from '@pontis/core/plugin'
import { lighterSignTransfer } from '@pontis/devnet'
import t from 'tap'
import { LIGHTER_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  LIGHTER_EMPTY,
  LIGHTER_SOLVER,
  LIGHTER_UNKNOWN_ACCOUNT_INDEX,
  LIGHTER_USERS,
  type LighterDevAccount,
  lighterAdapter,
  signAndSendAsWallet,
  startDevnet,
  transferParametersOf,
} from './fixtures/lighter-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
// Currency "1" reads USDC on the spot route, to check both balance kinds.
const adapter = await lighterAdapter(devnet.url, {
  assets: {
    '0': { assetIndex: 3, decimals: 6, routeType: 0 },
    '1': { assetIndex: 3, decimals: 6, routeType: 1 },
  },
})
const { alice, bob } = LIGHTER_USERS
const requestIdOf = (n: number) => `0x${(0xdead00 + n).toString(16).padStart(64, '0')}`

async function deposit(user: LighterDevAccount, requestId: string, amount: bigint): Promise<string> {
  const steps = await adapter.quoting.buildDepositSteps({
    requestId,
    depositor: String(user.index),
    currencyId: LIGHTER_NATIVE_CURRENCY_ID,
    amount,
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute',
    nowSeconds: 0,
  })
  return signAndSendAsWallet(devnet, user, transferParametersOf(steps))
}

/** A transfer the user signs by hand (not from a served step). */
async function rawTransfer(
  user: LighterDevAccount,
  to: number,
  memo: string,
  amount = 1_000_000,
): Promise<string> {
  return signAndSendAsWallet(devnet, user, {
    toAccountIndex: to,
    assetIndex: 3,
    fromRouteType: 0,
    toRouteType: 0,
    amount,
    usdcFee: 10_000,
    memo,
  })
}

t.test('a served deposit reads back as one fact', async (t) => {
  const requestId = requestIdOf(1)
  const hash = await deposit(bob, requestId, 7_000_000n)
  const facts = await adapter.reading.readDeposits(hash)
  t.same(facts, {
    transactionId: hash,
    state: 'success',
    final: true,
    confirmations: 1,
    blockNumber: BigInt(devnet.venue.height),
    facts: [
      {
        index: 0,
        depository: String(LIGHTER_SOLVER.index),
        depositId: requestId,
        depositor: String(bob.index),
        currencyId: '0',
        amount: 7_000_000n,
      },
    ],
  })
  t.same(
    (await adapter.reading.readDeposits(hash.toUpperCase().replace('0X', '0x'))).facts.length,
    1,
    'any case',
  )
  const asFill = await adapter.reading.readFills?.(hash)
  t.same(asFill?.facts, [], 'a deposit is not a fill: it does not come out of the depository')
  t.equal(asFill?.state, 'success')
})

t.test('transfers that are not deposits', async (t) => {
  const toBob = await rawTransfer(alice, bob.index, requestIdOf(2))
  t.same((await adapter.reading.readDeposits(toBob)).facts, [], 'not to the depository')
  const untagged = await rawTransfer(alice, LIGHTER_SOLVER.index, `0x${'00'.repeat(32)}`)
  t.same((await adapter.reading.readDeposits(untagged)).facts, [], 'a zero memo names no request')
})

t.test('unknown and malformed hashes', async (t) => {
  const unknown = `0x${'ab'.repeat(32)}`
  t.same(await adapter.reading.readDeposits(unknown), {
    transactionId: unknown,
    state: 'not_found',
    final: false,
    confirmations: 0,
    facts: [],
  })
  t.equal((await adapter.reading.readFills?.(unknown))?.state, 'not_found')
  t.equal((await adapter.reading.readRefunds?.(unknown))?.state, 'not_found')
  await t.rejects(adapter.reading.readDeposits('not a hash'), PontisError)
})

t.test('a fill signed directly with the solver key reads as a payout', async (t) => {
  const orderId = requestIdOf(3)
  const signed = lighterSignTransfer(
    {
      FromAccountIndex: LIGHTER_SOLVER.index,
      ApiKeyIndex: LIGHTER_SOLVER.apiKeyIndex,
      ToAccountIndex: alice.index,
      AssetIndex: 3,
      FromRouteType: 0,
      ToRouteType: 0,
      Amount: 3_000_000,
      USDCFee: 10_000,
      Memo: orderId,
      ExpiredAt: Date.now() + 60_000,
      Nonce: devnet.venue.nextNonce(LIGHTER_SOLVER.index, LIGHTER_SOLVER.apiKeyIndex),
    },
    LIGHTER_SOLVER.apiKeySeed,
  )
  devnet.venue.submit(12, signed.txInfo)
  const expected = [
    { index: 0, orderId, recipient: String(alice.index), currencyId: '0', amount: 3_000_000n },
  ]
  t.same((await adapter.reading.readFills?.(signed.hash))?.facts, expected)
  t.same((await adapter.reading.readRefunds?.(signed.hash))?.facts, expected)
  t.same((await adapter.reading.readDeposits(signed.hash)).facts, [], 'a payout is not a deposit')
})

t.test('balances', async (t) => {
  devnet.fund(LIGHTER_EMPTY.index, 1_234_567n)
  t.equal(await adapter.reading.readBalance(String(LIGHTER_EMPTY.index), '0'), 1_234_567n, 'perps collateral')
  t.equal(
    await adapter.reading.readBalance(String(alice.index), '1'),
    devnet.balanceOf(alice.index, 1),
    'spot',
  )
  t.equal(await adapter.reading.readBalance(String(alice.index), '1'), 500_000_000n)
  t.equal(await adapter.reading.readBalance(String(alice.index), '0'), devnet.balanceOf(alice.index))
  t.equal(
    await adapter.reading.readBalance(String(LIGHTER_UNKNOWN_ACCOUNT_INDEX), '0'),
    0n,
    'no account holds nothing',
  )
  await t.rejects(adapter.reading.readBalance(alice.l1Address, '0'), { code: 'INVALID_ADDRESS' })
  await t.rejects(adapter.reading.readBalance(String(alice.index), '9'), { code: 'UNSUPPORTED_CURRENCY' })
  devnet.fund(LIGHTER_EMPTY.index, -1_234_567n)
})
