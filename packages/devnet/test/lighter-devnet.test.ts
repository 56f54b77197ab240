/**
 * The Lighter simulator over real HTTP: lookups, transfer execution and every refusal of a transfer
 * (signature, nonce, expiry, accounts, asset, routes, balance, fee, memo).
 */
import t from 'tap'
import {
  LIGHTER_EMPTY,
  LIGHTER_SOLVER,
  LIGHTER_TX_STATUS_EXECUTED,
  LIGHTER_TX_STATUS_FAILED,
  LIGHTER_UNKNOWN_ACCOUNT_INDEX,
  LIGHTER_UNKNOWN_L1_ADDRESS,
  LIGHTER_USDC_ASSET_INDEX,
  LIGHTER_USERS,
  type LighterDevAccount,
  type LighterTransferFields,
  lighterDevnetEnvironment,
  lighterSignTransfer,
  lighterTransferHash,
  startLighterDevnet,
} from '../src/index.js'

const devnet = await startLighterDevnet({ transferFeeUsdc: 10_000n })
t.teardown(() => devnet.stop())
const api = `${devnet.url}/api/v1`
const { alice, aliceSub, bob } = LIGHTER_USERS
const memo = (n: number) => `0x${n.toString(16).padStart(64, '0')}`

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api}${path}`)
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function send(txInfo: string, txType = 12): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api}/sendTx`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tx_type: txType, tx_info: txInfo }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function nonceOf(account: LighterDevAccount): Promise<number> {
  const { body } = await get(`/nextNonce?account_index=${account.index}&api_key_index=${account.apiKeyIndex}`)
  return body.nonce as number
}

async function transfer(
  from: LighterDevAccount,
  overrides: Partial<LighterTransferFields> = {},
  seed = from.apiKeySeed,
) {
  const fields: LighterTransferFields = {
    FromAccountIndex: from.index,
    ApiKeyIndex: from.apiKeyIndex,
    ToAccountIndex: LIGHTER_SOLVER.index,
    AssetIndex: LIGHTER_USDC_ASSET_INDEX,
    FromRouteType: 0,
    ToRouteType: 0,
    Amount: 1_000_000,
    USDCFee: 10_000,
    Memo: memo(1),
    ExpiredAt: Date.now() + 600_000,
    Nonce: await nonceOf(from),
    ...overrides,
  }
  return lighterSignTransfer(fields, seed)
}

t.test('environment names both API URLs', async (t) => {
  t.same(lighterDevnetEnvironment(devnet), {
    LOCAL_LIGHTER_API_URL: devnet.url,
    LOCAL_LIGHTER_PUBLIC_API_URL: devnet.url,
  })
})

t.test('accounts by L1 address', async (t) => {
  const { status, body } = await get(
    `/accountsByL1Address?l1_address=${alice.l1Address.toUpperCase().replace('0X', '0x')}`,
  )
  t.equal(status, 200)
  t.equal(body.code, 200)
  t.equal(body.l1_address, alice.l1Address)
  t.same(
    (body.sub_accounts as { index: number }[]).map((account) => account.index),
    [alice.index, aliceSub.index],
    'main account first, then the sub-account',
  )
  const unknown = await get(`/accountsByL1Address?l1_address=${LIGHTER_UNKNOWN_L1_ADDRESS}`)
  t.equal(unknown.status, 400)
  t.match(unknown.body, { code: Number, message: /account not found/ })
  const malformed = await get('/accountsByL1Address?l1_address=0x1234')
  t.equal(malformed.status, 400)
  t.match(malformed.body.message, /invalid l1_address/)
})

