/**
 * signSvmTransaction (the browser-safe signer of svmKeypairWallet) against @solana/web3.js: ed25519
 * signatures are deterministic, so signing a transaction with both must give the same bytes, for
 * versioned and legacy messages and for a signer that is not the fee payer.
 */
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import t from 'tap'
import {
  base64ToBytes,
  bytesToBase64,
  hexToBytes,
  signSvmTransaction,
  svmKeypairSigner,
} from '../src/index.js'

const payer = Keypair.fromSeed(new Uint8Array(32).fill(7))
const cosigner = Keypair.fromSeed(new Uint8Array(32).fill(9))
const blockhash = new PublicKey(new Uint8Array(32).fill(3)).toBase58()
const instructions = [
  SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: cosigner.publicKey, lamports: 5 }),
  SystemProgram.transfer({ fromPubkey: cosigner.publicKey, toPubkey: payer.publicKey, lamports: 1 }),
]

t.test('a versioned transaction signed by both signers matches web3.js byte for byte', async (t) => {
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions,
  }).compileToV0Message()
  const unsigned = bytesToBase64(new VersionedTransaction(message).serialize())
  const ours = await signSvmTransaction(
    await signSvmTransaction(unsigned, svmKeypairSigner(cosigner)),
    svmKeypairSigner(payer),
  )
  const reference = new VersionedTransaction(message)
  reference.sign([payer, cosigner])
  t.equal(ours, bytesToBase64(reference.serialize()))
})

t.test('a legacy transaction matches web3.js too', async (t) => {
  const legacy = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    instructions[0] as (typeof instructions)[0],
  )
  const unsigned = bytesToBase64(legacy.serialize({ requireAllSignatures: false, verifySignatures: false }))
  legacy.sign(payer)
  t.equal(await signSvmTransaction(unsigned, svmKeypairSigner(payer)), bytesToBase64(legacy.serialize()))
})

t.test('a key that is not a required signer is refused; base64 and hex helpers round-trip', async (t) => {
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [instructions[0] as (typeof instructions)[0]],
  }).compileToV0Message()
  const unsigned = bytesToBase64(new VersionedTransaction(message).serialize())
  await t.rejects(signSvmTransaction(unsigned, svmKeypairSigner(Keypair.generate())), /not a required signer/)
  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
  t.same(base64ToBytes(bytesToBase64(bytes)), bytes)
  t.same(hexToBytes(Buffer.from(bytes).toString('hex')), bytes, 'hex as served (PSBTs) decodes')
  t.same(hexToBytes(''), new Uint8Array(0))
  t.same(hexToBytes('0x00ff'), new Uint8Array([0, 255]), 'a 0x prefix is accepted')
  t.throws(() => hexToBytes('abc'), TypeError, 'an odd digit count is refused')
  t.throws(() => svmKeypairSigner({ secretKey: new Uint8Array(32) }), TypeError)
})
