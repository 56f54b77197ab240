/**
 * Quoting on the venue simulator: the exact transfer action served, fees read from the venue,
 * refusal of accounts that do not exist, and the account lookup by L1 address.
 */
import { PontisError } from '@pontis/core/plugin'
import t from 'tap'
import { LIGHTER_NATIVE_CURRENCY_ID, lookupLighterAccounts } from '../src/index.js'
import {
  LIGHTER_SOLVER,
  LIGHTER_UNKNOWN_ACCOUNT_INDEX,
  LIGHTER_UNKNOWN_L1_ADDRESS,
  LIGHTER_USERS,
  lighterAdapter,
  startDevnet,
} from './fixtures/lighter-devnet.js'

const devnet = await startDevnet(10_000n)
t.teardown(() => devnet.stop())
const adapter = await lighterAdapter(devnet.url)
const requestId = `0x${'Ab'.repeat(32)}`
const { alice, aliceSub, bob } = LIGHTER_USERS

const depositRequest = (depositor: string, amount = 12_345_678n) => ({
  requestId,
  depositor,
  currencyId: LIGHTER_NATIVE_CURRENCY_ID,
  amount,
  usePermit: false,
  permitExpiry: 0,
  executeEndpoint: '/execute',
  nowSeconds: 1_700_000_000,
})

async function rejection(run: () => Promise<unknown>): Promise<PontisError> {
  try {
    await run()
  } catch (error) {
    if (error instanceof PontisError) return error
    throw error
  }
  throw new Error('did not reject')
}

t.test('capabilities', async (t) => {
  t.equal(adapter.quoting.supportsDestinationCalls, false)
  t.equal(adapter.quoting.supportsGasTopup, false)
  t.equal(await adapter.quoting.supportsPermit(LIGHTER_NATIVE_CURRENCY_ID), false)
  t.same(adapter.finality, {
    fastConfirmations: 1,
    slowConfirmations: 1,
    slowRequiresFinalized: false,
    finalOnExecution: true,
  })
})

t.test('the deposit step is one transfer action to the depository tagged with the request id', async (t) => {
  const steps = await adapter.quoting.buildDepositSteps(depositRequest(String(alice.index)))
  t.equal(steps.length, 1)
  const [step] = steps
  t.match(step, {
    id: 'deposit',
    kind: 'transaction',
    action: 'Confirm transfer on the exchange',
    description: String,
  })
  t.same(step?.items, [
    {
      data: {
        format: 'lighter-transfer',
        chainId: 3586256,
        action: {
          type: 'transfer',
          parameters: {
            toAccountIndex: LIGHTER_SOLVER.index,
            assetIndex: 3,
            fromRouteType: 0,
            toRouteType: 0,
            amount: 12_345_678,
            usdcFee: 10_000,
            memo: requestId.toLowerCase(),
          },
        },
      },
    },
  ])
  const json = JSON.parse(JSON.stringify(step?.items[0]?.data)) as {
    action: { parameters: Record<string, unknown> }
  }
  t.equal(typeof json.action.parameters.amount, 'number', 'numbers are JSON numbers')
  const sub = await adapter.quoting.buildDepositSteps(depositRequest(String(aliceSub.index)))
  t.equal(sub.length, 1, 'a sub-account can withdraw too')
})

t.test('fees are the venue transfer fee, read from the venue', async (t) => {
  const fillCost = () =>
    adapter.quoting.estimateFillCost({
      orderId: requestId,
      payer: String(LIGHTER_SOLVER.index),
      recipient: String(bob.index),
      currencyId: LIGHTER_NATIVE_CURRENCY_ID,
      amount: 1_000_000n,
      calls: [],
      topupNativeAmount: 0n,
    })
  const originCost = () =>
    adapter.quoting.estimateOriginCost({
      requestId,
      depositor: String(alice.index),
      currencyId: LIGHTER_NATIVE_CURRENCY_ID,
      amount: 1_000_000n,
      usePermit: false,
      viaDepositAddress: false,
    })
  t.same(await originCost(), { currencyId: '0', amount: 10_000n })
  t.same(await fillCost(), { currencyId: '0', amount: 10_000n })
  devnet.setTransferFee(37_500n)
  t.same(await originCost(), { currencyId: '0', amount: 37_500n })
  t.same(await fillCost(), { currencyId: '0', amount: 37_500n })
  const steps = await adapter.quoting.buildDepositSteps(depositRequest(String(alice.index)))
  t.match(steps[0]?.items[0]?.data, { action: { parameters: { usdcFee: 37_500 } } })
  devnet.setTransferFee(10_000n)
})

