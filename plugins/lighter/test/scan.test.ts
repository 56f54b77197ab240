/**
 * The deposit scan on the venue simulator: it starts at the head, finds each deposit after the
 * cursor once, pages through a long history, skips what is not a deposit, and advances the cursor.
 */
import { type DepositScan, PontisError, type ScannedDeposit, silentLogger } from '@pontis/core'
import { lighterSignTransfer } from '@pontis/devnet'
import t from 'tap'
import lighterPlugin, { LIGHTER_NATIVE_CURRENCY_ID } from '../src/index.js'
import {
  LIGHTER_SOLVER,
  LIGHTER_USERS,
  type LighterDevAccount,
  lighterAdapter,
  lighterEntry,
  signAndSendAsWallet,
  startDevnet,
} from './fixtures/lighter-devnet.js'

const devnet = await startDevnet()
t.teardown(() => devnet.stop())
const adapter = await lighterAdapter(devnet.url)
const { alice, bob } = LIGHTER_USERS
const depository = String(LIGHTER_SOLVER.index)
let nextRequest = 1
const newRequestId = () => `0x${(0x5ca0000 + nextRequest++).toString(16).padStart(64, '0')}`

/** A transfer `from` signs and sends to `to` (by default a deposit into the depository). */
function transfer(from: LighterDevAccount, memo: string, to = LIGHTER_SOLVER.index, amount = 1_000_000) {
  return signAndSendAsWallet(devnet, from, {
    toAccountIndex: to,
    assetIndex: 3,
    fromRouteType: 0,
    toRouteType: 0,
    amount,
    usdcFee: 10_000,
    memo,
  })
}

/** The scan's own answer for the current head. */
async function headCursor(): Promise<string> {
  const scan = await adapter.reading.scanDeposits?.(undefined)
  if (!scan) throw new Error('the plugin has no deposit scan')
  return scan.cursor
}

function scan(cursor: string | undefined, reading = adapter.reading): Promise<DepositScan> {
  if (!reading.scanDeposits) throw new Error('the plugin has no deposit scan')
  return reading.scanDeposits(cursor)
}

t.test('a new scan starts at the head: an earlier deposit is not replayed', async (t) => {
  await transfer(alice, newRequestId())
  const start = await scan(undefined)
  t.same(start, { deposits: [], cursor: String(devnet.venue.height), caughtUp: true })
  const again = await scan(start.cursor)
  t.same(again, { deposits: [], cursor: start.cursor, caughtUp: true }, 'nothing after the head')
})

t.test('a deposit after the cursor is found once, with the facts readDeposits gives', async (t) => {
  const cursor = await headCursor()
  const requestId = newRequestId()
  const hash = await transfer(bob, requestId, LIGHTER_SOLVER.index, 3_250_000)
  const found = await scan(cursor)
  const expected: ScannedDeposit = {
    index: 0,
    depository,
    depositId: requestId,
    depositor: String(bob.index),
    currencyId: LIGHTER_NATIVE_CURRENCY_ID,
    amount: 3_250_000n,
    transactionId: hash,
    blockNumber: BigInt(devnet.venue.height),
    confirmations: 1,
  }
  t.same(found, { deposits: [expected], cursor: String(devnet.venue.height), caughtUp: true })
  const read = await adapter.reading.readDeposits(hash)
  const { transactionId: _id, blockNumber, confirmations, ...fact } = expected
  t.same(read.facts, [fact], 'the same fact as readDeposits')
  t.equal(read.blockNumber, blockNumber)
  t.equal(read.confirmations, confirmations)
  t.same(await scan(found.cursor), { deposits: [], cursor: found.cursor, caughtUp: true }, 'not found twice')
})

