/**
 * SVM requests end to end on the devnet, through HTTP only: LiteSVM (behind the devnet's Solana
 * RPC) executes the transactions the quotes return, signed by the test's keypairs, and the anvil
 * chains the other side. Also the 1232-byte guard, route by route, and SVM address rules.
 */
import { type IntentsApi, silentLogger } from '@pontis/core'
import {
  devnetEnvironment,
  STABLECOIN_ADDRESS,
  SVM_DEVNET_CHAIN_ID,
  SVM_ROUTE_TOKENS,
  SVM_STABLECOIN,
  SVM_USERS,
  SVM_VAULT_OWNER,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, errorDataOf, type TestClient } from '@pontis/http/testing'
import { erc20Abi } from '@pontis/plugin-evm'
import { getAssociatedTokenAddressSync } from '@solana/spl-token'
import { Connection, Keypair, PublicKey, VersionedTransaction } from '@solana/web3.js'
import t, { type Test } from 'tap'
import { type Address, createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH, startIntentsService } from '../src/index.js'

type Quote = IntentsApi.QuoteResponse
type Status = IntentsApi.StatusRecordV3
type ErrorAnswer = { message: string; errorCode: string; errorData?: string }
type SvmItem = {
  format: 'svm-transaction'
  transaction: string
  size: number
  sizeLimit: number
  headroom: number
}

const SVM = SVM_DEVNET_CHAIN_ID
const EVM = 31337

const devnet = await startDevnet({
  chains: [{ chainId: EVM, port: 0 }],
  svm: { port: 0, routesPort: 0, slotIntervalMs: 40 },
})
t.teardown(() => devnet.stop())
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const service = await startIntentsService({
  env: { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' },
  port: 0,
  logger: silentLogger,
  document: loaded,
  indexerIntervalMs: 150,
  solverIntervalMs: 100,
})
t.teardown(() => service.close())
const svmRpcUrl = devnet.svm?.rpcUrl as string
const connection = new Connection(svmRpcUrl, 'confirmed')
const evmChain = devnet.chains[0] as (typeof devnet.chains)[0]
const evmClient = createPublicClient({
  chain: evmChain.chain,
  transport: http(evmChain.rpcUrl),
}) as PublicClient

const evmBalance = (owner: Address, token: Address) =>
  evmClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })

async function svmTokenBalance(owner: string, mint: string): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true)
  const info = await connection.getAccountInfo(account, 'confirmed')
  if (!info) return 0n
  return BigInt((await connection.getTokenAccountBalance(account, 'confirmed')).value.amount)
}

