/**
 * Hyperliquid quoting on the devnet: deposit nonces and tags, the exact action served for perps
 * USDC (`usdSend`) and spot tokens (`spotSend`), decimal amount strings, refusals, zero costs; and
 * a served action, signed by a wallet, is accepted by the venue and moves the balance.
 */
import { type DepositStepsRequest, isPontisError } from '@pontis/core/plugin'
import t from 'tap'
import { encodePacked, keccak256 } from 'viem'
import { HYPERLIQUID_NATIVE_CURRENCY_ID, hyperliquidDepositTag } from '../src/index.js'
import {
  actionOf,
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
const alice = HYPERLIQUID_USERS.alice

const request = (overrides: Partial<DepositStepsRequest> = {}): DepositStepsRequest => ({
  requestId: `0x${'11'.repeat(32)}`,
  depositor: alice.address,
  currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
  amount: 2_550_000_000n,
  usePermit: false,
  permitExpiry: 600,
  executeEndpoint: '/execute',
  nowSeconds: 1_767_225_600,
  depositNonce: 1_767_225_600_000n,
  ...overrides,
})

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
  } catch (error) {
    if (isPontisError(error)) return error.code
    throw error
  }
  return undefined
}

t.test('deposit nonces: ms timestamps, strictly increasing; tags bind sender and nonce', async (t) => {
  const quoting = adapter.quoting
  const now = 1_767_225_600_123
  const first = quoting.depositNonceTag?.(alice.address, now)
  const second = quoting.depositNonceTag?.(alice.address.toUpperCase().replace('0X', '0x'), now)
  const third = quoting.depositNonceTag?.(HYPERLIQUID_USERS.bob.address, now - 5000)
  t.ok(first && second && third)
  if (!first || !second || !third) return
  t.equal(first.nonce, BigInt(now), 'the first nonce is the time asked for')
  t.equal(second.nonce, BigInt(now) + 1n, 'two quotes in the same ms differ')
  t.equal(third.nonce, BigInt(now) + 2n, 'never below a nonce handed out')
  t.equal(first.tag, keccak256(encodePacked(['address', 'uint64'], [alice.address, first.nonce])))
  t.equal(first.tag, hyperliquidDepositTag(alice.address, first.nonce))
  t.not(first.tag, second.tag)
  const later = quoting.depositNonceTag?.(alice.address, now + 10_000)
  t.equal(later?.nonce, BigInt(now + 10_000), 'time moves the clock forward')
  t.throws(() => quoting.depositNonceTag?.('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', now), {
    code: 'INVALID_ADDRESS',
  })
})

t.test('perps USDC: one usdSend step to the depository', async (t) => {
  const steps = await adapter.quoting.buildDepositSteps(request())
  t.equal(steps.length, 1)
  t.match(steps[0], { id: 'deposit', kind: 'transaction', action: 'Confirm transfer on Hyperliquid' })
  t.same(steps[0]?.items[0]?.data, {
    format: 'hyperliquid-action',
    chainId: 1337,
    action: {
      type: 'usdSend',
      hyperliquidChain: 'Mainnet',
      signatureChainId: '0x66eee',
      destination: HYPERLIQUID_SOLVER.address,
      amount: '25.5',
      time: 1_767_225_600_000,
    },
    nonce: 1_767_225_600_000,
  })
})

t.test('spot tokens: spotSend with NAME:tokenid and the token decimals', async (t) => {
  const hype = actionOf(
    await adapter.quoting.buildDepositSteps(request({ currencyId: HYPERLIQUID_HYPE_ID, amount: 1n })),
  )
  t.same(hype.action, {
    type: 'spotSend',
    hyperliquidChain: 'Mainnet',
    signatureChainId: '0x66eee',
    destination: HYPERLIQUID_SOLVER.address,
    token: `HYPE:${HYPERLIQUID_HYPE_ID}`,
    amount: '0.00000001',
    time: 1_767_225_600_000,
  })
  const usdc = actionOf(
    await adapter.quoting.buildDepositSteps(
      request({ currencyId: HYPERLIQUID_SPOT_USDC_ID, amount: 100_000_000_000n }),
    ),
  )
  t.match(usdc.action, { type: 'spotSend', token: `USDC:${HYPERLIQUID_SPOT_USDC_ID}`, amount: '1000' })
  const testnet = await hyperliquidAdapter(devnet.url, {
    hyperliquidChain: 'Testnet',
    signatureChainId: '0xA4B1',
  })
  t.match(actionOf(await testnet.quoting.buildDepositSteps(request())).action, {
    hyperliquidChain: 'Testnet',
    signatureChainId: '0xa4b1',
  })
})

