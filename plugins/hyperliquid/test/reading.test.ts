/**
 * Hyperliquid reads on the devnet: deposits (perps and spot) with depositId = tag(sender, nonce),
 * sends elsewhere, failed and unknown transactions, payouts, balances and deposit scans.
 */
import t from 'tap'
import { HYPERLIQUID_NATIVE_CURRENCY_ID, hyperliquidDepositTag } from '../src/index.js'
import {
  actionOf,
  HYPERLIQUID_EMPTY,
  HYPERLIQUID_HYPE_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_SPOT_USDC_ID,
  HYPERLIQUID_USERS,
  hyperliquidAdapter,
  signAndPost,
  startDevnet,
} from './fixtures/hyperliquid-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await hyperliquidAdapter(devnet.url)
const { alice, bob } = HYPERLIQUID_USERS

/** A deposit of `amount` of `currencyId` from `user`, built by the plugin and posted by the wallet. */
async function deposit(user: typeof alice, currencyId: string, amount: bigint) {
  const tag = adapter.quoting.depositNonceTag?.(user.address, Date.now())
  if (!tag) throw new Error('no nonce')
  const served = actionOf(
    await adapter.quoting.buildDepositSteps({
      requestId: `0x${'22'.repeat(32)}`,
      depositor: user.address,
      currencyId,
      amount,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute',
      nowSeconds: Math.floor(Date.now() / 1000),
      depositNonce: tag.nonce,
    }),
  )
  const posted = await signAndPost(devnet, user.privateKey, served)
  return { ...posted, tag, served }
}

t.test('deposits read back with their tag', async (t) => {
  const perps = await deposit(alice, HYPERLIQUID_NATIVE_CURRENCY_ID, 1_000_000_000n)
  t.same(perps.answer, { status: 'ok', response: { type: 'default' } })
  const read = await adapter.reading.readDeposits(perps.hash)
  t.match(read, { transactionId: perps.hash, state: 'success', final: true, confirmations: 1 })
  t.equal(typeof read.blockNumber, 'bigint')
  t.same(read.facts, [
    {
      index: 0,
      depository: HYPERLIQUID_SOLVER.address,
      depositId: perps.tag.tag,
      depositor: alice.address,
      currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
      amount: 1_000_000_000n,
    },
  ])
  const spot = await deposit(bob, HYPERLIQUID_HYPE_ID, 250_000_000n)
  t.same((await adapter.reading.readDeposits(spot.hash)).facts, [
    {
      index: 0,
      depository: HYPERLIQUID_SOLVER.address,
      depositId: hyperliquidDepositTag(bob.address, spot.tag.nonce),
      depositor: bob.address,
      currencyId: HYPERLIQUID_HYPE_ID,
      amount: 250_000_000n,
    },
  ])
})

t.test('a send elsewhere, a failed send, an unknown hash', async (t) => {
  const elsewhere = await signAndPost(devnet, alice.privateKey, {
    action: {
      type: 'usdSend',
      hyperliquidChain: 'Mainnet',
      signatureChainId: '0x66eee',
      destination: bob.address,
      amount: '1',
      time: Date.now() + 5,
    },
    nonce: Date.now() + 5,
  })
  t.match(
    await adapter.reading.readDeposits(elsewhere.hash),
    { state: 'success', facts: [] },
    'not a deposit',
  )
  t.equal(adapter.reading.readFills, undefined, 'sends carry no order id: no payout reads')

  const tooMuch = await deposit(alice, HYPERLIQUID_HYPE_ID, 1_000_000_000_000n)
  t.match(tooMuch.answer, { status: 'err', response: 'Insufficient balance for token transfer' })
  t.match(await adapter.reading.readDeposits(tooMuch.hash), { state: 'reverted', final: true, facts: [] })

  t.match(await adapter.reading.readDeposits(`0x${'cd'.repeat(32)}`), {
    state: 'not_found',
    facts: [],
    final: false,
  })
  await t.rejects(adapter.reading.readDeposits('0x1234'), { code: 'INVALID_REQUEST' })
})

t.test('balances: perps withdrawable and spot totals', async (t) => {
  const empty = HYPERLIQUID_EMPTY.address
  t.equal(await adapter.reading.readBalance(empty, HYPERLIQUID_NATIVE_CURRENCY_ID), 0n)
  t.equal(await adapter.reading.readBalance(empty, HYPERLIQUID_HYPE_ID), 0n)
  devnet.fund(empty, HYPERLIQUID_NATIVE_CURRENCY_ID, 1_234_567_891n)
  devnet.fund(empty, HYPERLIQUID_SPOT_USDC_ID, 7n)
  t.equal(await adapter.reading.readBalance(empty, HYPERLIQUID_NATIVE_CURRENCY_ID), 1_234_567_891n)
  t.equal(
    await adapter.reading.readBalance(empty.toUpperCase().replace('0X', '0x'), HYPERLIQUID_SPOT_USDC_ID),
    7n,
  )
  t.equal(
    await adapter.reading.readBalance(bob.address, HYPERLIQUID_HYPE_ID),
    devnet.balance(bob.address, HYPERLIQUID_HYPE_ID),
  )
  await t.rejects(adapter.reading.readBalance(empty, `0x${'ef'.repeat(16)}`), {
    code: 'UNSUPPORTED_CURRENCY',
  })
  await t.rejects(adapter.reading.readBalance('nope', HYPERLIQUID_HYPE_ID), { code: 'INVALID_ADDRESS' })
})

t.test('deposit scans follow the depository ledger from a time cursor', async (t) => {
  const scan = adapter.reading.scanDeposits
  if (!scan) throw new Error('no scans')
  const head = await scan(undefined)
  t.match(head, { deposits: [], caughtUp: true })
  const made = await deposit(alice, HYPERLIQUID_SPOT_USDC_ID, 42n)
  const next = await scan(head.cursor)
  t.equal(next.caughtUp, true)
  t.match(next.deposits, [
    {
      transactionId: made.hash,
      depositId: made.tag.tag,
      depositor: alice.address,
      currencyId: HYPERLIQUID_SPOT_USDC_ID,
      amount: 42n,
      confirmations: 1,
    },
  ])
  t.ok(BigInt(next.cursor) >= BigInt(head.cursor), 'the cursor moves forward')
  await t.rejects(scan('not a cursor'), { code: 'INVALID_REQUEST' })
})
