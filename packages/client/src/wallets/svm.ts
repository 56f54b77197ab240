/**
 * SVM: `svm-transaction` items. The small {@link SvmWallet} interface, {@link svmWalletAdapter}
 * over any such wallet, and {@link svmKeypairWallet} over a keypair (WebCrypto Ed25519) and a
 * Solana JSON-RPC URL (plain fetch).
 */
import type { SvmTransactionData } from '@pontis/generated/intents'
import {
  adapterName,
  type ChainIdsOption,
  formatAdapter,
  type WalletAdapter,
  type WalletAdapterOptions,
} from './adapter.js'
import { base64ToBytes, bytesToBase64, sleep } from './shared.js'

/** What an SVM wallet must do; {@link svmWalletAdapter} turns one into a {@link WalletAdapter}. */
export interface SvmWallet {
  /** Signs the serialized versioned transaction (base64) as the user; answers the signed one, base64. */
  signTransaction(transaction: string, data: SvmTransactionData): Promise<string>
  /** Broadcasts a signed transaction (base64); answers its base58 signature once it is confirmed. */
  sendTransaction(signedTransaction: string, data: SvmTransactionData): Promise<string>
}

/** A {@link WalletAdapter} over an {@link SvmWallet}: claims `svm-transaction` items on `chainIds` (every chain by default). */
export function svmWalletAdapter(
  wallet: SvmWallet,
  options: WalletAdapterOptions = {},
): WalletAdapter<SvmTransactionData> {
  return formatAdapter<SvmTransactionData>('svm-transaction', 'svm', options, async (data) => {
    const signed = await wallet.signTransaction(data.transaction, data)
    return { chainId: data.chainId, txHash: await wallet.sendTransaction(signed, data) }
  })
}

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
export interface SvmKeypairWalletOptions extends ChainIdsOption {
  fetch?: typeof fetch
  /** Commitment the transaction must reach before `sendTransaction` answers. Default `confirmed`. */
  commitment?: 'confirmed' | 'finalized'
  /** Interval between signature status look-ups. Default 250 ms. */
  pollIntervalMs?: number
  /** Longest wait for the commitment. Default 60 s. */
  timeoutMs?: number
}

/**
 * An {@link SvmWallet} and {@link WalletAdapter} over a keypair (or any {@link SvmSigner}) and a
 * Solana JSON-RPC URL, with plain fetch: `sendTransaction` (base64) then `getSignatureStatuses`
 * until the commitment is reached. Serves every SVM chain unless `chainIds` says which.
 */
export function svmKeypairWallet(
  signer: SvmKeypairLike | SvmSigner,
  rpcUrl: string,
  options: SvmKeypairWalletOptions = {},
): SvmWallet & WalletAdapter<SvmTransactionData> {
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
  const wallet: SvmWallet = {
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
  return {
    ...wallet,
    ...svmWalletAdapter(wallet, {
      name: adapterName('svm keypair wallet', options.chainIds),
      chainIds: options.chainIds,
    }),
  }
}
