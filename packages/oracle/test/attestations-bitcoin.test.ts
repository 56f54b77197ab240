/**
 * The oracle's Bitcoin routes on the devnet (the regtest simulator behind the Esplora API): a PSBT
 * deposit into the vault signed as a wallet would (with @scure/btc-signer), and a solver fill, both
 * tagged with OP_RETURN ids, attested over HTTP with the chain's bytes (output scripts, txids) and
 * relayed to the hub.
 */

import type { OracleApi, PreparedStep } from '@pontis/core'
import {
  BITCOIN_DEVNET_CHAIN_ID,
  BITCOIN_NATIVE_CURRENCY_ID,
  BITCOIN_SOLVER,
  BITCOIN_USERS,
  BITCOIN_VAULT,
  SOLVER,
} from '@pontis/devnet'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import * as btc from '@scure/btc-signer'
import t from 'tap'
import { type Hex, recoverAddress } from 'viem'
import { type ErrorAnswer, randomId } from '../../../test/helpers/answers.js'
import { hubAccountKey, hubAssetKey, type SignedAttestation } from '../src/index.js'
import { typedDataDigest } from '../src/typed-data.js'
import { hubBalance, relayExecution, signOrder, startFamilyOracle } from './fixtures/devnet-oracle.js'

const oracle = await startFamilyOracle(t, 'bitcoin')
const bitcoin = oracle.family
const chain = oracle.registry.chain(BITCOIN_DEVNET_CHAIN_ID)
const { post } = oracle
const CHAIN = 'pontis-local-btc'
const scriptOf = (address: string) => chain.adapter.identity.encodeAddress(address, 'depositor')
async function broadcast(hex: string): Promise<string> {
  const response = await fetch(`${bitcoin.url}/tx`, { method: 'POST', body: hex })
  const text = await response.text()
  if (!response.ok) throw new Error(`broadcast refused: ${text}`)
  return text
}

/** A deposit of `amount` sats into the vault tagged `id`, built by the plugin, signed by the user's wallet. */
async function deposit(id: Hex, amount: bigint): Promise<string> {
  const user = BITCOIN_USERS.p2wpkh
  const steps = (await chain.adapter.quoting?.buildDepositSteps(
    depositStepsRequest({
      requestId: id,
      depositor: user.address,
      currencyId: BITCOIN_NATIVE_CURRENCY_ID,
      amount,
    }),
  )) as readonly PreparedStep[]
  const psbt = String((steps[0]?.items[0]?.data as { psbt?: string } | undefined)?.psbt)
  const transaction = btc.Transaction.fromPSBT(Buffer.from(psbt, 'hex'), { allowUnknownOutputs: true })
  transaction.sign(user.keypair.privateKey as Uint8Array)
  transaction.finalize()
  return broadcast(transaction.hex)
}

