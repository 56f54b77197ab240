/**
 * Peer aggregation across real oracle processes on the devnet: three signers A, B and C, a 2-of-3
 * hub oracle contract, B and C behind fault-injecting proxies, and four aggregating oracles signing
 * as A (with and without an allowlist, with a healthy or a dead local RPC). Each case checks the
 * answer against openapi/oracle.yaml and the nine aggregation rules, then asks the hub contract
 * whether the returned bundle carries a quorum.
 */
import { createServer } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Eip712Domain, OracleApi } from '@pontis/core'
import {
  DEPLOYER,
  type DevnetChain,
  deployOracleHub,
  devnetEnvironment,
  ORACLE_SIGNER,
  pontisOracleHubAbi,
  startDevnet,
  USERS,
} from '@pontis/devnet'
import { loadOpenApiDocument } from '@pontis/http'
import { createTestClient } from '@pontis/http/testing'
import t, { type Test } from 'tap'
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  keccak256,
  recoverAddress,
  stringToHex,
  zeroAddress,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { waitFor } from '../../../test/helpers/wait.js'
import { hubAccountKey, hubAssetKey, ORACLE_DOCUMENT_PATH, type SignedAttestation } from '../src/index.js'
import { executionDigest, typedDataDigest } from '../src/typed-data.js'
import { type ChainClients, depositNative, hubBalance, relayExecution } from './fixtures/devnet-oracle.js'
import { type FaultMode, type FaultProxy, startFaultProxy } from './fixtures/fault-proxy.js'
import { type OracleLogLine, type OracleProcess, startOracleProcess } from './fixtures/oracle-process.js'

// Six oracle processes start at once (each compiles TypeScript and loads every plugin), then two
// cases wait out the peer timeout: 50-90 s on a busy 2-core machine, more than tap's 120 s at worst.
t.setTimeout(300_000)

const ROUTE = '/attestations/depository-deposits/v1'
const CHAIN_A = 'pontis-local-a'
/**
 * The aggregators' peer timeout. Healthy peers must answer well within it even on a busy machine
 * (a healthy peer cut off would change the signer set), and the slow cases wait it out once each.
 */
const PEER_TIMEOUT_MS = 5000
const CALLER_KEY = 'caller-key-0123456789abcdef'
const PEER_KEY_B = 'peer-key-of-b-0123456789abcdef'
const PEER_KEY_C = 'peer-key-of-c-0123456789abcdef'
const user = USERS[0]!

const document = (await loadOpenApiDocument(ORACLE_DOCUMENT_PATH)).document

/** A loopback port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const randomId = (): Hex => keccak256(stringToHex(`${Math.random()}-${Date.now()}`))
const byAddress = (x: string, y: string) => (BigInt(x) < BigInt(y) ? -1 : BigInt(x) > BigInt(y) ? 1 : 0)
const sortedSigners = (...addresses: Address[]) =>
  addresses.map((address) => address.toLowerCase()).sort(byAddress)

// ---------------------------------------------------------------- set-up
const devnet = await startDevnet({
  chains: [
    { chainId: 31337, port: 0 },
    { chainId: 31338, port: 0 },
  ],
})
const running: { stop(): Promise<void> }[] = []
const proxies: FaultProxy[] = []
t.teardown(async () => {
  await Promise.allSettled([
    ...running.map((process) => process.stop()),
    ...proxies.map((proxy) => proxy.close()),
  ])
  await devnet.stop()
})

const chainA = devnet.chains.find((chain) => chain.chainId === 31337) as DevnetChain
const transport = http(chainA.rpcUrl)
const a: ChainClients = {
  chain: chainA,
  publicClient: createPublicClient({ chain: chainA.chain, transport, pollingInterval: 50 }),
  wallet: (privateKey) =>
    createWalletClient({ account: privateKeyToAccount(privateKey), chain: chainA.chain, transport }),
}

const keyA = generatePrivateKey()
const keyB = generatePrivateKey()
const keyC = generatePrivateKey()
/** Signs well-formed signatures but is in nobody's allowlist. */
const forgerKey = generatePrivateKey()
const signerA = privateKeyToAccount(keyA).address
const signerB = privateKeyToAccount(keyB).address
const signerC = privateKeyToAccount(keyC).address
const forger = privateKeyToAccount(forgerKey).address

