/**
 * Quotes on the real devnet (two anvil chains with the depository and the stablecoin), taken over
 * HTTP and executed as a wallet would: each step signed and sent with viem, then the deposit read
 * back from the chain. Every answer is checked against openapi/intents.yaml.
 */
import { type IntentsApi, ORDER_TYPES, silentLogger } from '@pontis/core'
import {
  DEPOSITORY_ADDRESS,
  devnetEnvironment,
  SOLVER,
  STABLECOIN_ADDRESS,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { listen, loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import { depositoryAbi } from '@pontis/plugin-evm'
import t from 'tap'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  formatUnits,
  type Hex,
  hashStruct,
  http,
  recoverMessageAddress,
  verifyTypedData,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createIntentsApp, createIntentsRuntime, INTENTS_DOCUMENT_PATH } from '../src/index.js'

const NATIVE = '0x0000000000000000000000000000000000000000'
const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
// Many requests from one address: limits off here (keys are still checked); ratelimit tests cover them.
const env = { ...devnetEnvironment(devnet), RATE_LIMITS: 'off' }
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const runtime = await createIntentsRuntime({ env, logger: silentLogger })
const { koa } = await createIntentsApp({ ...runtime, document: loaded })
const server = await listen(koa, { port: 0 })
t.teardown(async () => {
  await server.close()
  await runtime.store.close()
  await runtime.registry.close()
  await devnet.stop()
})

const chainA = devnet.chains[0]!
const publicA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) })
type Quote = IntentsApi.QuoteResponse
type ErrorAnswer = { message: string; errorCode: string }

function wallet(privateKey: Hex) {
  return createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: chainA.chain,
    transport: http(chainA.rpcUrl),
  })
}

/** What a wallet does with a quote: every transaction item sent in order; signature items signed. */
async function execute(quote: Quote, privateKey: Hex): Promise<{ receipts: Hex[]; signatures: Hex[] }> {
  const client = wallet(privateKey)
  const receipts: Hex[] = []
  const signatures: Hex[] = []
  for (const step of quote.steps) {
    for (const item of step.items) {
      if (item.status !== 'incomplete') continue
      const data = item.data
      if (data.format === 'evm-transaction') {
        const hash = await client.sendTransaction({
          to: data.to as Address,
          data: data.data as Hex,
          value: BigInt(data.value),
          ...(data.gas ? { gas: BigInt(data.gas) } : {}),
          ...(data.maxFeePerGas ? { maxFeePerGas: BigInt(data.maxFeePerGas) } : {}),
          ...(data.maxPriorityFeePerGas ? { maxPriorityFeePerGas: BigInt(data.maxPriorityFeePerGas) } : {}),
        })
        const receipt = await publicA.waitForTransactionReceipt({ hash })
        if (receipt.status !== 'success') throw new Error(`step ${step.id} reverted`)
        receipts.push(hash)
      } else if (data.format === 'signature' && data.sign.signatureKind === 'eip712') {
        const sign = data.sign as IntentsApi.Eip712SignPayload
        const typed = {
          domain: sign.domain,
          types: sign.types,
          primaryType: sign.primaryType,
          message: sign.value,
        }
        signatures.push(await client.signTypedData(typed as Parameters<typeof client.signTypedData>[0]))
      } else {
        throw new Error(`unexpected item ${data.format}`)
      }
    }
  }
  return { receipts, signatures }
}

async function depositsIn(hash: Hex) {
  const receipt = await publicA.getTransactionReceipt({ hash })
  return receipt.logs
    .filter((log) => log.address.toLowerCase() === DEPOSITORY_ADDRESS.toLowerCase())
    .map((log) => decodeEventLog({ abi: depositoryAbi, data: log.data, topics: log.topics }))
}

function requestIdOf(quote: Quote): Hex {
  const id = quote.steps[0]?.requestId
  if (!id) throw new Error('no request id')
  return id as Hex
}

