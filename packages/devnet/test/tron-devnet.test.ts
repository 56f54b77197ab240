/**
 * The Tron devnet's node API over HTTP: the protobuf encoding and txID of built transactions, the
 * checks `broadcasttransaction` makes (signature, owner, expiration, duplicates, txID, balances,
 * energy), TRC20 transfers and their events, and the lookups.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import t from 'tap'
import { waitFor } from '../../../test/helpers/wait.js'
import {
  startTronDevnet,
  TRON_BLOCK_LIMIT_NUM,
  TRON_EMPTY,
  TRON_ENERGY_FEE_SUN,
  TRON_NATIVE_CURRENCY_ID,
  TRON_SOLVER,
  TRON_TRANSACTION_FEE_SUN,
  TRON_TRANSFER_TOPIC,
  TRON_TRC20_NEW_HOLDER_ENERGY,
  TRON_TRC20_TRANSFER_ENERGY,
  TRON_USDT_ADDRESS,
  TRON_USERS,
  TRON_VAULT,
  type TronTransactionJson,
  tronAddressBytes,
  tronBandwidthBytes,
  tronBase58,
  tronDecodeRaw,
  tronDevnetEnvironment,
  tronSignTransaction,
  tronTransactionId,
  tronTransactionJson,
  tronWithExpiration,
} from '../src/index.js'

const devnet = await startTronDevnet({ port: 0, blockIntervalMs: 0 })
t.teardown(() => devnet.stop())
const { alice, bob } = TRON_USERS
const tag = 'c0ffee'.padEnd(64, '0')

async function call(path: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${devnet.url}${path}`, { method: 'POST', body: JSON.stringify(body) })
  t.equal(response.status, 200, `${path} answers 200`)
  return (await response.json()) as Record<string, unknown>
}

const text = (hex: unknown) => Buffer.from(String(hex), 'hex').toString('utf8')

async function trxTransfer(from = alice, to = bob.address, amount = 1_000_000): Promise<TronTransactionJson> {
  return (await call('/wallet/createtransaction', {
    owner_address: from.address,
    to_address: to,
    amount,
    extra_data: tag,
    visible: true,
  })) as unknown as TronTransactionJson
}

function usdtParameter(to: string, amount: bigint, suffix = ''): string {
  const to20 = bytesToHex((tronAddressBytes(to) as Uint8Array).subarray(1))
  return `${to20.padStart(64, '0')}${amount.toString(16).padStart(64, '0')}${suffix}`
}

async function usdtTransfer(from: typeof alice, to: string, amount: bigint, feeLimit = 100_000_000) {
  const answer = await call('/wallet/triggersmartcontract', {
    owner_address: from.address,
    contract_address: TRON_USDT_ADDRESS,
    function_selector: 'transfer(address,uint256)',
    parameter: usdtParameter(to, amount, tag),
    fee_limit: feeLimit,
    call_value: 0,
    visible: true,
  })
  t.same(answer.result, { result: true }, 'triggersmartcontract builds')
  return answer.transaction as TronTransactionJson
}

const broadcast = (body: unknown) => call('/wallet/broadcasttransaction', body)

t.test('constants and environment', async (t) => {
  t.equal(tronBase58(Uint8Array.from([0x41, ...new Uint8Array(20)])), TRON_NATIVE_CURRENCY_ID)
  t.same(tronDevnetEnvironment(devnet), {
    LOCAL_TRON_API_URL: devnet.url,
    LOCAL_TRON_PUBLIC_API_URL: devnet.url,
  })
})

t.test('createtransaction: protobuf raw data, txID = sha256, memo', async (t) => {
  const tx = await trxTransfer()
  const raw = tronDecodeRaw(hexToBytes(tx.raw_data_hex))
  t.equal(tx.txID, tronTransactionId(hexToBytes(tx.raw_data_hex)))
  t.equal(raw.contract.type, 'TransferContract')
  if (raw.contract.type === 'TransferContract') {
    t.equal(tronBase58(raw.contract.owner), alice.address)
    t.equal(tronBase58(raw.contract.to), bob.address)
    t.equal(raw.contract.amount, 1_000_000n)
  }
  t.equal(bytesToHex(raw.data), tag)
  t.equal(tx.raw_data.data, tag)
  t.ok(tx.raw_data_hex.startsWith('0a02'), 'field 1 (ref_block_bytes) first')
  t.match(tx.raw_data_hex, /5220c0ffee/, 'field 10 (data) holds the memo')
  const head = (await call('/wallet/getnowblock')) as { block_header: { raw_data: { timestamp: number } } }
  t.equal(tx.raw_data.expiration, head.block_header.raw_data.timestamp + 60_000)
  const hexForm = await call('/wallet/createtransaction', {
    owner_address: alice.hexAddress,
    to_address: bob.hexAddress,
    amount: 5,
    visible: false,
  })
  const contract = (hexForm.raw_data as TronTransactionJson['raw_data']).contract[0]
  t.equal(contract?.parameter.value.owner_address, alice.hexAddress, 'visible false: 41-hex addresses')
  const poor = await call('/wallet/createtransaction', {
    owner_address: TRON_EMPTY.address,
    to_address: bob.address,
    amount: 1,
    visible: true,
  })
  t.match(poor.Error, /no OwnerAccount/)
})

t.test('broadcast: a TRX transfer is accepted, charged and put in a block', async (t) => {
  const before = { alice: devnet.trxBalance(alice.address), bob: devnet.trxBalance(bob.address) }
  const tx = await trxTransfer()
  const signed = tronSignTransaction(alice.privateKey, tx)
  t.same(await broadcast(signed), { result: true, txid: tx.txID })
  const fee = tronBandwidthBytes(tx.raw_data_hex.length / 2, 1) * TRON_TRANSACTION_FEE_SUN
  t.equal(devnet.trxBalance(alice.address), before.alice - 1_000_000n - fee)
  t.equal(devnet.trxBalance(bob.address), before.bob + 1_000_000n)
  const pending = await call('/wallet/gettransactionbyid', { value: tx.txID, visible: true })
  t.equal(pending.txID, tx.txID, 'accepted, not in a block yet: the full node serves it')
  t.equal(pending.raw_data_hex, tx.raw_data_hex)
  t.same(pending.signature, signed.signature)
  t.notOk('ret' in pending, 'no contract result before it is in a block')
  t.same(await call('/wallet/gettransactioninfobyid', { value: tx.txID }), {}, 'no info until mined')
  t.same(
    await call('/walletsolidity/gettransactionbyid', { value: tx.txID }),
    {},
    'the solidity node does not serve it',
  )
  t.same(await call('/wallet/gettransactionbyid', { value: 'ab'.repeat(32) }), {}, 'unknown')
  const [block] = devnet.mine(1)
  const byId = await call('/wallet/gettransactionbyid', { value: tx.txID, visible: true })
  t.same(byId.ret, [{ contractRet: 'SUCCESS' }])
  t.equal(byId.raw_data_hex, tx.raw_data_hex)
  const info = await call('/wallet/gettransactioninfobyid', { value: tx.txID })
  t.equal(info.blockNumber, block?.number)
  t.equal(info.fee, Number(fee))
  t.same(info.receipt, { net_fee: Number(fee) })
  const inBlock = await call('/wallet/getblockbynum', { num: block?.number })
  t.same(
    (inBlock.transactions as { txID: string }[]).map((entry) => entry.txID),
    [tx.txID],
  )
  const duplicate = await broadcast(signed)
  t.equal(duplicate.code, 'DUP_TRANSACTION_ERROR')
  t.equal(duplicate.result, false)
})

t.test('broadcast: refusals', async (t) => {
  const tx = await trxTransfer()
  const signed = tronSignTransaction(alice.privateKey, tx)
  const bad = await broadcast({ ...signed, signature: [`${'11'.repeat(64)}1b`] })
  t.equal(bad.code, 'SIGERROR', 'a signature that does not recover to the owner')
  const wrongOwner = await broadcast(tronSignTransaction(bob.privateKey, tx))
  t.equal(wrongOwner.code, 'SIGERROR', "bob's signature on alice's transfer")
  t.match(text(wrongOwner.message), /not the owner/)
  const noSignature = await broadcast({ ...tx })
  t.equal(noSignature.code, 'SIGERROR')
  const mismatch = await broadcast({ ...signed, txID: 'ab'.repeat(32) })
  t.equal(mismatch.code, 'SIGERROR', 'txID is not sha256(raw_data_hex)')
  t.match(text(mismatch.message), /txID does not match/)
  const tampered = await broadcast({
    ...signed,
    raw_data: { ...tx.raw_data, expiration: tx.raw_data.expiration + 1 },
  })
  t.equal(tampered.code, 'OTHER_ERROR', 'raw_data must say what raw_data_hex says')

  const raw = tronDecodeRaw(hexToBytes(tx.raw_data_hex))
  const expired = tronTransactionJson(tronWithExpiration(raw, raw.timestamp - 120_000), true)
  const expiredAnswer = await broadcast(tronSignTransaction(alice.privateKey, expired))
  t.equal(expiredAnswer.code, 'TRANSACTION_EXPIRATION_ERROR')
  const tooFar = tronTransactionJson(tronWithExpiration(raw, raw.timestamp + 2 * 86_400_000), true)
  t.equal(
    (await broadcast(tronSignTransaction(alice.privateKey, tooFar))).code,
    'TRANSACTION_EXPIRATION_ERROR',
  )
  const unknownRef = tronTransactionJson({ ...raw, refBlockHash: new Uint8Array(8).fill(7) }, true)
  t.equal((await broadcast(tronSignTransaction(alice.privateKey, unknownRef))).code, 'TAPOS_ERROR')

  const rich = await trxTransfer(alice, bob.address, Number(devnet.trxBalance(alice.address)))
  const overspend = await broadcast(tronSignTransaction(alice.privateKey, rich))
  t.equal(overspend.code, 'CONTRACT_VALIDATE_ERROR', 'amount + bandwidth above the balance')
  t.match(text(overspend.message), /balance is not sufficient/)

  devnet.fundTrx(TRON_EMPTY.address, 10n)
  const broke = await trxTransfer(TRON_EMPTY, bob.address, 1)
  t.equal((await broadcast(tronSignTransaction(TRON_EMPTY.privateKey, broke))).code, 'BANDWITH_ERROR')
  t.equal(devnet.trxBalance(TRON_EMPTY.address), 10n, 'nothing charged for a refused transaction')
})

t.test('TRC20: transfer with a tag after the arguments, energy, Transfer event, balanceOf', async (t) => {
  const vaultBefore = devnet.usdtBalance(TRON_VAULT.address)
  const trxBefore = devnet.trxBalance(alice.address)
  const tx = await usdtTransfer(alice, TRON_VAULT.address, 3_000_000n)
  const raw = tronDecodeRaw(hexToBytes(tx.raw_data_hex))
  t.equal(raw.feeLimit, 100_000_000n)
  t.ok(
    tx.raw_data.contract[0]?.parameter.value.data?.toString().endsWith(tag),
    'the tag is kept after the arguments',
  )
  const estimate = await call('/wallet/triggerconstantcontract', {
    owner_address: alice.address,
    contract_address: TRON_USDT_ADDRESS,
    function_selector: 'transfer(address,uint256)',
    parameter: usdtParameter(TRON_VAULT.address, 3_000_000n, tag),
    visible: true,
  })
  t.equal(estimate.energy_used, Number(TRON_TRC20_TRANSFER_ENERGY), 'the vault already holds USDT')
  t.same(await broadcast(tronSignTransaction(alice.privateKey, tx)), { result: true, txid: tx.txID })
  devnet.mine(1)
  t.equal(devnet.usdtBalance(TRON_VAULT.address), vaultBefore + 3_000_000n)
  const netFee = tronBandwidthBytes(tx.raw_data_hex.length / 2, 1) * TRON_TRANSACTION_FEE_SUN
  const energyFee = TRON_TRC20_TRANSFER_ENERGY * TRON_ENERGY_FEE_SUN
  t.equal(devnet.trxBalance(alice.address), trxBefore - netFee - energyFee)
  const info = await call('/wallet/gettransactioninfobyid', { value: tx.txID })
  t.same(info.receipt, {
    net_fee: Number(netFee),
    energy_fee: Number(energyFee),
    energy_usage_total: Number(TRON_TRC20_TRANSFER_ENERGY),
    result: 'SUCCESS',
  })
  t.equal(info.contract_address, bytesToHex(tronAddressBytes(TRON_USDT_ADDRESS) as Uint8Array))
  const [log] = info.log as { address: string; topics: string[]; data: string }[]
  t.equal(log?.topics[0], TRON_TRANSFER_TOPIC)
  t.equal(log?.topics[2], TRON_VAULT.hexAddress.slice(2).padStart(64, '0'))
  t.equal(BigInt(`0x${log?.data}`), 3_000_000n)
  const balance = await call('/wallet/triggerconstantcontract', {
    owner_address: TRON_VAULT.address,
    contract_address: TRON_USDT_ADDRESS,
    function_selector: 'balanceOf(address)',
    parameter: usdtParameter(TRON_VAULT.address, 0n).slice(0, 64),
    visible: true,
  })
  t.equal(BigInt(`0x${(balance.constant_result as string[])[0]}`), vaultBefore + 3_000_000n)
})

t.test('TRC20: new holder energy, fee_limit too low, insufficient tokens revert', async (t) => {
  const newHolder = await call('/wallet/triggerconstantcontract', {
    owner_address: alice.address,
    contract_address: TRON_USDT_ADDRESS,
    function_selector: 'transfer(address,uint256)',
    parameter: usdtParameter(TRON_EMPTY.address, 1n),
    visible: true,
  })
  t.equal(newHolder.energy_used, Number(TRON_TRC20_NEW_HOLDER_ENERGY))
  const low = await usdtTransfer(alice, TRON_EMPTY.address, 1n, 1_000_000)
  const lowAnswer = await broadcast(tronSignTransaction(alice.privateKey, low))
  t.equal(lowAnswer.code, 'CONTRACT_VALIDATE_ERROR')
  t.match(text(lowAnswer.message), /fee_limit/)
  const tooMuch = await usdtTransfer(bob, alice.address, devnet.usdtBalance(bob.address) + 1n)
  t.equal(
    (await broadcast(tronSignTransaction(bob.privateKey, tooMuch))).result,
    true,
    'accepted: the contract decides',
  )
  devnet.mine(1)
  const byId = await call('/wallet/gettransactionbyid', { value: tooMuch.txID })
  t.same(byId.ret, [{ contractRet: 'REVERT' }])
  const info = await call('/wallet/gettransactioninfobyid', { value: tooMuch.txID })
  t.equal((info.receipt as { result: string }).result, 'REVERT')
  t.notOk(info.log, 'a reverted transfer emits nothing')
  const other = await call('/wallet/triggersmartcontract', {
    owner_address: alice.address,
    contract_address: TRON_SOLVER.address,
    function_selector: 'transfer(address,uint256)',
    parameter: usdtParameter(bob.address, 1n),
    fee_limit: 1,
    visible: true,
  })
  t.equal((other.result as { code: string }).code, 'CONTRACT_VALIDATE_ERROR', 'no contract at that address')
})

t.test('TRC20: an address word carrying the 41 prefix pays the low 20 bytes', async (t) => {
  const before = devnet.usdtBalance(bob.address)
  const parameter = usdtParameter(bob.address, 9n, tag).replace(/^0{24}/, `${'0'.repeat(22)}41`)
  const answer = await call('/wallet/triggersmartcontract', {
    owner_address: alice.address,
    contract_address: TRON_USDT_ADDRESS,
    function_selector: 'transfer(address,uint256)',
    parameter,
    fee_limit: 100_000_000,
    visible: true,
  })
  const tx = answer.transaction as TronTransactionJson
  t.equal((await broadcast(tronSignTransaction(alice.privateKey, tx))).result, true)
  devnet.mine(1)
  t.same((await call('/wallet/gettransactionbyid', { value: tx.txID })).ret, [{ contractRet: 'SUCCESS' }])
  t.equal(devnet.usdtBalance(bob.address), before + 9n)
})

t.test('lookups: accounts, resources, parameters, blocks, solidity', async (t) => {
  t.same(
    await call('/wallet/getaccount', { address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', visible: true }),
    {},
  )
  const account = await call('/wallet/getaccount', { address: TRON_SOLVER.address, visible: true })
  t.equal(account.address, TRON_SOLVER.address)
  t.equal(BigInt(account.balance as number), devnet.trxBalance(TRON_SOLVER.address))
  t.same(
    await call('/wallet/getaccountresource', {
      address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW',
      visible: true,
    }),
    {},
  )
  t.equal(
    (await call('/wallet/getaccountresource', { address: alice.address, visible: true })).freeNetLimit,
    0,
  )
  const parameters = (await call('/wallet/getchainparameters')).chainParameter as {
    key: string
    value: number
  }[]
  t.equal(
    parameters.find((entry) => entry.key === 'getTransactionFee')?.value,
    Number(TRON_TRANSACTION_FEE_SUN),
  )
  t.equal(parameters.find((entry) => entry.key === 'getEnergyFee')?.value, Number(TRON_ENERGY_FEE_SUN))
  t.same(await call('/wallet/getblockbynum', { num: 1_000_000 }), {})
  const tx = await trxTransfer(bob, alice.address, 7)
  await broadcast(tronSignTransaction(bob.privateKey, tx))
  devnet.mine(1)
  t.same(
    await call('/walletsolidity/gettransactioninfobyid', { value: tx.txID }),
    {},
    'not solid after 1 block',
  )
  devnet.mine(18)
  t.equal(
    (await call('/walletsolidity/gettransactioninfobyid', { value: tx.txID })).id,
    tx.txID,
    'solid after 19',
  )
  const bad = await call('/wallet/getaccount', { address: '0x1234' })
  t.match(bad.Error, /Invalid address/)
  const response = await fetch(`${devnet.url}/wallet/nosuchmethod`, { method: 'POST', body: '{}' })
  t.equal(response.status, 404)
  await response.text()
})

t.test('blocks are produced on a timer', async (t) => {
  const timed = await startTronDevnet({ port: 0, blockIntervalMs: 50 })
  t.teardown(() => timed.stop())
  const start = timed.chain.head.number
  await waitFor('two blocks from the timer', () => timed.chain.head.number, {
    until: (head) => head >= start + 2,
  })
  t.ok(timed.chain.head.number >= start + 2, 'blocks come without mining by hand')
})

t.test('getblockbylimitnext: blocks startNum ≤ n < endNum with their transactions', async (t) => {
  const tx = await trxTransfer(alice, bob.address, 3)
  t.equal((await broadcast(tronSignTransaction(alice.privateKey, tx))).result, true)
  const [withTx] = devnet.mine(3)
  const first = withTx?.number ?? -1
  const page = await call('/wallet/getblockbylimitnext', {
    startNum: first,
    endNum: first + 3,
    visible: true,
  })
  const blocks = page.block as {
    blockID: string
    block_header: { raw_data: { number: number } }
    transactions?: {
      txID: string
      raw_data: TronTransactionJson['raw_data']
      raw_data_hex: string
      ret: { contractRet: string }[]
    }[]
  }[]
  t.same(
    blocks.map((block) => block.block_header.raw_data.number),
    [first, first + 1, first + 2],
  )
  t.same(
    blocks[0]?.transactions?.map((entry) => entry.txID),
    [tx.txID],
  )
  const served = blocks[0]?.transactions?.[0]
  t.same(served?.ret, [{ contractRet: 'SUCCESS' }], 'mined: with its contract result')
  t.equal(served?.raw_data_hex, tx.raw_data_hex)
  t.same(served?.raw_data, tx.raw_data, 'raw_data rendered as asked (visible)')
  t.notOk(blocks[1]?.transactions, 'an empty block has no transactions member')
  const byNum = await call('/wallet/getblockbynum', { num: first, visible: true })
  t.same(byNum, blocks[0], 'the same block as getblockbynum')
  const head = devnet.chain.head.number
  const pastHead = await call('/wallet/getblockbylimitnext', { startNum: head, endNum: head + 10 })
  t.same((pastHead.block as unknown[]).length, 1, 'only the blocks that exist')
  t.same(await call('/wallet/getblockbylimitnext', { startNum: head + 1, endNum: head + 5 }), {}, 'none yet')
  t.same(await call('/wallet/getblockbylimitnext', { startNum: 5, endNum: 5 }), {}, 'an empty range')
  t.same(
    await call('/wallet/getblockbylimitnext', { startNum: 0, endNum: TRON_BLOCK_LIMIT_NUM + 1 }),
    {},
    'more than the limit',
  )
  t.equal(
    (
      (
        await call('/wallet/getblockbylimitnext', {
          startNum: 0,
          endNum: Math.min(head + 1, TRON_BLOCK_LIMIT_NUM),
        })
      ).block as unknown[]
    ).length,
    Math.min(head + 1, TRON_BLOCK_LIMIT_NUM),
  )
})
