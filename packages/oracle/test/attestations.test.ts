/**
 * The six attestation routes on the real devnet (EVM): facts made on anvil, attested over HTTP,
 * signatures recovered, and every execution relayed to the devnet's hub oracle contract.
 */
import { ORDER_TYPES, type OracleApi } from '@pontis/core'
import {
  ALLOCATOR,
  DEPOSIT_RECEIVER_ADDRESS,
  DEPOSITORY_ADDRESS,
  ORACLE_SIGNER,
  SOLVER,
  STABLECOIN_ADDRESS,
  USERS,
} from '@pontis/devnet'
import { CALL_REQUEST_PARAMETERS, CALL_REQUEST_TYPES, depositoryAbi, erc20Abi } from '@pontis/plugin-evm'
import t, { type Test } from 'tap'
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  hashStruct,
  hashTypedData,
  recoverAddress,
  toHex,
  zeroAddress,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { type ErrorAnswer, randomId } from '../../../test/helpers/answers.js'
import { hubAccountKey, hubAssetKey, type SignedAttestation, withdrawalAddressOf } from '../src/index.js'
import { typedDataDigest } from '../src/typed-data.js'
import {
  API_KEY,
  depositNative,
  hubBalance,
  relayExecution,
  sendAndWait,
  startDevnetOracle,
} from './fixtures/devnet-oracle.js'

const oracle = await startDevnetOracle(t)
const { a, b } = oracle
const { client, post } = oracle
const user = USERS[0]!
const NATIVE = zeroAddress
const CHAIN_A = 'pontis-local-a'
const CHAIN_B = 'pontis-local-b'
const signerAddress = ORACLE_SIGNER.address.toLowerCase()

/** Every message and execution signature recovers to the oracle's signer under our own digest. */
async function assertSignedByOracle(t: Test, answer: SignedAttestation) {
  for (const message of answer.messages) {
    t.equal(message.signatures?.length, 1)
    const recovered = await recoverAddress({
      hash: typedDataDigest(message.data),
      signature: message.signatures![0]!.signature as Hex,
    })
    t.equal(recovered.toLowerCase(), signerAddress, 'message signature recovers to the oracle')
  }
}

t.test('depository deposits: attested, signed, and credited on the hub', async (t) => {
  const id = randomId()
  const amount = 123_456_789n
  const hash = await depositNative(a, user.privateKey, { depositor: user.address, id, amount })
  const answer = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: hash,
    mode: 'fast',
  })
  t.equal(answer.status, 200)
  const body = answer.body as SignedAttestation
  t.equal(body.messages.length, 1)
  const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
  t.equal(result.amount, amount.toString())
  t.equal(result.depositId, id)
  t.equal(result.depositor.toLowerCase(), user.address.toLowerCase())
  t.equal(result.currency, NATIVE)
  t.equal(result.depository.toLowerCase(), DEPOSITORY_ADDRESS.toLowerCase())
  t.equal(body.messages[0]!.data.primaryType, 'DepositoryDeposit')
  t.same(body.messages[0]!.data.message.data, { chainId: CHAIN_A, transactionId: hash.toLowerCase() })
  await assertSignedByOracle(t, body)
  t.equal(body.execution?.signatures[0]?.oracleSigner, signerAddress)

  const again = await post('/attestations/depository-deposits/v1', { chainId: 31337, transactionId: hash })
  t.same(again.body, body, 'the same fact always yields the same answer (deterministic signatures and keys)')

  const account = hubAccountKey(CHAIN_A, user.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN_A, NATIVE)
  const before = await hubBalance(a, account, asset)
  await relayExecution(a, body)
  t.equal(await hubBalance(a, account, asset), before + amount, 'the hub credits the depositor')
  await t.rejects(relayExecution(a, body), 'the hub applies an execution once')
})

t.test('depository deposits: what cannot be attested', async (t) => {
  const missing = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: `0x${'ab'.repeat(32)}`,
  })
  t.equal(missing.status, 404)
  t.equal((missing.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
  const transfer = await sendAndWait(a, user.privateKey, { to: USERS[1]!.address, value: 1n })
  const notDeposit = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: transfer,
  })
  t.equal(notDeposit.status, 400)
  t.equal((notDeposit.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
  const unknown = await post('/attestations/depository-deposits/v1', { chainId: 5, transactionId: transfer })
  t.equal(unknown.status, 400)
  t.equal((unknown.body as ErrorAnswer).errorCode, 'UNSUPPORTED_CHAIN')
})

