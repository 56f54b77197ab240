/**
 * Wallet adapters: the small per-family interfaces `executeQuote` drives, and ready-made adapters
 * over a viem wallet client (EVM), a keypair and a JSON-RPC URL (SVM), a PSBT signer plus an
 * Esplora API (Bitcoin), an EIP-712 signer plus the Hyperliquid API, and a txID signer plus a Tron
 * node API. Browser-safe: only `fetch`, WebCrypto, `atob`/`btoa`; viem is imported for
 * types only.
 */
import type { Account, Chain, Transport, WalletClient } from 'viem'
import type {
  BitcoinPsbtData,
  Eip191SignPayload,
  Eip712SignPayload,
  HyperliquidActionData,
  LighterTransferData,
  SvmTransactionData,
  TronTransactionData,
} from '../../../generated/intents/index.js'

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

/** What `executeQuote` needs of an EVM wallet. */
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

/** What `executeQuote` needs of an SVM wallet. */
export interface SvmWallet {
  /** Signs the serialized versioned transaction (base64) as the user; answers the signed one, base64. */
  signTransaction(transaction: string, data: SvmTransactionData): Promise<string>
  /** Broadcasts a signed transaction (base64); answers its base58 signature once it is confirmed. */
  sendTransaction(signedTransaction: string, data: SvmTransactionData): Promise<string>
}

/** What `executeQuote` needs of a Bitcoin wallet. */
export interface BitcoinWallet {
  /** Signs and finalizes the quoted PSBT (base64); answers the raw signed transaction, hex. */
  signPsbt(psbt: string, data: BitcoinPsbtData): Promise<string>
  /** Broadcasts a raw transaction (hex); answers its txid. */
  broadcast(transactionHex: string, data: BitcoinPsbtData): Promise<string>
}

/**
 * Signs and submits actions on a trading venue (the perpetuals exchange's `lighter-transfer`,
 * Hyperliquid's `hyperliquid-action`). {@link hyperliquidWallet} is one for Hyperliquid; the
 * perpetuals exchange's API keys stay with the integrator, so none ships for it.
 */
export interface VenueSigner {
  /** Signs and submits the action; answers the venue's transaction id when it has one. */
  submit(data: LighterTransferData | HyperliquidActionData): Promise<string | undefined>
}

/** Signs `txID` of a `tron-transaction` item and broadcasts it; answers the transaction id ({@link tronNodeWallet}). */
export interface TronWallet {
  signAndSendTransaction(data: TronTransactionData): Promise<string>
}

