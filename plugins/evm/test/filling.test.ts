/**
 * The EVM plugin's solver side on the real devnet (two anvil chains with the depository, the
 * stablecoin and the multicaller): fills, refunds, broadcasts, outcomes, fill/refund facts and the
 * deposit scan, through a registry with the real plugin as the services build it.
 */
import { readFileSync } from 'node:fs'
import {
  type ChainAdapter,
  type ChainEntry,
  createRegistry,
  type FillingCapability,
  PontisError,
  type ReadingCapability,
  type SolverCredentials,
  type TransactionOutcome,
} from '@pontis/core'
import {
  ALLOCATOR,
  type DevAccount,
  type DevnetChain,
  MULTICALLER_ADDRESS,
  SOLVER,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import t from 'tap'
import {
  type Address,
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  type Hex,
  hashStruct,
  http,
  keccak256,
  maxUint256,
  parseEther,
  parseTransaction,
  toHex,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import evmPlugin, {
  CALL_REQUEST_TYPES,
  decodeRevert,
  depositoryAbi,
  EVM_NATIVE_CURRENCY_ID,
  erc20Abi,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  UNKNOWN_ORDER_ID,
} from '../src/index.js'

const NATIVE = EVM_NATIVE_CURRENCY_ID as Address
const SEED = '0x7c3f5d0e9a1b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d'
const credentials: SolverCredentials = { solverKey: SOLVER.privateKey, allocatorKey: ALLOCATOR.privateKey }

const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
t.teardown(() => devnet.stop())
const [devA, devB] = devnet.chains as [DevnetChain, DevnetChain]
const [alice, bob, carol, dave] = USERS as [DevAccount, DevAccount, DevAccount, DevAccount]

/** A chain entry of configs/chains.local.json (defaults resolved), pointed at this devnet. */
function entryFor(chain: DevnetChain, plugin: Record<string, unknown>): ChainEntry {
  const config = readFileSync(new URL('../../../configs/chains.local.json', import.meta.url), 'utf8')
  // The config's placeholders fall back to their defaults (the devnet's fixed addresses).
  const resolved = config.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')
  const entries = (JSON.parse(resolved) as { chains: Array<Record<string, unknown>> }).chains
  const entry = entries.find((candidate) => candidate.id === chain.chainId)
  if (!entry) throw new Error(`no chain ${chain.chainId} in chains.local.json`)
  return {
    ...entry,
    httpRpcUrl: chain.rpcUrl,
    rpc: { url: chain.rpcUrl },
    plugin: { ...(entry.plugin as object), readCacheSeconds: 0, ...plugin },
  } as unknown as ChainEntry
}

const registry = createRegistry()
registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
await registry.addChains([
  entryFor(devA, { multicaller: devA.contracts.multicaller, depositAddressSeed: SEED, maxLogBlockRange: 2 }),
  entryFor(devB, { multicaller: devB.contracts.multicaller }),
])
t.teardown(() => registry.close())

function parts(chain: DevnetChain) {
  const adapter: ChainAdapter = registry.chain(chain.chainId).adapter
  const filling = adapter.filling as FillingCapability
  const reading = adapter.reading as ReadingCapability
  const transport = http(chain.rpcUrl)
  const publicClient = createPublicClient({ chain: chain.chain, transport, pollingInterval: 50 })
  const testClient = createTestClient({ chain: chain.chain, transport, mode: 'anvil' })
  const wallet = (account: DevAccount) =>
    createWalletClient({ chain: chain.chain, transport, account: privateKeyToAccount(account.privateKey) })
  const usdc = chain.contracts.stablecoin
  const usdcOf = (owner: Address) =>
    publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })
  const ethOf = (owner: Address) => publicClient.getBalance({ address: owner })
  /** Polls `outcome` until the transaction is mined. */
  const settled = (transactionId: string): Promise<TransactionOutcome> =>
    waitFor(`${transactionId} to be mined`, () => filling.outcome(transactionId), {
      until: (outcome) => outcome.state === 'success' || outcome.state === 'reverted',
    })
  const mined = async (hash: Hex) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new Error(`${hash} reverted`)
    return receipt
  }
  return { adapter, filling, reading, publicClient, testClient, wallet, usdc, usdcOf, ethOf, settled, mined }
}

const a = parts(devA)
const b = parts(devB)
const randomId = (): Hex => keccak256(toHex(crypto.getRandomValues(new Uint8Array(32))))