t.test('refusals', async (t) => {
  const { depositNonce: _omitted, ...withoutNonce } = request()
  t.equal(
    await codeOf(adapter.quoting.buildDepositSteps(withoutNonce)),
    'INVALID_REQUEST',
    'depositNonce is required',
  )
  t.equal(await codeOf(adapter.quoting.buildDepositSteps(request({ amount: 0n }))), 'AMOUNT_TOO_LOW')
  t.equal(
    await codeOf(adapter.quoting.buildDepositSteps(request({ currencyId: `0x${'ab'.repeat(16)}` }))),
    'UNSUPPORTED_CURRENCY',
    'a token the venue does not list',
  )
  t.equal(
    await codeOf(adapter.quoting.buildDepositSteps(request({ currencyId: `0x${'0'.repeat(40)}` }))),
    'INVALID_INPUT_CURRENCY',
  )
  t.equal(
    await codeOf(adapter.quoting.buildDepositSteps(request({ usePermit: true }))),
    'UNSUPPORTED_EXECUTION_TYPE',
  )
  t.equal(
    await codeOf(adapter.quoting.buildDepositSteps(request({ depositAddress: alice.address }))),
    'UNSUPPORTED_ROUTE',
  )
  t.equal(await codeOf(adapter.quoting.buildDepositSteps(request({ depositor: 'nope' }))), 'INVALID_ADDRESS')
})

t.test('costs and capabilities', async (t) => {
  t.equal(adapter.quoting.supportsDestinationCalls, false)
  t.equal(adapter.quoting.supportsGasTopup, false)
  t.equal(await adapter.quoting.supportsPermit(HYPERLIQUID_NATIVE_CURRENCY_ID), false)
  const origin = await adapter.quoting.estimateOriginCost({
    requestId: `0x${'11'.repeat(32)}`,
    depositor: alice.address,
    currencyId: HYPERLIQUID_HYPE_ID,
    amount: 1n,
    usePermit: false,
    viaDepositAddress: false,
  })
  t.same(origin, { currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID, amount: 0n })
  const fill = await adapter.quoting.estimateFillCost({
    orderId: `0x${'11'.repeat(32)}`,
    payer: HYPERLIQUID_SOLVER.address,
    recipient: alice.address,
    currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
    amount: 1n,
    calls: [],
    topupNativeAmount: 0n,
  })
  t.same(fill, { currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID, amount: 0n })
})

t.test('a served action, signed by a wallet, is accepted and moves the balance', async (t) => {
  const tag = adapter.quoting.depositNonceTag?.(alice.address, Date.now())
  if (!tag) throw new Error('no nonce')
  const before = devnet.balance(HYPERLIQUID_SOLVER.address, HYPERLIQUID_HYPE_ID)
  const served = actionOf(
    await adapter.quoting.buildDepositSteps(
      request({ currencyId: HYPERLIQUID_HYPE_ID, amount: 123_456_789n, depositNonce: tag.nonce }),
    ),
  )
  t.equal(served.action.amount, '1.23456789')
  const { answer } = await signAndPost(devnet, alice.privateKey, served)
  t.same(answer, { status: 'ok', response: { type: 'default' } })
  t.equal(devnet.balance(HYPERLIQUID_SOLVER.address, HYPERLIQUID_HYPE_ID), before + 123_456_789n)
})