/** The wallets of one execution, by chain family; only the families the quote's steps use are needed. */
export interface Wallets {
  evm?: EvmWallet
  svm?: SvmWallet
  bitcoin?: BitcoinWallet
  venue?: VenueSigner
  tron?: TronWallet
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A viem wallet client with any transport, chain and account. */
export type ViemWalletClient = WalletClient<Transport, Chain | undefined, Account | undefined>

/** Options of {@link viemWalletAdapter}. */
export interface ViemWalletAdapterOptions {
  /** Interval between receipt look-ups while waiting for inclusion. Default 250 ms. */
  receiptPollIntervalMs?: number
  /** Longest wait for a receipt. Default 120 s. */
  receiptTimeoutMs?: number
}

/**
 * An {@link EvmWallet} over a viem wallet client (local account or injected wallet). Transactions
 * are sent with `to`, `data` and `value` and the wallet's own gas estimate; the client's chain must
 * be the step's chain. Inclusion is awaited through the client's transport (`eth_getTransactionReceipt`).
 */
export function viemWalletAdapter(
  walletClient: ViemWalletClient,
  options: ViemWalletAdapterOptions = {},
): EvmWallet {
  const account = walletClient.account
  if (!account) throw new TypeError('the wallet client needs an account')
  const pollMs = options.receiptPollIntervalMs ?? 250
  const timeoutMs = options.receiptTimeoutMs ?? 120_000
  // The transport forwards any JSON-RPC method; WalletClient's schema only types wallet methods.
  const rpc = walletClient.request as unknown as (args: {
    method: string
    params: unknown[]
  }) => Promise<unknown>

  return {
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
}

// ---- SVM ----

/** An ed25519 signer: its 32-byte public key and a function signing raw bytes. */
export interface SvmSigner {
  publicKey: Uint8Array
  signMessage(message: Uint8Array): Promise<Uint8Array>
}

/** Anything holding a 64-byte ed25519 secret key (seed + public key), such as `@solana/web3.js`'s `Keypair`. */
export interface SvmKeypairLike {
  secretKey: Uint8Array
}

// PKCS#8 wrapping of a raw ed25519 seed (RFC 8410), so WebCrypto can import it.
const ED25519_PKCS8_PREFIX = new Uint8Array([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
])

/** An {@link SvmSigner} over a keypair's secret key, signing with WebCrypto Ed25519 (Node 20+, current browsers). */
export function svmKeypairSigner(keypair: SvmKeypairLike): SvmSigner {
  if (keypair.secretKey.length !== 64) throw new TypeError('an SVM secret key is 64 bytes')
  const pkcs8 = new Uint8Array(ED25519_PKCS8_PREFIX.length + 32)
  pkcs8.set(ED25519_PKCS8_PREFIX, 0)
  pkcs8.set(keypair.secretKey.subarray(0, 32), ED25519_PKCS8_PREFIX.length)
  // Imported on first use, so an unsupported runtime fails in signMessage, not as an unhandled rejection.
  let key: Promise<CryptoKey> | undefined
  return {
    publicKey: keypair.secretKey.slice(32),
    async signMessage(message) {
      key ??= globalThis.crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign'])
      return new Uint8Array(
        await globalThis.crypto.subtle.sign('Ed25519', await key, new Uint8Array(message)),
      )
    },
  }
}

/** Base64 to bytes without Buffer (browser-safe). */
export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** Bytes to base64 without Buffer (browser-safe). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** Reads a Solana compact-u16 at `offset`; answers the value and the bytes it took. */
function readCompactU16(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0
  for (let size = 0; size < 3; size++) {
    const byte = bytes[offset + size]
    if (byte === undefined) throw new Error('truncated SVM transaction')
    value |= (byte & 0x7f) << (7 * size)
    if ((byte & 0x80) === 0) return [value, size + 1]
  }
  throw new Error('malformed compact-u16 in SVM transaction')
}

/**
 * Signs a serialized SVM transaction (legacy or versioned wire format) with `signer`: the signature
 * goes into the slot of the signer's key among the message's required signers. Answers the signed
 * transaction, base64.
 */
export async function signSvmTransaction(transaction: string, signer: SvmSigner): Promise<string> {
  const wire = base64ToBytes(transaction)
  const [signatureCount, countSize] = readCompactU16(wire, 0)
  const messageOffset = countSize + 64 * signatureCount
  const message = wire.subarray(messageOffset)
  // A versioned message starts with 0x80 | version; a legacy one starts with its header.
  const headerOffset = (message[0] ?? 0) & 0x80 ? 1 : 0
  const requiredSignatures = message[headerOffset] ?? 0
  const [, keyCountSize] = readCompactU16(message, headerOffset + 3)
  const keysOffset = headerOffset + 3 + keyCountSize
  let slot = -1
  for (let index = 0; index < Math.min(requiredSignatures, signatureCount); index++) {
    const key = message.subarray(keysOffset + 32 * index, keysOffset + 32 * (index + 1))
    if (key.every((byte, i) => byte === signer.publicKey[i])) slot = index
  }
  if (slot < 0) throw new Error('the signer is not a required signer of this SVM transaction')
  const signature = await signer.signMessage(message)
  const signed = wire.slice()
  signed.set(signature, countSize + 64 * slot)
  return bytesToBase64(signed)
}

/** Options of {@link svmKeypairWallet}. */
export interface SvmKeypairWalletOptions {
  fetch?: typeof fetch
  /** Commitment the transaction must reach before `sendTransaction` answers. Default `confirmed`. */
  commitment?: 'confirmed' | 'finalized'
  /** Interval between signature status look-ups. Default 250 ms. */
  pollIntervalMs?: number
  /** Longest wait for the commitment. Default 60 s. */
  timeoutMs?: number
}

/**
 * An {@link SvmWallet} over a keypair (or any {@link SvmSigner}) and a Solana JSON-RPC URL, with plain
 * fetch: `sendTransaction` (base64) then `getSignatureStatuses` until the commitment is reached.
 */
export function svmKeypairWallet(
  signer: SvmKeypairLike | SvmSigner,
  rpcUrl: string,
  options: SvmKeypairWalletOptions = {},
): SvmWallet {
  const ed25519 = 'signMessage' in signer ? signer : svmKeypairSigner(signer)
  const doFetch = options.fetch ?? globalThis.fetch
  const commitment = options.commitment ?? 'confirmed'
  let nextId = 1
  async function rpc<T>(method: string, params: unknown[]): Promise<T> {
    const response = await doFetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    })
    const answer = (await response.json()) as { result?: T; error?: { message: string } }
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`)
    return answer.result as T
  }
  return {
    signTransaction: (transaction) => signSvmTransaction(transaction, ed25519),
    async sendTransaction(signedTransaction) {
      const signature = await rpc<string>('sendTransaction', [
        signedTransaction,
        { encoding: 'base64', preflightCommitment: 'confirmed' },
      ])
      const deadline = Date.now() + (options.timeoutMs ?? 60_000)
      while (Date.now() < deadline) {
        const { value } = await rpc<{
          value: Array<{ err: unknown; confirmationStatus?: string } | null>
        }>('getSignatureStatuses', [[signature]])
        const status = value[0]
        if (status?.err) throw new Error(`SVM transaction ${signature} failed: ${JSON.stringify(status.err)}`)
        if (
          status?.confirmationStatus === 'finalized' ||
          (commitment === 'confirmed' && status?.confirmationStatus === 'confirmed')
        )
          return signature
        await sleep(options.pollIntervalMs ?? 250)
      }
      throw new Error(`SVM transaction ${signature} did not reach ${commitment} in time`)
    },
  }
}

// ---- Bitcoin ----

/** Options of {@link esploraBitcoinWallet}. */
export interface EsploraBitcoinWalletOptions {
  /** Esplora API origin and path prefix, for example `http://127.0.0.1:3002` or `https://blockstream.info/api`. */
  esploraUrl: string
  /** Signs and finalizes the PSBT (base64); answers the raw transaction hex (your signer, e.g. `@scure/btc-signer`). */
  signPsbt: BitcoinWallet['signPsbt']
  fetch?: typeof fetch
}

/** A {@link BitcoinWallet} that signs with your PSBT signer and broadcasts with Esplora's `POST /tx`. */
export function esploraBitcoinWallet(options: EsploraBitcoinWalletOptions): BitcoinWallet {
  const doFetch = options.fetch ?? globalThis.fetch
  const base = options.esploraUrl.replace(/\/+$/, '')
  return {
    signPsbt: options.signPsbt,
    async broadcast(transactionHex) {
      const response = await doFetch(`${base}/tx`, { method: 'POST', body: transactionHex })
      const text = (await response.text()).trim()
      if (!response.ok) throw new Error(`Esplora refused the transaction (${response.status}): ${text}`)
      return text
    },
  }
}

// ---- Hyperliquid ----

/** EIP-712 typed data as viem's `signTypedData` takes it (its `message` member). */
export interface HyperliquidTypedData {
  domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` }
  types: Record<string, Array<{ name: string; type: string }>>
  primaryType: string
  message: Record<string, string | bigint>
}

/** Options of {@link hyperliquidWallet}. */
export interface HyperliquidWalletOptions {
  /** API origin; actions are posted to `${apiUrl}/exchange` (e.g. `https://api.hyperliquid.xyz`). */
  apiUrl: string
  /**
   * Signs typed data as the quote's `user` and answers the 65-byte 0x signature: for example
   * `(typedData) => walletClient.signTypedData({ account, ...typedData })`.
   */
  signTypedData(typedData: HyperliquidTypedData): Promise<`0x${string}`>
  fetch?: typeof fetch
}

// The user-signed action types, field order as Hyperliquid hashes them.
const HYPERLIQUID_SEND_TYPES: Record<string, Array<{ name: string; type: string }>> = {
  usdSend: [
    { name: 'hyperliquidChain', type: 'string' },
    { name: 'destination', type: 'string' },
    { name: 'amount', type: 'string' },
    { name: 'time', type: 'uint64' },
  ],
  spotSend: [
    { name: 'hyperliquidChain', type: 'string' },
    { name: 'destination', type: 'string' },
    { name: 'token', type: 'string' },
    { name: 'amount', type: 'string' },
    { name: 'time', type: 'uint64' },
  ],
}

/** The EIP-712 typed data of a `usdSend` or `spotSend` action of a `hyperliquid-action` item. */
export function hyperliquidTypedData(data: HyperliquidActionData): HyperliquidTypedData {
  const action = data.action as Record<string, unknown>
  const fields = HYPERLIQUID_SEND_TYPES[String(action.type)]
  if (!fields) throw new TypeError(`cannot sign Hyperliquid actions of type ${String(action.type)}`)
  const primaryType = `HyperliquidTransaction:${String(action.type).replace(/^./, (c) => c.toUpperCase())}`
  const message: Record<string, string | bigint> = {}
  for (const { name, type } of fields) {
    const value = action[name]
    if (value === undefined) throw new TypeError(`the ${String(action.type)} action has no ${name}`)
    message[name] = type === 'uint64' ? BigInt(value as number) : String(value)
  }
  return {
    domain: {
      name: 'HyperliquidSignTransaction',
      version: '1',
      chainId: Number.parseInt(String(action.signatureChainId), 16),
      verifyingContract: '0x0000000000000000000000000000000000000000',
    },
    types: { [primaryType]: fields },
    primaryType,
    message,
  }
}

/**
 * A {@link VenueSigner} for Hyperliquid: signs the item's send action as a user-signed action and posts
 * `{action, nonce, signature}` to the exchange endpoint with exactly the quoted nonce (the service
 * recognises the deposit by sender and nonce). Answers no transaction id: the service finds the deposit
 * by scanning the depository's ledger.
 */
export function hyperliquidWallet(options: HyperliquidWalletOptions): VenueSigner {
  const doFetch = options.fetch ?? globalThis.fetch
  const exchangeUrl = `${options.apiUrl.replace(/\/+$/, '')}/exchange`
  return {
    async submit(data) {
      if (data.format !== 'hyperliquid-action')
        throw new TypeError(`hyperliquidWallet submits hyperliquid-action items, not ${data.format}`)
      const signature = await options.signTypedData(hyperliquidTypedData(data))
      if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new TypeError('expected a 65-byte 0x signature')
      const response = await doFetch(exchangeUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          action: data.action,
          nonce: data.nonce,
          signature: {
            r: signature.slice(0, 66),
            s: `0x${signature.slice(66, 130)}`,
            v: Number.parseInt(signature.slice(130, 132), 16),
          },
        }),
      })
      const text = await response.text()
      let answer: { status?: string; response?: unknown } | undefined
      try {
        answer = JSON.parse(text) as { status?: string; response?: unknown }
      } catch {
        answer = undefined
      }
      if (!response.ok || answer?.status !== 'ok')
        throw new Error(`Hyperliquid refused the action (${response.status}): ${text.slice(0, 300)}`)
      return undefined
    },
  }
}