const base = (user: Address) => ({
  user,
  originChainId: 31337,
  destinationChainId: 31338,
  tradeType: 'EXACT_INPUT' as const,
})

t.test('native to native bridge: quote, send the deposit, find it on chain', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[0]!
  const res = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '100000000000000000',
    includeProtocolData: true,
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.same(
    quote.steps.map((step) => step.id),
    ['deposit'],
  )
  t.equal(quote.details.operation, 'bridge')
  const amountIn = BigInt(quote.details.currencyIn.amount)
  t.equal(amountIn, 100000000000000000n, 'EXACT_INPUT keeps the amount')
  // Same asset, same decimals: the output is the input less the relayer and app fees.
  t.equal(
    BigInt(quote.details.currencyOut.amount),
    amountIn -
      BigInt(quote.fees.relayer.amount) -
      BigInt(quote.fees.app.amount) +
      BigInt(quote.fees.subsidized.amount),
  )
  t.equal(
    quote.details.currencyOut.amountFormatted,
    formatUnits(BigInt(quote.details.currencyOut.amount), 18),
  )
  t.ok(BigInt(quote.fees.gas.amount) > 0n, 'origin gas is priced from the chain')
  t.ok(BigInt(quote.fees.relayerGas.amount) > 0n, 'destination gas is priced from the chain')

  const requestId = requestIdOf(quote)
  const protocol = quote.protocol?.v2
  t.ok(protocol, 'includeProtocolData returns protocol.v2')
  t.equal(protocol?.orderId, requestId, 'the request id is the order id')
  const recomputed = hashStruct({
    primaryType: 'Order',
    types: ORDER_TYPES,
    data: JSON.parse(JSON.stringify(protocol?.orderData), (key, value) =>
      ['salt', 'amount', 'weight', 'minimumAmount', 'expectedAmount'].includes(key) ? BigInt(value) : value,
    ),
  })
  t.equal(recomputed, requestId, 'orderId is the EIP-712 struct hash of orderData')
  t.equal(
    await recoverMessageAddress({ message: { raw: requestId }, signature: protocol?.orderSignature as Hex }),
    SOLVER.address,
    'the order is signed by the solver key',
  )
  t.equal(protocol?.paymentDetails.depository, DEPOSITORY_ADDRESS)

  const status = await client.get(`/intents/status/v3?requestId=${requestId}`)
  t.equal(status.status, 200)
  t.equal((status.body as IntentsApi.StatusRecordV3).status, 'waiting', 'the stored request is waiting')
  // The swap widget's success modal reads what the quote stored: amounts, currencies and fees.
  const history = await client.get(`/requests/v2?id=${requestId}`)
  t.equal(history.status, 200)
  t.match((history.body as IntentsApi.RequestsPageV2).requests, [
    {
      id: requestId,
      status: 'waiting',
      user: user.address,
      data: {
        metadata: { currencyIn: quote.details.currencyIn, currencyOut: quote.details.currencyOut },
        fees: { gas: quote.fees.relayerGas.amount, price: quote.fees.relayerService.amount },
        inTxs: [],
      },
    },
  ])

  const { receipts } = await execute(quote, user.privateKey)
  const deposits = await depositsIn(receipts[0]!)
  t.equal(deposits.length, 1)
  t.match(deposits[0], {
    eventName: 'RelayNativeDeposit',
    args: { from: user.address, amount: amountIn, id: requestId },
  })
  const facts = await runtime.registry.chain(31337).adapter.reading?.readDeposits(receipts[0]!)
  t.equal(facts?.state, 'success')
  t.match(
    facts?.facts[0],
    { depositId: requestId, amount: amountIn, currencyId: NATIVE },
    'the plugin reads the deposit back',
  )
})

