/**
 * The Tron deposit scan on the devnet: starts at the head without replaying history, finds the
 * vault's TRX and TRC20 deposits after the cursor once with the facts readDeposits gives, skips
 * non-deposits, reverted and unmined transactions, advances the cursor, and pages across blocks.
 */
import type { DepositScan, ScannedDeposit } from '@pontis/core/plugin'
import t from 'tap'
import { TRON_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  idOf,
  nodeCall,
  signAndBroadcast,
  startDevnet,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  type TronTestAdapter,
  transactionOf,
  tronAdapter,
} from './fixtures/tron-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await tronAdapter(devnet.url)
const { alice, bob } = TRON_USERS
const head = () => devnet.chain.head.number

type Transaction = Parameters<typeof signAndBroadcast>[2]

async function deposit(from: typeof alice, currencyId: string, amount: bigint, n: number): Promise<string> {
  const steps = await adapter.quoting.buildDepositSteps({
    requestId: idOf(n),
    depositor: from.address,
    currencyId,
    amount,
    usePermit: false,
    permitExpiry: 0,
    executeEndpoint: '/execute',
    nowSeconds: 0,
  })
  const transaction = transactionOf(steps)
  const reply = await signAndBroadcast(devnet, from.privateKey, transaction)
  if (reply.result !== true) throw new Error(JSON.stringify(reply))
  return transaction.txID
}

async function trxTransfer(to: string, memo: string | undefined): Promise<string> {
  const transaction = (await nodeCall(devnet, '/wallet/createtransaction', {
    owner_address: alice.address,
    to_address: to,
    amount: 1000,
    ...(memo === undefined ? {} : { extra_data: memo }),
    visible: true,
  })) as unknown as Transaction
  const reply = await signAndBroadcast(devnet, alice.privateKey, transaction)
  if (reply.result !== true) throw new Error(JSON.stringify(reply))
  return transaction.txID
}

/** Scans until caught up, as the indexer does; answers every deposit and the last cursor. */
async function scanAll(
  scanner: TronTestAdapter,
  cursor: string,
): Promise<{ deposits: ScannedDeposit[]; cursor: string; steps: DepositScan[] }> {
  const steps: DepositScan[] = []
  let at = cursor
  for (let step = 0; step < 100; step++) {
    const scan = await (scanner.reading.scanDeposits?.(at) as Promise<DepositScan>)
    steps.push(scan)
    at = scan.cursor
    if (scan.caughtUp) break
  }
  return { deposits: steps.flatMap((scan) => scan.deposits), cursor: at, steps }
}

t.test('without a cursor the scan starts at the head: no history replay', async (t) => {
  await deposit(alice, TRON_NATIVE_CURRENCY_ID, 1_000_000n, 1)
  devnet.mine(2)
  const scan = await adapter.reading.scanDeposits?.(undefined)
  t.same(scan, { deposits: [], cursor: String(head()), caughtUp: true })
  t.same(
    await adapter.reading.scanDeposits?.(String(head())),
    { deposits: [], cursor: String(head()), caughtUp: true },
    'nothing new',
  )
})