t.test('adapter: filling only with a multicaller; solver address and nonces', async (t) => {
  t.ok(a.adapter.filling && b.adapter.filling, 'both devnet chains fill')
  const other = createRegistry()
  other.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  const withoutMulticaller = entryFor(devB, {})
  const { multicaller: _dropped, ...pluginOptions } = withoutMulticaller.plugin as Record<string, unknown>
  const [plain] = await other.addChains([{ ...withoutMulticaller, plugin: pluginOptions }])
  t.equal(plain?.adapter.filling, undefined, 'no multicaller, no filling')
  const viaRecord = createRegistry()
  viaRecord.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
  const [fromContracts] = await viaRecord.addChains([
    { ...entryFor(devB, {}), contracts: { multicaller: MULTICALLER_ADDRESS } } as ChainEntry,
  ])
  t.ok(fromContracts?.adapter.filling, "the public record's contracts.multicaller also enables filling")

  const fill = {
    orderId: randomId(),
    recipient: bob.address,
    currencyId: NATIVE,
    amount: 1n,
    calls: [],
    topupNativeAmount: 0n,
  }
  await t.rejects(b.filling.signFill({ ...fill, orderId: '0x1234' }, credentials), {
    code: 'INVALID_REQUEST',
  })
  await t.rejects(b.filling.signFill({ ...fill, recipient: 'bob' }, credentials), {
    code: 'INVALID_RECIPIENT',
  })
  await t.rejects(
    b.filling.signFill({ ...fill, calls: [{ to: bob.address, value: 0n, data: '0xabc' }] }, credentials),
    { code: 'INVALID_EXTRA_TXS' },
  )
  const keyError = await b.filling
    .signFill(fill, { solverKey: `0x${'zz'.repeat(32)}` })
    .catch((caught: unknown) => caught)
  t.match(String(keyError), /credentials.solverKey must be/)
  t.notMatch(String(keyError), /zzzz/, 'the key is not echoed')

  t.equal(b.filling.solverAddress(credentials), getAddress(SOLVER.address))
  t.throws(() => b.filling.solverAddress({ solverKey: 'nope' }), /credentials.solverKey must be/)
  t.equal(
    await b.filling.nextNonce(SOLVER.address),
    BigInt(await b.publicClient.getTransactionCount({ address: SOLVER.address, blockTag: 'pending' })),
  )
})

t.test('a token fill with calls and a gas top-up pays exactly, is recognised, and pays once', async (t) => {
  const orderId = randomId()
  const depositId = randomId()
  const request = {
    orderId,
    recipient: alice.address,
    currencyId: b.usdc,
    amount: 12_345_678n,
    topupNativeAmount: parseEther('0.01'),
    calls: [
      { to: bob.address, value: 3n, data: '0x' },
      {
        to: devB.contracts.depository,
        value: 1000n,
        data: encodeFunctionData({
          abi: depositoryAbi,
          functionName: 'depositNative',
          args: [carol.address, depositId],
        }),
      },
    ],
  }
  const before = {
    aliceUsdc: await b.usdcOf(alice.address),
    aliceEth: await b.ethOf(alice.address),
    bobEth: await b.ethOf(bob.address),
    solverUsdc: await b.usdcOf(SOLVER.address),
  }
  const signed = await b.filling.signFill(request, credentials)
  t.equal(signed.transactionId, keccak256(signed.raw as Hex))
  t.equal(signed.amount, request.amount)
  const parsed = parseTransaction(signed.raw as Hex)
  t.equal(getAddress(parsed.to ?? '0x'), MULTICALLER_ADDRESS)
  t.equal(parsed.chainId, devB.chainId)
  t.equal(parsed.value, parseEther('0.01') + 1003n, 'value: top-up and call values')
  t.equal(parsed.data?.slice(-64), orderId.slice(2), 'the calldata ends with the order id')
  t.equal(parsed.type, 'eip1559')

  t.equal((await b.filling.outcome(signed.transactionId)).state, 'not_found', 'signing does not broadcast')
  await b.filling.broadcast(signed.raw)
  const outcome = await b.settled(signed.transactionId)
  t.match(outcome, { state: 'success', final: true })
  t.ok((outcome.confirmations ?? 0) >= 1)

  t.equal(await b.usdcOf(alice.address), before.aliceUsdc + request.amount)
  t.equal(await b.ethOf(alice.address), before.aliceEth + parseEther('0.01'))
  t.equal(await b.ethOf(bob.address), before.bobEth + 3n)
  t.equal(await b.usdcOf(SOLVER.address), before.solverUsdc - request.amount)

  const facts = await b.reading.readFills?.(signed.transactionId)
  t.match(facts, { state: 'success', final: true })
  t.same(facts?.facts, [
    {
      index: 0,
      orderId,
      recipient: getAddress(alice.address),
      currencyId: getAddress(b.usdc),
      amount: request.amount,
    },
    {
      index: 1,
      orderId,
      recipient: getAddress(alice.address),
      currencyId: NATIVE,
      amount: parseEther('0.01'),
    },
  ])
  const calledDeposit = await b.reading.readDeposits(signed.transactionId)
  t.match(
    calledDeposit.facts,
    [{ depositId, depositor: getAddress(carol.address), amount: 1000n }],
    'the call ran',
  )

  // After a crash the solver broadcasts the same bytes again: accepted, and nobody is paid twice.
  await b.filling.broadcast(signed.raw)
  await b.filling.broadcast(signed.raw)
  t.equal(await b.usdcOf(alice.address), before.aliceUsdc + request.amount, 'paid once')
  t.equal((await b.filling.outcome(signed.transactionId)).state, 'success')
})

