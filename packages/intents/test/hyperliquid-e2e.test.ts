/**
 * Hyperliquid core (the `hypevm` family, chain 1337) end to end on the devnet, through HTTP only: the
 * core API simulator (`/info`, `/exchange`, `/explorer`) and an anvil chain the other side.
 *
 * Hyperliquid sends carry no memo, so a deposit is known by its sender and nonce: the quote serves a
 * `hyperliquid-action` whose `time` (= `nonce`) the plugin handed out, and the request stores the tag
 * keccak256(encodePacked(sender, nonce)) that reads report as the deposit's id. Covered: a deposit to
 * the venue (EVM USDC → perps USDC, paid by the solver's `usdSend`), withdrawals from the venue (the
 * served action signed as a wallet would, with the simulator's own signer, and posted to `/exchange`)
 * in perps and spot USDC, found by `/transactions/index` or by the depository's ledger scan alone,
 * distinct nonces for quotes in the same millisecond, a send with a nonce no quote served (orphaned),
 * and address/currency rules. Every answer is checked against openapi/intents.yaml.
 */
import type { IntentsApi } from '@pontis/core'
import {
  HYPERLIQUID_DEVNET_CHAIN_ID,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_SPOT_USDC_ID,
  HYPERLIQUID_USERS,
  type HyperliquidDevAccount,
  type HyperliquidSendAction,
  hyperliquidSignAction,
  hyperliquidTransactionHash,
  STABLECOIN_ADDRESS,
  SVM_USERS,
  TRON_USERS,
  USERS,
} from '@pontis/devnet'
import { createTestClient, type TestClient } from '@pontis/http/testing'
import t from 'tap'
import { type Address, encodePacked, formatUnits, type Hex, keccak256 } from 'viem'
import { waitFor } from '../../../test/helpers/wait.js'
import { startE2e } from './fixtures/e2e.js'

type Quote = IntentsApi.QuoteResponse
type ErrorAnswer = { message: string; errorCode: string }
type CurrencyEntry = { id: string; address: string; decimals: number }
type ChainsAnswer = {
  chains: Array<{
    id: number
    vmType: string
    currency: CurrencyEntry
    erc20Currencies?: CurrencyEntry[]
    solverCurrencies?: CurrencyEntry[]
  }>
}
/** The served deposit step item (`HyperliquidActionData` of the document). */
type HyperliquidActionItem = {
  format: string
  chainId: number
  action: HyperliquidSendAction & { token?: string }
  nonce: number
}
/** The explorer's `txDetails` answer. */
type ExplorerTx = {
  type: string
  tx: { user: string; action: HyperliquidSendAction; hash: string; error: string | null }
}

const HYPERLIQUID = HYPERLIQUID_DEVNET_CHAIN_ID
const EVM = 31337
const ALICE = HYPERLIQUID_USERS.alice
const BOB = HYPERLIQUID_USERS.bob
const DEPOSITORY = HYPERLIQUID_SOLVER.address

// The service's clock is the wall clock, except while a test freezes it to quote twice in one millisecond.
let frozenNow: number | undefined
const e2e = await startE2e(t, { hyperliquid: { port: 0 } }, { now: () => frozenNow ?? Date.now() })
const { devnet, service, loaded } = e2e
const venue = devnet.hyperliquid
if (!venue) throw new Error('the devnet was started without the Hyperliquid simulator')
const evmBalance = e2e.evm.usdcBalance
const statusOf = e2e.statusOf
const waitForSuccess = (client: TestClient, requestId: string) => e2e.waitForStatus(client, requestId)
const executeEvm = e2e.evm.execute

/** The served `hyperliquid-action` item of a quote. */
function servedAction(quote: Quote): HyperliquidActionItem {
  const data = quote.steps[0]?.items[0]?.data as unknown as HyperliquidActionItem
  if (data?.format !== 'hyperliquid-action') throw new Error(`not a hyperliquid-action: ${data?.format}`)
  return data
}