t.test('stablecoin to stablecoin, EXACT_OUTPUT: approve then deposit', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[1]!
  const res = await client.post('/quote/v2', {
    ...base(user.address),
    tradeType: 'EXACT_OUTPUT',
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '250000000',
    appFees: [{ recipient: USERS[3]!.address, fee: '10' }],
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.same(
    quote.steps.map((step) => step.id),
    ['approve', 'deposit'],
    'no allowance yet: approve first',
  )
  t.equal(quote.steps[0]?.items[0]?.check, undefined, 'approve items carry no status check')
  t.match(quote.steps[1]?.items[0]?.check, {
    endpoint: `/intents/status?requestId=${requestIdOf(quote)}`,
    method: 'GET',
  })
  t.ok(BigInt(quote.details.currencyOut.amount) >= 250000000n, 'the output reaches the exact amount')
  t.equal(quote.details.currencyOut.minimumAmount, '250000000')
  t.ok(BigInt(quote.fees.app.amount) > 0n, 'the app fee is charged')
  const { receipts } = await execute(quote, user.privateKey)
  const [deposit] = await depositsIn(receipts[1]!)
  t.match(deposit, {
    eventName: 'RelayErc20Deposit',
    args: {
      from: user.address,
      token: STABLECOIN_ADDRESS,
      amount: BigInt(quote.details.currencyIn.amount),
      id: requestIdOf(quote),
    },
  })
})

t.test('cross-currency ETH to USDC, EXPECTED_OUTPUT, priced from the price table', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[2]!
  const res = await client.post('/quote/v2', {
    ...base(user.address),
    tradeType: 'EXPECTED_OUTPUT',
    originCurrency: NATIVE,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '30000000',
    slippageTolerance: '100',
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.equal(quote.details.operation, 'swap')
  const out = BigInt(quote.details.currencyOut.amount)
  t.ok(out >= 30000000n)
  t.equal(
    BigInt(quote.details.currencyOut.minimumAmount),
    out - (out * 100n + 9999n) / 10000n,
    '1% slippage floor',
  )
  const amountIn = BigInt(quote.details.currencyIn.amount)
  // $30 of ETH at $3000 is 0.01 ETH; fees and the spread make it a little more.
  t.ok(amountIn > 10n ** 16n && amountIn < 11n * 10n ** 15n, `input ${amountIn} is about 0.01 ETH`)
  const { receipts } = await execute(quote, user.privateKey)
  const [deposit] = await depositsIn(receipts[0]!)
  t.match(deposit, { eventName: 'RelayNativeDeposit', args: { amount: amountIn, id: requestIdOf(quote) } })
})

t.test(
  "a same-chain swap is the user's through the swap router; forceSolverExecution quotes the solver route",
  async (t) => {
    const client = createTestClient(t, server.url, loaded.document)
    const user = USERS[0]!
    const body = {
      ...base(user.address),
      destinationChainId: 31337,
      originCurrency: STABLECOIN_ADDRESS,
      destinationCurrency: NATIVE,
      amount: '5000000',
    }
    const selfExecuted = await client.post('/quote/v2', body)
    t.equal(selfExecuted.status, 200)
    t.same(
      (selfExecuted.body as Quote).steps.map((step) => step.id),
      ['approve', 'swap'],
      'approve the router, then swap (test/relay-sdk/same-chain-swaps.test.ts runs them)',
    )
    const solver = await client.post('/quote/v2', { ...body, forceSolverExecution: true })
    t.equal(solver.status, 200)
    const quote = solver.body as Quote
    t.same(
      quote.steps.map((step) => step.id),
      ['approve', 'deposit'],
    )
    const { receipts } = await execute(quote, user.privateKey)
    const [deposit] = await depositsIn(receipts[1]!)
    t.match(deposit, { eventName: 'RelayErc20Deposit', args: { amount: 5000000n, id: requestIdOf(quote) } })
  },
)

t.test('a cross-chain call with txs: the calls are priced and carried in the order', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[1]!
  const target = USERS[3]!.address
  const res = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '50000000000000000',
    txs: [{ to: target, value: '10000000000000000', data: '0x' }],
    includeProtocolData: true,
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.equal(quote.details.operation, 'call')
  t.equal(quote.protocol?.v2?.orderData.output.calls.length, 1)
  const plain = await client.post('/price', {
    ...base(user.address),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '50000000000000000',
  })
  t.ok(
    BigInt(quote.fees.relayerGas.amount) > BigInt((plain.body as Quote).fees.relayerGas.amount),
    'the call makes the fill cost more gas',
  )
  const { receipts } = await execute(quote, user.privateKey)
  const [deposit] = await depositsIn(receipts[0]!)
  t.match(deposit, { eventName: 'RelayNativeDeposit', args: { id: requestIdOf(quote) } })

  const tooMuch = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '50000000000000000',
    txs: [{ to: target, value: '60000000000000000', data: '0x' }],
  })
  t.equal(tooMuch.status, 400)
  t.equal((tooMuch.body as ErrorAnswer).errorCode, 'INVALID_EXTRA_TXS')
})