t.test('a native fill, with the nonce the solver allocated', async (t) => {
  const orderId = randomId()
  const nonce = await b.filling.nextNonce(SOLVER.address)
  const before = await b.ethOf(dave.address)
  const signed = await b.filling.signFill(
    {
      orderId,
      recipient: dave.address,
      currencyId: NATIVE,
      amount: parseEther('0.5'),
      calls: [],
      topupNativeAmount: 0n,
    },
    credentials,
    { nonce },
  )
  t.equal(BigInt(parseTransaction(signed.raw as Hex).nonce ?? -1), nonce)
  await b.filling.broadcast(signed.raw)
  t.equal((await b.settled(signed.transactionId)).state, 'success')
  t.equal(await b.ethOf(dave.address), before + parseEther('0.5'))
  const facts = await b.reading.readFills?.(signed.transactionId)
  t.same(facts?.facts, [
    { index: 0, orderId, recipient: getAddress(dave.address), currencyId: NATIVE, amount: parseEther('0.5') },
  ])

  // Another transaction with the same nonce cannot go in any more.
  const clash = await b.filling.signFill(
    {
      orderId: randomId(),
      recipient: dave.address,
      currencyId: NATIVE,
      amount: 1n,
      calls: [],
      topupNativeAmount: 0n,
    },
    credentials,
    { nonce },
  )
  const error = await b.filling.broadcast(clash.raw).then(
    () => undefined,
    (caught: unknown) => caught as PontisError,
  )
  t.type(error, PontisError)
  t.match(error?.errorData, { reason: 'nonce_used' })
})

t.test('readFills also recognises plain transfers tagged with the order id', async (t) => {
  const orderId = randomId()
  const solver = b.wallet(SOLVER)
  const native = await solver.sendTransaction({ to: dave.address, value: 77n, data: orderId })
  await b.mined(native)
  t.same((await b.reading.readFills?.(native))?.facts, [
    { index: 0, orderId, recipient: getAddress(dave.address), currencyId: NATIVE, amount: 77n },
  ])
  const token = await solver.sendTransaction({
    to: b.usdc,
    data: concat([
      encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [dave.address, 99n] }),
      orderId,
    ]),
  })
  await b.mined(token)
  t.same((await b.reading.readFills?.(token))?.facts, [
    { index: 0, orderId, recipient: getAddress(dave.address), currencyId: getAddress(b.usdc), amount: 99n },
  ])
  // Untagged transfers and unknown transactions are no fills.
  const untagged = await solver.sendTransaction({ to: dave.address, value: 1n })
  await b.mined(untagged)
  t.same((await b.reading.readFills?.(untagged))?.facts, [])
  t.match(await b.reading.readFills?.(randomId()), { state: 'not_found', facts: [] })
  t.match(
    await b.reading.readRefunds?.(untagged),
    { state: 'success', facts: [] },
    'no deposit addresses on B',
  )
})

t.test('a reverting call reverts the fill; the outcome names the reason', async (t) => {
  const before = await b.usdcOf(alice.address)
  // The calls run from the multicaller's executor, which holds no approval of the solver's tokens.
  const steal = {
    to: b.usdc,
    value: 0n,
    data: encodeFunctionData({
      abi: [...erc20Abi],
      functionName: 'transferFrom',
      args: [SOLVER.address, bob.address, 1n],
    }),
  }
  for (const callsGasLimit of [100_000n, undefined]) {
    const signed = await b.filling.signFill(
      {
        orderId: randomId(),
        recipient: alice.address,
        currencyId: b.usdc,
        amount: 1_000_000n,
        calls: [steal],
        topupNativeAmount: 0n,
        ...(callsGasLimit === undefined ? {} : { callsGasLimit }),
      },
      credentials,
    )
    await b.filling.broadcast(signed.raw)
    const outcome = await b.settled(signed.transactionId)
    t.equal(outcome.state, 'reverted', `reverted (callsGasLimit ${callsGasLimit})`)
    t.match(outcome.revert, {
      error: 'CallFailed',
      args: { index: '0' },
      inner: { error: 'InsufficientAllowance' },
      data: /^0x[0-9a-f]+$/,
    })
    const facts = await b.reading.readFills?.(signed.transactionId)
    t.match(facts, { state: 'reverted', facts: [] }, 'a reverted fill pays nobody')
  }
  t.equal(await b.usdcOf(alice.address), before, 'the payment was undone')
})