async function confirmed(signature: string): Promise<void> {
  const status = await waitFor(
    `transaction ${signature} to be confirmed`,
    async () => (await connection.getSignatureStatuses([signature])).value[0],
    {
      until: (seen) =>
        Boolean(seen?.err) ||
        seen?.confirmationStatus === 'confirmed' ||
        seen?.confirmationStatus === 'finalized',
    },
  )
  if (status?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(status.err)}`)
}

/** Signs the quoted SVM transaction as a wallet would and sends it; returns the signature. */
async function executeSvm(t: Test, quote: Quote, signer: Keypair): Promise<string> {
  const item = quote.steps[0]?.items[0]?.data as unknown as SvmItem
  t.equal(item.format, 'svm-transaction')
  const transaction = VersionedTransaction.deserialize(Buffer.from(item.transaction, 'base64'))
  t.equal(transaction.serialize().length, item.size, 'size is the wire size of the served transaction')
  t.equal(item.headroom, 1232 - item.size, 'headroom is what is left of 1232 bytes')
  transaction.sign([signer])
  const signature = await connection.sendRawTransaction(transaction.serialize())
  await confirmed(signature)
  return signature
}

async function executeEvm(quote: Quote, privateKey: Hex): Promise<Hex> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: evmChain.chain,
    transport: http(evmChain.rpcUrl),
  })
  let last: Hex | undefined
  for (const step of quote.steps) {
    for (const item of step.items) {
      const data = item.data as { format: string; to: Address; data: Hex; value: string; gas?: string }
      if (data.format !== 'evm-transaction') throw new Error(`unexpected ${data.format}`)
      last = await wallet.sendTransaction({
        to: data.to,
        data: data.data,
        value: BigInt(data.value),
        // The step's limit, as the Relay SDK sends it: a bare estimate runs out of gas when a
        // repayment empties the depository's balance first.
        ...(data.gas ? { gas: BigInt(data.gas) } : {}),
      })
      await evmClient.waitForTransactionReceipt({ hash: last })
    }
  }
  return last as Hex
}

async function settle(client: TestClient, requestId: string): Promise<Status> {
  return waitFor(
    `request ${requestId} to be final`,
    async () => (await client.get(`/intents/status/v3?requestId=${requestId}`)).body as Status,
    {
      until: (record) => ['success', 'failure', 'refund'].includes(record.status),
      describe: (record) => record && { status: record.status, details: record.details },
    },
  )
}

t.test('SVM to EVM: a USDC deposit transaction signed by the user reaches success', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = SVM_USERS[0]!
  const recipient = USERS[0]!.address
  const res = await client.post('/quote/v2', {
    user: user.address,
    recipient,
    originChainId: SVM,
    destinationChainId: EVM,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '50000000',
    tradeType: 'EXACT_INPUT',
  })
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const vaultBefore = await svmTokenBalance(SVM_VAULT_OWNER.address, SVM_STABLECOIN.address)
  const before = await evmBalance(recipient, STABLECOIN_ADDRESS)
  const signature = await executeSvm(t, quote, user.keypair)
  const indexed = await client.post('/transactions/index', { chainId: SVM, txHash: signature })
  t.equal(indexed.status, 200)
  t.equal((indexed.body as { requestId?: string }).requestId, requestId, 'matched by the memo')
  const done = await settle(client, requestId)
  t.equal(done.status, 'success')
  t.ok(done.inTxHashes.includes(signature), 'the base58 signature is kept exactly')
  t.equal(await svmTokenBalance(SVM_VAULT_OWNER.address, SVM_STABLECOIN.address), vaultBefore + 50_000_000n)
  const received = (await evmBalance(recipient, STABLECOIN_ADDRESS)) - before
  t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), `received ${received}`)
})

t.test('EVM to SVM: the solver pays a new recipient, creating its token account (rent priced)', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = USERS[1]!
  const recipient = Keypair.generate().publicKey.toBase58()
  const body = {
    user: user.address,
    recipient,
    originChainId: EVM,
    destinationChainId: SVM,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: SVM_STABLECOIN.address,
    amount: '40000000',
    tradeType: 'EXACT_INPUT',
    subsidizeFees: true,
    sponsoredFeeComponents: ['execution'],
  }
  const res = await client.post('/quote/v2', body)
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  const rent = quote.feeSponsorship?.quoted.components.rent
  t.ok(rent && BigInt(rent.total.amount) > 0n, 'the new token account rent is a fee of its own')
  t.equal(rent?.selected, false, 'rent stays user-paid unless selected')
  const requestId = quote.steps[0]?.requestId as string
  const txHash = await executeEvm(quote, user.privateKey)
  t.equal((await client.post('/transactions/index', { chainId: EVM, txHash })).status, 200)
  const done = await settle(client, requestId)
  t.equal(done.status, 'success')
  const fill = done.txHashes[0] as string
  t.match(fill, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/, 'the fill is an SVM signature')
  const received = await svmTokenBalance(recipient, SVM_STABLECOIN.address)
  t.ok(received >= BigInt(quote.details.currencyOut.minimumAmount), `received ${received}`)
  const fillTransaction = await connection.getTransaction(fill, { maxSupportedTransactionVersion: 0 })
  t.match(
    fillTransaction?.meta?.logMessages?.join('\n') ?? '',
    new RegExp(`Memo \\(len 66\\): "${requestId}"`),
    'the fill carries the order id in a memo',
  )
})

t.test('SVM to EVM with an origin swap: the route executes inside the deposit', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const user = SVM_USERS[1]!
  const token = SVM_ROUTE_TOKENS[1]!
  const recipient = USERS[2]!.address
  const body = {
    user: user.address,
    recipient,
    originChainId: SVM,
    destinationChainId: EVM,
    originCurrency: token.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: (25n * 10n ** BigInt(token.decimals)).toString(),
    tradeType: 'EXACT_INPUT',
    includedOriginSwapSources: ['SimSwap'],
  }
  const res = await client.post('/quote/v2', body)
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  t.same(quote.details.route?.origin?.includedSwapSources, ['SimSwap'], 'the route leg names its venue')
  t.ok(Number(quote.details.swapImpact?.percent) <= 0, 'the swap impact is reported')
  // The same request without origin swaps, or with its only source excluded, has no route.
  for (const refusal of [{ disableOriginSwaps: true }, { excludedSwapSources: ['svm-aggregator'] }]) {
    const refused = await client.post('/quote/v2', { ...body, ...refusal })
    t.equal(refused.status, 400, JSON.stringify(refusal))
    t.match(refused.body, { errorCode: 'NO_SWAP_ROUTES_FOUND' })
  }
  // Route legs are currency amounts, as Relay's published types read them.
  t.equal(quote.details.route?.origin?.inputCurrency?.currency?.address, token.address)
  t.equal(quote.details.route?.origin?.outputCurrency?.currency?.address, SVM_STABLECOIN.address)
  const requestId = quote.steps[0]?.requestId as string
  const tokenBefore = await svmTokenBalance(user.address, token.address)
  const before = await evmBalance(recipient, STABLECOIN_ADDRESS)
  const signature = await executeSvm(t, quote, user.keypair)
  t.equal(
    await svmTokenBalance(user.address, token.address),
    tokenBefore - 25n * 10n ** BigInt(token.decimals),
  )
  await client.post('/transactions/index', { chainId: SVM, txHash: signature })
  const done = await settle(client, requestId)
  t.equal(done.status, 'success')
  t.ok(
    (await evmBalance(recipient, STABLECOIN_ADDRESS)) - before >=
      BigInt(quote.details.currencyOut.minimumAmount),
  )
})

interface SizeRow {
  readonly name: string
  readonly options: Record<string, unknown>
  readonly fits: boolean
  /** Within this many bytes of the limit (a row just under or just over it). */
  readonly near?: number
}

// Routes from a route token into SOL (the output is ETH, so the vault takes SOL), calibrated on the
// route simulator's pools (packages/devnet/src/svm/routes/README.md).
const SIZE_ROWS: readonly SizeRow[] = [
  { name: 'best route (4 heavy hops)', options: {}, fits: false },
  { name: 'maxRouteLength 4', options: { maxRouteLength: 4 }, fits: false },
  { name: 'maxRouteLength 3', options: { maxRouteLength: 3 }, fits: false },
  {
    name: 'maxRouteLength 2: two heavy hops, just over',
    options: { maxRouteLength: 2 },
    fits: false,
    near: 150,
  },
  {
    name: 'maxRouteLength 2 on SimOracle: two light hops, just under',
    options: { maxRouteLength: 2, includedOriginSwapSources: ['SimOracle'] },
    fits: true,
    near: 100,
  },
  {
    name: 'the same with useSharedAccounts: no intermediate token account',
    options: { maxRouteLength: 2, includedOriginSwapSources: ['SimOracle'], useSharedAccounts: true },
    fits: true,
  },
  { name: 'maxRouteLength 1: one heavy hop', options: { maxRouteLength: 1 }, fits: true },
  { name: 'one size-conservative source', options: { includedOriginSwapSources: ['SimSwap'] }, fits: true },
]

t.test('the 1232-byte guard, route by route (hop count and sources)', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const token = SVM_ROUTE_TOKENS[2]!
  const base = {
    user: SVM_USERS[2]!.address,
    recipient: USERS[0]!.address,
    originChainId: SVM,
    destinationChainId: EVM,
    originCurrency: token.address,
    destinationCurrency: '0x0000000000000000000000000000000000000000',
    amount: (10n * 10n ** BigInt(token.decimals)).toString(),
    tradeType: 'EXACT_INPUT',
  }
  const sizes = new Map<string, number>()
  for (const row of SIZE_ROWS) {
    const res = await client.post('/quote/v2', { ...base, ...row.options })
    if (row.fits) {
      t.equal(res.status, 200, `${row.name}: served`)
      const item = (res.body as Quote).steps[0]?.items[0]?.data as unknown as SvmItem
      t.ok(item.size <= 1232, `${row.name}: ${item.size} bytes`)
      sizes.set(row.name, item.size)
      if (row.near !== undefined) t.ok(item.size > 1232 - row.near, `${row.name}: just under (${item.size})`)
      t.comment(`${row.name}: ${item.size} bytes, headroom ${item.headroom}`)
    } else {
      t.equal(res.status, 400, `${row.name}: refused`)
      const error = res.body as ErrorAnswer
      t.equal(error.errorCode, 'SOLANA_TX_TOO_LARGE')
      t.match(error.message, /^transaction is (\d+) bytes, (\d+) over the 1232 byte limit/)
      const [, size, over] = /^transaction is (\d+) bytes, (\d+) over/.exec(error.message) ?? []
      t.equal(Number(size) - 1232, Number(over), `${row.name}: the numbers add up`)
      t.same(errorDataOf(error), { size: Number(size), limit: 1232, overBy: Number(over) })
      t.match(error.message, /maxRouteLength|includedOriginSwapSources/, 'the message says how to recover')
      if (row.near !== undefined) t.ok(Number(over) < row.near, `${row.name}: just over (${over})`)
      t.comment(`${row.name}: ${size} bytes, ${over} over`)
    }
  }
  t.ok(
    (sizes.get(SIZE_ROWS[5]!.name) as number) < (sizes.get(SIZE_ROWS[4]!.name) as number),
    'shared accounts make the same route smaller',
  )
  // /price and the older /quote measure the same transaction.
  for (const path of ['/price', '/quote']) {
    const res = await client.post(path, base)
    t.equal(res.status, 400, `${path}: refused`)
    t.equal((res.body as ErrorAnswer).errorCode, 'SOLANA_TX_TOO_LARGE', `${path}: SOLANA_TX_TOO_LARGE`)
    const fits = await client.post(path, { ...base, includedOriginSwapSources: ['SimSwap'] })
    t.equal(fits.status, 200, `${path}: a conservative route is priced`)
  }
})

t.test('SVM address rules on quotes', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const valid = {
    user: SVM_USERS[0]!.address,
    recipient: USERS[0]!.address,
    originChainId: SVM,
    destinationChainId: EVM,
    originCurrency: SVM_STABLECOIN.address,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '10000000',
    tradeType: 'EXACT_INPUT',
  }
  const toSvm = {
    user: USERS[0]!.address,
    recipient: SVM_USERS[0]!.address,
    originChainId: EVM,
    destinationChainId: SVM,
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: SVM_STABLECOIN.address,
    amount: '10000000',
    tradeType: 'EXACT_INPUT',
  }
  const lowered = SVM_USERS[0]!.address.toLowerCase()
  const cases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
    ['EVM address as SVM user', { ...valid, user: USERS[0]!.address }, 'INVALID_ADDRESS'],
    ['EVM address as SVM recipient', { ...toSvm, recipient: USERS[1]!.address }, 'INVALID_RECIPIENT'],
    [
      'EVM token as SVM origin currency',
      { ...valid, originCurrency: STABLECOIN_ADDRESS },
      'INVALID_INPUT_CURRENCY',
    ],
    [
      'EVM token as SVM destination currency',
      { ...toSvm, destinationCurrency: STABLECOIN_ADDRESS },
      'INVALID_OUTPUT_CURRENCY',
    ],
    [
      'bad base58 recipient',
      { ...toSvm, recipient: `0OIl${SVM_USERS[0]!.address.slice(4)}` },
      'INVALID_RECIPIENT',
    ],
    [
      'wrong length recipient',
      { ...toSvm, recipient: SVM_USERS[0]!.address.slice(0, 30) },
      'INVALID_RECIPIENT',
    ],
    ['SVM address as EVM recipient', { ...valid, recipient: SVM_USERS[1]!.address }, 'INVALID_RECIPIENT'],
    ['SVM-only option on an EVM origin', { ...toSvm, maxRouteLength: 3 }, 'UNSUPPORTED_ROUTE'],
    // The SVM plugin does not declare explicitDeposit: its deposit is always the vault transfer with a memo.
    [
      'a direct deposit from an SVM origin',
      { ...valid, explicitDeposit: false },
      'UNSUPPORTED_EXECUTION_TYPE',
    ],
  ]
  for (const [name, body, code] of cases) {
    const res = await client.post('/quote/v2', body)
    t.equal(res.status, 400, `${name}: 400`)
    t.equal((res.body as ErrorAnswer).errorCode, code, `${name}: ${code}`)
  }
  const direct = await client.post('/quote/v2', { ...valid, explicitDeposit: false })
  t.match(
    (direct.body as ErrorAnswer).message,
    /svm origins such as .* take no direct transfers.*Remove explicitDeposit: false/,
    'the refusal says why and what to change',
  )
  const explicit = await client.post('/quote/v2', { ...valid, explicitDeposit: true })
  t.equal(explicit.status, 200, 'explicitDeposit: true, the default, is accepted on any origin')
  // Lower-casing a base58 key makes another (or no) key: never the same user.
  const wrongCase = await client.post('/quote/v2', { ...toSvm, recipient: lowered })
  if (wrongCase.status === 200) {
    t.not(
      (wrongCase.body as Quote).details.recipient,
      SVM_USERS[0]!.address,
      'wrong case is another recipient',
    )
  } else {
    t.equal((wrongCase.body as ErrorAnswer).errorCode, 'INVALID_RECIPIENT', 'wrong case: invalid')
  }
})