t.test('permit flow: the signed authorization verifies against the token and deposits', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[2]!
  const res = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '40000000',
    usePermit: true,
    permitExpiry: 900,
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  t.same(
    quote.steps.map((step) => [step.id, step.kind]),
    [['authorize', 'signature']],
  )
  t.equal(quote.fees.gas.amount, '0', 'the user pays no origin gas with a permit')
  const item = quote.steps[0]!.items[0]!.data as IntentsApi.SignatureData
  const sign = item.sign as IntentsApi.Eip712SignPayload
  t.equal(item.post.endpoint, '/execute/permits')
  const { signatures } = await execute(quote, user.privateKey)
  const signature = signatures[0]!
  t.ok(
    await verifyTypedData({
      address: user.address,
      domain: sign.domain,
      types: sign.types,
      primaryType: sign.primaryType,
      message: sign.value,
      signature,
    } as Parameters<typeof verifyTypedData>[0]),
    'the signature verifies for the user',
  )
  t.same(
    item.post.body,
    { kind: 'eip3009-receive', requestId: requestIdOf(quote) },
    "the execute API's body is Relay's {kind, requestId}: the quote kept the terms",
  )
  // What the execute API does with it: the depository pulls the tokens with the authorization.
  const terms = sign.value as {
    from: Address
    value: string
    nonce: Hex
    validAfter: string
    validBefore: string
  }
  const relayer = wallet(SOLVER.privateKey)
  const hash = await relayer.writeContract({
    address: DEPOSITORY_ADDRESS,
    abi: depositoryAbi,
    functionName: 'depositErc20WithAuthorization',
    args: [
      terms.from,
      sign.domain.verifyingContract as Address,
      BigInt(terms.value),
      terms.nonce,
      BigInt(terms.validAfter),
      BigInt(terms.validBefore),
      signature,
    ],
  })
  await publicA.waitForTransactionReceipt({ hash })
  const [deposit] = await depositsIn(hash)
  t.match(deposit, {
    eventName: 'RelayErc20Deposit',
    args: { from: user.address, amount: BigInt(quote.details.currencyIn.amount), id: requestIdOf(quote) },
  })
  t.ok(
    BigInt(quote.fees.relayerGas.amount) > 0n,
    "the service's gas for submitting the deposit is part of the execution cost",
  )
})

t.test('deposit address: a plain transfer to a per-request address', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[3]!
  const res = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '20000000000000000',
    useDepositAddress: true,
    strict: true,
    refundTo: user.address,
  })
  t.equal(res.status, 200)
  const quote = res.body as Quote
  const depositAddress = quote.steps[0]?.depositAddress as Address
  t.match(depositAddress, /^0x[0-9a-fA-F]{40}$/)
  t.not(depositAddress, DEPOSITORY_ADDRESS)
  await execute(quote, user.privateKey)
  t.equal(
    await publicA.getBalance({ address: depositAddress }),
    20000000000000000n,
    'the deposit address holds the deposit',
  )
  const again = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '20000000000000000',
    useDepositAddress: true,
  })
  t.not((again.body as Quote).steps[0]?.depositAddress, depositAddress, 'each request has its own address')
  const token = await client.post('/quote/v2', {
    ...base(user.address),
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '20000000',
    useDepositAddress: true,
  })
  t.equal(
    (token.body as ErrorAnswer).errorCode,
    'UNSUPPORTED_EXECUTION_TYPE',
    'deposit addresses take native only',
  )
})