t.test('depository deposits: the direct form (explicitDeposit: false) is attested too', async (t) => {
  // Native: a transfer carrying the id to the deposit receiver, which deposits it in the depository.
  const nativeId = randomId()
  const nativeHash = await sendAndWait(a, user.privateKey, {
    to: DEPOSIT_RECEIVER_ADDRESS,
    data: nativeId,
    value: 4_321n,
  })
  // ERC-20: transfer(depository, amount) with the id appended, sent straight to the token.
  const tokenId = randomId()
  const tokenHash = await sendAndWait(a, user.privateKey, {
    to: STABLECOIN_ADDRESS,
    data: concat([
      encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [DEPOSITORY_ADDRESS, 2_500_000n] }),
      tokenId,
    ]),
  })
  const cases = [
    ['native', nativeHash, nativeId, NATIVE, 4_321n],
    ['ERC-20', tokenHash, tokenId, STABLECOIN_ADDRESS.toLowerCase(), 2_500_000n],
  ] as const
  for (const [name, hash, id, currency, amount] of cases) {
    const answer = await post('/attestations/depository-deposits/v1', {
      chainId: 31337,
      transactionId: hash,
      mode: 'fast',
    })
    t.equal(answer.status, 200, `${name}: attested`)
    const body = answer.body as SignedAttestation
    t.equal(body.messages.length, 1, `${name}: one deposit`)
    const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
    t.equal(result.depositId, id, `${name}: tagged with the request id`)
    t.equal(result.amount, amount.toString(), `${name}: amount`)
    t.equal(result.currency.toLowerCase(), currency, `${name}: currency`)
    t.equal(
      result.depositor.toLowerCase(),
      user.address.toLowerCase(),
      `${name}: the sender is the depositor`,
    )
    t.equal(result.depository.toLowerCase(), DEPOSITORY_ADDRESS.toLowerCase(), `${name}: into the depository`)
    await assertSignedByOracle(t, body)
    const account = hubAccountKey(CHAIN_A, user.address.toLowerCase() as Hex)
    const asset = hubAssetKey(CHAIN_A, currency as Hex)
    const before = await hubBalance(a, account, asset)
    await relayExecution(a, body)
    t.equal(await hubBalance(a, account, asset), before + amount, `${name}: the hub credits the depositor`)
  }
  // A token transfer into the depository that carries no id is not a deposit.
  const untagged = await sendAndWait(a, user.privateKey, {
    to: STABLECOIN_ADDRESS,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [DEPOSITORY_ADDRESS, 1n] }),
  })
  const refused = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: untagged,
  })
  t.equal(refused.status, 400)
  t.equal((refused.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
})

t.test('depository deposits: slow mode waits for the slow rule, fast does not', async (t) => {
  // Chain B's adapter: confirmations (slow) from configs/chains.local.json; mine on demand to cross it.
  const finality = oracle.registry.chain(31338).adapter.finality
  t.ok(finality.slowConfirmations >= 1)
  await b.publicClient.request({ method: 'evm_setAutomine' as never, params: [false] as never })
  t.teardown(() => b.publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never }))
  const wallet = b.wallet(user.privateKey)
  const hash = await wallet.writeContract({
    account: wallet.account!,
    chain: b.chain.chain,
    address: DEPOSITORY_ADDRESS,
    abi: depositoryAbi,
    functionName: 'depositNative',
    args: [user.address, randomId()],
    value: 5n,
    gas: 200_000n,
  })
  const pending = await post('/attestations/depository-deposits/v1', {
    chainId: 31338,
    transactionId: hash,
    mode: 'fast',
  })
  t.equal(pending.status, 404, 'not mined yet')
  t.match((pending.body as ErrorAnswer).message, 'not mined yet')
  await b.publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never })
  const fast = await post('/attestations/depository-deposits/v1', {
    chainId: 31338,
    transactionId: hash,
    mode: 'fast',
  })
  t.equal(fast.status, 200, 'fast: one confirmation is enough')
  if (finality.slowConfirmations > 1) {
    const slow = await post('/attestations/depository-deposits/v1', { chainId: 31338, transactionId: hash })
    t.equal(slow.status, 404, 'slow: not final yet')
    t.match((slow.body as ErrorAnswer).message, "not final for mode 'slow'")
    await b.publicClient.request({
      method: 'anvil_mine' as never,
      params: [toHex(finality.slowConfirmations)] as never,
    })
  }
  const slow = await post('/attestations/depository-deposits/v1', {
    chainId: 31338,
    transactionId: hash,
    mode: 'slow',
  })
  t.equal(slow.status, 200)
})

