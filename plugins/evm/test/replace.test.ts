/**
 * Repricing a stuck transaction (FillingCapability.replace) on a real anvil: the same nonce with
 * higher fees, up to the chain's cap, and only for the solver's own transactions.
 */
import { readFileSync } from 'node:fs'
import { type ChainEntry, createRegistry, type FillingCapability } from '@pontis/core'
import { DEV_ACCOUNTS, evmFaultPowers, SOLVER, startAnvil, USERS } from '@pontis/devnet'
import t from 'tap'
import { createPublicClient, type Hex, http, keccak256, parseGwei, parseTransaction } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import evmPlugin from '../src/index.js'

const CAP = parseGwei('50')
const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const client = createPublicClient({ transport: http(anvil.rpcUrl) })
const faults = evmFaultPowers(anvil.rpcUrl)

const config = readFileSync(new URL('../../../configs/chains.local.json', import.meta.url), 'utf8')
const entries = (JSON.parse(config.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')) as { chains: ChainEntry[] })
  .chains
const local = entries.find((entry) => entry.id === 31337) as ChainEntry
const registry = createRegistry()
registry.registerPlugin(evmPlugin, '@pontis/plugin-evm', 'evm')
await registry.addChains([
  {
    ...local,
    rpc: { url: anvil.rpcUrl },
    plugin: { ...(local.plugin as object), readCacheSeconds: 0, maxReplacementFeePerGas: CAP.toString() },
  } as ChainEntry,
])
t.teardown(() => registry.close())
const filling = registry.chain(31337).adapter.filling as FillingCapability
const credentials = { solverKey: SOLVER.privateKey }

/** A transfer signed by `privateKey` at its next nonce, paying `maxFeePerGas`. */
async function signed(privateKey: Hex, maxFeePerGas: bigint): Promise<Hex> {
  const account = privateKeyToAccount(privateKey)
  return account.signTransaction({
    chainId: 31337,
    type: 'eip1559',
    nonce: await client.getTransactionCount({ address: account.address, blockTag: 'pending' }),
    to: USERS[0]!.address,
    value: 1234n,
    gas: 21_000n,
    maxFeePerGas,
    maxPriorityFeePerGas: parseGwei('1'),
  })
}

t.test('a replacement keeps the nonce and the call, pays more, and is the one mined', async (t) => {
  await faults.pauseMining()
  t.teardown(() => faults.resumeMining())
  const stuck = await signed(SOLVER.privateKey, parseGwei('3'))
  await filling.broadcast(stuck)
  const replacement = await filling.replace?.(stuck, credentials)
  if (!replacement) throw new Error('no replacement under the cap')
  const [before, after] = [parseTransaction(stuck), parseTransaction(replacement.raw as Hex)]
  t.equal(after.nonce, before.nonce, 'same nonce')
  t.same([after.to, after.value, after.gas], [before.to, before.value, before.gas], 'same call')
  t.ok((after.maxFeePerGas ?? 0n) * 100n >= (before.maxFeePerGas ?? 0n) * 125n, 'max fee up by 25 % at least')
  t.ok(
    (after.maxPriorityFeePerGas ?? 0n) * 100n >= (before.maxPriorityFeePerGas ?? 0n) * 125n,
    'priority fee too',
  )
  await filling.broadcast(replacement.raw)
  await faults.mine()
  t.equal((await filling.outcome(replacement.transactionId)).state, 'success', 'the replacement is mined')
  t.equal((await filling.outcome(keccak256(stuck))).state, 'not_found', 'the replaced one never is')
})

t.test('no replacement above the cap', async (t) => {
  t.equal(await filling.replace?.(await signed(SOLVER.privateKey, parseGwei('45')), credentials), undefined)
})

t.test("no replacement of a transaction that is not the solver's", async (t) => {
  const other = DEV_ACCOUNTS.find(
    (account) => account.address !== SOLVER.address,
  ) as (typeof DEV_ACCOUNTS)[number]
  t.equal(await filling.replace?.(await signed(other.privateKey, parseGwei('3')), credentials), undefined)
})

t.test('a type-4 fill keeps the delegations it carries (authorizationList)', async (t) => {
  const delegating = privateKeyToAccount(`0x${'7c'.repeat(32)}`)
  const authorization = await delegating.signAuthorization({
    address: USERS[1]!.address,
    chainId: 31337,
    nonce: 0,
  })
  const solver = privateKeyToAccount(SOLVER.privateKey)
  const stuck = await solver.signTransaction({
    chainId: 31337,
    type: 'eip7702',
    nonce: await client.getTransactionCount({ address: solver.address, blockTag: 'pending' }),
    to: delegating.address,
    value: 0n,
    gas: 100_000n,
    maxFeePerGas: parseGwei('3'),
    maxPriorityFeePerGas: parseGwei('1'),
    authorizationList: [authorization],
  })
  const replacement = await filling.replace?.(stuck, credentials)
  if (!replacement) throw new Error('no replacement under the cap')
  const after = parseTransaction(replacement.raw as Hex)
  t.equal(after.type, 'eip7702', 'still a type-4 transaction')
  t.same(after.authorizationList, parseTransaction(stuck).authorizationList, 'with the same authorizations')
})