t.test('sponsorship: selected components, cap and capHit', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[0]!
  const body = {
    ...base(user.address),
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '100000000',
  }
  const full = (await client.post('/price', { ...body, subsidizeFees: true })).body as Quote
  t.same(full.feeSponsorship?.quoted.selectedComponents, ['execution', 'relay', 'app', 'swap'])
  t.same(
    Object.keys(full.feeSponsorship?.quoted.components ?? {}).sort(),
    ['app', 'execution', 'relay', 'rent', 'swap'],
    'every bucket is answered, the service fee as `relay`',
  )
  t.equal(full.feeSponsorship?.quoted.sponsoredTotal.amount, full.fees.subsidized.amount)
  t.equal(full.feeSponsorship?.quoted.userPaysTotal.amount, '0', 'fully sponsored: the user pays nothing')
  const byAlias = (
    await client.post('/price', { ...body, subsidizeFees: true, sponsoredFeeComponents: ['service'] })
  ).body as Quote
  t.same(
    byAlias.feeSponsorship?.quoted.selectedComponents,
    ['relay'],
    "`service` is the specs' name for `relay`",
  )
  const byName = (
    await client.post('/price', { ...body, subsidizeFees: true, sponsoredFeeComponents: ['relay'] })
  ).body as Quote
  t.same(byName.feeSponsorship, byAlias.feeSponsorship, 'the same bucket either way')
  t.equal(
    full.fees.subsidized.amount,
    (BigInt(full.fees.relayerGas.amount) + BigInt(full.fees.relayerService.amount)).toString(),
  )
  t.equal(full.details.currencyOut.amount, '100000000', 'fully sponsored: the user receives everything')
  const capped = (
    await client.post('/price', { ...body, subsidizeFees: true, maxSubsidizationAmount: '1000' })
  ).body as Quote
  t.equal(capped.fees.subsidized.amount, '1000', 'a $0.001 cap in USDC micro-units')
  t.equal(capped.feeSponsorship?.quoted.capHit, true)
  const quoted = capped.feeSponsorship!.quoted
  const bucket = quoted.components.execution
  t.equal(BigInt(bucket.sponsored.amount) + BigInt(bucket.userPays.amount), BigInt(bucket.total.amount))
  const buckets = Object.values(quoted.components)
  t.equal(
    BigInt(quoted.sponsoredTotal.amount),
    buckets.reduce((sum, each) => sum + BigInt(each.sponsored.amount), 0n),
    'sponsoredTotal is the sum of the sponsored parts',
  )
  t.equal(
    BigInt(quoted.userPaysTotal.amount),
    buckets.reduce((sum, each) => sum + BigInt(each.userPays.amount), 0n),
    'userPaysTotal is the sum of the user-paid parts',
  )
})

