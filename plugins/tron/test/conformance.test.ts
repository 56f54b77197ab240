/**
 * The Tron plugin against the plugin contract (@pontis/plugin-testkit), on the Tron devnet (the
 * full-node API simulator).
 */
import type { ChainAdapter } from '@pontis/core/plugin'
import { type DepositRoundTrip, type ExecutableItem, runPluginConformance } from '@pontis/plugin-testkit'
import t from 'tap'
import tronPlugin, { TRON_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  ALLOCATOR_KEY,
  idOf,
  SOLVER_KEY,
  signAndBroadcast,
  startDevnet,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  transactionOf,
  tronEntry,
} from './fixtures/tron-devnet.js'

const devnet = await startDevnet()
const depositor = TRON_USERS.alice

/** Signs a served transaction item as the depositor's wallet does, broadcasts it and puts it in a block. */
async function sendTransaction({ step }: ExecutableItem): Promise<string> {
  const transaction = transactionOf([step])
  const reply = await signAndBroadcast(devnet, depositor.privateKey, transaction)
  if (reply.result !== true) throw new Error(`broadcast refused: ${JSON.stringify(reply)}`)
  devnet.mine(1)
  return transaction.txID
}

/** A deposit built by the plugin, signed as a wallet signs it, broadcast and put in a block. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const requestId = idOf(1)
  const amount = 2_500_000n
  const [step] =
    (await adapter.quoting?.buildDepositSteps({
      requestId,
      depositor: depositor.address,
      currencyId: TRON_USDT_ADDRESS,
      amount,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute',
      nowSeconds: 0,
    })) ?? []
  if (step === undefined) throw new Error('no deposit step was built')
  return {
    transactionId: await sendTransaction({ data: {}, step }),
    facts: [
      {
        index: 0,
        depository: TRON_VAULT.address,
        depositId: requestId,
        depositor: depositor.address,
        currencyId: TRON_USDT_ADDRESS,
        amount,
      },
    ],
    state: 'success',
    final: false,
  }
}

const hex41 = depositor.hexAddress
await runPluginConformance(t, tronPlugin, {
  chain: tronEntry(devnet.url),
  addresses: {
    valid: [
      depositor.address,
      hex41,
      hex41.toUpperCase().replace(/^41/, '41'),
      TRON_VAULT.address,
      TRON_USDT_ADDRESS,
    ],
    invalid: [
      `0x${hex41.slice(2)}`,
      `${depositor.address.slice(0, -1)}${depositor.address.endsWith('a') ? 'b' : 'a'}`,
      depositor.address.toLowerCase(),
      TRON_NATIVE_CURRENCY_ID,
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T',
      `42${hex41.slice(2)}`,
      hex41.slice(0, -2),
      '',
    ],
  },
  currencies: {
    valid: [TRON_NATIVE_CURRENCY_ID, TRON_USDT_ADDRESS],
    invalid: [`0x${'0'.repeat(40)}`, 'trx', 'usdt', `0x${hex41.slice(2)}`],
  },
  invalidTransactionIds: ['ab'.repeat(31), `${'ab'.repeat(32)}00`, `0x${'zz'.repeat(32)}`],
  invalidPluginOptions: [{ fastConfirmations: 0 }, { expirationSeconds: 10 }, { unknownOption: 1 }],
  quoting: {
    depositRequest: {
      requestId: idOf(2),
      depositor: depositor.address,
      currencyId: TRON_NATIVE_CURRENCY_ID,
      amount: 1_000_000n,
      usePermit: false,
      permitExpiry: 600,
      executeEndpoint: '/execute',
      nowSeconds: 1_700_000_000,
    },
    originCostRequest: {
      requestId: idOf(3),
      depositor: depositor.address,
      currencyId: TRON_USDT_ADDRESS,
      amount: 1_000_000n,
      usePermit: false,
      viaDepositAddress: false,
    },
    fillCostRequest: {
      orderId: idOf(4),
      payer: TRON_VAULT.address,
      recipient: TRON_USERS.bob.address,
      currencyId: TRON_USDT_ADDRESS,
      amount: 1_000_000n,
      calls: [],
      topupNativeAmount: 0n,
    },
  },
  reading: { makeDeposit, unknownTransactionId: 'ab'.repeat(32), balanceOwner: depositor.address },
  filling: { credentials: { solverKey: SOLVER_KEY, allocatorKey: ALLOCATOR_KEY } },
  execution: { sendTransaction },
  close: () => devnet.stop(),
})
