/**
 * App fees through the public Relay SDK (unmodified) against the stack `npm start` serves: a bridge
 * quoted with `appFees` and executed to success, then the fee recipient's `getAppFees` shows the fee
 * and its `claimAppFees` (the SDK signs the offered EIP-191 message with the recipient's wallet and
 * posts it) has the service pay exactly that fee on chain, once: a second claim is refused.
 */
import { USERS } from '@pontis/devnet'
import t from 'tap'
import type { Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../helpers/wait.js'
import { EVM_NATIVE, relay, startSdkStack } from './fixtures/sdk-stack.js'

// The stack's start-up (15–40 s on a busy machine) and a fill: beyond tap's 120 s default.
t.setTimeout(300_000)

t.test('getAppFees and claimAppFees of the Relay SDK', async (t) => {
  const sdk = await startSdkStack(t)
  const user = USERS[0]!
  const app = USERS[1]!
  // A fresh payee, so nothing else moves its balance.
  const payee: Address = privateKeyToAccount(generatePrivateKey()).address
  const quote = await relay().actions.getQuote(
    {
      chainId: 31337,
      toChainId: 31338,
      currency: EVM_NATIVE,
      toCurrency: EVM_NATIVE,
      amount: '100000000000000000',
      tradeType: 'EXACT_INPUT',
      wallet: sdk.walletClient(user, 31337),
      options: { appFees: [{ recipient: app.address, fee: '100' }] },
    },
    true,
  )
  const fee = BigInt(quote.fees?.app?.amount ?? '0')
  t.ok(fee > 0n, 'the quote charges the app fee')
  await relay().actions.execute({ quote, wallet: sdk.walletClient(user, 31337) })

  const balances = await relay().actions.getAppFees({ wallet: app.address })
  t.same(
    balances.map((balance) => [balance.currency?.chainId, balance.currency?.address, balance.amount]),
    [[31337, EVM_NATIVE, fee.toString()]],
    'the recipient sees the fee it earned',
  )

  const { data } = await relay().actions.claimAppFees({
    wallet: sdk.walletClient(app, 31337),
    chainId: 31337,
    currency: EVM_NATIVE,
    recipient: payee,
  })
  t.same(
    data.steps.map((step) => step.kind),
    ['signature'],
    'one signature step, signed and posted by the SDK',
  )
  t.same(await relay().actions.getAppFees({ wallet: app.address }), [], 'the claim took the balance')
  await waitFor('the claim payout to land', () => sdk.nativeBalance(31337, payee), {
    until: (balance) => balance > 0n,
  })
  t.equal(await sdk.nativeBalance(31337, payee), fee, 'the payee got exactly the fee')
  await t.rejects(
    relay().actions.claimAppFees({
      wallet: sdk.walletClient(app, 31337),
      chainId: 31337,
      currency: EVM_NATIVE,
      recipient: payee,
    }),
    'a second claim of the same balance is refused',
  )
})
