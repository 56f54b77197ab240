/**
 * minedReceipt on a real anvil: a transaction the devnet leaves pending (automine builds one block
 * per arriving transaction, and ready ones that did not fit it may wait for a block a quiet devnet
 * never mines) still gets its receipt, because set-up mines a block itself. Whether anvil leaves a
 * leftover pending depends on timing, so the test makes one pending for certain: mining off.
 */
import t from 'tap'
import { createPublicClient, type Hash, http, numberToHex } from 'viem'
import { DEV_ACCOUNTS } from '../src/accounts.js'
import { startAnvil } from '../src/anvil.js'
import { minedReceipt } from '../src/receipts.js'

t.test('a transaction the devnet leaves pending is mined by set-up and its receipt answered', async (t) => {
  const anvil = await startAnvil({ chainId: 4243 })
  t.teardown(() => anvil.stop())
  const client = createPublicClient({ transport: http(anvil.rpcUrl) })
  await client.request({ method: 'evm_setAutomine', params: [false] } as never)
  const from = DEV_ACCOUNTS[0]!.address
  const blockNumber = await client.getBlockNumber()
  const pending = (await client.request({
    method: 'eth_sendTransaction',
    params: [{ from, to: from, value: '0x1', gas: numberToHex(30_000) }],
  } as never)) as Hash
  t.equal(
    await client.request({ method: 'eth_getTransactionReceipt', params: [pending] }),
    null,
    'the devnet left it pending',
  )
  const receipt = await minedReceipt(client, pending)
  t.equal(receipt.status, 'success', 'its receipt came once set-up mined a block itself')
  t.ok(receipt.blockNumber > blockNumber, 'in a block mined after it was sent')
})
