/**
 * EVM: `evm-transaction` items and the EIP-712/EIP-191 `signature` items (permits). The small
 * {@link EvmWallet} interface, {@link evmWalletAdapter} over any such wallet, and
 * {@link viemWalletAdapter} over a viem wallet client (viem is imported for types only).
 */
import type {
  Eip191SignPayload,
  Eip712SignPayload,
  EvmTransactionData,
  SignatureData,
} from '@pontis/generated/intents'
import type { Account, Chain, Transport, WalletClient } from 'viem'
import {
  adapterName,
  claimsFormat,
  type ItemData,
  type WalletAdapter,
  type WalletAdapterOptions,
} from './adapter.js'
import { sleep } from './shared.js'

/** An EVM transaction of an `evm-transaction` step item, amounts as bigints. */
export interface EvmTransactionRequest {
  to: `0x${string}`
  data: `0x${string}`
  value: bigint
  chainId: number
  /** The account the service expects to send it, when the quote names one. */
  from?: `0x${string}`
  /** The service's estimates; a wallet may use them or estimate itself. */
  gas?: bigint
  maxFeePerGas?: bigint
  maxPriorityFeePerGas?: bigint
}

/** What an EVM wallet must do; {@link evmWalletAdapter} turns one into a {@link WalletAdapter}. */
export interface EvmWallet {
  /** Signs and broadcasts the transaction; answers its hash. */
  sendTransaction(transaction: EvmTransactionRequest): Promise<string>
  /**
   * Resolves once the transaction is included and rejects when it reverted. When present, the
   * next step starts only after it resolves (an approval must be mined before the deposit).
   */
  waitForTransaction?(hash: string, chainId: number): Promise<void>
  /** Signs an EIP-712 payload of a `signature` step (permits); answers the 0x signature. */
  signTypedData?(payload: Eip712SignPayload): Promise<string>
  /** Signs an EIP-191 payload of a `signature` step; answers the 0x signature. */
  signMessage?(payload: Eip191SignPayload): Promise<string>
}

/** The items an EVM adapter executes. */
export type EvmItemData = EvmTransactionData | SignatureData

function transactionRequest(data: EvmTransactionData): EvmTransactionRequest {
  return {
    to: data.to as `0x${string}`,
    data: data.data as `0x${string}`,
    value: BigInt(data.value),
    chainId: data.chainId,
    ...(data.from ? { from: data.from as `0x${string}` } : {}),
    ...(data.gas ? { gas: BigInt(data.gas) } : {}),
    ...(data.maxFeePerGas ? { maxFeePerGas: BigInt(data.maxFeePerGas) } : {}),
    ...(data.maxPriorityFeePerGas ? { maxPriorityFeePerGas: BigInt(data.maxPriorityFeePerGas) } : {}),
  }
}

/**
 * A {@link WalletAdapter} over an {@link EvmWallet}: claims `evm-transaction` items on `chainIds`
 * (every chain by default), and `signature` items the wallet has the signing method for (an
 * EIP-712 payload whose domain names a chain only when that chain is served). Transactions answer
 * after `waitForTransaction`, so an approval is mined before the deposit is sent.
 */
export function evmWalletAdapter(
  wallet: EvmWallet,
  options: WalletAdapterOptions = {},
): WalletAdapter<EvmItemData> {
  const { chainIds } = options
  const claimsTransaction = claimsFormat<EvmTransactionData>('evm-transaction', chainIds)
  return {
    name: options.name ?? adapterName('evm wallet', chainIds),
    claims(data: ItemData): data is EvmItemData {
      if (claimsTransaction(data)) return true
      if (data.format !== 'signature') return false
      const { sign } = data as SignatureData
      if (sign.signatureKind === 'eip191') return wallet.signMessage !== undefined
      const domainChainId = sign.domain.chainId
      return (
        sign.signatureKind === 'eip712' &&
        wallet.signTypedData !== undefined &&
        (domainChainId === undefined || chainIds === undefined || chainIds.includes(domainChainId))
      )
    },
    async execute(data) {
      if (data.format === 'signature') {
        const { sign } = data
        const signature =
          sign.signatureKind === 'eip712'
            ? await wallet.signTypedData?.(sign)
            : await wallet.signMessage?.(sign)
        if (signature === undefined)
          throw new TypeError(`the evm wallet cannot sign ${sign.signatureKind} payloads`)
        return { signature }
      }
      const txHash = await wallet.sendTransaction(transactionRequest(data))
      await wallet.waitForTransaction?.(txHash, data.chainId)
      return { chainId: data.chainId, txHash }
    },
  }
}