t.test('deposits after the cursor are found once with the facts readDeposits gives', async (t) => {
  const cursor = String(head())
  const trx = await deposit(alice, TRON_NATIVE_CURRENCY_ID, 2_500_000n, 2)
  const usdt = await deposit(bob, TRON_USDT_ADDRESS, 3_000_000n, 3)
  // Not deposits: untagged to the vault, tagged to someone else, a reverted TRC20 deposit.
  const untagged = await trxTransfer(TRON_VAULT.address, undefined)
  const elsewhere = await trxTransfer(bob.address, idOf(4).slice(2))
  const reverted = await deposit(bob, TRON_USDT_ADDRESS, devnet.usdtBalance(bob.address) + 1n, 5)
  const [block] = devnet.mine(1)
  t.equal((await adapter.reading.readDeposits(reverted)).state, 'reverted')
  t.same((await adapter.reading.readDeposits(untagged)).facts, [])
  t.same((await adapter.reading.readDeposits(elsewhere)).facts, [])
  // Broadcast but not mined: not in any block yet, so not scanned.
  const unmined = await deposit(alice, TRON_NATIVE_CURRENCY_ID, 4_000_000n, 6)
  t.equal((await adapter.reading.readDeposits(unmined)).state, 'pending')

  const scan = await adapter.reading.scanDeposits?.(cursor)
  t.equal(scan?.caughtUp, true)
  t.equal(scan?.cursor, String(head()), 'the cursor advances to the last block scanned')
  const expected = async (transactionId: string): Promise<ScannedDeposit> => {
    const read = await adapter.reading.readDeposits(transactionId)
    return {
      ...(read.facts[0] as ScannedDeposit),
      transactionId,
      blockNumber: BigInt(block?.number ?? -1),
      confirmations: 1,
    }
  }
  t.same(scan?.deposits, [await expected(trx), await expected(usdt)], 'the TRX and the TRC20 deposit, only')
  t.same(
    scan?.deposits.map((found) => [found.depositId, found.currencyId, found.amount, found.depositor]),
    [
      [idOf(2), TRON_NATIVE_CURRENCY_ID, 2_500_000n, alice.address],
      [idOf(3), TRON_USDT_ADDRESS, 3_000_000n, bob.address],
    ],
  )
  t.same(
    await adapter.reading.scanDeposits?.(scan?.cursor),
    { deposits: [], cursor: scan?.cursor, caughtUp: true },
    'scanning on from the cursor does not find them again',
  )

  devnet.mine(4)
  const later = await adapter.reading.scanDeposits?.(scan?.cursor)
  t.same(
    later?.deposits.map((found) => [found.transactionId, found.depositId, found.confirmations]),
    [[unmined, idOf(6), 4]],
    'the deposit once mined, confirmations counted from the head',
  )
  t.equal(later?.cursor, String(head()))
})

t.test('paging: bounded steps across many blocks, each deposit once', async (t) => {
  const paged = await tronAdapter(devnet.url, { scanBlocksPerPage: 3 })
  const cursor = String(head())
  const expected: string[] = []
  for (let n = 0; n < 10; n++) {
    if (n % 4 === 1) expected.push(await deposit(alice, TRON_NATIVE_CURRENCY_ID, BigInt(100 + n), 20 + n))
    if (n === 6) expected.push(await deposit(bob, TRON_USDT_ADDRESS, 777n, 40))
    devnet.mine(1)
  }
  const all = await scanAll(paged, cursor)
  t.equal(all.steps.length, 4, '10 blocks in pages of 3')
  t.same(
    all.steps.map((scan) => [scan.cursor, scan.caughtUp]),
    [
      [String(Number(cursor) + 3), false],
      [String(Number(cursor) + 6), false],
      [String(Number(cursor) + 9), false],
      [String(Number(cursor) + 10), true],
    ],
    'the cursor moves a page at a time; caughtUp only at the head',
  )
  t.same(
    all.deposits.map((found) => found.transactionId),
    expected,
    'every deposit once, in block order',
  )
  t.same(
    all.deposits.map((found) => found.confirmations),
    all.deposits.map((found) => head() - Number(found.blockNumber) + 1),
  )
  t.same((await scanAll(paged, all.cursor)).deposits, [], 'nothing twice')
})

t.test('a long stretch of empty blocks only advances the cursor', async (t) => {
  const cursor = head()
  devnet.mine(250)
  const all = await scanAll(adapter, String(cursor))
  t.equal(all.steps.length, 25, 'pages of the default 10 blocks')
  t.equal(all.cursor, String(head()))
  t.same(all.deposits, [])
})

t.test('a cursor that is no block number is refused', async (t) => {
  await t.rejects(adapter.reading.scanDeposits?.('abc') as Promise<DepositScan>, { code: 'INVALID_REQUEST' })
  await t.rejects(adapter.reading.scanDeposits?.('-1') as Promise<DepositScan>, { code: 'INVALID_REQUEST' })
  const ahead = String(head() + 5)
  t.same(
    await adapter.reading.scanDeposits?.(ahead),
    { deposits: [], cursor: ahead, caughtUp: true },
    'a cursor past the head waits for the chain',
  )
})