/** Deposits `native` and `usdc` from `account` into chain A's depository, each mined before the next. */
async function depositIntoDepository(account: DevAccount, native: bigint, usdc: bigint): Promise<void> {
  const depository = devA.contracts.depository
  await a.mined(
    await a.wallet(account).writeContract({
      address: depository,
      abi: depositoryAbi,
      functionName: 'depositNative',
      args: [account.address, randomId()],
      value: native,
    }),
  )
  await a.mined(
    await a.wallet(account).writeContract({
      address: a.usdc,
      abi: erc20Abi,
      functionName: 'approve',
      args: [depository, maxUint256],
    }),
  )
  await a.mined(
    await a.wallet(account).writeContract({
      address: depository,
      abi: depositoryAbi,
      functionName: 'depositErc20',
      args: [account.address, a.usdc, usdc, randomId()],
    }),
  )
}

t.test('refunds out of the depository, native and token, at most once per refund id', async (t) => {
  const depository = devA.contracts.depository
  // Fund the depository with deposits first.
  await depositIntoDepository(alice, parseEther('2'), 80_000_000n)

  for (const [currencyId, amount] of [
    [NATIVE, parseEther('0.3')],
    [a.usdc, 25_000_000n],
  ] as const) {
    const refundId = randomId()
    const read = currencyId === NATIVE ? a.ethOf : a.usdcOf
    const recipientBefore = await read(carol.address)
    const depositoryBefore = await read(depository)
    const request = {
      refundId,
      source: { kind: 'depository' } as const,
      recipient: carol.address,
      currencyId,
      amount,
    }
    const signed = await a.filling.signRefund(request, credentials)
    t.equal(signed.amount, amount)
    await a.filling.broadcast(signed.raw)
    t.match(await a.settled(signed.transactionId), { state: 'success', final: true })
    t.equal(await read(carol.address), recipientBefore + amount, `${currencyId} reached the recipient`)
    t.equal(await read(depository), depositoryBefore - amount, `${currencyId} left the depository`)

    const call =
      currencyId === NATIVE
        ? { to: getAddress(carol.address), data: '0x' as Hex, value: amount, allowFailure: false }
        : {
            to: getAddress(a.usdc),
            data: encodeFunctionData({
              abi: erc20Abi,
              functionName: 'transfer',
              args: [carol.address, amount],
            }),
            value: 0n,
            allowFailure: false,
          }
    const requestId = hashStruct({
      types: CALL_REQUEST_TYPES,
      primaryType: 'CallRequest',
      data: { calls: [call], nonce: BigInt(refundId), expiration: maxUint256 },
    })
    const facts = await a.reading.readRefunds?.(signed.transactionId)
    t.same(facts?.facts, [
      {
        // The log index of RelayCallExecuted: after the token's Transfer for a token payout.
        index: currencyId === NATIVE ? 0 : 1,
        orderId: requestId,
        recipient: getAddress(carol.address),
        currencyId: currencyId === NATIVE ? NATIVE : getAddress(a.usdc),
        amount,
      },
    ])

    // Signing the same refund again gives the same call request: the depository refuses to pay twice.
    const again = await a.filling.signRefund(request, credentials)
    t.not(again.transactionId, signed.transactionId, 'a new transaction (new nonce)')
    await a.filling.broadcast(again.raw)
    const replay = await a.settled(again.transactionId)
    t.equal(replay.state, 'reverted')
    t.match(replay.revert, { error: 'CallRequestAlreadyUsed', data: /^0x/ })
    t.equal(await read(carol.address), recipientBefore + amount, 'paid once')
  }
  await t.rejects(
    a.filling.signRefund(
      {
        refundId: randomId(),
        source: { kind: 'depository' },
        recipient: carol.address,
        currencyId: NATIVE,
        amount: 1n,
      },
      { solverKey: SOLVER.privateKey },
    ),
    /allocatorKey is required/,
  )
})

