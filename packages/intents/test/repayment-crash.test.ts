/**
 * SIGKILL in the middle of a repayment, then a restart: the solver is paid back exactly once. The
 * service runs as its own process on PostgreSQL; a failpoint kills it right after the repayment is
 * signed and stored but before it is sent, or (second case) right after it was sent but before the
 * send is recorded on its job. The restarted service finishes the same signed bytes. The same holds for
 * the sweep of a deposit address (third case).
 */
import type { IntentsApi } from '@pontis/core'
import { DEPOSITORY_ADDRESS, SOLVER, USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import { type Address, createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { INTENTS_DOCUMENT_PATH } from '../src/index.js'
import { dropSchema, querySchema, uniqueSchema, unsentSolverTransactions } from './fixtures/postgres.js'
import {
  indexBeforeFailpoint,
  processEnvironment,
  sendDepositStep,
  startProcessDevnet,
  startServiceProcess,
} from './fixtures/service-process.js'

// Three cases, each starting the service twice as its own process, then a devnet fill and repayment.
t.setTimeout(300_000)

const NATIVE = '0x0000000000000000000000000000000000000000'
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const devnet = await startProcessDevnet(t)
const [chainA] = devnet.chains as [(typeof devnet.chains)[0]]
const clientA = createPublicClient({ chain: chainA.chain, transport: http(chainA.rpcUrl) })

/** A native bridge from 31337 to 31338 quoted for `user`, paid to a fixed recipient. */
async function quoteBridge(
  client: TestClient,
  user: Address,
  amount: string,
  extra: Record<string, unknown> = {},
): Promise<IntentsApi.QuoteResponse> {
  const body = {
    user,
    recipient: USERS[3]!.address,
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: NATIVE,
    destinationCurrency: NATIVE,
    amount,
    tradeType: 'EXACT_INPUT',
    ...extra,
  }
  return (await client.post('/quote/v2', body)).body as IntentsApi.QuoteResponse
}

for (const [index, failpoint] of (['after-sign', 'after-send'] as const).entries()) {
  t.test(`SIGKILL at repayment ${failpoint}: the restarted service repays exactly once`, async (t) => {
    const schema = uniqueSchema(`repay_crash_${index}`)
    t.teardown(() => dropSchema(schema))
    const env = processEnvironment(devnet, schema)
    const solverBefore = await clientA.getBalance({ address: SOLVER.address })
    const depositoryBefore = await clientA.getBalance({ address: DEPOSITORY_ADDRESS })
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: `repayment:${failpoint}` })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const user = USERS[index]!
    const quote = await quoteBridge(client, user.address, '100000000000000000')
    const amountIn = BigInt(quote.details.currencyIn.amount)
    const hash = await sendDepositStep(chainA, user, quote)
    await indexBeforeFailpoint(client, hash)

    t.equal(await first.exited(), 'SIGKILL', 'the service died at the failpoint')
    const [signed] = await querySchema<{ state: string; transaction_id: Hex }>(
      schema,
      `SELECT state, transaction_id FROM solver_jobs WHERE kind = 'repayment'`,
    )
    t.equal(signed?.state, 'signed', 'the repayment was signed and stored, its send not recorded')
    const sent = await clientA.getTransactionReceipt({ hash: signed!.transaction_id }).then(
      () => true,
      () => false,
    )
    t.equal(sent, failpoint === 'after-send', failpoint === 'after-send' ? 'it was sent' : 'nothing was sent')

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    await waitFor(
      'the repayment to be paid after the restart',
      () => querySchema<{ state: string }>(schema, 'SELECT state FROM repayments'),
      { until: (rows) => rows.length === 1 && rows[0]!.state === 'paid', describe: (rows) => rows },
    )
    const jobs = await querySchema<{ transaction_id: Hex }>(
      schema,
      `SELECT transaction_id FROM solver_jobs WHERE kind = 'repayment'`,
    )
    t.same(
      jobs.map((job) => job.transaction_id),
      [signed!.transaction_id],
      'one repayment, the bytes signed before the crash',
    )
    t.equal(
      await unsentSolverTransactions(schema, 31337, (address) => clientA.getTransactionCount({ address })),
      0n,
      'nothing the solver signed on the origin chain is still to land',
    )
    const receipt = await clientA.getTransactionReceipt({ hash: signed!.transaction_id })
    t.equal(
      (await clientA.getBalance({ address: SOLVER.address })) -
        solverBefore +
        receipt.gasUsed * receipt.effectiveGasPrice,
      amountIn,
      'the solver was repaid the deposit exactly once',
    )
    t.equal(
      await clientA.getBalance({ address: DEPOSITORY_ADDRESS }),
      depositoryBefore,
      'the depository keeps nothing of the filled request',
    )
  })
}

t.test(
  'SIGKILL after a deposit-address sweep is sent: the restarted service sweeps exactly once',
  async (t) => {
    const schema = uniqueSchema('sweep_crash')
    t.teardown(() => dropSchema(schema))
    const env = processEnvironment(devnet, schema)
    const solverBefore = await clientA.getBalance({ address: SOLVER.address })
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: 'sweep:after-send' })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const user = USERS[2]!
    const quote = await quoteBridge(client, user.address, '50000000000000000', {
      useDepositAddress: true,
      strict: true,
      refundTo: user.address,
    })
    const address = quote.steps[0]!.depositAddress as Address
    const amountIn = BigInt(quote.details.currencyIn.amount)
    const payer = createWalletClient({
      account: privateKeyToAccount(user.privateKey),
      chain: chainA.chain,
      transport: http(chainA.rpcUrl),
    })
    await clientA.waitForTransactionReceipt({
      hash: await payer.sendTransaction({ to: address, value: amountIn }),
    })

    t.equal(await first.exited(), 'SIGKILL', 'the service died right after sending the sweep')
    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const [sweep] = await waitFor(
      'the sweep to be recorded after the restart',
      () =>
        querySchema<{ state: string; swept_amount: string; fee: string; transaction_id: Hex }>(
          schema,
          'SELECT state, swept_amount, fee, transaction_id FROM deposit_address_sweeps',
        ),
      { until: (rows) => rows.length === 1 && rows[0]!.state === 'swept', describe: (rows) => rows },
    )
    const swept = BigInt(sweep!.swept_amount)
    t.equal(swept + BigInt(sweep!.fee), amountIn, 'what was swept and its fee make up the credited amount')
    const jobs = await querySchema<{ transaction_id: Hex }>(
      schema,
      `SELECT transaction_id FROM solver_jobs WHERE kind = 'sweep'`,
    )
    t.same(
      jobs.map((job) => job.transaction_id),
      [sweep!.transaction_id],
      'one sweep job',
    )
    t.equal(
      (await clientA.getBalance({ address: SOLVER.address })) - solverBefore,
      swept,
      'swept to the solver once',
    )
    const receipt = await clientA.getTransactionReceipt({ hash: sweep!.transaction_id })
    t.equal(
      await clientA.getBalance({ address }),
      amountIn - swept - receipt.gasUsed * receipt.effectiveGasPrice,
      'the address made exactly one transfer',
    )
  },
)
