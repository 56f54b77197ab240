/**
 * Signing an attestation and merging peer oracles' signatures into it, per the nine rules of the
 * spec (see `RequestPeerSignatures` in openapi/oracle.yaml) plus Pontis's stricter checks: every
 * signature is recovered against our own digest and must match its claimed signer, high-s is
 * refused, signers are deduplicated across answers and sorted by address.
 */
import { createHash } from 'node:crypto'
import { secp256k1 } from '@noble/curves/secp256k1'
import { type Eip712Domain, FetchTimeoutError, type Logger, PontisError, timedFetch } from '@pontis/core'
import { getAddress, type Hex, hexToBigInt } from 'viem'
import type { UnsignedAttestation } from './attestations.js'
import { defaultEcdsa, type Ecdsa } from './ecdsa.js'
import type { OracleMetrics, PeerOutcome } from './metrics.js'
import type { OracleSigner } from './signer.js'
import { executionDigest, type JsonTypedData, typedDataDigest } from './typed-data.js'

export interface MessageSignature {
  readonly signer: string
  readonly signature: string
}

export interface ExecutionSignature {
  readonly oracleChainId: number
  readonly oracleContract: string
  readonly oracleSigner: string
  readonly signature: string
}

/** Any attestation route's answer (the route's response schema has been checked before). */
export interface SignedAttestation {
  readonly messages: readonly {
    readonly data: JsonTypedData
    readonly result: Record<string, unknown>
    readonly signatures?: readonly MessageSignature[]
  }[]
  readonly execution?: {
    readonly idempotencyKey: string
    readonly actions: readonly string[]
    readonly signatures: readonly ExecutionSignature[]
  }
}

/** secp256k1 group order n; signatures with s above n/2 are the malleable twin and are refused. */
const HALF_N = secp256k1.CURVE.n / 2n

/**
 * The EIP-712 digests {@link signAttestation} signed, by the answer it made: the aggregator verifies
 * peers' signatures against them instead of hashing the same typed data again for every answer.
 */
const signedDigests = new WeakMap<SignedAttestation, AnswerDigests>()

/** The EIP-712 digests an answer's signatures are checked against: one per message, and the execution's. */
interface AnswerDigests {
  readonly messages: readonly Hex[]
  readonly execution: Hex | undefined
}

/** Signs every message and the execution with this oracle's signer. */
export async function signAttestation(
  attestation: UnsignedAttestation,
  signer: OracleSigner,
  domain: Eip712Domain,
): Promise<SignedAttestation> {
  const own = signer.address.toLowerCase()
  const digests = attestation.messages.map((message) => typedDataDigest(message.data))
  const messages = await Promise.all(
    attestation.messages.map(async (message, index) => ({
      data: message.data,
      result: message.result,
      signatures: [{ signer: own, signature: await signer.signDigest(digests[index]!) }],
    })),
  )
  const execution = attestation.execution
  if (execution === undefined) {
    const answer = { messages }
    signedDigests.set(answer, { messages: digests, execution: undefined })
    return answer
  }
  const digest = executionDigest(domain, execution.idempotencyKey, execution.actions)
  const signature = await signer.signDigest(digest)
  const answer: SignedAttestation = {
    messages,
    execution: {
      idempotencyKey: execution.idempotencyKey,
      actions: execution.actions,
      signatures: [
        {
          oracleChainId: domain.chainId,
          oracleContract: domain.verifyingContract.toLowerCase(),
          oracleSigner: own,
          signature,
        },
      ],
    },
  }
  signedDigests.set(answer, { messages: digests, execution: digest })
  return answer
}

const HEX_SIGNATURE = /^0x[0-9a-fA-F]{130}$/
const HEX_DIGEST = /^0x[0-9a-fA-F]{64}$/

/**
 * Why `signature` is not a valid low-s signature of `digest` by `claimed`, or undefined when it is.
 * Recovery uses our digest, never the signer's word; `ecdsa` is native libsecp256k1 when it loads
 * (see ecdsa.ts).
 */
