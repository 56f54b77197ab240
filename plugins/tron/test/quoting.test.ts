/**
 * Tron quoting on the devnet: deposit transactions built through the node API, decoded and checked
 * (parties, amount, tag, txID, extended expiration), a node that builds something else refused,
 * and cost estimates equal to what the devnet then charges.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import { PontisError } from '@pontis/core/plugin'
import {
  TRON_ENERGY_FEE_SUN,
  TRON_TRC20_TRANSFER_ENERGY,
  tronDecodeRaw,
  tronTransactionId,
} from '@pontis/devnet'
import t from 'tap'
import { TRON_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  idOf,
  signAndBroadcast,
  startDevnet,
  TRON_EMPTY,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  transactionOf,
  tronAdapter,
} from './fixtures/tron-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await tronAdapter(devnet.url, { expirationSeconds: 7200 })
const alice = TRON_USERS.alice

const depositRequest = (currencyId: string, amount: bigint, n: number, depositor = alice.address) => ({
  requestId: idOf(n),
  depositor,
  currencyId,
  amount,
  usePermit: false,
  permitExpiry: 600,
  executeEndpoint: '/execute',
  nowSeconds: 0,
})

t.test('TRX deposit: the transfer to the vault with the request id as memo', async (t) => {
  const steps = await adapter.quoting.buildDepositSteps(
    depositRequest(TRON_NATIVE_CURRENCY_ID, 4_000_000n, 1),
  )
  t.equal(steps.length, 1)
  t.equal(steps[0]?.id, 'deposit')
  t.equal(steps[0]?.action, 'Confirm transaction in your wallet')
  t.equal(steps[0]?.items[0]?.data.chainId, 728126428)
  const transaction = transactionOf(steps)
  t.equal(transaction.visible, true)
  t.equal(
    transaction.txID,
    tronTransactionId(hexToBytes(transaction.raw_data_hex)),
    'txID recomputed after re-encoding',
  )
  const raw = tronDecodeRaw(hexToBytes(transaction.raw_data_hex))
  t.equal(raw.contract.type, 'TransferContract')
  if (raw.contract.type === 'TransferContract') {
    t.equal(bytesToHex(raw.contract.to), TRON_VAULT.hexAddress)
    t.equal(bytesToHex(raw.contract.owner), alice.hexAddress)
    t.equal(raw.contract.amount, 4_000_000n)
  }
  t.equal(`0x${bytesToHex(raw.data)}`, idOf(1))
  t.equal(raw.expiration, raw.timestamp + 7_200_000, 'expiration extended to the configured window')
  t.equal(transaction.raw_data.expiration, raw.expiration, 'raw_data agrees with raw_data_hex')

  const estimate = await adapter.quoting.estimateOriginCost({
    ...depositRequest(TRON_NATIVE_CURRENCY_ID, 4_000_000n, 1),
    viaDepositAddress: false,
  })
  const before = devnet.trxBalance(alice.address)
  t.same(await signAndBroadcast(devnet, alice.privateKey, transaction), {
    result: true,
    txid: transaction.txID,
  })
  t.equal(estimate.currencyId, TRON_NATIVE_CURRENCY_ID)
  t.equal(
    before - devnet.trxBalance(alice.address) - 4_000_000n,
    estimate.amount,
    'the estimate is the bandwidth burnt',
  )
})

t.test(
  'TRC20 deposit: transfer(vault, amount) with the request id after the arguments; energy priced',
  async (t) => {
    const request = depositRequest(TRON_USDT_ADDRESS, 1_500_000n, 2)
    const transaction = transactionOf(await adapter.quoting.buildDepositSteps(request))
    const raw = tronDecodeRaw(hexToBytes(transaction.raw_data_hex))
    t.equal(raw.contract.type, 'TriggerSmartContract')
    if (raw.contract.type === 'TriggerSmartContract') {
      const data = bytesToHex(raw.contract.data)
      t.equal(data.slice(0, 8), 'a9059cbb')
      t.equal(data.slice(32, 72), TRON_VAULT.hexAddress.slice(2))
      t.equal(BigInt(`0x${data.slice(72, 136)}`), 1_500_000n)
      t.equal(`0x${data.slice(136)}`, idOf(2))
    }
    t.equal(raw.feeLimit, 100_000_000n, 'default fee limit')
    const estimate = await adapter.quoting.estimateOriginCost({ ...request, viaDepositAddress: false })
    const before = devnet.trxBalance(alice.address)
    const usdtBefore = devnet.usdtBalance(TRON_VAULT.address)
    t.equal((await signAndBroadcast(devnet, alice.privateKey, transaction)).result, true)
    t.equal(before - devnet.trxBalance(alice.address), estimate.amount, 'bandwidth + energy as estimated')
    t.ok(estimate.amount > TRON_TRC20_TRANSFER_ENERGY * TRON_ENERGY_FEE_SUN, 'energy is part of it')
    t.equal(devnet.usdtBalance(TRON_VAULT.address), usdtBefore + 1_500_000n)
  },
)

t.test('refusals: permit, unfunded depositor, fill extras', async (t) => {
  await t.rejects(
    adapter.quoting.buildDepositSteps({ ...depositRequest(TRON_NATIVE_CURRENCY_ID, 1n, 3), usePermit: true }),
    {
      code: 'UNSUPPORTED_EXECUTION_TYPE',
    },
  )
  await t.rejects(
    adapter.quoting.buildDepositSteps(depositRequest(TRON_NATIVE_CURRENCY_ID, 1_000n, 3, TRON_EMPTY.address)),
    {
      code: 'INSUFFICIENT_FUNDS',
    },
  )
  await t.rejects(
    adapter.quoting.buildDepositSteps({
      ...depositRequest(TRON_NATIVE_CURRENCY_ID, 1n, 3),
      requestId: '0x12',
    }),
    {
      code: 'INVALID_REQUEST',
    },
  )
  const fill = {
    orderId: idOf(4),
    payer: TRON_VAULT.address,
    recipient: alice.address,
    currencyId: TRON_NATIVE_CURRENCY_ID,
    amount: 1n,
    calls: [],
    topupNativeAmount: 0n,
  }
  t.ok((await adapter.quoting.estimateFillCost(fill)).amount > 0n)
  await t.rejects(adapter.quoting.estimateFillCost({ ...fill, topupNativeAmount: 5n }), {
    code: 'UNSUPPORTED_ROUTE',
  })
  await t.rejects(
    adapter.quoting.estimateFillCost({ ...fill, calls: [{ to: alice.address, value: 0n, data: '0x' }] }),
    {
      code: 'EXTRA_TXS_NOT_SUPPORTED',
    },
  )
  t.equal(await adapter.quoting.supportsPermit(TRON_USDT_ADDRESS), false)
})

t.test('a node that builds another transaction than asked is refused', async (t) => {
  // Forwards everything to the devnet, but asks it for one sun more than the plugin asked.
  const liar = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    request.on('end', async () => {
      const parsed = JSON.parse(body || '{}') as Record<string, unknown>
      if (request.url === '/wallet/createtransaction') parsed.amount = Number(parsed.amount) + 1
      const answer = await fetch(`${devnet.url}${request.url}`, {
        method: 'POST',
        body: JSON.stringify(parsed),
      })
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(await answer.text())
    })
  })
  await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => liar.close(() => resolve())))
  const lied = await tronAdapter(`http://127.0.0.1:${(liar.address() as AddressInfo).port}`)
  const error = await lied.quoting
    .buildDepositSteps(depositRequest(TRON_NATIVE_CURRENCY_ID, 1_000n, 5))
    .catch((e: unknown) => e)
  t.ok(error instanceof PontisError)
  t.match((error as PontisError).message, /not the one asked: amount is 1001, asked 1000/)
})