t.test('account by index and by L1 address', async (t) => {
  const { status, body } = await get(`/account?by=index&value=${bob.index}`)
  t.equal(status, 200)
  t.match(body, {
    code: 200,
    total: 1,
    accounts: [
      {
        index: bob.index,
        l1_address: bob.l1Address,
        collateral: '5000.000000',
        assets: [{ asset_id: LIGHTER_USDC_ASSET_INDEX, symbol: 'USDC', balance: '0.000000' }],
      },
    ],
  })
  const byL1 = await get(`/account?by=l1_address&value=${alice.l1Address}`)
  t.equal(byL1.body.total, 2)
  const aliceAccount = (byL1.body.accounts as { index: number; assets: { balance: string }[] }[])[0]
  t.equal(aliceAccount?.assets[0]?.balance, '500.000000', 'spot balance shown in assets')
  const unknown = await get(`/account?by=index&value=${LIGHTER_UNKNOWN_ACCOUNT_INDEX}`)
  t.equal(unknown.status, 400)
  t.match(unknown.body.message, /account not found/)
  const badBy = await get('/account?by=name&value=x')
  t.equal(badBy.status, 400)
})

t.test('nonce and transfer fee', async (t) => {
  t.match((await get(`/nextNonce?account_index=${bob.index}&api_key_index=${bob.apiKeyIndex}`)).body, {
    code: 200,
    nonce: 0,
  })
  const noKey = await get(`/nextNonce?account_index=${bob.index}&api_key_index=7`)
  t.equal(noKey.status, 400)
  t.match((await get(`/transferFeeInfo?account_index=${bob.index}`)).body, {
    code: 200,
    transfer_fee_usdc: 10_000,
  })
  devnet.setTransferFee(25_000n)
  t.match((await get(`/transferFeeInfo?account_index=${bob.index}`)).body, { transfer_fee_usdc: 25_000 })
  devnet.setTransferFee(10_000n)
})

t.test('a transfer executes at once in a new block and reads back by hash', async (t) => {
  const before = { from: devnet.balanceOf(bob.index), to: devnet.balanceOf(LIGHTER_SOLVER.index) }
  const height = devnet.venue.height
  const signed = await transfer(bob, { Amount: 2_500_000, Memo: memo(0xabc) })
  t.equal(lighterTransferHash(signed.info), signed.hash, 'the hash is computable before sending')
  const { status, body } = await send(signed.txInfo)
  t.equal(status, 200)
  t.same(body.tx_hash, signed.hash)
  t.equal(devnet.balanceOf(bob.index), before.from - 2_510_000n, 'amount and fee debited')
  t.equal(devnet.balanceOf(LIGHTER_SOLVER.index), before.to + 2_500_000n, 'amount credited')
  t.equal(devnet.venue.height, height + 1)
  const read = await get(`/tx?by=hash&value=${signed.hash}`)
  t.match(read.body, {
    code: 200,
    hash: signed.hash,
    type: 12,
    info: signed.txInfo,
    status: LIGHTER_TX_STATUS_EXECUTED,
    block_height: height + 1,
    executed_at: Number,
  })
  t.equal(await nonceOf(bob), 1, 'the nonce advanced')
  const again = await send(signed.txInfo)
  t.equal(again.status, 400, 'the same transfer is not executed twice')
  t.match(again.body.message, /invalid nonce 0/)
  const unknown = await get(`/tx?by=hash&value=0x${'00'.repeat(32)}`)
  t.equal(unknown.status, 400)
  t.match(unknown.body, { code: 21600, message: /transaction not found/ })
})

t.test('a sub-account signs with its own key; form-encoded bodies are accepted', async (t) => {
  const signed = await transfer(aliceSub, { ToAccountIndex: alice.index, ToRouteType: 1 })
  const response = await fetch(`${api}/sendTx`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ tx_type: '12', tx_info: signed.txInfo }).toString(),
  })
  t.equal(response.status, 200)
  t.equal(devnet.balanceOf(alice.index, 1), 501_000_000n, 'credited to the spot route')
})

