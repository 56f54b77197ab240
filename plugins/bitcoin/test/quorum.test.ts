/**
 * Untrusted Esplora nodes (issue 23): with `rpc.fallbackUrls`, a mined transaction counts only when
 * a majority of all the chain's APIs agree on its block's hash; a node answering another hash is
 * counted as a disagreement. Loopback proxies in front of the devnet stand in for the other nodes.
 */
import { type RpcCallObservation, watchRpcCalls } from '@pontis/core'
import { createTestAdapter } from '@pontis/plugin-testkit'
import t from 'tap'
import { FORGED_HASH, lyingNode } from '../../../test/helpers/lying-node.js'
import plugin, { BITCOIN_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  BITCOIN_USERS,
  bitcoinAdapter,
  bitcoinEntry,
  psbtOf,
  signAsWallet,
  startDevnet,
} from './fixtures/bitcoin-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const main = await bitcoinAdapter(devnet.url)
// Another hash for every block height it is asked about.
const liar = await lyingNode(t, devnet.url, (call) =>
  /^\/block-height\/\d+$/.test(call.path) && call.status === 200 ? FORGED_HASH : undefined,
)
const honest = await lyingNode(t, devnet.url, () => undefined)

/** An adapter whose main API is the devnet, with `fallbackUrls` as its other nodes. */
function adapterWith(fallbackUrls: readonly string[]) {
  const entry = bitcoinEntry(devnet.url)
  return createTestAdapter(plugin, { ...entry, rpc: { ...entry.rpc, fallbackUrls: [...fallbackUrls] } })
}

const observed: RpcCallObservation[] = []
const stop = watchRpcCalls([{ url: liar.url, chainId: 1 }], (observation) => observed.push(observation))
t.teardown(stop)
const disagreementsSeen = () => observed.filter((call) => call.outcome === 'disagreement').length

// A mined deposit paying the vault, tagged with a request id.
const user = BITCOIN_USERS.p2wpkh
const steps = await main.quoting.buildDepositSteps({
  requestId: `0x${'e1'.repeat(32)}`,
  depositor: user.address,
  currencyId: BITCOIN_NATIVE_CURRENCY_ID,
  amount: 1_500_000n,
  usePermit: false,
  permitExpiry: 0,
  executeEndpoint: '/execute',
  nowSeconds: 0,
})
const signed = signAsWallet(psbtOf(steps), user)
await main.filling.broadcast(signed.hex)
devnet.mine(1)
const txid = signed.id

t.test('one node alone, or with an honest one: the deposit is read', async (t) => {
  t.match(await main.reading.readDeposits(txid), { state: 'success', facts: [{ amount: 1_500_000n }] })
  const withHonest = await adapterWith([honest.url])
  t.match(await withHonest.reading.readDeposits(txid), { state: 'success', facts: [{ amount: 1_500_000n }] })
})

t.test('one honest node against one liar: pending, no facts, the liar counted', async (t) => {
  const before = disagreementsSeen()
  const oneToOne = await adapterWith([liar.url])
  t.same(await oneToOne.reading.readDeposits(txid), {
    transactionId: txid,
    state: 'pending',
    final: false,
    confirmations: 0,
    facts: [],
  })
  t.match(await oneToOne.filling.outcome(txid), { state: 'pending', final: false }, 'nor is a payout final')
  t.equal(disagreementsSeen(), before + 2, 'each read counts the contradiction')
})

t.test('two honest nodes against one liar: the liar is outvoted and counted', async (t) => {
  const before = disagreementsSeen()
  const outvoted = await adapterWith([liar.url, honest.url])
  t.match(await outvoted.reading.readDeposits(txid), {
    state: 'success',
    final: true,
    facts: [{ amount: 1_500_000n }],
  })
  t.equal(disagreementsSeen(), before + 1)
})

t.test('a node that has no block at that height is not counted, nor reported', async (t) => {
  const behind = await lyingNode(t, devnet.url, (call) =>
    call.path.startsWith('/block-height/') ? { status: 404, body: 'Block not found' } : undefined,
  )
  const before = disagreementsSeen()
  const withBehind = await adapterWith([behind.url])
  t.match(await withBehind.reading.readDeposits(txid), { state: 'pending', facts: [] }, 'one of two vouches')
  t.equal(disagreementsSeen(), before)
})