const hub = await deployOracleHub({
  rpcUrl: chainA.rpcUrl,
  chainId: 31337,
  deployerKey: DEPLOYER.privateKey,
  signers: [signerA, signerB, signerC],
  threshold: 2,
})
const domain: Eip712Domain = { name: 'PontisOracle', version: '1', chainId: 31337, verifyingContract: hub }

const mainAmount = 1_234_567n
const mainDeposit = await depositNative(a, user.privateKey, {
  depositor: user.address,
  id: randomId(),
  amount: mainAmount,
})
/** What a peer is made to attest instead in `different-payload` mode. */
const otherDeposit = await depositNative(a, user.privateKey, {
  depositor: user.address,
  id: randomId(),
  amount: 7n,
})
/** Attested by peers alone (case 6) and relayed. */
const peersOnlyAmount = 555n
const peersOnlyDeposit = await depositNative(a, user.privateKey, {
  depositor: user.address,
  id: randomId(),
  amount: peersOnlyAmount,
})

const baseEnv = {
  ...devnetEnvironment(devnet),
  LOCAL_HUB_ORACLE_ADDRESS: hub,
  PEER_REQUEST_TIMEOUT_MS: String(PEER_TIMEOUT_MS),
}
const deadRpc = `http://127.0.0.1:${await deadPort()}`
const allowlist = { ORACLE_SIGNERS: [signerA, signerB, signerC].join(';'), ORACLE_SIGNERS_THRESHOLD: '2' }

// The proxies exist first so every oracle process starts at once.
const proxyB = await startFaultProxy()
const proxyC = await startFaultProxy()
proxies.push(proxyB, proxyC)
const peersByKey = `${proxyB.url}|${PEER_KEY_B};${proxyC.url}|${PEER_KEY_C}`

/** Starts the oracles at once; if one fails, the others are stopped before the error surfaces. */
async function startAll(envs: readonly Record<string, string>[]): Promise<OracleProcess[]> {
  const outcomes = await Promise.allSettled(envs.map((env) => startOracleProcess({ ...baseEnv, ...env })))
  for (const outcome of outcomes) if (outcome.status === 'fulfilled') running.push(outcome.value)
  const failure = outcomes.find((outcome) => outcome.status === 'rejected')
  if (failure !== undefined) {
    await Promise.allSettled(running.map((oracle) => oracle.stop()))
    throw failure.reason
  }
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<OracleProcess>).value)
}
const [oracleB, oracleC, a1, a2, a3, a4] = (await startAll([
  // B and C: plain oracles; each accepts its aggregators' key and the caller's.
  { ECDSA_PRIVATE_KEY: keyB, API_KEYS: `${PEER_KEY_B}:aggregators;${CALLER_KEY}:caller` },
  { ECDSA_PRIVATE_KEY: keyC, API_KEYS: `${PEER_KEY_C}:aggregators;${CALLER_KEY}:caller` },
  // A1: allowlist A;B;C with threshold 2, healthy RPC.
  { ECDSA_PRIVATE_KEY: keyA, API_KEYS: `${CALLER_KEY}:caller`, PEERS: peersByKey, ...allowlist },
  // A2: the same allowlist, its local attestation fails (dead RPC of chain A).
  {
    ECDSA_PRIVATE_KEY: keyA,
    API_KEYS: `${CALLER_KEY}:caller`,
    PEERS: peersByKey,
    LOCAL_A_RPC_URL: deadRpc,
    ...allowlist,
  },
  // A3: no allowlist, dead local RPC.
  {
    ECDSA_PRIVATE_KEY: keyA,
    API_KEYS: `${CALLER_KEY}:caller`,
    PEERS: peersByKey,
    LOCAL_A_RPC_URL: deadRpc,
  },
  // A4: no allowlist, healthy RPC; C is asked with the caller's own key (pass-through).
  {
    ECDSA_PRIVATE_KEY: keyA,
    API_KEYS: `${CALLER_KEY}:caller`,
    PEERS: `${proxyB.url}|${PEER_KEY_B};${proxyC.url}|pass-through`,
  },
])) as [OracleProcess, OracleProcess, OracleProcess, OracleProcess, OracleProcess, OracleProcess]
proxyB.setTarget(oracleB.url)
proxyC.setTarget(oracleC.url)

