/**
 * Peer aggregation rules on signed answers (no network: the answers are made with real signers).
 * The multi-process behaviour (timeouts, early return, dead peers) is in peers.test.ts.
 */
import { type Eip712Domain, silentLogger } from '@pontis/core'
import t from 'tap'
import { bytesToHex, type Hex, hexToBigInt, keccak256, numberToHex, slice, stringToHex } from 'viem'
import { generatePrivateKey } from 'viem/accounts'
import { defaultEcdsa, type Ecdsa } from '../src/ecdsa.js'
import {
  createSigner,
  encodeHubAction,
  HUB_ACTION,
  type OracleSigner,
  SignatureAggregator,
  type SignedAttestation,
  signAttestation,
  signatureProblem,
  type UnsignedAttestation,
} from '../src/index.js'
import { executionDigest, MESSAGE_TYPES, typedDataDigest } from '../src/typed-data.js'

const domain: Eip712Domain = {
  name: 'PontisOracle',
  version: '1',
  chainId: 31337,
  verifyingContract: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
}
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

function attestation(amount: bigint, messages = 1): UnsignedAttestation {
  const one = (index: number) => {
    const result = {
      onchainId: keccak256(stringToHex(`deposit-${index}`)),
      depository: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
      depositId: `0x${'00'.repeat(32)}`,
      depositor: '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
      currency: '0x0000000000000000000000000000000000000000',
      amount: amount.toString(),
    }
    return {
      data: {
        domain,
        types: MESSAGE_TYPES.DepositoryDeposit,
        primaryType: 'DepositoryDeposit' as const,
        message: { data: { chainId: 'pontis-local-a', transactionId: `0x${'12'.repeat(32)}` }, result },
      },
      result,
    }
  }
  return {
    messages: Array.from({ length: messages }, (_, index) => one(index)),
    execution: {
      idempotencyKey: keccak256(stringToHex(`key-${amount}`)),
      actions: [
        encodeHubAction({ kind: HUB_ACTION.CREDIT, to: keccak256('0x01'), asset: keccak256('0x02'), amount }),
      ],
    },
  }
}

const signers = await Promise.all(
  Array.from({ length: 4 }, () =>
    createSigner({ module: 'raw-private-key', privateKey: generatePrivateKey() }),
  ),
)
const [a, b, c, outsider] = signers as [OracleSigner, OracleSigner, OracleSigner, OracleSigner]
const allowlist = [a.address, b.address, c.address]
const sign = (signer: OracleSigner, unsigned: UnsignedAttestation = attestation(100n)) =>
  signAttestation(unsigned, signer, domain)

function aggregator(withAllowlist = true): SignatureAggregator {
  return new SignatureAggregator({
    domain,
    allowlist: withAllowlist ? allowlist : undefined,
    logger: silentLogger,
  })
}

/** The signer addresses of each signature array of an answer. */
function signerLists(answer: SignedAttestation): string[][] {
  return [
    ...answer.messages.map((message) => (message.signatures ?? []).map((entry) => entry.signer)),
    (answer.execution?.signatures ?? []).map((entry) => entry.oracleSigner),
  ]
}

const sorted = (addresses: readonly string[]) =>
  [...addresses]
    .map((address) => address.toLowerCase())
    .sort((x, y) => (hexToBigInt(x as Hex) < hexToBigInt(y as Hex) ? -1 : 1))

t.test('answers with equal payloads merge; signers are unique and sorted in every array', async (t) => {
  const agg = aggregator()
  t.ok(await agg.add('local', await sign(a, attestation(100n, 2)), true))
  t.ok(await agg.add('b', await sign(b, attestation(100n, 2)), false))
  t.ok(await agg.add('c', await sign(c, attestation(100n, 2)), false))
  t.ok(
    await agg.add('b-again', await sign(b, attestation(100n, 2)), false),
    'a repeated signer is valid but counts once',
  )
  const best = agg.strongest()!
  t.equal(best.signers.size, 3)
  const rendered = agg.render(best)
  for (const list of signerLists(rendered)) t.same(list, sorted(allowlist))
  for (const message of rendered.messages) {
    for (const entry of message.signatures ?? []) {
      t.equal(await signatureProblem(typedDataDigest(message.data), entry.signature, entry.signer), undefined)
    }
  }
})

t.test('the local signature is deduplicated against a peer returning the same signer', async (t) => {
  const agg = aggregator()
  await agg.add('local', await sign(a), true)
  await agg.add('echo', await sign(a), false)
  t.equal(agg.strongest()!.signers.size, 1)
})

