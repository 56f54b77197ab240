/**
 * The public Relay SDK (7.0.3) and its SVM wallet adapter (`@relayprotocol/relay-svm-wallet-adapter`
 * 19.0.1), unmodified, against the stack `npm start` serves: EVM → SVM with a viem wallet client, and
 * SVM → EVM with `adaptSolanaWallet` over a @solana/web3.js `Keypair` and a `Connection` to the devnet's
 * Solana RPC (the adapter rebuilds the transaction from the step's `instructions`, decoding their data
 * as hex). Each flow runs to `success` and the recipient must hold exactly the quoted amount.
 */
import {
  SVM_DEVNET_CHAIN_ID,
  SVM_STABLECOIN,
  SVM_USERS,
  svmAssociatedTokenAddress,
  USERS,
} from '@pontis/devnet'
import { adaptSolanaWallet } from '@relayprotocol/relay-svm-wallet-adapter'
import { Connection, Keypair, PublicKey, type VersionedTransaction } from '@solana/web3.js'
import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { EVM_USDC, relay, startSdkStack } from './fixtures/sdk-stack.js'

// Starting the stack npm start serves (two anvil chains, LiteSVM, the simulators, both services) takes
// 15–40 s on a busy 2-core machine, and the flows wait for blocks: beyond tap's 120 s default.
t.setTimeout(300_000)

t.test('the Relay SDK bridges between EVM and SVM against npm start', async (t) => {
  const sdk = await startSdkStack(t)
  const svm = sdk.devnet.svm
  if (!svm) throw new Error('the local stack started no SVM chain')
  const connection = new Connection(svm.rpcUrl, { commitment: 'confirmed', wsEndpoint: svm.chain.wsUrl })
  const tokenBalance = async (owner: string): Promise<bigint> => {
    const account = new PublicKey(svmAssociatedTokenAddress(owner, SVM_STABLECOIN.address))
    const info = await connection.getTokenAccountBalance(account, 'confirmed').catch(() => undefined)
    return BigInt(info?.value.amount ?? '0')
  }

  t.test('EVM → SVM: USDC on 31337 to USDC on the SVM chain', async (t) => {
    const user = USERS[0]!
    const recipient = Keypair.generate().publicKey.toBase58()
    const wallet = sdk.walletClient(user, 31337)
    const quote = await relay().actions.getQuote(
      {
        chainId: 31337,
        toChainId: SVM_DEVNET_CHAIN_ID,
        currency: EVM_USDC,
        toCurrency: SVM_STABLECOIN.address,
        amount: '30000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    t.ok(quoted > 0n, 'the quote promises an output')
    const { data } = await relay().actions.execute({ quote, wallet })
    t.same(
      data.steps.flatMap((step) => (step.items ?? []).map((item) => item.checkStatus)),
      [undefined, 'success'],
      'the approval, then the deposit followed to success',
    )
    t.equal(await tokenBalance(recipient), quoted, 'the SVM recipient got the quoted USDC')
  })

  t.test('SVM → EVM: USDC on the SVM chain to USDC on 31337 (adaptSolanaWallet)', async (t) => {
    const user = SVM_USERS[0]!
    const keypair: Keypair = user.keypair
    const recipient = privateKeyToAccount(generatePrivateKey()).address
    const wallet = adaptSolanaWallet(
      user.address,
      SVM_DEVNET_CHAIN_ID,
      connection,
      async (transaction: VersionedTransaction) => {
        transaction.sign([keypair])
        return { signature: await connection.sendTransaction(transaction) }
      },
    )
    const before = await tokenBalance(user.address)
    const quote = await relay().actions.getQuote(
      {
        chainId: SVM_DEVNET_CHAIN_ID,
        toChainId: 31337,
        currency: SVM_STABLECOIN.address,
        toCurrency: EVM_USDC,
        amount: '20000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    )
    const quoted = BigInt(quote.details?.currencyOut?.amount ?? '0')
    t.ok(quoted > 0n, 'the quote promises an output')
    const { data } = await relay().actions.execute({ quote, wallet })
    t.same(
      data.steps.flatMap((step) => (step.items ?? []).map((item) => item.checkStatus)),
      ['success'],
      'the deposit was followed to success',
    )
    t.equal(before - (await tokenBalance(user.address)), 20_000_000n, 'the SVM user paid the quoted input')
    t.equal(await sdk.usdcBalance(31337, recipient), quoted, 'the EVM recipient got the quoted USDC')
  })
  t.test('every call the SDK made was answered 2xx', async (t) => {
    t.ok(sdk.apiCalls.length > 0, 'the SDK called the intent service')
    t.same(
      sdk.apiCalls.filter((call) => call.status >= 300),
      [],
    )
  })
})