t.test('a repayment pays every leg to the solver in one depository execute, at most once', async (t) => {
  const depository = devA.contracts.depository
  await depositIntoDepository(bob, parseEther('1'), 30_000_000n)
  const solver = a.filling.solverAddress(credentials) as Address
  const request = {
    repaymentId: randomId(),
    recipient: solver,
    legs: [
      { currencyId: NATIVE, amount: parseEther('0.4') },
      { currencyId: a.usdc, amount: 12_000_000n },
    ],
  }
  const [ethBefore, usdcBefore, depositoryEth, depositoryUsdc] = await Promise.all([
    a.ethOf(solver),
    a.usdcOf(solver),
    a.ethOf(depository),
    a.usdcOf(depository),
  ])
  const signed = await a.filling.signRepayment!(request, credentials)
  await a.filling.broadcast(signed.raw)
  t.match(await a.settled(signed.transactionId), { state: 'success' })
  const receipt = await a.publicClient.getTransactionReceipt({ hash: signed.transactionId as Hex })
  const gas = receipt.gasUsed * receipt.effectiveGasPrice
  t.equal((await a.ethOf(solver)) - ethBefore + gas, parseEther('0.4'), 'native leg to the solver, exactly')
  t.equal((await a.usdcOf(solver)) - usdcBefore, 12_000_000n, 'token leg to the solver, exactly')
  t.equal(await a.ethOf(depository), depositoryEth - parseEther('0.4'))
  t.equal(await a.usdcOf(depository), depositoryUsdc - 12_000_000n)

  // Signed again (as a re-batch of the same id would be): the same call request, refused on chain.
  const again = await a.filling.signRepayment!(request, credentials)
  await a.filling.broadcast(again.raw)
  const replay = await a.settled(again.transactionId)
  t.equal(replay.state, 'reverted')
  t.match(replay.revert, { error: 'CallRequestAlreadyUsed' })
  t.equal(await a.usdcOf(solver), usdcBefore + 12_000_000n, 'paid once')
  await t.rejects(a.filling.signRepayment!({ ...request, legs: [] }, credentials), {
    code: 'INVALID_REQUEST',
  })
  await t.rejects(
    a.filling.signRepayment!(request, { solverKey: SOLVER.privateKey }),
    /allocatorKey is required/,
  )
})

t.test('a refund out of a deposit address pays its own fee out of the amount', async (t) => {
  const requestId = randomId()
  const depositAddress = (await a.adapter.quoting?.createDepositAddress?.(requestId)) as Address
  t.ok(depositAddress, 'chain A has deposit addresses')
  const amount = parseEther('0.1')
  await a.mined(await a.wallet(bob).sendTransaction({ to: depositAddress, value: amount }))

  const source = { kind: 'depositAddress', requestId } as const
  const tooSmall = await a.filling
    .signRefund(
      { refundId: randomId(), source, recipient: dave.address, currencyId: NATIVE, amount: 1000n },
      credentials,
    )
    .then(
      () => undefined,
      (caught: unknown) => caught as PontisError,
    )
  t.equal(tooSmall?.code, 'INSUFFICIENT_FUNDS')
  t.match(tooSmall?.message, /does not cover its own transfer fee/)
  const token = await a.filling
    .signRefund(
      { refundId: randomId(), source, recipient: dave.address, currencyId: a.usdc, amount },
      credentials,
    )
    .then(
      () => undefined,
      (caught: unknown) => caught as PontisError,
    )
  t.equal(token?.code, 'UNSUPPORTED_CURRENCY', 'native only')
  const tooMuch = await a.filling
    .signRefund(
      { refundId: randomId(), source, recipient: dave.address, currencyId: NATIVE, amount: amount * 2n },
      credentials,
    )
    .then(
      () => undefined,
      (caught: unknown) => caught as PontisError,
    )
  t.equal(tooMuch?.code, 'INSUFFICIENT_FUNDS')

  const before = await a.ethOf(dave.address)
  const signed = await a.filling.signRefund(
    { refundId: randomId(), source, recipient: dave.address, currencyId: NATIVE, amount },
    credentials,
  )
  const parsed = parseTransaction(signed.raw as Hex)
  t.equal(parsed.value, signed.amount)
  t.equal(
    signed.amount,
    amount - (parsed.gas ?? 0n) * (parsed.maxFeePerGas ?? 0n),
    'amount less gas × maxFeePerGas',
  )
  t.ok(signed.amount < amount && signed.amount > 0n)
  await a.filling.broadcast(signed.raw)
  t.equal((await a.settled(signed.transactionId)).state, 'success')
  t.equal(await a.ethOf(dave.address), before + signed.amount)
  const left = await a.ethOf(depositAddress)
  t.ok(left >= 0n && left < amount - signed.amount, 'at most fee dust stays behind')
  const transaction = await a.publicClient.getTransaction({ hash: signed.transactionId as Hex })
  t.equal(getAddress(transaction.from), depositAddress, 'sent by the deposit address')

  const facts = await a.reading.readRefunds?.(signed.transactionId)
  t.same(facts?.facts, [
    {
      index: 0,
      orderId: UNKNOWN_ORDER_ID,
      recipient: getAddress(dave.address),
      currencyId: NATIVE,
      amount: signed.amount,
    },
  ])
})

