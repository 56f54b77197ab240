/**
 * The oracle's Tron routes on the devnet (the full-node API simulator, mining on demand): TRX and
 * USDT deposits into the vault built by the plugin's deposit step and signed as a wallet would
 * (`tronSignTransaction`), and solver fills signed by the plugin, all tagged with 32-byte ids,
 * attested over HTTP with the chain's bytes (20-byte addresses, 32-byte txIDs) in fast mode after
 * one block and slow mode after 19, and relayed to the hub.
 */

import type { OracleApi, PreparedStep } from '@pontis/core'
import {
  SOLVER,
  TRON_DEVNET_CHAIN_ID,
  TRON_NATIVE_CURRENCY_ID,
  TRON_SOLVER,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  type TronTransactionJson,
  tronAddressBytes,
  tronSignTransaction,
} from '@pontis/devnet'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import t from 'tap'
import { type Hex, recoverAddress } from 'viem'
import { type ErrorAnswer, randomId } from '../../../test/helpers/answers.js'
import { hubAccountKey, hubAssetKey, type SignedAttestation } from '../src/index.js'
import { typedDataDigest } from '../src/typed-data.js'
import { hubBalance, relayExecution, signOrder, startFamilyOracle } from './fixtures/devnet-oracle.js'

const oracle = await startFamilyOracle(t, 'tron')
const tron = oracle.family
const chain = oracle.registry.chain(TRON_DEVNET_CHAIN_ID)
const { client, post } = oracle
const CHAIN = 'pontis-local-tron'
/** The plugin's slow finality (a block is solid at 19 confirmations). */
const SLOW_CONFIRMATIONS = 19
/** The plugin keeps the head block number for its read-cache time; new blocks count after it. */
const READ_CACHE_MS =
  Number((chain.entry.plugin as { readCacheSeconds?: number }).readCacheSeconds ?? 2) * 1000

/** Mines `count` blocks and waits until the oracle's plugin sees the new head. */
async function mine(count: number): Promise<void> {
  tron.mine(count)
  await new Promise((resolve) => setTimeout(resolve, READ_CACHE_MS + 100))
}

/** The 20 bytes of a Tron address without its 0x41 prefix, 0x-hex: how messages carry addresses. */
function bytes20(address: string): Hex {
  const bytes = tronAddressBytes(address)
  if (!bytes) throw new Error(`not a Tron address: ${address}`)
  return `0x${Buffer.from(bytes.subarray(1)).toString('hex')}`
}

