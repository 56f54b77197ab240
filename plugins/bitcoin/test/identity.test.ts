import { PontisError } from '@pontis/core/plugin'
import * as btc from '@scure/btc-signer'
import t from 'tap'
import {
  addressOfScript,
  BITCOIN_NATIVE_CURRENCY_ID,
  type BitcoinNetworkName,
  createBitcoinIdentity,
  ECPair,
  parseAddress,
} from '../src/index.js'

const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }

// Independent addresses: @scure/btc-signer, from one fixed key.
const key = ECPair.fromPrivateKey(new Uint8Array(32).fill(7))
const publicKey = key.publicKey
const xOnly = publicKey.subarray(1)
const scriptHash = new Uint8Array(32).fill(9)

function addressesOf(network: typeof btc.NETWORK) {
  return {
    p2pkh: btc.p2pkh(publicKey, network).address as string,
    p2sh: btc.p2sh(btc.p2wpkh(publicKey, network), network).address as string,
    p2wpkh: btc.p2wpkh(publicKey, network).address as string,
    p2wsh: btc.Address(network).encode({ type: 'wsh', hash: scriptHash }),
    p2tr: btc.p2tr(xOnly, undefined, network).address as string,
  }
}

const ADDRESSES: Record<BitcoinNetworkName, ReturnType<typeof addressesOf>> = {
  bitcoin: addressesOf(btc.NETWORK),
  testnet: addressesOf(btc.TEST_NETWORK),
  regtest: addressesOf(REGTEST),
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    if (error instanceof PontisError) return error.code
    throw error
  }
  return undefined
}

function messageOf(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    return (error as Error).message
  }
  return ''
}

t.test('every address type of the configured network is valid and kept in canonical form', async (t) => {
  for (const network of ['bitcoin', 'testnet', 'regtest'] as const) {
    const identity = createBitcoinIdentity(network, { id: 8253038, displayName: 'Bitcoin' })
    for (const [type, address] of Object.entries(ADDRESSES[network])) {
      t.ok(identity.isValidAddress(address), `${network} ${type} ${address}`)
      t.equal(identity.normalizeAddress(address, 'user'), address)
      const parsed = parseAddress(address, network)
      t.equal('parsed' in parsed && parsed.parsed.type, type)
      // encodeAddress is the output script, as @scure/btc-signer computes it.
      const script = btc.OutScript.encode(
        btc
          .Address(network === 'bitcoin' ? btc.NETWORK : network === 'testnet' ? btc.TEST_NETWORK : REGTEST)
          .decode(address),
      )
      t.equal(identity.encodeAddress(address, 'recipient'), `0x${Buffer.from(script).toString('hex')}`)
      t.equal(addressOfScript(script, network), address, 'the script maps back to the address')
    }
  }
})