/**
 * What a wallet does with a served action: signs it with the user's key (the simulator's signer,
 * independent of the plugin's) and posts `{action, nonce, signature}` to `/exchange`. Answers the
 * transaction hash, known before posting.
 */
async function signAndPost(
  user: HyperliquidDevAccount,
  served: { action: HyperliquidSendAction; nonce: number },
): Promise<Hex> {
  const signature = await hyperliquidSignAction(user.privateKey, served.action)
  const response = await fetch(`${venue?.url}/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: served.action, nonce: served.nonce, signature }),
  })
  const answer = (await response.json()) as { status: string; response: unknown }
  if (answer.status !== 'ok') throw new Error(`the venue refused the send: ${JSON.stringify(answer)}`)
  return hyperliquidTransactionHash(served.action, signature)
}

async function explorerTx(hash: string): Promise<ExplorerTx> {
  const response = await fetch(`${venue?.url}/explorer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'txDetails', hash }),
  })
  if (!response.ok) throw new Error(`explorer: ${response.status} ${await response.text()}`)
  return (await response.json()) as ExplorerTx
}

const toVenue = (extra: Record<string, unknown> = {}) => ({
  user: USERS[1]!.address,
  recipient: ALICE.address,
  originChainId: EVM,
  destinationChainId: HYPERLIQUID,
  originCurrency: STABLECOIN_ADDRESS,
  destinationCurrency: HYPERLIQUID_PERPS_USDC_ID,
  amount: '25000000',
  tradeType: 'EXACT_INPUT',
  ...extra,
})

const fromVenue = (user: HyperliquidDevAccount, extra: Record<string, unknown> = {}) => ({
  user: user.address,
  recipient: USERS[2]!.address,
  originChainId: HYPERLIQUID,
  destinationChainId: EVM,
  originCurrency: HYPERLIQUID_PERPS_USDC_ID,
  destinationCurrency: STABLECOIN_ADDRESS,
  amount: '3000000000',
  tradeType: 'EXACT_INPUT',
  ...extra,
})

/**
 * The deposit tag of a send by `user` with `nonce`, derived here from its definition
 * (`hyperliquidDepositTag` of the plugin: keccak256(encodePacked(address, uint64 nonce))).
 */
const depositTag = (user: string, nonce: number): Hex =>
  keccak256(encodePacked(['address', 'uint64'], [user as Address, BigInt(nonce)]))

/** The stored request whose deposit tag is that of `user`'s send with `nonce`. */
function requestOfTag(user: string, nonce: number) {
  return service.store.findByDepositTag(HYPERLIQUID, depositTag(user, nonce))
}

/** How the indexer recorded a deposit transaction (undefined while it has not seen it). */
async function depositOutcome(transactionId: string): Promise<string | undefined> {
  const { rows } = await service.store.client.query<{ outcome: string }>(
    'SELECT outcome FROM deposits WHERE chain_id = $1 AND transaction_id = $2',
    [HYPERLIQUID, transactionId.toLowerCase()],
  )
  return rows[0]?.outcome
}

t.test('/chains lists Hyperliquid as a hypevm chain with perps and spot USDC', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.get('/chains')
  t.equal(res.status, 200)
  const chain = (res.body as ChainsAnswer).chains.find((entry) => entry.id === HYPERLIQUID)
  t.ok(chain, 'chain 1337 is listed')
  t.equal(chain?.vmType, 'hypevm')
  t.equal(chain?.currency.address, HYPERLIQUID_PERPS_USDC_ID, 'perps USDC is the native currency')
  t.equal(chain?.currency.decimals, 8)
  t.equal(chain?.currency.id, 'usdc')
  const spot = chain?.erc20Currencies?.find((currency) => currency.address === HYPERLIQUID_SPOT_USDC_ID)
  t.ok(spot, 'spot USDC is listed as a token')
  t.equal(spot?.decimals, 8)
  t.equal(spot?.id, 'usdc')
})

