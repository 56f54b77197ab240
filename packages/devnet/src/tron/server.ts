/**
 * The Tron devnet's HTTP server: the full-node API subset (`/wallet/*`, `/walletsolidity/*`)
 * wallets and the plugin use, answered from a {@link TronChain}. JSON in, JSON out; errors are
 * answered 200 with the node's shapes (`{Error}`, `{result: {code, message}}`, `{result: false,
 * code, message}` with hex-encoded text), as the real node does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import { type ListeningServer, listenOn, readRequestText } from '../simulator-http.js'
import {
  TRON_SOLID_CONFIRMATIONS,
  type TronBlock,
  type TronChain,
  TronRejection,
  type TronTxRecord,
} from './chain.js'
import {
  type TronContract,
  tronAddressBytes,
  tronRenderAddress,
  tronSelector,
  tronTransactionJson,
} from './codec.js'

const MAX_BODY_BYTES = 1_000_000

class BadRequest extends Error {}

const hexText = (text: string): string => bytesToHex(new TextEncoder().encode(text))

function address(body: Record<string, unknown>, name: string): Uint8Array {
  const value = body[name]
  const bytes = typeof value === 'string' ? tronAddressBytes(value) : undefined
  if (!bytes) throw new BadRequest(`Invalid ${name}: expected a base58 (T…) or 41-hex address`)
  return bytes
}

function amount(body: Record<string, unknown>, name: string, fallback?: bigint): bigint {
  const value = body[name]
  if (value === undefined && fallback !== undefined) return fallback
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  if (typeof value === 'string' && /^[0-9]{1,30}$/.test(value)) return BigInt(value)
  throw new BadRequest(`Invalid ${name}: expected a non-negative integer`)
}

function hexField(body: Record<string, unknown>, name: string): Uint8Array {
  const value = body[name]
  if (value === undefined || value === '') return new Uint8Array()
  if (typeof value !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(value))
    throw new BadRequest(`Invalid ${name}: expected hex`)
  return hexToBytes(value.toLowerCase())
}

/** Calldata of a trigger: `data`, or the selector of `function_selector` followed by `parameter`. */
function callData(body: Record<string, unknown>): Uint8Array {
  if (typeof body.data === 'string' && body.data !== '') return hexField(body, 'data')
  if (typeof body.function_selector !== 'string') throw new BadRequest('Invalid function_selector')
  return Uint8Array.from([
    ...tronSelector(body.function_selector.replace(/\s/g, '')),
    ...hexField(body, 'parameter'),
  ])
}

function blockJson(chain: TronChain, block: TronBlock, visible: boolean): Record<string, unknown> {
  const transactions = block.txIds.map((txId) =>
    transactionJson(chain.transaction(txId) as TronTxRecord, visible),
  )
  return {
    blockID: block.id,
    block_header: {
      raw_data: {
        number: block.number,
        txTrieRoot: '0'.repeat(64),
        witness_address: tronRenderAddress(Uint8Array.from([0x41, ...new Uint8Array(20)]), visible),
        parentHash: block.parentId,
        version: 30,
        timestamp: block.timestamp,
      },
      witness_signature: '',
    },
    ...(transactions.length > 0 ? { transactions } : {}),
  }
}

/** A transaction as the node serves it; `ret` (the contract result) only once it is in a block. */
function transactionJson(record: TronTxRecord, visible: boolean): Record<string, unknown> {
  return {
    ...(record.blockNumber !== undefined ? { ret: [{ contractRet: record.contractRet }] } : {}),
    signature: record.transaction.signature,
    ...tronTransactionJson(record.raw, visible),
  }
}

/** Most blocks `getblockbylimitnext` serves at once (java-tron's BLOCK_LIMIT_NUM). */
export const TRON_BLOCK_LIMIT_NUM = 100