export function signatureProblemSync(
  digest: Hex,
  signature: string,
  claimed: string,
  ecdsa: Ecdsa = defaultEcdsa(),
): string | undefined {
  if (!HEX_SIGNATURE.test(signature)) return 'is not 65 bytes of hex'
  if (!HEX_DIGEST.test(digest)) throw new TypeError('the digest must be 32 bytes of 0x-hex')
  const bytes = Buffer.from(signature.slice(2), 'hex')
  const v = bytes[64]!
  if (v !== 27 && v !== 28) return `has v ${v}, not 27 or 28`
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  if (s === 0n || s > HALF_N) return 'is high-s (malleable) or has s = 0'
  let recovered: string
  try {
    recovered = ecdsa.recoverAddress(Buffer.from(digest.slice(2), 'hex'), bytes.subarray(0, 64), v - 27)
  } catch {
    return 'does not recover to any address'
  }
  if (recovered !== claimed.toLowerCase())
    return `recovers to ${getAddress(recovered)}, not to the claimed ${claimed}`
  return undefined
}

/** {@link signatureProblemSync} as a promise (the form the package exported first). */
export async function signatureProblem(
  digest: Hex,
  signature: string,
  claimed: string,
  ecdsa?: Ecdsa,
): Promise<string | undefined> {
  return signatureProblemSync(digest, signature, claimed, ecdsa)
}

/**
 * Stable JSON (object keys sorted; array order kept): equal text means equal payloads. Built by
 * concatenation (no entry arrays per object): it runs over every answer of every aggregated request.
 */
function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  if (Array.isArray(value)) {
    let text = '['
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ','
      // As Array.prototype.join: a member JSON cannot write (undefined, a function) adds nothing.
      text += canonicalJson(value[index]) ?? ''
    }
    return `${text}]`
  }
  const record = value as Record<string, unknown>
  // The default sort compares UTF-16 code units, as `<` on strings does.
  const keys = Object.keys(record).sort()
  let text = '{'
  for (const key of keys) {
    const member = record[key]
    if (member === undefined) continue
    if (text.length > 1) text += ','
    text += `${JSON.stringify(key)}:${canonicalJson(member)}`
  }
  return `${text}}`
}

/** Everything but the signatures: what answers must agree on to be combined (rule 3). */
function payloadKey(answer: SignedAttestation): string {
  return canonicalJson({
    messages: answer.messages.map((message) => ({ data: message.data, result: message.result })),
    execution:
      answer.execution === undefined
        ? null
        : {
            idempotencyKey: answer.execution.idempotencyKey.toLowerCase(),
            actions: answer.execution.actions.map((action) => action.toLowerCase()),
          },
  })
}

/** One signer's signatures over every array of an answer. */
interface SignerSignatures {
  readonly messages: readonly string[]
  readonly execution: string | undefined
}

interface Group {
  readonly key: string
  readonly payload: SignedAttestation
  /** The digests of `payload`, which passed the domain and typed-data checks. */
  readonly digests: AnswerDigests
  readonly signers: Map<string, SignerSignatures>
  /** The peers (base URLs) whose valid answers carry this payload. */
  readonly sources: Set<string>
  hasLocal: boolean
}

/**
 * What operators compare in logs: SHA-256 of the payload's canonical JSON (messages' typed data and
 * results, execution key and actions; no signatures), 0x-hex.
 */
function payloadDigest(key: string): string {
  return `0x${createHash('sha256').update(key, 'utf8').digest('hex')}`
}

const sameDomain = (a: Eip712Domain, b: unknown): boolean =>
  typeof b === 'object' &&
  b !== null &&
  canonicalJson({ ...a, verifyingContract: a.verifyingContract.toLowerCase() }) ===
    canonicalJson({
      ...(b as Record<string, unknown>),
      verifyingContract: String((b as Record<string, unknown>).verifyingContract).toLowerCase(),
    })

/**
 * Digests known for an answer before it is checked: `domainChecked` when they are those of a group
 * with the same payload key (the same typed data, text for text, so the same domain check and the
 * same digests), not only of our own signing.
 */
interface KnownDigests extends AnswerDigests {
  readonly domainChecked: boolean
}

/** What {@link verifiedSigners} found: the complete signers and the digests it checked against. */
interface VerifiedAnswer {
  readonly signers: Map<string, SignerSignatures>
  readonly digests: AnswerDigests
}

/**
 * Checks an answer's signatures and returns the signers that signed every array of it (rule 4),
 * with their signatures. Throws (the answer fails validation) on any signature that is malformed,
 * high-s or does not recover to its claimed signer, and on a signing domain other than ours.
 * Every signature is recovered whatever `known` holds: it only spares hashing the typed data again.
 */
