/**
 * The public Relay SDK (`@relayprotocol/relay-sdk` 7.0.3, unmodified) against the stack `npm start`
 * serves, EVM to EVM: `getQuote` then `execute` with a viem wallet client of a funded devnet account,
 * to `success`; the recipient (a fresh address, so nothing else moves its balance) must hold exactly
 * what the quote promised. The SDK's own promise is what the tests wait on.
 */
import { MULTICALLER_EXECUTOR_ADDRESS, USERS } from '@pontis/devnet'
import type { Execute, ProgressData } from '@relayprotocol/relay-sdk'
import t from 'tap'
import { type Address, erc20Abi, type WalletClient } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_NATIVE, EVM_USDC, relay, startSdkStack } from './fixtures/sdk-stack.js'

// Starting the stack npm start serves (two anvil chains, LiteSVM, the simulators, both services) takes
// 15–40 s on a busy 2-core machine, and the flows wait for blocks: beyond tap's 120 s default.
t.setTimeout(300_000)

const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address

/** Runs `execute` to its end; answers the final Execute, the step ids seen in progress and the last status check. */
async function executeToEnd(quote: Execute, wallet: WalletClient) {
  const stepIds = new Set<string>()
  let lastCheckStatus: string | undefined
  const { data } = await relay().actions.execute({
    quote,
    wallet,
    onProgress(progress: ProgressData) {
      if (progress.currentStep?.id) stepIds.add(progress.currentStep.id)
      for (const step of progress.steps)
        for (const item of step.items ?? []) if (item.checkStatus) lastCheckStatus = item.checkStatus
    },
  })
  return { data, stepIds: [...stepIds], lastCheckStatus }
}

