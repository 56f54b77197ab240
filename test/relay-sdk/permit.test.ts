/**
 * The public Relay SDK (7.0.3, unmodified) with `usePermit` against the stack `npm start` serves: the
 * quote's `signature` step is signed by the viem wallet client (EIP-3009 ReceiveWithAuthorization of
 * the devnet stablecoin), the SDK posts it to the execute API as the step says (adding its
 * `referrer`), then keeps polling the step's `check` until the fill. So when `execute` resolves the
 * recipient already holds the quoted amount and the user paid no origin gas.
 */
import { USERS } from '@pontis/devnet'
import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_USDC, relay, startSdkStack } from './fixtures/sdk-stack.js'

// Starting the stack npm start serves (two anvil chains, LiteSVM, the simulators, both services) takes
// 15–40 s on a busy 2-core machine, and the flows wait for blocks: beyond tap's 120 s default.
t.setTimeout(300_000)

t.test('the Relay SDK bridges with usePermit (EIP-3009) against npm start', async (t) => {
  const sdk = await startSdkStack(t)
  const user = USERS[0]!
  const recipient = privateKeyToAccount(generatePrivateKey()).address
  const wallet = sdk.walletClient(user, 31337)
  const amount = 15_000_000n
  const quote = await relay().actions.getQuote(
    {
      chainId: 31337,
      toChainId: 31338,
      currency: EVM_USDC,
      toCurrency: EVM_USDC,
      amount: amount.toString(),
      tradeType: 'EXACT_INPUT',
      wallet,
      recipient,
      options: { usePermit: true },
    },
    true,
  )
  t.same(
    quote.steps.map((step) => step.kind),
    ['signature'],
    'one signature step instead of an approval and a deposit',
  )
  const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
  t.ok(quoted > 0n, 'the quote promises an output')
  const usdcBefore = await sdk.usdcBalance(31337, user.address)
  const ethBefore = await sdk.nativeBalance(31337, user.address)

  const { data } = await relay().actions.execute({ quote, wallet })
  const items = data.steps.flatMap((step) => step.items ?? [])
  t.ok(
    items.every((item) => item.status === 'complete'),
    'every step item is complete',
  )
  t.equal(items[0]?.checkStatus, 'success', 'the SDK polled the signature step’s check to success')
  // Read right after execute resolved: the SDK only resolves once the request was filled.
  t.equal(await sdk.usdcBalance(31338, recipient), quoted, 'the recipient got the quoted USDC')
  t.equal(usdcBefore - (await sdk.usdcBalance(31337, user.address)), amount, 'the permit moved the input')
  t.equal(await sdk.nativeBalance(31337, user.address), ethBefore, 'the user paid no origin gas')
  const post = sdk.apiCalls.find((call) => call.method === 'POST' && call.path.startsWith('/execute/permits'))
  t.equal(post?.status, 200, 'the execute API accepted the SDK’s post')
  t.test('every call the SDK made was answered 2xx', async (t) => {
    t.ok(sdk.apiCalls.length > 0, 'the SDK called the intent service')
    t.same(
      sdk.apiCalls.filter((call) => call.status >= 300),
      [],
    )
  })
})
