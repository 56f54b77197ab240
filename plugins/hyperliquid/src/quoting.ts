/**
 * Hyperliquid quoting. A deposit is one user-signed send to the depository: `usdSend` for perps
 * USDC, `spotSend` for a spot token, signed with the nonce `depositNonceTag` handed out (the
 * action's `time`), so the deposit is recognised by its sender and nonce. Sends cost no gas: every
 * estimate is 0 in the native currency. No permits, no destination calls, no gas top-ups, no
 * per-request deposit addresses.
 */
import {
  type CostEstimate,
  type DepositNonceTag,
  type DepositStepsRequest,
  formatUnits,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
} from '@pontis/core/plugin'
import { type HyperliquidSend, hyperliquidDepositTag } from './actions.js'
import { HYPERLIQUID_NATIVE_CURRENCY_ID } from './config.js'
import { assetOf, depositoryOf, type HyperliquidAsset, type HyperliquidChainContext } from './context.js'
import { requireAddress, requireCurrency } from './identity.js'

/** The chain id of Hyperliquid core in quote steps. */
export const HYPERLIQUID_CHAIN_ID = 1337

/** The send moving `amount` of `asset` to `destination`, signed with `nonce` as its time. */
export function buildSend(
  context: HyperliquidChainContext,
  asset: HyperliquidAsset,
  destination: string,
  amount: bigint,
  nonce: bigint,
): HyperliquidSend {
  if (amount <= 0n) {
    throw new PontisError(
      'AMOUNT_TOO_LOW',
      `A Hyperliquid send must move a positive amount, got ${amount}.`,
      {
        amount: amount.toString(),
      },
    )
  }
  if (nonce <= 0n || nonce > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new PontisError('INVALID_REQUEST', `Nonce ${nonce} is not a millisecond timestamp.`)
  }
  const common = {
    hyperliquidChain: context.hyperliquidChain,
    signatureChainId: context.signatureChainId,
    destination,
    amount: formatUnits(amount, asset.decimals),
    time: Number(nonce),
  }
  return asset.kind === 'perps'
    ? { type: 'usdSend', ...common }
    : {
        type: 'spotSend',
        hyperliquidChain: common.hyperliquidChain,
        signatureChainId: common.signatureChainId,
        destination,
        token: asset.token,
        amount: common.amount,
        time: common.time,
      }
}

export function createHyperliquidQuoting(context: HyperliquidChainContext): QuotingCapability {
  const free = async (): Promise<CostEstimate> => ({ currencyId: HYPERLIQUID_NATIVE_CURRENCY_ID, amount: 0n })
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: false,
    estimateOriginCost: free,
    estimateFillCost: free,
    supportsPermit: async () => false,

    depositNonceTag(depositor: string, nowMs: number): DepositNonceTag {
      const sender = requireAddress(depositor, 'depositor', context.label)
      const nonce = context.depositNonces.next(Math.ceil(nowMs))
      return { nonce, tag: hyperliquidDepositTag(sender, nonce) }
    },

    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      if (request.depositNonce === undefined) {
        throw new PontisError(
          'INVALID_REQUEST',
          `${context.label.displayName} deposits are tagged by nonce: depositNonce (from depositNonceTag) is required.`,
        )
      }
      if (request.usePermit) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${context.label.displayName} has no signed transfer authorizations (usePermit).`,
        )
      }
      if (request.depositAddress !== undefined || request.originSwap !== undefined) {
        throw new PontisError(
          'UNSUPPORTED_ROUTE',
          `${context.label.displayName} deposits are plain sends to the depository (no deposit addresses, no origin swaps).`,
        )
      }
      requireAddress(request.depositor, 'depositor', context.label)
      const asset = await assetOf(context, requireCurrency(request.currencyId, 'input', context.label))
      const action = buildSend(context, asset, depositoryOf(context), request.amount, request.depositNonce)
      return [
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transfer on Hyperliquid',
          description: `Send ${action.amount} ${asset.kind === 'perps' ? 'USDC (perps)' : asset.name} to the depository on Hyperliquid`,
          items: [
            { data: { format: 'hyperliquid-action', chainId: context.label.id, action, nonce: action.time } },
          ],
        },
      ]
    },
  }
}
