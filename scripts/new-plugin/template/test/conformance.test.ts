/**
 * The __TITLE__ plugin against the plugin contract (@pontis/plugin-testkit), on the family's devnet:
 * the checks of every capability it declares, and executable conformance, where a quote served by
 * a real intent service (loading this plugin by path) has its signature step signed as a wallet
 * signs it and posted to the execute API, and the deposit is then read back.
 */
import type { ChainAdapter } from '@pontis/core/plugin'
import { type DepositRoundTrip, runPluginConformance, startConformanceService } from '@pontis/plugin-testkit'
import t from 'tap'
import { type Authorization, typedDataOf } from '../src/authorization.js'
import { addressOf } from '../src/identity.js'
import plugin from '../src/index.js'
import {
  DEPOSITORY,
  exampleChain,
  GENESIS_BALANCES,
  SOLVER_KEY,
  USDT,
  USER,
  USER_ADDRESS,
} from './fixtures/chains.js'
import { start__PASCAL__Devnet } from './fixtures/devnet.js'

const devnet = await start__PASCAL__Devnet(GENESIS_BALANCES)
const chains = [exampleChain(devnet.url, 0), exampleChain(devnet.url, 1)] as const
const service = await startConformanceService({
  plugin: new URL('../src/index.ts', import.meta.url),
  vmType: '__NAME__',
  chains,
  usdPrices: { __SYMBOL_ID__: '2', usdt: '1' },
  solverKeys: { privateKey: SOLVER_KEY },
})
const requestIdOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`
const nowSeconds = () => Math.floor(Date.now() / 1000)
/** Signs a signature item's typed data as the depositor's wallet does. */
const sign = (data: Readonly<Record<string, unknown>>) =>
  USER.signTypedData(typedDataOf(data.sign as Authorization))

/** A deposit the user authorized, submitted as the service submits it, and what reading must answer. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const request = {
    requestId: requestIdOf(1),
    depositor: USER_ADDRESS,
    currencyId: USDT.address,
    amount: 2_000_000n,
    usePermit: true,
    permitExpiry: 600,
    executeEndpoint: '/execute/permits',
    nowSeconds: nowSeconds(),
  }
  const [step] = (await adapter.quoting?.buildDepositSteps(request)) ?? []
  const [item] = step?.items ?? []
  if (item?.permit === undefined) throw new Error('the deposit step has no signature item')
  const signed = await adapter.filling?.signPermitDeposit?.(
    { ...request, ...item.permit },
    await sign(item.data),
    { solverKey: SOLVER_KEY },
  )
  if (signed === undefined) throw new Error('the adapter submits no permit deposits')
  await adapter.filling?.broadcast(signed.raw)
  const fact = { index: 0, depository: DEPOSITORY, depositId: request.requestId, depositor: USER_ADDRESS }
  return {
    transactionId: signed.transactionId,
    facts: [{ ...fact, currencyId: USDT.address, amount: 2_000_000n }],
  }
}

const address = (hex: string) => addressOf(hex)
await runPluginConformance(t, plugin, {
  chain: chains[0],
  addresses: {
    valid: [USER_ADDRESS, `__NAME__:${'AB'.repeat(20)}`, address('0'.repeat(40))],
    invalid: [
      `0x${'ab'.repeat(20)}`,
      address('ab'.repeat(19)),
      `__NAME__:${'zz'.repeat(20)}`,
      'ab'.repeat(20),
      '',
    ],
  },
  currencies: {
    valid: [USDT.address, `__NAME__:${'CC'.repeat(20)}`],
    invalid: ['native', `__NAME__:${'c'.repeat(41)}`, `0x${'0'.repeat(40)}`],
  },
  invalidPluginOptions: [{ confirmations: 0 }, { unitPrice: -1 }, { unknownOption: true }],
  quoting: {
    depositRequest: {
      requestId: requestIdOf(2),
      depositor: USER_ADDRESS,
      currencyId: USDT.address,
      amount: 1_000_000n,
      usePermit: true,
      permitExpiry: 600,
      executeEndpoint: '/execute/permits',
      nowSeconds: 1_700_000_000,
    },
  },
  reading: { makeDeposit, unknownTransactionId: requestIdOf(0xdead), balanceOwner: USER_ADDRESS },
  filling: { credentials: { solverKey: SOLVER_KEY } },
  execution: {
    sign: ({ data }) => sign(data),
    served: {
      url: service.url,
      quoteRequest: {
        user: USER_ADDRESS,
        originChainId: chains[0].id,
        destinationChainId: chains[1].id,
        originCurrency: USDT.address,
        destinationCurrency: USDT.address,
        amount: '5000000',
        tradeType: 'EXACT_INPUT',
        usePermit: true,
      },
    },
  },
  close: async () => {
    await service.close()
    await devnet.stop()
  },
})
