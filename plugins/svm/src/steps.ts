/**
 * Sending another intent API's `svm-transaction` item from the solver's own account (rebalancing:
 * the solver as a user of another service). The item's compiled transaction is not signed as
 * served: its blockhash may have expired and its fee payer may be anyone. Its instructions are
 * checked against what the move may spend, then compiled again with the solver as fee payer and a
 * fresh blockhash.
 */
import { stepItemRefusal } from '@pontis/core/plugin'
import { ASSOCIATED_TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token'
import { ComputeBudgetProgram, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js'
import { isNative, type SvmChainContext } from './context.js'
import { MEMO_PROGRAM_ID, MEMO_V1_PROGRAM_ID, TOKEN_PROGRAM_IDS } from './transactions.js'

/**
 * The most priority fee (lamports) an item's compute-budget instructions may make the solver pay:
 * 0.001 SOL, beyond any congestion price a deposit needs, small against any move.
 */
export const MAX_STEP_PRIORITY_FEE_LAMPORTS = 1_000_000n
/** The compute units a transaction may use at most, what a price applies to when no limit is set. */
const MAX_COMPUTE_UNITS = 1_400_000n

/** The item's instructions, checked: what the solver signs, and how much of the move it spends. */
export interface CheckedStep {
  readonly instructions: TransactionInstruction[]
  readonly addressLookupTableAddresses: readonly string[]
  readonly spent: bigint
  /** Refuses the item for a reason found later (PontisError INVALID_REQUEST naming the chain). */
  readonly refuse: Refuse
}

type Refuse = (why: string) => never

function parseInstructions(
  item: Readonly<Record<string, unknown>>,
  refuse: Refuse,
): TransactionInstruction[] {
  const list = item.instructions
  if (!Array.isArray(list) || list.length === 0)
    return refuse('it carries no `instructions` to compile again with the solver as fee payer')
  return list.map((entry: unknown, index) => {
    const json = entry as { programId?: unknown; keys?: unknown; data?: unknown }
    try {
      if (typeof json.data !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(json.data)) throw new Error('data')
      if (!Array.isArray(json.keys)) throw new Error('keys')
      return new TransactionInstruction({
        programId: new PublicKey(json.programId as string),
        keys: json.keys.map((key: { pubkey?: unknown; isSigner?: unknown; isWritable?: unknown }) => {
          if (typeof key.isSigner !== 'boolean' || typeof key.isWritable !== 'boolean') throw new Error('key')
          return {
            pubkey: new PublicKey(key.pubkey as string),
            isSigner: key.isSigner,
            isWritable: key.isWritable,
          }
        }),
        data: Buffer.from(json.data, 'hex'),
      })
    } catch {
      return refuse(
        `its instruction ${index} is not {programId, keys[{pubkey, isSigner, isWritable}], data (hex)}`,
      )
    }
  })
}

/**
 * Checks `item` against the move: for this chain, only the solver signs, and the instructions can
 * take no more than `spend.amount` of `spend.currencyId` and nothing else of the solver's (besides
 * fees, a bounded priority fee and the rent of token accounts it creates).
 * @throws PontisError INVALID_REQUEST naming what is refused.
 */
export function checkStep(
  context: SvmChainContext,
  item: Readonly<Record<string, unknown>>,
  solver: PublicKey,
  spend: { readonly currencyId: string; readonly amount: bigint },
): CheckedStep {
  const refuse = stepItemRefusal(item, 'svm-transaction', context.label)
  const tables = item.addressLookupTableAddresses ?? []
  if (!Array.isArray(tables) || tables.some((table) => typeof table !== 'string'))
    refuse('its `addressLookupTableAddresses` is not a list of addresses')
  const instructions = parseInstructions(item, refuse)
  const isSolver = (key: PublicKey | undefined) => key?.equals(solver) === true
  const native = isNative(spend.currencyId)
  let spent = 0n
  let unitLimit: bigint | undefined
  let microLamportsPerUnit = 0n
  instructions.forEach((instruction, index) => {
    const program = instruction.programId.toBase58()
    const data = instruction.data
    // The fee payer signs the whole transaction: every instruction that names the solver's account
    // runs with its signature, whatever the item's `isSigner` says.
    const signedBySolver = instruction.keys.some((key) => isSolver(key.pubkey))
    const other = instruction.keys.find((key) => key.isSigner && !isSolver(key.pubkey))
    if (other)
      refuse(`its instruction ${index} needs the signature of ${other.pubkey.toBase58()}, not the solver's`)
    const account = (position: number) => instruction.keys[position]?.pubkey
    if (program === ComputeBudgetProgram.programId.toBase58()) {
      // SetComputeUnitLimit (2, u32) and SetComputeUnitPrice (3, u64 micro-lamports): the price is bounded below.
      if (data[0] === 2 && data.length === 5) unitLimit = BigInt(data.readUInt32LE(1))
      else if (data[0] === 3 && data.length === 9) microLamportsPerUnit = data.readBigUInt64LE(1)
      else refuse(`its instruction ${index} is a compute-budget instruction other than a unit limit or price`)
      return
    }
    if (program === MEMO_PROGRAM_ID.toBase58() || program === MEMO_V1_PROGRAM_ID.toBase58()) return
    if (program === ASSOCIATED_TOKEN_PROGRAM_ID.toBase58()) {
      // Create (empty or 0) and CreateIdempotent (1): the payer puts in the new account's rent, nothing more.
      if (data.length === 0 || (data.length === 1 && (data[0] === 0 || data[0] === 1))) return
      refuse(`its instruction ${index} is an associated-token instruction other than creating an account`)
    }
    if (program === SystemProgram.programId.toBase58() && signedBySolver) {
      // Transfer: u32 tag 2, u64 lamports; accounts [from, to].
      if (!(data.length === 12 && data.readUInt32LE(0) === 2 && isSolver(account(0))))
        refuse(`its instruction ${index} is a system instruction of the solver's other than a transfer`)
      if (!native) refuse(`its instruction ${index} sends SOL in a move of ${spend.currencyId}`)
      spent += data.readBigUInt64LE(4)
      return
    }
    if (TOKEN_PROGRAM_IDS.has(program) && signedBySolver) {
      // Transfer (3): [source, destination, authority]; TransferChecked (12): [source, mint, destination, authority].
      const checked = data[0] === 12 && data.length === 10 && instruction.keys.length >= 4
      const plain = data[0] === 3 && data.length === 9 && instruction.keys.length >= 3
      if ((!checked && !plain) || !isSolver(account(checked ? 3 : 2)))
        refuse(`its instruction ${index} is a token instruction of the solver's other than a transfer`)
      if (native) refuse(`its instruction ${index} sends a token in a move of SOL`)
      const mint = new PublicKey(spend.currencyId)
      const source = getAssociatedTokenAddressSync(mint, solver, true, instruction.programId)
      if (!account(0)?.equals(source) || (checked && !account(1)?.equals(mint)))
        refuse(`its instruction ${index} sends a token other than ${spend.currencyId}`)
      spent += data.readBigUInt64LE(1)
      return
    }
    if (signedBySolver) refuse(`its instruction ${index} calls ${program} with the solver's signature`)
  })
  if (spent > spend.amount) refuse(`it sends ${spent}, more than the move's ${spend.amount}`)
  const priorityFee = (microLamportsPerUnit * (unitLimit ?? MAX_COMPUTE_UNITS)) / 1_000_000n
  if (priorityFee > MAX_STEP_PRIORITY_FEE_LAMPORTS)
    refuse(`its priority fee of ${priorityFee} lamports is above ${MAX_STEP_PRIORITY_FEE_LAMPORTS}`)
  return { instructions, addressLookupTableAddresses: tables as string[], spent, refuse }
}
