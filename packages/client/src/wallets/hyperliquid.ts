/**
 * Hyperliquid: `hyperliquid-action` items. {@link hyperliquidWallet} signs the quoted send as a
 * Hyperliquid user-signed action with any EIP-712 signer and posts it to the exchange API.
 */
import type { HyperliquidActionData } from '@pontis/generated/intents'
import { type ChainIdsOption, formatAdapter, type WalletAdapter } from './adapter.js'
import type { VenueSigner } from './legacy.js'

/** EIP-712 typed data as viem's `signTypedData` takes it (its `message` member). */
export interface HyperliquidTypedData {
  domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` }
  types: Record<string, Array<{ name: string; type: string }>>
  primaryType: string
  message: Record<string, string | bigint>
}

/** Options of {@link hyperliquidWallet}. */
export interface HyperliquidWalletOptions extends ChainIdsOption {
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
 * A {@link WalletAdapter} for Hyperliquid (and the deprecated `venue` {@link VenueSigner}): claims
 * `hyperliquid-action` items, signs the send action as a user-signed action and posts
 * `{action, nonce, signature}` to the exchange endpoint with exactly the quoted nonce (the service
 * recognises the deposit by sender and nonce). Answers no transaction id: the service finds the
 * deposit by scanning the depository's ledger.
 */
export function hyperliquidWallet(
  options: HyperliquidWalletOptions,
): VenueSigner & WalletAdapter<HyperliquidActionData> {
  const doFetch = options.fetch ?? globalThis.fetch
  const exchangeUrl = `${options.apiUrl.replace(/\/+$/, '')}/exchange`
  const submit: VenueSigner['submit'] = async (data) => {
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
  }
  const adapter = formatAdapter<HyperliquidActionData>(
    'hyperliquid-action',
    'hyperliquid',
    options,
    async (data) => {
      await submit(data)
      return { chainId: data.chainId }
    },
  )
  return { submit, ...adapter }
}
