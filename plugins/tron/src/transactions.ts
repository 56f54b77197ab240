/**
 * Tagged transfers: TRX with the 32-byte tag as the transaction's `data` (memo), TRC20 as
 * `transfer(address,uint256)` with the tag appended after the ABI arguments. Built through the node
 * API as a wallet library would, checked against what was asked, given a longer expiration; and
 * read back from a transaction's raw data.
 */
import { type DepositFact, PontisError } from '@pontis/core/plugin'
import { tronMessageText } from './api.js'
import {
  type TronRawTransaction,
  type TronTransactionJson,
  tronAddressBytes,
  tronBase58,
  tronBytes,
  tronDecodeRaw,
  tronHex,
  tronSelector,
  tronTransactionId,
  tronTransactionJson,
  tronWithExpiration,
} from './codec.js'
import { TRON_NATIVE_CURRENCY_ID } from './config.js'
import type { TronChainContext, TronEventLog } from './context.js'

/** `transfer(address,uint256)`'s selector, hex. */
export const TRC20_TRANSFER_SELECTOR = tronHex(tronSelector('transfer(address,uint256)'))
/** keccak256('Transfer(address,address,uint256)'), hex. */
export const TRC20_TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

/** A payment tagged with a 32-byte id. */
export interface TaggedTransfer {
  /** Base58 addresses. */
  readonly from: string
  readonly to: string
  /** TRX's id or the TRC20 contract (base58). */
  readonly currencyId: string
  readonly amount: bigint
  /** 0x + 64 hex. */
  readonly tag: `0x${string}`
}

const word = (hex: string): string => hex.padStart(64, '0')

/** A 32-byte hex id (with or without 0x) as 64 lower-case hex, or a PontisError INVALID_REQUEST. */
export function tagHex(name: string, value: string): string {
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(value)) {
    throw new PontisError('INVALID_REQUEST', `${name} '${value.slice(0, 80)}' is not 32-byte hex`)
  }
  return value.replace(/^0x/, '').toLowerCase()
}

/** Calldata of a tagged TRC20 transfer: selector, ABI arguments, then the 32-byte tag. */
export function trc20TransferData(to: string, amount: bigint, tag: string): string {
  const to20 = tronHex((tronAddressBytes(to) as Uint8Array).subarray(1))
  return `${TRC20_TRANSFER_SELECTOR}${word(to20)}${word(amount.toString(16))}${tag}`
}

/** The tagged transfer a transaction's raw data makes, or undefined when it makes none. */
export function taggedTransferOf(raw: TronRawTransaction): TaggedTransfer | undefined {
  const contract = raw.contract
  if (contract.type === 'TransferContract') {
    if (raw.data.length !== 32) return undefined
    return {
      from: tronBase58(contract.owner),
      to: tronBase58(contract.to),
      currencyId: TRON_NATIVE_CURRENCY_ID,
      amount: contract.amount,
      tag: `0x${tronHex(raw.data)}`,
    }
  }
  const data = tronHex(contract.data)
  // selector (4) + to (32) + amount (32) + tag (32)
  if (data.length !== 200 || !data.startsWith(TRC20_TRANSFER_SELECTOR) || contract.callValue !== 0n)
    return undefined
  const toWord = data.slice(8, 72)
  // Some wallets put the 0x41 prefix in the address word; the token reads the low 20 bytes.
  if (!/^0{22}(00|41)/.test(toWord)) return undefined
  return {
    from: tronBase58(contract.owner),
    to: tronBase58(tronBytes(`41${toWord.slice(24)}`)),
    currencyId: tronBase58(contract.contractAddress),
    amount: BigInt(`0x${data.slice(72, 136)}`),
    tag: `0x${data.slice(136)}`,
  }
}

/** The deposit a tagged transfer makes: one to the vault; undefined otherwise. */
export function depositFactOf(context: TronChainContext, transfer: TaggedTransfer): DepositFact | undefined {
  if (context.vault === undefined || transfer.to !== context.vault) return undefined
  return {
    index: 0,
    depository: context.vault,
    depositId: transfer.tag,
    depositor: transfer.from,
    currencyId: transfer.currencyId,
    amount: transfer.amount,
  }
}

/** True when `logs` hold the Transfer event of `transfer` (a TRC20 payment really moved the tokens). */
export function hasTransferLog(logs: readonly TronEventLog[], transfer: TaggedTransfer): boolean {
  const address20 = (address: string) => tronHex((tronAddressBytes(address) as Uint8Array).subarray(1))
  return logs.some(
    (log) =>
      log.address.toLowerCase().replace(/^(0x|41)(?=[0-9a-f]{40}$)/, '') === address20(transfer.currencyId) &&
      log.topics[0]?.toLowerCase() === TRC20_TRANSFER_TOPIC &&
      log.topics[1]?.toLowerCase() === word(address20(transfer.from)) &&
      log.topics[2]?.toLowerCase() === word(address20(transfer.to)) &&
      BigInt(`0x${log.data || '0'}`) === transfer.amount,
  )
}

