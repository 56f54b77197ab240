/**
 * Peer calls end on time and close their sockets: a peer that accepts the connection and never
 * answers (a real TCP server on loopback) must cost PEER_REQUEST_TIMEOUT_MS, not undici's 300 s,
 * even when a garbage collection runs while the call is pending; and once the answer is decided
 * early, the calls still running are aborted and their sockets closed.
 */
import { once } from 'node:events'
import { createServer, type Server, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { type Eip712Domain, type LogFields, type Logger, silentLogger } from '@pontis/core'
import t, { type Test } from 'tap'
import { keccak256, stringToHex } from 'viem'
import { generatePrivateKey } from 'viem/accounts'
import {
  collectSignatures,
  createSigner,
  encodeHubAction,
  HUB_ACTION,
  type OracleSigner,
  type SignedAttestation,
  signAttestation,
  type UnsignedAttestation,
} from '../src/index.js'
import { MESSAGE_TYPES } from '../src/typed-data.js'

// The bug needs a collection while the call is pending: expose V8's gc() in this process (the
// same as `node --expose-gc`, which tap and tsx do not pass per file).
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const PATH = '/attestations/depository-deposits/v1'
const PEER_TIMEOUT_MS = 1_000
/** Generous, for a busy 2-core machine: the bug shows as undici's 300 s, so any bound far below it tells. */
const MARGIN_MS = 15_000

const domain: Eip712Domain = {
  name: 'PontisOracle',
  version: '1',
  chainId: 31337,
  verifyingContract: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
}

function attestation(): UnsignedAttestation {
  const result = {
    onchainId: keccak256(stringToHex('deposit')),
    depository: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
    depositId: `0x${'00'.repeat(32)}`,
    depositor: '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
    currency: '0x0000000000000000000000000000000000000000',
    amount: '100',
  }
  return {
    messages: [
      {
        data: {
          domain,
          types: MESSAGE_TYPES.DepositoryDeposit,
          primaryType: 'DepositoryDeposit' as const,
          message: { data: { chainId: 'pontis-local-a', transactionId: `0x${'12'.repeat(32)}` }, result },
        },
        result,
      },
    ],
    execution: {
      idempotencyKey: keccak256(stringToHex('key')),
      actions: [
        encodeHubAction({
          kind: HUB_ACTION.CREDIT,
          to: keccak256('0x01'),
          asset: keccak256('0x02'),
          amount: 100n,
        }),
      ],
    },
  }
}

const [a, b, c] = (await Promise.all(
  [0, 1, 2].map(() => createSigner({ module: 'raw-private-key', privateKey: generatePrivateKey() })),
)) as [OracleSigner, OracleSigner, OracleSigner]

/** A peer that accepts connections, reads the request and never answers. */
interface HungPeer {
  readonly url: string
  /** Resolves with the server side of the first connection once a request arrived on it. */
  readonly requested: Promise<Socket>
}

async function hungPeer(t: Test): Promise<HungPeer> {
  let onRequest: (socket: Socket) => void = () => {}
  const requested = new Promise<Socket>((resolve) => {
    onRequest = resolve
  })
  const connections = new Set<Socket>()
  const server: Server = createServer((socket) => {
    connections.add(socket)
    socket.once('data', () => onRequest(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of connections) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}`, requested }
}

/** `promise`, or a rejection naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, bound])
  } finally {
    clearTimeout(timer)
  }
}

function recordingLogger(): { logger: Logger; warnings: Array<{ message: string; fields: LogFields }> } {
  const warnings: Array<{ message: string; fields: LogFields }> = []
  return {
    logger: { ...silentLogger, warn: (message, fields = {}) => warnings.push({ message, fields }) },
    warnings,
  }
}

t.test(
  'two hung peers, gc() while their calls are pending: the answer comes after the peer timeout and both sockets close',
  async (t) => {
    const peers = [await hungPeer(t), await hungPeer(t)]
    const { logger, warnings } = recordingLogger()
    let collectedWhileOpen = false
    const started = performance.now()
    const answer = collectSignatures({
      domain,
      allowlist: [a.address, b.address, c.address],
      // Not reachable by the local signature alone: the answer waits for the peers.
      threshold: 2,
      peers: peers.map((peer) => ({ url: peer.url, apiKey: 'peer-key' })),
      timeoutMs: PEER_TIMEOUT_MS,
      logger,
      path: PATH,
      peerBody: { chainId: 31337, transactionId: `0x${'12'.repeat(32)}`, requestPeerSignatures: false },
      checkShape: () => undefined,
      local: async () => {
        const sockets = await Promise.all(peers.map((peer) => peer.requested))
        gc()
        collectedWhileOpen = sockets.every((socket) => !socket.destroyed)
        return signAttestation(attestation(), a, domain)
      },
    })
    const sockets = await Promise.all(peers.map((peer) => peer.requested))
    const closed = sockets.map((socket) => once(socket, 'close'))

    const body: SignedAttestation = await within(
      answer,
      PEER_TIMEOUT_MS + MARGIN_MS,
      'the answer (peer timeout plus the margin)',
    )
    const elapsed = performance.now() - started
    t.ok(collectedWhileOpen, 'gc() ran while both peer calls were pending')
    t.ok(elapsed >= PEER_TIMEOUT_MS - 50, `waited for the peer timeout (${Math.round(elapsed)} ms)`)
    t.same(
      body.messages[0]!.signatures!.map((entry) => entry.signer),
      [a.address.toLowerCase()],
      'the local signature alone (rule 5: the strongest partial group)',
    )
    await within(Promise.all(closed), MARGIN_MS, "the hung peers' sockets closing")
    t.pass('both peer sockets were closed by the aggregating oracle')
    const skipped = warnings.filter((warning) => warning.message === 'skipped a peer oracle')
    t.same(
      skipped.map((warning) => warning.fields.reason),
      [`timed out after ${PEER_TIMEOUT_MS} ms`, `timed out after ${PEER_TIMEOUT_MS} ms`],
      'each peer is skipped as timed out',
    )
  },
)

t.test(
  'an early return (threshold reached) aborts the peer calls still running and closes their sockets',
  async (t) => {
    const peers = [await hungPeer(t), await hungPeer(t)]
    const { logger, warnings } = recordingLogger()
    const answer = collectSignatures({
      domain,
      allowlist: [a.address, b.address, c.address],
      threshold: 1,
      peers: peers.map((peer) => ({ url: peer.url, apiKey: undefined })),
      // Far longer than the test may take: only the early return can end these calls.
      timeoutMs: 600_000,
      logger,
      path: PATH,
      peerBody: {},
      checkShape: () => undefined,
      local: async () => {
        // Decided only once both peers hold a pending request.
        await Promise.all(peers.map((peer) => peer.requested))
        gc()
        return signAttestation(attestation(), a, domain)
      },
    })
    const sockets = await Promise.all(peers.map((peer) => peer.requested))
    const closed = sockets.map((socket) => once(socket, 'close'))
    const body = await within(answer, MARGIN_MS, 'the early answer')
    t.equal(body.messages[0]!.signatures!.length, 1, 'answered with the local signature alone')
    await within(Promise.all(closed), MARGIN_MS, "the pending peers' sockets closing after the early return")
    t.pass('both peer sockets were closed once the answer was decided')
    t.same(warnings, [], 'cancelled peers are not reported as failures')
  },
)
