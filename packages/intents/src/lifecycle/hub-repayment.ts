/**
 * Repayment through the settlement hub. Where the deployment configures a hub and its oracles
 * (`repayment.path: "hub"` in the solver settings), a filled request's repayment goes:
 *
 * 1. the oracles attest the request's deposit; its execution is relayed to the hub (credits the
 *    depositor there), then they attest the fill; that execution moves the credit to the solver;
 * 2. credited requests of one origin chain and currency are batched into one hub withdrawal: the
 *    solver signs the withdrawal request, the oracles attest its initiation, and that execution is
 *    relayed (the hub locks the amount at the withdrawal's address);
 * 3. the oracles attest `withdrawal-initiated` (the hub holds the amount for it); the allocator
 *    checks that attestation against the hub's own signer set and threshold, records it, and pays
 *    the withdrawal out of the origin depository with a call request whose replay key is the
 *    withdrawal request's hash;
 * 4. once paid, the oracles attest the executed withdrawal (`depository-withdrawals`), and its
 *    execution is relayed: the hub burns what it held for the withdrawal, closing its books.
 *
 * Every step is idempotent: the hub applies an execution once per idempotency key (and is read
 * before anything is relayed), each relay and the payout are solver jobs (signed once and stored
 * before broadcast), the withdrawal's nonce is chosen once and stored with the batch, and the
 * depository executes one call request once. A SIGKILL anywhere loses nothing and pays nothing twice.
 */
