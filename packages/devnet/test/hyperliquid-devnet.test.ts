/**
 * The Hyperliquid devnet (an API simulator) over real HTTP: the cast and its funding, `/info`
 * shapes, signed sends moving balances, every refusal of `/exchange`, and transaction lookups.
 */
import t from 'tap'
import { privateKeyToAddress } from 'viem/accounts'
import {
  HYPERLIQUID_DEVNET_CHAIN_ID,
  HYPERLIQUID_EMPTY,
  HYPERLIQUID_HYPE_ID,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_SOLVER,
  HYPERLIQUID_SPOT_USDC_ID,
  HYPERLIQUID_USERS,
  type HyperliquidSendAction,
  type HyperliquidSignature,
  hyperliquidDevnetEnvironment,
  hyperliquidDevnetPrivateKey,
  hyperliquidSignAction,
  hyperliquidTransactionHash,
  startHyperliquidDevnet,
} from '../src/hyperliquid/index.js'

const devnet = await startHyperliquidDevnet()
t.teardown(() => devnet.stop())
const { alice, bob } = HYPERLIQUID_USERS
const DAY = 24 * 60 * 60 * 1000
let clock = Date.now()
/** A fresh nonce each call (ms timestamps, strictly increasing). */
const nextTime = () => {
  clock = Math.max(clock + 1, Date.now())
  return clock
}

