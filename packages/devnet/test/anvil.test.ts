import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import t from 'tap'
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts'
import { DEV_ACCOUNTS, DEV_MNEMONIC, DEVNET_ACCOUNTS } from '../src/accounts.js'
import { findFreePort, resolveAnvilBinary, startAnvil } from '../src/anvil.js'

t.test('resolveAnvilBinary names ANVIL_BINARY when it points nowhere', async (t) => {
  t.throws(() => resolveAnvilBinary({ ANVIL_BINARY: '/nonexistent/anvil' }), {
    message: 'anvil binary not found: ANVIL_BINARY=/nonexistent/anvil is not an executable file',
  })
  t.throws(() => resolveAnvilBinary({ ANVIL_BINARY: '/tmp' }), /ANVIL_BINARY=\/tmp is not an executable file/)
  await t.rejects(startAnvil({ chainId: 1, binary: '/nonexistent/anvil' }), /could not be started/)
})

t.test('resolveAnvilBinary finds the npm package binary by default', async (t) => {
  const binary = resolveAnvilBinary({})
  t.match(binary, /@foundry-rs\/anvil-linux-amd64\/bin\/anvil$/)
  t.ok(existsSync(binary))
  t.equal(resolveAnvilBinary({ ANVIL_BINARY: binary }), binary, 'an executable override is used as is')
})

t.test('startAnvil serves the chain id on a free loopback port and stop() ends the process', async (t) => {
  const anvil = await startAnvil({ chainId: 4242 })
  t.teardown(() => anvil.stop())
  t.not(anvil.port, 8545)
  t.equal(anvil.rpcUrl, `http://127.0.0.1:${anvil.port}`)
  const response = await fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  })
  t.same(await response.json(), { jsonrpc: '2.0', id: 1, result: '0x1092' })
  await anvil.stop()
  t.throws(() => process.kill(anvil.pid, 0), { code: 'ESRCH' }, 'the process is gone')
  await anvil.stop() // idempotent
})

t.test('a fixed port that is taken is refused with a clear error', async (t) => {
  const port = await findFreePort()
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  await t.rejects(startAnvil({ chainId: 31337, port }), {
    message: `port ${port} on 127.0.0.1 is already in use (is another devnet or node running?)`,
  })
})

t.test('the exported accounts are anvil defaults derived from the dev mnemonic', async (t) => {
  for (const account of DEV_ACCOUNTS) {
    t.equal(mnemonicToAccount(DEV_MNEMONIC, { addressIndex: account.index }).address, account.address)
    t.equal(privateKeyToAccount(account.privateKey).address, account.address)
  }
  t.equal(DEVNET_ACCOUNTS.deployer.address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
  t.equal(DEVNET_ACCOUNTS.solver.address, '0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
  t.equal(DEVNET_ACCOUNTS.allocator.address, '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC')
  t.same(
    DEVNET_ACCOUNTS.users.map((user) => user.index),
    [3, 4, 5, 6],
  )
  t.equal(DEVNET_ACCOUNTS.oracleSigner.index, 9)
})