function verifiedSigners(
  answer: SignedAttestation,
  domain: Eip712Domain,
  ownSignatures: boolean,
  ecdsa: Ecdsa,
  known: KnownDigests | undefined,
): VerifiedAnswer {
  // Our own signer already checked its signatures by recovery (KMS) or made them itself (raw key):
  // recovering them again costs a third of an aggregated request for nothing.
  const problemOf = (digest: Hex, signature: string, claimed: string): string | undefined =>
    ownSignatures ? undefined : signatureProblemSync(digest, signature, claimed, ecdsa)
  const arrays: Map<string, string>[] = []
  const messageDigests: Hex[] = []
  for (const [index, message] of answer.messages.entries()) {
    if (!known?.domainChecked && !sameDomain(domain, message.data.domain))
      throw new Error(`messages[${index}] is signed under another domain`)
    let digest: Hex
    try {
      digest = known?.messages[index] ?? typedDataDigest(message.data)
    } catch (error) {
      throw new Error(`messages[${index}].data is not valid EIP-712 typed data: ${(error as Error).message}`)
    }
    messageDigests.push(digest)
    const bySigner = new Map<string, string>()
    for (const entry of message.signatures ?? []) {
      const problem = problemOf(digest, entry.signature, entry.signer)
      if (problem !== undefined) throw new Error(`messages[${index}] signature of ${entry.signer} ${problem}`)
      const signer = entry.signer.toLowerCase()
      if (!bySigner.has(signer)) bySigner.set(signer, entry.signature.toLowerCase())
    }
    arrays.push(bySigner)
  }
  let executionSignatures: Map<string, string> | undefined
  let executionDigestChecked: Hex | undefined
  if (answer.execution !== undefined) {
    const execution = answer.execution
    const digest =
      known?.execution ?? executionDigest(domain, execution.idempotencyKey as Hex, execution.actions as Hex[])
    executionDigestChecked = digest
    executionSignatures = new Map()
    for (const entry of execution.signatures) {
      if (
        entry.oracleChainId !== domain.chainId ||
        entry.oracleContract.toLowerCase() !== domain.verifyingContract.toLowerCase()
      ) {
        throw new Error(`execution signature of ${entry.oracleSigner} names another oracle domain`)
      }
      const problem = problemOf(digest, entry.signature, entry.oracleSigner)
      if (problem !== undefined) throw new Error(`execution signature of ${entry.oracleSigner} ${problem}`)
      const signer = entry.oracleSigner.toLowerCase()
      if (!executionSignatures.has(signer)) executionSignatures.set(signer, entry.signature.toLowerCase())
    }
  }
  const candidates = new Set([...(arrays[0]?.keys() ?? executionSignatures?.keys() ?? [])])
  const complete = new Map<string, SignerSignatures>()
  for (const signer of candidates) {
    if (!arrays.every((array) => array.has(signer))) continue
    if (executionSignatures !== undefined && !executionSignatures.has(signer)) continue
    complete.set(signer, {
      messages: arrays.map((array) => array.get(signer)!),
      execution: executionSignatures?.get(signer),
    })
  }
  return { signers: complete, digests: { messages: messageDigests, execution: executionDigestChecked } }
}

/** Exactly the same execution text (the payload key compares it lower-cased). */
function sameExecution(a: SignedAttestation['execution'], b: SignedAttestation['execution']): boolean {
  if (a === undefined || b === undefined) return a === b
  return (
    a.idempotencyKey === b.idempotencyKey &&
    a.actions.length === b.actions.length &&
    a.actions.every((action, index) => action === b.actions[index])
  )
}

/**
 * The digests a new answer can reuse: those of the group with its payload key (the messages' typed
 * data are the same text; the execution's only when its text is exactly the same), else those our
 * signer made it with.
 */
function knownDigests(answer: SignedAttestation, group: Group | undefined): KnownDigests | undefined {
  if (group !== undefined) {
    return {
      messages: group.digests.messages,
      execution: sameExecution(answer.execution, group.payload.execution)
        ? group.digests.execution
        : undefined,
      domainChecked: true,
    }
  }
  const signed = signedDigests.get(answer)
  return signed === undefined ? undefined : { ...signed, domainChecked: false }
}

