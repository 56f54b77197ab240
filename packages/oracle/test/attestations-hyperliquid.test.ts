/**
 * The oracle's Hyperliquid core routes (the `hypevm` family, chain 1337) on the devnet (the core API
 * simulator behind `/info`, `/exchange` and the explorer's `txDetails`): a deposit (a user's
 * `usdSend`/`spotSend` to the depository, built by the plugin's `buildDepositSteps` with the nonce
 * `depositNonceTag` handed out, signed with the simulator's own signer as a wallet would) attested
 * over HTTP with the chain's bytes (20-byte addresses, 16-byte token ids, the 32-byte hash) and
 * relayed to the hub; and the refusals (unknown, malformed, not a deposit).
 *
 * Hyperliquid sends carry no memo. A deposit's id is the tag keccak256(encodePacked(sender, nonce)),
 * which the intent service stored with the request when it served the nonce. Fills are tagged the
 * same way, by (solver, nonce), not by order id: which order a solver nonce paid is the solver's own
 * record, which the venue does not hold. So the plugin reads no payouts as order facts and the
 * oracle answers a fill attestation on this family 400 UNSUPPORTED_CHAIN (never a signed verdict:
 * a FAILED for a paid fill could justify a second payment). Likewise
 * an order paid by a Hyperliquid deposit cannot be bound to it: the deposit's id is its tag, not the
 * order id, and the oracle refuses with NOT_A_DEPOSIT.
 */

import type { OracleApi, PreparedStep } from '@pontis/core'
import {
  HYPERLIQUID_DEVNET_CHAIN_ID,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_SPOT_USDC_ID,
  HYPERLIQUID_USERS,
  type HyperliquidDevAccount,
  type HyperliquidSendAction,
  hyperliquidSignAction,
  hyperliquidTransactionHash,
  SOLVER,
  USERS,
} from '@pontis/devnet'
import { depositStepsRequest } from '@pontis/plugin-testkit'
import t from 'tap'
import { encodePacked, type Hex, keccak256, recoverAddress, zeroAddress } from 'viem'
import { type ErrorAnswer, randomId } from '../../../test/helpers/answers.js'
import { hubAccountKey, hubAssetKey, type SignedAttestation } from '../src/index.js'
import { typedDataDigest } from '../src/typed-data.js'
import {
  depositNative,
  hubBalance,
  relayExecution,
  signOrder,
  startFamilyOracle,
} from './fixtures/devnet-oracle.js'

const oracle = await startFamilyOracle(t, 'hyperliquid')
const venue = oracle.family
const chain = oracle.registry.chain(HYPERLIQUID_DEVNET_CHAIN_ID)
const quoting = chain.adapter.quoting
const filling = chain.adapter.filling
if (!quoting?.depositNonceTag || !filling) throw new Error('the Hyperliquid adapter cannot quote or fill')
const { client, post } = oracle
const CHAIN = 'pontis-local-hyperliquid'
const HYPERLIQUID = HYPERLIQUID_DEVNET_CHAIN_ID
const ALICE = HYPERLIQUID_USERS.alice
const BOB = HYPERLIQUID_USERS.bob
const DEPOSITORY = HYPERLIQUID_SOLVER.address
/** The deposit tag of a send by `sender` with `nonce`, from its definition (not the plugin's code). */
const tagOf = (sender: string, nonce: bigint): Hex =>
  keccak256(encodePacked(['address', 'uint64'], [sender as Hex, nonce]))

/**
 * Signs a send as a wallet does (the simulator's signer, independent of the plugin's) and posts it to
 * `/exchange`; answers its hash.
 */
