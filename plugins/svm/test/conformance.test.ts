/**
 * The SVM plugin against the plugin contract (@pontis/plugin-testkit), on the SVM devnet (LiteSVM
 * behind the devnet's Solana RPC) with the local config's SVM entry.
 */
import type { ChainAdapter } from '@pontis/core/plugin'
import { SVM_STABLECOIN, SVM_USERS, SVM_VAULT_OWNER, type SvmDevAccount } from '@pontis/devnet'
import { type DepositRoundTrip, type ExecutableItem, runPluginConformance } from '@pontis/plugin-testkit'
import { Keypair } from '@solana/web3.js'
import bs58 from 'bs58'
import t from 'tap'
import svmPlugin, { SVM_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  DEVNET_CREDENTIALS,
  depositTransaction,
  randomId,
  sendSigned,
  startSvmPluginDevnet,
} from './fixtures/svm-chain.js'

const devnet = await startSvmPluginDevnet()
const [alice, bob] = SVM_USERS as [SvmDevAccount, SvmDevAccount]
const nowSeconds = Math.floor(Date.now() / 1000)

/** A native deposit of alice's. */
const depositRequestOf = (requestId: string, amount: bigint) => ({
  requestId,
  depositor: alice.address,
  currencyId: SVM_NATIVE_CURRENCY_ID,
  amount,
  usePermit: false,
  permitExpiry: 0,
  executeEndpoint: '/execute/permits',
  nowSeconds,
})

/** Signs a served transaction item as alice's wallet does and sends it. */
const sendTransaction = ({ step }: ExecutableItem) =>
  sendSigned(devnet.connection, depositTransaction([step]), [alice.keypair])

/** A native deposit built by the plugin, signed by a devnet user as a wallet signs it, and sent. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const requestId = randomId()
  const amount = 250_000_000n
  const [step] = (await adapter.quoting?.buildDepositSteps(depositRequestOf(requestId, amount))) ?? []
  if (step === undefined) throw new Error('no deposit step was built')
  const signature = await sendTransaction({ data: {}, step })
  return {
    transactionId: signature,
    facts: [
      {
        index: 0,
        depository: SVM_VAULT_OWNER.address,
        depositId: requestId,
        depositor: alice.address,
        currencyId: SVM_NATIVE_CURRENCY_ID,
        amount,
      },
    ],
  }
}

await runPluginConformance(t, svmPlugin, {
  chain: devnet.entry,
  addresses: {
    valid: [alice.address, SVM_VAULT_OWNER.address, SVM_NATIVE_CURRENCY_ID],
    invalid: [
      `0x${'ab'.repeat(20)}`,
      'abc',
      // base58 has no 0, O, I or l
      `0${alice.address.slice(1)}`,
      `${alice.address}1`,
      alice.address.toLowerCase(),
      '',
    ],
  },
  currencies: {
    valid: [SVM_STABLECOIN.address],
    invalid: [`0x${'0'.repeat(40)}`, 'usdc', `${SVM_STABLECOIN.address}x`],
  },
  invalidTransactionIds: [
    `0x${'ab'.repeat(32)}`,
    alice.address,
    `${bs58.encode(Keypair.generate().secretKey)}0`,
  ],
  invalidPluginOptions: [{ computeUnitLimit: 0 }, { swapApiUrl: 'ftp://routes' }, { unknownOption: true }],
  quoting: {
    depositRequest: {
      requestId: randomId(),
      depositor: bob.address,
      currencyId: SVM_STABLECOIN.address,
      amount: 5_000_000n,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute/permits',
      nowSeconds,
    },
  },
  reading: {
    makeDeposit,
    // A signature of the right shape that no transaction has.
    unknownTransactionId: bs58.encode(Keypair.generate().secretKey),
    balanceOwner: alice.address,
  },
  filling: { credentials: DEVNET_CREDENTIALS },
  execution: { sendTransaction, depositRequest: depositRequestOf(randomId(), 100_000_000n) },
  close: () => devnet.stop(),
})