// ---------------------------------------------------------------- helpers
type ErrorAnswer = { readonly errorCode: string; readonly message: string }

interface Attested {
  readonly status: number
  readonly body: unknown
  readonly elapsedMs: number
}

/** Posts a deposit attestation as the caller (checked against the document). */
async function attest(
  t: Test,
  baseUrl: string,
  transactionId: Hex,
  requestPeerSignatures = true,
): Promise<Attested> {
  const started = performance.now()
  const answer = await createTestClient(t, baseUrl, document).post(
    ROUTE,
    { chainId: 31337, transactionId, requestPeerSignatures },
    { headers: { 'x-api-key': CALLER_KEY } },
  )
  return { status: answer.status, body: answer.body, elapsedMs: performance.now() - started }
}

/**
 * The answer is the attestation of `transactionId` signed by exactly `expected` (unique, ascending
 * by address), every message and execution signature recovering to its signer under our own digest.
 */
async function assertBundle(
  t: Test,
  answer: Attested,
  transactionId: Hex,
  expected: readonly string[],
): Promise<SignedAttestation> {
  t.equal(answer.status, 200, 'a success answer')
  const body = answer.body as SignedAttestation
  t.equal(body.messages.length, 1)
  const message = body.messages[0]!
  t.same(message.data.domain, domain, 'signed under the 2-of-3 hub domain')
  t.equal(message.data.message.data.transactionId, transactionId.toLowerCase(), 'the asked payload')
  const messageSigners = (message.signatures ?? []).map((entry) => entry.signer)
  const executionSigners = body.execution!.signatures.map((entry) => entry.oracleSigner)
  t.same(messageSigners, expected, 'message signers')
  t.same(executionSigners, expected, 'execution signers')
  t.same([...new Set(messageSigners)].sort(byAddress), messageSigners, 'unique and ascending by address')
  for (const entry of message.signatures ?? []) {
    const recovered = await recoverAddress({
      hash: typedDataDigest(message.data),
      signature: entry.signature as Hex,
    })
    t.equal(recovered.toLowerCase(), entry.signer, 'message signature recovers to its signer')
  }
  const digest = executionDigest(
    domain,
    body.execution!.idempotencyKey as Hex,
    body.execution!.actions as Hex[],
  )
  for (const entry of body.execution!.signatures) {
    t.equal(entry.oracleChainId, 31337)
    t.equal(entry.oracleContract, hub.toLowerCase())
    const recovered = await recoverAddress({ hash: digest, signature: entry.signature as Hex })
    t.equal(recovered.toLowerCase(), entry.oracleSigner, 'execution signature recovers to its signer')
  }
  return body
}

/** The 2-of-3 hub's read-only verdict on the bundle: the valid signature count, or the revert's name and args. */
async function hubVerdict(
  body: SignedAttestation,
): Promise<{ count: bigint } | { error: string; args: unknown[] }> {
  const execution = body.execution!
  const digest = await a.publicClient.readContract({
    address: hub,
    abi: pontisOracleHubAbi,
    functionName: 'hashExecution',
    args: [execution.idempotencyKey as Hex, execution.actions as Hex[]],
  })
  if (digest !== executionDigest(domain, execution.idempotencyKey as Hex, execution.actions as Hex[]))
    throw new Error('the hub hashes the execution differently from the oracle')
  try {
    const count = await a.publicClient.readContract({
      address: hub,
      abi: pontisOracleHubAbi,
      functionName: 'verifySignatures',
      args: [digest, execution.signatures.map((entry) => entry.signature as Hex)],
    })
    return { count }
  } catch (error) {
    const reverted =
      error instanceof BaseError
        ? error.walk((inner) => inner instanceof ContractFunctionRevertedError)
        : null
    if (!(reverted instanceof ContractFunctionRevertedError) || reverted.data === undefined) throw error
    return { error: reverted.data.errorName, args: [...(reverted.data.args ?? [])] }
  }
}

async function assertHubAccepts(t: Test, body: SignedAttestation): Promise<void> {
  t.same(
    await hubVerdict(body),
    { count: BigInt(body.execution!.signatures.length) },
    'the 2-of-3 hub accepts',
  )
}