t.test('permit deposits: checked, then submitted by the solver', async (t) => {
  const filling = a.filling
  if (!filling.signPermitDeposit) throw new Error('chain A takes permit deposits')
  const depository = devA.contracts.depository
  const requestId = randomId()
  const now = BigInt(Math.floor(Date.now() / 1000))
  const permit = {
    requestId,
    depositor: bob.address,
    currencyId: a.usdc,
    amount: 7_000_000n,
    validAfter: 0n,
    validBefore: now + 600n,
  }
  const sign = (message: Record<string, unknown>) =>
    privateKeyToAccount(bob.privateKey).signTypedData({
      domain: { name: 'Pontis USD', version: '2', chainId: devA.chainId, verifyingContract: a.usdc },
      types: RECEIVE_WITH_AUTHORIZATION_TYPES,
      primaryType: 'ReceiveWithAuthorization',
      message: {
        from: bob.address,
        to: depository,
        value: permit.amount,
        validAfter: permit.validAfter,
        validBefore: permit.validBefore,
        nonce: requestId,
        ...message,
      } as never,
    })
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'signed',
      (caught: unknown) => (caught as PontisError).code,
    )
  t.equal(
    await codeOf(filling.signPermitDeposit(permit, await sign({ value: 1n }), credentials)),
    'INVALID_SIGNATURE',
  )
  t.equal(await codeOf(filling.signPermitDeposit(permit, '0x1234', credentials)), 'INVALID_SIGNATURE')
  t.equal(
    await codeOf(
      filling.signPermitDeposit(
        { ...permit, validBefore: now - 10n },
        await sign({ validBefore: now - 10n }),
        credentials,
      ),
    ),
    'SIGNATURE_EXPIRED',
  )
  const signed = await filling.signPermitDeposit(permit, await sign({}), credentials)
  await filling.broadcast(signed.raw)
  t.equal((await a.settled(signed.transactionId)).state, 'success')
  const deposits = await a.reading.readDeposits(signed.transactionId)
  t.match(deposits.facts, [
    { depositId: requestId, depositor: getAddress(bob.address), amount: permit.amount },
  ])
})

t.test('scanDeposits walks forward in bounded steps', async (t) => {
  const scan = a.reading.scanDeposits
  if (!scan) throw new Error('chain A scans deposits')
  const start = await scan(undefined)
  const head = await a.publicClient.getBlockNumber({ cacheTime: 0 })
  t.same(start, { deposits: [], cursor: head.toString(), caughtUp: true }, 'a new scan starts at the head')

  const ids: Hex[] = []
  for (let index = 0; index < 5; index++) {
    const id = randomId()
    ids.push(id)
    await a.mined(
      await a.wallet(alice).writeContract({
        address: devA.contracts.depository,
        abi: depositoryAbi,
        functionName: 'depositNative',
        args: [alice.address, id],
        value: BigInt(index + 1),
      }),
    )
  }
  const seen: Hex[] = []
  let cursor = start.cursor
  let steps = 0
  for (;;) {
    const result = await scan(cursor)
    steps++
    t.ok(BigInt(result.cursor) - BigInt(cursor) <= 2n, 'at most maxLogBlockRange blocks per step')
    for (const deposit of result.deposits) {
      seen.push(deposit.depositId as Hex)
      t.ok(deposit.confirmations >= 1)
      t.equal(deposit.currencyId, NATIVE)
      t.ok(deposit.transactionId.startsWith('0x'))
    }
    cursor = result.cursor
    if (result.caughtUp) break
  }
  t.same(seen, ids, 'every deposit after the cursor, in order')
  t.equal(steps, 3, 'five blocks in steps of two')
  t.same(await scan(cursor), { deposits: [], cursor, caughtUp: true }, 'nothing new')
  const ahead = await scan((BigInt(cursor) + 100n).toString())
  t.same(ahead, { deposits: [], cursor, caughtUp: true }, 'a cursor past the head comes back to it')
  await t.rejects(scan('twelve'), { code: 'INVALID_REQUEST' })
})

t.test('outcome: pending in the mempool, not_found when unknown; broadcast errors', async (t) => {
  t.match(await b.filling.outcome(randomId()), { state: 'not_found', final: false })
  await b.testClient.setAutomine(false)
  t.teardown(() => b.testClient.setAutomine(true))
  const signed = await b.filling.signFill(
    {
      orderId: randomId(),
      recipient: bob.address,
      currencyId: NATIVE,
      amount: 5n,
      calls: [],
      topupNativeAmount: 0n,
    },
    credentials,
  )
  await b.filling.broadcast(signed.raw)
  t.equal((await b.filling.outcome(signed.transactionId)).state, 'pending')
  t.equal((await b.reading.readFills?.(signed.transactionId))?.state, 'pending')
  await b.filling.broadcast(signed.raw)
  await b.testClient.mine({ blocks: 1 })
  await b.testClient.setAutomine(true)
  t.equal((await b.settled(signed.transactionId)).state, 'success')

  // A signer without funds: signed (the chain decides), refused at broadcast.
  const broke = { solverKey: generatePrivateKey() }
  const unfunded = await b.filling.signFill(
    {
      orderId: randomId(),
      recipient: bob.address,
      currencyId: NATIVE,
      amount: 5n,
      calls: [],
      topupNativeAmount: 0n,
    },
    broke,
  )
  await t.rejects(b.filling.broadcast(unfunded.raw), { code: 'INSUFFICIENT_FUNDS' })
  await t.rejects(b.filling.broadcast('0x1234'), { code: 'INVALID_REQUEST' })
  const otherChain = await a.filling.signFill(
    {
      orderId: randomId(),
      recipient: bob.address,
      currencyId: NATIVE,
      amount: 5n,
      calls: [],
      topupNativeAmount: 0n,
    },
    credentials,
  )
  await t.rejects(b.filling.broadcast(otherChain.raw), { code: 'INVALID_REQUEST', message: /chain 31337/ })
})

