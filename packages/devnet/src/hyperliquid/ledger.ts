/**
 * The Hyperliquid devnet's state: balances (perps USDC and spot tokens), each user's used nonces,
 * the executed transactions and the ledger updates, and the rules a signed send must pass.
 */
import {
  HYPERLIQUID_PERPS_USDC_DECIMALS,
  HYPERLIQUID_PERPS_USDC_ID,
  HYPERLIQUID_SPOT_TOKENS,
  type HyperliquidSpotToken,
} from './accounts.js'
import {
  type HyperliquidSendAction,
  type HyperliquidSignature,
  hyperliquidRecoverSigner,
  hyperliquidTransactionHash,
} from './signing.js'

/** Nonces must lie in (now − 2 days, now + 1 day), as on Hyperliquid. */
export const HYPERLIQUID_NONCE_PAST_MS = 2 * 24 * 60 * 60 * 1000
export const HYPERLIQUID_NONCE_FUTURE_MS = 24 * 60 * 60 * 1000
/** Hyperliquid keeps the 100 highest nonces of each user; a new one must exceed the smallest of them. */
export const HYPERLIQUID_NONCE_SET_SIZE = 100

/** One executed (or failed) action, as the explorer's `txDetails` shows it. */
export interface HyperliquidTxRecord {
  readonly time: number
  readonly user: `0x${string}`
  readonly action: HyperliquidSendAction
  readonly block: number
  readonly hash: `0x${string}`
  /** Why execution failed; null when it succeeded. */
  readonly error: string | null
}

/** One entry of `userNonFundingLedgerUpdates`. */
export interface HyperliquidLedgerUpdate {
  readonly time: number
  readonly hash: `0x${string}`
  readonly delta: Readonly<Record<string, unknown>>
}

/** A refused request: `/exchange` answers `{status: 'err', response: reason}`. */
export class HyperliquidActionError extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = 'HyperliquidActionError'
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const AMOUNT = /^([0-9]+)(?:\.([0-9]+))?$/

/** Parses a decimal amount string into smallest units; undefined when malformed or too precise. */
export function hyperliquidParseAmount(amount: string, decimals: number): bigint | undefined {
  const match = AMOUNT.exec(amount)
  if (!match) return undefined
  const [, whole = '0', fraction = ''] = match
  // Trailing zeros are harmless ("1.50"); more significant digits than the token has are not.
  const significant = fraction.replace(/0+$/, '')
  if (significant.length > decimals) return undefined
  return BigInt(whole + significant.padEnd(decimals, '0'))
}

/** Formats smallest units as Hyperliquid writes amounts: always with a fraction ("12.5", "3.0"). */
export function hyperliquidFormatAmount(amount: bigint, decimals: number): string {
  const digits = amount.toString().padStart(decimals + 1, '0')
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '')
  return `${whole}.${fraction === '' ? '0' : fraction}`
}

/** What a send moves: a currency id, its decimals and its display name. */
interface Asset {
  readonly currencyId: string
  readonly decimals: number
  readonly name: string
}

const PERPS_USDC: Asset = {
  currencyId: HYPERLIQUID_PERPS_USDC_ID,
  decimals: HYPERLIQUID_PERPS_USDC_DECIMALS,
  name: 'USDC',
}

/** The devnet's state and rules. */
export class HyperliquidLedger {
  readonly hyperliquidChain: string
  readonly tokens: readonly HyperliquidSpotToken[]
  readonly #now: () => number
  /** user → currency id → smallest units. A user with an entry exists on the venue. */
  readonly #balances = new Map<string, Map<string, bigint>>()
  /** user → used nonces (at most the 100 highest are kept, as on Hyperliquid). */
  readonly #nonces = new Map<string, number[]>()
  readonly #transactions = new Map<string, HyperliquidTxRecord>()
  readonly #updates = new Map<string, HyperliquidLedgerUpdate[]>()
  #block = 1