function transactionInfo(record: TronTxRecord): Record<string, unknown> {
  const contract = record.raw.contract
  return {
    id: record.transaction.txID,
    fee: Number(record.netFee + record.energyFee),
    blockNumber: record.blockNumber,
    blockTimeStamp: record.blockTimeStamp,
    contractResult: [''],
    ...(contract.type === 'TriggerSmartContract'
      ? { contract_address: bytesToHex(contract.contractAddress) }
      : {}),
    receipt: {
      net_fee: Number(record.netFee),
      ...(record.energyFee > 0n ? { energy_fee: Number(record.energyFee) } : {}),
      ...(record.energyUsage > 0n ? { energy_usage_total: Number(record.energyUsage) } : {}),
      ...(contract.type === 'TriggerSmartContract' ? { result: record.contractRet } : {}),
    },
    ...(record.logs.length > 0 ? { log: record.logs } : {}),
    ...(record.contractRet === 'SUCCESS'
      ? {}
      : { result: 'FAILED', resMessage: hexText('REVERT opcode executed') }),
  }
}

/** Answers one API call. Exposed for in-process use. */
export function tronApiCall(chain: TronChain, path: string, body: Record<string, unknown>): unknown {
  const visible = body.visible === true
  const solid = path.startsWith('/walletsolidity/')
  const method = path.replace(/^\/(wallet|walletsolidity)\//, '')
  const inBlock = (record: TronTxRecord | undefined): TronTxRecord | undefined => {
    if (!record || record.blockNumber === undefined) return undefined
    if (solid && chain.head.number - record.blockNumber + 1 < TRON_SOLID_CONFIRMATIONS) return undefined
    return record
  }
  // The full node serves an accepted transaction before it is in a block (without `ret`); the
  // solidity node only serves solid ones.
  const accepted = (record: TronTxRecord | undefined): TronTxRecord | undefined =>
    solid ? inBlock(record) : record
  switch (method) {
    case 'getnowblock':
      return blockJson(chain, chain.head, visible)
    case 'getblockbynum': {
      const block = chain.block(Number(amount(body, 'num')))
      return block ? blockJson(chain, block, visible) : {}
    }
    case 'getblockbylimitnext': {
      // Blocks startNum ≤ n < endNum, at most TRON_BLOCK_LIMIT_NUM; another range answers `{}`.
      const start = Number(amount(body, 'startNum'))
      const end = Number(amount(body, 'endNum'))
      if (end <= start || end - start > TRON_BLOCK_LIMIT_NUM) return {}
      const blocks: Record<string, unknown>[] = []
      for (let number = start; number < end; number++) {
        const block = chain.block(number)
        if (!block) break
        blocks.push(blockJson(chain, block, visible))
      }
      return blocks.length > 0 ? { block: blocks } : {}
    }
    case 'getchainparameters':
      return {
        chainParameter: [
          { key: 'getTransactionFee', value: Number(chain.transactionFee) },
          { key: 'getEnergyFee', value: Number(chain.energyFee) },
          { key: 'getCreateAccountFee', value: 0 },
          { key: 'getMaxFeeLimit', value: 15_000_000_000 },
        ],
      }
    case 'getaccount': {
      const owner = address(body, 'address')
      const balance = chain.balance(bytesToHex(owner))
      if (balance === undefined) return {}
      return {
        address: tronRenderAddress(owner, visible),
        ...(balance > 0n ? { balance: Number(balance) } : {}),
        create_time: chain.createTime(bytesToHex(owner)),
      }
    }
    case 'getaccountresource': {
      const owner = address(body, 'address')
      if (chain.balance(bytesToHex(owner)) === undefined) return {}
      // No free bandwidth and no staking here: every byte and every unit of energy is burnt in TRX.
      return {
        freeNetLimit: 0,
        NetLimit: 0,
        EnergyLimit: 0,
        TotalNetLimit: 43_200_000_000,
        TotalEnergyLimit: 180_000_000_000,
      }
    }
    case 'createtransaction': {
      const contract: TronContract = {
        type: 'TransferContract',
        owner: address(body, 'owner_address'),
        to: address(body, 'to_address'),
        amount: amount(body, 'amount'),
      }
      try {
        chain.validateTransfer(contract.owner, contract.to, contract.amount)
      } catch (error) {
        if (error instanceof TronRejection) {
          return { Error: `class org.tron.core.exception.ContractValidateException : ${error.message}` }
        }
        throw error
      }
      return tronTransactionJson(chain.newRaw(contract, { data: hexField(body, 'extra_data') }), visible)
    }
    case 'triggersmartcontract': {
      const owner = address(body, 'owner_address')
      const contractAddress = address(body, 'contract_address')
      if (bytesToHex(contractAddress) !== chain.tokenAddress) {
        return {
          result: {
            code: 'CONTRACT_VALIDATE_ERROR',
            message: hexText('No contract or not a valid smart contract'),
          },
        }
      }
      if (chain.balance(bytesToHex(owner)) === undefined) {
        return {
          result: {
            code: 'CONTRACT_VALIDATE_ERROR',
            message: hexText('Validate TriggerSmartContract error, no OwnerAccount.'),
          },
        }
      }
      const contract: TronContract = {
        type: 'TriggerSmartContract',
        owner,
        contractAddress,
        callValue: amount(body, 'call_value', 0n),
        data: callData(body),
      }
      const raw = chain.newRaw(contract, { feeLimit: amount(body, 'fee_limit', 0n) })
      return { result: { result: true }, transaction: tronTransactionJson(raw, visible) }
    }
    case 'triggerconstantcontract': {
      const contractAddress = address(body, 'contract_address')
      if (bytesToHex(contractAddress) !== chain.tokenAddress) {
        return {
          result: {
            code: 'CONTRACT_VALIDATE_ERROR',
            message: hexText('No contract or not a valid smart contract'),
          },
        }
      }
      try {
        const answer = chain.constantCall(callData(body))
        return {
          result: { result: true },
          energy_used: Number(answer.energy),
          constant_result: [bytesToHex(answer.result)],
        }
      } catch (error) {
        if (error instanceof TronRejection) {
          return { result: { code: 'CONTRACT_EXE_ERROR', message: hexText(error.message) }, energy_used: 0 }
        }
        throw error
      }
    }
    case 'broadcasttransaction':
      try {
        const txid = chain.broadcast(body)
        return { result: true, txid }
      } catch (error) {
        if (error instanceof TronRejection) {
          return { result: false, code: error.code, txid: body.txID, message: hexText(error.message) }
        }
        throw error
      }
    case 'gettransactionbyid': {
      const record = accepted(chain.transaction(String(body.value ?? '')))
      return record ? transactionJson(record, visible) : {}
    }
    case 'gettransactioninfobyid': {
      const record = inBlock(chain.transaction(String(body.value ?? '')))
      return record ? transactionInfo(record) : {}
    }
    default:
      return undefined
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return readRequestText(request, MAX_BODY_BYTES, () => new BadRequest('body too large'))
}

/** A started API server. */
export type TronApiServer = ListeningServer

/** Serves the node API for `chain` on `host:port` (0 = a free port). */
export async function startTronApiServer(
  chain: TronChain,
  options: { host: string; port: number; log?: (message: string) => void },
): Promise<TronApiServer> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const send = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(value))
      }
      try {
        const path = (request.url ?? '/').split('?')[0] as string
        const text = request.method === 'POST' ? await readBody(request) : ''
        let body: Record<string, unknown> = {}
        if (text.trim() !== '') {
          const parsed: unknown = JSON.parse(text)
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
            throw new BadRequest('expected a JSON object')
          body = parsed as Record<string, unknown>
        }
        const answer = tronApiCall(chain, path, body)
        if (answer === undefined) send(404, { Error: `unknown endpoint ${path}` })
        else send(200, answer)
      } catch (error) {
        // The node answers malformed input with 200 and an `Error` member.
        if (error instanceof BadRequest || error instanceof SyntaxError) send(200, { Error: error.message })
        else send(500, { Error: (error as Error).message })
      }
    })()
  })
  return listenOn(server, options.host, options.port)
}
