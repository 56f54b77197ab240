/**
 * The Solana JSON-RPC methods the SVM devnet answers, in the shapes of https://solana.com/docs/rpc
 * (checked against what @solana/web3.js `Connection` parses). Each handler reads and checks its
 * parameters, asks the ledger and builds the answer; errors are {@link RpcError}s.
 *
 * Account reads (getBalance, getAccountInfo, token balances, ...) answer from the latest state
 * whatever `commitment` asks for: LiteSVM keeps one state, and with a transaction per slot the
 * difference only shows in the few slots before finality. Their `context.slot` is the current
 * slot. Everything that reports slots, blockhashes or transactions honours `commitment`.
 */
import { PublicKey, VersionedMessage } from '@solana/web3.js'
import bs58 from 'bs58'
import type { AccountInfoBytes } from 'litesvm'
import { invalidParams, RPC_ERROR, RpcError } from './errors.js'
import { type Commitment, type RecordedTransaction, STATUS_CACHE_SLOTS, type SvmLedger } from './ledger.js'
import {
  arrayParam,
  base58Bytes,
  booleanOf,
  type Config,
  commitmentOf,
  configParam,
  dataSliceOf,
  enumOf,
  integerOf,
  integerParam,
  objectOf,
  type Params,
  publicKeyParam,
  publicKeyValue,
  signatureValue,
  stringParam,
} from './params.js'
import {
  decodeMint,
  decodeTokenAccount,
  isTokenProgram,
  parseTokenAccountData,
  uiTokenAmount,
} from './token.js'

/** The version getVersion reports: the agave line litesvm@0.8.0 embeds. */
export const SVM_DEVNET_CORE_VERSION = '2.2.0'
/** The feature-set id getVersion reports (any stable number; clients only display it). */
export const SVM_DEVNET_FEATURE_SET = 3_294_202_862

const MAX_MULTIPLE_ACCOUNTS = 100
const MAX_SIGNATURE_STATUSES = 256
const MAX_SIGNATURES_FOR_ADDRESS = 1000
const MAX_BASE58_ACCOUNT_BYTES = 128
const MAX_PROGRAM_ACCOUNT_FILTERS = 4

/** A method handler: positional params in, JSON-serialisable result out. */
export type RpcMethod = (params: Params) => unknown

type AccountEncoding = 'binary' | 'base58' | 'base64' | 'base64+zstd' | 'jsonParsed'
const ACCOUNT_ENCODINGS: readonly AccountEncoding[] = [
  'binary',
  'base58',
  'base64',
  'base64+zstd',
  'jsonParsed',
]

/** An account as the RPC serialises it. */
export interface UiAccount {
  data: unknown
  executable: boolean
  lamports: number
  owner: string
  rentEpoch: number
  space: number
}

function binaryData(data: Uint8Array, encoding: 'binary' | 'base58' | 'base64'): unknown {
  if (encoding === 'base64') return [Buffer.from(data).toString('base64'), 'base64']
  if (data.length > MAX_BASE58_ACCOUNT_BYTES) {
    throw invalidParams(
      `encoded binary (base 58) data should be less than ${MAX_BASE58_ACCOUNT_BYTES} bytes, please use Base64 encoding`,
    )
  }
  return encoding === 'base58' ? [bs58.encode(data), 'base58'] : bs58.encode(data)
}

/** Serialises an account in `encoding` (jsonParsed falls back to base64 for non-token data). */
export function encodeAccount(
  ledger: SvmLedger,
  account: AccountInfoBytes,
  encoding: AccountEncoding,
  dataSlice?: { offset: number; length: number },
): UiAccount {
  const owner = account.owner.toBase58()
  let data: unknown
  if (encoding === 'base64+zstd')
    throw invalidParams('base64+zstd encoding is not supported by the SVM devnet')
  const parsed =
    encoding === 'jsonParsed' && !dataSlice
      ? parseTokenAccountData(owner, account.data, (mint) => ledger.decimalsOf(mint))
      : undefined
  if (parsed) data = parsed
  else {
    const slice = dataSlice
      ? account.data.subarray(dataSlice.offset, dataSlice.offset + dataSlice.length)
      : account.data
    data = binaryData(slice, encoding === 'jsonParsed' ? 'base64' : encoding)
  }
  return {
    data,
    executable: account.executable,
    lamports: account.lamports,
    owner,
    rentEpoch: account.rentEpoch ?? 0,
    space: account.data.length,
  }
}

