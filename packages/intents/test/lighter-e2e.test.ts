/**
 * Lighter (the perpetuals-exchange family, chain 3586256) end to end on the devnet, through HTTP
 * only: the venue simulator behind its REST API and an anvil chain the other side. A deposit to the
 * venue (EVM USDC → an exchange account, paid by the solver's transfer tagged with the order id),
 * a withdrawal from the venue (the served `lighter-transfer` action signed with the user's API key
 * as a wallet would, with the simulator's signer, and sent to the venue), account-index rules, the
 * reindex answers (404, 400) and the refund of a venue deposit that matches no request. Every
 * answer is checked against openapi/intents.yaml.
 */
import type { IntentsApi } from '@pontis/core'
import {
  LIGHTER_DEVNET_CHAIN_ID,
  LIGHTER_EMPTY,
  LIGHTER_SOLVER,
  LIGHTER_UNKNOWN_ACCOUNT_INDEX,
  LIGHTER_USDC_ASSET_INDEX,
  LIGHTER_USDC_CURRENCY_ID,
  LIGHTER_USERS,
  type LighterDevAccount,
  type LighterDevnet,
  STABLECOIN_ADDRESS,
  SVM_USERS,
  USERS,
} from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import type { Address } from 'viem'
import { waitFor } from '../../../test/helpers/wait.js'
import { startE2e } from './fixtures/e2e.js'
import { type LighterTransferItem, sendLighterTransfer, type TransferParameters } from './fixtures/lighter.js'

type Quote = IntentsApi.QuoteResponse
type ErrorAnswer = { message: string; errorCode: string }
type ChainsAnswer = {
  chains: Array<{ id: number; vmType: string; currency: { address: string; decimals: number } }>
}

const LIGHTER = LIGHTER_DEVNET_CHAIN_ID
const EVM = 31337
const ALICE = LIGHTER_USERS.alice
const BOB = LIGHTER_USERS.bob

const e2e = await startE2e(t, { lighter: { port: 0 } })
const { devnet, service, loaded } = e2e
const venue = devnet.lighter
if (!venue) throw new Error('the devnet was started without the Lighter venue')
const evmBalance = e2e.evm.usdcBalance
const _statusOf = e2e.statusOf
const waitForSuccess = (client: TestClient, requestId: string) => e2e.waitForStatus(client, requestId)
const executeEvm = e2e.evm.execute

/** A USDC perps transfer's parameters, as a wallet would fill them in itself. */
const usdcTransfer = (toAccountIndex: number, amount: number, memo: string): TransferParameters => ({
  toAccountIndex,
  assetIndex: LIGHTER_USDC_ASSET_INDEX,
  fromRouteType: 0,
  toRouteType: 0,
  amount,
  usdcFee: Number(venue?.venue.transferFeeUsdc),
  memo,
})

const venueTransfer = (from: LighterDevAccount, parameters: TransferParameters) =>
  sendLighterTransfer(venue as LighterDevnet, from, parameters)

const toVenue = (recipient: string, extra: Record<string, unknown> = {}) => ({
  user: USERS[1]!.address,
  recipient,
  originChainId: EVM,
  destinationChainId: LIGHTER,
  originCurrency: STABLECOIN_ADDRESS,
  destinationCurrency: LIGHTER_USDC_CURRENCY_ID,
  amount: '25000000',
  tradeType: 'EXACT_INPUT',
  ...extra,
})

const fromVenue = (user: string, extra: Record<string, unknown> = {}) => ({
  user,
  recipient: USERS[2]!.address,
  originChainId: LIGHTER,
  destinationChainId: EVM,
  originCurrency: LIGHTER_USDC_CURRENCY_ID,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: '30000000',
  tradeType: 'EXACT_INPUT',
  ...extra,
})

t.test('/chains lists the venue as an lvm chain with its USDC', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.get('/chains')
  t.equal(res.status, 200)
  const chain = (res.body as ChainsAnswer).chains.find((entry) => entry.id === LIGHTER)
  t.ok(chain, 'chain 3586256 is listed')
  t.equal(chain?.vmType, 'lvm')
  t.equal(chain?.currency.address, LIGHTER_USDC_CURRENCY_ID)
  t.equal(chain?.currency.decimals, 6)
})

