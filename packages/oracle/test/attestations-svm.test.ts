/**
 * The oracle's SVM routes on the devnet (LiteSVM behind the devnet's Solana RPC): a deposit into
 * the vault and a solver fill, both tagged with memos, attested over HTTP with the chain's bytes
 * (base58-decoded keys, 64-byte signatures) and relayed to the hub.
 */
import type { OracleApi } from '@pontis/core'
import { SOLVER, SVM_DEVNET_CHAIN_ID, SVM_SOLVER, SVM_USERS, SVM_VAULT_OWNER } from '@pontis/devnet'
import { decodeBase58, encodeBase58 } from '@pontis/plugin-svm'
import {
  Connection,
  type Keypair,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import t from 'tap'
import { type Hex, recoverAddress } from 'viem'
import { type ErrorAnswer, randomId } from '../../../test/helpers/answers.js'
import { waitFor } from '../../../test/helpers/wait.js'
import { hubAccountKey, hubAssetKey, type SignedAttestation } from '../src/index.js'
import { typedDataDigest } from '../src/typed-data.js'
import { hubBalance, relayExecution, signOrder, startFamilyOracle } from './fixtures/devnet-oracle.js'

const oracle = await startFamilyOracle(t, 'svm')
const svm = oracle.family
const connection = new Connection(svm.rpcUrl, 'confirmed')
const { post } = oracle
const CHAIN = 'pontis-local-svm'
const NATIVE = '11111111111111111111111111111111'
const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')
const hexOf = (base58: string) =>
  `0x${Buffer.from(decodeBase58(base58) as Uint8Array).toString('hex')}` as Hex
function memo(id: string): TransactionInstruction {
  return { programId: MEMO, keys: [], data: Buffer.from(id, 'utf8') } as TransactionInstruction
}

/** Signs and sends `instructions` from `payer`; waits until confirmed; returns the signature. */
async function send(payer: Keypair, instructions: TransactionInstruction[]): Promise<string> {
  const { blockhash } = await connection.getLatestBlockhash()
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions,
  })
  const transaction = new VersionedTransaction(message.compileToV0Message())
  transaction.sign([payer])
  const signature = await connection.sendRawTransaction(transaction.serialize())
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
  if (status?.err) throw new Error(`transaction failed: ${JSON.stringify(status.err)}`)
  return signature
}

async function depositSol(user: Keypair, id: string, lamports: bigint): Promise<string> {
  return send(user, [
    SystemProgram.transfer({
      fromPubkey: user.publicKey,
      toPubkey: new PublicKey(SVM_VAULT_OWNER.address),
      lamports,
    }),
    memo(id),
  ])
}

t.test('SVM deposits: attested in fast mode, slow waits for finalized, credited on the hub', async (t) => {
  const user = SVM_USERS[0]!
  const id = randomId()
  const amount = 250_000_000n
  const signature = await depositSol(user.keypair, id, amount)
  const slow = await post('/attestations/depository-deposits/v1', {
    chainId: SVM_DEVNET_CHAIN_ID,
    transactionId: signature,
    mode: 'slow',
  })
  t.equal(slow.status, 404, 'not finalized yet: slow mode answers retry later')
  const answer = await post('/attestations/depository-deposits/v1', {
    chainId: SVM_DEVNET_CHAIN_ID,
    transactionId: signature,
    mode: 'fast',
  })
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
  const body = answer.body as SignedAttestation
  const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
  t.equal(result.amount, amount.toString())
  t.equal(result.depositId, id)
  t.equal(result.depositor, user.address, 'the result names the depositor in its chain form')
  t.equal(result.currency, NATIVE)
  t.equal(result.depository, SVM_VAULT_OWNER.address)
  const signed = body.messages[0]!.data.message.result as Record<string, string>
  t.equal(signed.depositor, hexOf(user.address), 'the signed message has its 32 key bytes')
  t.equal(signed.currency, hexOf(NATIVE))
  t.equal(signed.depository, hexOf(SVM_VAULT_OWNER.address))
  t.same(body.messages[0]!.data.message.data, { chainId: CHAIN, transactionId: hexOf(signature) })
  const recovered = await recoverAddress({
    hash: typedDataDigest(body.messages[0]!.data),
    signature: body.messages[0]!.signatures![0]!.signature as Hex,
  })
  t.equal(recovered, oracle.signer.address, 'signed by the oracle')

  svm.chain.advanceSlots(3)
  const finalized = await post('/attestations/depository-deposits/v1', {
    chainId: SVM_DEVNET_CHAIN_ID,
    transactionId: signature,
    mode: 'slow',
  })
  t.equal(finalized.status, 200, 'finalized: slow mode attests')
  t.same(finalized.body, body, 'the same fact, the same answer')

  const account = hubAccountKey(CHAIN, hexOf(user.address))
  const asset = hubAssetKey(CHAIN, hexOf(NATIVE))
  const before = await hubBalance(oracle.a, account, asset)
  await relayExecution(oracle.a, body)
  t.equal(await hubBalance(oracle.a, account, asset), before + amount, 'the hub credits the SVM depositor')
})