t.test('the Relay SDK bridges EVM to EVM against npm start', async (t) => {
  const sdk = await startSdkStack(t)

  t.test('native bridge 31337 → 31338', async (t) => {
    const user = USERS[0]!
    const recipient = freshAddress()
    const wallet = sdk.walletClient(user, 31337)
    const quote = await relay().actions.getQuote(
      {
        chainId: 31337,
        toChainId: 31338,
        currency: EVM_NATIVE,
        toCurrency: EVM_NATIVE,
        amount: '100000000000000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    t.ok(quoted > 0n, 'the quote promises an output')
    const { data, lastCheckStatus } = await executeToEnd(quote, wallet)
    t.same(
      data.steps.flatMap((step) => (step.items ?? []).map((item) => item.status)),
      ['complete'],
      'every step item is complete',
    )
    t.equal(lastCheckStatus, 'success', 'the SDK followed the request to success')
    t.equal(await sdk.nativeBalance(31338, recipient), quoted, 'the recipient got the quoted amount')
  })

  t.test('ERC-20 bridge (approve, then deposit) of the 6-decimal stablecoin', async (t) => {
    const user = USERS[1]!
    const recipient = freshAddress()
    const wallet = sdk.walletClient(user, 31337)
    const quote = await relay().actions.getQuote(
      {
        chainId: 31337,
        toChainId: 31338,
        currency: EVM_USDC,
        toCurrency: EVM_USDC,
        amount: '25000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    t.same(
      quote.steps.map((step) => step.id),
      ['approve', 'deposit'],
      'an approval, then the deposit',
    )
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    const { stepIds, lastCheckStatus } = await executeToEnd(quote, wallet)
    t.same(stepIds, ['approve', 'deposit'], 'the SDK ran the approval, then the deposit')
    t.equal(lastCheckStatus, 'success', 'the SDK followed the request to success')
    t.equal(await sdk.usdcBalance(31338, recipient), quoted, 'the recipient got the quoted USDC')
  })

  t.test('cross-currency: ETH on 31337 → USDC on 31338', async (t) => {
    const user = USERS[2]!
    const recipient = freshAddress()
    const wallet = sdk.walletClient(user, 31337)
    const quote = await relay().actions.getQuote(
      {
        chainId: 31337,
        toChainId: 31338,
        currency: EVM_NATIVE,
        toCurrency: EVM_USDC,
        amount: '50000000000000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    t.ok(quoted > 0n)
    const { lastCheckStatus } = await executeToEnd(quote, wallet)
    t.equal(lastCheckStatus, 'success', 'the SDK followed the request to success')
    t.equal(await sdk.usdcBalance(31338, recipient), quoted, 'the recipient got the quoted USDC')
  })

  t.test('a destination call (txs): a value transfer and a contract call', async (t) => {
    const user = USERS[3]!
    const recipient = freshAddress()
    const payee = freshAddress()
    const spender = freshAddress()
    const callValue = 10_000_000_000_000_000n
    const wallet = sdk.walletClient(user, 31337)
    const approval = await sdk.publicClient(31338).simulateContract({
      account: user.address,
      address: EVM_USDC,
      abi: erc20Abi,
      functionName: 'approve',
      args: [spender, 123_456n],
    })
    const quote = await relay().actions.getQuote(
      {
        chainId: 31337,
        toChainId: 31338,
        currency: EVM_NATIVE,
        toCurrency: EVM_NATIVE,
        amount: '50000000000000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
        txs: [
          { to: payee, value: callValue.toString(), data: '0x' },
          // The SDK encodes this one itself: viem's simulateContract request, as its docs show.
          approval.request,
        ],
      },
      true,
    )
    t.equal(quote.details?.operation, 'call', 'the quote is a call')
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    const { lastCheckStatus } = await executeToEnd(quote, wallet)
    t.equal(lastCheckStatus, 'success', 'the SDK followed the request to success')
    t.equal(await sdk.nativeBalance(31338, payee), callValue, 'the call carried its value')
    t.equal(
      await sdk.nativeBalance(31338, recipient),
      quoted - callValue,
      'the recipient got the quoted output less the calls’ value',
    )
    // Destination calls run from the multicaller's executor, so the approval is the executor's.
    const allowance = await sdk.publicClient(31338).readContract({
      address: EVM_USDC,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [MULTICALLER_EXECUTOR_ADDRESS, spender],
    })
    t.equal(allowance, 123_456n, 'the contract call ran on the destination chain')
  })
  // What the swap widget sends for a plain-account wallet: the direct deposit form, one step.
  for (const [name, currency, amount, user] of [
    ['native', EVM_NATIVE, '50000000000000000', USERS[3]!],
    ['ERC-20', EVM_USDC, '9000000', USERS[3]!],
  ] as const) {
    t.test(`explicitDeposit: false, ${name}: one direct deposit step, no approval`, async (t) => {
      const recipient = freshAddress()
      const wallet = sdk.walletClient(user, 31337)
      const quote = await relay().actions.getQuote(
        {
          chainId: 31337,
          toChainId: 31338,
          currency,
          toCurrency: currency,
          amount,
          tradeType: 'EXACT_INPUT',
          wallet,
          recipient,
          options: { explicitDeposit: false },
        },
        true,
      )
      t.same(
        quote.steps.map((step) => step.id),
        ['deposit'],
        'the deposit alone',
      )
      const item = quote.steps[0]?.items?.[0]?.data as { to?: string; data?: string } | undefined
      const requestId = quote.steps[0]?.requestId
      t.ok(
        item?.data?.toLowerCase().endsWith((requestId ?? 'missing').slice(2).toLowerCase()),
        'the calldata ends with the request id',
      )
      const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
      const { lastCheckStatus } = await executeToEnd(quote, wallet)
      t.equal(lastCheckStatus, 'success', 'the SDK followed the request to success')
      t.equal(
        currency === EVM_NATIVE
          ? await sdk.nativeBalance(31338, recipient)
          : await sdk.usdcBalance(31338, recipient),
        quoted,
        'the recipient got the quoted amount',
      )
    })
  }

  t.test('every call the SDK made was answered 2xx', async (t) => {
    t.ok(sdk.apiCalls.length > 0, 'the SDK called the intent service')
    t.same(
      sdk.apiCalls.filter((call) => call.status >= 300),
      [],
    )
  })
})