async function signAndPost(
  from: HyperliquidDevAccount,
  action: HyperliquidSendAction,
  nonce: number = action.time,
): Promise<Hex> {
  const signature = await hyperliquidSignAction(from.privateKey, action)
  const response = await fetch(`${venue.url}/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action, nonce, signature }),
  })
  const answer = (await response.json()) as { status: string; response: unknown }
  if (answer.status !== 'ok') throw new Error(`the venue refused the send: ${JSON.stringify(answer)}`)
  return hyperliquidTransactionHash(action, signature)
}

/**
 * A deposit as the intent service serves it: a nonce and its tag from `depositNonceTag`, the action
 * from `buildDepositSteps`, signed by `from` and posted. Answers the hash, the nonce and the tag.
 */
async function deposit(
  from: HyperliquidDevAccount,
  currencyId: string,
  amount: bigint,
): Promise<{ hash: Hex; nonce: bigint; tag: Hex; action: HyperliquidSendAction }> {
  const { nonce, tag } = quoting!.depositNonceTag!(from.address, Date.now())
  const steps = (await quoting!.buildDepositSteps(
    depositStepsRequest({
      requestId: randomId(),
      depositor: from.address,
      currencyId,
      amount,
      depositNonce: nonce,
    }),
  )) as readonly PreparedStep[]
  const data = steps[0]?.items[0]?.data as { format: string; action: HyperliquidSendAction; nonce: number }
  if (data.format !== 'hyperliquid-action') throw new Error(`not a hyperliquid-action: ${data.format}`)
  const hash = await signAndPost(from, data.action, data.nonce)
  return { hash, nonce, tag, action: data.action }
}

t.test('/chains/v1 lists Hyperliquid as a hypevm chain', async (t) => {
  const answer = await client.get('/chains/v1')
  t.equal(answer.status, 200)
  const body = answer.body as {
    chains: Array<{
      id: number
      name: string
      vmType: string
      depository?: string
      finality: { slowConfirmations: number }
    }>
  }
  const listed = body.chains.find((entry) => entry.id === HYPERLIQUID)
  t.ok(listed, 'chain 1337 is listed')
  t.equal(listed?.vmType, 'hypevm')
  t.equal(listed?.name, CHAIN, 'its protocol chain id')
  t.equal(listed?.depository, DEPOSITORY, 'the depository is the solver account')
  t.equal(listed?.finality.slowConfirmations, 1, 'final once in a block')
})

const kinds: ReadonlyArray<[string, string, bigint, 'usdSend' | 'spotSend']> = [
  ['perps USDC', HYPERLIQUID_PERPS_USDC_ID, 12_50000000n, 'usdSend'],
  ['spot USDC', HYPERLIQUID_SPOT_USDC_ID, 3_12345678n, 'spotSend'],
]
for (const [name, currency, amount, type] of kinds) {
  t.test(
    `Hyperliquid deposits in ${name}: a ${type} to the depository is attested under its (sender, nonce) tag and credited on the hub`,
    async (t) => {
      const made = await deposit(ALICE, currency, amount)
      t.equal(made.action.type, type)
      t.equal(made.action.destination, DEPOSITORY)
      t.equal(made.tag, tagOf(ALICE.address, made.nonce), 'depositNonceTag: keccak256(sender ‖ uint64 nonce)')
      const answer = await post('/attestations/depository-deposits/v1', {
        chainId: HYPERLIQUID,
        transactionId: made.hash,
      })
      t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
      const body = answer.body as SignedAttestation
      t.equal(body.messages.length, 1, 'one deposit')
      const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
      t.equal(result.depositId, made.tag, 'the deposit id is the tag')
      t.equal(result.amount, amount.toString())
      t.equal(result.depositor, ALICE.address)
      t.equal(result.depository, DEPOSITORY)
      t.equal(result.currency, currency)
      const signed = body.messages[0]!.data.message.result as Record<string, string>
      t.equal(signed.depositId, made.tag)
      t.equal(signed.depositor, ALICE.address, 'the depositor signed as its 20 address bytes')
      t.equal(signed.depository, DEPOSITORY, 'the depository signed as its 20 address bytes')
      t.equal(signed.currency, currency, 'the currency signed as its 16-byte token id')
      t.equal(signed.amount, amount.toString())
      t.same(body.messages[0]!.data.message.data, { chainId: CHAIN, transactionId: made.hash })
      const recovered = await recoverAddress({
        hash: typedDataDigest(body.messages[0]!.data),
        signature: body.messages[0]!.signatures![0]!.signature as Hex,
      })
      t.equal(recovered, oracle.signer.address, 'signed by the oracle signer')

      const account = hubAccountKey(CHAIN, ALICE.address as Hex)
      const asset = hubAssetKey(CHAIN, currency as Hex)
      const before = await hubBalance(oracle.a, account, asset)
      await relayExecution(oracle.a, body)
      t.equal(await hubBalance(oracle.a, account, asset), before + amount, 'the hub credits the depositor')

      const upperCase = await post('/attestations/depository-deposits/v1', {
        chainId: HYPERLIQUID,
        transactionId: `0x${made.hash.slice(2).toUpperCase()}`,
      })
      t.equal(upperCase.status, 200, 'the hash in upper case is the same transaction')
      t.same(
        (upperCase.body as SignedAttestation).messages[0]!.data.message.data,
        { chainId: CHAIN, transactionId: made.hash },
        'signed in its canonical (lower-case) form',
      )
    },
  )
}

t.test('Hyperliquid deposit refusals: unknown, malformed, not to the depository', async (t) => {
  const unknown = await post('/attestations/depository-deposits/v1', {
    chainId: HYPERLIQUID,
    transactionId: `0x${'cd'.repeat(32)}`,
  })
  t.equal(unknown.status, 404, 'a hash the venue does not know')
  t.equal((unknown.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')

  for (const malformed of ['0x1234', 'not-a-hash', `0x${'zz'.repeat(32)}`, `0x${'ab'.repeat(20)}`]) {
    const answer = await post('/attestations/depository-deposits/v1', {
      chainId: HYPERLIQUID,
      transactionId: malformed,
    })
    t.equal(answer.status, 400, `${malformed}: 400`)
    t.equal((answer.body as ErrorAnswer).errorCode, 'INVALID_REQUEST', `${malformed}: INVALID_REQUEST`)
    t.match(
      (answer.body as ErrorAnswer).message,
      /64 hexadecimal digits/,
      'the message names the expected form',
    )
  }

  const now = Date.now()
  const toBob = await signAndPost(ALICE, {
    type: 'usdSend',
    hyperliquidChain: 'Mainnet',
    signatureChainId: '0x66eee',
    destination: BOB.address,
    amount: '1',
    time: now,
  })
  const notToDepository = await post('/attestations/depository-deposits/v1', {
    chainId: HYPERLIQUID,
    transactionId: toBob,
  })
  t.equal(notToDepository.status, 400, 'a send between users is no deposit')
  t.equal((notToDepository.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')

  const payout = await signAndPost(HYPERLIQUID_SOLVER, {
    type: 'usdSend',
    hyperliquidChain: 'Mainnet',
    signatureChainId: '0x66eee',
    destination: BOB.address,
    amount: '1',
    time: now + 1,
  })
  const outOfDepository = await post('/attestations/depository-deposits/v1', {
    chainId: HYPERLIQUID,
    transactionId: payout,
  })
  t.equal(outOfDepository.status, 400, 'a send out of the depository is no deposit')
  t.equal((outOfDepository.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')

  // A send lacking the balance is recorded in a block with an error: reverted, no deposit.
  const tooMuch: HyperliquidSendAction = {
    type: 'usdSend',
    hyperliquidChain: 'Mainnet',
    signatureChainId: '0x66eee',
    destination: DEPOSITORY,
    amount: '99999999',
    time: now + 2,
  }
  const signature = await hyperliquidSignAction(BOB.privateKey, tooMuch)
  await fetch(`${venue.url}/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: tooMuch, nonce: tooMuch.time, signature }),
  })
  const failed = await post('/attestations/depository-deposits/v1', {
    chainId: HYPERLIQUID,
    transactionId: hyperliquidTransactionHash(tooMuch, signature),
  })
  t.equal(failed.status, 400, 'a send executed with an error is no deposit')
  t.equal((failed.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
  t.match((failed.body as ErrorAnswer).message, /reverted/)
})

