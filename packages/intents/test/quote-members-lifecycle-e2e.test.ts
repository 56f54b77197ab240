/**
 * Quote request members whose effect comes after the quote, on the real devnet.
 * `latePaymentSlippageTolerance`: a deposit that arrives after the order deadline is filled when the
 * destination fill, priced again, costs at most the tolerance more than quoted, and refunded
 * (`TTL_EXPIRED`) otherwise; without the member a late deposit is refunded. The service's clock is
 * moved past the deadline; destination gas is raised with anvil's base fee. `recoveryAddress`:
 * refunds out of a deposit address go to it. Every answer is checked against openapi/intents.yaml.
 */
import { type IntentsApi, silentLogger } from '@pontis/core'
import { devnetEnvironment, STABLECOIN_ADDRESS, startDevnet, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import {
  type Address,
  createTestClient as createAnvilClient,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  type PublicClient,
  parseGwei,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'
import { evmBalance, READ_CACHE_MS } from './fixtures/e2e.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3

/** Past any quote's deadline (the longest `ttl` is a day). */
const LATE_MS = 2 * 86_400_000

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
let clockOffset = 0
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: loaded,
  indexerIntervalMs: 150,
  solverIntervalMs: 100,
  now: () => Date.now() + clockOffset,
})
t.teardown(() => service.close())
const [chainA, chainB] = devnet.chains as [(typeof devnet.chains)[0], (typeof devnet.chains)[0]]
const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) }) as PublicClient
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) }) as PublicClient

const quoteBody = (user: Address, extra: Record<string, unknown> = {}) => ({
  user,
  recipient: user,
  originChainId: 31337,
  destinationChainId: 31338,
  originCurrency: STABLECOIN_ADDRESS,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: '15000000',
  tradeType: 'EXACT_INPUT',
  ...extra,
})

async function execute(quote: Quote, privateKey: Hex): Promise<void> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
  for (const step of quote.steps) {
    for (const item of step.items) {
      const data = item.data as { to: Address; data: Hex; value: string; gas?: string }
      const hash = await wallet.sendTransaction({
        to: data.to,
        data: data.data,
        value: BigInt(data.value),
        // The step's limit, as the Relay SDK sends it: a bare estimate runs out of gas when a
        // repayment empties the depository's balance first.
        ...(data.gas ? { gas: BigInt(data.gas) } : {}),
      })
      await clientA.waitForTransactionReceipt({ hash })
    }
  }
}

const settle = (client: TestClient, requestId: string): Promise<Status> =>
  waitFor(
    `request ${requestId} to be final`,
    async () => (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as Status,
    {
      until: (record) => ['success', 'refund', 'failure'].includes(record.status),
      describe: (record) => record && { status: record.status, failReason: record.failReason },
    },
  )

/** Quotes, moves the clock past the deadline, deposits; `beforeDeposit` runs in between. */
async function lateDeposit(
  t: Test,
  user: (typeof USERS)[number],
  extra: Record<string, unknown>,
  beforeDeposit?: () => Promise<void>,
) {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post('/quote/v2', quoteBody(user.address, extra))
  t.equal(res.status, 200, 'quoted')
  const quote = res.body as Quote
  const requestId = quote.steps.at(-1)!.requestId as string
  await beforeDeposit?.()
  const originBefore = await evmBalance(clientA, user.address, STABLECOIN_ADDRESS)
  const destinationBefore = await evmBalance(clientB, user.address, STABLECOIN_ADDRESS)
  clockOffset += LATE_MS
  try {
    await execute(quote, user.privateKey)
    const done = await settle(client, requestId)
    return {
      quote,
      done,
      refunded: (await evmBalance(clientA, user.address, STABLECOIN_ADDRESS)) === originBefore,
      received: (await evmBalance(clientB, user.address, STABLECOIN_ADDRESS)) - destinationBefore,
    }
  } finally {
    clockOffset -= LATE_MS
  }
}

t.test('without the member a late deposit is refunded', async (t) => {
  const result = await lateDeposit(t, USERS[0]!, {})
  t.equal(result.done.status, 'refund')
  t.equal(result.done.failReason, 'TTL_EXPIRED')
  t.ok(result.refunded, 'the whole deposit came back')
})

t.test('a late deposit is filled while destination gas stays within the tolerance', async (t) => {
  const result = await lateDeposit(t, USERS[1]!, { latePaymentSlippageTolerance: '5000' })
  t.equal(result.done.status, 'success', 'filled after the deadline')
  t.equal(result.received, BigInt(result.quote.details.currencyOut.amount), 'the quoted amount')
})

t.test('ttl and latePaymentSlippageTolerance contradict each other: refused', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post(
    '/quote/v2',
    quoteBody(USERS[2]!.address, { latePaymentSlippageTolerance: '100', ttl: 60 }),
  )
  t.equal(res.status, 400)
  t.equal((res.body as { errorCode: string }).errorCode, 'UNSUPPORTED_EXECUTION_TYPE')
  t.match((res.body as { message: string }).message, /pick one/)
})

