/**
 * minedReceipt on a real anvil: a ready transaction that did not fit in the block its arrival
 * triggered (automine) is left pending until another block is mined; set-up must still get its
 * receipt instead of waiting forever.
 */
import t from 'tap'
import { createPublicClient, type Hash, http, numberToHex } from 'viem'
import { DEV_ACCOUNTS } from '../src/accounts.js'
import { startAnvil } from '../src/anvil.js'
import { minedReceipt } from '../src/receipts.js'

t.test('a transaction left over from an automined block is mined and its receipt answered', async (t) => {
  // Room for one 30 000-gas transaction per block.
  const anvil = await startAnvil({ chainId: 4243, args: ['--gas-limit', '50000'] })
  t.teardown(() => anvil.stop())
  const client = createPublicClient({ transport: http(anvil.rpcUrl) })
  const from = DEV_ACCOUNTS[0]!.address
  const send = (nonce: number) =>
    client.request({
      method: 'eth_sendTransaction',
      params: [
        {
          from,
          to: from,
          nonce: numberToHex(nonce),
          value: '0x1',
          gas: numberToHex(30_000),
          maxFeePerGas: numberToHex(100_000_000_000n),
          maxPriorityFeePerGas: '0x1',
        },
      ],
    } as never) as Promise<Hash>
  // Nonce 1 waits for nonce 0; nonce 0's block has room for one of them.
  const later = await send(1)
  const first = await send(0)
  t.equal((await minedReceipt(client, first)).status, 'success')
  const blockNumber = await client.getBlockNumber()
  t.equal(
    await client.request({ method: 'eth_getTransactionReceipt', params: [later] }),
    null,
    'automine left the second transaction pending',
  )
  const receipt = await minedReceipt(client, later)
  t.equal(receipt.status, 'success', 'its receipt came once the devnet mined a block itself')
  t.ok(receipt.blockNumber > blockNumber, 'in a later block')
})