function nodeRefused(context: TronChainContext, what: string, message: string): PontisError {
  const insufficient = /balance is not sufficient|no OwnerAccount/i.test(message)
  return new PontisError(
    insufficient ? 'INSUFFICIENT_FUNDS' : 'RPC_HTTP_ERROR',
    `The Tron node of ${context.label.displayName} (${context.label.id}) refused to build ${what}: ${message.slice(0, 200)}`,
    { chainId: context.label.id },
  )
}

/**
 * Builds a tagged transfer through the node (`createtransaction` with `extra_data` for TRX,
 * `triggersmartcontract` for TRC20), checks the answer says what was asked (txID = sha256 of the
 * raw bytes, contract, parties, amount, tag), and sets the expiration `expirationSeconds` past the
 * node's timestamp (recomputing the txID). Answers the unsigned transaction, `visible: true`.
 * @throws PontisError INSUFFICIENT_FUNDS when the node refuses for the owner's balance;
 *   RPC_HTTP_ERROR when it refuses otherwise or answers something else than asked.
 */
export async function buildTaggedTransfer(
  context: TronChainContext,
  transfer: TaggedTransfer,
): Promise<TronTransactionJson> {
  const tag = tagHex('tag', transfer.tag)
  const native = transfer.currencyId === TRON_NATIVE_CURRENCY_ID
  if (transfer.amount <= 0n || (native && transfer.amount > BigInt(Number.MAX_SAFE_INTEGER))) {
    throw new PontisError('INVALID_REQUEST', `amount ${transfer.amount} is out of range for a Tron transfer`)
  }
  let answer: Partial<TronTransactionJson> & { Error?: string }
  if (native) {
    answer = await context.api.call('createtransaction', {
      owner_address: transfer.from,
      to_address: transfer.to,
      amount: Number(transfer.amount),
      extra_data: tag,
      visible: true,
    })
    if (answer.Error !== undefined)
      throw nodeRefused(context, 'a TRX transfer', tronMessageText(answer.Error))
  } else {
    const data = trc20TransferData(transfer.to, transfer.amount, tag)
    const triggered = await context.api.call<{
      result?: { result?: boolean; code?: string; message?: string }
      transaction?: TronTransactionJson
      Error?: string
    }>('triggersmartcontract', {
      owner_address: transfer.from,
      contract_address: transfer.currencyId,
      function_selector: 'transfer(address,uint256)',
      parameter: data.slice(8),
      fee_limit: context.options.feeLimitSun,
      call_value: 0,
      visible: true,
    })
    if (triggered.result?.result !== true || !triggered.transaction) {
      const message =
        triggered.Error ?? `${triggered.result?.code ?? ''} ${tronMessageText(triggered.result?.message)}`
      throw nodeRefused(context, 'a TRC20 transfer', message)
    }
    answer = triggered.transaction
  }
  const raw = checkAnswer(context, answer, transfer, tag)
  const expiration = Math.max(raw.expiration, raw.timestamp + context.options.expirationSeconds * 1000)
  return tronTransactionJson(tronWithExpiration(raw, expiration), true)
}

function checkAnswer(
  context: TronChainContext,
  answer: Partial<TronTransactionJson>,
  asked: TaggedTransfer,
  tag: string,
): TronRawTransaction {
  const wrong = (why: string) =>
    new PontisError(
      'RPC_HTTP_ERROR',
      `The Tron node of ${context.label.displayName} (${context.label.id}) built a transaction that is not the one asked: ${why}`,
      { chainId: context.label.id },
    )
  if (typeof answer.raw_data_hex !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(answer.raw_data_hex)) {
    throw wrong('no raw_data_hex')
  }
  const bytes = tronBytes(answer.raw_data_hex.toLowerCase())
  if (tronTransactionId(bytes) !== String(answer.txID).toLowerCase())
    throw wrong('txID is not sha256(raw_data_hex)')
  let raw: TronRawTransaction
  try {
    raw = tronDecodeRaw(bytes)
  } catch (error) {
    throw wrong(`raw_data_hex does not decode (${(error as Error).message})`)
  }
  const built = taggedTransferOf(raw)
  if (!built) throw wrong('it is no tagged transfer')
  const mismatch = (['from', 'to', 'currencyId'] as const).find((key) => built[key] !== asked[key])
  if (mismatch) throw wrong(`${mismatch} is ${built[mismatch]}, asked ${asked[mismatch]}`)
  if (built.amount !== asked.amount) throw wrong(`amount is ${built.amount}, asked ${asked.amount}`)
  if (built.tag !== `0x${tag}`) throw wrong('the tag differs')
  if (raw.contract.type === 'TriggerSmartContract' && raw.feeLimit !== BigInt(context.options.feeLimitSun)) {
    throw wrong(`fee_limit is ${raw.feeLimit}, asked ${context.options.feeLimitSun}`)
  }
  return raw
}