t.test('a long history is read in bounded pages until caught up', async (t) => {
  const paged = await lighterAdapter(devnet.url, { scanPageSize: 3 })
  let cursor = (await scan(undefined, paged.reading)).cursor
  const requestIds: string[] = []
  for (let n = 0; n < 10; n++) {
    const requestId = newRequestId()
    requestIds.push(requestId)
    await transfer(n % 2 === 0 ? alice : bob, requestId, LIGHTER_SOLVER.index, 1_000_000 + n)
  }
  const found: ScannedDeposit[] = []
  const steps: DepositScan[] = []
  for (let step = 0; step < 20; step++) {
    const result = await scan(cursor, paged.reading)
    steps.push(result)
    t.ok(result.deposits.length <= 3, 'a step reads one page at most')
    t.ok(Number(result.cursor) >= Number(cursor), 'the cursor never goes back')
    found.push(...result.deposits)
    cursor = result.cursor
    if (result.caughtUp) break
  }
  t.ok(steps.length > 3, `several steps (${steps.length})`)
  t.same(
    steps.map((step) => step.caughtUp),
    [...steps.slice(0, -1).map(() => false), true],
    'caughtUp is false while more remains',
  )
  t.same(
    found.map((deposit) => deposit.depositId),
    requestIds,
    'every deposit once, in order',
  )
  t.same(
    found.map((deposit) => deposit.amount),
    requestIds.map((_, n) => 1_000_000n + BigInt(n)),
  )
  t.equal(cursor, String(devnet.venue.height), 'caught up at the head')
})

t.test('what is not a deposit is skipped, and the cursor still advances past it', async (t) => {
  const cursor = await headCursor()
  // A payout out of the depository, signed with the solver's key.
  await transfer(LIGHTER_SOLVER, newRequestId(), alice.index)
  // A transfer into the depository without a request id (zero memo).
  await transfer(alice, `0x${'0'.repeat(64)}`)
  // A transfer between two other accounts: not in the depository's history at all.
  await transfer(alice, newRequestId(), bob.index)
  // A transfer into the depository that failed at execution.
  const failed = devnet.venue.recordFailedTransfer(
    lighterSignTransfer(
      {
        FromAccountIndex: bob.index,
        ApiKeyIndex: bob.apiKeyIndex,
        ToAccountIndex: LIGHTER_SOLVER.index,
        AssetIndex: 3,
        FromRouteType: 0,
        ToRouteType: 0,
        Amount: 2_000_000,
        USDCFee: 10_000,
        Memo: newRequestId(),
        ExpiredAt: Date.now() + 600_000,
        Nonce: devnet.venue.nextNonce(bob.index, bob.apiKeyIndex),
      },
      bob.apiKeySeed,
    ).txInfo,
  )
  t.equal((await adapter.reading.readDeposits(failed)).state, 'reverted', 'the venue shows it failed')
  const skipped = await scan(cursor)
  t.same(skipped, { deposits: [], cursor: String(devnet.venue.height), caughtUp: true })
  t.ok(Number(skipped.cursor) > Number(cursor), 'the cursor advanced past them')
  const requestId = newRequestId()
  const hash = await transfer(alice, requestId)
  const next = await scan(skipped.cursor)
  t.same(
    next.deposits.map((deposit) => [deposit.transactionId, deposit.depositId]),
    [[hash, requestId]],
    'the next deposit is found',
  )
})

t.test('a malformed cursor is refused; a chain without a depository only answers the head', async (t) => {
  for (const cursor of ['', '-1', '1.5', 'abc', '01', '{"height":1}']) {
    await t.rejects(
      scan(cursor),
      { name: PontisError.name, code: 'INVALID_REQUEST', message: /not a deposit scan cursor/ },
      `cursor ${JSON.stringify(cursor)}`,
    )
  }
  const { protocol: _protocol, ...withoutProtocol } = lighterEntry(devnet.url)
  const withoutDepository = await lighterPlugin.createAdapter(withoutProtocol, {
    logger: silentLogger,
    environment: 'local',
  })
  const reading = withoutDepository.reading
  if (!reading) throw new Error('no reading capability')
  await transfer(bob, newRequestId())
  t.same(await scan('1', reading), { deposits: [], cursor: String(devnet.venue.height), caughtUp: true })
})
