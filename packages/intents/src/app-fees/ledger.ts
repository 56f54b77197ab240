/**
 * App fees (issue 22): charged to users in the deposit, accrued per recipient and currency when the
 * request is filled, and claimed later by the recipient (never paid out at once). A claim is offered
 * as a message to sign, authorized once its signature verifies (the payout is then queued as a
 * solver job), and settled by the payout's outcome. Balances are derived from the rows, so a write
 * repeated after a crash changes nothing and a balance is never paid twice.
 */
import { randomBytes } from 'node:crypto'
import { canonicalId, PontisError } from '@pontis/core'
import { lockForTransaction, type SqlClient, type StoredRequest } from '../store/index.js'

/** A recipient's unclaimed app fees in one currency. */
export interface AppFeeBalance {
  readonly chainId: number
  readonly currency: string
  readonly amount: bigint
}

export type AppFeeClaimState = 'offered' | 'authorized' | 'paid' | 'failed'

export interface AppFeeClaim {
  readonly id: string
  /** The recipient of the fees, who signs the claim. */
  readonly wallet: string
  /** Where the payout goes. */
  readonly recipient: string
  readonly chainId: number
  readonly currency: string
  readonly amount: bigint
  /** The text the wallet signs (EIP-191 on EVM): every term of the claim, its id and expiry. */
  readonly message: string
  /** After this (Unix ms) the offer can no longer be signed. */
  readonly expiresAt: number
  readonly state: AppFeeClaimState
  readonly transactionId: string | null
}

export interface ClaimOffer {
  readonly wallet: string
  readonly recipient: string
  readonly chainId: number
  readonly currency: string
  /** Part of the balance; the whole balance when absent. */
  readonly amount?: bigint
}

/** How long an offered claim may be signed. */
export const CLAIM_OFFER_TTL_MS = 10 * 60_000

// Serialises claims of one wallet and currency, so two claims cannot both take one balance.
const LOCK_CLASS = 0x41707046

interface ClaimRow {
  id: string
  wallet: string
  recipient: string
  chain_id: number
  currency: string
  amount: string
  message: string
  expires_at: number
  state: AppFeeClaimState
  transaction_id: string | null
}

const CLAIM_COLUMNS =
  'id, wallet, recipient, chain_id, currency, amount, message, expires_at, state, transaction_id'

function claimFromRow(row: ClaimRow): AppFeeClaim {
  return {
    id: row.id,
    wallet: row.wallet,
    recipient: row.recipient,
    chainId: Number(row.chain_id),
    currency: row.currency,
    amount: BigInt(row.amount),
    message: row.message,
    expiresAt: Number(row.expires_at),
    state: row.state,
    transactionId: row.transaction_id,
  }
}

/** The order's app fees as the quote stored them (`quote.order.fees`). */
interface StoredOrderFee {
  readonly recipient?: unknown
  readonly amount?: unknown
}

/** The app fees a request's order charges (positive amounts with a recipient), by their position. */
export function appFeesOf(
  request: StoredRequest,
): Array<{ readonly position: number; readonly recipient: string; readonly amount: string }> {
  const order = request.quote.order as { fees?: readonly StoredOrderFee[] } | undefined
  const fees: Array<{ position: number; recipient: string; amount: string }> = []
  for (const [position, fee] of (order?.fees ?? []).entries()) {
    if (typeof fee.recipient === 'string' && typeof fee.amount === 'string' && BigInt(fee.amount) > 0n)
      fees.push({ position, recipient: fee.recipient, amount: fee.amount })
  }
  return fees
}

/**
 * Records the app fees of a filled request, in `tx` (the transaction that moves it to `success`).
 * The fees were charged in the origin currency and sit in the origin chain's depository.
 * @returns how many fees were newly recorded (0 when they already were).
 */
export async function accrueAppFees(tx: SqlClient, request: StoredRequest, now: number): Promise<number> {
  let recorded = 0
  for (const fee of appFeesOf(request)) {
    const { rows } = await tx.query(
      `INSERT INTO app_fee_accruals (request_id, position, recipient, chain_id, currency, amount, accrued_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (request_id, position) DO NOTHING RETURNING position`,
      [
        request.id,
        fee.position,
        canonicalId(fee.recipient),
        request.originChainId,
        request.originCurrency,
        fee.amount,
        now,
      ],
    )
    recorded += rows.length
  }
  return recorded
}

