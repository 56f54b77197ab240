/** The hand-written ABI encodings equal viem's `encodeAbiParameters`, errors included. */
import t from 'tap'
import { bytesToHex, encodeAbiParameters, type Hex, keccak256, parseAbiParameters } from 'viem'
import { type AbiValue, abiEncode, encodeStaticWords } from '../src/abi.js'
import { encodeHubAction, HUB_ACTION, hubAccountKey, hubAssetKey, idempotencyKey } from '../src/index.js'

/** A deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state)
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296
  }
}
const next = random(19)
const below = (limit: number) => Math.floor(next() * limit)
const SYMBOLS = ['a', 'Z', '0', '-', ' ', 'é', '€', '😀', '\u0000', '"']
const someString = () => Array.from({ length: below(70) }, () => SYMBOLS[below(SYMBOLS.length)]).join('')
const someBytes = (): Hex =>
  `0x${Array.from({ length: below(70) }, () => below(256).toString(16).padStart(2, '0')).join('')}`
const someUint = () => [0n, 1n, 255n, 2n ** 64n, 2n ** 256n - 1n, BigInt(below(2 ** 31))][below(6)]!

function someValue(): AbiValue {
  switch (below(4)) {
    case 0:
      return { type: 'string', value: someString() }
    case 1:
      return { type: 'bytes', value: someBytes() }
    case 2:
      return { type: 'uint256', value: someUint() }
    default:
      return { type: 'string[]', value: Array.from({ length: below(5) }, someString) }
  }
}

const viem = (values: readonly AbiValue[]): Hex =>
  encodeAbiParameters(
    values.map((entry) => ({ type: entry.type })),
    values.map((entry) => entry.value),
  )

t.test('abiEncode equals viem on strings, bytes, uint256 and string[] of every length', async (t) => {
  for (let round = 0; round < 500; round++) {
    const values = Array.from({ length: 1 + below(4) }, someValue)
    const ours = bytesToHex(abiEncode(values))
    if (ours !== viem(values)) {
      t.fail(
        `differs for ${JSON.stringify(values, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value))}`,
      )
      return
    }
  }
  t.pass('500 random tuples encode as viem encodes them')
  t.equal(bytesToHex(abiEncode([{ type: 'string[]', value: [] }])), viem([{ type: 'string[]', value: [] }]))
  t.equal(bytesToHex(abiEncode([{ type: 'bytes', value: '0x' }])), viem([{ type: 'bytes', value: '0x' }]))
})

t.test('abiEncode leaves what it does not write to viem: the same bytes or the same error', async (t) => {
  const mixedCase: AbiValue[] = [{ type: 'bytes', value: '0xABcd' }]
  t.equal(bytesToHex(abiEncode(mixedCase)), viem(mixedCase).toLowerCase(), 'the same bytes')
  for (const value of [-1n, 2n ** 256n]) {
    const values: AbiValue[] = [{ type: 'uint256', value }]
    t.throws(() => abiEncode(values), { name: 'IntegerOutOfRangeError' })
  }
  const odd: AbiValue[] = [{ type: 'bytes', value: '0xabc' }]
  let viemAnswer: string
  try {
    viemAnswer = viem(odd)
  } catch (error) {
    viemAnswer = `throws ${(error as Error).name}`
  }
  let ours: string
  try {
    ours = bytesToHex(abiEncode(odd))
  } catch (error) {
    ours = `throws ${(error as Error).name}`
  }
  t.equal(ours, viemAnswer, 'odd-length hex: what viem does')
})

/** The hub action's layout, written independently of hub.ts. */
const ACTION = parseAbiParameters('uint8 kind, bytes32 from, bytes32 to, bytes32 asset, uint256 amount')
const WORDS = parseAbiParameters('uint64 nonce, bytes32 salt, uint256 value, uint16 tag')

t.test(
  'encodeStaticWords equals viem, keeps the case of bytes32 and declines what viem refuses',
  async (t) => {
    const word = (fill: string) => `0x${fill.repeat(32)}` as Hex
    for (const values of [
      [0, word('00'), word('ab'), word('12'), 0n],
      [4, word('AB'), word('aB'), word('ff'), 2n ** 256n - 1n],
      [255, word('01'), word('00'), word('7f'), 10n ** 18n],
    ] as const) {
      t.equal(encodeStaticWords(ACTION, values), encodeAbiParameters(ACTION, values))
    }
    const words = [2n ** 64n - 1n, word('Cd'), 7n, 65535] as const
    t.equal(encodeStaticWords(WORDS, words), encodeAbiParameters(WORDS, words), 'uint64, uint16')
    t.equal(encodeStaticWords(WORDS, [2n ** 64n, word('00'), 0n, 0]), undefined, 'uint64 range')
    t.equal(
      encodeStaticWords(ACTION, [256, word('00'), word('00'), word('00'), 0n]),
      undefined,
      'uint8 range',
    )
    t.equal(encodeStaticWords(ACTION, [0, word('00'), word('00'), word('00'), -1n]), undefined, 'negative')
    t.equal(encodeStaticWords(ACTION, [0, '0x00', word('00'), word('00'), 0n]), undefined, 'short bytes32')
    t.equal(encodeStaticWords([{ type: 'address' }], ['0x']), undefined, 'another type')
  },
)

t.test('the hub keys, ids and actions are those viem encodes', async (t) => {
  const owner: Hex = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
  t.equal(
    hubAccountKey('pontis-local-a', owner),
    keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'bytes' }], ['pontis-local-a', owner])),
  )
  t.equal(
    hubAssetKey('solana-mainnet', owner),
    keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'bytes' }], ['solana-mainnet', owner])),
  )
  t.equal(
    idempotencyKey('deposit', 'pontis-local-a', `0x${'AB'.repeat(32)}`, '0'),
    keccak256(
      encodeAbiParameters(
        [{ type: 'string' }, { type: 'string[]' }],
        ['deposit', ['pontis-local-a', `0x${'ab'.repeat(32)}`, '0']],
      ),
    ),
  )
  const action = {
    kind: HUB_ACTION.TRANSFER,
    from: keccak256('0x01'),
    to: keccak256('0x02'),
    asset: keccak256('0x03'),
    amount: 5n,
  }
  t.equal(
    encodeHubAction(action),
    encodeAbiParameters(ACTION, [action.kind, action.from, action.to, action.asset, action.amount]),
  )
  t.equal(
    encodeHubAction({ kind: HUB_ACTION.CREDIT, asset: keccak256('0x03'), amount: 1n }),
    encodeAbiParameters(ACTION, [0, `0x${'00'.repeat(32)}`, `0x${'00'.repeat(32)}`, keccak256('0x03'), 1n]),
  )
  t.throws(() => encodeHubAction({ ...action, amount: -1n }), { name: 'IntegerOutOfRangeError' })
})
