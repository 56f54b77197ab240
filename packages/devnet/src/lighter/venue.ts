/**
 * The simulated venue's state: accounts (balances by route type, API keys, nonces per API key),
 * executed transfers and the block height. Transfers are validated in full and execute at once in
 * a new block; a refused transfer changes nothing.
 */
import type { LighterDevAccount } from './accounts.js'
import {
  LIGHTER_MAX_ACCOUNT_INDEX,
  LIGHTER_MAX_API_KEY_INDEX,
  LIGHTER_ROUTE_PERPS,
  LIGHTER_ROUTE_SPOT,
  LIGHTER_TX_STATUS_EXECUTED,
  LIGHTER_TX_STATUS_FAILED,
  LIGHTER_TX_TYPE_TRANSFER,
  LIGHTER_USDC_ASSET_INDEX,
  type LighterTransferInfo,
  lighterTransferHash,
  lighterVerifyTransfer,
} from './protocol.js'

/** Why the venue refused something: answered as HTTP 400 `{code, message}`. */
export class LighterRejection extends Error {
  /** The venue-style error code in the body (21xxx for transactions, 2xxxx for lookups). */
  readonly code: number
  constructor(code: number, message: string) {
    super(message)
    this.name = 'LighterRejection'
    this.code = code
  }
}

/** One account's state. */
export interface LighterAccountState {
  readonly index: number
  readonly l1Address: string
  readonly accountType: 0 | 1
  /** USDC by route type, smallest unit. */
  readonly balances: Map<number, bigint>
  /** API key index → ed25519 public key (0x-hex). */
  readonly apiKeys: Map<number, string>
  /** API key index → next nonce. */
  readonly nonces: Map<number, number>
}

/** An executed transaction. */
export interface LighterTxRecord {
  readonly hash: `0x${string}`
  readonly type: number
  /** The `tx_info` JSON string as received. */
  readonly info: string
  readonly transfer: LighterTransferInfo
  readonly status: number
  readonly blockHeight: number
  /** Unix milliseconds. */
  readonly executedAt: number
}

const KNOWN_ROUTES = new Set([LIGHTER_ROUTE_PERPS, LIGHTER_ROUTE_SPOT])
const KNOWN_ASSETS = new Map([[LIGHTER_USDC_ASSET_INDEX, 'USDC']])

const TRANSFER_FIELDS = [
  'FromAccountIndex',
  'ApiKeyIndex',
  'ToAccountIndex',
  'AssetIndex',
  'FromRouteType',
  'ToRouteType',
  'Amount',
  'USDCFee',
  'ExpiredAt',
  'Nonce',
] as const

/** Codes in rejection bodies. */
export const LIGHTER_ERROR_CODES = Object.freeze({
  invalidParameter: 20001,
  accountNotFound: 21100,
  invalidSignature: 21120,
  invalidNonce: 21104,
  expired: 21112,
  insufficientBalance: 21500,
  feeTooLow: 21501,
  invalidMemo: 21502,
  unknownAsset: 21503,
  unknownRoute: 21504,
  txNotFound: 21600,
})

/** Largest `limit` of `GET /api/v1/accountTxs` (the venue's documented bound). */
export const LIGHTER_ACCOUNT_TXS_MAX_LIMIT = 100

/** The venue state behind the HTTP API. */
export class LighterVenue {
  readonly #accounts = new Map<number, LighterAccountState>()
  readonly #transactions = new Map<string, LighterTxRecord>()
  #height = 1
  /** Transfer fee, USDC smallest unit. */
  transferFeeUsdc: bigint
  /** Fees collected (the simulator keeps them out of every account). */
  feesCollected = 0n
  readonly #now: () => number

  constructor(options: { transferFeeUsdc: bigint; now?: () => number }) {
    this.transferFeeUsdc = options.transferFeeUsdc
    this.#now = options.now ?? Date.now
  }

  /** The current block height (1 before any transfer). */
  get height(): number {
    return this.#height
  }