/** Balances of a wallet: accruals less authorized and paid claims (a failed payout gives its amount back). */
const ENTRIES = `(
    SELECT chain_id, currency, amount FROM app_fee_accruals WHERE recipient = $1
    UNION ALL
    SELECT chain_id, currency, -amount FROM app_fee_claims WHERE wallet = $1 AND state IN ('authorized', 'paid')
  ) AS entries`

export class AppFeeLedger {
  readonly #client: SqlClient
  readonly #now: () => number

  constructor(client: SqlClient, now: () => number = Date.now) {
    this.#client = client
    this.#now = now
  }

  /** The wallet's unclaimed app fees, by chain then currency; currencies with nothing left are left out. */
  async balances(wallet: string): Promise<AppFeeBalance[]> {
    const { rows } = await this.#client.query<{ chain_id: number; currency: string; amount: string }>(
      `SELECT chain_id, currency, sum(amount) AS amount FROM ${ENTRIES} GROUP BY chain_id, currency HAVING sum(amount) > 0 ORDER BY chain_id, currency`,
      [canonicalId(wallet)],
    )
    return rows.map((row) => ({
      chainId: Number(row.chain_id),
      currency: row.currency,
      amount: BigInt(row.amount),
    }))
  }

  /**
   * Offers a claim of the wallet's balance (or part of it) in one currency: the claim's terms and
   * the message the wallet signs to authorize it.
   * @throws PontisError INSUFFICIENT_FUNDS when there is nothing (or not that much) to claim.
   */
  async offer(offer: ClaimOffer): Promise<AppFeeClaim> {
    const wallet = canonicalId(offer.wallet)
    const balance = await this.#balanceOf(this.#client, wallet, offer.chainId, offer.currency)
    const amount = offer.amount ?? balance
    refuseUnlessClaimable(offer, balance, amount)
    const now = this.#now()
    const id = `clm_${randomBytes(16).toString('hex')}`
    const expiresAt = now + CLAIM_OFFER_TTL_MS
    const message = [
      'Claim app fees',
      `Wallet: ${offer.wallet}`,
      `Recipient: ${offer.recipient}`,
      `Chain: ${offer.chainId}`,
      `Currency: ${offer.currency}`,
      `Amount: ${amount}`,
      `Claim: ${id}`,
      `Expires: ${new Date(expiresAt).toISOString()}`,
    ].join('\n')
    const { rows } = await this.#client.query<ClaimRow>(
      `INSERT INTO app_fee_claims (id, wallet, recipient, chain_id, currency, amount, message, expires_at, state,
         created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'offered', $9, $9) RETURNING ${CLAIM_COLUMNS}`,
      [
        id,
        wallet,
        offer.recipient,
        offer.chainId,
        offer.currency,
        amount.toString(),
        message,
        expiresAt,
        now,
      ],
    )
    return claimFromRow(rows[0] as ClaimRow)
  }

  /**
   * The wallet's claims, newest first: `limit` of them after `after` (the last one of the previous
   * page). Offers never signed are left out once expired.
   * @returns the page, and the position to continue from when more may follow.
   */
  async claims(
    wallet: string,
    limit: number,
    after?: { readonly at: number; readonly id: string },
  ): Promise<{ claims: Array<AppFeeClaim & { createdAt: number }>; next?: { at: number; id: string } }> {
    const { rows } = await this.#client.query<ClaimRow & { created_at: string | number }>(
      `SELECT ${CLAIM_COLUMNS}, created_at FROM app_fee_claims
       WHERE wallet = $1 AND (state <> 'offered' OR expires_at >= $2)
         AND ($3::bigint IS NULL OR (created_at, id) < ($3::bigint, $4::text))
       ORDER BY created_at DESC, id DESC LIMIT $5`,
      [canonicalId(wallet), this.#now(), after?.at ?? null, after?.id ?? null, limit + 1],
    )
    const page = rows
      .slice(0, limit)
      .map((row) => ({ ...claimFromRow(row), createdAt: Number(row.created_at) }))
    const last = page.at(-1)
    return rows.length > limit && last
      ? { claims: page, next: { at: last.createdAt, id: last.id } }
      : { claims: page }
  }

  async claim(id: string): Promise<AppFeeClaim | undefined> {
    const { rows } = await this.#client.query<ClaimRow>(
      `SELECT ${CLAIM_COLUMNS} FROM app_fee_claims WHERE id = $1`,
      [id],
    )
    return rows[0] ? claimFromRow(rows[0]) : undefined
  }

  /**
   * Authorizes an offered claim whose signature the caller verified, and queues its payout with
   * `queuePayout` in the same transaction. A claim already authorized is answered as it stands: a
   * signature posted twice pays once.
   * @throws PontisError SIGNATURE_EXPIRED past the offer's expiry, INSUFFICIENT_FUNDS when another
   * claim took the balance meanwhile.
   */
  async authorize(
    id: string,
    queuePayout: (tx: SqlClient, claim: AppFeeClaim) => Promise<void>,
  ): Promise<AppFeeClaim> {
    return this.#client.transaction(async (tx) => {
      const { rows } = await tx.query<ClaimRow>(
        `SELECT ${CLAIM_COLUMNS} FROM app_fee_claims WHERE id = $1 FOR UPDATE`,
        [id],
      )
      const claim = rows[0] ? claimFromRow(rows[0]) : undefined
      if (!claim) throw unknownClaim(id)
      if (claim.state !== 'offered') return claim
      const now = this.#now()
      if (claim.expiresAt < now) {
        throw new PontisError(
          'SIGNATURE_EXPIRED',
          `Claim ${id} expired at ${new Date(claim.expiresAt).toISOString()}; ask for a new claim.`,
        )
      }
      await lockForTransaction(tx, LOCK_CLASS, `${claim.wallet}:${claim.chainId}:${claim.currency}`)
      const balance = await this.#balanceOf(tx, claim.wallet, claim.chainId, claim.currency)
      refuseUnlessClaimable(claim, balance, claim.amount)
      const updated = await tx.query<ClaimRow>(
        `UPDATE app_fee_claims SET state = 'authorized', updated_at = $2 WHERE id = $1 RETURNING ${CLAIM_COLUMNS}`,
        [id, now],
      )
      const authorized = claimFromRow(updated.rows[0] as ClaimRow)
      await queuePayout(tx, authorized)
      return authorized
    })
  }

  /** Records the payout's outcome: `failed` gives the amount back to the balance. */
  async settle(
    id: string,
    outcome: 'paid' | 'failed',
    transactionId: string | null,
    tx: SqlClient = this.#client,
  ): Promise<void> {
    await tx.query(
      `UPDATE app_fee_claims SET state = $2, transaction_id = COALESCE($3, transaction_id), updated_at = $4
       WHERE id = $1 AND state = 'authorized'`,
      [id, outcome, transactionId, this.#now()],
    )
  }

  async #balanceOf(client: SqlClient, wallet: string, chainId: number, currency: string): Promise<bigint> {
    const { rows } = await client.query<{ amount: string | null }>(
      `SELECT sum(amount) AS amount FROM ${ENTRIES} WHERE chain_id = $2 AND currency = $3`,
      [wallet, chainId, currency],
    )
    return BigInt(rows[0]?.amount ?? '0')
  }
}

function unknownClaim(id: string): PontisError {
  return new PontisError('ROUTE_NOT_FOUND', `No app fee claim ${id} for this wallet; ask for a claim first.`)
}

function refuseUnlessClaimable(
  offer: Pick<ClaimOffer, 'wallet' | 'chainId' | 'currency'>,
  balance: bigint,
  amount: bigint,
): void {
  if (balance <= 0n) {
    throw new PontisError(
      'INSUFFICIENT_FUNDS',
      `${offer.wallet} has no unclaimed app fees in ${offer.currency} on chain ${offer.chainId} (claims already authorized are not counted).`,
      { balance: '0' },
    )
  }
  if (amount <= 0n || amount > balance) {
    throw new PontisError(
      'INSUFFICIENT_FUNDS',
      `${offer.wallet} can claim between 1 and ${balance} of ${offer.currency} on chain ${offer.chainId}, not ${amount}.`,
      { balance: balance.toString(), amount: amount.toString() },
    )
  }
}