t.test('a forged signature under a valid signer name fails the whole answer', async (t) => {
  const agg = aggregator()
  await agg.add('local', await sign(a), true)
  const forged = await sign(outsider)
  const claimingB: SignedAttestation = {
    messages: forged.messages.map((message) => ({
      ...message,
      signatures: (message.signatures ?? []).map((entry) => ({ ...entry, signer: b.address.toLowerCase() })),
    })),
    execution: forged.execution && {
      ...forged.execution,
      signatures: forged.execution.signatures.map((entry) => ({
        ...entry,
        oracleSigner: b.address.toLowerCase(),
      })),
    },
  }
  t.notOk(await agg.add('forger', claimingB, false), 'recovered signer differs from the claimed one')
  t.equal(agg.strongest()!.signers.size, 1, 'the claimed signer is not counted')
})

t.test('high-s, bad v and bad lengths are refused', async (t) => {
  const honest = await sign(b)
  const digest = typedDataDigest(honest.messages[0]!.data)
  const signature = honest.messages[0]!.signatures![0]!.signature as Hex
  const s = hexToBigInt(slice(signature, 32, 64))
  const v = Number(hexToBigInt(slice(signature, 64, 65)))
  const highS =
    `${slice(signature, 0, 32)}${numberToHex(N - s, { size: 32 }).slice(2)}${numberToHex(v === 27 ? 28 : 27, { size: 1 }).slice(2)}` as Hex
  t.match(
    await signatureProblem(digest, highS, b.address),
    /high-s/,
    'the malleable twin recovers to the same signer but is refused',
  )
  t.match(await signatureProblem(digest, `${signature.slice(0, -2)}1d`, b.address), /v 29/)
  t.match(await signatureProblem(digest, signature.slice(0, -2), b.address), /65 bytes/)
  t.equal(await signatureProblem(digest, signature, b.address), undefined)

  const agg = aggregator()
  const malleated: SignedAttestation = {
    ...honest,
    messages: honest.messages.map((message) => ({
      ...message,
      signatures: [{ signer: b.address.toLowerCase(), signature: highS }],
    })),
  }
  t.notOk(await agg.add('malleable', malleated, false))
})

t.test('allowlist: non-allowlisted signers are excluded and never counted', async (t) => {
  const agg = aggregator()
  await agg.add('local', await sign(a), true)
  t.ok(
    await agg.add('outsider', await sign(outsider), false),
    'a valid answer from an unlisted signer is not an error',
  )
  t.equal(agg.strongest()!.signers.size, 1)
  const open = aggregator(false)
  await open.add('local', await sign(a), true)
  await open.add('outsider', await sign(outsider), false)
  t.equal(open.strongest()!.signers.size, 2, 'without an allowlist every valid signer counts')
})

t.test('a signer missing from any array of a multi-message answer is excluded (rule 4)', async (t) => {
  const agg = aggregator()
  const full = await sign(c, attestation(100n, 2))
  const partial: SignedAttestation = {
    messages: full.messages.map((message, index) =>
      index === 1 ? { data: message.data, result: message.result } : message,
    ),
    ...(full.execution ? { execution: full.execution } : {}),
  }
  t.ok(await agg.add('partial', partial, false))
  t.equal(agg.strongest()!.signers.size, 0)
  const noExecution: SignedAttestation = { ...full, execution: { ...full.execution!, signatures: [] } }
  t.ok(await agg.add('messages-only', noExecution, false))
  t.equal(agg.strongest()!.signers.size, 0, 'messages signed but not the execution: not counted')
})

t.test('different payloads form separate groups; a tie goes to the local group (rule 5)', async (t) => {
  const agg = aggregator()
  await agg.add('other', await sign(c, attestation(999n)), false)
  await agg.add('local', await sign(a), true)
  const best = agg.strongest()!
  t.ok(best.hasLocal)
  t.not(agg.groupOf('other'), best, 'the other payload forms its own group')
  await agg.add('b-other', await sign(b, attestation(999n)), false)
  const stronger = agg.strongest()!
  t.notOk(stronger.hasLocal, 'peers alone can outvote the local answer')
  t.equal(stronger.signers.size, 2)
})

t.test('answers signed under another domain fail validation', async (t) => {
  const agg = aggregator()
  const elsewhere = await signAttestation(
    {
      ...attestation(100n),
      messages: attestation(100n).messages.map((message) => ({
        ...message,
        data: { ...message.data, domain: { ...domain, chainId: 1 } },
      })),
    },
    b,
    { ...domain, chainId: 1 },
  )
  t.notOk(await agg.add('elsewhere', elsewhere, false))
})

