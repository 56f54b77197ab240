/**
 * The EVM plugin against the plugin contract (@pontis/plugin-testkit), on one devnet anvil chain
 * configured as `configs/chains.local.json` configures it.
 */
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { type ChainAdapter, loadChainsConfig } from '@pontis/core'
import {
  type DevAccount,
  type DevnetChain,
  devnetEnvironment,
  SOLVER,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { type DepositRoundTrip, type ExecutableItem, runPluginConformance } from '@pontis/plugin-testkit'
import t from 'tap'
import { createWalletClient, getAddress, type Hex, http, publicActions } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import evmPlugin, { EVM_NATIVE_CURRENCY_ID } from '../src/index.js'

const devnet = await startDevnet({ chains: [{ chainId: 31337, port: 0 }] })
const [devChain] = devnet.chains as [DevnetChain]
const config = await loadChainsConfig({
  environment: 'local',
  configDir: fileURLToPath(new URL('../../../configs', import.meta.url)),
  env: devnetEnvironment(devnet),
})
const entry = config.chains.find((chain) => chain.id === devChain.chainId)
if (entry === undefined) throw new Error(`configs/chains.local.json has no chain ${devChain.chainId}`)

const [depositor] = USERS as [DevAccount]
const randomId = (): Hex => `0x${randomBytes(32).toString('hex')}`
const nowSeconds = Math.floor(Date.now() / 1000)

const wallet = createWalletClient({
  chain: devChain.chain,
  transport: http(devChain.rpcUrl),
  account: privateKeyToAccount(depositor.privateKey),
}).extend(publicActions)

/** Sends a served transaction item from the depositor, as a wallet does, and waits for its receipt. */
async function sendTransaction({ data }: ExecutableItem): Promise<Hex> {
  const { to, data: input, value } = data as { to: Hex; data: Hex; value: string }
  const hash = await wallet.sendTransaction({ to, data: input, value: BigInt(value) })
  const receipt = await wallet.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`)
  return hash
}

/** A native deposit built by the plugin, sent from a funded devnet user as a wallet sends it. */
async function makeDeposit(adapter: ChainAdapter): Promise<DepositRoundTrip> {
  const requestId = randomId()
  const amount = 1_000_000_000_000_000n
  const [step] =
    (await adapter.quoting?.buildDepositSteps({
      requestId,
      depositor: depositor.address,
      currencyId: EVM_NATIVE_CURRENCY_ID,
      amount,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute/permits',
      nowSeconds,
    })) ?? []
  const data = step?.items[0]?.data as { to: Hex } | undefined
  if (step === undefined || data === undefined) throw new Error('no deposit transaction was built')
  const hash = await sendTransaction({ data, step })
  const receipt = await wallet.getTransactionReceipt({ hash })
  const log = receipt.logs.find((candidate) => getAddress(candidate.address) === getAddress(data.to))
  return {
    transactionId: hash,
    facts: [
      {
        index: log?.logIndex ?? -1,
        depository: getAddress(data.to),
        depositId: requestId,
        depositor: getAddress(depositor.address),
        currencyId: EVM_NATIVE_CURRENCY_ID,
        amount,
      },
    ],
  }
}

const usdc = devChain.contracts.stablecoin
await runPluginConformance(t, evmPlugin, {
  chain: entry,
  addresses: {
    valid: [depositor.address, depositor.address.toLowerCase(), `0x${'0'.repeat(40)}`],
    invalid: ['0x1234', `0x${'g'.repeat(40)}`, `0x${'a'.repeat(41)}`, 'a'.repeat(40), 'hello', ''],
  },
  currencies: {
    valid: [usdc, usdc.toLowerCase()],
    invalid: ['usdc', '0x1', `0x${'z'.repeat(40)}`, '11111111111111111111111111111111'],
  },
  invalidTransactionIds: [`0x${'ab'.repeat(31)}`, 'ab'.repeat(32)],
  invalidPluginOptions: [{ confirmations: 0 }, { eip1559: 'yes' }, { unknownOption: 1 }],
  quoting: {
    depositRequest: {
      requestId: randomId(),
      depositor: depositor.address,
      currencyId: usdc,
      amount: 5_000_000n,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute/permits',
      nowSeconds,
    },
  },
  reading: { makeDeposit, unknownTransactionId: randomId(), balanceOwner: depositor.address },
  filling: { credentials: { solverKey: SOLVER.privateKey } },
  // The USDC deposit above: approve, then deposit, from the funded depositor.
  execution: { sendTransaction },
  close: () => devnet.stop(),
})