async function post(path: string, body: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const response = await fetch(`${devnet.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, json, text }
}

function usdSend(destination: string, amount: string, time = nextTime()): HyperliquidSendAction {
  return {
    type: 'usdSend',
    hyperliquidChain: 'Mainnet',
    signatureChainId: '0x66eee',
    destination,
    amount,
    time,
  }
}

function spotSend(
  destination: string,
  token: string,
  amount: string,
  time = nextTime(),
): HyperliquidSendAction {
  return {
    type: 'spotSend',
    hyperliquidChain: 'Mainnet',
    signatureChainId: '0xa4b1',
    destination,
    token,
    amount,
    time,
  }
}

async function submit(
  action: HyperliquidSendAction,
  signature: HyperliquidSignature,
  nonce = action.time,
): Promise<unknown> {
  const { status, json } = await post('/exchange', { action, nonce, signature })
  t.equal(status, 200, 'the exchange answers 200')
  return json
}

t.test('the cast: keys from fixed seeds, funded at start', async (t) => {
  t.equal(HYPERLIQUID_DEVNET_CHAIN_ID, 1337)
  for (const account of [alice, bob, HYPERLIQUID_SOLVER, HYPERLIQUID_EMPTY]) {
    t.equal(privateKeyToAddress(account.privateKey).toLowerCase(), account.address, `${account.name} address`)
  }
  t.equal(devnet.balance(alice.address, HYPERLIQUID_PERPS_USDC_ID), 10_000n * 10n ** 8n)
  t.equal(devnet.balance(HYPERLIQUID_EMPTY.address, HYPERLIQUID_PERPS_USDC_ID), 0n)
  t.same(hyperliquidDevnetEnvironment(devnet), {
    LOCAL_HYPERLIQUID_API_URL: devnet.url,
    LOCAL_HYPERLIQUID_PUBLIC_API_URL: devnet.url,
  })
})

t.test('/info shapes and bad input', async (t) => {
  const state = await post('/info', {
    type: 'clearinghouseState',
    user: bob.address.toUpperCase().replace('0X', '0x'),
  })
  t.equal(state.status, 200)
  t.match(state.json, {
    withdrawable: '10000.0',
    marginSummary: { accountValue: '10000.0' },
    assetPositions: [],
  })
  const spot = await post('/info', { type: 'spotClearinghouseState', user: bob.address })
  t.same((spot.json as { balances: unknown[] }).balances, [
    { coin: 'USDC', token: 0, total: '5000.0', hold: '0.0', entryNtl: '0.0' },
    { coin: 'HYPE', token: 150, total: '100.0', hold: '0.0', entryNtl: '0.0' },
  ])
  const meta = (await post('/info', { type: 'spotMeta' })).json as { tokens: Array<Record<string, unknown>> }
  t.match(meta.tokens, [
    { name: 'USDC', weiDecimals: 8, index: 0, tokenId: HYPERLIQUID_SPOT_USDC_ID, isCanonical: true },
    { name: 'HYPE', weiDecimals: 8, index: 150, tokenId: HYPERLIQUID_HYPE_ID },
  ])
  const empty = await post('/info', { type: 'spotClearinghouseState', user: HYPERLIQUID_EMPTY.address })
  t.same(empty.json, { balances: [] })

  const badUser = await post('/info', { type: 'clearinghouseState', user: '0x1234' })
  t.equal(badUser.status, 422)
  t.equal(badUser.text, 'Failed to deserialize the JSON body into the target type')
  t.equal((await post('/info', { type: 'noSuchInfo' })).status, 422)
  t.equal((await post('/info', { type: 'userNonFundingLedgerUpdates', user: bob.address })).status, 422)
  t.equal((await post('/info', 'not json')).status, 400)
  t.equal((await fetch(`${devnet.url}/info`)).status, 405)
})

t.test('usdSend and spotSend move balances, and read back', async (t) => {
  const before = devnet.balance(bob.address, HYPERLIQUID_PERPS_USDC_ID)
  const start = Date.now() - 1
  const action = usdSend(bob.address, '12.5')
  const signature = await hyperliquidSignAction(alice.privateKey, action)
  t.same(await submit(action, signature), { status: 'ok', response: { type: 'default' } })
  t.equal(devnet.balance(bob.address, HYPERLIQUID_PERPS_USDC_ID), before + 1_250_000_000n)

  const hash = hyperliquidTransactionHash(action, signature)
  const details = await post('/explorer', { type: 'txDetails', hash })
  t.equal(details.status, 200)
  t.match(details.json, {
    type: 'txDetails',
    tx: { user: alice.address, action, hash, error: null, block: Number },
  })

  const updates = await post('/info', {
    type: 'userNonFundingLedgerUpdates',
    user: bob.address,
    startTime: start,
  })
  t.match(updates.json, [
    {
      hash,
      delta: {
        type: 'send',
        user: alice.address,
        destination: bob.address,
        amount: '12.5',
        nonce: action.time,
      },
    },
  ])

  const hype = spotSend(HYPERLIQUID_EMPTY.address, `HYPE:${HYPERLIQUID_HYPE_ID}`, '0.00000001')
  t.same(await submit(hype, await hyperliquidSignAction(bob.privateKey, hype)), {
    status: 'ok',
    response: { type: 'default' },
  })
  t.equal(devnet.balance(HYPERLIQUID_EMPTY.address, HYPERLIQUID_HYPE_ID), 1n, 'the empty account now exists')
  const spotUpdates = await post('/info', {
    type: 'userNonFundingLedgerUpdates',
    user: HYPERLIQUID_EMPTY.address,
    startTime: 0,
  })
  t.match(spotUpdates.json, [{ delta: { type: 'spotTransfer', token: 'HYPE', amount: '0.00000001' } }])
})

t.test('refusals', async (t) => {
  const err = (reason: RegExp | string) => ({ status: 'err', response: reason })
  const sign = (action: HyperliquidSendAction, key = alice.privateKey) => hyperliquidSignAction(key, action)

  // A tampered action recovers to another address, which holds nothing.
  const signed = usdSend(bob.address, '1')
  const signature = await sign(signed)
  const tampered = { ...signed, amount: '2' }
  t.match(await submit(tampered, signature), err(/^User or API Wallet 0x[0-9a-f]{40} does not exist\.$/))
  // Signed by a key the venue does not know (the wrong signer for alice's funds): nothing moves.
  const stranger = hyperliquidDevnetPrivateKey('stranger')
  const byStranger = usdSend(bob.address, '1')
  t.match(
    await submit(byStranger, await sign(byStranger, stranger)),
    err(`User or API Wallet ${privateKeyToAddress(stranger).toLowerCase()} does not exist.`),
  )
  // A garbage signature does not recover at all.
  t.match(
    await submit(signed, { r: `0x${'0'.repeat(64)}`, s: `0x${'0'.repeat(64)}`, v: 27 }),
    err(/signature/i),
  )

  // Replayed nonce.
  const once = usdSend(bob.address, '1')
  const onceSig = await sign(once)
  t.same(await submit(once, onceSig), { status: 'ok', response: { type: 'default' } })
  const aliceBefore = devnet.balance(alice.address, HYPERLIQUID_PERPS_USDC_ID)
  t.same(await submit(once, onceSig), err('Invalid nonce: duplicate nonce'))
  const sameNonce = usdSend(bob.address, '2', once.time)
  t.same(await submit(sameNonce, await sign(sameNonce)), err('Invalid nonce: duplicate nonce'))
  t.equal(devnet.balance(alice.address, HYPERLIQUID_PERPS_USDC_ID), aliceBefore, 'a replay moves nothing')

  // Nonce window and nonce = time.
  const old = usdSend(bob.address, '1', Date.now() - 2 * DAY - 1000)
  t.match(await submit(old, await sign(old)), err(/^Invalid nonce: .*outside the allowed range/))
  const future = usdSend(bob.address, '1', Date.now() + DAY + 60_000)
  t.match(await submit(future, await sign(future)), err(/^Invalid nonce: .*outside the allowed range/))
  const mismatch = usdSend(bob.address, '1')
  t.match(await submit(mismatch, await sign(mismatch), mismatch.time + 1), err(/does not match nonce/))

  // Chain, amounts, tokens, destination.
  const testnet = { ...usdSend(bob.address, '1'), hyperliquidChain: 'Testnet' }
  t.match(await submit(testnet, await sign(testnet)), err(/^Invalid hyperliquidChain/))
  for (const amount of ['1.123456789', '-1', '1e3', '', '0', '0.0', ' 1', '1,5']) {
    const bad = usdSend(bob.address, amount)
    t.match(await submit(bad, await sign(bad)), err(/^Invalid amount/), `amount ${JSON.stringify(amount)}`)
  }
  const trailing = usdSend(bob.address, '1.500000000')
  t.same(
    await submit(trailing, await sign(trailing)),
    { status: 'ok', response: { type: 'default' } },
    'trailing zeros are fine',
  )
  for (const token of ['HYPE', `USDC:${HYPERLIQUID_HYPE_ID}`, `HYPE:0x${'ab'.repeat(16)}`]) {
    const bad = spotSend(bob.address, token, '1')
    t.match(await submit(bad, await sign(bad)), err(/^Invalid token/), `token ${token}`)
  }
  const badDestination = usdSend('0x1234', '1')
  t.match(await submit(badDestination, await sign(badDestination)), err(/^Invalid destination/))

  // Insufficient balance: refused, recorded as a failed action (its nonce is used).
  const tooMuch = usdSend(bob.address, '1000000')
  const tooMuchSig = await sign(tooMuch)
  t.same(await submit(tooMuch, tooMuchSig), err('Insufficient balance for withdrawal'))
  const failed = await post('/explorer', {
    type: 'txDetails',
    hash: hyperliquidTransactionHash(tooMuch, tooMuchSig),
  })
  t.match(failed.json, { tx: { user: alice.address, error: 'Insufficient balance for withdrawal' } })
  t.same(await submit(tooMuch, tooMuchSig), err('Invalid nonce: duplicate nonce'))
  const tooMuchHype = spotSend(bob.address, `HYPE:${HYPERLIQUID_HYPE_ID}`, '101')
  t.same(await submit(tooMuchHype, await sign(tooMuchHype)), err('Insufficient balance for token transfer'))

  // Shapes the API cannot deserialize.
  const good = usdSend(bob.address, '1')
  const goodSig = await sign(good)
  for (const body of [
    { action: { ...good, type: 'withdraw3' }, nonce: good.time, signature: goodSig },
    { action: good, nonce: String(good.time), signature: goodSig },
    { action: good, nonce: good.time, signature: { ...goodSig, v: 1 } },
    { action: { ...good, amount: 1 }, nonce: good.time, signature: goodSig },
    { action: good, nonce: good.time },
  ]) {
    const answer = await post('/exchange', body)
    t.equal(answer.status, 422, 'a malformed request is 422')
  }
})

t.test('the 100 highest nonces: a nonce below them is refused', async (t) => {
  const base = Date.now() - DAY
  for (let index = 1; index <= 100; index++) {
    const action = usdSend(bob.address, '0.01', base + index * 10)
    t.same(await submit(action, await hyperliquidSignAction(bob.privateKey, action)), {
      status: 'ok',
      response: { type: 'default' },
    })
  }
  const below = usdSend(alice.address, '0.01', base + 5)
  t.same(await submit(below, await hyperliquidSignAction(bob.privateKey, below)), {
    status: 'err',
    response: 'Invalid nonce: nonce too low (below the 100 highest nonces used)',
  })
  // bob's kept nonces now start at base + 20 (his earlier send is the highest).
  const between = usdSend(alice.address, '0.01', base + 25)
  t.same(
    await submit(between, await hyperliquidSignAction(bob.privateKey, between)),
    {
      status: 'ok',
      response: { type: 'default' },
    },
    'an unused nonce above the smallest kept is fine',
  )
})

t.test('lookups of unknown and malformed hashes', async (t) => {
  const unknown = await post('/explorer', { type: 'txDetails', hash: `0x${'ab'.repeat(32)}` })
  t.equal(unknown.status, 404)
  t.match(unknown.json, { type: 'error' })
  t.equal((await post('/explorer', { type: 'txDetails', hash: '0x12' })).status, 422)
  t.equal((await post('/explorer', { type: 'blockDetails', height: 1 })).status, 422)
  t.equal((await post('/nowhere', {})).status, 404)
})