  /** Creates an account of the cast with its start balances and API key. */
  addAccount(account: LighterDevAccount): void {
    this.#accounts.set(account.index, {
      index: account.index,
      l1Address: account.l1Address.toLowerCase(),
      accountType: account.accountType,
      balances: new Map(
        Object.entries(account.startBalances).map(([route, value]) => [Number(route), value]),
      ),
      apiKeys: new Map([[account.apiKeyIndex, account.apiPublicKey]]),
      nonces: new Map([[account.apiKeyIndex, 0]]),
    })
  }

  /** The account `index`, or undefined. */
  account(index: number): LighterAccountState | undefined {
    return this.#accounts.get(index)
  }

  /** The accounts an L1 address owns, main account first. */
  accountsOf(l1Address: string): LighterAccountState[] {
    const wanted = l1Address.toLowerCase()
    return [...this.#accounts.values()]
      .filter((account) => account.l1Address === wanted)
      .sort((a, b) => a.accountType - b.accountType || a.index - b.index)
  }

  /** USDC balance of `index` on `route`, smallest unit (0 for an unknown account). */
  balanceOf(index: number, route: number = LIGHTER_ROUTE_PERPS): bigint {
    return this.#accounts.get(index)?.balances.get(route) ?? 0n
  }

  /** Adds (or with a negative amount removes) USDC on an existing account. */
  fund(index: number, amount: bigint, route: number = LIGHTER_ROUTE_PERPS): bigint {
    const account = this.#accounts.get(index)
    if (!account) throw new Error(`no account ${index}`)
    const next = (account.balances.get(route) ?? 0n) + amount
    if (next < 0n) throw new Error(`account ${index} would go below 0`)
    account.balances.set(route, next)
    return next
  }

  /** The next nonce of an account's API key. */
  nextNonce(index: number, apiKeyIndex: number): number {
    const account = this.#accounts.get(index)
    if (!account)
      throw new LighterRejection(LIGHTER_ERROR_CODES.accountNotFound, `account not found: ${index}`)
    const nonce = account.nonces.get(apiKeyIndex)
    if (nonce === undefined) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.invalidParameter,
        `api key ${apiKeyIndex} is not registered for account ${index}`,
      )
    }
    return nonce
  }

  /** The executed transaction `hash` (0x-hex, any case), or undefined. */
  transaction(hash: string): LighterTxRecord | undefined {
    return this.#transactions.get(hash.toLowerCase())
  }

  /**
   * The transactions (executed or failed) that `index` sent or received with a block height of at
   * least `fromHeight`, oldest first, at most `limit`. Insertion order is height order: each
   * transaction has its own block.
   */
  accountTransactions(index: number, fromHeight: number, limit: number): LighterTxRecord[] {
    const found: LighterTxRecord[] = []
    for (const tx of this.#transactions.values()) {
      if (found.length >= limit) break
      if (tx.blockHeight < fromHeight) continue
      if (tx.transfer.FromAccountIndex === index || tx.transfer.ToAccountIndex === index) found.push(tx)
    }
    return found
  }

  /**
   * Test hook: stores a transfer as a transaction that failed at execution (status
   * {@link LIGHTER_TX_STATUS_FAILED}) in a new block, moving no funds and using no nonce, as the
   * venue's sequencer does with a transfer that passed the API checks but failed when executed.
   * Only the shape of `txInfo` is checked (not the signature, nonce, accounts or balance).
   * @throws LighterRejection when `txInfo` is not a transfer's JSON.
   */
  recordFailedTransfer(txInfo: string): `0x${string}` {
    const transfer = parseTransfer(txInfo)
    const hash = lighterTransferHash(transfer)
    this.#height += 1
    this.#transactions.set(hash, {
      hash,
      type: LIGHTER_TX_TYPE_TRANSFER,
      info: txInfo,
      transfer,
      status: LIGHTER_TX_STATUS_FAILED,
      blockHeight: this.#height,
      executedAt: this.#now(),
    })
    return hash
  }

  /**
   * Validates and executes a transaction (`tx_type`, `tx_info` JSON string); answers its hash.
   * @throws LighterRejection with a precise message; nothing changes then.
   */
  submit(txType: number, txInfo: string): `0x${string}` {
    if (txType !== LIGHTER_TX_TYPE_TRANSFER) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.invalidParameter,
        `unsupported tx_type ${txType}: the simulator executes transfers (tx_type ${LIGHTER_TX_TYPE_TRANSFER}) only`,
      )
    }
    const transfer = parseTransfer(txInfo)
    const from = this.#accounts.get(transfer.FromAccountIndex)
    if (!from) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.accountNotFound,
        `sender account not found: ${transfer.FromAccountIndex}`,
      )
    }
    const publicKey = from.apiKeys.get(transfer.ApiKeyIndex)
    if (publicKey === undefined) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.invalidSignature,
        `api key ${transfer.ApiKeyIndex} is not registered for account ${from.index}`,
      )
    }
    if (!lighterVerifyTransfer(transfer, publicKey)) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.invalidSignature,
        `invalid signature: Sig is not api key ${transfer.ApiKeyIndex} of account ${from.index}'s signature of this transfer`,
      )
    }
    const expected = from.nonces.get(transfer.ApiKeyIndex) ?? 0
    if (transfer.Nonce !== expected) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.invalidNonce,
        `invalid nonce ${transfer.Nonce}: api key ${transfer.ApiKeyIndex} of account ${from.index} expects nonce ${expected}`,
      )
    }
    const now = this.#now()
    if (transfer.ExpiredAt <= now) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.expired,
        `transaction expired: ExpiredAt ${transfer.ExpiredAt} is not after now (${now})`,
      )
    }
    const to = this.#accounts.get(transfer.ToAccountIndex)
    if (!to) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.accountNotFound,
        `receiver account not found: ${transfer.ToAccountIndex}`,
      )
    }
    if (!KNOWN_ASSETS.has(transfer.AssetIndex)) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.unknownAsset,
        `unknown asset index ${transfer.AssetIndex} (known: ${[...KNOWN_ASSETS.keys()].join(', ')})`,
      )
    }
    for (const [name, route] of [
      ['FromRouteType', transfer.FromRouteType],
      ['ToRouteType', transfer.ToRouteType],
    ] as const) {
      if (!KNOWN_ROUTES.has(route)) {
        throw new LighterRejection(
          LIGHTER_ERROR_CODES.unknownRoute,
          `unknown route type ${name} ${route} (0 = perps, 1 = spot)`,
        )
      }
    }
    if (BigInt(transfer.USDCFee) < this.transferFeeUsdc) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.feeTooLow,
        `USDCFee ${transfer.USDCFee} is below the transfer fee ${this.transferFeeUsdc}`,
      )
    }
    const amount = BigInt(transfer.Amount)
    const fee = BigInt(transfer.USDCFee)
    const available = from.balances.get(transfer.FromRouteType) ?? 0n
    if (available < amount + fee) {
      throw new LighterRejection(
        LIGHTER_ERROR_CODES.insufficientBalance,
        `insufficient balance: account ${from.index} has ${available} on route ${transfer.FromRouteType}, needs ${amount + fee} (amount ${amount} + fee ${fee})`,
      )
    }
    const hash = lighterTransferHash(transfer)
    // Execute: debit amount and fee, credit the amount, use the nonce, one new block.
    from.balances.set(transfer.FromRouteType, available - amount - fee)
    to.balances.set(transfer.ToRouteType, (to.balances.get(transfer.ToRouteType) ?? 0n) + amount)
    from.nonces.set(transfer.ApiKeyIndex, expected + 1)
    this.feesCollected += fee
    this.#height += 1
    this.#transactions.set(hash, {
      hash,
      type: LIGHTER_TX_TYPE_TRANSFER,
      info: txInfo,
      transfer,
      status: LIGHTER_TX_STATUS_EXECUTED,
      blockHeight: this.#height,
      executedAt: now,
    })
    return hash
  }
}

