/**
 * Facts of a final transaction are read over RPC once and kept; facts that are not final yet are
 * read again every time, and the confirmations of kept facts keep counting from the head. Real
 * anvil behind a counting JSON-RPC proxy (the bench's), so every read the plugin makes is seen.
 */
import { readFileSync } from 'node:fs'
import { type ChainEntry, createRegistry, type ReadingCapability } from '@pontis/core'
import { DEPOSITORY_ADDRESS, type DevnetChain, pontisDepositoryAbi, startDevnet, USERS } from '@pontis/devnet'
import t from 'tap'
import { createPublicClient, createTestClient, createWalletClient, type Hex, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { startCountingProxy } from '../../../scripts/bench/profile/rpc-proxy.js'
import { waitFor } from '../../../test/helpers/wait.js'
import evmPlugin from '../src/index.js'

const CONFIRMATIONS = 3

const devnet = await startDevnet({ chains: [{ chainId: 31337, port: 0 }] })
t.teardown(() => devnet.stop())
const chain = devnet.chains[0] as DevnetChain
const proxy = await startCountingProxy(chain.rpcUrl)
t.teardown(() => proxy.close())

/** The chain entry of configs/chains.local.json, reading through the proxy, final after 3 blocks. */
function entry(): ChainEntry {
  const config = readFileSync(new URL('../../../configs/chains.local.json', import.meta.url), 'utf8')
  const resolved = config.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')
  const entries = (JSON.parse(resolved) as { chains: Array<Record<string, unknown>> }).chains
  const found = entries.find((candidate) => candidate.id === chain.chainId)
  if (!found) throw new Error(`no chain ${chain.chainId} in chains.local.json`)
  return {
    ...found,
    httpRpcUrl: proxy.url,
    rpc: { url: proxy.url },
    plugin: { ...(found.plugin as object), readCacheSeconds: 0, confirmations: CONFIRMATIONS },
  } as unknown as ChainEntry
}

const registry = createRegistry()
registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
await registry.addChains([entry()])
t.teardown(() => registry.close())
const reading = registry.chain(chain.chainId).adapter.reading as ReadingCapability

const transport = http(chain.rpcUrl)
const publicClient = createPublicClient({ chain: chain.chain, transport, pollingInterval: 50 })
const testClient = createTestClient({ chain: chain.chain, transport, mode: 'anvil' })
const user = USERS[0]!
const wallet = createWalletClient({
  chain: chain.chain,
  transport,
  account: privateKeyToAccount(user.privateKey),
})

async function deposit(): Promise<Hex> {
  const hash = await wallet.writeContract({
    address: DEPOSITORY_ADDRESS,
    abi: pontisDepositoryAbi,
    functionName: 'depositNative',
    args: [user.address, `0x${'ab'.repeat(32)}`],
    value: parseEther('0.01'),
  })
  await publicClient.waitForTransactionReceipt({ hash })
  return hash
}

const receiptReads = (hash: Hex) =>
  proxy.calls().filter((call) => call.method === 'eth_getTransactionReceipt' && call.params.includes(hash))
    .length

t.test('a final transaction is read once; one that is not final yet, every time', async (t) => {
  const hash = await deposit()
  const early = await reading.readDeposits(hash)
  t.equal(early.state, 'success')
  t.equal(early.final, false, `not final before ${CONFIRMATIONS} confirmations`)
  t.equal(early.facts.length, 1, 'the deposit is seen')
  await reading.readDeposits(hash)
  t.equal(receiptReads(hash), 2, 'facts that are not final are read again')

  await testClient.mine({ blocks: CONFIRMATIONS })
  const final = await waitFor('the deposit to be final', () => reading.readDeposits(hash), {
    until: (facts) => facts.final,
  })
  const readsWhenFinal = receiptReads(hash)
  t.same(final.facts, early.facts, 'the same facts')
  for (let index = 0; index < 5; index++) {
    const again = await reading.readDeposits(hash)
    t.equal(again.final, true)
    t.same(again.facts, final.facts)
    t.equal(again.blockNumber, final.blockNumber)
  }
  t.equal(receiptReads(hash), readsWhenFinal, 'no receipt is read again once final')

  // Confirmations keep counting from the head (cached for a second), not frozen at the kept count.
  await testClient.mine({ blocks: 5 })
  const later = await waitFor('the confirmations to count the new blocks', () => reading.readDeposits(hash), {
    until: (facts) => (facts.confirmations ?? 0) >= (final.confirmations ?? 0) + 5,
  })
  t.equal(later.final, true)
  t.equal(receiptReads(hash), readsWhenFinal, 'still no receipt read')

  // Another kind of fact of the same transaction is read on its own.
  const fills = await reading.readFills!(hash)
  t.equal(fills.state, 'success')
  t.equal(receiptReads(hash), readsWhenFinal + 1, 'fills are kept apart from deposits')
})

t.test('a transaction that is not there is read every time', async (t) => {
  const missing = `0x${'cd'.repeat(32)}` as Hex
  for (let index = 0; index < 3; index++) {
    const facts = await reading.readDeposits(missing)
    t.equal(facts.state, 'not_found')
  }
  t.equal(receiptReads(missing), 3, 'nothing is kept for a missing transaction')
})