import { randomBytes } from 'node:crypto'
import {
  chainByProtocolId,
  type HubConfig,
  type HubRelayCapability,
  type IntentsApi,
  type Logger,
  PontisError,
  protocolChainIdOf,
  type RegisteredChain,
  type Registry,
  type SolverCredentials,
} from '@pontis/core'
import { type Hex, hashTypedData, recoverAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { SqlClient } from '../store/index.js'
import type { LifecycleStore } from './lifecycle-store.js'
import type { RepaymentPayload } from './repayment.js'

/** The hub path's settings: the oracles to ask and the solver's hub identity. */
export interface HubRepaymentOptions {
  readonly registry: Registry
  readonly lifecycle: LifecycleStore
  readonly logger: Logger
  readonly credentials: (vmType: string) => SolverCredentials
  /** The solver's hub identity (secp256k1, the key that signs orders): owns its hub balance. Never logged. */
  readonly hubKey: Hex
  /** Oracle base URLs, asked in turn. */
  readonly oracles: readonly string[]
  readonly oracleApiKey?: string
  readonly now?: () => number
  readonly batchSize?: number
  /** Crash-test hook: `withdrawal-initiated` (the hub locked the withdrawal, its payout not queued yet). */
  readonly failpoint?: (point: string, kind: string) => void
}

/** One oracle execution as its routes answer it. */
interface OracleExecution {
  readonly idempotencyKey: string
  readonly actions: string[]
  readonly signatures: Array<{ oracleSigner: string; signature: string }>
}

interface OracleMessage {
  readonly data: {
    domain: Record<string, unknown>
    types: Record<string, TypeField[]>
    primaryType: string
    message: Record<string, unknown>
  }
  readonly result: Record<string, unknown>
  readonly signatures?: Array<{ signer: string; signature: string }>
}

interface OracleAnswer {
  readonly messages: OracleMessage[]
  readonly execution?: OracleExecution
}

interface TypeField {
  readonly name: string
  readonly type: string
}

/** The withdrawal request as the oracle routes take it (without the owner's signature). */
interface WithdrawalRequest {
  readonly chainId: number
  readonly currency: string
  readonly amount: string
  readonly ownerChainId: number
  readonly owner: string
  readonly recipient: string
  readonly nonce: string
}

const WITHDRAWAL_REQUEST_TYPES = {
  WithdrawalRequest: [
    { name: 'chainId', type: 'string' },
    { name: 'depository', type: 'bytes' },
    { name: 'currency', type: 'bytes' },
    { name: 'amount', type: 'uint256' },
    { name: 'ownerChainId', type: 'string' },
    { name: 'owner', type: 'bytes' },
    { name: 'recipient', type: 'bytes' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

const INTEGER = /^u?int\d*$/

/** A JSON typed-data value in the form viem hashes (integers as bigints, recursively). */
function signable(types: Record<string, TypeField[]>, type: string, value: unknown): unknown {
  if (type.endsWith('[]')) {
    return (value as unknown[]).map((entry) => signable(types, type.slice(0, -2), entry))
  }
  const fields = types[type]
  if (fields) {
    const record = value as Record<string, unknown>
    return Object.fromEntries(
      fields.map((field) => [field.name, signable(types, field.type, record[field.name])]),
    )
  }
  return INTEGER.test(type) ? BigInt(value as string | number) : value
}

/** Thrown for a step that cannot advance yet (not final, not relayed yet): retried on the next pass. */
class NotYet extends Error {}

/** Drives the hub path of every `path = 'hub'` repayment one step per pass. */
export class HubRepayments {
  readonly #options: HubRepaymentOptions
  readonly #now: () => number
  readonly #owner: ReturnType<typeof privateKeyToAccount>

  constructor(options: HubRepaymentOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#owner = privateKeyToAccount(options.hubKey)
  }

  /**
   * Whether the hub path can repay requests from `origin`, start to end: a hub chain that takes relays,
   * a depository payout, and a withdrawal the oracles can attest executed (so the hub's books close).
   */
  static canRepay(registry: Registry, origin: RegisteredChain): boolean {
    const hub = registry.hub()
    const filling = origin.adapter.filling
    const reading = origin.adapter.reading
    if (!hub || !filling?.signRepayment || !filling.repaymentWithdrawal || !reading?.readWithdrawal)
      return false
    return registry.tryChain(hub.chainId)?.adapter.filling?.hubRelay !== undefined
  }

  get #client(): SqlClient {
    return this.#options.lifecycle.requests.client
  }

  #hub(): { hub: HubConfig; relay: HubRelayCapability } {
    const hub = this.#options.registry.hub()
    const relay = hub ? this.#options.registry.tryChain(hub.chainId)?.adapter.filling?.hubRelay : undefined
    if (!hub || !relay)
      throw new PontisError('UNSUPPORTED_CHAIN', 'No hub chain that takes relays is configured.')
    return { hub, relay }
  }

  /** One pass: credit owed requests on the hub, batch the credited ones, move each withdrawal on. */
  async tick(): Promise<number> {
    let moved = 0
    const { rows } = await this.#client.query<{ request_id: string; hub_step: string }>(
      `SELECT request_id, hub_step FROM repayments WHERE path = 'hub' AND state = 'owed' AND hub_step <> 'credited'
       ORDER BY created_at, request_id LIMIT $1`,
      [this.#options.batchSize ?? 50],
    )
    for (const row of rows) {
      moved += await this.#guard('hub credit', row.request_id, () =>
        this.#credit(row.request_id, row.hub_step),
      )
    }
    moved += await this.#guard('hub batch', '', () => this.#batch())
    const withdrawals = await this.#client.query<WithdrawalRow>(
      `SELECT id, chain_id, currency, amount, request_hash, request, recipient, state, attempts FROM hub_withdrawals
       WHERE state IN ('initiating', 'initiated', 'paid') ORDER BY id`,
    )
    for (const row of withdrawals.rows) {
      moved += await this.#guard('hub withdrawal', String(row.id), () =>
        row.state === 'paid' ? this.#close(row) : this.#withdraw(row),
      )
    }
    return moved
  }

  async #guard(what: string, id: string, step: () => Promise<number>): Promise<number> {
    try {
      return await step()
    } catch (error) {
      if (!(error instanceof NotYet))
        this.#options.logger.warn(`${what} step failed`, { id, error: String(error) })
      return 0
    }
  }

  /** Relays the request's deposit attestation, then its fill attestation; credited once the hub applied both. */
  async #credit(requestId: string, step: string): Promise<number> {
    const request = await this.#options.lifecycle.requests.getRequest(requestId)
    if (!request) return 0
    const { rows: deposits } = await this.#client.query<{ transaction_id: string }>(
      `SELECT transaction_id FROM deposits WHERE request_id = $1 AND outcome = 'matched' AND confirmed
       ORDER BY seen_at LIMIT 1`,
      [requestId],
    )
    const depositTx = deposits[0]?.transaction_id
    if (!depositTx) return 0
    const deposit = await this.#attest('/attestations/depository-deposits/v1', {
      chainId: request.originChainId,
      transactionId: depositTx,
      requestPeerSignatures: true,
    })
    if (step === 'deposit') {
      if (!(await this.#relayed(deposit))) return 0
      await this.#setStep(requestId, 'fill')
    }
    const message = deposit.messages.find(
      (entry) => String(entry.result.depositId).toLowerCase() === requestId,
    )
    if (!message)
      throw new PontisError('NOT_A_DEPOSIT', `The deposit ${depositTx} does not pay ${requestId}.`)
    const { rows: fills } = await this.#client.query<{ transaction_id: string }>(
      `SELECT transaction_id FROM solver_jobs WHERE request_id = $1 AND kind = 'fill' AND state = 'confirmed'`,
      [requestId],
    )
    const fillTx = fills[0]?.transaction_id
    if (!fillTx) return 0
    const quote = request.quote as { order: IntentsApi.Order; orderSignature?: Hex }
    const orderSignature =
      quote.orderSignature ?? (await this.#owner.signMessage({ message: { raw: requestId as Hex } }))
    const fill = await this.#attest('/attestations/solver-fills/v1', {
      order: quote.order,
      orderSignature,
      inputs: [{ transactionId: depositTx, onchainId: String(message.result.onchainId), inputIndex: 0 }],
      fill: { transactionId: fillTx },
      requestPeerSignatures: true,
    })
    if (!(await this.#relayed(fill))) return 1
    await this.#setStep(requestId, 'credited')
    return 1
  }

  #setStep(requestId: string, step: 'fill' | 'credited'): Promise<unknown> {
    return this.#client.query(
      `UPDATE repayments SET hub_step = $2, updated_at = $3 WHERE request_id = $1 AND path = 'hub' AND state = 'owed'`,
      [requestId, step, this.#now()],
    )
  }

  /**
   * True once the hub applied the answer's execution. Otherwise queues its relay (one open relay per
   * execution at a time) and answers false: the next pass looks again.
   */
  async #relayed(answer: OracleAnswer): Promise<boolean> {
    const execution = answer.execution
    if (!execution) throw new PontisError('UNKNOWN_ERROR', 'The oracle attested no hub execution.')
    const { hub, relay } = this.#hub()
    const key = execution.idempotencyKey.toLowerCase()
    if (await relay.executed(hub.oracleContract, key)) return true
    const prefix = `hub_relay:${key}`
    const { rows } = await this.#client.query<{ state: string }>(
      `SELECT state FROM solver_jobs WHERE job_key = $1 OR job_key LIKE $2`,
      [prefix, `${prefix}:%`],
    )
    if (rows.some((row) => row.state !== 'reverted' && row.state !== 'failed')) return false
    await this.#options.lifecycle.enqueue({
      jobKey: rows.length === 0 ? prefix : `${prefix}:${rows.length}`,
      requestId: null,
      kind: 'hub_relay',
      chainId: hub.chainId,
      payload: {
        contract: hub.oracleContract,
        idempotencyKey: key,
        actions: execution.actions,
        signatures: execution.signatures.map((entry) => ({
          signer: entry.oracleSigner,
          signature: entry.signature,
        })),
      },
    })
    return false
  }

  /** Batches credited repayments, one hub withdrawal per origin chain and currency, its nonce fixed here. */
  async #batch(): Promise<number> {
    const { lifecycle, registry } = this.#options
    return lifecycle.transaction(async (tx) => {
      const { rows } = await tx.query<{
        request_id: string
        chain_id: string | number
        currency: string
        amount: string
      }>(
        `SELECT request_id, chain_id, currency, amount FROM repayments
         WHERE path = 'hub' AND state = 'owed' AND hub_step = 'credited'
         ORDER BY created_at, request_id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.#options.batchSize ?? 50],
      )
      const groups = new Map<
        string,
        { chainId: number; currency: string; amount: bigint; requestIds: string[] }
      >()
      for (const row of rows) {
        const key = `${row.chain_id}:${row.currency}`
        const group = groups.get(key) ?? {
          chainId: Number(row.chain_id),
          currency: row.currency,
          amount: 0n,
          requestIds: [],
        }
        group.amount += BigInt(row.amount)
        group.requestIds.push(row.request_id)
        groups.set(key, group)
      }
      let made = 0
      for (const group of groups.values()) {
        const origin = registry.chain(group.chainId)
        const firstRequest = await lifecycle.requests.getRequestWith(tx, group.requestIds[0]!)
        const order = (firstRequest?.quote as { order: IntentsApi.Order } | undefined)?.order
        if (!order) continue
        const ownerChain = chainByProtocolId(registry, order.solverChainId)
        const filling = origin.adapter.filling
        if (!filling) continue
        const recipient = filling.solverAddress(this.#options.credentials(origin.record.vmType))
        const request: WithdrawalRequest = {
          chainId: origin.id,
          currency: group.currency,
          amount: group.amount.toString(),
          ownerChainId: ownerChain.id,
          owner: order.solver,
          recipient,
          nonce: `0x${randomBytes(32).toString('hex')}`,
        }
        const hash = this.#requestHash(request)
        const { rows: inserted } = await tx.query<{ id: string }>(
          `INSERT INTO hub_withdrawals (chain_id, currency, amount, nonce, request_hash, request, recipient, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $8) RETURNING id`,
          [
            group.chainId,
            group.currency,
            request.amount,
            request.nonce,
            hash,
            JSON.stringify(request),
            recipient,
            this.#now(),
          ],
        )
        await tx.query(
          `UPDATE repayments SET state = 'batched', withdrawal_id = $2, updated_at = $3 WHERE request_id = ANY($1)`,
          [group.requestIds, inserted[0]!.id, this.#now()],
        )
        made++
      }
      return made
    })
  }

  /** The withdrawal request's EIP-712 hash under the hub's domain, each part in its chain's byte encoding. */
  #requestHash(request: WithdrawalRequest): Hex {
    const { registry } = this.#options
    const { hub } = this.#hub()
    const chain = registry.chain(request.chainId)
    const ownerChain = registry.chain(request.ownerChainId)
    const depository = chain.record.protocol?.v2?.depository
    if (depository === undefined)
      throw new PontisError('UNSUPPORTED_CHAIN', `${chain.record.displayName} has no depository.`)
    const encode = (
      on: RegisteredChain,
      value: string,
      role: 'contract' | 'currency' | 'user' | 'recipient',
    ) =>
      on.adapter.identity.encodeAddress(
        on.adapter.identity.normalizeAddress(value, role === 'currency' ? 'contract' : role),
        role,
      )
    return hashTypedData({
      domain: {
        name: hub.domain.name,
        version: hub.domain.version,
        chainId: hub.chainId,
        verifyingContract: hub.oracleContract,
      },
      types: WITHDRAWAL_REQUEST_TYPES,
      primaryType: 'WithdrawalRequest',
      message: {
        chainId: protocolChainIdOf(chain),
        depository: encode(chain, depository, 'contract'),
        currency: chain.adapter.identity.encodeAddress(request.currency, 'currency'),
        amount: BigInt(request.amount),
        ownerChainId: protocolChainIdOf(ownerChain),
        owner: encode(ownerChain, request.owner, 'user'),
        recipient: encode(chain, request.recipient, 'recipient'),
        nonce: request.nonce as Hex,
      },
    })
  }

  /**
   * Initiation relayed, then `withdrawal-initiated` attested and checked against the hub's signers:
   * recorded with the payout job, its replay key the request hash, in one transaction.
   */
  async #withdraw(row: WithdrawalRow): Promise<number> {
    const { hub, relay } = this.#hub()
    const hash = row.request_hash as Hex
    if (!(await relay.executed(hub.oracleContract, hash))) {
      const ownerSignature = await this.#owner.signMessage({ message: { raw: hash } })
      const initiation = await this.#attest('/attestations/withdrawal-initiation/v1', {
        ...row.request,
        ownerSignature,
        requestPeerSignatures: true,
      })
      if (String(initiation.messages[0]?.result.withdrawalRequestHash).toLowerCase() !== hash.toLowerCase()) {
        throw new PontisError('UNKNOWN_ERROR', `The oracle attested another withdrawal request than ${hash}.`)
      }
      if (!(await this.#relayed(initiation))) return 0
    }
    const initiated = await this.#attest('/attestations/withdrawal-initiated/v1', {
      ...row.request,
      requestPeerSignatures: true,
    })
    await this.#verifyInitiated(initiated, hash, BigInt(row.amount))
    this.#options.failpoint?.('withdrawal-initiated', 'hub_withdrawal')
    const { lifecycle } = this.#options
    return lifecycle.transaction(async (tx) => {
      const { rows: requestRows } = await tx.query<{ request_id: string }>(
        `SELECT request_id FROM repayments WHERE withdrawal_id = $1 AND state = 'batched' AND job_id IS NULL
         ORDER BY request_id FOR UPDATE`,
        [row.id],
      )
      const { rows: still } = await tx.query<{ state: string }>(
        `SELECT state FROM hub_withdrawals WHERE id = $1 AND state IN ('initiating', 'initiated') FOR UPDATE`,
        [row.id],
      )
      if (still.length === 0) return 0
      const jobKey = `repayment:${hash}${row.attempts > 0 ? `:${row.attempts}` : ''}`
      const payload: RepaymentPayload = {
        repaymentId: hash,
        recipient: row.recipient,
        legs: [{ currency: row.currency, amount: BigInt(row.amount).toString() }],
        requestIds: requestRows.map((entry) => entry.request_id),
      }
      await lifecycle.enqueue(
        {
          jobKey,
          requestId: null,
          kind: 'repayment',
          chainId: Number(row.chain_id),
          payload: { ...payload },
        },
        tx,
      )
      await tx.query(
        `UPDATE hub_withdrawals SET state = 'withdrawing', initiated = $2::jsonb,
           job_id = (SELECT id FROM solver_jobs WHERE job_key = $3), updated_at = $4 WHERE id = $1`,
        [row.id, JSON.stringify(initiated.messages[0]), jobKey, this.#now()],
      )
      await tx.query(
        `UPDATE repayments SET job_id = (SELECT id FROM solver_jobs WHERE job_key = $2), updated_at = $3
         WHERE withdrawal_id = $1 AND state = 'batched'`,
        [row.id, jobKey, this.#now()],
      )
      return 1
    })
  }

  /**
   * A paid withdrawal: the oracles attest it executed at the depository, and that execution (the hub
   * burns what the withdrawal's address held) is relayed. Families that cannot read withdrawals stay
   * `paid`: the hub keeps the amount at the withdrawal's address.
   */
  async #close(row: WithdrawalRow): Promise<number> {
    const origin = this.#options.registry.tryChain(Number(row.chain_id))
    const encode = origin?.adapter.filling?.repaymentWithdrawal
    if (!origin || !encode || !origin.adapter.reading?.readWithdrawal) return 0
    const withdrawal = encode({
      repaymentId: row.request_hash,
      recipient: row.recipient,
      legs: [{ currencyId: row.currency, amount: BigInt(row.amount) }],
    })
    const executed = await this.#attest('/attestations/depository-withdrawals/v1', {
      chainId: origin.id,
      withdrawal,
      requestPeerSignatures: true,
    })
    // PENDING until the payout is final by the oracle's rule: no execution yet.
    if (executed.messages[0]?.result.status !== 1 || !executed.execution) return 0
    if (!(await this.#relayed(executed))) return 0
    await this.#client.query(
      `UPDATE hub_withdrawals SET state = 'closed', updated_at = $2 WHERE id = $1 AND state = 'paid'`,
      [row.id, this.#now()],
    )
    return 1
  }

  /**
   * The allocator's check before paying: the attestation is about this request, the hub holds the
   * amount for it, and at least the hub's threshold of its own signers signed it.
   */
  async #verifyInitiated(answer: OracleAnswer, hash: Hex, amount: bigint): Promise<void> {
    const message = answer.messages[0]
    if (!message || String(message.result.withdrawalRequestHash).toLowerCase() !== hash.toLowerCase()) {
      throw new PontisError('UNKNOWN_ERROR', `withdrawal-initiated does not attest ${hash}.`)
    }
    if (BigInt(String(message.result.balance)) < amount) {
      throw new PontisError('INSUFFICIENT_FUNDS', `The hub holds less than ${amount} for withdrawal ${hash}.`)
    }
    const { hub, relay } = this.#hub()
    const domain = message.data.domain
    if (
      String(domain.verifyingContract).toLowerCase() !== hub.oracleContract.toLowerCase() ||
      Number(domain.chainId) !== hub.chainId
    ) {
      throw new PontisError(
        'INVALID_SIGNATURE',
        'withdrawal-initiated is signed under another domain than the hub.',
      )
    }
    const { types, primaryType } = message.data
    const digest = hashTypedData({
      domain,
      types,
      primaryType,
      message: signable(types, primaryType, message.data.message) as Record<string, unknown>,
    } as Parameters<typeof hashTypedData>[0])
    const { signers, threshold } = await relay.signers(hub.oracleContract)
    const allowed = new Set(signers.map((signer) => signer.toLowerCase()))
    const valid = new Set<string>()
    for (const entry of message.signatures ?? []) {
      const signer = (await recoverAddress({ hash: digest, signature: entry.signature as Hex })).toLowerCase()
      if (allowed.has(signer)) valid.add(signer)
    }
    if (valid.size < threshold) {
      throw new PontisError(
        'INVALID_SIGNATURE',
        `withdrawal-initiated carries ${valid.size} of the hub's signers, below its threshold ${threshold}.`,
      )
    }
  }

  /** POSTs to the oracles in turn; a 404 (not final yet) or no answer is {@link NotYet}. */
  async #attest(path: string, body: unknown): Promise<OracleAnswer> {
    let last: unknown
    for (const base of this.#options.oracles) {
      try {
        const response = await fetch(new URL(path, base), {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.#options.oracleApiKey ? { 'x-api-key': this.#options.oracleApiKey } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        })
        const answer = (await response.json()) as OracleAnswer & { message?: string; errorCode?: string }
        if (response.ok) return answer
        last = new Error(`${path}: ${response.status} ${answer.errorCode ?? ''} ${answer.message ?? ''}`)
        // Not final yet, or the hub not there yet: the next pass asks again.
        if (response.status === 404 || answer.errorCode === 'INSUFFICIENT_FUNDS')
          throw new NotYet(String(last))
      } catch (error) {
        if (error instanceof NotYet) throw error
        last = error
      }
    }
    throw last instanceof Error ? last : new Error(String(last))
  }
}

interface WithdrawalRow {
  readonly id: string | number
  readonly chain_id: string | number
  readonly currency: string
  readonly amount: string
  readonly request_hash: string
  readonly request: WithdrawalRequest
  readonly recipient: string
  readonly state: string
  readonly attempts: number
}