t.test('refusals', async (t) => {
  const balance = devnet.balanceOf(alice.index)
  const cases: [string, () => Promise<string>, RegExp][] = [
    [
      'bad signature (another key)',
      async () => (await transfer(alice, {}, bob.apiKeySeed)).txInfo,
      /invalid signature/,
    ],
    [
      'tampered amount',
      async () => JSON.stringify({ ...(await transfer(alice)).info, Amount: 2 }),
      /invalid signature/,
    ],
    [
      'nonce too high',
      async () => (await transfer(alice, { Nonce: 5 })).txInfo,
      /invalid nonce 5.*expects nonce 0/,
    ],
    ['expired', async () => (await transfer(alice, { ExpiredAt: Date.now() - 1 })).txInfo, /expired/],
    [
      'unknown receiver',
      async () => (await transfer(alice, { ToAccountIndex: LIGHTER_UNKNOWN_ACCOUNT_INDEX })).txInfo,
      /receiver account not found: 999999/,
    ],
    [
      'unknown sender',
      async () =>
        JSON.stringify({ ...(await transfer(alice)).info, FromAccountIndex: LIGHTER_UNKNOWN_ACCOUNT_INDEX }),
      /sender account not found/,
    ],
    ['unknown asset', async () => (await transfer(alice, { AssetIndex: 9 })).txInfo, /unknown asset index 9/],
    ['unknown route', async () => (await transfer(alice, { ToRouteType: 7 })).txInfo, /unknown route type/],
    [
      'insufficient balance',
      async () => (await transfer(LIGHTER_EMPTY, { Amount: 1 })).txInfo,
      /insufficient balance: account 1003 has 0/,
    ],
    [
      'amount plus fee above the balance',
      async () => (await transfer(alice, { Amount: Number(balance) })).txInfo,
      /insufficient balance/,
    ],
    [
      'fee below the transfer fee',
      async () => (await transfer(alice, { USDCFee: 9_999 })).txInfo,
      /below the transfer fee/,
    ],
    [
      'short memo',
      async () => JSON.stringify({ ...(await transfer(alice)).info, Memo: '0x1234' }),
      /Memo must be exactly 32 bytes/,
    ],
    [
      'long memo',
      async () => JSON.stringify({ ...(await transfer(alice)).info, Memo: `${memo(1)}00` }),
      /Memo must be exactly 32 bytes/,
    ],
    ['not JSON', async () => '{', /not valid JSON/],
    [
      'negative amount',
      async () => JSON.stringify({ ...(await transfer(alice)).info, Amount: -1 }),
      /Amount must be a non-negative integer/,
    ],
  ]
  for (const [name, make, message] of cases) {
    const { status, body } = await send(await make())
    t.equal(status, 400, `${name}: 400`)
    t.match(body, { code: Number, message }, `${name}: ${String(body.message)}`)
  }
  const wrongType = await send((await transfer(alice)).txInfo, 14)
  t.equal(wrongType.status, 400)
  t.match(wrongType.body.message, /unsupported tx_type 14/)
  t.equal(devnet.balanceOf(alice.index), balance, 'no refused transfer moved funds')
  t.equal(await nonceOf(alice), 0, 'no refused transfer used the nonce')
})