t.test('decodeRevert names what it can and always keeps the data', async (t) => {
  t.same(decodeRevert('0x'), { error: 'unknown', data: '0x' })
  t.same(decodeRevert('0xdeadbeef'), { error: 'unknown', selector: '0xdeadbeef', data: '0xdeadbeef' })
  const message = encodeFunctionData({
    abi: [{ type: 'function', name: 'Error', inputs: [{ name: 'message', type: 'string' }], outputs: [] }],
    args: ['nope'],
  })
  t.match(decodeRevert(message), { error: 'Error', args: { message: 'nope' }, data: message })
})

t.test(
  'explicitDeposit: false on a chain without a deposit receiver: tokens only, native refused',
  async (t) => {
    const other = createRegistry()
    other.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
    const { contracts: _dropped, ...withoutReceiver } = entryFor(devB, {}) as ChainEntry & {
      contracts?: unknown
    }
    const [chain] = await other.addChains([withoutReceiver as ChainEntry])
    t.teardown(() => other.close())
    const quoting = chain!.adapter.quoting!
    t.ok(quoting.originRequestOptions?.includes('explicitDeposit'), 'the EVM plugin declares the option')
    const request = {
      requestId: randomId(),
      depositor: alice.address,
      amount: 1_000n,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute/permits',
      nowSeconds: Math.floor(Date.now() / 1000),
      options: { explicitDeposit: false },
    }
    const error = await quoting.buildDepositSteps({ ...request, currencyId: NATIVE }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.ok(error instanceof PontisError, 'refused')
    t.equal((error as PontisError).code, 'UNSUPPORTED_EXECUTION_TYPE')
    t.match(
      (error as PontisError).message,
      /no deposit receiver \(contracts\.relayReceiver\).*remove explicitDeposit: false/,
    )
    const [step] = await quoting.buildDepositSteps({ ...request, currencyId: devB.contracts.stablecoin })
    const data = step?.items[0]?.data as { to: string; data: Hex }
    t.equal(
      data.to,
      devB.contracts.stablecoin,
      'a token deposit needs no receiver: transfer to the depository',
    )
    t.ok(data.data.endsWith(request.requestId.slice(2)), 'the request id follows the transfer')
  },
)

t.test(
  'explicitDeposit: false for a token is refused for a contract account, served for a plain one',
  async (t) => {
    const quoting = b.adapter.quoting!
    const account = privateKeyToAccount(generatePrivateKey()).address
    const request = {
      requestId: randomId(),
      depositor: account,
      currencyId: devB.contracts.stablecoin,
      amount: 1_000n,
      usePermit: false,
      permitExpiry: 0,
      executeEndpoint: '/execute/permits',
      nowSeconds: Math.floor(Date.now() / 1000),
      options: { explicitDeposit: false },
    }
    const [plain] = await quoting.buildDepositSteps(request)
    t.equal(plain?.id, 'deposit', 'a plain account gets the direct transfer')
    // An EIP-7702 delegation designator: the account now runs code, so it may wrap what it sends.
    await b.testClient.setCode({ address: account, bytecode: `0xef0100${'11'.repeat(20)}` })
    const refused = await quoting.buildDepositSteps({ ...request, requestId: randomId() }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    t.equal((refused as PontisError | undefined)?.code, 'UNSUPPORTED_EXECUTION_TYPE')
    t.match(
      (refused as Error).message,
      /is a contract account \(or delegates to code\).*Remove explicitDeposit: false/,
    )
    const cost = await quoting
      .estimateOriginCost({
        requestId: request.requestId,
        depositor: account,
        currencyId: request.currencyId,
        amount: request.amount,
        usePermit: false,
        viaDepositAddress: false,
        options: { explicitDeposit: false },
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      )
    t.equal((cost as PontisError | undefined)?.code, 'UNSUPPORTED_EXECUTION_TYPE', 'pricing refuses it too')
    const native = await quoting.buildDepositSteps({ ...request, currencyId: NATIVE })
    t.equal(native[0]?.id, 'deposit', 'a native direct deposit still works: the receiver credits msg.sender')
  },
)

t.test(
  'authorizations: the fill is a type-4 transaction; one the chain would skip is refused at signing',
  async (t) => {
    const account = privateKeyToAccount(generatePrivateKey())
    const sign = (nonce: number) =>
      account
        .signAuthorization({ address: MULTICALLER_ADDRESS, chainId: devB.chainId, nonce })
        .then((signed) => ({ ...signed, yParity: signed.yParity as number }))
    const fill = {
      orderId: randomId(),
      recipient: bob.address,
      currencyId: NATIVE,
      amount: 1000n,
      calls: [],
      topupNativeAmount: 0n,
    }
    const signed = await b.filling.signFill({ ...fill, authorizations: [await sign(0)] }, credentials)
    const parsed = parseTransaction(signed.raw as Hex)
    t.equal(parsed.type, 'eip7702', 'an EIP-7702 transaction')
    t.equal(parsed.authorizationList?.[0]?.address.toLowerCase(), MULTICALLER_ADDRESS.toLowerCase())
    // Signed for nonce 1 while the account is at 0: the chain would skip it and run the calls without it.
    const moved = await b.filling
      .signFill({ ...fill, orderId: randomId(), authorizations: [await sign(1)] }, credentials)
      .then(
        () => undefined,
        (caught: unknown) => caught,
      )
    t.ok(moved instanceof PontisError, 'refused')
    t.equal((moved as PontisError).code, 'INVALID_EXTRA_TXS')
    t.equal((moved as PontisError).status, 400, 'a request problem: the solver gives up and refunds')
    t.match((moved as Error).message, /next nonce .* is 0, so the chain would skip it/)
  },
)

t.test(
  "signStep sends another service's transaction item from the solver, with the allocated nonce, spending at most the move",
  async (t) => {
    const signStep = b.filling.signStep
    if (!signStep) return t.fail('the EVM plugin signs quote steps')
    const amount = 12_345n
    const spend = { currencyId: b.usdc, amount }
    const approve = (value: bigint) =>
      encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [carol.address, value] })
    const item = {
      format: 'evm-transaction',
      from: SOLVER.address,
      to: b.usdc,
      data: approve(amount),
      value: '0',
      chainId: devB.chainId,
    }
    const refused = async (
      changes: Record<string, unknown>,
      why: RegExp,
      label: string,
      limit: { currencyId: string; amount: bigint } = spend,
    ) => {
      const error = await signStep({ ...item, ...changes }, limit, credentials).catch(
        (caught: unknown) => caught,
      )
      t.type(error, PontisError, label)
      t.match(error, { code: 'INVALID_REQUEST', message: why }, label)
    }
    await refused({ chainId: devA.chainId }, /it is for chain 31337/, 'an item of another chain')
    await refused(
      { from: alice.address },
      /to be sent by .*, not by the solver/,
      'an item another account sends',
    )
    await refused({ format: 'svm-transaction' }, /not 'evm-transaction'/, "another family's item")
    await refused({ value: '-1' }, /`value` is not a decimal/, 'a bad value')
    await refused(
      { data: approve(amount + 1n) },
      /approves 12346, more than the move's 12345/,
      'a larger approval',
    )
    await refused(
      { data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [carol.address, 1n] }) },
      /its call to the token is not an approve/,
      'a transfer of the token',
    )
    await refused(
      { to: carol.address, data: '0x', value: '1' },
      /native currency in a move of a token/,
      'value in a token move',
    )
    await refused(
      { to: carol.address, data: '0x', value: String(amount + 1n) },
      /it sends 12346, more than the move's 12345/,
      'more value than a native move',
      { currencyId: '0x0000000000000000000000000000000000000000', amount },
    )

    const nonce = await b.filling.nextNonce(SOLVER.address)
    // Relay's items carry no `format`; a given `gas` is used as is.
    const { format: _format, ...relayItem } = item
    const signed = await signStep({ ...relayItem, gas: '90000' }, spend, credentials, { nonce })
    const parsed = parseTransaction(signed.raw as Hex)
    t.equal(BigInt(parsed.nonce ?? -1), nonce, 'signed with the nonce the solver allocated')
    t.equal(parsed.gas, 90_000n, "with the item's gas limit")
    t.equal(signed.amount, 0n, 'it moves no native value')
    await b.filling.broadcast(signed.raw)
    t.equal((await b.settled(signed.transactionId)).state, 'success')
    t.equal(
      await b.publicClient.readContract({
        address: b.usdc,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [SOLVER.address, carol.address],
      }),
      amount,
      'the call ran from the solver',
    )
  },
)