/** An order paying `output` to `recipient` on chain B for one native input on chain A. */
function orderOf(options: { inputAmount: bigint; outputMinimum: bigint; recipient: Hex }): OracleApi.Order {
  return {
    version: 'v1',
    solverChainId: CHAIN_A,
    solver: SOLVER.address.toLowerCase(),
    salt: BigInt(randomId()).toString(),
    inputs: [
      {
        payment: { chainId: CHAIN_A, currency: NATIVE, amount: options.inputAmount.toString(), weight: '1' },
        refunds: [
          {
            chainId: CHAIN_A,
            recipient: user.address,
            currency: NATIVE,
            minimumAmount: options.inputAmount.toString(),
            deadline: 4_000_000_000,
            extraData: '0x',
          },
        ],
      },
    ],
    output: {
      chainId: CHAIN_B,
      payments: [
        {
          recipient: options.recipient,
          currency: NATIVE,
          minimumAmount: options.outputMinimum.toString(),
          expectedAmount: options.outputMinimum.toString(),
        },
      ],
      calls: [],
      deadline: 4_000_000_000,
      extraData: '0x',
    },
    fees: [],
  }
}

function orderIdOf(order: OracleApi.Order): Hex {
  return hashStruct({
    primaryType: 'Order',
    types: ORDER_TYPES,
    data: {
      ...order,
      solver: order.solver as Hex,
      salt: BigInt(order.salt),
      inputs: order.inputs.map((input) => ({
        payment: {
          ...input.payment,
          currency: input.payment.currency as Hex,
          amount: BigInt(input.payment.amount),
          weight: BigInt(input.payment.weight),
        },
        refunds: input.refunds.map((refund) => ({
          ...refund,
          recipient: refund.recipient.toLowerCase() as Hex,
          currency: refund.currency as Hex,
          minimumAmount: BigInt(refund.minimumAmount),
          extraData: refund.extraData as Hex,
        })),
      })),
      output: {
        ...order.output,
        payments: order.output.payments.map((payment) => ({
          recipient: payment.recipient as Hex,
          currency: payment.currency as Hex,
          minimumAmount: BigInt(payment.minimumAmount),
          expectedAmount: BigInt(payment.expectedAmount),
        })),
        calls: order.output.calls as Hex[],
        extraData: order.output.extraData as Hex,
      },
      fees: [],
    },
  })
}

/** An order, its signature, a deposit paying it on A and the deposit's onchainId. */
async function depositedOrder(options: { inputAmount: bigint; deposited?: bigint; outputMinimum: bigint }) {
  const recipient = USERS[2]!.address.toLowerCase() as Hex
  const order = orderOf({ inputAmount: options.inputAmount, outputMinimum: options.outputMinimum, recipient })
  const orderId = orderIdOf(order)
  const orderSignature = await privateKeyToAccount(SOLVER.privateKey).signMessage({
    message: { raw: orderId },
  })
  const deposit = await depositNative(a, user.privateKey, {
    depositor: user.address,
    id: orderId,
    amount: options.deposited ?? options.inputAmount,
  })
  const attested = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: deposit,
  })
  const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as Hex
  await relayExecution(a, attested.body as SignedAttestation)
  return { order, orderId, orderSignature, deposit, onchainId, recipient }
}

