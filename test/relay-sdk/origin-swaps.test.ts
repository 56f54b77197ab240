/**
 * An EVM origin swap through the public Relay SDK 7.0.3, unmodified, on the stack `npm start`
 * serves: 5 THIN (a token the depository does not take) on 31337 bridged to USDC on 31338. The SDK
 * runs the quote's steps (approve the router, then the one transaction that swaps into USDC and pays
 * the depository with the request id) and follows the request to `success`; the recipient gets the
 * quoted amount, at least `minimumAmount`, and the depository exactly the swap's guaranteed output.
 */
import { DEPOSITORY_ADDRESS, DEX_DEPLOYER, THIN_TOKEN_ADDRESS, USERS } from '@pontis/devnet'
import t from 'tap'
import { type Address, erc20Abi, type Hash, parseEventLogs } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_USDC, relay, startSdkStack } from './fixtures/sdk-stack.js'

t.setTimeout(300_000)

const THIN_IN = 5n * 10n ** 18n
const sdk = await startSdkStack(t)

t.test('Relay SDK: THIN on 31337 → USDC on 31338, swapped and deposited in one transaction', async (t) => {
  const user = USERS[2] as (typeof USERS)[0]
  const recipient = privateKeyToAccount(generatePrivateKey()).address
  const funding = await sdk.walletClient(DEX_DEPLOYER, 31337).writeContract({
    address: THIN_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [user.address, THIN_IN],
  })
  await sdk.publicClient(31337).waitForTransactionReceipt({ hash: funding })
  const wallet = sdk.walletClient(user, 31337)
  const quote = await relay().actions.getQuote(
    {
      chainId: 31337,
      toChainId: 31338,
      currency: THIN_TOKEN_ADDRESS,
      toCurrency: EVM_USDC,
      amount: THIN_IN.toString(),
      tradeType: 'EXACT_INPUT',
      wallet,
      recipient,
    },
    true,
  )
  t.same(
    quote.steps.map((step) => step.id),
    ['approve', 'deposit'],
  )
  const guaranteed = BigInt(quote.details?.route?.origin?.outputCurrency?.minimumAmount ?? '0')
  t.ok(guaranteed > 0n, 'the origin swap guarantees an output')
  const txHashes: Hash[] = []
  await relay().actions.execute({
    quote,
    wallet,
    onProgress(progress) {
      for (const { txHash } of progress.txHashes ?? [])
        if (!txHashes.includes(txHash as Hash)) txHashes.push(txHash as Hash)
    },
  })
  const received = await sdk.usdcBalance(31338, recipient)
  t.equal(received, BigInt(quote.details?.currencyOut?.amount ?? '0'), 'the recipient got the quoted amount')
  t.ok(received >= BigInt(quote.details?.currencyOut?.minimumAmount ?? '0'), 'at least minimumAmount')
  // The SDK reports the origin transactions and the fill; the origin's are the ones 31337 knows.
  const receipts = await Promise.all(
    txHashes.map((hash) =>
      sdk
        .publicClient(31337)
        .getTransactionReceipt({ hash })
        .catch(() => undefined),
    ),
  )
  const paid = parseEventLogs({
    abi: erc20Abi,
    eventName: 'Transfer',
    logs: receipts.flatMap((receipt) => receipt?.logs ?? []),
  }).filter(
    (log) =>
      log.address.toLowerCase() === EVM_USDC.toLowerCase() &&
      log.args.to.toLowerCase() === (DEPOSITORY_ADDRESS as Address).toLowerCase(),
  )
  t.same(
    paid.map((log) => log.args.value),
    [guaranteed],
    'the swap paid the depository exactly its guaranteed output',
  )
})
