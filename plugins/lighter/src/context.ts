/**
 * What every Lighter capability shares for one chain: the API client, the read cache, the
 * depository account and the settings, with the reads several capabilities make.
 */
import { type ChainLabel, invalidAddressError, PontisError, type ReadCache } from '@pontis/core/plugin'
import { isRefusal, type LighterApiAccount, type LighterApiClient } from './api.js'
import type { LighterAssetConfig } from './config.js'

export interface LighterChainContext {
  readonly label: ChainLabel
  readonly api: LighterApiClient
  readonly cache: ReadCache
  /** The depository (solver) account index; undefined when none is configured. */
  readonly depository: string | undefined
  /** Currency id → venue asset. */
  readonly assets: ReadonlyMap<string, LighterAssetConfig>
  readonly solverApiKeyIndex: number
  readonly confirmations: number
  readonly transferExpirySeconds: number
  /** Transactions read per deposit scan step. */
  readonly scanPageSize: number
}

/** The depository account index, or a clear error when the chain has none configured. */
export function depositoryOf(context: LighterChainContext): string {
  if (context.depository === undefined) {
    throw new PontisError(
      'UNSUPPORTED_CHAIN',
      `${context.label.displayName} (${context.label.id}) has no depository account configured (protocol.v2.depository).`,
      { chainId: context.label.id },
    )
  }
  return context.depository
}

/** The venue asset of a (normalized) currency id. */
export function assetOf(context: LighterChainContext, currencyId: string): LighterAssetConfig {
  const asset = context.assets.get(currencyId)
  if (!asset) throw new PontisError('UNSUPPORTED_CURRENCY', `currency '${currencyId}' is not configured`)
  return asset
}

/** The currency id configured for a venue asset index, or undefined. */
export function currencyOfAsset(context: LighterChainContext, assetIndex: number): string | undefined {
  for (const [currencyId, asset] of context.assets) if (asset.assetIndex === assetIndex) return currencyId
  return undefined
}

/**
 * The account `index` as the venue shows it.
 * @throws PontisError INVALID_RECIPIENT (role `recipient`) or INVALID_ADDRESS when it does not exist.
 */
export async function existingAccount(
  context: LighterChainContext,
  index: string,
  role: 'user' | 'recipient',
): Promise<LighterApiAccount> {
  const account = await context.api.account(index)
  if (isRefusal(account)) {
    throw invalidAddressError(
      role,
      index,
      `no exchange account has this index (${account.message}); look the account index up by the L1 wallet address with GET /api/v1/accountsByL1Address?l1_address=0x…`,
      context.label,
    )
  }
  return account
}

/** The transfer fee (USDC smallest unit) for transfers out of `index`, cached for the read-cache time. */
export function transferFee(
  context: LighterChainContext,
  index: string,
  role: 'user' | 'recipient' = 'user',
): Promise<bigint> {
  return context.cache.read(`fee:${index}`, async () => {
    const fee = await context.api.transferFee(index)
    if (isRefusal(fee)) {
      throw invalidAddressError(role, index, `the exchange refused it: ${fee.message}`, context.label)
    }
    return fee
  })
}
