/**
 * EVM destination swaps through the public Relay SDK 7.0.3, unmodified, on the stack `npm start`
 * serves: USDC on 31337 bridged to THIN on 31338 (a token the solver does not hold), and USDC to
 * ETH with `includedDestinationSwapSources` (bought in the fill instead of paid out of the solver's
 * stock). The SDK runs the deposit steps and follows the request to `success`; the fill on 31338
 * pays the solver's inventory into the devnet's Uniswap v3 router in the same transaction, and the
 * fresh recipient gets at least `minimumAmount`, exactly what the fill's own logs show.
 */
import { THIN_TOKEN_ADDRESS, UNISWAP_V3_SWAP_ROUTER_ADDRESS, USERS } from '@pontis/devnet'
import t from 'tap'
import { type Address, type Hash, parseAbi, parseEventLogs } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_NATIVE, EVM_USDC, relay, requestIdOf, startSdkStack } from './fixtures/sdk-stack.js'

t.setTimeout(300_000)

const eventsAbi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Withdrawal(address indexed src, uint256 wad)',
])
const sdk = await startSdkStack(t)

/** What the fill `txHash` on 31338 paid `recipient` through its swap, from its logs. */
async function paidByFill(txHash: Hash, recipient: Address, currency: Address): Promise<bigint> {
  const receipt = await sdk.publicClient(31338).getTransactionReceipt({ hash: txHash })
  const logs = parseEventLogs({ abi: eventsAbi, logs: receipt.logs })
  if (currency === EVM_NATIVE) {
    // The router unwraps what the swap bought and sends all of it on to the recipient.
    return logs
      .filter(
        (log) =>
          log.eventName === 'Withdrawal' &&
          log.args.src.toLowerCase() === UNISWAP_V3_SWAP_ROUTER_ADDRESS.toLowerCase(),
      )
      .reduce((sum, log) => sum + (log.eventName === 'Withdrawal' ? log.args.wad : 0n), 0n)
  }
  return logs
    .filter(
      (log) =>
        log.eventName === 'Transfer' &&
        log.address.toLowerCase() === currency.toLowerCase() &&
        log.args.to.toLowerCase() === recipient.toLowerCase(),
    )
    .reduce((sum, log) => sum + (log.eventName === 'Transfer' ? log.args.value : 0n), 0n)
}

const balanceOf = (owner: Address, currency: Address) =>
  currency === EVM_NATIVE
    ? sdk.nativeBalance(31338, owner)
    : sdk.publicClient(31338).readContract({
        address: currency,
        abi: parseAbi(['function balanceOf(address) view returns (uint256)']),
        functionName: 'balanceOf',
        args: [owner],
      })

const cases: ReadonlyArray<[string, Address, Record<string, unknown>, string[]]> = [
  ['THIN, a token the solver does not hold', THIN_TOKEN_ADDRESS, {}, ['uniswap-v3', 'uniswap-v3']],
  [
    'ETH, bought through includedDestinationSwapSources',
    EVM_NATIVE,
    { includedDestinationSwapSources: ['uniswap-v3'] },
    ['uniswap-v3'],
  ],
]

for (const [name, toCurrency, options, sources] of cases) {
  t.test(`Relay SDK: 25 USDC on 31337 → ${name} on 31338, swapped in the fill`, async (t) => {
    const user = USERS[1] as (typeof USERS)[0]
    const recipient = privateKeyToAccount(generatePrivateKey()).address
    const wallet = sdk.walletClient(user, 31337)
    const quote = await relay().actions.getQuote(
      {
        chainId: 31337,
        toChainId: 31338,
        currency: EVM_USDC,
        toCurrency,
        amount: '25000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
        options,
      },
      true,
    )
    t.same(
      quote.details?.route?.destination?.includedSwapSources,
      sources,
      'the destination leg and its source',
    )
    t.equal(quote.details?.currencyOut?.currency?.address?.toLowerCase(), toCurrency.toLowerCase())
    const minimum = BigInt(quote.details?.currencyOut?.minimumAmount ?? '0')
    t.ok(minimum > 0n, `the swap guarantees ${minimum}`)
    t.ok(Number(quote.details?.swapImpact?.usd) < 0, 'with its real impact')
    await relay().actions.execute({ quote, wallet, onProgress: () => undefined })
    const status = await sdk.waitForFinalStatus(requestIdOf(quote))
    t.equal(status.status, 'success')
    const fill = status.txHashes.at(-1) as Hash
    const received = await balanceOf(recipient, toCurrency)
    t.ok(received >= minimum, `the recipient got ${received}, at least minimumAmount ${minimum}`)
    t.equal(received, await paidByFill(fill, recipient, toCurrency), 'exactly what the fill logs show')
  })
}