t.test('recoveryAddress: a refund out of the deposit address goes to it, not to refundTo', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[3]!
  const recovery = privateKeyToAccount(`0x${'7c'.repeat(32)}`).address
  const res = await client.post('/quote/v2', {
    ...quoteBody(user.address, {
      originCurrency: NATIVE,
      destinationCurrency: NATIVE,
      amount: '50000000000000000',
      useDepositAddress: true,
      recoveryAddress: recovery,
    }),
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  const depositAddress = quote.steps[0]!.depositAddress as Address
  const requestId = quote.steps[0]!.requestId as string
  const userBefore = await clientA.getBalance({ address: user.address })
  const payer = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
  // Underpaid: the deposit address pays it back.
  const hash = await payer.sendTransaction({ to: depositAddress, value: 30000000000000000n })
  const receipt = await clientA.waitForTransactionReceipt({ hash })
  const done = await settle(client, requestId)
  t.equal(done.status, 'refund')
  t.equal(done.failReason, 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL')
  const refunded = BigInt((done.details as { refund?: { amount: string } }).refund?.amount ?? '0')
  t.ok(refunded > 0n, 'a refund was paid')
  t.equal(await clientA.getBalance({ address: recovery }), refunded, 'to the recoveryAddress')
  t.equal(
    await clientA.getBalance({ address: user.address }),
    userBefore - 30000000000000000n - receipt.gasUsed * receipt.effectiveGasPrice,
    'nothing back to the user (the default refundTo)',
  )
})

t.test('a late deposit is refunded when destination gas rose beyond the tolerance', async (t) => {
  const anvilB = createAnvilClient({ mode: 'anvil', chain: chainB.chain, transport: http(chainB.rpcUrl) })
  const result = await lateDeposit(t, USERS[2]!, { latePaymentSlippageTolerance: '100' }, async () => {
    const before = (await clientB.getBlock()).baseFeePerGas ?? 0n
    const raised = before * 10n > parseGwei('50') ? before * 10n : parseGwei('50')
    await anvilB.setNextBlockBaseFeePerGas({ baseFeePerGas: raised })
    await anvilB.mine({ blocks: 1 })
    t.ok(((await clientB.getBlock()).baseFeePerGas ?? 0n) >= raised, 'destination gas is dearer')
    // The plugins' fee reads are cached this long: the late fill must be priced on the new fees.
    await new Promise((resolve) => setTimeout(resolve, READ_CACHE_MS + 1))
  })
  t.equal(result.done.status, 'refund', 'not filled')
  t.equal(result.done.failReason, 'TTL_EXPIRED')
  t.ok(result.refunded, 'the whole deposit came back')
  t.equal(result.received, 0n, 'nothing paid on the destination')
})
