/**
 * Money is never a float. Amounts travel as decimal strings of the smallest unit (wei, lamports,
 * satoshis) and are computed as `bigint`.
 *
 * Error policy:
 * - Text that may come from a client or a config file (`parseAmount`, `parseSignedAmount`,
 *   `parseUnits`) is rejected with `PontisError('INVALID_REQUEST')`, whose message names the field
 *   and the value, and whose `errorData` is `{ field, value }`.
 * - Arguments only code can get wrong (negative `decimals`, division by zero, non-integer basis
 *   points) throw a `RangeError`: that is a bug, not a bad request.
 */

import { PontisError } from './errors.js'

/** Rounding direction for divisions: toward negative infinity or toward positive infinity. */
export type Rounding = 'floor' | 'ceil'

/** One whole in basis points: 10 000 bps = 100 %. */
export const BPS_DENOMINATOR = 10_000n

/** The most decimals a currency may declare (ERC-20 `decimals()` is a uint8). */
export const MAX_DECIMALS = 255

/** The largest amount any chain can carry: 2^256 - 1, the EVM's uint256 (other families hold less). */
export const MAX_UINT256 = 2n ** 256n - 1n

/**
 * The JSON Schema `format` the documents give amounts (`Amount`, the oracle's `Uint256String`):
 * decimal digits of an integer from 0 to {@link MAX_UINT256}. `createAjv` registers it.
 */
export const UINT256_FORMAT = 'uint256'

/** What an out-of-range amount is told, naming the limit. */
export const UINT256_RANGE = `an integer from 0 to 2^256 - 1 (${MAX_UINT256})`

const UNSIGNED_INTEGER = /^[0-9]+$/
const SIGNED_INTEGER = /^-?[0-9]+$/
const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]+))?$/

/** Longest value echoed back in an error message, so a huge input cannot bloat logs or answers. */
const MAX_ECHOED_LENGTH = 80

function echo(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value)
  return text.length > MAX_ECHOED_LENGTH ? `${text.slice(0, MAX_ECHOED_LENGTH)}…` : text
}

function invalidAmount(field: string, value: unknown, expected: string): PontisError {
  return new PontisError('INVALID_REQUEST', `${field} '${echo(value)}' is not ${expected}`, {
    field,
    value: typeof value === 'string' ? echo(value) : typeof value,
  })
}

function assertDecimals(decimals: number): void {
  if (!Number.isSafeInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new RangeError(`decimals must be an integer from 0 to ${MAX_DECIMALS}, got ${decimals}`)
  }
}

/**
 * Parses a non-negative smallest-unit amount (`^[0-9]+$`, e.g. `"1500000"`).
 * @param field names the value in the error message, e.g. `"amount"`.
 * @throws PontisError INVALID_REQUEST for anything else (signs, decimals, spaces, exponents).
 */
export function parseAmount(value: string, field = 'amount'): bigint {
  if (typeof value !== 'string' || !UNSIGNED_INTEGER.test(value)) {
    throw invalidAmount(field, value, 'a non-negative integer amount in the smallest unit (digits only)')
  }
  return BigInt(value)
}

/** True when `value` is decimal digits of an integer from 0 to 2^256 - 1 (leading zeros allowed). */
export function isUint256(value: string): boolean {
  if (!UNSIGNED_INTEGER.test(value)) return false
  // Digits beyond 78 (after leading zeros) cannot fit; checking first keeps BigInt off huge text.
  const significant = value.replace(/^0+(?=.)/, '')
  return significant.length <= 78 && BigInt(significant) <= MAX_UINT256
}

/**
 * Parses a smallest-unit amount that may be negative (`^-?[0-9]+$`), e.g. a balance difference.
 * @throws PontisError INVALID_REQUEST for anything else.
 */
export function parseSignedAmount(value: string, field = 'amount'): bigint {
  if (typeof value !== 'string' || !SIGNED_INTEGER.test(value)) {
    throw invalidAmount(field, value, 'an integer amount in the smallest unit (optional "-" then digits)')
  }
  return BigInt(value)
}