  constructor(options: { hyperliquidChain: string; now?: () => number }) {
    this.hyperliquidChain = options.hyperliquidChain
    this.tokens = HYPERLIQUID_SPOT_TOKENS
    this.#now = options.now ?? Date.now
  }

  /** The current block height (one block per executed action). */
  get height(): number {
    return this.#block
  }

  /** True when `user` has ever held anything (Hyperliquid knows no other users). */
  exists(user: string): boolean {
    return this.#balances.has(user.toLowerCase())
  }

  /** The balance of `user` in `currencyId` (perps USDC or a spot token id), smallest units. */
  balance(user: string, currencyId: string): bigint {
    return this.#balances.get(user.toLowerCase())?.get(currencyId.toLowerCase()) ?? 0n
  }

  /** Every non-zero balance of `user`. */
  balances(user: string): ReadonlyMap<string, bigint> {
    return this.#balances.get(user.toLowerCase()) ?? new Map()
  }

  /** Credits `amount` of `currencyId` to `user` (creating the account), for start-up and tests. */
  credit(user: string, currencyId: string, amount: bigint): void {
    const id = currencyId.toLowerCase()
    if (id !== HYPERLIQUID_PERPS_USDC_ID && !this.tokens.some((token) => token.tokenId === id)) {
      throw new Error(`unknown currency ${currencyId}`)
    }
    if (amount < 0n) throw new Error('cannot credit a negative amount')
    const key = user.toLowerCase()
    const held = this.#balances.get(key) ?? new Map<string, bigint>()
    held.set(id, (held.get(id) ?? 0n) + amount)
    this.#balances.set(key, held)
  }

  /** The token with `tokenId`, if listed. */
  token(tokenId: string): HyperliquidSpotToken | undefined {
    return this.tokens.find((token) => token.tokenId === tokenId.toLowerCase())
  }

  /** The transaction with `hash`. */
  transaction(hash: string): HyperliquidTxRecord | undefined {
    return this.#transactions.get(hash.toLowerCase())
  }

  /** Ledger updates touching `user` with `startTime <= time <= endTime`. */
  ledgerUpdates(
    user: string,
    startTime: number,
    endTime = Number.MAX_SAFE_INTEGER,
  ): HyperliquidLedgerUpdate[] {
    return (this.#updates.get(user.toLowerCase()) ?? []).filter(
      (update) => update.time >= startTime && update.time <= endTime,
    )
  }