function invalid(message: string): LighterRejection {
  return new LighterRejection(LIGHTER_ERROR_CODES.invalidParameter, message)
}

/** Parses and range-checks `tx_info`. */
function parseTransfer(txInfo: string): LighterTransferInfo {
  let value: unknown
  try {
    value = JSON.parse(txInfo)
  } catch {
    throw invalid('tx_info is not valid JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('tx_info must be a JSON object')
  }
  const record = value as Record<string, unknown>
  for (const field of TRANSFER_FIELDS) {
    const number = record[field]
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) {
      throw invalid(`tx_info.${field} must be a non-negative integer, got ${JSON.stringify(number)}`)
    }
  }
  const fields = record as Record<(typeof TRANSFER_FIELDS)[number], number>
  for (const field of ['FromAccountIndex', 'ToAccountIndex'] as const) {
    if (fields[field] > LIGHTER_MAX_ACCOUNT_INDEX) {
      throw invalid(`tx_info.${field} ${fields[field]} is above the largest account index`)
    }
  }
  if (fields.ApiKeyIndex > LIGHTER_MAX_API_KEY_INDEX) {
    throw invalid(`tx_info.ApiKeyIndex ${fields.ApiKeyIndex} is above ${LIGHTER_MAX_API_KEY_INDEX}`)
  }
  if (fields.AssetIndex > 0xffff) throw invalid(`tx_info.AssetIndex ${fields.AssetIndex} is too large`)
  for (const field of ['FromRouteType', 'ToRouteType'] as const) {
    if (fields[field] > 0xff) throw invalid(`tx_info.${field} ${fields[field]} is too large`)
  }
  if (fields.Amount === 0) throw invalid('tx_info.Amount must be positive')
  const memo = record.Memo
  if (typeof memo !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(memo)) {
    throw new LighterRejection(
      LIGHTER_ERROR_CODES.invalidMemo,
      `invalid memo ${JSON.stringify(memo)}: Memo must be exactly 32 bytes, 0x-hex (64 hex digits)`,
    )
  }
  const sig = record.Sig
  if (typeof sig !== 'string' || !/^0x[0-9a-fA-F]{128}$/.test(sig)) {
    throw new LighterRejection(
      LIGHTER_ERROR_CODES.invalidSignature,
      'invalid signature: Sig must be a 64-byte ed25519 signature, 0x-hex',
    )
  }
  return {
    FromAccountIndex: fields.FromAccountIndex,
    ApiKeyIndex: fields.ApiKeyIndex,
    ToAccountIndex: fields.ToAccountIndex,
    AssetIndex: fields.AssetIndex,
    FromRouteType: fields.FromRouteType,
    ToRouteType: fields.ToRouteType,
    Amount: fields.Amount,
    USDCFee: fields.USDCFee,
    Memo: memo.toLowerCase(),
    ExpiredAt: fields.ExpiredAt,
    Nonce: fields.Nonce,
    Sig: sig.toLowerCase(),
  }
}
