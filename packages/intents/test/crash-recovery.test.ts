/**
 * SIGKILL in the middle of a fill, then a restart: no request is lost and nobody is paid twice.
 * The service runs as its own process on PostgreSQL; a failpoint kills it right after the fill is
 * signed and stored but before it is broadcast, (second case) after the broadcast is recorded on the
 * job but before the request moves to submitted, and (third case) right after the broadcast.
 */
import type { IntentsApi } from '@pontis/core'
import { USERS } from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t from 'tap'
import { type Address, createPublicClient, http } from 'viem'
import { INTENTS_DOCUMENT_PATH } from '../src/index.js'
import { dropSchema, uniqueSchema, unsentSolverTransactions } from './fixtures/postgres.js'
import {
  finalStatus,
  indexBeforeFailpoint,
  processEnvironment,
  sendDepositStep,
  startProcessDevnet,
  startServiceProcess,
} from './fixtures/service-process.js'

// Three cases, each starting the service twice as its own process (TypeScript compiled at start-up,
// then a devnet fill): 30-45 s a case on a busy 2-core machine, more than tap's 120 s for the file.
t.setTimeout(300_000)

const NATIVE = '0x0000000000000000000000000000000000000000'
const loaded = await loadOpenApiDocument(INTENTS_DOCUMENT_PATH)
const devnet = await startProcessDevnet(t)
const [chainA, chainB] = devnet.chains as [(typeof devnet.chains)[0], (typeof devnet.chains)[0]]
const clientB = createPublicClient({ chain: chainB.chain, transport: http(chainB.rpcUrl) })

for (const [index, failpoint] of (
  ['after-sign', 'broadcast-recorded', 'after-broadcast'] as const
).entries()) {
  t.test(`SIGKILL ${failpoint}: the restarted service finishes the fill exactly once`, async (t) => {
    const schema = uniqueSchema(`crash_${index}`)
    t.teardown(() => dropSchema(schema))
    const env = processEnvironment(devnet, schema)
    const first = await startServiceProcess({ ...env, PONTIS_FAILPOINT: failpoint })
    t.teardown(() => first.stop())
    const client = createTestClient(t, first.url, loaded.document)
    const user = USERS[index]!
    const recipient = USERS[3 - index]!.address
    const quote = (
      await client.post('/quote/v2', {
        user: user.address,
        recipient,
        originChainId: 31337,
        destinationChainId: 31338,
        originCurrency: NATIVE,
        destinationCurrency: NATIVE,
        amount: '100000000000000000',
        tradeType: 'EXACT_INPUT',
      })
    ).body as IntentsApi.QuoteResponse
    const requestId = quote.steps[0]!.requestId as string
    const before = await clientB.getBalance({ address: recipient as Address })
    const hash = await sendDepositStep(chainA, user, quote)
    await indexBeforeFailpoint(client, hash)

    t.equal(await first.exited(), 'SIGKILL', 'the service died at the failpoint')
    const paidBeforeRestart = (await clientB.getBalance({ address: recipient as Address })) - before
    t.equal(
      paidBeforeRestart,
      failpoint === 'after-sign' ? 0n : BigInt(quote.details.currencyOut.amount),
      failpoint === 'after-sign'
        ? 'nothing was broadcast before the crash'
        : 'the fill was broadcast before the crash',
    )

    const second = await startServiceProcess(env)
    t.teardown(() => second.stop())
    const again = createTestClient(t, second.url, loaded.document)
    const record = await finalStatus(again, requestId)
    t.equal(record.status, 'success', 'the request survived the crash and was filled')
    // A wrongly re-signed second fill would be on chain B already, or signed and still to land.
    t.equal(
      await unsentSolverTransactions(schema, 31338, (address) => clientB.getTransactionCount({ address })),
      0n,
      'nothing the solver signed is still to land',
    )
    t.equal(
      (await clientB.getBalance({ address: recipient as Address })) - before,
      BigInt(quote.details.currencyOut.amount),
      'the recipient was paid exactly once',
    )
  })
}