t.test('accounts that do not exist are refused', async (t) => {
  const unknown = String(LIGHTER_UNKNOWN_ACCOUNT_INDEX)
  const steps = await rejection(() => adapter.quoting.buildDepositSteps(depositRequest(unknown)))
  t.equal(steps.code, 'INVALID_ADDRESS', 'origin user')
  t.match(steps.message, /no exchange account has this index/)
  const origin = await rejection(() =>
    adapter.quoting.estimateOriginCost({
      requestId,
      depositor: unknown,
      currencyId: '0',
      amount: 1n,
      usePermit: false,
      viaDepositAddress: false,
    }),
  )
  t.equal(origin.code, 'INVALID_ADDRESS')
  const fill = await rejection(() =>
    adapter.quoting.estimateFillCost({
      orderId: requestId,
      payer: String(LIGHTER_SOLVER.index),
      recipient: unknown,
      currencyId: '0',
      amount: 1n,
      calls: [],
      topupNativeAmount: 0n,
    }),
  )
  t.equal(fill.code, 'INVALID_RECIPIENT', 'destination recipient')
  t.match(fill.message, /accountsByL1Address/)
  const wallet = await rejection(() =>
    adapter.quoting.buildDepositSteps(depositRequest('0xa11ce00000000000000000000000000000000a11')),
  )
  t.equal(wallet.code, 'INVALID_ADDRESS', 'a wallet address as user')
})

t.test('requests the venue cannot serve', async (t) => {
  t.equal(
    (
      await rejection(() =>
        adapter.quoting.buildDepositSteps({ ...depositRequest(String(alice.index)), currencyId: '5' }),
      )
    ).code,
    'UNSUPPORTED_CURRENCY',
  )
  t.equal(
    (await rejection(() => adapter.quoting.buildDepositSteps(depositRequest(String(alice.index), 2n ** 60n))))
      .code,
    'INVALID_REQUEST',
    'an amount the venue cannot carry',
  )
  t.equal(
    (
      await rejection(() =>
        adapter.quoting.buildDepositSteps({ ...depositRequest(String(alice.index)), requestId: '0x1234' }),
      )
    ).code,
    'INVALID_REQUEST',
  )
  t.equal(
    (
      await rejection(() =>
        adapter.quoting.estimateFillCost({
          orderId: requestId,
          payer: String(LIGHTER_SOLVER.index),
          recipient: String(bob.index),
          currencyId: '0',
          amount: 1n,
          calls: [{ to: `0x${'11'.repeat(20)}`, value: 0n, data: '0x' }],
          topupNativeAmount: 0n,
        }),
      )
    ).code,
    'EXTRA_TXS_NOT_SUPPORTED',
  )
})

t.test('lookupLighterAccounts answers the account indexes of an L1 address', async (t) => {
  t.same(await lookupLighterAccounts(devnet.url, alice.l1Address), [
    String(alice.index),
    String(aliceSub.index),
  ])
  t.same(
    await lookupLighterAccounts(`${devnet.url}/api/v1`, bob.l1Address),
    [String(bob.index)],
    'with the /api/v1 suffix',
  )
  t.same(await lookupLighterAccounts(devnet.url, LIGHTER_UNKNOWN_L1_ADDRESS), [])
  t.equal((await rejection(() => lookupLighterAccounts(devnet.url, '1001'))).code, 'INVALID_ADDRESS')
})
