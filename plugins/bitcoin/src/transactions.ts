/**
 * Transaction arithmetic: the signed size of inputs by type (so a fee is priced before anything is
 * signed), the OP_RETURN tag that carries a request or order id, and coin selection.
 *
 * Sizes are upper bounds of the signed transaction: ECDSA signatures counted at 72 bytes (DER with a
 * high R, plus the sighash byte), Schnorr at 64 (SIGHASH_DEFAULT), public keys compressed. The fee
 * a wallet ends up paying per vbyte is therefore the quoted rate or slightly more, never less.
 */

/** The input types this plugin can price and have signed: the single-key ones. */
export type SpendableType = 'p2wpkh' | 'p2tr' | 'p2sh-p2wpkh' | 'p2pkh'

/** Witness units of one signed input by type (non-witness bytes × 4 + witness bytes). */
export const INPUT_WEIGHT: Readonly<Record<SpendableType, number>> = {
  // outpoint 36 + empty scriptSig 1 + sequence 4 = 41 bytes; witness: count 1 + sig 1+72 + key 1+33.
  p2wpkh: 41 * 4 + 108,
  // 41 bytes; witness: count 1 + Schnorr sig 1+64.
  p2tr: 41 * 4 + 66,
  // scriptSig pushes the 22-byte redeem script: 36 + 1 + 23 + 4 = 64 bytes; witness as P2WPKH.
  'p2sh-p2wpkh': 64 * 4 + 108,
  // scriptSig: sig 1+72 + key 1+33 = 107 bytes: 36 + 1 + 107 + 4 = 148 bytes, no witness.
  p2pkh: 148 * 4,
}

const HAS_WITNESS: Readonly<Record<SpendableType, boolean>> = {
  p2wpkh: true,
  p2tr: true,
  'p2sh-p2wpkh': true,
  p2pkh: false,
}

/** Bytes of a CompactSize integer. */
function varIntSize(value: number): number {
  return value < 0xfd ? 1 : value <= 0xffff ? 3 : value <= 0xffffffff ? 5 : 9
}

/** Bytes of an output paying a script of `scriptLength` bytes: value 8 + length + script. */
export function outputSize(scriptLength: number): number {
  return 8 + varIntSize(scriptLength) + scriptLength
}

/**
 * Virtual size (vbytes) of a signed transaction spending `inputs` (types) into outputs whose
 * scripts are `outputScriptLengths` bytes long.
 */
export function estimateVsize(
  inputs: readonly SpendableType[],
  outputScriptLengths: readonly number[],
): number {
  // version 4 + locktime 4 + the two counts.
  let weight = (8 + varIntSize(inputs.length) + varIntSize(outputScriptLengths.length)) * 4
  for (const length of outputScriptLengths) weight += outputSize(length) * 4
  for (const input of inputs) weight += INPUT_WEIGHT[input]
  if (inputs.some((input) => HAS_WITNESS[input])) {
    // Segwit marker and flag; each input without a witness still writes an empty witness count.
    weight += 2 + inputs.filter((input) => !HAS_WITNESS[input]).length
  }
  return Math.ceil(weight / 4)
}

/** Length of the tag output's script: OP_RETURN, a 32-byte push. */
export const TAG_SCRIPT_LENGTH = 34
/** Length of a P2WPKH output script (the solver's, the vault's and deposit addresses'). */
export const P2WPKH_SCRIPT_LENGTH = 22

const OP_RETURN = 0x6a

/** The OP_RETURN output script that tags a transaction with a 32-byte id (0x-hex). */
export function tagScript(id: string): Uint8Array {
  if (!/^0x[0-9a-fA-F]{64}$/.test(id))
    throw new TypeError(`tag id must be 32-byte 0x-hex, got ${id.slice(0, 80)}`)
  return Uint8Array.from([OP_RETURN, 32, ...Buffer.from(id.slice(2), 'hex')])
}

/** The id an output script carries when it is a tag (OP_RETURN with one 32-byte push), 0x-hex. */
export function tagOf(scriptHex: string): `0x${string}` | undefined {
  if (scriptHex.length !== TAG_SCRIPT_LENGTH * 2 || !scriptHex.toLowerCase().startsWith('6a20'))
    return undefined
  return `0x${scriptHex.slice(4).toLowerCase()}`
}

/** True for an OP_RETURN output script (any data). */
export function isDataScript(scriptHex: string): boolean {
  return scriptHex.toLowerCase().startsWith('6a')
}

/** An unspent output one address can spend. */
export interface Coin {
  readonly txid: string
  readonly vout: number
  readonly value: bigint
  readonly confirmed: boolean
}

/** What a transaction pays, besides the change. */
export interface SpendPlan {
  /** Scripts lengths of the outputs other than change (payment, tag). */
  readonly outputScriptLengths: readonly number[]
  /** Sum the outputs other than change pay, satoshi. */
  readonly target: bigint
  readonly changeScriptLength: number
  /** Whole sat/vB. */
  readonly feeRate: bigint
  /** Change below this is left to the fee instead. */
  readonly dustLimit: bigint
}

/** Coins chosen for a transaction. */
export interface Selection {
  readonly coins: readonly Coin[]
  readonly fee: bigint
  /** 0 when there is no change output. */
  readonly change: bigint
  readonly vsize: number
}

/** Why coins could not be chosen: what is there and what was needed with all of it spent. */
export interface Shortfall {
  readonly available: bigint
  readonly required: bigint
  readonly fee: bigint
}

/**
 * Picks coins to pay `plan`: confirmed coins first, largest first, until the outputs and the fee
 * (rate × signed vsize) are covered. Change below the dust limit is given to the fee.
 */
export function selectCoins(
  coins: readonly Coin[],
  inputType: SpendableType,
  plan: SpendPlan,
): { selection: Selection } | { shortfall: Shortfall } {
  const ordered = [...coins].sort((a, b) =>
    a.confirmed !== b.confirmed ? (a.confirmed ? -1 : 1) : a.value > b.value ? -1 : a.value < b.value ? 1 : 0,
  )
  const chosen: Coin[] = []
  let total = 0n
  const types: SpendableType[] = []
  const vsizeOf = (withChange: boolean) =>
    estimateVsize(
      types,
      withChange ? [...plan.outputScriptLengths, plan.changeScriptLength] : plan.outputScriptLengths,
    )
  for (const coin of ordered) {
    chosen.push(coin)
    types.push(inputType)
    total += coin.value
    const withChange = vsizeOf(true)
    const feeWithChange = BigInt(withChange) * plan.feeRate
    const change = total - plan.target - feeWithChange
    if (change >= plan.dustLimit && change > 0n) {
      return { selection: { coins: chosen, fee: feeWithChange, change, vsize: withChange } }
    }
    const without = vsizeOf(false)
    const feeWithout = BigInt(without) * plan.feeRate
    if (total >= plan.target + feeWithout) {
      // No change worth an output: what is left over goes to the fee.
      return { selection: { coins: chosen, fee: total - plan.target, change: 0n, vsize: without } }
    }
  }
  // Nothing to spend: price the smallest transaction there could be, one input.
  if (types.length === 0) types.push(inputType)
  const fee = BigInt(vsizeOf(false)) * plan.feeRate
  return { shortfall: { available: total, required: plan.target + fee, fee } }
}
