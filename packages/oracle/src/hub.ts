/**
 * What the oracle's executions do on the hub, and the hub reads withdrawal attestations need.
 *
 * The hub's oracle contract (packages/devnet/contracts/PontisOracleHub.sol) keeps balances per
 * account and asset. An account is `keccak256(abi.encode(string chainId, bytes owner))` and an
 * asset `keccak256(abi.encode(string chainId, bytes currency))`, chains named by protocol chain id
 * and owners/currencies in their chain's byte encoding. Each action is
 * `abi.encode(uint8 kind, bytes32 from, bytes32 to, bytes32 asset, uint256 amount)`.
 */
import { type HubConfig, keccak256Hex, PontisError } from '@pontis/core'
import {
  type Address,
  createPublicClient,
  decodeAbiParameters,
  encodeAbiParameters,
  getAddress,
  type Hex,
  http,
  parseAbi,
  slice,
  stringToHex,
} from 'viem'
import { abiEncode, encodeStaticWords } from './abi.js'

/** Action kinds of the hub contract. */
export const HUB_ACTION = {
  /** `to += amount` (a deposit arrived). */
  CREDIT: 0,
  /** `from -= amount; to += amount`. */
  TRANSFER: 1,
  /** A transfer that also remembers `from` as where `to`'s funds return on RELEASE. */
  LOCK: 2,
  /** Moves `amount` from `from` back to the account it was locked from (an expired withdrawal). */
  RELEASE: 3,
  /** `from -= amount` (funds left a depository). */
  BURN: 4,
} as const

export type HubActionKind = (typeof HUB_ACTION)[keyof typeof HUB_ACTION]

const ZERO32: Hex = `0x${'00'.repeat(32)}`

export interface HubAction {
  readonly kind: HubActionKind
  readonly from?: Hex
  readonly to?: Hex
  readonly asset: Hex
  readonly amount: bigint
}

const ACTION_PARAMETERS = [
  { name: 'kind', type: 'uint8' },
  { name: 'from', type: 'bytes32' },
  { name: 'to', type: 'bytes32' },
  { name: 'asset', type: 'bytes32' },
  { name: 'amount', type: 'uint256' },
] as const

/** `abi.encode(uint8 kind, bytes32 from, bytes32 to, bytes32 asset, uint256 amount)`: one entry of `actions`. */
export function encodeHubAction(action: HubAction): Hex {
  const values = [
    action.kind,
    action.from ?? ZERO32,
    action.to ?? ZERO32,
    action.asset,
    action.amount,
  ] as const
  return encodeStaticWords(ACTION_PARAMETERS, values) ?? encodeAbiParameters(ACTION_PARAMETERS, values)
}

/**
 * The inverse of {@link encodeHubAction} (zero keys where unused).
 * @throws Error when the bytes are not such an encoding or the kind is unknown.
 */
export function decodeHubAction(encoded: Hex): HubAction {
  const [kind, from, to, asset, amount] = decodeAbiParameters(ACTION_PARAMETERS, encoded)
  if (!Object.values(HUB_ACTION).some((known) => known === kind))
    throw new Error(`unknown hub action kind ${kind}`)
  return { kind: kind as HubActionKind, from, to, asset, amount }
}

/** The hub account of `owner` (bytes) on the chain named `chainId`. */
export function hubAccountKey(chainId: string, owner: Hex): Hex {
  return keccak256Hex(
    abiEncode([
      { type: 'string', value: chainId },
      { type: 'bytes', value: owner },
    ]),
  )
}

/** The hub asset of `currency` (bytes) on the chain named `chainId`. */
export function hubAssetKey(chainId: string, currency: Hex): Hex {
  return keccak256Hex(
    abiEncode([
      { type: 'string', value: chainId },
      { type: 'bytes', value: currency },
    ]),
  )
}

/**
 * The hub address a withdrawal request's funds wait at: the low 20 bytes of
 * `keccak256("pontis.withdrawal" || requestHash)`. Deterministic, so a retried initiation moves
 * nothing twice (the execution's idempotency key is the request hash too).
 */
export function withdrawalAddressOf(withdrawalRequestHash: Hex): Address {
  const digest = keccak256Hex(`${stringToHex('pontis.withdrawal')}${withdrawalRequestHash.slice(2)}` as Hex)
  return getAddress(slice(digest, 12))
}

/** An idempotency key derived from a fact's kind and parts, so the same fact yields the same key. */
export function idempotencyKey(kind: string, ...parts: readonly (string | Hex)[]): Hex {
  return keccak256Hex(
    abiEncode([
      { type: 'string', value: kind },
      { type: 'string[]', value: parts.map((part) => part.toLowerCase()) },
    ]),
  )
}

/** Hub state the withdrawal attestations read. */
export interface HubReader {
  balanceOf(account: Hex, asset: Hex): Promise<bigint>
}

const HUB_ABI = parseAbi(['function balanceOf(bytes32 account, bytes32 asset) view returns (uint256)'])

/**
 * Reads the hub's oracle contract over JSON-RPC, at the `finalized` state when `finalized` is set
 * (a withdrawal must not be paid out on a balance a reorg can take back).
 */
export function createHubReader(hub: HubConfig, rpcUrl: string | undefined, finalized: boolean): HubReader {
  if (rpcUrl === undefined) {
    return {
      balanceOf: () =>
        Promise.reject(
          new PontisError(
            'NOT_IMPLEMENTED',
            `The hub chain ${hub.chainId} is not among this environment's chains, so hub balances cannot be read.`,
          ),
        ),
    }
  }
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1 }) })
  return {
    async balanceOf(account, asset) {
      try {
        return await client.readContract({
          address: hub.oracleContract,
          abi: HUB_ABI,
          functionName: 'balanceOf',
          args: [account, asset],
          ...(finalized ? { blockTag: 'finalized' as const } : {}),
        })
      } catch (error) {
        throw new PontisError(
          'RPC_HTTP_ERROR',
          `Reading the hub's oracle contract on chain ${hub.chainId} failed; retry later.`,
          undefined,
          { cause: error },
        )
      }
    },
  }
}