t.test('EVM USDC to perps USDC: the solver usdSends the quoted output to the recipient', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post('/quote/v2', toVenue())
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const quotedOut = BigInt(quote.details.currencyOut.amount)
  // 25 USDC in (6 decimals) is about 25 USDC out (8 decimals), less fees: the scale is 10^2 apart.
  t.ok(quotedOut > 24n * 10n ** 8n && quotedOut <= 25n * 10n ** 8n, `quoted ${quotedOut} in 8 decimals`)
  t.equal(quote.details.currencyOut.currency.decimals, 8)
  const before = venue.balance(ALICE.address, HYPERLIQUID_PERPS_USDC_ID)
  const depositHash = await executeEvm(quote, USERS[1]!.privateKey)
  await client.post('/transactions/index', { chainId: String(EVM), txHash: depositHash })
  const done = await waitForSuccess(client, requestId)
  t.equal(
    venue.balance(ALICE.address, HYPERLIQUID_PERPS_USDC_ID) - before,
    quotedOut,
    "alice's perps balance grew by exactly the quoted output",
  )
  t.equal(done.txHashes.length, 1, 'one fill')
  const fill = await explorerTx(done.txHashes[0] as string)
  t.equal(fill.tx.error, null, 'the fill executed')
  t.equal(fill.tx.user, DEPOSITORY, 'sent by the solver')
  t.equal(fill.tx.action.type, 'usdSend')
  t.equal(fill.tx.action.destination.toLowerCase(), ALICE.address, 'to alice')
  t.equal(fill.tx.action.amount, formatUnits(quotedOut, 8), 'the quoted output, in whole units')
})

const withdrawals: ReadonlyArray<[string, HyperliquidDevAccount, string, 'usdSend' | 'spotSend']> = [
  ['perps USDC', ALICE, HYPERLIQUID_PERPS_USDC_ID, 'usdSend'],
  ['spot USDC', ALICE, HYPERLIQUID_SPOT_USDC_ID, 'spotSend'],
]
for (const [name, user, currency, type] of withdrawals) {
  t.test(`${name} to EVM USDC: the user signs the served ${type}, the solver pays on EVM`, async (t) => {
    const client = createTestClient(t, service.url, loaded.document)
    const recipient = USERS[2]!.address
    const res = await client.post('/quote/v2', fromVenue(user, { originCurrency: currency, recipient }))
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
    const quote = res.body as Quote
    const requestId = quote.steps[0]?.requestId as string
    t.equal(quote.steps.length, 1, 'one step')
    t.equal(quote.steps[0]?.kind, 'transaction')
    const item = servedAction(quote)
    t.equal(item.chainId, HYPERLIQUID)
    t.equal(item.action.type, type)
    t.equal(item.action.destination, DEPOSITORY, 'a send to the depository')
    t.equal(item.action.amount, '30', 'the amount as a decimal string in whole units')
    t.equal(item.action.hyperliquidChain, 'Mainnet')
    if (type === 'spotSend') t.equal(item.action.token, `USDC:${HYPERLIQUID_SPOT_USDC_ID}`)
    t.equal(item.action.time, item.nonce, 'time === nonce')
    t.ok(Math.abs(item.nonce - Date.now()) < 60_000, 'the nonce is a current millisecond timestamp')
    const stored = await requestOfTag(user.address, item.nonce)
    t.equal(stored?.id, requestId, 'the request stores the tag hyperliquidDepositTag(user, nonce)')

    const before = await evmBalance(recipient)
    const venueBefore = venue.balance(user.address, currency)
    const hash = await signAndPost(user, item)
    t.equal(venueBefore - venue.balance(user.address, currency), 30n * 10n ** 8n, 'the venue moved 30 USDC')
    // What clients send right after broadcasting: the chain id as a string.
    const indexed = await client.post('/transactions/index', { chainId: String(HYPERLIQUID), txHash: hash })
    t.equal(indexed.status, 200, JSON.stringify(indexed.body).slice(0, 300))
    t.equal((indexed.body as { requestId?: string }).requestId, requestId, 'attributed to the request')
    const done = await waitForSuccess(client, requestId)
    t.ok(done.inTxHashes.includes(hash), 'inTxHashes holds the venue hash')
    t.equal(await evmBalance(recipient), before + BigInt(quote.details.currencyOut.amount))
    t.equal(await depositOutcome(hash), 'matched')
  })
}