async function node(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${tron.url}${path}`, { method: 'POST', body: JSON.stringify(body) })
  return (await response.json()) as Record<string, unknown>
}

/** Signs `transaction` with `privateKey` as a wallet does and broadcasts it; answers the txID. */
async function signAndBroadcast(privateKey: Hex, transaction: TronTransactionJson): Promise<string> {
  const answer = await node('/wallet/broadcasttransaction', tronSignTransaction(privateKey, transaction))
  if (answer.result !== true) throw new Error(`broadcast refused: ${JSON.stringify(answer)}`)
  return transaction.txID
}

/** A deposit of `amount` of `currencyId` into the vault tagged `id`, built by the plugin, signed by alice. */
async function deposit(id: Hex, currencyId: string, amount: bigint): Promise<string> {
  const steps = (await chain.adapter.quoting?.buildDepositSteps(
    depositStepsRequest({
      requestId: id,
      depositor: TRON_USERS.alice.address,
      currencyId,
      amount,
    }),
  )) as readonly PreparedStep[]
  const data = steps[0]?.items[0]?.data as { format?: string; transaction?: TronTransactionJson }
  if (data.format !== 'tron-transaction' || !data.transaction) throw new Error('not a Tron deposit step')
  return signAndBroadcast(TRON_USERS.alice.privateKey, data.transaction)
}

t.test('/chains/v1 lists Tron as a tvm chain with the vault and 1/19 confirmations', async (t) => {
  const answer = await client.get('/chains/v1')
  t.equal(answer.status, 200)
  const body = answer.body as OracleApi.OracleChainsResponse
  const entry = body.chains.find((candidate) => candidate.id === TRON_DEVNET_CHAIN_ID)
  t.ok(entry, 'chain 728126428 is listed')
  t.equal(entry?.vmType, 'tvm')
  t.equal(entry?.name, CHAIN)
  t.equal(entry?.depository, TRON_VAULT.address)
  t.same(entry?.finality, { fastConfirmations: 1, slowConfirmations: 19, slowRequiresFinalized: false })
})

for (const [name, currencyId, amount] of [
  ['TRX', TRON_NATIVE_CURRENCY_ID, 150_000_000n],
  ['USDT', TRON_USDT_ADDRESS, 42_000_000n],
] as const) {
  t.test(`Tron ${name} deposits: fast after one block, slow after 19, credited on the hub`, async (t) => {
    const id = randomId()
    const txid = await deposit(id, currencyId, amount)
    const request = { chainId: TRON_DEVNET_CHAIN_ID, transactionId: txid }
    const unmined = await post('/attestations/depository-deposits/v1', { ...request, mode: 'fast' })
    t.equal(unmined.status, 404, 'not in a block yet: retry later')
    t.equal((unmined.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
    await mine(1)
    const slowEarly = await post('/attestations/depository-deposits/v1', { ...request, mode: 'slow' })
    t.equal(slowEarly.status, 404, 'one confirmation is not final for slow mode')
    t.equal((slowEarly.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
    t.match((slowEarly.body as ErrorAnswer).message, /not final for mode 'slow'.*1 confirmations/)
    const answer = await post('/attestations/depository-deposits/v1', { ...request, mode: 'fast' })
    t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
    const body = answer.body as SignedAttestation
    t.equal(body.messages.length, 1)
    const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
    t.equal(result.amount, amount.toString())
    t.equal(result.depositId, id)
    t.equal(result.depositor, TRON_USERS.alice.address, 'the result names the depositor in its chain form')
    t.equal(result.depository, TRON_VAULT.address)
    t.equal(result.currency, currencyId)
    const signed = body.messages[0]!.data.message.result as Record<string, string>
    t.equal(signed.depositor, bytes20(TRON_USERS.alice.address), 'signed as the 20 address bytes')
    t.equal(signed.depository, bytes20(TRON_VAULT.address))
    t.equal(
      signed.currency,
      currencyId === TRON_NATIVE_CURRENCY_ID ? `0x${'00'.repeat(20)}` : bytes20(TRON_USDT_ADDRESS),
      'TRX is 20 zero bytes, a TRC20 its contract',
    )
    t.same(body.messages[0]!.data.message.data, { chainId: CHAIN, transactionId: `0x${txid}` })
    const recovered = await recoverAddress({
      hash: typedDataDigest(body.messages[0]!.data),
      signature: body.messages[0]!.signatures![0]!.signature as Hex,
    })
    t.equal(recovered, oracle.signer.address, 'signed by the oracle')

    await mine(SLOW_CONFIRMATIONS - 2)
    const slowAt18 = await post('/attestations/depository-deposits/v1', { ...request, mode: 'slow' })
    t.equal(slowAt18.status, 404, '18 confirmations: still not final')
    await mine(1)
    const slow = await post('/attestations/depository-deposits/v1', { ...request, mode: 'slow' })
    t.equal(slow.status, 200, '19 confirmations: slow mode attests')
    t.same(slow.body, body, 'the same fact, the same answer')

    const account = hubAccountKey(CHAIN, bytes20(TRON_USERS.alice.address))
    const asset = hubAssetKey(CHAIN, signed.currency as Hex)
    const before = await hubBalance(oracle.a, account, asset)
    await relayExecution(oracle.a, body)
    t.equal(await hubBalance(oracle.a, account, asset), before + amount, 'the hub credits the Tron depositor')
  })
}

t.test('Tron deposits: what cannot be attested', async (t) => {
  const malformed = await post('/attestations/depository-deposits/v1', {
    chainId: TRON_DEVNET_CHAIN_ID,
    transactionId: 'xyz',
  })
  t.equal(malformed.status, 400, 'not a txID')
  t.equal((malformed.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
  const unknown = await post('/attestations/depository-deposits/v1', {
    chainId: TRON_DEVNET_CHAIN_ID,
    transactionId: 'cd'.repeat(32),
    mode: 'fast',
  })
  t.equal(unknown.status, 404, 'an unknown txID')
  t.equal((unknown.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')

  // A TRX payment into the vault without a memo, and a tagged payment to someone else.
  const untagged = (await node('/wallet/createtransaction', {
    owner_address: TRON_USERS.bob.address,
    to_address: TRON_VAULT.address,
    amount: 1_000_000,
    visible: true,
  })) as unknown as TronTransactionJson
  const untaggedId = await signAndBroadcast(TRON_USERS.bob.privateKey, untagged)
  const elsewhere = (await node('/wallet/createtransaction', {
    owner_address: TRON_USERS.bob.address,
    to_address: TRON_USERS.alice.address,
    amount: 1_000_000,
    extra_data: randomId().slice(2),
    visible: true,
  })) as unknown as TronTransactionJson
  const elsewhereId = await signAndBroadcast(TRON_USERS.bob.privateKey, elsewhere)
  tron.mine(1)
  for (const [what, transactionId] of [
    ['a transfer into the vault without an id', untaggedId],
    ['a tagged transfer to someone else', elsewhereId],
  ] as const) {
    const answer = await post('/attestations/depository-deposits/v1', {
      chainId: TRON_DEVNET_CHAIN_ID,
      transactionId,
      mode: 'fast',
    })
    t.equal(answer.status, 400, `${what} is no deposit`)
    t.equal((answer.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
  }
})

t.test('Tron solver fills: a tagged USDT payment is SUCCESSFUL, an underpayment FAILED', async (t) => {
  const recipient = TRON_USERS.bob.address
  const fillFor = async (outputMinimum: bigint, paid: bigint) => {
    const order: OracleApi.Order = {
      version: 'v1',
      solverChainId: 'pontis-local-a',
      solver: SOLVER.address.toLowerCase(),
      salt: BigInt(randomId()).toString(),
      inputs: [
        {
          payment: { chainId: CHAIN, currency: TRON_NATIVE_CURRENCY_ID, amount: '300000000', weight: '1' },
          refunds: [
            {
              chainId: CHAIN,
              recipient: TRON_USERS.alice.address,
              currency: TRON_NATIVE_CURRENCY_ID,
              minimumAmount: '300000000',
              deadline: 4_000_000_000,
              extraData: '0x',
            },
          ],
        },
      ],
      output: {
        chainId: CHAIN,
        payments: [
          {
            recipient,
            currency: TRON_USDT_ADDRESS,
            minimumAmount: outputMinimum.toString(),
            expectedAmount: outputMinimum.toString(),
          },
        ],
        calls: [],
        deadline: 4_000_000_000,
        extraData: '0x',
      },
      fees: [],
    }
    const { orderId, orderSignature } = await signOrder(oracle.registry, order)
    const depositTxid = await deposit(orderId, TRON_NATIVE_CURRENCY_ID, 300_000_000n)
    tron.mine(1)
    const attested = await post('/attestations/depository-deposits/v1', {
      chainId: TRON_DEVNET_CHAIN_ID,
      transactionId: depositTxid,
      mode: 'fast',
    })
    t.equal(attested.status, 200)
    const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as string
    await relayExecution(oracle.a, attested.body as SignedAttestation)
    const signed = await chain.adapter.filling!.signFill(
      {
        orderId,
        recipient,
        currencyId: TRON_USDT_ADDRESS,
        amount: paid,
        calls: [],
        topupNativeAmount: 0n,
      },
      { solverKey: TRON_SOLVER.privateKey },
    )
    await chain.adapter.filling!.broadcast(signed.raw)
    const request = {
      order,
      orderSignature,
      inputs: [{ transactionId: depositTxid, onchainId, inputIndex: 0 }],
      fill: { transactionId: signed.transactionId },
    }
    // Fills are attested on final facts only: 19 confirmations.
    await mine(SLOW_CONFIRMATIONS - 1)
    const early = await post('/attestations/solver-fills/v1', request)
    t.equal(early.status, 404, 'a fill with 18 confirmations is not final yet')
    t.equal((early.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
    await mine(1)
    return { orderId, request }
  }

  const full = await fillFor(20_000_000n, 20_000_000n)
  const answer = await post('/attestations/solver-fills/v1', full.request)
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
  const body = answer.body as SignedAttestation
  t.same(body.messages[0]!.result, {
    orderId: full.orderId,
    status: 1,
    totalWeightedInputPaymentBpsDiff: '0',
  })
  t.same(body.messages[0]!.data.message.data.fill, { transactionId: `0x${full.request.fill.transactionId}` })
  const recovered = await recoverAddress({
    hash: typedDataDigest(body.messages[0]!.data),
    signature: body.messages[0]!.signatures![0]!.signature as Hex,
  })
  t.equal(recovered, oracle.signer.address, 'signed by the oracle')
  t.ok(body.execution, 'a successful fill settles on the hub')
  const solver = hubAccountKey('pontis-local-a', SOLVER.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN, `0x${'00'.repeat(20)}`)
  const before = await hubBalance(oracle.a, solver, asset)
  await relayExecution(oracle.a, body)
  t.equal(
    await hubBalance(oracle.a, solver, asset),
    before + 300_000_000n,
    'the solver is paid the TRX deposit',
  )

  const short = await fillFor(20_000_000n, 19_999_999n)
  const failed = await post('/attestations/solver-fills/v1', short.request)
  t.equal(failed.status, 200)
  t.equal((failed.body as SignedAttestation).messages[0]!.result.status, 0, 'underpaid: FAILED')
  t.equal((failed.body as SignedAttestation).execution, undefined)
})