t.test(
  'answers about another request than the one asked fail validation, whatever their signers',
  async (t) => {
    const asked = attestation(100n).messages[0]!.data.message.data
    const agg = new SignatureAggregator({ domain, allowlist, logger: silentLogger, expectedData: asked })
    const other = attestation(100n)
    const elsewhere: UnsignedAttestation = {
      ...other,
      messages: other.messages.map((message) => ({
        ...message,
        data: {
          ...message.data,
          message: {
            ...message.data.message,
            data: { chainId: 'pontis-local-a', transactionId: `0x${'34'.repeat(32)}` },
          },
        },
      })),
    }
    t.notOk(await agg.add('b', await sign(b, elsewhere), false))
    t.notOk(await agg.add('c', await sign(c, elsewhere), false))
    t.ok(await agg.add('local', await sign(a), true))
    t.equal(agg.strongest()!.signers.size, 1, 'two peers agreeing on another fact do not outvote the request')
  },
)

/** The same JSON value with every object's keys in reverse order (arrays keep theirs). */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((key) => [key, reversedKeys((value as Record<string, unknown>)[key])]),
  )
}

/** A peer's answer as the aggregator gets it: parsed from the JSON text the peer sent. */
const overTheWire = (answer: SignedAttestation): SignedAttestation =>
  JSON.parse(JSON.stringify(answer)) as SignedAttestation

t.test(
  'every peer signature is recovered against our digests, also once a group holds the payload',
  async (t) => {
    const recoveries: { digest: Hex; claimed: string }[] = []
    const native = defaultEcdsa()
    const spy: Ecdsa = {
      implementation: native.implementation,
      sign: (digest, key) => native.sign(digest, key),
      recoverAddress: (digest, signature, recoveryId) => {
        const recovered = native.recoverAddress(digest, signature, recoveryId)
        recoveries.push({ digest: bytesToHex(digest), claimed: recovered })
        return recovered
      },
    }
    const agg = new SignatureAggregator({ domain, allowlist, logger: silentLogger, ecdsa: spy })
    const unsigned = attestation(100n, 2)
    t.ok(await agg.add('local', await sign(a, unsigned), true))
    t.equal(recoveries.length, 0, 'our own signatures are not recovered')
    t.ok(await agg.add('b', overTheWire(await sign(b, unsigned)), false))
    t.ok(await agg.add('c', overTheWire(await sign(c, unsigned)), false))
    const messageDigests = unsigned.messages.map((message) => typedDataDigest(message.data))
    const execution = executionDigest(domain, unsigned.execution!.idempotencyKey, unsigned.execution!.actions)
    t.same(
      recoveries.map((recovery) => recovery.digest),
      [...messageDigests, execution, ...messageDigests, execution],
      'two messages and the execution of each peer, each against its own digest',
    )
    t.same(
      recoveries.map((recovery) => recovery.claimed),
      [...Array(3).fill(b.address.toLowerCase()), ...Array(3).fill(c.address.toLowerCase())],
    )
    t.equal(agg.strongest()!.signers.size, 3)
  },
)

t.test('a peer signature over other typed data fails even when its payload key is known', async (t) => {
  const agg = aggregator()
  await agg.add('local', await sign(a), true)
  const honest = await sign(b)
  const signedElsewhere = await sign(b, attestation(101n))
  // The payload of the local answer with b's signatures over another amount.
  const swapped: SignedAttestation = {
    messages: honest.messages.map((message, index) => ({
      ...message,
      signatures: signedElsewhere.messages[index]!.signatures!,
    })),
    execution: { ...honest.execution!, signatures: signedElsewhere.execution!.signatures },
  }
  t.notOk(await agg.add('b', swapped, false))
  t.equal(agg.strongest()!.signers.size, 1)
})

t.test(
  'payloads compare by content: key order does not matter, hex case of the execution neither',
  async (t) => {
    const agg = aggregator()
    await agg.add('local', await sign(a), true)
    t.ok(await agg.add('b', reversedKeys(overTheWire(await sign(b))) as SignedAttestation, false))
    const fromC = overTheWire(await sign(c))
    const shouting: SignedAttestation = {
      ...fromC,
      execution: {
        ...fromC.execution!,
        idempotencyKey: `0x${fromC.execution!.idempotencyKey.slice(2).toUpperCase()}`,
        actions: fromC.execution!.actions.map((action) => `0x${action.slice(2).toUpperCase()}`),
      },
    }
    t.ok(
      await agg.add('c', shouting, false),
      'the same bytes in upper-case hex verify against their own text',
    )
    const best = agg.strongest()!
    t.equal(best.signers.size, 3, 'all three answers are one payload')
    t.same([...best.sources].sort(), ['b', 'c'])
    t.equal(agg.groupOf('b'), agg.localGroup())
  },
)