t.test('a withdrawal found by the depository scan alone, without /transactions/index', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const recipient = USERS[3]!.address
  const res = await client.post('/quote/v2', fromVenue(BOB, { recipient, amount: '1250000000' }))
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const quote = res.body as Quote
  const requestId = quote.steps[0]?.requestId as string
  const item = servedAction(quote)
  t.equal(item.action.amount, '12.5')
  const before = await evmBalance(recipient)
  const hash = await signAndPost(BOB, item)
  const done = await waitForSuccess(client, requestId)
  t.ok(done.inTxHashes.includes(hash), 'the scan found the deposit by its hash')
  t.equal(await evmBalance(recipient), before + BigInt(quote.details.currencyOut.amount))
})

t.test('two quotes in one millisecond get distinct nonces; a deposit completes only its own', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  frozenNow = Date.now()
  let first: Quote
  let second: Quote
  try {
    const answers = await Promise.all([
      client.post('/quote/v2', fromVenue(ALICE, { amount: '1000000000' })),
      client.post('/quote/v2', fromVenue(ALICE, { amount: '1000000000' })),
    ])
    for (const answer of answers) t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300))
    ;[first, second] = answers.map((answer) => answer.body as Quote) as [Quote, Quote]
  } finally {
    frozenNow = undefined
  }
  const firstItem = servedAction(first)
  const secondItem = servedAction(second)
  t.equal(
    Math.abs(firstItem.nonce - secondItem.nonce),
    1,
    'distinct nonces for the same user in the same millisecond, one apart',
  )
  const firstId = first.steps[0]?.requestId as string
  const secondId = second.steps[0]?.requestId as string
  t.not(firstId, secondId)
  t.equal((await requestOfTag(ALICE.address, firstItem.nonce))?.id, firstId)
  t.equal((await requestOfTag(ALICE.address, secondItem.nonce))?.id, secondId)

  const hash = await signAndPost(ALICE, firstItem)
  const indexed = await client.post('/transactions/index', { chainId: String(HYPERLIQUID), txHash: hash })
  t.equal((indexed.body as { requestId?: string }).requestId, firstId)
  await waitForSuccess(client, firstId)
  // A whole indexer pass after the deposit: the other request must not have moved.
  await e2e.freshIndexerPass()
  const other = await statusOf(client, secondId)
  t.equal(other.status, 'waiting', 'the other quote is still waiting for its own deposit')
  t.same(other.inTxHashes, [])
  t.equal(await e2e.jobsFor(secondId), 0, 'and nothing was queued for it')
})

t.test('a send to the depository with a nonce no quote served completes no request', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const res = await client.post('/quote/v2', fromVenue(BOB, { amount: '500000000' }))
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  const unrelated = res.body as Quote
  const unrelatedId = unrelated.steps[0]?.requestId as string
  const quotedNonce = servedAction(unrelated).nonce
  // The user's own send: same amount and destination as the quote, but a nonce of their choosing.
  const ownNonce = quotedNonce + 7_777
  const own: HyperliquidSendAction = { ...servedAction(unrelated).action, time: ownNonce }
  const before = venue.balance(BOB.address, HYPERLIQUID_PERPS_USDC_ID)
  const hash = await signAndPost(BOB, { action: own, nonce: ownNonce })
  t.equal(before - venue.balance(BOB.address, HYPERLIQUID_PERPS_USDC_ID), 5n * 10n ** 8n, 'bob sent 5 USDC')
  const indexed = await client.post('/transactions/index', { chainId: String(HYPERLIQUID), txHash: hash })
  t.equal(indexed.status, 200, JSON.stringify(indexed.body).slice(0, 300))
  t.notOk((indexed.body as { requestId?: string }).requestId, 'attributed to no request')
  t.match((indexed.body as { message: string }).message, /matches no request/)
  t.equal(await depositOutcome(hash), 'orphaned', 'recorded as orphaned')
  await e2e.freshIndexerPass()
  const status = await statusOf(client, unrelatedId)
  t.equal(status.status, 'waiting', 'the unrelated request is still waiting')
  t.same(status.inTxHashes, [])
  t.equal(await e2e.jobsFor(unrelatedId), 0, 'and nothing was queued for it')
  // As the index answer says: the orphaned deposit goes back to its sender, out of the depository.
  await waitFor(
    `bob's balance back at ${before}`,
    () => venue.balance(BOB.address, HYPERLIQUID_PERPS_USDC_ID),
    { until: (balance) => balance === before },
  )
  t.equal(venue.balance(BOB.address, HYPERLIQUID_PERPS_USDC_ID), before, 'the whole deposit came back to bob')
  t.equal((await statusOf(client, unrelatedId)).status, 'waiting', 'and the unrelated request still waits')
})