t.test('solver fills: paid in full, underpaid, forced, and refused', async (t) => {
  const paid = await depositedOrder({ inputAmount: 1_000_000n, outputMinimum: 900_000n })
  const fill = await sendAndWait(b, SOLVER.privateKey, {
    to: paid.recipient,
    value: 900_000n,
    data: paid.orderId,
  })
  const request = {
    order: paid.order,
    orderSignature: paid.orderSignature,
    inputs: [{ transactionId: paid.deposit, onchainId: paid.onchainId, inputIndex: 0 }],
    fill: { transactionId: fill },
  }
  const answer = await post('/attestations/solver-fills/v1', request)
  t.equal(answer.status, 200)
  const body = answer.body as SignedAttestation
  t.same(body.messages[0]!.result, {
    orderId: paid.orderId,
    status: 1,
    totalWeightedInputPaymentBpsDiff: '0',
  })
  await assertSignedByOracle(t, body)
  const depositor = hubAccountKey(CHAIN_A, user.address.toLowerCase() as Hex)
  const solver = hubAccountKey(CHAIN_A, SOLVER.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN_A, NATIVE)
  const solverBefore = await hubBalance(a, solver, asset)
  const depositorBefore = await hubBalance(a, depositor, asset)
  await relayExecution(a, body)
  t.equal(
    await hubBalance(a, solver, asset),
    solverBefore + 1_000_000n,
    'the solver is paid the deposit on the hub',
  )
  t.equal(
    await hubBalance(a, depositor, asset),
    depositorBefore - 1_000_000n,
    "out of the depositor's credit",
  )

  const short = await depositedOrder({
    inputAmount: 2_000_000n,
    deposited: 1_500_000n,
    outputMinimum: 900_000n,
  })
  const shortFill = await sendAndWait(b, SOLVER.privateKey, {
    to: short.recipient,
    value: 899_999n,
    data: short.orderId,
  })
  const shortRequest = {
    order: short.order,
    orderSignature: short.orderSignature,
    inputs: [{ transactionId: short.deposit, onchainId: short.onchainId, inputIndex: 0 }],
    fill: { transactionId: shortFill },
  }
  const failed = await post('/attestations/solver-fills/v1', shortRequest)
  t.equal(failed.status, 200)
  const failedBody = failed.body as SignedAttestation
  t.same(
    failedBody.messages[0]!.result,
    {
      orderId: short.orderId,
      status: 0,
      totalWeightedInputPaymentBpsDiff: (-(10n ** 18n) / 4n).toString(),
    },
    'FAILED, and a quarter less was deposited than quoted',
  )
  t.equal(failedBody.execution, undefined, 'no execution for a failed fill')

  const forcedNoKey = await post('/attestations/solver-fills/v1', { ...shortRequest, force: true })
  t.equal(forcedNoKey.status, 401)
  t.equal((forcedNoKey.body as ErrorAnswer).errorCode, 'UNAUTHORIZED')
  const forcedBadKey = await post(
    '/attestations/solver-fills/v1',
    { ...shortRequest, force: true },
    { 'x-api-key': 'nope' },
  )
  t.equal(forcedBadKey.status, 401)
  const forced = await post(
    '/attestations/solver-fills/v1',
    { ...shortRequest, force: true },
    { 'x-api-key': API_KEY },
  )
  t.equal(forced.status, 200)
  t.equal((forced.body as SignedAttestation).messages[0]!.result.status, 1, 'force attests SUCCESSFUL')
  t.ok((forced.body as SignedAttestation).execution)

  const wrongSigner = await privateKeyToAccount(user.privateKey).signMessage({
    message: { raw: paid.orderId },
  })
  const badSignature = await post('/attestations/solver-fills/v1', {
    ...request,
    orderSignature: wrongSigner,
  })
  t.equal(badSignature.status, 400)
  t.equal((badSignature.body as ErrorAnswer).errorCode, 'INVALID_SIGNATURE')
  const otherOrder = await post('/attestations/solver-fills/v1', {
    ...shortRequest,
    inputs: [{ transactionId: paid.deposit, onchainId: paid.onchainId, inputIndex: 0 }],
  })
  t.equal(otherOrder.status, 400)
  t.equal(
    (otherOrder.body as ErrorAnswer).errorCode,
    'NOT_A_DEPOSIT',
    "another order's deposit does not pay this one",
  )
  const badIndex = await post('/attestations/solver-fills/v1', {
    ...request,
    inputs: [{ transactionId: paid.deposit, onchainId: paid.onchainId, inputIndex: 3 }],
  })
  t.equal(badIndex.status, 400)
  t.equal((badIndex.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
})

t.test('solver refunds: a tagged refund paid in full is SUCCESSFUL and burns the hub credit', async (t) => {
  const order = await depositedOrder({ inputAmount: 700_000n, outputMinimum: 600_000n })
  const refund = await sendAndWait(a, SOLVER.privateKey, {
    to: user.address,
    value: 700_000n,
    data: order.orderId,
  })
  const request = {
    order: order.order,
    orderSignature: order.orderSignature,
    inputs: [{ transactionId: order.deposit, onchainId: order.onchainId, inputIndex: 0 }],
    refunds: [{ transactionId: refund, inputIndex: 0, refundIndex: 0 }],
  }
  const answer = await post('/attestations/solver-refunds/v1', request)
  t.equal(answer.status, 200)
  const body = answer.body as SignedAttestation
  t.equal(body.messages[0]!.result.status, 1)
  t.equal(body.messages[0]!.data.primaryType, 'SolverRefund')
  await assertSignedByOracle(t, body)
  const depositor = hubAccountKey(CHAIN_A, user.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN_A, NATIVE)
  const before = await hubBalance(a, depositor, asset)
  await relayExecution(a, body)
  t.equal(await hubBalance(a, depositor, asset), before - 700_000n)

  const partial = await sendAndWait(a, SOLVER.privateKey, {
    to: user.address,
    value: 10n,
    data: order.orderId,
  })
  const short = await post('/attestations/solver-refunds/v1', {
    ...request,
    refunds: [{ transactionId: partial, inputIndex: 0, refundIndex: 0 }],
  })
  t.equal(
    (short.body as SignedAttestation).messages[0]!.result.status,
    0,
    'a refund below the minimum is FAILED',
  )
  const noOption = await post('/attestations/solver-refunds/v1', {
    ...request,
    refunds: [{ transactionId: refund, inputIndex: 0, refundIndex: 4 }],
  })
  t.equal(noOption.status, 400)
  const forced = await post('/attestations/solver-refunds/v1', { ...request, force: true })
  t.equal(forced.status, 401)
})

t.test('withdrawals: initiation, initiated, then EXECUTED or EXPIRED settle on the hub', async (t) => {
  // Credit the owner on the hub with a deposit first.
  const owner = USERS[1]!
  const deposit = await depositNative(a, owner.privateKey, {
    depositor: owner.address,
    id: randomId(),
    amount: 3_000n,
  })
  const credited = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: deposit,
  })
  await relayExecution(a, credited.body as SignedAttestation)
  const ownerAccount = hubAccountKey(CHAIN_A, owner.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN_A, NATIVE)
  const startBalance = await hubBalance(a, ownerAccount, asset)

  const domain = (await client.get('/chains/v1')).body as OracleApi.OracleChainsResponse
  const withdraw = async (amount: bigint, recipient: Hex) => {
    const nonce = randomId()
    const message = {
      chainId: CHAIN_A,
      depository: DEPOSITORY_ADDRESS.toLowerCase() as Hex,
      currency: NATIVE as Hex,
      amount,
      ownerChainId: CHAIN_A,
      owner: owner.address.toLowerCase() as Hex,
      recipient,
      nonce,
    }
    const hash = hashTypedData({
      domain: domain.hub.domain as never,
      types: {
        WithdrawalRequest: [
          { name: 'chainId', type: 'string' },
          { name: 'depository', type: 'bytes' },
          { name: 'currency', type: 'bytes' },
          { name: 'amount', type: 'uint256' },
          { name: 'ownerChainId', type: 'string' },
          { name: 'owner', type: 'bytes' },
          { name: 'recipient', type: 'bytes' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'WithdrawalRequest',
      message,
    })
    const ownerSignature = await privateKeyToAccount(owner.privateKey).signMessage({ message: { raw: hash } })
    const request = {
      chainId: 31337,
      currency: NATIVE,
      amount: amount.toString(),
      ownerChainId: 31337,
      owner: owner.address,
      recipient,
      nonce,
    }
    return { hash, request, ownerSignature }
  }

  const recipient = USERS[3]!.address.toLowerCase() as Hex
  const w = await withdraw(1_000n, recipient)
  const tooEarly = await post('/attestations/withdrawal-initiated/v1', w.request)
  t.equal(tooEarly.status, 400)
  t.equal(
    (tooEarly.body as ErrorAnswer).errorCode,
    'INSUFFICIENT_FUNDS',
    'initiated before the initiation is relayed',
  )
  // Someone else's signature of the same request.
  const forgedSignature = await privateKeyToAccount(USERS[2]!.privateKey).signMessage({
    message: { raw: w.hash },
  })
  const forged = await post('/attestations/withdrawal-initiation/v1', {
    ...w.request,
    ownerSignature: forgedSignature,
  })
  t.equal(forged.status, 400)
  t.equal((forged.body as ErrorAnswer).errorCode, 'INVALID_SIGNATURE')
  const tooMuch = await withdraw(startBalance + 1n, recipient)
  const poor = await post('/attestations/withdrawal-initiation/v1', {
    ...tooMuch.request,
    ownerSignature: tooMuch.ownerSignature,
  })
  t.equal(poor.status, 400)
  t.equal((poor.body as ErrorAnswer).errorCode, 'INSUFFICIENT_FUNDS')

  const initiation = await post('/attestations/withdrawal-initiation/v1', {
    ...w.request,
    ownerSignature: w.ownerSignature,
  })
  t.equal(initiation.status, 200)
  const initiationBody = initiation.body as SignedAttestation
  const withdrawalAddress = withdrawalAddressOf(w.hash).toLowerCase()
  t.same(initiationBody.messages[0]!.result, { withdrawalRequestHash: w.hash, withdrawalAddress })
  await assertSignedByOracle(t, initiationBody)
  await relayExecution(a, initiationBody)
  t.equal(await hubBalance(a, ownerAccount, asset), startBalance - 1_000n)

  const initiated = await post('/attestations/withdrawal-initiated/v1', w.request)
  t.equal(initiated.status, 200)
  t.same((initiated.body as SignedAttestation).messages[0]!.result, {
    withdrawalRequestHash: w.hash,
    withdrawalAddress,
    balance: '1000',
  })
  t.equal((initiated.body as SignedAttestation).execution, undefined)

  // The allocator pays the recipient out of the depository with a call request whose nonce is the request hash.
  const callRequest = {
    calls: [{ to: recipient, data: '0x' as Hex, value: 1_000n, allowFailure: false }],
    nonce: BigInt(w.hash),
    expiration: 4_000_000_000n,
  }
  const encoded = encodeAbiParameters(CALL_REQUEST_PARAMETERS, [callRequest])
  const pending = await post('/attestations/depository-withdrawals/v1', {
    chainId: 31337,
    withdrawal: encoded,
  })
  t.equal(pending.status, 200)
  const pendingBody = pending.body as SignedAttestation
  t.equal(pendingBody.messages[0]!.result.status, 0, 'PENDING before execution')
  t.equal(pendingBody.execution, undefined)
  t.equal(
    pendingBody.messages[0]!.result.withdrawalId,
    hashStruct({ primaryType: 'CallRequest', types: CALL_REQUEST_TYPES, data: callRequest }),
  )

  const allocator = a.wallet(ALLOCATOR.privateKey)
  const signature = await allocator.signTypedData({
    account: allocator.account!,
    domain: { name: 'RelayDepository', version: '1', chainId: 31337, verifyingContract: DEPOSITORY_ADDRESS },
    types: CALL_REQUEST_TYPES,
    primaryType: 'CallRequest',
    message: callRequest,
  })
  const executor = a.wallet(SOLVER.privateKey)
  const executed = await executor.writeContract({
    account: executor.account!,
    chain: a.chain.chain,
    address: DEPOSITORY_ADDRESS,
    abi: depositoryAbi,
    functionName: 'execute',
    args: [callRequest, signature],
  })
  await a.publicClient.waitForTransactionReceipt({ hash: executed })
  const done = await post('/attestations/depository-withdrawals/v1', { chainId: 31337, withdrawal: encoded })
  const doneBody = done.body as SignedAttestation
  t.equal(doneBody.messages[0]!.result.status, 1, 'EXECUTED')
  const withdrawalAccount = hubAccountKey(CHAIN_A, withdrawalAddress as Hex)
  t.equal(await hubBalance(a, withdrawalAccount, asset), 1_000n)
  await relayExecution(a, doneBody)
  t.equal(await hubBalance(a, withdrawalAccount, asset), 0n, 'EXECUTED burns the withdrawal address balance')

  // A second withdrawal whose call request expired: its funds return to the owner.
  const x = await withdraw(500n, recipient)
  const xInitiation = await post('/attestations/withdrawal-initiation/v1', {
    ...x.request,
    ownerSignature: x.ownerSignature,
  })
  await relayExecution(a, xInitiation.body as SignedAttestation)
  const beforeRelease = await hubBalance(a, ownerAccount, asset)
  const expired = encodeAbiParameters(CALL_REQUEST_PARAMETERS, [
    {
      calls: [{ to: recipient, data: '0x', value: 500n, allowFailure: false }],
      nonce: BigInt(x.hash),
      expiration: 1n,
    },
  ])
  const expiredAnswer = await post('/attestations/depository-withdrawals/v1', {
    chainId: 31337,
    withdrawal: expired,
  })
  t.equal((expiredAnswer.body as SignedAttestation).messages[0]!.result.status, 2, 'EXPIRED')
  await relayExecution(a, expiredAnswer.body as SignedAttestation)
  t.equal(
    await hubBalance(a, ownerAccount, asset),
    beforeRelease + 500n,
    'EXPIRED returns the funds to the owner',
  )

  const garbage = await post('/attestations/depository-withdrawals/v1', {
    chainId: 31337,
    withdrawal: '0x1234',
  })
  t.equal(garbage.status, 400)
  t.equal((garbage.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
})