t.test('a fill on Hyperliquid cannot be attested by order id: 400 UNSUPPORTED_CHAIN', async (t) => {
  // An order paid on chain A (a native deposit tagged with the order id), filled on Hyperliquid.
  const recipient = BOB.address
  const user = USERS[0]!
  const order: OracleApi.Order = {
    version: 'v1',
    solverChainId: 'pontis-local-a',
    solver: SOLVER.address.toLowerCase(),
    salt: BigInt(randomId()).toString(),
    inputs: [
      {
        payment: {
          chainId: 'pontis-local-a',
          currency: zeroAddress,
          amount: '1000000000000000',
          weight: '1',
        },
        refunds: [
          {
            chainId: 'pontis-local-a',
            recipient: user.address.toLowerCase(),
            currency: zeroAddress,
            minimumAmount: '1000000000000000',
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
          currency: HYPERLIQUID_PERPS_USDC_ID,
          minimumAmount: '200000000',
          expectedAmount: '200000000',
        },
      ],
      calls: [],
      deadline: 4_000_000_000,
      extraData: '0x',
    },
    fees: [],
  }
  const { orderId, orderSignature } = await signOrder(oracle.registry, order)
  const depositHash = await depositNative(oracle.a, user.privateKey, {
    depositor: user.address,
    id: orderId,
    amount: 1_000_000_000_000_000n,
  })
  const attested = await post('/attestations/depository-deposits/v1', {
    chainId: 31337,
    transactionId: depositHash,
  })
  t.equal(attested.status, 200)
  const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as string
  await relayExecution(oracle.a, attested.body as SignedAttestation)

  // The solver pays the recipient in full on Hyperliquid: a usdSend tagged (solver, nonce).
  const signed = await filling.signFill(
    {
      orderId,
      recipient,
      currencyId: HYPERLIQUID_PERPS_USDC_ID,
      amount: 200_000_000n,
      calls: [],
      topupNativeAmount: 0n,
    },
    { solverKey: HYPERLIQUID_SOLVER.privateKey },
  )
  const before = venue.balance(recipient, HYPERLIQUID_PERPS_USDC_ID)
  await filling.broadcast(signed.raw)
  t.equal(
    venue.balance(recipient, HYPERLIQUID_PERPS_USDC_ID) - before,
    200_000_000n,
    'the recipient was paid',
  )
  t.equal(chain.adapter.reading?.readFills, undefined, 'the plugin reads no payouts as order facts')

  const answer = await post('/attestations/solver-fills/v1', {
    order,
    orderSignature,
    inputs: [{ transactionId: depositHash, onchainId, inputIndex: 0 }],
    fill: { transactionId: signed.transactionId },
  })
  t.equal(answer.status, 400, 'a client error, never a signed verdict')
  t.match(answer.body, { errorCode: 'UNSUPPORTED_CHAIN', message: /cannot attest fills/ })
})

t.test(
  'an order paid by a Hyperliquid deposit cannot be bound by order id either: NOT_A_DEPOSIT',
  async (t) => {
    const amount = 5_00000000n
    const order: OracleApi.Order = {
      version: 'v1',
      solverChainId: 'pontis-local-a',
      solver: SOLVER.address.toLowerCase(),
      salt: BigInt(randomId()).toString(),
      inputs: [
        {
          payment: {
            chainId: CHAIN,
            currency: HYPERLIQUID_PERPS_USDC_ID,
            amount: amount.toString(),
            weight: '1',
          },
          refunds: [
            {
              chainId: CHAIN,
              recipient: ALICE.address,
              currency: HYPERLIQUID_PERPS_USDC_ID,
              minimumAmount: amount.toString(),
              deadline: 4_000_000_000,
              extraData: '0x',
            },
          ],
        },
      ],
      output: {
        chainId: 'pontis-local-a',
        payments: [
          {
            recipient: USERS[1]!.address.toLowerCase(),
            currency: zeroAddress,
            minimumAmount: '1',
            expectedAmount: '1',
          },
        ],
        calls: [],
        deadline: 4_000_000_000,
        extraData: '0x',
      },
      fees: [],
    }
    const { orderId, orderSignature } = await signOrder(oracle.registry, order)
    const made = await deposit(ALICE, HYPERLIQUID_PERPS_USDC_ID, amount)
    const attested = await post('/attestations/depository-deposits/v1', {
      chainId: HYPERLIQUID,
      transactionId: made.hash,
    })
    t.equal(attested.status, 200)
    const onchainId = (attested.body as SignedAttestation).messages[0]!.result.onchainId as string
    const answer = await post('/attestations/solver-fills/v1', {
      order,
      orderSignature,
      inputs: [{ transactionId: made.hash, onchainId, inputIndex: 0 }],
      fill: { transactionId: randomId() },
    })
    t.equal(answer.status, 400, JSON.stringify(answer.body).slice(0, 300))
    t.equal((answer.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
    t.match((answer.body as ErrorAnswer).message, made.tag, 'the message names the deposit tag')
    t.match((answer.body as ErrorAnswer).message, orderId, 'and the order id it does not match')
  },
)
