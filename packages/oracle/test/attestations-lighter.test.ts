/**
 * The oracle's Lighter routes on the devnet (the perpetuals-exchange venue simulator behind its REST
 * API): a deposit (a user's transfer to the depository account tagged with the request id) and a
 * solver fill (a transfer out of the depository tagged with the order id), both signed with the
 * simulator's own signer as a wallet would, attested over HTTP with the chain's bytes (account
 * indexes as 32-byte big-endian integers, venue tx hashes) and relayed to the hub.
 */
import type { OracleApi } from '@pontis/core'
import {
  LIGHTER_DEVNET_CHAIN_ID,
  LIGHTER_SOLVER,
  LIGHTER_USDC_ASSET_INDEX,
  LIGHTER_USDC_CURRENCY_ID,
  LIGHTER_USERS,
  type LighterDevAccount,
  lighterSignTransfer,
  SOLVER,
} from '@pontis/devnet'
import t from 'tap'
import { type Hex, recoverAddress } from 'viem'
import { type ErrorAnswer, randomId } from '../../../test/helpers/answers.js'
import { hubAccountKey, hubAssetKey, type SignedAttestation } from '../src/index.js'
import { typedDataDigest } from '../src/typed-data.js'
import { hubBalance, relayExecution, signOrder, startFamilyOracle } from './fixtures/devnet-oracle.js'

const oracle = await startFamilyOracle(t, 'lighter')
const venue = oracle.family
const { client, post } = oracle
const CHAIN = 'pontis-local-lighter'
const USDC = LIGHTER_USDC_CURRENCY_ID
const ALICE = LIGHTER_USERS.alice
const BOB = LIGHTER_USERS.bob
/** An account index (or currency id) as the plugin encodes it: 32 bytes big-endian. */
const uint256 = (value: number | string) => `0x${BigInt(value).toString(16).padStart(64, '0')}` as Hex

/** Signs a USDC perps transfer with `from`'s API key (the simulator's signer) and sends it; answers its hash. */
async function transfer(from: LighterDevAccount, to: number, amount: bigint, memo: Hex): Promise<Hex> {
  const signed = lighterSignTransfer(
    {
      FromAccountIndex: from.index,
      ApiKeyIndex: from.apiKeyIndex,
      ToAccountIndex: to,
      AssetIndex: LIGHTER_USDC_ASSET_INDEX,
      FromRouteType: 0,
      ToRouteType: 0,
      Amount: Number(amount),
      USDCFee: Number(venue.venue.transferFeeUsdc),
      Memo: memo,
      ExpiredAt: Date.now() + 600_000,
      Nonce: venue.venue.nextNonce(from.index, from.apiKeyIndex) as number,
    },
    from.apiKeySeed,
  )
  const response = await fetch(`${venue.url}/api/v1/sendTx`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tx_type: 12, tx_info: signed.txInfo }),
  })
  const body = (await response.json()) as { tx_hash?: string; message?: string }
  if (response.status !== 200) throw new Error(`the venue refused the transfer: ${body.message}`)
  if (body.tx_hash !== signed.hash) throw new Error(`the venue answered hash ${body.tx_hash}`)
  return signed.hash
}

t.test('/chains/v1 lists the venue as an lvm chain', async (t) => {
  const answer = await client.get('/chains/v1')
  t.equal(answer.status, 200)
  const body = answer.body as {
    chains: Array<{
      id: number
      vmType: string
      depository?: string
      finality: { slowConfirmations: number }
    }>
  }
  const chain = body.chains.find((entry) => entry.id === LIGHTER_DEVNET_CHAIN_ID)
  t.ok(chain, 'chain 3586256 is listed')
  t.equal(chain?.vmType, 'lvm')
  t.equal(chain?.depository, String(LIGHTER_SOLVER.index), 'the depository is the solver account')
  t.equal(chain?.finality.slowConfirmations, 1, 'final on execution')
})

t.test(
  'Lighter deposits: a tagged transfer to the depository is attested and credited on the hub',
  async (t) => {
    const id = randomId()
    const amount = 12_500_000n
    const hash = await transfer(ALICE, LIGHTER_SOLVER.index, amount, id)
    const answer = await post('/attestations/depository-deposits/v1', {
      chainId: LIGHTER_DEVNET_CHAIN_ID,
      transactionId: hash,
    })
    t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
    const body = answer.body as SignedAttestation
    t.equal(body.messages.length, 1, 'one deposit')
    const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
    t.equal(result.amount, amount.toString())
    t.equal(result.depositId, id)
    t.equal(result.depositor, String(ALICE.index))
    t.equal(result.depository, String(LIGHTER_SOLVER.index))
    t.equal(result.currency, USDC)
    const signed = body.messages[0]!.data.message.result as Record<string, string>
    t.equal(signed.depositor, uint256(ALICE.index), 'the depositor signed as its 32-byte account index')
    t.equal(signed.depository, uint256(LIGHTER_SOLVER.index), 'the depository signed as its 32-byte index')
    t.equal(signed.currency, uint256(0), 'USDC signed as asset id 0')
    t.equal(signed.depositId, id)
    t.equal(signed.amount, amount.toString())
    t.same(body.messages[0]!.data.message.data, { chainId: CHAIN, transactionId: hash })
    const recovered = await recoverAddress({
      hash: typedDataDigest(body.messages[0]!.data),
      signature: body.messages[0]!.signatures![0]!.signature as Hex,
    })
    t.equal(recovered, oracle.signer.address, 'signed by the oracle signer')

    const account = hubAccountKey(CHAIN, uint256(ALICE.index))
    const asset = hubAssetKey(CHAIN, uint256(0))
    const before = await hubBalance(oracle.a, account, asset)
    await relayExecution(oracle.a, body)
    t.equal(await hubBalance(oracle.a, account, asset), before + amount, 'the hub credits the venue account')

    const upperCase = await post('/attestations/depository-deposits/v1', {
      chainId: LIGHTER_DEVNET_CHAIN_ID,
      transactionId: `0x${hash.slice(2).toUpperCase()}`,
    })
    t.equal(upperCase.status, 200, 'the hash in upper case is the same transaction')
    t.same(
      (upperCase.body as SignedAttestation).messages[0]!.data.message.data,
      { chainId: CHAIN, transactionId: hash },
      'signed in its canonical (lower-case) form',
    )
  },
)