for (const account of [ALICE, LIGHTER_USERS.aliceSub]) {
  t.test(
    `EVM USDC to the venue account ${account.index}: the solver transfers to it, memo = order id`,
    async (t) => {
      const client = createTestClient(t, service.url, loaded.document)
      const res = await client.post('/quote/v2', toVenue(String(account.index)))
      t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
      const quote = res.body as Quote
      t.same(
        quote.steps.map((step) => step.id),
        ['approve', 'deposit'],
        'an ERC-20 approval, then the deposit',
      )
      const requestId = quote.steps[0]?.requestId as string
      const quotedOut = BigInt(quote.details.currencyOut.amount)
      t.ok(quotedOut > 0n, 'a positive output is quoted')
      const before = venue.balanceOf(account.index)
      const depositHash = await executeEvm(quote, USERS[1]!.privateKey)
      await client.post('/transactions/index', { chainId: String(EVM), txHash: depositHash })
      const done = await waitForSuccess(client, requestId)
      t.equal(venue.balanceOf(account.index) - before, quotedOut, 'the account got exactly the quoted output')
      t.equal(done.txHashes.length, 1, 'one fill')
      const fill = venue.transaction(done.txHashes[0] as string)
      t.ok(fill, 'the fill is a venue transaction')
      t.equal(fill?.transfer.FromAccountIndex, LIGHTER_SOLVER.index, 'paid by the solver account')
      t.equal(fill?.transfer.ToAccountIndex, account.index, 'to the recipient account')
      t.equal(BigInt(fill?.transfer.Amount ?? 0), quotedOut, 'the quoted output')
      t.equal(fill?.transfer.Memo, requestId.toLowerCase(), 'memo = the order id')
    },
  )
}

t.test('venue to EVM: the user signs the served transfer, the solver pays on EVM', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const recipient = USERS[2]!.address
  const res = await client.post('/quote/v2', fromVenue(String(ALICE.index), { recipient }))
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  t.equal(quote.steps.length, 1, 'one step')
  t.equal(quote.steps[0]?.kind, 'transaction')
  const item = quote.steps[0]?.items[0]?.data as unknown as LighterTransferItem
  t.same(item, {
    format: 'lighter-transfer',
    chainId: LIGHTER,
    action: {
      type: 'transfer',
      parameters: {
        toAccountIndex: LIGHTER_SOLVER.index,
        assetIndex: LIGHTER_USDC_ASSET_INDEX,
        fromRouteType: 0,
        toRouteType: 0,
        amount: Number(quote.details.currencyIn.amount),
        usdcFee: Number(venue.venue.transferFeeUsdc),
        memo: requestId.toLowerCase(),
      },
    },
  })
  const parameters = item.action.parameters
  t.equal(quote.details.userBalance, String(venue.balanceOf(ALICE.index)), 'userBalance is the venue balance')
  const before = await evmBalance(recipient)
  const venueBefore = venue.balanceOf(ALICE.index)
  const hash = await venueTransfer(ALICE, parameters)
  t.equal(
    venueBefore - venue.balanceOf(ALICE.index),
    BigInt(parameters.amount + parameters.usdcFee),
    'the venue executed it: the amount and its fee are debited',
  )
  // What clients send right after broadcasting: the chain id as a string.
  const indexed = await client.post('/transactions/index', {
    chainId: String(LIGHTER),
    txHash: hash,
  })
  t.equal(indexed.status, 200, JSON.stringify(indexed.body).slice(0, 300))
  t.equal((indexed.body as { requestId?: string }).requestId, requestId, 'attributed to the request')
  const done = await waitForSuccess(client, requestId)
  t.ok(done.inTxHashes.includes(hash), 'inTxHashes holds the venue hash')
  t.equal(await evmBalance(recipient as Address), before + BigInt(quote.details.currencyOut.amount))
})

