/**
 * Transaction building blocks shared by quoting, reading and filling: the memo that tags a
 * transaction with a request or order id, wire-size measurement (also above the limit, where
 * web3.js refuses to serialize), and decoding the transfers of a confirmed transaction.
 */
import {
  type AddressLookupTableAccount,
  type MessageV0,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  type VersionedTransactionResponse,
} from '@solana/web3.js'
import bs58 from 'bs58'

/** The SVM transaction wire-size limit (bytes). */
export const SVM_TRANSACTION_SIZE_LIMIT = 1232

/** Memo program v2 (what tags are written with) and v1 (also read). */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')
export const MEMO_V1_PROGRAM_ID = new PublicKey('Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo')
export const TOKEN_PROGRAM_IDS = new Set([
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
])

const ID_TAG = /^0x[0-9a-fA-F]{64}$/

/** The memo instruction that tags a transaction with a 32-byte id, written as 0x-hex text. */
export function memoInstruction(id: string): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: [],
    data: Buffer.from(id.toLowerCase(), 'utf8'),
  })
}

/** Bytes of a compact-u16 length prefix. */
function shortVecLength(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : 3
}

/**
 * The wire size of a transaction with `message`: signatures plus the serialized v0 message,
 * computed field by field so that an oversized message can still be measured.
 */
export function wireSize(message: MessageV0): number {
  const signatures = message.header.numRequiredSignatures
  let size = shortVecLength(signatures) + 64 * signatures
  size += 1 + 3 // version prefix, header
  size += shortVecLength(message.staticAccountKeys.length) + 32 * message.staticAccountKeys.length
  size += 32 // recent blockhash
  size += shortVecLength(message.compiledInstructions.length)
  for (const instruction of message.compiledInstructions) {
    size += 1
    size += shortVecLength(instruction.accountKeyIndexes.length) + instruction.accountKeyIndexes.length
    size += shortVecLength(instruction.data.length) + instruction.data.length
  }
  size += shortVecLength(message.addressTableLookups.length)
  for (const lookup of message.addressTableLookups) {
    size += 32
    size += shortVecLength(lookup.writableIndexes.length) + lookup.writableIndexes.length
    size += shortVecLength(lookup.readonlyIndexes.length) + lookup.readonlyIndexes.length
  }
  return size
}

/** An instruction in the document's JSON form (SvmInstruction). */
export interface InstructionJson {
  readonly programId: string
  readonly keys: ReadonlyArray<{ pubkey: string; isSigner: boolean; isWritable: boolean }>
  /** Hex without a 0x prefix, as Relay serves it (its SVM wallet adapter reads `Buffer.from(data, 'hex')`). */
  readonly data: string
}

export function instructionToJson(instruction: TransactionInstruction): InstructionJson {
  return {
    programId: instruction.programId.toBase58(),
    keys: instruction.keys.map((key) => ({
      pubkey: key.pubkey.toBase58(),
      isSigner: key.isSigner,
      isWritable: key.isWritable,
    })),
    data: Buffer.from(instruction.data).toString('hex'),
  }
}

/** An instruction from the aggregator's JSON form (`accounts` instead of `keys`). */
export function instructionFromRoute(json: {
  programId: string
  accounts: ReadonlyArray<{ pubkey: string; isSigner: boolean; isWritable: boolean }>
  data: string
}): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(json.programId),
    keys: json.accounts.map((account) => ({
      pubkey: new PublicKey(account.pubkey),
      isSigner: account.isSigner,
      isWritable: account.isWritable,
    })),
    data: Buffer.from(json.data, 'base64'),
  })
}

/** One value transfer found in a transaction's top-level instructions. */
export interface DecodedTransfer {
  /** Position of the instruction in the transaction. */
  readonly index: number
  /** Native id for lamports, else the mint. */
  readonly currency: string | undefined
  /** Who authorised it: the paying wallet (native `from`, token owner or delegate). */
  readonly authority: string
  /** The wallet credited: native `to`, or the owner of the destination token account. */
  readonly recipient: string | undefined
  /** The destination account itself (a token account for tokens). */
  readonly destination: string
  readonly amount: bigint
}

/** The transfers and the id tags of a confirmed transaction. */
export interface DecodedTransaction {
  readonly transfers: readonly DecodedTransfer[]
  /** Distinct 32-byte ids written in memos, lower-case 0x-hex. */
  readonly tags: readonly string[]
}

/**
 * Reads the top-level instructions of a transaction: system transfers, SPL Token / Token-2022
 * `transfer` and `transferChecked`, and memos carrying a 32-byte id. Inner instructions are not
 * read: every transfer Pontis recognises is made at the top level.
 */
export function decodeTransaction(response: VersionedTransactionResponse): DecodedTransaction {
  const message = response.transaction.message
  const keys = message.getAccountKeys({
    ...(response.meta?.loadedAddresses ? { accountKeysFromLookups: response.meta.loadedAddresses } : {}),
  })
  const keyAt = (index: number) => keys.get(index)?.toBase58() ?? ''
  const tokenAccounts = new Map<number, { mint: string; owner: string | undefined }>()
  for (const balance of [
    ...(response.meta?.preTokenBalances ?? []),
    ...(response.meta?.postTokenBalances ?? []),
  ]) {
    tokenAccounts.set(balance.accountIndex, { mint: balance.mint, owner: balance.owner })
  }
  const transfers: DecodedTransfer[] = []
  const tags = new Set<string>()
  message.compiledInstructions.forEach((instruction, index) => {
    const program = keyAt(instruction.programIdIndex)
    const data = Buffer.from(instruction.data)
    const accounts = instruction.accountKeyIndexes
    if (program === MEMO_PROGRAM_ID.toBase58() || program === MEMO_V1_PROGRAM_ID.toBase58()) {
      const text = data.toString('utf8').trim()
      if (ID_TAG.test(text)) tags.add(text.toLowerCase())
      return
    }
    if (program === SystemProgram.programId.toBase58()) {
      // SystemInstruction::Transfer: u32 tag 2, u64 lamports; accounts [from, to].
      if (data.length === 12 && data.readUInt32LE(0) === 2 && accounts.length >= 2) {
        const to = keyAt(accounts[1] as number)
        transfers.push({
          index,
          currency: SystemProgram.programId.toBase58(),
          authority: keyAt(accounts[0] as number),
          recipient: to,
          destination: to,
          amount: data.readBigUInt64LE(4),
        })
      }
      return
    }
    if (TOKEN_PROGRAM_IDS.has(program)) {
      // Transfer (3): [source, destination, authority]; TransferChecked (12): [source, mint, destination, authority].
      const checked = data[0] === 12 && data.length >= 10 && accounts.length >= 4
      const plain = data[0] === 3 && data.length >= 9 && accounts.length >= 3
      if (!checked && !plain) return
      const destinationIndex = accounts[checked ? 2 : 1] as number
      const destination = tokenAccounts.get(destinationIndex)
      const source = tokenAccounts.get(accounts[0] as number)
      transfers.push({
        index,
        currency: checked ? keyAt(accounts[1] as number) : (destination?.mint ?? source?.mint),
        authority: keyAt(accounts[checked ? 3 : 2] as number),
        recipient: destination?.owner,
        destination: keyAt(destinationIndex),
        amount: data.readBigUInt64LE(1),
      })
    }
  })
  return { transfers, tags: [...tags] }
}

/** Address lookup tables by address, for compiling with a route's tables. */
export type LookupTables = readonly AddressLookupTableAccount[]

/** Base58 of a 64-byte signature. */
export function signatureToBase58(signature: Uint8Array): string {
  return bs58.encode(signature)
}