async function assertHubRejects(t: Test, body: SignedAttestation): Promise<void> {
  const count = BigInt(body.execution!.signatures.length)
  t.same(
    await hubVerdict(body),
    { error: 'BelowThreshold', args: [count, 2n] },
    'the 2-of-3 hub rejects: BelowThreshold',
  )
}

/** Puts B's and C's proxies into modes and forgets what they received. */
const setModes = (b: FaultMode, c: FaultMode) => {
  proxyB.setMode(b)
  proxyC.setMode(c)
  proxyB.clearReceived()
  proxyC.clearReceived()
}
const PASS = { kind: 'pass' } as const
const DEAD = { kind: 'dead' } as const
const SLOW = { kind: 'slow' } as const
const DIFFERENT = { kind: 'different-payload', transactionId: otherDeposit } as const
const FORGED = { kind: 'forged', privateKey: forgerKey } as const
/** B and C each validly sign the same false reading (every amount plus one) with their own keys. */
const COLLUDING_B = { kind: 'altered', privateKey: keyB } as const
const COLLUDING_C = { kind: 'altered', privateKey: keyC } as const

const isWarning =
  (msg: string, fields: Record<string, unknown> = {}) =>
  (line: OracleLogLine) =>
    line.level === 'warn' &&
    line.msg === msg &&
    Object.entries(fields).every(([key, value]) => line[key] === value)

const A = signerA.toLowerCase()
const B = signerB.toLowerCase()
const C = signerC.toLowerCase()