/** The wire form of an amount: plain decimal digits of the smallest unit, `-` when negative. */
export function amountToString(amount: bigint): string {
  return amount.toString(10)
}

/**
 * Formats a smallest-unit amount as a decimal in whole units, with no trailing fractional zeros:
 * `formatUnits(1500000n, 6) === "1.5"`, `formatUnits(0n, 6) === "0"`, `formatUnits(-500000n, 6) === "-0.5"`.
 */
export function formatUnits(amount: bigint, decimals: number): string {
  assertDecimals(decimals)
  const negative = amount < 0n
  const digits = (negative ? -amount : amount).toString(10).padStart(decimals + 1, '0')
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '')
  const sign = negative ? '-' : ''
  return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`
}

/**
 * Parses a decimal in whole units into the exact smallest-unit amount:
 * `parseUnits("1.5", 6) === 1500000n`. Accepts `-?digits(.digits)?` only: no exponent, no
 * leading `+` or `.`, no grouping, and no more fractional digits than `decimals` (even zeros),
 * so nothing is ever rounded away.
 * @throws PontisError INVALID_REQUEST for malformed text or too many fractional digits.
 */
export function parseUnits(decimal: string, decimals: number, field = 'amount'): bigint {
  assertDecimals(decimals)
  const match = typeof decimal === 'string' ? DECIMAL.exec(decimal) : null
  if (match === null) {
    throw invalidAmount(field, decimal, 'a decimal number such as "1.5"')
  }
  const [, sign = '', whole = '0', fraction = ''] = match
  if (fraction.length > decimals) {
    throw invalidAmount(
      field,
      decimal,
      `representable with ${decimals} decimal${decimals === 1 ? '' : 's'} (it has ${fraction.length})`,
    )
  }
  const magnitude = BigInt(whole + fraction.padEnd(decimals, '0'))
  return sign === '-' ? -magnitude : magnitude
}

/**
 * `a * b / d` computed exactly and rounded once, in the given direction (true floor and ceiling,
 * also for negative operands).
 * @throws RangeError when `d` is zero.
 */
export function mulDiv(a: bigint, b: bigint, d: bigint, rounding: Rounding): bigint {
  if (d === 0n) throw new RangeError('mulDiv: division by zero')
  const numerator = a * b
  const quotient = numerator / d // truncates toward zero
  if (numerator % d === 0n) return quotient
  const exactIsNegative = numerator < 0n !== d < 0n
  if (rounding === 'floor') return exactIsNegative ? quotient - 1n : quotient
  return exactIsNegative ? quotient : quotient + 1n
}

function toBps(bps: bigint | number): bigint {
  if (typeof bps === 'bigint') return bps
  if (!Number.isSafeInteger(bps)) throw new RangeError(`basis points must be an integer, got ${bps}`)
  return BigInt(bps)
}

/**
 * `amount * bps / 10 000`: the share of `amount` that `bps` basis points stand for
 * (`applyBps(1000n, 25)` is 0.25 % of 1000 = 2.5, so `2n` with floor and `3n` with ceil).
 * Round fees the operator charges up (`ceil`) and amounts promised to users down (`floor`).
 */
export function applyBps(amount: bigint, bps: bigint | number, rounding: Rounding = 'floor'): bigint {
  return mulDiv(amount, toBps(bps), BPS_DENOMINATOR, rounding)
}

/** `applyBps` rounded down. */
export function applyBpsFloor(amount: bigint, bps: bigint | number): bigint {
  return applyBps(amount, bps, 'floor')
}

/** `applyBps` rounded up. */
export function applyBpsCeil(amount: bigint, bps: bigint | number): bigint {
  return applyBps(amount, bps, 'ceil')
}

/**
 * How many basis points `part` is of `whole`: `bpsOf(25n, 1000n) === 250n`.
 * @throws RangeError when `whole` is zero.
 */
export function bpsOf(part: bigint, whole: bigint, rounding: Rounding = 'floor'): bigint {
  if (whole === 0n) throw new RangeError('bpsOf: whole is zero')
  return mulDiv(part, BPS_DENOMINATOR, whole, rounding)
}