  /** The asset a send moves, or why the token is refused. */
  #assetOf(action: HyperliquidSendAction): Asset {
    if (action.type === 'usdSend') return PERPS_USDC
    const match = /^([^:]+):(0x[0-9a-fA-F]{32})$/.exec(action.token)
    const token = match ? this.token(match[2] as string) : undefined
    if (!match || !token || token.name !== match[1]) {
      throw new HyperliquidActionError(`Invalid token: ${action.token}`)
    }
    return { currencyId: token.tokenId, decimals: token.weiDecimals, name: token.name }
  }

  #checkNonce(user: string, nonce: number): void {
    const now = this.#now()
    if (nonce <= now - HYPERLIQUID_NONCE_PAST_MS || nonce >= now + HYPERLIQUID_NONCE_FUTURE_MS) {
      throw new HyperliquidActionError(
        `Invalid nonce: nonce ${nonce} is outside the allowed range (now ${now} minus 2 days, plus 1 day)`,
      )
    }
    const used = this.#nonces.get(user) ?? []
    if (used.includes(nonce)) throw new HyperliquidActionError('Invalid nonce: duplicate nonce')
    if (used.length >= HYPERLIQUID_NONCE_SET_SIZE && nonce < (used[0] as number)) {
      throw new HyperliquidActionError('Invalid nonce: nonce too low (below the 100 highest nonces used)')
    }
  }

  #useNonce(user: string, nonce: number): void {
    const used = [...(this.#nonces.get(user) ?? []), nonce].sort((a, b) => a - b)
    this.#nonces.set(user, used.slice(-HYPERLIQUID_NONCE_SET_SIZE))
  }

  #addUpdate(user: string, update: HyperliquidLedgerUpdate): void {
    const list = this.#updates.get(user) ?? []
    list.push(update)
    this.#updates.set(user, list)
  }

  /**
   * Checks and executes a signed send, in the venue's order: shape and chain, amount, token,
   * signer, nonce, balance. A send refused before the balance check leaves no trace; one that
   * lacks the balance uses its nonce and is recorded with its error, as a failed action in a block.
   * @returns the transaction record of a successful send
   * @throws HyperliquidActionError with the venue's reason
   */
  async execute(
    action: HyperliquidSendAction,
    nonce: number,
    signature: HyperliquidSignature,
  ): Promise<HyperliquidTxRecord> {
    if (nonce !== action.time) {
      throw new HyperliquidActionError(
        `Invalid nonce: action time ${action.time} does not match nonce ${nonce}`,
      )
    }
    if (action.hyperliquidChain !== this.hyperliquidChain) {
      throw new HyperliquidActionError(
        `Invalid hyperliquidChain: expected ${this.hyperliquidChain}, got ${action.hyperliquidChain}`,
      )
    }
    if (!/^0x[0-9a-fA-F]{1,16}$/.test(action.signatureChainId)) {
      throw new HyperliquidActionError(`Invalid signatureChainId: ${action.signatureChainId}`)
    }
    if (!ADDRESS.test(action.destination)) {
      throw new HyperliquidActionError(`Invalid destination: ${action.destination}`)
    }
    const asset = this.#assetOf(action)
    const amount = hyperliquidParseAmount(action.amount, asset.decimals)
    if (amount === undefined || amount === 0n) {
      throw new HyperliquidActionError(
        `Invalid amount: ${action.amount} (a positive decimal with at most ${asset.decimals} decimals)`,
      )
    }
    let user: `0x${string}`
    try {
      user = await hyperliquidRecoverSigner(action, signature)
    } catch {
      throw new HyperliquidActionError('Invalid signature: cannot recover the signer')
    }
    // A wrong or tampered signature recovers to some other address, which holds nothing.
    if (!this.exists(user)) throw new HyperliquidActionError(`User or API Wallet ${user} does not exist.`)
    this.#checkNonce(user, nonce)
    const destination = action.destination.toLowerCase() as `0x${string}`
    const hash = hyperliquidTransactionHash(action, signature)
    const time = this.#now()
    this.#useNonce(user, nonce)
    const block = ++this.#block
    if (this.balance(user, asset.currencyId) < amount) {
      const reason =
        action.type === 'usdSend'
          ? 'Insufficient balance for withdrawal'
          : 'Insufficient balance for token transfer'
      this.#transactions.set(hash, { time, user, action, block, hash, error: reason })
      throw new HyperliquidActionError(reason)
    }
    this.#balances.get(user)?.set(asset.currencyId, this.balance(user, asset.currencyId) - amount)
    this.credit(destination, asset.currencyId, amount)
    const record: HyperliquidTxRecord = { time, user, action, block, hash, error: null }
    this.#transactions.set(hash, record)
    const text = hyperliquidFormatAmount(amount, asset.decimals)
    const delta =
      action.type === 'usdSend'
        ? {
            type: 'send',
            user,
            destination,
            sourceDex: '',
            destinationDex: '',
            token: 'USDC',
            amount: text,
            usdcValue: text,
            fee: '0.0',
            nativeTokenFee: '0.0',
            nonce,
          }
        : {
            type: 'spotTransfer',
            token: asset.name,
            amount: text,
            usdcValue: asset.name === 'USDC' ? text : '0.0',
            user,
            destination,
            fee: '0.0',
            nativeTokenFee: '0.0',
            nonce,
          }
    this.#addUpdate(user, { time, hash, delta })
    if (destination !== user) this.#addUpdate(destination, { time, hash, delta })
    return record
  }
}
