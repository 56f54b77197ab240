/**
 * The Lighter plugin against the plugin contract (@pontis/plugin-testkit), on the devnet's venue
 * simulator over real HTTP.
 */
import type { ChainAdapter } from '@pontis/core/plugin'
import { type DepositRoundTrip, type ExecutableItem, runPluginConformance } from '@pontis/plugin-testkit'
import t from 'tap'
import lighterPlugin, { LIGHTER_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  LIGHTER_SOLVER,
  LIGHTER_USERS,
  lighterEntry,
  SOLVER_CREDENTIALS,
  signAndSendAsWallet,
  startDevnet,
  transferParametersOf,
} from './fixtures/lighter-devnet.js'

const devnet = await startDevnet()
const depositor = LIGHTER_USERS.alice
const requestIdOf = (n: number) => `0x${(0xc0f0 + n).toString(16).padStart(64, '0')}`

/** A USDC withdrawal of alice's. */
const depositRequestOf = (requestId: string, amount: bigint) => ({
  requestId,
  depositor: String(depositor.index),
  currencyId: LIGHTER_NATIVE_CURRENCY_ID,
  amount,
  usePermit: false,
  permitExpiry: 0,
  executeEndpoint: '/execute',
  nowSeconds: 0,
})

/** Signs a served transfer item as the user's wallet signs it and sends it to the venue. */
const sendTransaction = ({ step }: ExecutableItem) =>
  signAndSendAsWallet(devnet, depositor, transferParametersOf([step]))

/** A transfer action built by the plugin, signed as the user's wallet signs it and sent. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const requestId = requestIdOf(1)
  const amount = 25_000_000n
  const [step] = (await adapter.quoting?.buildDepositSteps(depositRequestOf(requestId, amount))) ?? []
  if (step === undefined) throw new Error('no deposit step was built')
  const transactionId = await sendTransaction({ data: {}, step })
  return {
    transactionId,
    facts: [
      {
        index: 0,
        depository: String(LIGHTER_SOLVER.index),
        depositId: requestId,
        depositor: String(depositor.index),
        currencyId: LIGHTER_NATIVE_CURRENCY_ID,
        amount,
      },
    ],
    state: 'success',
    final: true,
  }
}

await runPluginConformance(t, lighterPlugin, {
  chain: lighterEntry(devnet.url),
  addresses: {
    valid: [String(depositor.index), String(LIGHTER_USERS.aliceSub.index), '0', String(2 ** 48 - 1)],
    invalid: [
      depositor.l1Address,
      '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
      '-1001',
      '01001',
      '1001.5',
      '0x3e9',
      String(2 ** 48),
      ' 1001',
      '',
    ],
  },
  currencies: {
    valid: [LIGHTER_NATIVE_CURRENCY_ID],
    invalid: ['3', '00', `0x${'0'.repeat(40)}`, 'usdc', ''],
  },
  invalidTransactionIds: ['ab'.repeat(31), `0x${'ab'.repeat(33)}`, `0x${'zz'.repeat(32)}`],
  invalidPluginOptions: [
    { confirmations: 0 },
    { solverApiKeyIndex: 255 },
    { assets: { usdc: { assetIndex: 3, decimals: 6, routeType: 0 } } },
    { unknownOption: 1 },
  ],
  quoting: {
    depositRequest: {
      requestId: requestIdOf(2),
      depositor: String(depositor.index),
      currencyId: LIGHTER_NATIVE_CURRENCY_ID,
      amount: 2_000_000n,
      usePermit: false,
      permitExpiry: 600,
      executeEndpoint: '/execute',
      nowSeconds: 1_700_000_000,
    },
    originCostRequest: {
      requestId: requestIdOf(3),
      depositor: String(depositor.index),
      currencyId: LIGHTER_NATIVE_CURRENCY_ID,
      amount: 2_000_000n,
      usePermit: false,
      viaDepositAddress: false,
    },
    fillCostRequest: {
      orderId: requestIdOf(4),
      payer: String(LIGHTER_SOLVER.index),
      recipient: String(LIGHTER_USERS.bob.index),
      currencyId: LIGHTER_NATIVE_CURRENCY_ID,
      amount: 1_000_000n,
      calls: [],
      topupNativeAmount: 0n,
    },
  },
  reading: {
    makeDeposit,
    unknownTransactionId: `0x${'ab'.repeat(32)}`,
    balanceOwner: String(depositor.index),
  },
  filling: { credentials: SOLVER_CREDENTIALS },
  execution: { sendTransaction, depositRequest: depositRequestOf(requestIdOf(3), 10_000_000n) },
  close: () => devnet.stop(),
})