/** The hooks the server gives the methods besides the ledger. */
export interface MethodControls {
  /** Opens `count` slots (pontis_advanceSlots); returns the new slot. */
  advanceSlots(count: number): number
}

/** Builds the method table over `ledger`. */
export function createMethods(
  ledger: SvmLedger,
  controls: MethodControls,
): Readonly<Record<string, RpcMethod>> {
  const context = (slot = ledger.slot) => ({ slot, apiVersion: SVM_DEVNET_CORE_VERSION })

  /** Enforces `minContextSlot` and returns the slot the read sees. */
  const contextSlot = (config: Config, commitment: Commitment): number => {
    const slot = ledger.slotAt(commitment)
    const minContextSlot = integerOf(config, 'minContextSlot')
    if (minContextSlot !== undefined && minContextSlot > slot) {
      throw new RpcError(RPC_ERROR.minContextSlotNotReached, 'Minimum context slot has not been reached', {
        contextSlot: slot,
      })
    }
    return slot
  }

  /** Common account-read config; the default encoding differs per method, as on the real RPC. */
  const accountRead = (config: Config, defaultEncoding: AccountEncoding = 'binary') => {
    contextSlot(config, commitmentOf(config))
    return {
      encoding: enumOf(config, 'encoding', ACCOUNT_ENCODINGS, defaultEncoding),
      dataSlice: dataSliceOf(config),
    }
  }

  /** The transaction-history commitment: confirmed or finalized only, as on the real RPC. */
  const historyCommitment = (config: Config): Commitment => {
    const commitment = commitmentOf(config)
    if (commitment === 'processed')
      throw invalidParams('Method does not support commitment below `confirmed`')
    return commitment
  }

  const status = (record: RecordedTransaction) => {
    const level = ledger.commitmentOf(record.slot)
    return {
      slot: record.slot,
      confirmations: level === 'finalized' ? null : ledger.slot - record.slot,
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      confirmationStatus: level,
    }
  }

  const keyedAccounts = (
    addresses: Iterable<string>,
    keep: (account: AccountInfoBytes) => boolean,
    encoding: AccountEncoding,
    dataSlice?: { offset: number; length: number },
  ) => {
    const found: { pubkey: string; account: UiAccount }[] = []
    for (const address of addresses) {
      const account = ledger.getAccount(new PublicKey(address))
      if (account && account.lamports > 0 && keep(account)) {
        found.push({ pubkey: address, account: encodeAccount(ledger, account, encoding, dataSlice) })
      }
    }
    return found
  }

  const tokenAccountsBy = (role: 'owner' | 'delegate') => (params: Params) => {
    const who = publicKeyParam(params, 0, role).toBase58()
    const filter = configParam(params, 1)
    const config = configParam(params, 2)
    const { encoding, dataSlice } = accountRead(config)
    let programs: readonly string[]
    let mint: string | undefined
    if (filter.mint !== undefined) {
      mint = publicKeyValue(filter.mint, 'filter.mint').toBase58()
      const mintAccount = ledger.getAccount(new PublicKey(mint))
      if (!mintAccount || !decodeMint(mintAccount.owner.toBase58(), mintAccount.data)) {
        throw invalidParams('could not find mint')
      }
      programs = [mintAccount.owner.toBase58()]
    } else if (filter.programId !== undefined) {
      const programId = publicKeyValue(filter.programId, 'filter.programId').toBase58()
      if (!isTokenProgram(programId)) throw invalidParams('unrecognized Token program id')
      programs = [programId]
    } else {
      throw invalidParams('the filter (params[1]) needs either mint or programId')
    }
    const value = keyedAccounts(
      ledger.knownAddresses(),
      (account) => {
        const programId = account.owner.toBase58()
        if (!programs.includes(programId)) return false
        const token = decodeTokenAccount(programId, account.data)
        if (!token || (mint !== undefined && token.mint !== mint)) return false
        return role === 'owner' ? token.owner === who : token.delegate === who
      },
      encoding,
      dataSlice,
    )
    return { context: context(), value }
  }

  const slotMethod = (params: Params) => {
    const config = configParam(params, 0)
    return contextSlot(config, commitmentOf(config))
  }

  const methods: Record<string, RpcMethod> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': SVM_DEVNET_CORE_VERSION, 'feature-set': SVM_DEVNET_FEATURE_SET }),
    getGenesisHash: () => ledger.genesisHash,
    getIdentity: () => ({ identity: ledger.faucet.publicKey.toBase58() }),
    getSlot: slotMethod,
    getBlockHeight: slotMethod,
    getTransactionCount: (params) => {
      const config = configParam(params, 0)
      return ledger.epochInfo(commitmentOf(config)).transactionCount
    },
    getFirstAvailableBlock: () => 0,
    getMinimumLedgerSlot: () => 0,
    getEpochInfo: (params) => {
      const config = configParam(params, 0)
      contextSlot(config, commitmentOf(config))
      return ledger.epochInfo(commitmentOf(config))
    },
    getEpochSchedule: () => {
      const { slotsInEpoch } = ledger.epochInfo()
      return {
        slotsPerEpoch: slotsInEpoch,
        leaderScheduleSlotOffset: slotsInEpoch,
        warmup: false,
        firstNormalEpoch: 0,
        firstNormalSlot: 0,
      }
    },
    getBlockTime: (params) => {
      const slot = integerParam(params, 0, 'slot')
      const block = ledger.block(slot)
      if (!block) throw new RpcError(RPC_ERROR.blockNotAvailable, `Block not available for slot ${slot}`)
      return block.blockTime
    },
    // The block's header only (`transactionDetails: 'none'`): what a client checks a block hash
    // against; the devnet keeps no per-slot transaction lists to answer more.
    getBlock: (params) => {
      const slot = integerParam(params, 0, 'slot')
      const config = configParam(params, 1)
      const commitment = historyCommitment(config)
      const details = enumOf(config, 'transactionDetails', ['full', 'accounts', 'signatures', 'none'], 'full')
      if (details !== 'none')
        throw invalidParams('the SVM devnet answers getBlock with transactionDetails none')
      const block = ledger.block(slot)
      if (!block || !ledger.reached(slot, commitment))
        throw new RpcError(RPC_ERROR.blockNotAvailable, `Block not available for slot ${slot}`)
      const parentSlot = Math.max(0, slot - 1)
      return {
        blockhash: block.blockhash,
        previousBlockhash: ledger.block(parentSlot)?.blockhash ?? block.blockhash,
        parentSlot,
        blockTime: block.blockTime,
        blockHeight: slot,
      }
    },
    getLatestBlockhash: (params) => {
      const config = configParam(params, 0)
      const commitment = commitmentOf(config)
      const slot = contextSlot(config, commitment)
      const { blockhash, lastValidBlockHeight } = ledger.latestBlockhash(commitment)
      return { context: context(slot), value: { blockhash, lastValidBlockHeight } }
    },
    isBlockhashValid: (params) => {
      const blockhash = stringParam(params, 0, 'blockhash')
      const config = configParam(params, 1)
      const slot = contextSlot(config, commitmentOf(config, 'commitment'))
      return { context: context(slot), value: ledger.isBlockhashValid(blockhash) }
    },
    getMinimumBalanceForRentExemption: (params) => {
      const length = params[0] === undefined ? 0 : integerParam(params, 0, 'data length')
      return ledger.minimumBalanceForRentExemption(length)
    },
    getFeeForMessage: (params) => {
      const encoded = stringParam(params, 0, 'message')
      const config = configParam(params, 1)
      const slot = contextSlot(config, commitmentOf(config))
      let message: VersionedMessage
      try {
        message = VersionedMessage.deserialize(Buffer.from(encoded, 'base64'))
      } catch (error) {
        throw invalidParams(
          `failed to deserialize the message: ${error instanceof Error ? error.message : error}`,
        )
      }
      return { context: context(slot), value: ledger.feeFor(message) }
    },

    getBalance: (params) => {
      const address = publicKeyParam(params, 0, 'address')
      const config = configParam(params, 1)
      contextSlot(config, commitmentOf(config))
      return { context: context(), value: ledger.getAccount(address)?.lamports ?? 0 }
    },
    getAccountInfo: (params) => {
      const address = publicKeyParam(params, 0, 'address')
      const { encoding, dataSlice } = accountRead(configParam(params, 1))
      const account = ledger.getAccount(address)
      return {
        context: context(),
        value: account && account.lamports > 0 ? encodeAccount(ledger, account, encoding, dataSlice) : null,
      }
    },
    getMultipleAccounts: (params) => {
      const addresses = arrayParam(params, 0, 'addresses', MAX_MULTIPLE_ACCOUNTS).map((value, index) =>
        publicKeyValue(value, `addresses[${index}]`),
      )
      const { encoding, dataSlice } = accountRead(configParam(params, 1), 'base64')
      const value = addresses.map((address) => {
        const account = ledger.getAccount(address)
        return account && account.lamports > 0 ? encodeAccount(ledger, account, encoding, dataSlice) : null
      })
      return { context: context(), value }
    },
    getProgramAccounts: (params) => {
      const programId = publicKeyParam(params, 0, 'program id').toBase58()
      const config = configParam(params, 1)
      const { encoding, dataSlice } = accountRead(config)
      const filters = config.filters === undefined || config.filters === null ? [] : config.filters
      if (!Array.isArray(filters) || filters.length > MAX_PROGRAM_ACCOUNT_FILTERS) {
        throw invalidParams(`filters must be an array of at most ${MAX_PROGRAM_ACCOUNT_FILTERS} filters`)
      }
      const checks = filters.map((filter: unknown, index: number) => programAccountFilter(filter, index))
      const value = keyedAccounts(
        ledger.knownAddresses(),
        (account) => account.owner.toBase58() === programId && checks.every((check) => check(account.data)),
        encoding,
        dataSlice,
      )
      return booleanOf(config, 'withContext', false) ? { context: context(), value } : value
    },
    getTokenAccountBalance: (params) => {
      const address = publicKeyParam(params, 0, 'token account')
      contextSlot(configParam(params, 1), commitmentOf(configParam(params, 1)))
      const account = ledger.getAccount(address)
      const token = account ? decodeTokenAccount(account.owner.toBase58(), account.data) : undefined
      const decimals = token ? ledger.decimalsOf(token.mint) : undefined
      if (!token || decimals === undefined) throw invalidParams('not a Token account')
      return { context: context(), value: uiTokenAmount(token.amount, decimals) }
    },
    getTokenSupply: (params) => {
      const address = publicKeyParam(params, 0, 'mint')
      contextSlot(configParam(params, 1), commitmentOf(configParam(params, 1)))
      const account = ledger.getAccount(address)
      const mint = account ? decodeMint(account.owner.toBase58(), account.data) : undefined
      if (!mint) throw invalidParams('not a Token mint')
      return { context: context(), value: uiTokenAmount(mint.supply, mint.decimals) }
    },
    getTokenAccountsByOwner: tokenAccountsBy('owner'),
    getTokenAccountsByDelegate: tokenAccountsBy('delegate'),

    sendTransaction: (params) => {
      const { wire, config } = transactionParams(params)
      contextSlot(config, commitmentOf(config, 'preflightCommitment'))
      integerOf(config, 'maxRetries')
      return ledger.sendTransaction(wire, { skipPreflight: booleanOf(config, 'skipPreflight', false) })
    },
    simulateTransaction: (params) => {
      const { wire, config } = transactionParams(params)
      const slot = contextSlot(config, commitmentOf(config))
      const accountsConfig = objectOf(config, 'accounts')
      let accountAddresses: string[] | undefined
      let accountEncoding: AccountEncoding = 'base64'
      if (accountsConfig) {
        accountAddresses = arrayParam(
          [accountsConfig.addresses],
          0,
          'accounts.addresses',
          MAX_MULTIPLE_ACCOUNTS,
        ).map((value, index) => publicKeyValue(value, `accounts.addresses[${index}]`).toBase58())
        accountEncoding = enumOf(
          accountsConfig,
          'encoding',
          ['base64', 'base64+zstd', 'jsonParsed'],
          'base64',
        )
      }
      const outcome = ledger.simulateTransaction(wire, {
        sigVerify: booleanOf(config, 'sigVerify', false),
        replaceRecentBlockhash: booleanOf(config, 'replaceRecentBlockhash', false),
        accountAddresses,
      })
      return {
        context: context(slot),
        value: {
          err: outcome.err?.json ?? null,
          logs: outcome.logs,
          accounts:
            outcome.accounts?.map((account) =>
              account && account.lamports > 0 ? encodeAccount(ledger, account, accountEncoding) : null,
            ) ?? null,
          unitsConsumed: outcome.unitsConsumed,
          returnData: outcome.returnData,
          innerInstructions: booleanOf(config, 'innerInstructions', false) ? outcome.innerInstructions : null,
          replacementBlockhash: outcome.replacementBlockhash,
        },
      }
    },
    requestAirdrop: (params) => {
      const recipient = publicKeyParam(params, 0, 'recipient')
      const lamports = integerParam(params, 1, 'lamports')
      if (lamports === 0) throw invalidParams('lamports (params[1]) must be positive')
      return ledger.requestAirdrop(recipient, lamports)
    },

    getSignatureStatuses: (params) => {
      const signatures = arrayParam(params, 0, 'signatures', MAX_SIGNATURE_STATUSES).map((value, index) =>
        signatureValue(value, `signatures[${index}]`),
      )
      const searchHistory = booleanOf(configParam(params, 1), 'searchTransactionHistory', false)
      const value = signatures.map((signature) => {
        const record = ledger.transaction(signature)
        if (!record) return null
        // Without the history search only the status cache (recent slots) answers.
        if (!searchHistory && ledger.slot - record.slot > STATUS_CACHE_SLOTS) return null
        return status(record)
      })
      return { context: context(), value }
    },
    getTransaction: (params) => {
      const signature = signatureValue(params[0], 'signature (params[0])')
      // The second parameter may be the bare encoding (legacy form).
      const config = typeof params[1] === 'string' ? { encoding: params[1] } : configParam(params, 1)
      const commitment = historyCommitment(config)
      const encoding = enumOf(config, 'encoding', ['json', 'base58', 'base64', 'jsonParsed'], 'json')
      if (encoding === 'jsonParsed')
        throw invalidParams('the SVM devnet answers getTransaction in json, base58 or base64')
      const maxVersion = integerOf(config, 'maxSupportedTransactionVersion')
      const record = ledger.transaction(signature)
      if (!record || !ledger.reached(record.slot, commitment)) return null
      return transactionResult(record, encoding, maxVersion)
    },
    getSignaturesForAddress: (params) => {
      const address = publicKeyParam(params, 0, 'address').toBase58()
      const config = configParam(params, 1)
      const commitment = historyCommitment(config)
      contextSlot(config, commitment)
      const limit = integerOf(config, 'limit') ?? MAX_SIGNATURES_FOR_ADDRESS
      if (limit < 1 || limit > MAX_SIGNATURES_FOR_ADDRESS) {
        throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`)
      }
      const before =
        config.before === undefined || config.before === null
          ? undefined
          : signatureValue(config.before, 'before')
      const until =
        config.until === undefined || config.until === null
          ? undefined
          : signatureValue(config.until, 'until')
      const newestFirst = ledger
        .transactionsFor(address)
        .filter((record) => ledger.reached(record.slot, commitment))
        .reverse()
      let start = 0
      if (before !== undefined) {
        const index = newestFirst.findIndex((record) => record.signature === before)
        if (index < 0) return []
        start = index + 1
      }
      const answer = []
      for (const record of newestFirst.slice(start)) {
        if (record.signature === until || answer.length >= limit) break
        answer.push({
          signature: record.signature,
          slot: record.slot,
          err: record.err,
          memo: record.memo,
          blockTime: record.blockTime,
          confirmationStatus: ledger.commitmentOf(record.slot),
        })
      }
      return answer
    },
    getRecentPrioritizationFees: (params) => {
      const addresses =
        params[0] === undefined
          ? []
          : arrayParam(params, 0, 'addresses', 128).map((value, index) =>
              publicKeyValue(value, `addresses[${index}]`).toBase58(),
            )
      return ledger.recentPrioritizationFees(addresses)
    },

    pontis_advanceSlots: (params) => {
      const count = params[0] === undefined ? 1 : integerParam(params, 0, 'slot count')
      try {
        return controls.advanceSlots(count)
      } catch (error) {
        if (error instanceof RangeError) throw invalidParams(error.message)
        throw error
      }
    },
  }
  return methods
}

/** The wire transaction of parameter 0, decoded as the config (parameter 1) says, and that config. */
function transactionParams(params: Params): { wire: Uint8Array; config: Config } {
  const encoded = stringParam(params, 0, 'transaction')
  const config = configParam(params, 1)
  return { wire: decodeWire(encoded, enumOf(config, 'encoding', ['base58', 'base64'], 'base58')), config }
}

function decodeWire(encoded: string, encoding: 'base58' | 'base64'): Uint8Array {
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) throw invalidParams('the transaction is not valid base64')
    return Buffer.from(encoded, 'base64')
  }
  const bytes = base58Bytes(encoded)
  if (!bytes) throw invalidParams('the transaction is not valid base58')
  return bytes
}

/** A getProgramAccounts filter as a predicate over account data. */
function programAccountFilter(filter: unknown, index: number): (data: Uint8Array) => boolean {
  const where = `filters[${index}]`
  if (typeof filter !== 'object' || filter === null) throw invalidParams(`${where} must be an object`)
  const entry = filter as Config
  if (entry.dataSize !== undefined) {
    const size = integerOf(entry, 'dataSize')
    return (data) => data.length === size
  }
  const memcmp = objectOf(entry, 'memcmp')
  if (!memcmp) throw invalidParams(`${where} must be { dataSize } or { memcmp }`)
  const offset = integerOf(memcmp, 'offset') ?? 0
  const encoding = enumOf(memcmp, 'encoding', ['base58', 'base64'], 'base58')
  if (typeof memcmp.bytes !== 'string') throw invalidParams(`${where}.memcmp.bytes must be a string`)
  const bytes = encoding === 'base64' ? Buffer.from(memcmp.bytes, 'base64') : base58Bytes(memcmp.bytes)
  if (!bytes) throw invalidParams(`${where}.memcmp.bytes is not valid ${encoding}`)
  return (data) =>
    data.length >= offset + bytes.length && bytes.every((byte, position) => data[offset + position] === byte)
}

/** A landed transaction in getTransaction's shape. */
function transactionResult(
  record: RecordedTransaction,
  encoding: 'json' | 'base58' | 'base64',
  maxSupportedTransactionVersion: number | undefined,
) {
  if (record.version !== 'legacy' && (maxSupportedTransactionVersion ?? -1) < record.version) {
    throw new RpcError(
      RPC_ERROR.unsupportedTransactionVersion,
      `Transaction version (${record.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${record.version}`,
    )
  }
  const message = record.message
  let transaction: unknown
  if (encoding === 'base64') transaction = [Buffer.from(record.wire).toString('base64'), 'base64']
  else if (encoding === 'base58') transaction = [bs58.encode(record.wire), 'base58']
  else {
    const signatureCount = message.header.numRequiredSignatures
    const wireSignatures: string[] = []
    // Signatures follow the one-byte length prefix (fewer than 128 signatures always fit in one).
    for (let index = 0; index < signatureCount; index++) {
      wireSignatures.push(bs58.encode(record.wire.subarray(1 + 64 * index, 1 + 64 * (index + 1))))
    }
    transaction = {
      signatures: wireSignatures,
      message: {
        accountKeys: message.staticAccountKeys.map((key) => key.toBase58()),
        header: message.header,
        recentBlockhash: message.recentBlockhash,
        instructions: message.compiledInstructions.map((instruction) => ({
          programIdIndex: instruction.programIdIndex,
          accounts: instruction.accountKeyIndexes,
          data: bs58.encode(instruction.data),
          stackHeight: null,
        })),
        ...(record.version === 'legacy'
          ? {}
          : {
              addressTableLookups: message.addressTableLookups.map((lookup) => ({
                accountKey: lookup.accountKey.toBase58(),
                writableIndexes: lookup.writableIndexes,
                readonlyIndexes: lookup.readonlyIndexes,
              })),
            }),
      },
    }
  }
  const meta: Record<string, unknown> = {
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    fee: record.fee,
    preBalances: record.preBalances,
    postBalances: record.postBalances,
    innerInstructions: record.innerInstructions,
    logMessages: record.logMessages,
    preTokenBalances: record.preTokenBalances,
    postTokenBalances: record.postTokenBalances,
    rewards: [],
    loadedAddresses: record.loadedAddresses,
    computeUnitsConsumed: record.computeUnitsConsumed,
  }
  if (record.returnData) meta.returnData = record.returnData
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    transaction,
    meta,
    ...(maxSupportedTransactionVersion === undefined ? {} : { version: record.version }),
  }
}
