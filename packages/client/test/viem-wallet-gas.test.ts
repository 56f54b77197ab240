/**
 * `viemWalletAdapter` sends with the step's gas limit, as the Relay SDK does. The race it closes,
 * made to happen every time: the wallet estimates a USDC deposit while the depository holds USDC,
 * then a repayment empties the depository before the deposit is mined, so the deposit's write of the
 * depository's balance goes from zero to non-zero (17 100 gas more than estimated). Sent on the
 * wallet's bare estimate it reverts out of gas (`useStepGas: false`, the control); sent with the
 * quote's limit it lands, though the quote simulated it on the same non-empty depository (the
 * plugin adds what a zero balance slot costs to write). Real anvil, real intent service, a real quote's steps; the
 * repayment is the depository's own USDC transfer, sent by impersonation from the transport.
 */
import { silentLogger } from '@pontis/core'
import { DEPOSITORY_ADDRESS, devnetEnvironment, STABLECOIN_ADDRESS, startDevnet, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '@pontis/intents'
import t from 'tap'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  custom,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createPontisClient, type EvmTransactionData, viemWalletAdapter } from '../src/index.js'

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: await loadOpenApiDocument(INTENTS_DOCUMENT_PATH),
})
t.teardown(() => service.close())
const chain = devnet.chains[0] as (typeof devnet.chains)[0]
const rpc = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })
const raw = (method: string, params: unknown[]) =>
  rpc.request({ method: method as never, params: params as never }) as Promise<unknown>

const depositor = USERS[0] as (typeof USERS)[0]
const funder = USERS[1] as (typeof USERS)[0]
const depositoryUsdc = (blockNumber?: bigint) =>
  rpc.readContract({
    address: STABLECOIN_ADDRESS,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [DEPOSITORY_ADDRESS],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  })

async function sendAndMine(from: Address, to: Address, data: Hex) {
  const hash = (await raw('eth_sendTransaction', [{ from, to, data }])) as Hex
  const receipt = await rpc.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (receipt.status !== 'success') throw new Error(`set-up transaction ${hash} reverted`)
}
const transferData = (to: Address, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] })

/** The depository holds USDC, as when the quote was made: its balance slot is non-zero. */
async function fillDepository() {
  if ((await depositoryUsdc()) > 0n) return
  await raw('anvil_impersonateAccount', [funder.address])
  await sendAndMine(funder.address, STABLECOIN_ADDRESS, transferData(DEPOSITORY_ADDRESS, 1_000_000n))
  await raw('anvil_stopImpersonatingAccount', [funder.address])
}

/** A repayment takes everything the depository holds (the depository's own transfer). */
async function emptyDepository() {
  const held = await depositoryUsdc()
  if (held === 0n) return
  await raw('anvil_impersonateAccount', [DEPOSITORY_ADDRESS])
  await raw('anvil_setBalance', [DEPOSITORY_ADDRESS, '0xde0b6b3a7640000'])
  await sendAndMine(DEPOSITORY_ADDRESS, STABLECOIN_ADDRESS, transferData(funder.address, held))
  await raw('anvil_stopImpersonatingAccount', [DEPOSITORY_ADDRESS])
}

/** A wallet client whose transport runs the repayment between any estimate and the broadcast. */
function racingWallet() {
  const upstream = http(chain.rpcUrl)({ chain: chain.chain })
  /** What the wallet asked the node to estimate or fill (viem fills local-account transactions). */
  const estimated: { gas?: string }[] = []
  const transport = custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      if (method === 'eth_estimateGas' || method === 'eth_fillTransaction')
        estimated.push((params as [{ gas?: string }])[0])
      if (method === 'eth_sendRawTransaction') await emptyDepository()
      return upstream.request({ method, params } as never)
    },
  })
  const wallet = createWalletClient({
    account: privateKeyToAccount(depositor.privateKey),
    chain: chain.chain,
    transport,
  })
  return { wallet, estimated }
}

/** The quote's deposit item: USDC 31337 → USDC 31338. */
async function quotedDeposit() {
  const quote = await createPontisClient({ baseUrl: service.url }).getQuote({
    user: depositor.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '2000000',
    tradeType: 'EXACT_INPUT',
  })
  const deposit = quote.steps.find((step) => step.id === 'deposit')?.items[0]?.data
  if (deposit?.format !== 'evm-transaction')
    throw new Error(`no deposit transaction: ${JSON.stringify(quote.steps)}`)
  return deposit as EvmTransactionData
}

/** Mined, the deposit's block began with an empty depository; the balance before the broadcast. */
async function emptiedBefore(txHash: Hex) {
  const receipt = await rpc.getTransactionReceipt({ hash: txHash })
  return { receipt, heldBefore: await depositoryUsdc(receipt.blockNumber - 1n) }
}

t.test('a deposit prepared before a repayment emptied the depository', async (t) => {
  // The approval first (both deposits below use it).
  await raw('anvil_impersonateAccount', [depositor.address])
  await sendAndMine(
    depositor.address,
    STABLECOIN_ADDRESS,
    encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [DEPOSITORY_ADDRESS, 10n ** 12n] }),
  )
  await raw('anvil_stopImpersonatingAccount', [depositor.address])

  await t.test('sent on the wallet’s bare estimate (the control), it runs out of gas', async (t) => {
    await fillDepository()
    const deposit = await quotedDeposit()
    const { wallet, estimated } = racingWallet()
    const adapter = viemWalletAdapter(wallet, { useStepGas: false, receiptPollIntervalMs: 50 })
    const error = await adapter.execute(deposit, {} as never).then(
      () => undefined,
      (reason: unknown) => reason as Error,
    )
    const txHash = /transaction (0x[0-9a-f]{64}) reverted/.exec(String(error?.message))?.[1] as
      | Hex
      | undefined
    if (!txHash) throw new Error(`the control deposit did not revert: ${String(error)}`)
    t.ok(
      estimated.length > 0 && estimated.every((asked) => asked.gas === undefined),
      'the node estimated the limit (the wallet asked with none)',
    )
    const { heldBefore } = await emptiedBefore(txHash)
    t.equal(heldBefore, 0n, 'the repayment emptied the depository first')
    const limit = (await rpc.getTransaction({ hash: txHash })).gas
    t.ok(limit < BigInt(deposit.gas as string), `its limit ${limit} is below the quote's ${deposit.gas}`)
  })

  await t.test('sent with the step’s gas limit, it lands', async (t) => {
    await fillDepository()
    const deposit = await quotedDeposit()
    t.ok(deposit.gas, 'the quote gives the deposit a gas limit')
    const { wallet, estimated } = racingWallet()
    const result = await viemWalletAdapter(wallet, { receiptPollIntervalMs: 50 }).execute(
      deposit,
      {} as never,
    )
    const txHash = (result as { txHash: Hex }).txHash
    t.ok(
      estimated.every(
        (asked) => asked.gas !== undefined && BigInt(asked.gas) === BigInt(deposit.gas as string),
      ),
      'the wallet asked the node for no estimate: it gave the step’s limit',
    )
    t.equal(
      (await rpc.getTransaction({ hash: txHash })).gas,
      BigInt(deposit.gas as string),
      'the step’s gas limit',
    )
    const { receipt, heldBefore } = await emptiedBefore(txHash)
    t.equal(receipt.status, 'success', 'the deposit landed')
    t.equal(heldBefore, 0n, 'on a depository the repayment had emptied')
  })
})
