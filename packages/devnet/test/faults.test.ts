/**
 * The EVM devnet's fault powers on a real anvil: each one changes what the node answers the way the
 * fault would on a live chain.
 */
import t from 'tap'
import { createPublicClient, type Hash, http, numberToHex } from 'viem'
import { waitFor } from '../../../test/helpers/wait.js'
import { DEV_ACCOUNTS } from '../src/accounts.js'
import { startAnvil } from '../src/anvil.js'
import { evmFaultPowers } from '../src/faults.js'
import { minedReceipt } from '../src/receipts.js'

t.test('EVM fault powers', async (t) => {
  const anvil = await startAnvil({ chainId: 4245 })
  t.teardown(() => anvil.stop())
  const client = createPublicClient({ transport: http(anvil.rpcUrl) })
  const faults = evmFaultPowers(anvil.rpcUrl)
  const from = DEV_ACCOUNTS[0]!.address
  const to = DEV_ACCOUNTS[1]!.address
  const send = (fees: { maxFeePerGas?: bigint } = {}) =>
    client.request({
      method: 'eth_sendTransaction',
      params: [
        {
          from,
          to,
          value: '0x1',
          ...(fees.maxFeePerGas === undefined
            ? {}
            : { maxFeePerGas: numberToHex(fees.maxFeePerGas), maxPriorityFeePerGas: '0x1' }),
        },
      ],
    } as never) as Promise<Hash>
  const receiptOf = (hash: Hash) =>
    client.request({ method: 'eth_getTransactionReceipt', params: [hash] }) as Promise<unknown>
  const transactionOf = (hash: Hash) =>
    client.request({ method: 'eth_getTransactionByHash', params: [hash] }) as Promise<unknown>

  t.equal(faults.vmType, 'evm')

  await t.test('rollback removes the newest blocks and their transactions', async (t) => {
    const hash = await send()
    await minedReceipt(client, hash)
    const head = await faults.head()
    await faults.rollback(1)
    t.equal(await faults.head(), head - 1n, 'the head went back one block')
    t.equal(await receiptOf(hash), null, 'no receipt')
    t.equal(await transactionOf(hash), null, 'and not back in the mempool')
  })

  await t.test(
    'reorg replaces the newest blocks at the same height, without their transactions',
    async (t) => {
      const hash = await send()
      await minedReceipt(client, hash)
      const head = await faults.head()
      await faults.reorg(1)
      t.equal(await faults.head(), head, 'same height')
      t.equal(await receiptOf(hash), null, 'the transaction is gone from the chain')
    },
  )

  await t.test('paused mining keeps transactions pending; dropping one removes it', async (t) => {
    await faults.pauseMining()
    const head = await faults.head()
    const kept = await send()
    const dropped = await send()
    t.equal(await receiptOf(kept), null, 'not mined while paused')
    t.not(await transactionOf(dropped), null, 'in the mempool')
    await faults.dropTransaction(dropped)
    t.equal(await transactionOf(dropped), null, 'dropped from the mempool')
    await faults.mine(2)
    t.equal(await faults.head(), head + 2n, 'mine produces the blocks asked for')
    t.not(await receiptOf(kept), null, 'the kept one is mined')
    t.equal(await receiptOf(dropped), null, 'the dropped one never is')
    await faults.resumeMining()
    t.not(await receiptOf(await send()), null, 'automine again')
  })

  await t.test('a base-fee spike keeps an underpriced transaction out of blocks and evicts it', async (t) => {
    await faults.pauseMining()
    const spike = 500n * 10n ** 9n
    // Sent first: anvil refuses a transaction already below the next block's base fee.
    const cheap = await send({ maxFeePerGas: 2n * 10n ** 9n })
    await faults.spikeBaseFee(spike)
    await faults.mine()
    const block = (await client.request({ method: 'eth_getBlockByNumber', params: ['latest', false] })) as {
      baseFeePerGas: `0x${string}`
    }
    t.equal(BigInt(block.baseFeePerGas), spike, 'the next block had the spiked base fee')
    t.equal(await receiptOf(cheap), null, 'the underpriced transaction was not mined')
    t.equal(await transactionOf(cheap), null, 'anvil evicted it from the mempool')
    await t.rejects(send({ maxFeePerGas: 2n * 10n ** 9n }), /less than block base fee/, 'and refuses it now')
    await faults.resumeMining()
  })

  await t.test('interval mining produces blocks without transactions', async (t) => {
    const head = await faults.head()
    await faults.intervalMining(1)
    t.teardown(() => faults.intervalMining(0))
    const later = await waitFor('a block mined on its own', () => faults.head(), {
      until: (current) => current > head,
    })
    t.ok(later > head, 'a block came without any transaction')
  })

  t.test('bad depths are refused before anything reaches the node', async (t) => {
    await t.rejects(faults.rollback(0), RangeError)
    await t.rejects(faults.reorg(-1), RangeError)
    await t.rejects(faults.spikeBaseFee(-1n), RangeError)
  })
})