t.test('route and input errors answer the catalogued codes', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const user = USERS[0]!.address
  const ok = {
    ...base(user),
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount: '100000000000000000',
  }
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['unknown chain', { ...ok, destinationChainId: 999 }, 'UNSUPPORTED_CHAIN'],
    [
      'unknown token',
      { ...ok, destinationCurrency: '0x000000000000000000000000000000000000dEaD' },
      'UNSUPPORTED_CURRENCY',
    ],
    ['bad currency', { ...ok, originCurrency: '0x1234' }, 'INVALID_INPUT_CURRENCY'],
    ['bad recipient', { ...ok, recipient: '0x1234' }, 'INVALID_RECIPIENT'],
    ['bad user', { ...ok, user: 'alice' }, 'INVALID_ADDRESS'],
    ['dust', { ...ok, amount: '1000' }, 'AMOUNT_TOO_LOW'],
    [
      'more than the solver holds',
      { ...ok, amount: (20000n * 10n ** 18n).toString() },
      'INSUFFICIENT_LIQUIDITY',
    ],
    ['top-up on a native output', { ...ok, topupGas: true }, 'UNSUPPORTED_ROUTE'],
    ['permit on native', { ...ok, usePermit: true }, 'UNSUPPORTED_EXECUTION_TYPE'],
    ['SVM-only option', { ...ok, maxRouteLength: 3 }, 'UNSUPPORTED_ROUTE'],
    [
      'deposit-specified txs',
      { ...ok, gasLimitForDepositSpecifiedTxs: 100000 },
      'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS',
    ],
    ['same currency same chain', { ...ok, destinationChainId: 31337 }, 'UNSUPPORTED_ROUTE'],
    [
      'strict without a deposit address',
      { ...ok, strict: true, refundTo: user },
      'UNSUPPORTED_EXECUTION_TYPE',
    ],
    ['permitExpiry without usePermit', { ...ok, permitExpiry: 300 }, 'UNSUPPORTED_EXECUTION_TYPE'],
    [
      'true exact output on EXACT_INPUT',
      { ...ok, enableTrueExactOutput: true },
      'UNSUPPORTED_EXECUTION_TYPE',
    ],
    ['external liquidity', { ...ok, useExternalLiquidity: true }, 'UNSUPPORTED_ROUTE'],
    [
      'a direct deposit with a permit',
      {
        ...ok,
        originCurrency: STABLECOIN_ADDRESS,
        amount: '10000000',
        usePermit: true,
        explicitDeposit: false,
      },
      'UNSUPPORTED_EXECUTION_TYPE',
    ],
    ['user only valid on origin', { ...ok, user: '0x1234' }, 'INVALID_ADDRESS'],
    [
      'txs call to a non-address',
      {
        ...ok,
        txs: [{ to: '0x0000000000000000000000000000000000000001', value: '0', data: '0x' }],
        authorizationList: [{ chainId: 5, address: user, nonce: 0, yParity: 0, r: '0x1', s: '0x1' }],
      },
      'INVALID_EXTRA_TXS',
    ],
  ]
  for (const [name, body, code] of cases) {
    const res = await client.post('/quote/v2', body)
    t.equal(res.status, 400, `${name}: 400`)
    t.equal((res.body as ErrorAnswer).errorCode, code, `${name}: ${code}`)
    t.ok((res.body as ErrorAnswer).message.length > 20, `${name}: a message a person can act on`)
  }
  const topup = await client.post('/quote/v2', {
    ...ok,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '10000000000000000',
    topupGas: true,
  })
  t.equal(topup.status, 200, 'a gas top-up on a token output is quoted')
})

t.test('/price answers the same amounts as a quote, without steps, and stores nothing', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const body = {
    ...base(USERS[1]!.address),
    originCurrency: STABLECOIN_ADDRESS,
    destinationCurrency: STABLECOIN_ADDRESS,
    amount: '70000000',
    includeProtocolData: true,
  }
  const price = (await client.post('/price', body)).body as Quote
  const quote = (await client.post('/quote/v2', body)).body as Quote
  t.notOk('steps' in price)
  t.equal(price.fees.relayerService.amount, quote.fees.relayerService.amount)
  t.equal(price.details.currencyIn.amount, quote.details.currencyIn.amount)
  const priced = await client.get(`/intents/status/v3?requestId=${price.protocol?.v2?.orderId}`)
  t.equal(priced.status, 404, 'a price is not a request')
})