t.test('address and currency rules, with messages that say what to pass', async (t) => {
  const client = createTestClient(t, service.url, loaded.document)
  const hexAddress = /0x followed by 40 hexadecimal digits/
  const cases: ReadonlyArray<[string, Record<string, unknown>, string, RegExp[]]> = [
    [
      'a Tron address as the Hyperliquid recipient',
      toVenue({ recipient: TRON_USERS.alice.address }),
      'INVALID_RECIPIENT',
      [/^recipient 'T/, /Tron address/, hexAddress],
    ],
    [
      'a Solana address as the Hyperliquid recipient',
      toVenue({ recipient: SVM_USERS[0]!.address }),
      'INVALID_RECIPIENT',
      [/^recipient '/, hexAddress],
    ],
    [
      'a short hex recipient',
      toVenue({ recipient: '0x1234' }),
      'INVALID_RECIPIENT',
      [/^recipient '0x1234'/, hexAddress],
    ],
    [
      'a token id as the Hyperliquid recipient',
      toVenue({ recipient: HYPERLIQUID_SPOT_USDC_ID }),
      'INVALID_RECIPIENT',
      [/16 bytes/, hexAddress],
    ],
    [
      'a Solana address as the Hyperliquid user of a withdrawal',
      fromVenue(ALICE, { user: SVM_USERS[0]!.address }),
      'INVALID_ADDRESS',
      [/^user '/, hexAddress],
    ],
    [
      'a short hex user of a withdrawal',
      fromVenue(ALICE, { user: '0xabc' }),
      'INVALID_ADDRESS',
      [/^user '0xabc'/, hexAddress],
    ],
    [
      'a 20-byte EVM token address as the Hyperliquid output currency',
      toVenue({ destinationCurrency: STABLECOIN_ADDRESS }),
      'INVALID_OUTPUT_CURRENCY',
      [/^output currency '0x/, /20-byte EVM address/, /16 bytes/],
    ],
    [
      'a 20-byte EVM token address as the Hyperliquid input currency',
      fromVenue(ALICE, { originCurrency: STABLECOIN_ADDRESS }),
      'INVALID_INPUT_CURRENCY',
      [/^input currency '0x/, /20-byte EVM address/, /16 bytes/],
    ],
    [
      'a token id as the EVM recipient of a withdrawal',
      fromVenue(ALICE, { recipient: HYPERLIQUID_SPOT_USDC_ID }),
      'INVALID_RECIPIENT',
      [/^recipient '0x6d1e/, /\(31337\)/],
    ],
    [
      'a Tron address as the EVM recipient of a withdrawal',
      fromVenue(ALICE, { recipient: TRON_USERS.bob.address }),
      'INVALID_RECIPIENT',
      [/^recipient 'T/, /\(31337\)/],
    ],
  ]
  for (const [name, body, code, messages] of cases) {
    const res = await client.post('/quote/v2', body)
    const answer = res.body as ErrorAnswer
    t.equal(res.status, 400, `${name}: 400`)
    t.equal(answer.errorCode, code, `${name}: ${code} (${answer.message})`)
    for (const message of messages) t.match(answer.message, message, `${name}: ${message}`)
  }
})