t.test('SVM deposits: what cannot be attested', async (t) => {
  const notASignature = await post('/attestations/depository-deposits/v1', {
    chainId: SVM_DEVNET_CHAIN_ID,
    transactionId: `0x${'ab'.repeat(32)}`,
  })
  t.equal(notASignature.status, 400, 'an EVM hash is not an SVM signature')
  const unknown = await post('/attestations/depository-deposits/v1', {
    chainId: SVM_DEVNET_CHAIN_ID,
    transactionId: encodeBase58(new Uint8Array(64).fill(7)),
  })
  t.equal(unknown.status, 404, 'an unknown signature')
  const untagged = await send(SVM_USERS[1]!.keypair, [
    SystemProgram.transfer({
      fromPubkey: SVM_USERS[1]!.keypair.publicKey,
      toPubkey: new PublicKey(SVM_VAULT_OWNER.address),
      lamports: 1_000n,
    }),
  ])
  const answer = await post('/attestations/depository-deposits/v1', {
    chainId: SVM_DEVNET_CHAIN_ID,
    transactionId: untagged,
    mode: 'fast',
  })
  t.equal(answer.status, 400, 'a transfer without an id memo is no deposit')
  t.equal((answer.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
})

t.test('SVM solver fills: a memo-tagged payment is SUCCESSFUL, an underpayment FAILED', async (t) => {
  const user = SVM_USERS[2]!
  const recipient = SVM_USERS[3]!.address
  const orderOf = (outputMinimum: bigint): OracleApi.Order => ({
    version: 'v1',
    solverChainId: 'pontis-local-a',
    solver: SOLVER.address.toLowerCase(),
    salt: BigInt(randomId()).toString(),
    inputs: [
      {
        payment: { chainId: CHAIN, currency: NATIVE, amount: '500000000', weight: '1' },
        refunds: [
          {
            chainId: CHAIN,
            recipient: user.address,
            currency: NATIVE,
            minimumAmount: '500000000',
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
          currency: NATIVE,
          minimumAmount: outputMinimum.toString(),
          expectedAmount: outputMinimum.toString(),
        },
      ],
      calls: [],
      deadline: 4_000_000_000,
      extraData: '0x',
    },
    fees: [],
  })
  const fillFor = async (outputMinimum: bigint, paid: bigint) => {
    const order = orderOf(outputMinimum)
    const { orderId, orderSignature } = await signOrder(oracle.registry, order)
    const deposit = await depositSol(user.keypair, orderId, 500_000_000n)
    const attested = await post('/attestations/depository-deposits/v1', {
      chainId: SVM_DEVNET_CHAIN_ID,
      transactionId: deposit,
      mode: 'fast',
    })
    t.equal(attested.status, 200)
    const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as string
    await relayExecution(oracle.a, attested.body as SignedAttestation)
    const fill = await send(SVM_SOLVER.keypair, [
      SystemProgram.transfer({
        fromPubkey: SVM_SOLVER.keypair.publicKey,
        toPubkey: new PublicKey(recipient),
        lamports: paid,
      }),
      memo(orderId),
    ])
    // Fills are attested on finalized facts only.
    svm.chain.advanceSlots(3)
    return {
      orderId,
      request: {
        order,
        orderSignature,
        inputs: [{ transactionId: deposit, onchainId, inputIndex: 0 }],
        fill: { transactionId: fill },
      },
    }
  }

  const full = await fillFor(400_000_000n, 400_000_000n)
  const answer = await post('/attestations/solver-fills/v1', full.request)
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
  const body = answer.body as SignedAttestation
  t.same(body.messages[0]!.result, {
    orderId: full.orderId,
    status: 1,
    totalWeightedInputPaymentBpsDiff: '0',
  })
  t.ok(body.execution, 'a successful fill settles on the hub')
  const solver = hubAccountKey('pontis-local-a', SOLVER.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN, hexOf(NATIVE))
  const before = await hubBalance(oracle.a, solver, asset)
  await relayExecution(oracle.a, body)
  t.equal(
    await hubBalance(oracle.a, solver, asset),
    before + 500_000_000n,
    'the solver is paid the SVM deposit',
  )

  const short = await fillFor(400_000_000n, 399_999_999n)
  const failed = await post('/attestations/solver-fills/v1', short.request)
  t.equal(failed.status, 200)
  t.equal((failed.body as SignedAttestation).messages[0]!.result.status, 0, 'underpaid: FAILED')
  t.equal((failed.body as SignedAttestation).execution, undefined)
})