t.test('Lighter deposit refusals: unknown, malformed, not a deposit', async (t) => {
  const unknown = await post('/attestations/depository-deposits/v1', {
    chainId: LIGHTER_DEVNET_CHAIN_ID,
    transactionId: `0x${'cd'.repeat(32)}`,
  })
  t.equal(unknown.status, 404, 'a hash the venue does not know')
  t.equal((unknown.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')

  for (const malformed of ['0x1234', 'not-a-hash', `0x${'zz'.repeat(32)}`]) {
    const answer = await post('/attestations/depository-deposits/v1', {
      chainId: LIGHTER_DEVNET_CHAIN_ID,
      transactionId: malformed,
    })
    t.equal(answer.status, 400, `${malformed}: 400`)
    t.equal((answer.body as ErrorAnswer).errorCode, 'INVALID_REQUEST', `${malformed}: INVALID_REQUEST`)
    t.match((answer.body as ErrorAnswer).message, /64 hex digits/, 'the message names the expected form')
  }

  const toBob = await transfer(ALICE, BOB.index, 1_000_000n, randomId())
  const notToDepository = await post('/attestations/depository-deposits/v1', {
    chainId: LIGHTER_DEVNET_CHAIN_ID,
    transactionId: toBob,
  })
  t.equal(notToDepository.status, 400, 'a transfer between users is no deposit')
  t.equal((notToDepository.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')

  const untagged = await transfer(ALICE, LIGHTER_SOLVER.index, 1_000_000n, `0x${'00'.repeat(32)}`)
  const noMemo = await post('/attestations/depository-deposits/v1', {
    chainId: LIGHTER_DEVNET_CHAIN_ID,
    transactionId: untagged,
  })
  t.equal(noMemo.status, 400, 'a transfer to the depository without an id is no deposit')
  t.equal((noMemo.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')

  const payout = await transfer(LIGHTER_SOLVER, BOB.index, 1_000_000n, randomId())
  const outOfDepository = await post('/attestations/depository-deposits/v1', {
    chainId: LIGHTER_DEVNET_CHAIN_ID,
    transactionId: payout,
  })
  t.equal(outOfDepository.status, 400, 'a transfer out of the depository is no deposit')
  t.equal((outOfDepository.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
})

t.test('Lighter solver fills: a tagged payout is SUCCESSFUL, an underpayment FAILED', async (t) => {
  const recipient = String(BOB.index)
  const fillFor = async (outputMinimum: bigint, paid: bigint) => {
    const order: OracleApi.Order = {
      version: 'v1',
      solverChainId: 'pontis-local-a',
      solver: SOLVER.address.toLowerCase(),
      salt: BigInt(randomId()).toString(),
      inputs: [
        {
          payment: { chainId: CHAIN, currency: USDC, amount: '30000000', weight: '1' },
          refunds: [
            {
              chainId: CHAIN,
              recipient: String(ALICE.index),
              currency: USDC,
              minimumAmount: '30000000',
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
            currency: USDC,
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
    const deposit = await transfer(ALICE, LIGHTER_SOLVER.index, 30_000_000n, orderId)
    const attested = await post('/attestations/depository-deposits/v1', {
      chainId: LIGHTER_DEVNET_CHAIN_ID,
      transactionId: deposit,
    })
    t.equal(attested.status, 200)
    const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as string
    await relayExecution(oracle.a, attested.body as SignedAttestation)
    const fill = await transfer(LIGHTER_SOLVER, BOB.index, paid, orderId)
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

  const full = await fillFor(25_000_000n, 25_000_000n)
  const answer = await post('/attestations/solver-fills/v1', full.request)
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
  const body = answer.body as SignedAttestation
  t.same(body.messages[0]!.result, {
    orderId: full.orderId,
    status: 1,
    totalWeightedInputPaymentBpsDiff: '0',
  })
  const recovered = await recoverAddress({
    hash: typedDataDigest(body.messages[0]!.data),
    signature: body.messages[0]!.signatures![0]!.signature as Hex,
  })
  t.equal(recovered, oracle.signer.address, 'signed by the oracle signer')
  t.ok(body.execution, 'a successful fill settles on the hub')
  const solver = hubAccountKey('pontis-local-a', SOLVER.address.toLowerCase() as Hex)
  const asset = hubAssetKey(CHAIN, uint256(0))
  const before = await hubBalance(oracle.a, solver, asset)
  await relayExecution(oracle.a, body)
  t.equal(await hubBalance(oracle.a, solver, asset), before + 30_000_000n, 'the solver is paid the deposit')

  const short = await fillFor(25_000_000n, 24_999_999n)
  const failed = await post('/attestations/solver-fills/v1', short.request)
  t.equal(failed.status, 200)
  t.equal((failed.body as SignedAttestation).messages[0]!.result.status, 0, 'underpaid: FAILED')
})
