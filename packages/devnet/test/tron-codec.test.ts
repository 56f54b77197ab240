/**
 * The Tron wire formats against real node output: raw data of a TransferContract and of a
 * TriggerSmartContract (with fee_limit) as java-tron served them, their txIDs, a real signature's
 * signer, and a base58 address with its hex form.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import t from 'tap'
import {
  tronAddressBytes,
  tronDecodeRaw,
  tronEncodeRaw,
  tronRawToJson,
  tronRecoverSigner,
  tronTransactionId,
} from '../src/index.js'

const TRANSFER = {
  txID: '88817b9c6276e3c535e4f8f15baf546292ca6ad9d44a7d97857bd6f8909d63d4',
  rawHex:
    '0a0202a22208e216e254e43ee10840c8cbe4e3df2d5a67080112630a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412320a15415c68cc82c87446f602f019e5fd797437f5b79cc212154156a6076cd1537fa317c2606e4edfa4acd3e8e92e18a08d06709084e1e3df2d',
}

const TRIGGER = {
  txID: 'c70b20da8cb8d96a99c1aceb283412acb9dea313a9e467178431a3c6ae8b9f08',
  signature:
    '1788bf0281f67c42f5a09322523edee9969e808a863776f21ab6543de9dd42ca0e4955577879df8074086c620eb96709ba9a95d60a166de190a081e8d69801da00',
  rawHex:
    '0a028ad92208eaef69105495eb1540f09fc0cfcd335aae01081f12a9010a31747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412740a1541495511a493d8c362be4267224e6d81013a6862ee121541eca9bc828a3005b9a3b909f2cc5c2a54794de05f2244a9059cbb00000000000000000000004150125bea243a640bf85348873b6c4f3c517aee7a00000000000000000000000000000000000000000000000000000000000000017090cbbccfcd33900180c2d72f',
}

t.test('a real TransferContract decodes, re-encodes byte for byte, hashes to its txID', async (t) => {
  const raw = tronDecodeRaw(hexToBytes(TRANSFER.rawHex))
  t.equal(bytesToHex(tronEncodeRaw(raw)), TRANSFER.rawHex)
  t.equal(tronTransactionId(hexToBytes(TRANSFER.rawHex)), TRANSFER.txID)
  t.same(tronRawToJson(raw, false), {
    contract: [
      {
        parameter: {
          value: {
            amount: 100000,
            owner_address: '415c68cc82c87446f602f019e5fd797437f5b79cc2',
            to_address: '4156a6076cd1537fa317c2606e4edfa4acd3e8e92e',
          },
          type_url: 'type.googleapis.com/protocol.TransferContract',
        },
        type: 'TransferContract',
      },
    ],
    ref_block_bytes: '02a2',
    ref_block_hash: 'e216e254e43ee108',
    expiration: 1571898861000,
    timestamp: 1571898802704,
  })
})

t.test('a real TriggerSmartContract with fee_limit; its signature recovers to the owner', async (t) => {
  const raw = tronDecodeRaw(hexToBytes(TRIGGER.rawHex))
  t.equal(bytesToHex(tronEncodeRaw(raw)), TRIGGER.rawHex)
  t.equal(tronTransactionId(hexToBytes(TRIGGER.rawHex)), TRIGGER.txID)
  t.equal(raw.feeLimit, 100_000_000n)
  t.equal(raw.expiration, 1773182914544)
  t.equal(raw.contract.type, 'TriggerSmartContract')
  const signer = tronRecoverSigner(TRIGGER.txID, TRIGGER.signature)
  t.equal(signer && bytesToHex(signer), '41495511a493d8c362be4267224e6d81013a6862ee')
  const v27 = `${TRIGGER.signature.slice(0, 128)}1b`
  t.same(tronRecoverSigner(TRIGGER.txID, v27), signer, 'v = 27 is the same signature')
  t.equal(tronRecoverSigner(TRIGGER.txID, `${TRIGGER.signature.slice(0, 128)}05`), undefined)
})

t.test('base58check and hex forms of a real address', async (t) => {
  t.equal(
    bytesToHex(tronAddressBytes('TPswDDCAWhJAZGdHPidFg5nEf8TkNToDX1') as Uint8Array),
    '4198927ffb9f554dc4a453c64b2e553a02d6df514b',
  )
  t.equal(tronAddressBytes('TPswDDCAWhJAZGdHPidFg5nEf8TkNToDX2'), undefined, 'checksum')
  t.equal(tronAddressBytes('0x98927ffb9f554dc4a453c64b2e553a02d6df514b'), undefined)
})
