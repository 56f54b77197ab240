/**
 * SPL Token and Token-2022 account layouts, read straight from account data: what the RPC needs for
 * `jsonParsed` answers, token balances and transaction token-balance metadata. Token-2022 extensions
 * are recognised (the account type byte after the base layout) but not decoded.
 */
import { PublicKey } from '@solana/web3.js'

/** The SPL Token program. */
export const TOKEN_PROGRAM_ADDRESS = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'
/** The Token-2022 program. */
export const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'

const MINT_LENGTH = 82
const ACCOUNT_LENGTH = 165
/** Token-2022 puts an account-type byte right after the (padded) base layout. */
const ACCOUNT_TYPE_OFFSET = ACCOUNT_LENGTH
const ACCOUNT_TYPE_MINT = 1
const ACCOUNT_TYPE_ACCOUNT = 2

/** Whether `owner` is one of the two token programs. */
export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM_ADDRESS || owner === TOKEN_2022_PROGRAM_ADDRESS
}

/** The `program` name jsonParsed answers use for a token program. */
export function tokenProgramName(programId: string): string {
  return programId === TOKEN_2022_PROGRAM_ADDRESS ? 'spl-token-2022' : 'spl-token'
}

/** A decoded token mint. */
export interface TokenMint {
  readonly mintAuthority: string | null
  readonly supply: bigint
  readonly decimals: number
  readonly isInitialized: boolean
  readonly freezeAuthority: string | null
}

/** A decoded token account. */
export interface TokenAccount {
  readonly mint: string
  readonly owner: string
  readonly amount: bigint
  readonly delegate: string | null
  readonly state: 'initialized' | 'frozen'
  /** The rent-exempt reserve of a wrapped-native account, null otherwise. */
  readonly rentExemptReserve: bigint | null
  readonly delegatedAmount: bigint
  readonly closeAuthority: string | null
}

function view(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength)
}

function address(data: Uint8Array, offset: number): string {
  return new PublicKey(data.subarray(offset, offset + 32)).toBase58()
}

function optionalAddress(data: Uint8Array, offset: number): string | null {
  return view(data).getUint32(offset, true) === 1 ? address(data, offset + 4) : null
}

function hasLayout(owner: string, data: Uint8Array, length: number, accountType: number): boolean {
  if (!isTokenProgram(owner)) return false
  if (data.length === length) return true
  // Only Token-2022 accounts grow past the base layout, and they say what they are.
  return (
    owner === TOKEN_2022_PROGRAM_ADDRESS &&
    data.length > ACCOUNT_LENGTH &&
    data[ACCOUNT_TYPE_OFFSET] === accountType
  )
}

/** Decodes a mint owned by `owner`; undefined when the data is no initialized mint. */
export function decodeMint(owner: string, data: Uint8Array): TokenMint | undefined {
  if (!hasLayout(owner, data, MINT_LENGTH, ACCOUNT_TYPE_MINT)) return undefined
  const fields = view(data)
  const isInitialized = data[45] === 1
  if (!isInitialized) return undefined
  return {
    mintAuthority: optionalAddress(data, 0),
    supply: fields.getBigUint64(36, true),
    decimals: data[44] as number,
    isInitialized,
    freezeAuthority: optionalAddress(data, 46),
  }
}

/** Decodes a token account owned by `owner`; undefined when the data is no initialized account. */
export function decodeTokenAccount(owner: string, data: Uint8Array): TokenAccount | undefined {
  if (!hasLayout(owner, data, ACCOUNT_LENGTH, ACCOUNT_TYPE_ACCOUNT)) return undefined
  const fields = view(data)
  const state = data[108]
  if (state !== 1 && state !== 2) return undefined
  return {
    mint: address(data, 0),
    owner: address(data, 32),
    amount: fields.getBigUint64(64, true),
    delegate: optionalAddress(data, 72),
    state: state === 1 ? 'initialized' : 'frozen',
    rentExemptReserve: fields.getUint32(109, true) === 1 ? fields.getBigUint64(113, true) : null,
    delegatedAmount: fields.getBigUint64(121, true),
    closeAuthority: optionalAddress(data, 129),
  }
}

/** A token amount as the RPC reports it (`uiTokenAmount`, `tokenAmount`, getTokenAccountBalance). */
export interface UiTokenAmount {
  amount: string
  decimals: number
  uiAmount: number | null
  uiAmountString: string
}

/** `amount` base units with `decimals`, formatted the way the RPC does (trailing zeros trimmed). */
export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const digits = amount.toString().padStart(decimals + 1, '0')
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '')
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: Number(amount) / 10 ** decimals,
    uiAmountString: fraction === '' ? whole : `${whole}.${fraction}`,
  }
}

/** The `jsonParsed` form of a token account or mint, or undefined when `data` is neither. */
export function parseTokenAccountData(
  owner: string,
  data: Uint8Array,
  decimalsOfMint: (mint: string) => number | undefined,
): { program: string; parsed: unknown; space: number } | undefined {
  const program = tokenProgramName(owner)
  const mint = decodeMint(owner, data)
  if (mint) {
    return {
      program,
      parsed: {
        type: 'mint',
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority,
          isInitialized: mint.isInitialized,
          mintAuthority: mint.mintAuthority,
          supply: mint.supply.toString(),
        },
      },
      space: data.length,
    }
  }
  const account = decodeTokenAccount(owner, data)
  if (!account) return undefined
  // The real parser refuses an account whose mint it cannot read (decimals are part of the answer).
  const decimals = decimalsOfMint(account.mint)
  if (decimals === undefined) return undefined
  const info: Record<string, unknown> = {
    isNative: account.rentExemptReserve !== null,
    mint: account.mint,
    owner: account.owner,
    state: account.state,
    tokenAmount: uiTokenAmount(account.amount, decimals),
  }
  if (account.delegate !== null) {
    info.delegate = account.delegate
    info.delegatedAmount = uiTokenAmount(account.delegatedAmount, decimals)
  }
  if (account.rentExemptReserve !== null)
    info.rentExemptReserve = uiTokenAmount(account.rentExemptReserve, decimals)
  if (account.closeAuthority !== null) info.closeAuthority = account.closeAuthority
  return { program, parsed: { type: 'account', info }, space: data.length }
}