t.test('Bitcoin deposits: 404 in the mempool, attested once in a block, credited on the hub', async (t) => {
  const id = randomId()
  const amount = 2_500_000n
  const txid = await deposit(id, amount)
  const early = await post('/attestations/depository-deposits/v1', {
    chainId: BITCOIN_DEVNET_CHAIN_ID,
    transactionId: txid,
    mode: 'fast',
  })
  t.equal(early.status, 404, 'a deposit in the mempool is not attested yet')
  bitcoin.mine(1)
  const answer = await post('/attestations/depository-deposits/v1', {
    chainId: BITCOIN_DEVNET_CHAIN_ID,
    transactionId: txid,
  })
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
  const body = answer.body as SignedAttestation
  const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
  t.equal(result.amount, amount.toString())
  t.equal(result.depositId, id)
  t.equal(result.depositor, BITCOIN_USERS.p2wpkh.address)
  t.equal(result.depository, BITCOIN_VAULT.address)
  t.equal(result.currency, BITCOIN_NATIVE_CURRENCY_ID)
  const signed = body.messages[0]!.data.message.result as Record<string, string>
  t.equal(
    signed.depositor,
    `0x${Buffer.from(BITCOIN_USERS.p2wpkh.outputScript).toString('hex')}`,
    'signed as the output script',
  )
  t.same(body.messages[0]!.data.message.data, { chainId: CHAIN, transactionId: `0x${txid}` })
  const recovered = await recoverAddress({
    hash: typedDataDigest(body.messages[0]!.data),
    signature: body.messages[0]!.signatures![0]!.signature as Hex,
  })
  t.equal(recovered, oracle.signer.address)
  const account = hubAccountKey(CHAIN, scriptOf(BITCOIN_USERS.p2wpkh.address))
  const asset = hubAssetKey(
    CHAIN,
    chain.adapter.identity.encodeAddress(BITCOIN_NATIVE_CURRENCY_ID, 'currency'),
  )
  const before = await hubBalance(oracle.a, account, asset)
  await relayExecution(oracle.a, body)
  t.equal(
    await hubBalance(oracle.a, account, asset),
    before + amount,
    'the hub credits the Bitcoin depositor',
  )

  const notATxid = await post('/attestations/depository-deposits/v1', {
    chainId: BITCOIN_DEVNET_CHAIN_ID,
    transactionId: 'xyz',
  })
  t.equal(notATxid.status, 400)
  t.equal((notATxid.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
})

t.test(
  'Bitcoin solver fills: an OP_RETURN-tagged payment is SUCCESSFUL, an underpayment FAILED',
  async (t) => {
    const recipient = BITCOIN_USERS.p2tr.address
    const solverKey = `0x${Buffer.from(BITCOIN_SOLVER.keypair.privateKey as Uint8Array).toString('hex')}`
    const fillFor = async (outputMinimum: bigint, paid: bigint) => {
      const order: OracleApi.Order = {
        version: 'v1',
        solverChainId: 'pontis-local-a',
        solver: SOLVER.address.toLowerCase(),
        salt: BigInt(randomId()).toString(),
        inputs: [
          {
            payment: { chainId: CHAIN, currency: BITCOIN_NATIVE_CURRENCY_ID, amount: '3000000', weight: '1' },
            refunds: [
              {
                chainId: CHAIN,
                recipient: BITCOIN_USERS.p2wpkh.address,
                currency: BITCOIN_NATIVE_CURRENCY_ID,
                minimumAmount: '3000000',
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
              currency: BITCOIN_NATIVE_CURRENCY_ID,
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
      const depositTxid = await deposit(orderId, 3_000_000n)
      bitcoin.mine(1)
      const attested = await post('/attestations/depository-deposits/v1', {
        chainId: BITCOIN_DEVNET_CHAIN_ID,
        transactionId: depositTxid,
      })
      t.equal(attested.status, 200)
      const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as string
      await relayExecution(oracle.a, attested.body as SignedAttestation)
      const signed = await chain.adapter.filling!.signFill(
        {
          orderId,
          recipient,
          currencyId: BITCOIN_NATIVE_CURRENCY_ID,
          amount: paid,
          calls: [],
          topupNativeAmount: 0n,
        },
        { solverKey },
      )
      await chain.adapter.filling!.broadcast(signed.raw)
      bitcoin.mine(2)
      return {
        orderId,
        request: {
          order,
          orderSignature,
          inputs: [{ transactionId: depositTxid, onchainId, inputIndex: 0 }],
          fill: { transactionId: signed.transactionId },
        },
      }
    }
    const full = await fillFor(2_000_000n, 2_000_000n)
    const answer = await post('/attestations/solver-fills/v1', full.request)
    t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
    const body = answer.body as SignedAttestation
    t.same(body.messages[0]!.result, {
      orderId: full.orderId,
      status: 1,
      totalWeightedInputPaymentBpsDiff: '0',
    })
    const solver = hubAccountKey('pontis-local-a', SOLVER.address.toLowerCase() as Hex)
    const asset = hubAssetKey(
      CHAIN,
      chain.adapter.identity.encodeAddress(BITCOIN_NATIVE_CURRENCY_ID, 'currency'),
    )
    const before = await hubBalance(oracle.a, solver, asset)
    await relayExecution(oracle.a, body)
    t.equal(
      await hubBalance(oracle.a, solver, asset),
      before + 3_000_000n,
      'the solver is paid the Bitcoin deposit',
    )

    const short = await fillFor(2_000_000n, 1_999_999n)
    const failed = await post('/attestations/solver-fills/v1', short.request)
    t.equal(failed.status, 200)
    t.equal((failed.body as SignedAttestation).messages[0]!.result.status, 0, 'underpaid: FAILED')
  },
)
