/**
 * The plugin's copy of the transfer signing rules agrees byte for byte with the simulator's
 * (message, signature, hash), and the fields are range-checked.
 */
import { LIGHTER_SOLVER, lighterSignTransfer, lighterTransferMessage } from '@pontis/devnet'
import t from 'tap'
import { type LighterTransfer, signTransfer, transferHash, transferMessage } from '../src/index.js'

const transfer: LighterTransfer = {
  FromAccountIndex: 281_474_976_710_001,
  ApiKeyIndex: 3,
  ToAccountIndex: 1000,
  AssetIndex: 3,
  FromRouteType: 0,
  ToRouteType: 1,
  Amount: 9_007_199_254_740_991,
  USDCFee: 10_000,
  Memo: `0x${'C0'.repeat(32)}`,
  ExpiredAt: 1_800_000_000_000,
  Nonce: 42,
}

t.test('the plugin signs and hashes exactly as the simulator', async (t) => {
  t.same(Buffer.from(transferMessage(transfer)), Buffer.from(lighterTransferMessage(transfer)))
  const mine = signTransfer(transfer, LIGHTER_SOLVER.apiKeySeed)
  const theirs = lighterSignTransfer(transfer, LIGHTER_SOLVER.apiKeySeed)
  t.equal(mine.Sig, theirs.info.Sig)
  t.equal(transferHash(mine), theirs.hash)
  t.equal(mine.Memo, transfer.Memo.toLowerCase())
  t.not(transferHash({ ...mine, Nonce: 43 }), theirs.hash, 'the hash covers the fields')
})

t.test('fields out of range are refused', async (t) => {
  t.throws(() => transferMessage({ ...transfer, ApiKeyIndex: 256 }), RangeError)
  t.throws(() => transferMessage({ ...transfer, Amount: -1 }), RangeError)
  t.throws(() => transferMessage({ ...transfer, Amount: 2 ** 53 }), RangeError)
  t.throws(() => transferMessage({ ...transfer, Memo: '0x1234' }), TypeError)
})
