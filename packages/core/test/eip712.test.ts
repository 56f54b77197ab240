import t from 'tap'
import { getAddress, type Hex, hashStruct, hashTypedData, keccak256 } from 'viem'
import {
  createStructHasher,
  createTypedDataHasher,
  type Eip712Types,
  hashOrderStruct,
  keccak256Hex,
  ORDER_TYPES,
} from '../src/index.js'

/** mulberry32: a seeded PRNG, so a failing case reproduces from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const SEED = 0x5eed712
const MAX_UINT256 = 2n ** 256n - 1n
const MAX_UINT32 = 2 ** 32 - 1

function generators(random: () => number) {
  const int = (below: number) => Math.floor(random() * below)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  const hexBytes = (length: number): Hex => {
    let hex = '0x'
    for (let i = 0; i < length; i++) hex += int(256).toString(16).padStart(2, '0')
    // Upper-case hex digits are valid bytes too.
    return (random() < 0.2 ? `0x${hex.slice(2).toUpperCase()}` : hex) as Hex
  }
  const bytes = () => hexBytes(pick([0, 0, 1, 20, 31, 32, 33, 64, 135, 136, 137, int(300)]))
  const uint256 = (): bigint | number => {
    switch (int(6)) {
      case 0:
        return pick([0n, 0])
      case 1:
        return MAX_UINT256
      case 2:
        return pick([BigInt(Number.MAX_SAFE_INTEGER) + 1n, Number.MAX_SAFE_INTEGER, int(1e9)])
      default:
        return BigInt(hexBytes(1 + int(32)))
    }
  }
  const uint32 = (): number | bigint =>
    pick<number | bigint>([0, MAX_UINT32, int(MAX_UINT32), 0n, BigInt(MAX_UINT32)])
  const address = (): Hex => {
    const lower = hexBytes(20).toLowerCase() as Hex
    return random() < 0.5 ? lower : getAddress(lower)
  }
  const text = () =>
    pick([
      '',
      'eip155:1',
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      'v1',
      'Grüße 🌉 ✓',
      '\u0000',
      `${int(1e6)}é`.repeat(30),
    ])
  return { int, pick, hexBytes, bytes, uint256, uint32, address, text }
}

function randomOrder(random: () => number) {
  const g = generators(random)
  const many = <T>(make: () => T): T[] => Array.from({ length: g.pick([0, 1, 1, 2, 3, g.int(6)]) }, make)
  return {
    version: g.text(),
    solverChainId: g.text(),
    solver: g.address(),
    salt: g.uint256(),
    inputs: many(() => ({
      payment: { chainId: g.text(), currency: g.bytes(), amount: g.uint256(), weight: g.uint256() },
      refunds: many(() => ({
        chainId: g.text(),
        recipient: g.bytes(),
        currency: g.bytes(),
        minimumAmount: g.uint256(),
        deadline: g.uint32(),
        extraData: g.bytes(),
      })),
    })),
    output: {
      chainId: g.text(),
      payments: many(() => ({
        recipient: g.bytes(),
        currency: g.bytes(),
        minimumAmount: g.uint256(),
        expectedAmount: g.uint256(),
      })),
      deadline: g.uint32(),
      calls: many(g.bytes),
      extraData: g.bytes(),
    },
    fees: many(() => ({
      recipientChainId: g.text(),
      recipient: g.bytes(),
      currencyChainId: g.text(),
      currency: g.bytes(),
      amount: g.uint256(),
    })),
  }
}

const viemHash = (types: Eip712Types, primaryType: string, data: Record<string, unknown>): Hex =>
  hashStruct({ types: types as Record<string, { name: string; type: string }[]>, primaryType, data } as never)

t.test('ORDER_TYPES: equals viem hashStruct on randomized orders', async (t) => {
  const random = prng(SEED)
  const hasher = createStructHasher(ORDER_TYPES, 'Order')
  let mismatches = 0
  let withEmpty = 0
  for (let run = 0; run < 300; run++) {
    const order = randomOrder(random)
    if (order.inputs.length === 0 || order.fees.length === 0) withEmpty++
    const expected = viemHash(ORDER_TYPES, 'Order', order)
    const actual = hasher(order)
    if (actual !== expected || hashOrderStruct(order) !== expected) {
      mismatches++
      t.fail(`run ${run} (seed ${SEED}): ${actual} !== ${expected}`)
    }
  }
  t.equal(mismatches, 0, 'every randomized order hashes as viem does')
  t.ok(withEmpty > 0, 'the runs include empty arrays')
})

t.test('ORDER_TYPES: extremes of uint256 and uint32', async (t) => {
  const order = randomOrder(prng(SEED + 1))
  for (const salt of [0n, MAX_UINT256, 1n, 2n ** 255n]) {
    for (const deadline of [0, MAX_UINT32, 0n, BigInt(MAX_UINT32)]) {
      const data = { ...order, salt, output: { ...order.output, deadline } }
      t.equal(
        hashOrderStruct(data),
        viemHash(ORDER_TYPES, 'Order', data),
        `salt ${salt}, deadline ${deadline}`,
      )
    }
  }
})

// `Person` depends on `Zebra` and `Aardvark`, declared unsorted: encodeType must sort them.
const MIXED_TYPES = {
  Mail: [
    { name: 'from', type: 'Person' },
    { name: 'to', type: 'Person[]' },
    { name: 'contents', type: 'string' },
    { name: 'urgent', type: 'bool' },
    { name: 'score', type: 'int256' },
    { name: 'delta', type: 'int8' },
    { name: 'tag', type: 'bytes32' },
    { name: 'short', type: 'bytes4' },
    { name: 'pair', type: 'address[2]' },
    { name: 'grid', type: 'int16[2][]' },
    { name: 'flags', type: 'bool[]' },
    { name: 'notes', type: 'string[]' },
    { name: 'blobs', type: 'bytes[3]' },
    { name: 'amount', type: 'uint' },
  ],
  Person: [
    { name: 'name', type: 'string' },
    { name: 'wallet', type: 'address' },
    { name: 'zebra', type: 'Zebra' },
    { name: 'friends', type: 'Aardvark[2]' },
  ],
  Zebra: [
    { name: 'stripes', type: 'uint8' },
    { name: 'id', type: 'bytes1' },
  ],
  Aardvark: [{ name: 'ants', type: 'int64' }],
  Unused: [{ name: 'whatever', type: 'not-a-type' }],
} as const

function randomMail(random: () => number) {
  const g = generators(random)
  const signed = (bits: number): bigint => {
    const max = 2n ** BigInt(bits - 1) - 1n
    const within = BigInt(g.int(2 ** Math.min(bits - 1, 30)))
    return g.pick([0n, -1n, max, -max - 1n, -within, within])
  }
  const person = () => ({
    name: g.text(),
    wallet: g.address(),
    zebra: { stripes: g.pick([0, 255, g.int(256)]), id: g.hexBytes(1) },
    friends: [{ ants: signed(64) }, { ants: g.pick([-5, 0, 7]) }],
  })
  return {
    from: person(),
    to: Array.from({ length: g.int(4) }, person),
    contents: g.text(),
    urgent: random() < 0.5,
    score: signed(256),
    delta: g.pick([-128, 127, 0, -1, signed(8)]),
    tag: g.hexBytes(32),
    short: g.hexBytes(4),
    pair: [g.address(), g.address()],
    grid: Array.from({ length: g.int(3) }, () => [signed(16), g.pick([-32768, 32767])]),
    flags: Array.from({ length: g.int(4) }, () => random() < 0.5),
    notes: Array.from({ length: g.int(3) }, g.text),
    blobs: [g.bytes(), g.bytes(), g.bytes()],
    amount: g.uint256(),
  }
}

t.test('mixed types: bool, signed ints, bytesN, addresses, unicode, nested and fixed arrays', async (t) => {
  const random = prng(SEED + 2)
  const hasher = createStructHasher(MIXED_TYPES, 'Mail')
  let mismatches = 0
  for (let run = 0; run < 200; run++) {
    const mail = randomMail(random)
    const expected = viemHash(MIXED_TYPES, 'Mail', mail)
    const actual = hasher(mail)
    if (actual !== expected) {
      mismatches++
      t.fail(`run ${run} (seed ${SEED + 2}): ${actual} !== ${expected}`)
    }
  }
  t.equal(mismatches, 0, 'every randomized Mail hashes as viem does')
  const person = randomMail(prng(SEED + 3)).from
  t.equal(
    createStructHasher(MIXED_TYPES, 'Person')(person),
    viemHash(MIXED_TYPES, 'Person', person),
    'Person',
  )
})

t.test('the EIP-712 specification example', async (t) => {
  const types = {
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  } as const
  const mail = {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  }
  t.equal(
    createStructHasher(types, 'Mail')(mail),
    '0xc52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e',
  )
})

t.test('strings and bytes hash the same past the memo and after it is cleared', async (t) => {
  const types = {
    Note: [
      { name: 'text', type: 'string' },
      { name: 'data', type: 'bytes' },
    ],
  } as const
  const hasher = createStructHasher(types, 'Note')
  let mismatches = 0
  // More distinct values than the memo holds, each hashed twice (miss, then hit or evicted), and
  // values too long to be memoized.
  for (let i = 0; i < 1100; i++) {
    const data = `0x${i.toString(16).padStart(8, '0')}`
    for (const note of [
      { text: `chain:${i}`, data },
      { text: `chain:${i}`, data },
      { text: 'ü'.repeat(i % 120), data: `0x${'ab'.repeat(i % 80)}` },
    ]) {
      if (hasher(note) !== viemHash(types, 'Note', note)) mismatches++
    }
  }
  t.equal(mismatches, 0)
  t.throws(
    () => hasher({ text: '', data: '0x0000000' }),
    { message: /odd-length/ },
    'a memoized prefix does not admit bad hex',
  )
})

t.test('bytes given as Uint8Array hash as their hex', async (t) => {
  const types = {
    Blob: [
      { name: 'data', type: 'bytes' },
      { name: 'id', type: 'bytes2' },
    ],
  } as const
  const hasher = createStructHasher(types, 'Blob')
  t.equal(
    hasher({ data: new Uint8Array([1, 2, 3]), id: new Uint8Array([0xab, 0xcd]) }),
    hasher({ data: '0x010203', id: '0xabcd' }),
  )
})

t.test('rejects values viem would not hash, naming the field', async (t) => {
  const base = randomOrder(prng(SEED + 4))
  const order = {
    ...base,
    inputs: [
      {
        payment: { chainId: 'eip155:1', currency: '0x01', amount: 1n, weight: 1n },
        refunds: [
          {
            chainId: 'eip155:1',
            recipient: '0x02',
            currency: '0x03',
            minimumAmount: 0n,
            deadline: 1,
            extraData: '0x',
          },
        ],
      },
    ],
  }
  const refund = order.inputs[0]!.refunds[0]!
  const withRefund = (change: Record<string, unknown>) => ({
    ...order,
    inputs: [{ ...order.inputs[0]!, refunds: [{ ...refund, ...change }] }],
  })
  t.doesNotThrow(() => hashOrderStruct(withRefund({})), 'the base order hashes')
  t.throws(() => hashOrderStruct(withRefund({ deadline: 2 ** 32 })), {
    name: 'RangeError',
    message: /^Order\.inputs\[0\]\.refunds\[0\]\.deadline: uint32 value 4294967296 is out of range/,
  })
  t.throws(() => hashOrderStruct(withRefund({ minimumAmount: 2n ** 256n })), {
    name: 'RangeError',
    message: /refunds\[0\]\.minimumAmount: uint256 value/,
  })
  t.throws(() => hashOrderStruct(withRefund({ minimumAmount: -1n })), {
    name: 'RangeError',
    message: /minimumAmount: uint256 value -1 is out of range/,
  })
  t.throws(() => hashOrderStruct(withRefund({ deadline: -1 })), { name: 'RangeError', message: /deadline/ })
  t.throws(() => hashOrderStruct(withRefund({ deadline: 1.5 })), {
    name: 'RangeError',
    message: /deadline: uint32 value 1\.5 is not an integer/,
  })
  t.throws(() => hashOrderStruct(withRefund({ deadline: '1' })), {
    message: /deadline: expected a bigint or number/,
  })
  t.throws(() => hashOrderStruct(withRefund({ extraData: '0x123' })), {
    message: /refunds\[0\]\.extraData: "0x123" is odd-length hex/,
  })
  t.throws(() => hashOrderStruct(withRefund({ extraData: '0xzz' })), {
    message: /extraData: "0xzz" is not 0x-hex/,
  })
  t.throws(() => hashOrderStruct(withRefund({ extraData: 'abcd' })), {
    message: /extraData: expected a 0x-hex string/,
  })
  t.throws(() => hashOrderStruct(withRefund({ chainId: undefined })), {
    message: /refunds\[0\]\.chainId: expected a string/,
  })
  t.throws(() => hashOrderStruct({ ...order, fees: undefined }), {
    message: /^Order\.fees: expected an array/,
  })

  const checksummed = getAddress('0x52908400098527886e0f7030069857d2e4169ee7')
  t.equal(checksummed, '0x52908400098527886E0F7030069857D2E4169EE7')
  t.doesNotThrow(() => hashOrderStruct({ ...order, solver: checksummed }), 'a valid checksum')
  t.doesNotThrow(() => hashOrderStruct({ ...order, solver: checksummed.toLowerCase() }), 'all lower-case')
  const badChecksum = checksummed.replace('6E0F', '6e0F')
  t.throws(() => hashOrderStruct({ ...order, solver: badChecksum }), {
    message: /^Order\.solver: address 0x\S+ has an invalid EIP-55 checksum/,
  })
  t.throws(() => viemHash(ORDER_TYPES, 'Order', { ...order, solver: badChecksum }), 'viem rejects it too')
  t.throws(() => hashOrderStruct({ ...order, solver: `${checksummed}00` }), {
    message: /^Order\.solver: expected an address/,
  })

  const mail = randomMail(prng(SEED + 5))
  const hasher = createStructHasher(MIXED_TYPES, 'Mail')
  t.doesNotThrow(() => hasher(mail))
  t.throws(() => hasher({ ...mail, pair: [mail.pair[0]] }), {
    message: /^Mail\.pair: address\[2\] takes exactly 2 elements, got 1/,
  })
  t.throws(() => hasher({ ...mail, blobs: [...mail.blobs, '0x'] }), {
    message: /^Mail\.blobs: bytes\[3\] takes exactly 3/,
  })
  t.throws(() => hasher({ ...mail, tag: `${mail.tag}00` }), {
    message: /^Mail\.tag: bytes32 value .* has 33 bytes, expected 32/,
  })
  t.throws(() => hasher({ ...mail, delta: 128 }), {
    name: 'RangeError',
    message: /^Mail\.delta: int8 value 128 is out of range \[-128, 127\]/,
  })
  t.throws(() => hasher({ ...mail, score: 2n ** 255n }), {
    name: 'RangeError',
    message: /^Mail\.score: int256/,
  })
  t.throws(() => hasher({ ...mail, urgent: 1 }), { message: /^Mail\.urgent: expected a boolean/ })
  t.throws(() => hasher({ ...mail, grid: [[0, 40000]] }), {
    name: 'RangeError',
    message: /^Mail\.grid\[0\]\[1\]: int16 value 40000/,
  })
  t.throws(() => hasher({ ...mail, from: { ...mail.from, zebra: null } }), {
    message: /^Mail\.from\.zebra: expected a Zebra object/,
  })
})

t.test('rejects types EIP-712 does not define when the hasher is created', async (t) => {
  t.throws(() => createStructHasher(MIXED_TYPES, 'Unused'), { message: /"not-a-type" of Unused\.whatever/ })
  t.throws(() => createStructHasher({ A: [{ name: 'x', type: 'uint7' }] }, 'A'), { message: /"uint7"/ })
  t.throws(() => createStructHasher({ A: [{ name: 'x', type: 'bytes33' }] }, 'A'), { message: /"bytes33"/ })
  t.throws(() => createStructHasher({ A: [] }, 'B' as 'A'), { message: /B is not defined/ })
})

t.test('typed-data digests equal viem hashTypedData, with derived and given domain types', async (t) => {
  const random = prng(SEED + 4)
  const g = generators(random)
  // viem's hashTypedData refuses MIXED_TYPES' shorthand `uint`: the EIP-712 example's types instead.
  const mailTypes = {
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person[]' },
      { name: 'contents', type: 'string' },
    ],
  } as const
  const mailDigest = createTypedDataHasher(mailTypes, 'Mail')
  const orderDigest = createTypedDataHasher(ORDER_TYPES, 'Order')
  const domains = [
    { name: 'Pontis Oracle', version: '1', chainId: 1, verifyingContract: g.address() },
    { name: 'Pontis Oracle', version: '1', chainId: 8453n, verifyingContract: g.address() },
    { name: '', chainId: 31337 },
    { version: '2', salt: g.hexBytes(32) },
    { name: 'x', version: '', verifyingContract: g.address() },
    {},
  ]
  let mismatches = 0
  for (let run = 0; run < 120; run++) {
    const domain = domains[run % domains.length]!
    const person = () => ({ name: g.text(), wallet: g.address() })
    const mail = { from: person(), to: Array.from({ length: g.int(3) }, person), contents: g.text() }
    const order = randomOrder(random)
    const expectedMail = hashTypedData({
      domain,
      types: mailTypes,
      primaryType: 'Mail',
      message: mail,
    } as never)
    const expectedOrder = hashTypedData({
      domain,
      types: ORDER_TYPES,
      primaryType: 'Order',
      message: order,
    } as never)
    if (mailDigest(domain, mail) !== expectedMail || orderDigest(domain, order) !== expectedOrder) {
      mismatches++
      t.fail(
        `run ${run} (seed ${SEED + 4}), domain ${JSON.stringify(domain, (_, v) => (typeof v === 'bigint' ? `${v}` : v))}`,
      )
    }
  }
  t.equal(mismatches, 0, 'every digest as viem computes it, on every kind of domain')

  // A domain type given in `types` wins over the derived one, in viem and here.
  const given = {
    EIP712Domain: [
      { name: 'chainId', type: 'uint256' },
      { name: 'name', type: 'string' },
    ],
    ...ORDER_TYPES,
  } as const
  const domain = { name: 'Pontis', chainId: 10 }
  const order = randomOrder(random)
  t.equal(
    createTypedDataHasher(given, 'Order')(domain, order),
    hashTypedData({ domain, types: given, primaryType: 'Order', message: order } as never),
  )
  t.not(
    createTypedDataHasher(given, 'Order')(domain, order),
    orderDigest(domain, order),
    'and changes the digest',
  )
})

t.test('keccak256Hex equals viem keccak256 on bytes and on hex, of every length up to 300', async (t) => {
  const random = prng(SEED + 1)
  for (let length = 0; length <= 300; length++) {
    const bytes = Uint8Array.from({ length }, () => Math.floor(random() * 256))
    const hex = `0x${Buffer.from(bytes).toString('hex')}` as Hex
    t.equal(keccak256Hex(bytes), keccak256(bytes), `${length} bytes`)
    t.equal(keccak256Hex(hex), keccak256(hex), `${length} bytes as hex`)
    t.equal(
      keccak256Hex(hex.toUpperCase().replace('0X', '0x') as Hex),
      keccak256(hex),
      `${length} bytes as upper-case hex`,
    )
  }
  t.throws(() => keccak256Hex('0x123' as Hex), TypeError, 'half a byte')
  t.throws(() => keccak256Hex('1234' as Hex), TypeError, 'no 0x')
})