t.test('account-index rules, field by field, with messages that say what to pass', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const lookUp = /account index.*accountsByL1Address/
  const cases: ReadonlyArray<[string, Record<string, unknown>, string, RegExp[]]> = [
    [
      'a wallet address as the venue recipient',
      toVenue(ALICE.l1Address),
      'INVALID_RECIPIENT',
      [/^recipient '0x/, /a wallet address is not an exchange account/, lookUp],
    ],
    ['recipient -1', toVenue('-1'), 'INVALID_RECIPIENT', [/^recipient '-1'/, /no sign/, lookUp]],
    [
      'recipient 01001',
      toVenue('01001'),
      'INVALID_RECIPIENT',
      [/^recipient '01001'/, /no leading zeros/, lookUp],
    ],
    ['recipient 1.5', toVenue('1.5'), 'INVALID_RECIPIENT', [/^recipient '1\.5'/, lookUp]],
    ['recipient abc', toVenue('abc'), 'INVALID_RECIPIENT', [/^recipient 'abc'/, lookUp]],
    ['a base58 recipient', toVenue(SVM_USERS[0]!.address), 'INVALID_RECIPIENT', [/^recipient '/, lookUp]],
    [
      'an index above 2^48 - 1 as the recipient',
      toVenue('281474976710656'),
      'INVALID_RECIPIENT',
      [/^recipient '/, /go up to 281474976710655/],
    ],
    [
      'an index with no account as the recipient',
      toVenue(String(LIGHTER_UNKNOWN_ACCOUNT_INDEX)),
      'INVALID_RECIPIENT',
      [/^recipient '999999'/, /no exchange account has this index/, /accountsByL1Address/],
    ],
    [
      'a wallet address as the venue user',
      fromVenue(ALICE.l1Address),
      'INVALID_ADDRESS',
      [/^user '0x/, /a wallet address is not an exchange account/, lookUp],
    ],
    [
      'an index with no account as the user',
      fromVenue(String(LIGHTER_UNKNOWN_ACCOUNT_INDEX)),
      'INVALID_ADDRESS',
      [/^user '999999'/, /no exchange account has this index/, /accountsByL1Address/],
    ],
    [
      'an account index as the EVM recipient',
      fromVenue(String(ALICE.index), { recipient: String(ALICE.index) }),
      'INVALID_RECIPIENT',
      [/^recipient '1001'/, /\(31337\)/, /0x followed by 40 hexadecimal/],
    ],
    [
      'an unconfigured venue currency as output',
      toVenue(String(ALICE.index), { destinationCurrency: '7' }),
      'INVALID_OUTPUT_CURRENCY',
      [/^output currency '7'/, /USDC is "0"/],
    ],
    [
      'an unconfigured venue currency as input',
      fromVenue(String(ALICE.index), { originCurrency: '7' }),
      'INVALID_INPUT_CURRENCY',
      [/^input currency '7'/, /USDC is "0"/],
    ],
  ]
  for (const [name, body, code, messages] of cases) {
    const res = await client.post('/quote/v2', body)
    const answer = res.body as ErrorAnswer
    t.equal(res.status, 400, `${name}: 400`)
    t.equal(answer.errorCode, code, `${name}: ${code}`)
    for (const message of messages) t.match(answer.message, message, `${name}: ${message}`)
  }
})

t.test('/transactions/index on the venue: unknown 404, malformed 400, no deposit 400', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const unknown = await client.post('/transactions/index', {
    chainId: String(LIGHTER),
    txHash: `0x${'ab'.repeat(32)}`,
  })
  t.equal(unknown.status, 404, JSON.stringify(unknown.body).slice(0, 300))
  t.equal((unknown.body as ErrorAnswer).errorCode, 'TRANSACTION_NOT_FOUND')
  const malformed = await client.post('/transactions/index', { chainId: String(LIGHTER), txHash: '0x12' })
  t.equal(malformed.status, 400)
  t.equal((malformed.body as ErrorAnswer).errorCode, 'INVALID_REQUEST')
  t.match((malformed.body as ErrorAnswer).message, /0x and 64 hex digits/, 'names the expected form')
  const betweenUsers = await venueTransfer(
    BOB,
    usdcTransfer(LIGHTER_EMPTY.index, 1_000_000, `0x${'11'.repeat(32)}`),
  )
  const notADeposit = await client.post('/transactions/index', {
    chainId: String(LIGHTER),
    txHash: betweenUsers,
  })
  t.equal(notADeposit.status, 400, 'a transfer between users is no deposit')
  t.equal((notADeposit.body as ErrorAnswer).errorCode, 'NOT_A_DEPOSIT')
})

t.test('a venue deposit tagged with no known request is refunded to the sender account', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const amount = 2_000_000
  const before = venue.balanceOf(BOB.index)
  const hash = await venueTransfer(BOB, usdcTransfer(LIGHTER_SOLVER.index, amount, `0x${'5e'.repeat(32)}`))
  const fee = venue.venue.transferFeeUsdc
  t.equal(venue.balanceOf(BOB.index), before - BigInt(amount) - fee)
  const indexed = await client.post('/transactions/index', { chainId: String(LIGHTER), txHash: hash })
  t.equal(indexed.status, 200, JSON.stringify(indexed.body).slice(0, 300))
  t.same(indexed.body, {
    message: 'Indexed; the deposit matches no request and will be refunded.',
    indexed: true,
  })
  await waitFor('the refund to reach bob', () => venue.balanceOf(BOB.index), {
    until: (balance) => balance !== before - BigInt(amount) - fee,
  })
  t.equal(
    venue.balanceOf(BOB.index),
    before - fee,
    'the whole deposit came back; only the sender paid its fee',
  )
})
