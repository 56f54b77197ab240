/**
 * The Hyperliquid plugin against the plugin contract (@pontis/plugin-testkit), on the devnet (the
 * Hyperliquid API simulator). Deposits are tagged by nonce, so the round trip takes a nonce from
 * the adapter's `depositNonceTag` and passes it as `depositNonce`, as the engine does.
 */
import type { ChainAdapter } from '@pontis/core/plugin'
import { type DepositRoundTrip, type ExecutableItem, runPluginConformance } from '@pontis/plugin-testkit'
import t from 'tap'
import hyperliquidPlugin, { HYPERLIQUID_NATIVE_CURRENCY_ID, hyperliquidDepositTag } from '../src/index.js'
import {
  actionOf,
  HYPERLIQUID_HYPE_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_USERS,
  hyperliquidEntry,
  SOLVER_KEY,
  signAndPost,
  startDevnet,
} from './fixtures/hyperliquid-devnet.js'

const devnet = await startDevnet()
const depositor = HYPERLIQUID_USERS.alice
const requestIdOf = (n: number) => `0x${(0xc0f0 + n).toString(16).padStart(64, '0')}`

/** Signs a served send item as the depositor's wallet does and posts it to the exchange. */
async function sendTransaction({ step }: ExecutableItem): Promise<string> {
  const { answer, hash } = await signAndPost(devnet, depositor.privateKey, actionOf([step]))
  if ((answer as { status?: string }).status !== 'ok')
    throw new Error(`deposit refused: ${JSON.stringify(answer)}`)
  return hash
}

/** A deposit to execute, tagged by a fresh nonce as the engine tags it. */
const executedNonce = BigInt(Date.now()) + 1_000n
const executedDeposit = {
  depositRequest: {
    requestId: requestIdOf(3),
    depositor: depositor.address,
    currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
    amount: 1_000_000_000n,
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute',
    nowSeconds: Math.floor(Date.now() / 1000),
    depositNonce: executedNonce,
  },
  depositId: hyperliquidDepositTag(depositor.address, executedNonce),
}

/** A deposit built by the plugin with a nonce it handed out, signed as a wallet signs it, posted. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const amount = 2_500_000_000n
  const tag = adapter.quoting?.depositNonceTag?.(depositor.address, Date.now())
  if (!tag) throw new Error('the adapter hands out no deposit nonces')
  const steps = await adapter.quoting?.buildDepositSteps({
    requestId: requestIdOf(1),
    depositor: depositor.address,
    currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
    amount,
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute',
    nowSeconds: Math.floor(Date.now() / 1000),
    depositNonce: tag.nonce,
  })
  const [step] = steps ?? []
  if (step === undefined) throw new Error('no deposit step was built')
  return {
    transactionId: await sendTransaction({ data: {}, step }),
    facts: [
      {
        index: 0,
        depository: HYPERLIQUID_SOLVER.address,
        depositId: tag.tag,
        depositor: depositor.address,
        currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID,
        amount,
      },
    ],
    state: 'success',
    final: true,
  }
}

await runPluginConformance(t, hyperliquidPlugin, {
  chain: hyperliquidEntry(devnet.url),
  addresses: {
    valid: [
      depositor.address,
      depositor.address.toUpperCase().replace('0X', '0x'),
      HYPERLIQUID_SOLVER.address,
      `0x${'ab'.repeat(20)}`,
    ],
    invalid: [
      // base58 (Solana), Tron, Bitcoin, a 16-byte token id, too short, non-hex, no 0x
      'So11111111111111111111111111111111111111112',
      'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      HYPERLIQUID_HYPE_ID,
      `0x${'ab'.repeat(19)}`,
      `0x${'zz'.repeat(20)}`,
      'ab'.repeat(20),
      '',
    ],
  },
  currencies: {
    valid: [
      HYPERLIQUID_NATIVE_CURRENCY_ID,
      HYPERLIQUID_HYPE_ID,
      HYPERLIQUID_HYPE_ID.toUpperCase().replace('0X', '0x'),
    ],
    invalid: [`0x${'0'.repeat(40)}`, depositor.address, 'usdc', `0x${'ab'.repeat(15)}`, ''],
  },
  invalidTransactionIds: ['ab'.repeat(32), `0x${'ab'.repeat(31)}`, `0x${'ab'.repeat(33)}`],
  invalidPluginOptions: [{ hyperliquidChain: 'Devnet' }, { signatureChainId: '66eee' }, { unknownOption: 1 }],
  quoting: {
    depositRequest: {
      requestId: requestIdOf(2),
      depositor: depositor.address,
      currencyId: HYPERLIQUID_HYPE_ID,
      amount: 150_000_000n,
      usePermit: false,
      permitExpiry: 600,
      executeEndpoint: '/execute',
      nowSeconds: 1_767_225_600,
      depositNonce: 1_767_225_600_000n,
    },
  },
  reading: { makeDeposit, unknownTransactionId: `0x${'ab'.repeat(32)}`, balanceOwner: depositor.address },
  filling: { credentials: { solverKey: SOLVER_KEY } },
  execution: { sendTransaction, ...executedDeposit },
  close: () => devnet.stop(),
})