/** A viem wallet client with any transport, chain and account. */
export type ViemWalletClient = WalletClient<Transport, Chain | undefined, Account | undefined>

/** Options of {@link viemWalletAdapter}. */
export interface ViemWalletAdapterOptions {
  /** Interval between receipt look-ups while waiting for inclusion. Default 250 ms. */
  receiptPollIntervalMs?: number
  /** Longest wait for a receipt. Default 120 s. */
  receiptTimeoutMs?: number
  /**
   * Send with the step's gas limit when it has one (default true, as the Relay SDK does). The
   * service simulates it with headroom; the wallet's own estimate has none, so a transaction sent
   * on it reverts out of gas when another one moves shared state first (a depository balance
   * emptied by a repayment makes the deposit's balance write cost 17 100 more).
   */
  useStepGas?: boolean
}

/**
 * An {@link EvmWallet} and {@link WalletAdapter} over a viem wallet client (local account or
 * injected wallet). It serves the client's chain (every chain when the client has none): give one
 * adapter per chain the quote sends on. Transactions are sent with `to`, `data`, `value` and the
 * step's gas limit (the wallet estimates when the step has none, or with `useStepGas: false`) and
 * the wallet's own fees; inclusion is awaited through the client's transport
 * (`eth_getTransactionReceipt`).
 */
export function viemWalletAdapter(
  walletClient: ViemWalletClient,
  options: ViemWalletAdapterOptions = {},
): EvmWallet & WalletAdapter<EvmItemData> {
  const account = walletClient.account
  if (!account) throw new TypeError('the wallet client needs an account')
  const pollMs = options.receiptPollIntervalMs ?? 250
  const timeoutMs = options.receiptTimeoutMs ?? 120_000
  const useStepGas = options.useStepGas ?? true
  // The transport forwards any JSON-RPC method; WalletClient's schema only types wallet methods.
  const rpc = walletClient.request as unknown as (args: {
    method: string
    params: unknown[]
  }) => Promise<unknown>

  const wallet: EvmWallet = {
    async sendTransaction(transaction) {
      const walletChainId = walletClient.chain?.id
      if (walletChainId !== undefined && walletChainId !== transaction.chainId) {
        throw new Error(
          `the wallet client is on chain ${walletChainId}; this step runs on ${transaction.chainId}`,
        )
      }
      return walletClient.sendTransaction({
        account,
        chain: walletClient.chain ?? null,
        to: transaction.to,
        data: transaction.data,
        value: transaction.value,
        ...(useStepGas && transaction.gas !== undefined ? { gas: transaction.gas } : {}),
      })
    },
    async waitForTransaction(hash) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const receipt = (await rpc({ method: 'eth_getTransactionReceipt', params: [hash] })) as {
          status?: string
        } | null
        if (receipt) {
          if (receipt.status === '0x0') throw new Error(`transaction ${hash} reverted`)
          return
        }
        await sleep(pollMs)
      }
      throw new Error(`transaction ${hash} was not included within ${timeoutMs} ms`)
    },
    async signTypedData(payload) {
      return walletClient.signTypedData({
        account,
        domain: payload.domain,
        types: payload.types,
        primaryType: payload.primaryType,
        message: payload.value,
      } as Parameters<ViemWalletClient['signTypedData']>[0])
    },
    async signMessage(payload) {
      const message = /^0x([0-9a-fA-F]{2})*$/.test(payload.message)
        ? { raw: payload.message as `0x${string}` }
        : payload.message
      return walletClient.signMessage({ account, message })
    },
  }
  const chainIds = walletClient.chain ? [walletClient.chain.id] : undefined
  return { ...wallet, ...evmWalletAdapter(wallet, { name: adapterName('viem wallet', chainIds), chainIds }) }
}