export interface AggregatorOptions {
  readonly domain: Eip712Domain
  /** ORACLE_SIGNERS; undefined without an allowlist. */
  readonly allowlist: readonly string[] | undefined
  readonly logger: Logger
  /**
   * The `message.data` the caller's request yields; an answer whose messages attest anything else
   * (another transaction, another order) fails validation, however many signers it carries.
   */
  readonly expectedData?: Record<string, unknown>
  /** Default: native libsecp256k1 when it loads, else pure JS (see ecdsa.ts). */
  readonly ecdsa?: Ecdsa
}

/** Collects answers into groups of equal payloads, counting unique (allowlisted) signers. */
export class SignatureAggregator {
  readonly #domain: Eip712Domain
  readonly #allowlist: ReadonlySet<string> | undefined
  readonly #logger: Logger
  readonly #expectedData: string | undefined
  readonly #ecdsa: Ecdsa
  readonly #groups = new Map<string, Group>()

  constructor(options: AggregatorOptions) {
    this.#domain = options.domain
    this.#expectedData = options.expectedData === undefined ? undefined : canonicalJson(options.expectedData)
    this.#allowlist = options.allowlist && new Set(options.allowlist.map((address) => address.toLowerCase()))
    this.#logger = options.logger
    this.#ecdsa = options.ecdsa ?? defaultEcdsa()
  }