t.test('a disabled chain answers CHAIN_DISABLED', async (t) => {
  const { cp, mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { REPO_CONFIG_DIR } = await import('../../../test/helpers/environments.js')
  const configDir = await mkdtemp(join(tmpdir(), 'pontis-disabled-'))
  t.teardown(() => rm(configDir, { recursive: true, force: true }))
  await cp(REPO_CONFIG_DIR, configDir, { recursive: true })
  const file = join(configDir, 'chains.local.json')
  const config = JSON.parse(await readFile(file, 'utf8')) as {
    chains: Array<{ id: number; disabled: boolean }>
  }
  for (const chain of config.chains) if (chain.id === 31338) chain.disabled = true
  await writeFile(file, JSON.stringify(config))
  const disabled = await createIntentsRuntime({ env, configDir, logger: silentLogger })
  t.teardown(async () => {
    await disabled.store.close()
    await disabled.registry.close()
  })
  await t.rejects(
    disabled.engine.quote(
      {
        ...base(USERS[0]!.address),
        originCurrency: NATIVE,
        destinationCurrency: NATIVE,
        amount: '100000000000000000',
      },
      { withSteps: true },
    ),
    { code: 'CHAIN_DISABLED', message: /Pontis Local B \(31338\) is disabled/ },
  )
})

t.test(
  'RPC economy: a warm repeat quote reads nothing from the chains again within the cache TTL',
  async (t) => {
    const { createServer } = await import('node:http')
    const calls: string[] = []
    /** A loopback JSON-RPC proxy that counts the methods it forwards. */
    const proxyTo = async (target: string) => {
      const proxy = createServer(async (req, res) => {
        const chunks: Buffer[] = []
        for await (const chunk of req) chunks.push(chunk as Buffer)
        const body = Buffer.concat(chunks).toString()
        const parsed = JSON.parse(body) as { method: string } | Array<{ method: string }>
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) calls.push(call.method)
        const answer = await fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        res.writeHead(answer.status, { 'content-type': 'application/json' })
        res.end(await answer.text())
      })
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
      t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())))
      return `http://127.0.0.1:${(proxy.address() as { port: number }).port}`
    }
    const counted = await createIntentsRuntime({
      env: {
        ...env,
        LOCAL_A_RPC_URL: await proxyTo(devnet.chains[0]!.rpcUrl),
        LOCAL_B_RPC_URL: await proxyTo(devnet.chains[1]!.rpcUrl),
      },
      logger: silentLogger,
    })
    t.teardown(async () => {
      await counted.store.close()
      await counted.registry.close()
    })
    for (const currency of [NATIVE, STABLECOIN_ADDRESS]) {
      const body = {
        ...base(USERS[0]!.address),
        originCurrency: currency,
        destinationCurrency: currency,
        amount: currency === NATIVE ? '100000000000000000' : '100000000',
      }
      calls.length = 0
      await counted.engine.quote(body, { withSteps: true })
      t.ok(
        calls.length > 0,
        `the first ${currency === NATIVE ? 'ETH' : 'USDC'} quote reads the chains (${calls.join(', ')})`,
      )
      calls.length = 0
      await counted.engine.quote(body, { withSteps: true })
      t.same(calls, [], 'the warm repeat makes no RPC call')
    }
  },
)

t.test('x-api-key ties the stored request to its key', async (t) => {
  const client = createTestClient(t, server.url, loaded.document)
  const { key, secret } = await runtime.keys.create({ label: 'e2e partner', tier: 'standard' })
  const res = await client.post(
    '/quote/v2',
    {
      ...base(USERS[0]!.address),
      originCurrency: NATIVE,
      destinationCurrency: NATIVE,
      amount: '100000000000000000',
    },
    { headers: { 'x-api-key': secret } },
  )
  t.equal(res.status, 200)
  const stored = await runtime.store.getRequest(requestIdOf(res.body as Quote))
  t.equal(stored?.apiKeyId, key.id)
  await runtime.keys.revoke(key.id)
  const revoked = await client.post(
    '/quote/v2',
    {
      ...base(USERS[0]!.address),
      originCurrency: NATIVE,
      destinationCurrency: NATIVE,
      amount: '100000000000000000',
    },
    { headers: { 'x-api-key': secret } },
  )
  t.equal(revoked.status, 401, 'a revoked key is refused at once')
  t.equal((revoked.body as ErrorAnswer).errorCode, 'UNAUTHORIZED')
})
