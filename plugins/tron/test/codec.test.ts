/**
 * The plugin's copy of the Tron wire formats against real node output (independent of the devnet):
 * a TransferContract's raw data and txID, a TriggerSmartContract's signature, and reading tagged
 * transfers out of raw data.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import t from 'tap'
import { tronRecoverSigner, tronSignTransaction } from '../src/codec.js'
import {
  TRON_NATIVE_CURRENCY_ID,
  taggedTransferOf,
  tronBase58,
  tronDecodeRaw,
  tronEncodeRaw,
  tronTransactionId,
} from '../src/index.js'

const TRANSFER_HEX =
  '0a0202a22208e216e254e43ee10840c8cbe4e3df2d5a67080112630a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412320a15415c68cc82c87446f602f019e5fd797437f5b79cc212154156a6076cd1537fa317c2606e4edfa4acd3e8e92e18a08d06709084e1e3df2d'
const TRIGGER_TXID = 'c70b20da8cb8d96a99c1aceb283412acb9dea313a9e467178431a3c6ae8b9f08'
const TRIGGER_SIGNATURE =
  '1788bf0281f67c42f5a09322523edee9969e808a863776f21ab6543de9dd42ca0e4955577879df8074086c620eb96709ba9a95d60a166de190a081e8d69801da00'

t.test('real raw data round-trips and hashes to its txID', async (t) => {
  const raw = tronDecodeRaw(hexToBytes(TRANSFER_HEX))
  t.equal(bytesToHex(tronEncodeRaw(raw)), TRANSFER_HEX)
  t.equal(
    tronTransactionId(hexToBytes(TRANSFER_HEX)),
    '88817b9c6276e3c535e4f8f15baf546292ca6ad9d44a7d97857bd6f8909d63d4',
  )
  t.equal(taggedTransferOf(raw), undefined, 'no memo: no tagged transfer')
  const tagged = taggedTransferOf({ ...raw, data: new Uint8Array(32).fill(0xab) })
  t.same(tagged, {
    from: tronBase58(hexToBytes('415c68cc82c87446f602f019e5fd797437f5b79cc2')),
    to: tronBase58(hexToBytes('4156a6076cd1537fa317c2606e4edfa4acd3e8e92e')),
    currencyId: TRON_NATIVE_CURRENCY_ID,
    amount: 100_000n,
    tag: `0x${'ab'.repeat(32)}`,
  })
  t.equal(
    taggedTransferOf({ ...raw, data: new Uint8Array(31) }),
    undefined,
    'a memo of another size is no tag',
  )
})

t.test('signatures: a real one recovers to its owner; ours recover to the key', async (t) => {
  t.equal(
    bytesToHex(tronRecoverSigner(TRIGGER_TXID, TRIGGER_SIGNATURE) as Uint8Array),
    '41495511a493d8c362be4267224e6d81013a6862ee',
  )
  const key = `0x${'11'.repeat(32)}`
  const signed = tronSignTransaction(key, { txID: TRIGGER_TXID })
  t.match(signed.signature[0], /^[0-9a-f]{128}(1b|1c)$/)
  t.ok(tronRecoverSigner(TRIGGER_TXID, signed.signature[0] as string))
})