// Warm every process up (first requests load and compile lazily) so peers answer well within the timeout.
await Promise.all(
  [oracleB, oracleC, a1, a2, a3, a4].map((oracle) =>
    fetch(`${oracle.url}${ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': CALLER_KEY },
      body: JSON.stringify({ chainId: 31337, transactionId: otherDeposit }),
    }).then((response) => response.text()),
  ),
)

// ---------------------------------------------------------------- cases
t.test(
  'the fault proxy in forged mode keeps the claimed signer but signs with an unlisted key',
  async (t) => {
    proxyC.setMode(FORGED)
    const direct = await attest(t, proxyC.url, mainDeposit, false)
    t.equal(direct.status, 200)
    const body = direct.body as SignedAttestation
    const entry = body.messages[0]!.signatures![0]!
    t.equal(entry.signer, C, 'claims to be C')
    const recovered = await recoverAddress({
      hash: typedDataDigest(body.messages[0]!.data),
      signature: entry.signature as Hex,
    })
    t.equal(recovered, forger, 'but recovers to the forger')
  },
)

t.test(
  '1. all peers healthy through a fault proxy (allowlist 2-of-3): a quorum the hub accepts',
  async (t) => {
    setModes(PASS, PASS)
    const answer = await attest(t, a1.url, mainDeposit)
    const signers = ((answer.body as SignedAttestation).messages[0]?.signatures ?? []).map(
      (entry) => entry.signer,
    )
    t.ok(signers.length >= 2, 'at least the threshold (an early return may leave one peer out)')
    t.ok(
      signers.every((signer) => [A, B, C].includes(signer)),
      'allowlisted signers only',
    )
    const body = await assertBundle(t, answer, mainDeposit, sortedSigners(...(signers as Address[])))
    const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
    t.equal(result.amount, mainAmount.toString())
    await assertHubAccepts(t, body)

    const account = hubAccountKey(CHAIN_A, user.address.toLowerCase() as Hex)
    const asset = hubAssetKey(CHAIN_A, zeroAddress)
    const before = await hubBalance(a, account, asset, hub)
    await relayExecution(a, body, hub, ORACLE_SIGNER.privateKey)
    t.equal(
      await hubBalance(a, account, asset, hub),
      before + mainAmount,
      'the 2-of-3 hub credits the depositor',
    )
  },
)

t.test('2. B dead through a fault proxy: A + C, accepted', async (t) => {
  setModes(DEAD, PASS)
  const body = await assertBundle(
    t,
    await attest(t, a1.url, mainDeposit),
    mainDeposit,
    sortedSigners(signerA, signerC),
  )
  await assertHubAccepts(t, body)
})

t.test('3. C slow past the timeout through a fault proxy', async (t) => {
  t.test('B healthy: A + B returned early, before the timeout', async (t) => {
    setModes(PASS, SLOW)
    const answer = await attest(t, a1.url, mainDeposit)
    t.ok(answer.elapsedMs < PEER_TIMEOUT_MS, `answered in ${Math.round(answer.elapsedMs)} ms`)
    await waitFor('A to hang up on the held request to C once it had a quorum', () => proxyC.hungUp === 1)
    await assertHubAccepts(t, await assertBundle(t, answer, mainDeposit, sortedSigners(signerA, signerB)))
  })
  t.test('B dead: only A after the timeout, a partial group (rule 5), rejected by the hub', async (t) => {
    setModes(DEAD, SLOW)
    const mark = a1.mark()
    const answer = await attest(t, a1.url, mainDeposit)
    t.ok(
      answer.elapsedMs >= PEER_TIMEOUT_MS - 50,
      `waited for the timeout (${Math.round(answer.elapsedMs)} ms)`,
    )
    // C never answers: its request ends only when A gives up on it.
    await waitFor('A to hang up on the held request to C', () => proxyC.hungUp === 1)
    await assertHubRejects(t, await assertBundle(t, answer, mainDeposit, [A]))
    await a1.waitForLog(
      mark,
      isWarning('threshold not reached; returning the strongest group', { matched: 1, required: 2 }),
    )
    const timedOut = await a1.waitForLog(mark, isWarning('skipped a peer oracle', { peer: proxyC.url }))
    t.equal(timedOut.reason, `timed out after ${PEER_TIMEOUT_MS} ms`)
    await a1.waitForLog(mark, isWarning('skipped a peer oracle', { peer: proxyB.url }))

    // Both peers were asked with their configured key, without fan-out, and without A's allowlist.
    const asked = { chainId: 31337, transactionId: mainDeposit, requestPeerSignatures: false }
    // C was asked once. B hung up before answering: when A's request went out on a connection kept
    // alive from an earlier test, that looks like a server closing an idle socket, so it is sent
    // once more on a new connection (keepAliveFetch), and never more than that.
    t.equal(proxyC.received.length, 1, 'the slow peer was asked once')
    t.ok(
      proxyB.received.length === 1 || proxyB.received.length === 2,
      'the dead peer was asked at most twice',
    )
    for (const [proxy, key] of [
      [proxyB, PEER_KEY_B],
      [proxyC, PEER_KEY_C],
    ] as const) {
      for (const received of proxy.received) {
        t.same(received.body, asked, 'the same body with requestPeerSignatures false')
        t.equal(received.headers['x-api-key'], key, 'the key configured for the peer')
        t.equal(received.path, ROUTE)
      }
    }
  })
})

t.test('4. C returns a different payload through a fault proxy', async (t) => {
  t.test('B dead: only A (a tie of 1 and 1 goes to the local group), rejected by the hub', async (t) => {
    setModes(DEAD, DIFFERENT)
    const mark = a1.mark()
    const body = await assertBundle(t, await attest(t, a1.url, mainDeposit), mainDeposit, [A])
    t.same(proxyC.received[0]?.body, {
      chainId: 31337,
      transactionId: mainDeposit,
      requestPeerSignatures: false,
    })
    await assertHubRejects(t, body)
    await a1.waitForLog(
      mark,
      isWarning('threshold not reached; returning the strongest group', { matched: 1, required: 2 }),
    )
  })
  t.test('B healthy: A + B, accepted', async (t) => {
    setModes(PASS, DIFFERENT)
    const body = await assertBundle(
      t,
      await attest(t, a1.url, mainDeposit),
      mainDeposit,
      sortedSigners(signerA, signerB),
    )
    await assertHubAccepts(t, body)
  })
  t.test('B and C both answer about another transaction: refused, only A, rejected by the hub', async (t) => {
    setModes(DIFFERENT, DIFFERENT)
    const mark = a1.mark()
    const body = await assertBundle(t, await attest(t, a1.url, mainDeposit), mainDeposit, [A])
    await assertHubRejects(t, body)
    await a1.waitForLog(mark, (line) => String(line.reason ?? '').includes('attests another request'))
  })
})

t.test('5. C forges a signature under its own name through a fault proxy, B dead: only A', async (t) => {
  setModes(DEAD, FORGED)
  const mark = a1.mark()
  const body = await assertBundle(t, await attest(t, a1.url, mainDeposit), mainDeposit, [A])
  await assertHubRejects(t, body)
  const skipped = await a1.waitForLog(
    mark,
    isWarning('skipped an oracle answer that failed validation', { source: proxyC.url }),
  )
  t.match(String(skipped.reason), `recovers to ${forger}, not to the claimed ${C}`)
})

t.test('6. local attestation failing with an allowlist (dead local RPC)', async (t) => {
  t.test('B and C healthy through a fault proxy: B + C alone, accepted and credited', async (t) => {
    setModes(PASS, PASS)
    const mark = a2.mark()
    const body = await assertBundle(
      t,
      await attest(t, a2.url, peersOnlyDeposit),
      peersOnlyDeposit,
      sortedSigners(signerB, signerC),
    )
    await assertHubAccepts(t, body)
    const account = hubAccountKey(CHAIN_A, user.address.toLowerCase() as Hex)
    const asset = hubAssetKey(CHAIN_A, zeroAddress)
    const before = await hubBalance(a, account, asset, hub)
    await relayExecution(a, body, hub, ORACLE_SIGNER.privateKey)
    t.equal(await hubBalance(a, account, asset, hub), before + peersOnlyAmount, 'credited on peers alone')
    await a2.waitForLog(mark, isWarning('local attestation failed; relying on peers'))
  })
  t.test('B and C dead through a fault proxy too: the request fails with the local error', async (t) => {
    setModes(DEAD, DEAD)
    const localOnly = await attest(t, a2.url, mainDeposit, false)
    t.ok(localOnly.status >= 400, `the local attestation fails (${localOnly.status})`)
    const answer = await attest(t, a2.url, mainDeposit)
    t.equal(answer.status, localOnly.status)
    t.equal((answer.body as ErrorAnswer).errorCode, 'RPC_HTTP_ERROR', 'the local error')
    t.equal((answer.body as ErrorAnswer).message, (localOnly.body as ErrorAnswer).message)
    // Each was asked; a hang-up on a kept-alive connection is asked once more on a new one.
    for (const proxy of [proxyB, proxyC])
      t.ok(proxy.received.length === 1 || proxy.received.length === 2, 'each peer was asked, at most twice')
  })
})

t.test(
  '7. local attestation failing without an allowlist: fails with the local error though peers are healthy through a fault proxy',
  async (t) => {
    setModes(PASS, PASS)
    const localOnly = await attest(t, a3.url, mainDeposit, false)
    t.ok(localOnly.status >= 400, `the local attestation fails (${localOnly.status})`)
    const answer = await attest(t, a3.url, mainDeposit)
    t.equal(answer.status, localOnly.status)
    t.equal((answer.body as ErrorAnswer).errorCode, 'RPC_HTTP_ERROR', 'the local error')
    t.equal((answer.body as ErrorAnswer).message, (localOnly.body as ErrorAnswer).message)
  },
)

t.test('8. no allowlist, healthy local RPC', async (t) => {
  t.test('all healthy through a fault proxy: waits for every peer, A + B + C', async (t) => {
    setModes(PASS, PASS)
    const body = await assertBundle(
      t,
      await attest(t, a4.url, mainDeposit),
      mainDeposit,
      sortedSigners(signerA, signerB, signerC),
    )
    t.same(await hubVerdict(body), { count: 3n }, 'the hub counts three signatures')
    const asked = { chainId: 31337, transactionId: mainDeposit, requestPeerSignatures: false }
    t.same(proxyB.received[0]?.body, asked)
    t.same(proxyC.received[0]?.body, asked)
    t.equal(proxyB.received[0]?.headers['x-api-key'], PEER_KEY_B, 'the key configured for B')
    t.equal(proxyC.received[0]?.headers['x-api-key'], CALLER_KEY, 'pass-through: the caller key for C')
  })
  t.test('C slow through a fault proxy: A + B after the timeout', async (t) => {
    setModes(PASS, SLOW)
    const mark = a4.mark()
    const answer = await attest(t, a4.url, mainDeposit)
    t.ok(
      answer.elapsedMs >= PEER_TIMEOUT_MS - 50,
      `waited for the timeout (${Math.round(answer.elapsedMs)} ms)`,
    )
    // C never answers: its request ends only when A gives up on it.
    await waitFor('A to hang up on the held request to C', () => proxyC.hungUp === 1)
    await assertHubAccepts(t, await assertBundle(t, answer, mainDeposit, sortedSigners(signerA, signerB)))
    const timedOut = await a4.waitForLog(mark, isWarning('skipped a peer oracle', { peer: proxyC.url }))
    t.equal(timedOut.reason, `timed out after ${PEER_TIMEOUT_MS} ms`)
  })
  t.test(
    'C answers about another transaction through a fault proxy: A + B, C refused with a warning',
    async (t) => {
      setModes(PASS, DIFFERENT)
      const mark = a4.mark()
      const body = await assertBundle(
        t,
        await attest(t, a4.url, mainDeposit),
        mainDeposit,
        sortedSigners(signerA, signerB),
      )
      await assertHubAccepts(t, body)
      const skipped = await a4.waitForLog(
        mark,
        isWarning('skipped an oracle answer that failed validation', { source: proxyC.url }),
      )
      t.equal(skipped.reason, 'it attests another request than the one asked')
    },
  )
})

/** A counter's value in a scrape of the oracle's GET /metrics (0 when the series is absent). */
async function counter(oracle: OracleProcess, name: string, labels: Record<string, string>): Promise<number> {
  const response = await fetch(`${oracle.url}/metrics`)
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`)
  const text = await response.text()
  const selector = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .join(',')
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${selector}} `))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

t.test(
  '9. B and C collude through fault proxies on the same altered payload (allowlist 2-of-3): returned, logged at error level with both digests, counted on /metrics',
  async (t) => {
    const disagreement = {
      path: ROUTE,
      resolution: 'local_outvoted',
    }
    const before = await counter(a1, 'pontis_oracle_payload_disagreements_total', disagreement)
    const okBefore = await Promise.all(
      [proxyB, proxyC].map((proxy) =>
        counter(a1, 'pontis_oracle_peer_responses_total', { peer: proxy.url, outcome: 'ok' }),
      ),
    )
    setModes(COLLUDING_B, COLLUDING_C)
    const mark = a1.mark()
    const body = await assertBundle(
      t,
      await attest(t, a1.url, mainDeposit),
      mainDeposit,
      sortedSigners(signerB, signerC),
    )
    const result = body.messages[0]!.result as OracleApi.DepositoryDepositResult
    t.equal(
      result.amount,
      (mainAmount + 1n).toString(),
      "the peers' altered amount was returned (the spec allows it)",
    )
    await assertHubAccepts(t, body)

    const logged = await a1.waitForLog(
      mark,
      (line) =>
        line.level === 'error' &&
        line.msg ===
          "peers outvoted the local attestation: the returned payload differs from this oracle's reading",
    )
    t.equal(logged.path, ROUTE)
    t.match(logged.localPayloadDigest, /^0x[0-9a-f]{64}$/, 'our payload digest')
    t.match(logged.peerPayloadDigest, /^0x[0-9a-f]{64}$/, "the peers' payload digest")
    t.not(logged.localPayloadDigest, logged.peerPayloadDigest)
    t.same(logged.peers, [proxyB.url, proxyC.url].sort(), 'names the peers')
    t.same(logged.signers, sortedSigners(signerB, signerC), 'and their signers, sorted')

    t.equal(
      await counter(a1, 'pontis_oracle_payload_disagreements_total', disagreement),
      before + 1,
      'pontis_oracle_payload_disagreements_total{resolution="local_outvoted"} moved by one',
    )
    const okAfter = await Promise.all(
      [proxyB, proxyC].map((proxy) =>
        counter(a1, 'pontis_oracle_peer_responses_total', { peer: proxy.url, outcome: 'ok' }),
      ),
    )
    t.same(
      okAfter,
      okBefore.map((value) => value + 1),
      "both peers' answers were the returned payload",
    )

    // Without collusion nothing is counted: B alone altering loses to A + C.
    setModes(COLLUDING_B, PASS)
    const alone = await assertBundle(
      t,
      await attest(t, a1.url, mainDeposit),
      mainDeposit,
      sortedSigners(signerA, signerC),
    )
    await assertHubAccepts(t, alone)
    t.equal(
      await counter(a1, 'pontis_oracle_payload_disagreements_total', disagreement),
      before + 1,
      'the local reading was not outvoted',
    )
  },
)