t.test('account history pages by block height; the current height is the head', async (t) => {
  const fresh = await startLighterDevnet()
  t.teardown(() => fresh.stop())
  const at = (path: string) => `${fresh.url}/api/v1${path}`
  const read = async (path: string) => {
    const response = await fetch(at(path))
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  t.same((await read('/currentHeight')).body, { code: 200, height: 1 }, 'height 1 before any transfer')
  const hashes: string[] = []
  for (let n = 0; n < 5; n++) {
    const signed = lighterSignTransfer(
      {
        FromAccountIndex: n % 2 === 0 ? bob.index : LIGHTER_SOLVER.index,
        ApiKeyIndex: n % 2 === 0 ? bob.apiKeyIndex : LIGHTER_SOLVER.apiKeyIndex,
        ToAccountIndex: n % 2 === 0 ? LIGHTER_SOLVER.index : bob.index,
        AssetIndex: LIGHTER_USDC_ASSET_INDEX,
        FromRouteType: 0,
        ToRouteType: 0,
        Amount: 1_000_000 + n,
        USDCFee: 10_000,
        Memo: memo(0x500 + n),
        ExpiredAt: Date.now() + 600_000,
        Nonce: fresh.venue.nextNonce(
          n % 2 === 0 ? bob.index : LIGHTER_SOLVER.index,
          n % 2 === 0 ? bob.apiKeyIndex : LIGHTER_SOLVER.apiKeyIndex,
        ),
      },
      n % 2 === 0 ? bob.apiKeySeed : LIGHTER_SOLVER.apiKeySeed,
    )
    const response = await fetch(at('/sendTx'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tx_type: 12, tx_info: signed.txInfo }),
    })
    t.equal(response.status, 200)
    hashes.push(signed.hash)
  }
  // One transfer that does not involve the solver: not in its history.
  const other = lighterSignTransfer(
    {
      FromAccountIndex: alice.index,
      ApiKeyIndex: alice.apiKeyIndex,
      ToAccountIndex: bob.index,
      AssetIndex: LIGHTER_USDC_ASSET_INDEX,
      FromRouteType: 0,
      ToRouteType: 0,
      Amount: 1,
      USDCFee: 10_000,
      Memo: memo(0x600),
      ExpiredAt: Date.now() + 600_000,
      Nonce: 0,
    },
    alice.apiKeySeed,
  )
  t.equal(fresh.venue.submit(12, other.txInfo), other.hash)
  const failedHash = fresh.venue.recordFailedTransfer(
    lighterSignTransfer(
      {
        FromAccountIndex: bob.index,
        ApiKeyIndex: bob.apiKeyIndex,
        ToAccountIndex: LIGHTER_SOLVER.index,
        AssetIndex: LIGHTER_USDC_ASSET_INDEX,
        FromRouteType: 0,
        ToRouteType: 0,
        Amount: 999_000_000_000,
        USDCFee: 10_000,
        Memo: memo(0x700),
        ExpiredAt: Date.now() + 600_000,
        Nonce: 99,
      },
      bob.apiKeySeed,
    ).txInfo,
  )
  t.same((await read('/currentHeight')).body, { code: 200, height: 8 }, 'one block per transaction')

  const all = await read(`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&limit=100`)
  t.equal(all.status, 200)
  const txs = all.body.txs as Array<Record<string, unknown>>
  t.same(
    txs.map((tx) => tx.hash),
    [...hashes, failedHash],
    'sent and received, oldest first, the failed one included',
  )
  t.same(
    txs.map((tx) => tx.block_height),
    [2, 3, 4, 5, 6, 8],
  )
  t.match(txs[0], { type: 12, info: String, status: LIGHTER_TX_STATUS_EXECUTED, executed_at: Number })
  t.equal(txs.at(-1)?.status, LIGHTER_TX_STATUS_FAILED)
  t.equal(
    fresh.balanceOf(bob.index),
    5_000_000_000n - 3_030_006n + 2_000_004n + 1n,
    'the failed one moved nothing',
  )

  const page = await read(`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&index=3&limit=2`)
  t.same(
    (page.body.txs as Array<Record<string, unknown>>).map((tx) => tx.block_height),
    [3, 4],
    '`index` is the lowest height, `limit` bounds the page',
  )
  const past = await read(`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&index=9&limit=5`)
  t.same(past.body, { code: 200, txs: [] }, 'nothing after the head')
  const quiet = await read(`/accountTxs?by=account_index&value=${LIGHTER_EMPTY.index}&limit=5`)
  t.same(quiet.body, { code: 200, txs: [] }, 'an account without transactions')

  const refusals: Array<[string, RegExp]> = [
    [`/accountTxs?by=index&value=${LIGHTER_SOLVER.index}&limit=5`, /invalid by/],
    [`/accountTxs?value=${LIGHTER_SOLVER.index}&limit=5`, /invalid by/],
    ['/accountTxs?by=account_index&value=abc&limit=5', /invalid value/],
    [`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}`, /invalid limit/],
    [`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&limit=0`, /invalid limit/],
    [`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&limit=101`, /invalid limit/],
    [`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&limit=1.5`, /invalid limit/],
    [`/accountTxs?by=account_index&value=${LIGHTER_SOLVER.index}&limit=5&index=-1`, /invalid index/],
    [`/accountTxs?by=account_index&value=${LIGHTER_UNKNOWN_ACCOUNT_INDEX}&limit=5`, /account not found/],
  ]
  for (const [path, message] of refusals) {
    const { status, body } = await read(path)
    t.equal(status, 400, `${path}: 400`)
    t.match(body, { code: Number, message }, `${path}: ${String(body.message)}`)
  }
})