t.test('well-known mainnet vectors', async (t) => {
  const identity = createBitcoinIdentity('bitcoin')
  for (const address of [
    '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
    '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
  ]) {
    t.ok(identity.isValidAddress(address), address)
  }
  t.equal(
    identity.encodeAddress('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'user'),
    '0x0014751e76e8199196d454941c45d1b3a323f1433bd6',
  )
  t.equal(
    identity.encodeAddress('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'user'),
    '0x76a91477bff20c60e522dfaa3350c39b030a5d004e839a88ac',
  )
})

t.test('bech32 case: all upper case is the same address, mixed case is refused', async (t) => {
  const identity = createBitcoinIdentity('bitcoin')
  const upper = 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4'
  t.equal(identity.normalizeAddress(upper, 'user'), upper.toLowerCase())
  const mixed = 'bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'
  t.notOk(identity.isValidAddress(mixed))
  t.equal(
    codeOf(() => identity.normalizeAddress(mixed, 'user')),
    'INVALID_ADDRESS',
  )
  t.match(
    messageOf(() => identity.normalizeAddress(mixed, 'user')),
    /never mixed/,
  )
})

t.test('base58 is case-sensitive: another case breaks the checksum', async (t) => {
  const identity = createBitcoinIdentity('bitcoin')
  const address = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'
  const flipped = `1bvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2`
  t.notOk(identity.isValidAddress(flipped))
  t.equal(
    codeOf(() => identity.normalizeAddress(flipped, 'recipient')),
    'INVALID_RECIPIENT',
  )
  t.match(
    messageOf(() => identity.normalizeAddress(flipped, 'recipient')),
    /case-sensitive/,
  )
  t.ok(identity.isValidAddress(address))
})

t.test('an address of another network is refused with a message that names both', async (t) => {
  const mainnet = createBitcoinIdentity('bitcoin', { id: 8253038, displayName: 'Bitcoin' })
  for (const [type, address] of Object.entries(ADDRESSES.testnet)) {
    t.notOk(mainnet.isValidAddress(address), `testnet ${type} on mainnet`)
    t.match(
      messageOf(() => mainnet.normalizeAddress(address, 'user')),
      /testnet.*this chain is Bitcoin mainnet/,
    )
  }
  const regtest = createBitcoinIdentity('regtest')
  for (const [type, address] of Object.entries(ADDRESSES.bitcoin)) {
    t.notOk(regtest.isValidAddress(address), `mainnet ${type} on regtest`)
    t.match(
      messageOf(() => regtest.normalizeAddress(address, 'recipient')),
      /Bitcoin mainnet address but this chain is Bitcoin regtest/,
    )
  }
  // tb1 and bcrt1 are told apart; testnet and regtest share their base58 versions (a known limit).
  t.match(
    messageOf(() => regtest.normalizeAddress(ADDRESSES.testnet.p2wpkh, 'user')),
    /testnet\/signet/,
  )
  t.ok(regtest.isValidAddress(ADDRESSES.testnet.p2pkh))
})

t.test('EVM and SVM addresses, junk and the native id are not addresses', async (t) => {
  const identity = createBitcoinIdentity('bitcoin', { id: 8253038, displayName: 'Bitcoin' })
  t.match(
    messageOf(() => identity.normalizeAddress('0x1111111111111111111111111111111111111111', 'user')),
    /EVM address/,
  )
  t.match(
    messageOf(() => identity.normalizeAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'user')),
    /SVM public key/,
  )
  t.match(
    messageOf(() => identity.normalizeAddress(BITCOIN_NATIVE_CURRENCY_ID, 'recipient')),
    /native currency identifier/,
  )
  t.equal(
    codeOf(() => identity.normalizeAddress(BITCOIN_NATIVE_CURRENCY_ID, 'recipient')),
    'INVALID_RECIPIENT',
  )
  for (const junk of ['', 'bc1', 'bc1qqqqq', 'hello', `bc1q${'q'.repeat(100)}`]) {
    t.notOk(identity.isValidAddress(junk), JSON.stringify(junk))
  }
  // A future witness version is not an output type this plugin pays or reads.
  t.notOk(identity.isValidAddress('bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs'))
  t.match(
    messageOf(() => identity.normalizeAddress('x'.repeat(200), 'user')),
    /expected a Bitcoin mainnet address/,
  )
})

t.test('the native currency id is a currency only; nothing else is a currency', async (t) => {
  const identity = createBitcoinIdentity('regtest', { id: 8253038, displayName: 'Bitcoin' })
  t.equal(identity.nativeCurrencyId, 'bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmql8k8')
  t.equal(identity.normalizeCurrency(BITCOIN_NATIVE_CURRENCY_ID, 'input'), BITCOIN_NATIVE_CURRENCY_ID)
  t.equal(identity.encodeAddress(BITCOIN_NATIVE_CURRENCY_ID, 'currency'), '0x')
  t.equal(
    codeOf(() => identity.normalizeCurrency(ADDRESSES.regtest.p2wpkh, 'input')),
    'INVALID_INPUT_CURRENCY',
  )
  t.equal(
    codeOf(() => identity.normalizeCurrency('0x0000000000000000000000000000000000000000', 'output')),
    'INVALID_OUTPUT_CURRENCY',
  )
  t.equal(
    codeOf(() => identity.normalizeCurrency(BITCOIN_NATIVE_CURRENCY_ID.toUpperCase())),
    'UNSUPPORTED_CURRENCY',
  )
  t.equal(
    codeOf(() => identity.encodeAddress(ADDRESSES.regtest.p2wpkh, 'currency')),
    'UNSUPPORTED_CURRENCY',
  )
})

t.test('transaction ids encode to their 32 bytes as displayed', async (t) => {
  const identity = createBitcoinIdentity('bitcoin')
  const txid = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b'
  t.equal(identity.encodeTransactionId(txid), `0x${txid}`)
  t.equal(identity.encodeTransactionId(txid.toUpperCase()), `0x${txid}`)
  t.equal(identity.encodeTransactionId(`0x${txid}`), `0x${txid}`)
  t.equal(
    codeOf(() => identity.encodeTransactionId(txid.slice(2))),
    'INVALID_REQUEST',
  )
  t.equal(
    codeOf(() => identity.encodeTransactionId('5'.repeat(88))),
    'INVALID_REQUEST',
  )
})