// ---- Tron ----

/** Options of {@link tronNodeWallet}. */
export interface TronNodeWalletOptions {
  /** Full-node HTTP API origin (e.g. `https://api.trongrid.io`); broadcasts go to `/wallet/broadcasttransaction`. */
  apiUrl: string
  /**
   * Signs the 32-byte `txID` (hex, no 0x) with the user's secp256k1 key and answers the 65-byte
   * signature r‖s‖v as hex (TronWeb's `trx.sign` or any secp256k1 signer).
   */
  signTransactionId(txID: string): Promise<string>
  fetch?: typeof fetch
}

/**
 * A {@link TronWallet}: checks that the item's `txID` is what it claims (sha256 of `raw_data_hex`,
 * WebCrypto), signs it, and broadcasts the node's JSON with the signature. Answers the txID.
 */
export function tronNodeWallet(options: TronNodeWalletOptions): TronWallet {
  const doFetch = options.fetch ?? globalThis.fetch
  const base = options.apiUrl.replace(/\/+$/, '')
  return {
    async signAndSendTransaction(data) {
      const { txID, raw_data_hex: rawHex } = data.transaction
      const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', hexToBytes(rawHex)))
      if (bytesToHex(digest) !== txID.toLowerCase())
        throw new Error(
          `the transaction's txID ${txID} is not the sha256 of its raw data; refusing to sign it`,
        )
      const signature = (await options.signTransactionId(txID)).replace(/^0x/, '')
      if (!/^[0-9a-fA-F]{130}$/.test(signature)) throw new TypeError('expected a 65-byte hex signature')
      const response = await doFetch(`${base}/wallet/broadcasttransaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...data.transaction, signature: [signature] }),
      })
      const answer = (await response.json()) as { result?: boolean; code?: string; message?: string }
      if (answer.result !== true && answer.code !== 'DUP_TRANSACTION_ERROR') {
        const reason =
          answer.message && /^[0-9a-fA-F]+$/.test(answer.message) ? hexToText(answer.message) : answer.message
        throw new Error(
          `the Tron node refused the transaction: ${answer.code ?? response.status} ${reason ?? ''}`.trim(),
        )
      }
      return txID.toLowerCase()
    },
  }
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const clean = hex.replace(/^0x/, '')
  if (clean.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(clean)) throw new TypeError('malformed hex')
  const bytes = new Uint8Array(new ArrayBuffer(clean.length / 2))
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(clean.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

function bytesToHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

function hexToText(hex: string): string {
  return new TextDecoder().decode(hexToBytes(hex))
}