  /**
   * Adds a schema-valid answer. Returns false (after a warning) when it fails the signature
   * checks; its signatures are then ignored entirely (rule 9).
   */
  async add(source: string, answer: SignedAttestation, isLocal: boolean): Promise<boolean> {
    let verified: VerifiedAnswer
    let key: string
    try {
      const expected = this.#expectedData
      if (
        expected !== undefined &&
        answer.messages.some((message) => canonicalJson(message.data.message.data) !== expected)
      ) {
        throw new Error('it attests another request than the one asked')
      }
      key = payloadKey(answer)
      const known = knownDigests(answer, this.#groups.get(key))
      verified = verifiedSigners(answer, this.#domain, isLocal, this.#ecdsa, known)
    } catch (error) {
      this.#logger.warn('skipped an oracle answer that failed validation', {
        source,
        reason: (error as Error).message,
      })
      return false
    }
    let group = this.#groups.get(key)
    if (group === undefined) {
      group = {
        key,
        payload: answer,
        digests: verified.digests,
        signers: new Map(),
        sources: new Set(),
        hasLocal: false,
      }
      this.#groups.set(key, group)
    }
    if (isLocal) group.hasLocal = true
    else group.sources.add(source)
    for (const [signer, signatures] of verified.signers) {
      if (this.#allowlist !== undefined && !this.#allowlist.has(signer)) continue
      if (!group.signers.has(signer)) group.signers.set(signer, signatures)
    }
    return true
  }

  /** The group holding the local answer, if the local attestation succeeded. */
  localGroup(): Group | undefined {
    return [...this.#groups.values()].find((group) => group.hasLocal)
  }

  /** The strongest group: most unique signers, on a tie the one holding the local answer (rule 5). */
  strongest(): Group | undefined {
    let best: Group | undefined
    for (const group of this.#groups.values()) {
      if (
        best === undefined ||
        group.signers.size > best.signers.size ||
        (group.signers.size === best.signers.size && group.hasLocal && !best.hasLocal)
      )
        best = group
    }
    return best
  }

  /** The group holding the valid answer of peer `source`, if it gave one. */
  groupOf(source: string): Group | undefined {
    return [...this.#groups.values()].find((group) => group.sources.has(source))
  }

  /** A group's answer with its signatures: unique signers, sorted ascending by address. */
  render(group: Group): SignedAttestation {
    const signers = [...group.signers.entries()].sort(([a], [b]) =>
      hexToBigInt(a as Hex) < hexToBigInt(b as Hex) ? -1 : 1,
    )
    const payload = group.payload
    const messages = payload.messages.map((message, index) => ({
      data: message.data,
      result: message.result,
      signatures: signers.map(([signer, signatures]) => ({ signer, signature: signatures.messages[index]! })),
    }))
    if (payload.execution === undefined) return { messages }
    return {
      messages,
      execution: {
        idempotencyKey: payload.execution.idempotencyKey,
        actions: payload.execution.actions,
        signatures: signers.map(([signer, signatures]) => ({
          oracleChainId: this.#domain.chainId,
          oracleContract: this.#domain.verifyingContract.toLowerCase(),
          oracleSigner: signer,
          signature: signatures.execution!,
        })),
      },
    }
  }
}

/** A peer oracle to ask, with the key to present. */
export interface PeerTarget {
  readonly url: string
  /** The `x-api-key` to send, if any. */
  readonly apiKey: string | undefined
}

export interface CollectOptions {
  readonly domain: Eip712Domain
  readonly allowlist: readonly string[] | undefined
  readonly threshold: number
  readonly peers: readonly PeerTarget[]
  readonly timeoutMs: number
  readonly logger: Logger
  /** The route path peers are called on, e.g. `/attestations/depository-deposits/v1`. */
  readonly path: string
  /** The request body for peers (`requestPeerSignatures` already false). */
  readonly peerBody: unknown
  /** The route's response schema check: undefined when valid, else why not. */
  readonly checkShape: (body: unknown) => string | undefined
  /** The local attestation, signed. */
  readonly local: () => Promise<SignedAttestation>
  /** What every answer's `message.data` must be (see {@link AggregatorOptions.expectedData}). */
  readonly expectedData?: Record<string, unknown>
  /** Injected for tests; default global fetch. */
  readonly fetch?: typeof fetch
  /** Where peer outcomes and payload disagreements are counted. */
  readonly metrics?: OracleMetrics
  /** Default: native libsecp256k1 when it loads, else pure JS (see ecdsa.ts). */
  readonly ecdsa?: Ecdsa
}

/** One peer's answer, parsed; the call ends within `options.timeoutMs` or when `signal` aborts. */
async function askPeer(peer: PeerTarget, options: CollectOptions, signal: AbortSignal): Promise<unknown> {
  const response = await timedFetch(
    `${peer.url}${options.path}`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(peer.apiKey === undefined ? {} : { 'x-api-key': peer.apiKey }),
      },
      body: JSON.stringify(options.peerBody),
      redirect: 'error',
    },
    { timeoutMs: options.timeoutMs, signal, ...(options.fetch ? { fetch: options.fetch } : {}) },
  )
  if (!response.ok) throw new Error(`answered ${response.status}: ${response.text.slice(0, 200)}`)
  try {
    return JSON.parse(response.text) as unknown
  } catch {
    throw new Error('answered a body that is not JSON')
  }
}

/** Where a peer stands within one aggregated request. */
type PeerState = 'pending' | 'valid' | Exclude<PeerOutcome, 'ok' | 'mismatch' | 'cancelled'>

/**
 * Runs the local attestation and asks every peer at once (rule 1), then returns per rules 2-9:
 * with an allowlist, the first group reaching the threshold, else the strongest group; without
 * one, the local answer with the signatures of peers that agree with it. Once the answer is
 * decided, the peer calls still running are aborted; each peer's outcome is counted, and a
 * returned payload other than the local reading (also one read after an early return) is logged
 * at error level and counted as a disagreement.
 */
export function collectSignatures(options: CollectOptions): Promise<SignedAttestation> {
  const { logger, allowlist, threshold, metrics, path } = options
  const aggregator = new SignatureAggregator({
    domain: options.domain,
    allowlist,
    logger,
    ...(options.expectedData === undefined ? {} : { expectedData: options.expectedData }),
    ...(options.ecdsa === undefined ? {} : { ecdsa: options.ecdsa }),
  })
  const stop = new AbortController()
  const required = allowlist === undefined ? undefined : threshold
  const peerStates = new Map<string, PeerState>(options.peers.map((peer) => [peer.url, 'pending']))

  /** The local reading lost to the peers' payload: the operator must see it (rule 9 only warns). */
  const localOutvoted = (localKey: string, returned: Group) => {
    logger.error(
      "peers outvoted the local attestation: the returned payload differs from this oracle's reading",
      {
        path,
        localPayloadDigest: payloadDigest(localKey),
        peerPayloadDigest: payloadDigest(returned.key),
        peers: [...returned.sources].sort(),
        // Lower-case hex of one length: text order is address order.
        signers: [...returned.signers.keys()].sort(),
      },
    )
    metrics?.payloadDisagreement(path, 'local_outvoted')
  }

  /** Counts every peer's outcome and reports the payloads left out, once the answer is decided. */
  const report = (returned: Group | undefined) => {
    let mismatches = 0
    for (const [peer, state] of peerStates) {
      let outcome: PeerOutcome
      if (state === 'pending') outcome = 'cancelled'
      else if (state !== 'valid') outcome = state
      else {
        const group = aggregator.groupOf(peer)
        outcome = returned === undefined || group === returned ? 'ok' : 'mismatch'
        if (outcome === 'mismatch' && group !== undefined && returned !== undefined) {
          mismatches += 1
          logger.warn('skipped a peer answer whose payload differs from the returned one', {
            path,
            peer,
            peerPayloadDigest: payloadDigest(group.key),
            returnedPayloadDigest: payloadDigest(returned.key),
          })
        }
      }
      metrics?.peerAnswered(peer, outcome)
    }
    if (returned === undefined) return
    const local = aggregator.localGroup()
    if (local !== undefined && local !== returned) localOutvoted(local.key, returned)
    else if (local === returned && mismatches > 0) metrics?.payloadDisagreement(path, 'peers_outvoted')
  }

  return new Promise<SignedAttestation>((resolve, reject) => {
    let pending = 1 + options.peers.length
    let localError: unknown
    let done = false
    let returned: Group | undefined

    const finish = (outcome: { group: Group } | { error: unknown }) => {
      done = true
      // Only when a call is still running: an abort builds a DOMException (a stack trace) per request.
      if ([...peerStates.values()].includes('pending')) stop.abort()
      returned = 'group' in outcome ? outcome.group : undefined
      report(returned)
      if ('group' in outcome) resolve(aggregator.render(outcome.group))
      else reject(outcome.error)
    }

    const settle = () => {
      if (done) return
      if (required !== undefined) {
        const best = aggregator.strongest()
        if (best !== undefined && best.signers.size >= required) {
          logger.debug('oracle signatures collected', {
            path,
            matched: best.signers.size,
            required,
            early: pending > 0,
          })
          finish({ group: best })
          return
        }
      }
      if (pending > 0) return
      if (required === undefined) {
        if (localError !== undefined) return finish({ error: localError })
        const group = aggregator.localGroup()
        if (group === undefined)
          return finish({
            error: new PontisError('UNKNOWN_ERROR', 'The local attestation failed validation.'),
          })
        logger.debug('oracle signatures collected', { path, matched: group.signers.size })
        return finish({ group })
      }
      const best = aggregator.strongest()
      if (best === undefined || best.signers.size === 0) {
        logger.warn('no valid allowlisted signatures', { path, matched: 0, required })
        return finish({
          error:
            localError ??
            new PontisError(
              'SERVICE_UNAVAILABLE',
              'No oracle produced a valid allowlisted attestation; retry later.',
            ),
        })
      }
      logger.warn('threshold not reached; returning the strongest group', {
        path,
        matched: best.signers.size,
        required,
      })
      finish({ group: best })
    }

    options
      .local()
      .then(
        async (answer) => {
          // Peers decided before the local reading came: it is still compared with what was returned.
          if (done) {
            const key = payloadKey(answer)
            if (returned !== undefined && key !== returned.key) localOutvoted(key, returned)
            return
          }
          await aggregator.add('local', answer, true)
        },
        (error: unknown) => {
          localError = error
          if (allowlist !== undefined)
            logger.warn('local attestation failed; relying on peers', { path, error: String(error) })
        },
      )
      .finally(() => {
        pending -= 1
        settle()
      })

    for (const peer of options.peers) {
      // `stop` aborts every call still running once the answer is decided (early return included).
      askPeer(peer, options, stop.signal)
        .then(
          async (body) => {
            const problem = options.checkShape(body)
            if (problem !== undefined) {
              logger.warn('skipped a peer oracle', {
                peer: peer.url,
                reason: `answer does not match the route's schema: ${problem}`,
              })
              return 'invalid' as const
            }
            return (await aggregator.add(peer.url, body as SignedAttestation, false)) ? 'valid' : 'invalid'
          },
          (error: unknown) => {
            if (done) return 'pending' as const
            const timedOut = error instanceof FetchTimeoutError
            logger.warn('skipped a peer oracle', {
              peer: peer.url,
              reason: timedOut
                ? `timed out after ${options.timeoutMs} ms`
                : String((error as Error).message ?? error),
            })
            return timedOut ? ('timeout' as const) : ('error' as const)
          },
        )
        .then((state) => {
          if (!done) peerStates.set(peer.url, state)
        })
        .finally(() => {
          pending -= 1
          settle()
        })
    }
  })
}
