/**
 * Quoting on the venue. As origin (a withdrawal from the exchange) the user signs one transfer
 * from their account to the depository account, tagged with the request id in its memo; as
 * destination (a deposit to the exchange) the solver transfers to the recipient's account. Both
 * cost the venue's transfer fee, in USDC (the native currency).
 */
import {
  type CostEstimate,
  type DepositStepsRequest,
  type FillCostRequest,
  type OriginCostRequest,
  PontisError,
  type PreparedStep,
  type QuotingCapability,
} from '@pontis/core/plugin'
import { LIGHTER_NATIVE_CURRENCY_ID, LIGHTER_TRANSFER_FORMAT } from './config.js'
import { assetOf, depositoryOf, existingAccount, type LighterChainContext, transferFee } from './context.js'
import { parseAccountIndex } from './identity.js'

const MEMO = /^0x[0-9a-fA-F]{64}$/

/** The 32-byte tag (request, order or refund id) as a memo, lower-case 0x-hex. */
export function memoOf(id: string, what: string): `0x${string}` {
  if (!MEMO.test(id)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `${what} '${id.slice(0, 100)}' must be 32 bytes, 0x-hex, to be a transfer memo`,
    )
  }
  return id.toLowerCase() as `0x${string}`
}

/** An amount as the JSON number the venue takes. @throws PontisError INVALID_REQUEST when it does not fit. */
export function transferAmount(amount: bigint): number {
  if (amount <= 0n || amount > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new PontisError(
      'INVALID_REQUEST',
      `transfer amount ${amount} must be between 1 and ${Number.MAX_SAFE_INTEGER}`,
    )
  }
  return Number(amount)
}

function fee(amount: bigint): CostEstimate {
  return { currencyId: LIGHTER_NATIVE_CURRENCY_ID, amount }
}

/** The quoting capability. */
export function createLighterQuoting(context: LighterChainContext): QuotingCapability {
  const label = context.label
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: false,

    async estimateOriginCost(request: OriginCostRequest): Promise<CostEstimate> {
      const user = String(parseAccountIndex(request.depositor, 'user', label))
      assetOf(context, request.currencyId)
      await existingAccount(context, user, 'user')
      return fee(await transferFee(context, user))
    },

    async estimateFillCost(request: FillCostRequest): Promise<CostEstimate> {
      const recipient = String(parseAccountIndex(request.recipient, 'recipient', label))
      if (request.calls.length > 0) {
        throw new PontisError('EXTRA_TXS_NOT_SUPPORTED', `${label.displayName} fills cannot run calls.`)
      }
      assetOf(context, request.currencyId)
      await existingAccount(context, recipient, 'recipient')
      return fee(await transferFee(context, depositoryOf(context)))
    },

    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      if (request.usePermit) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${label.displayName} deposits are transfers, not permits.`,
        )
      }
      if (request.depositAddress !== undefined || request.originSwap !== undefined) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${label.displayName} has no deposit addresses and no origin swaps: the user transfers to the depository account.`,
        )
      }
      const user = String(parseAccountIndex(request.depositor, 'user', label))
      const asset = assetOf(context, request.currencyId)
      const depository = depositoryOf(context)
      const memo = memoOf(request.requestId, 'request id')
      const amount = transferAmount(request.amount)
      await existingAccount(context, user, 'user')
      const usdcFee = await transferFee(context, user)
      return [
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transfer on the exchange',
          description: `Transfer the funds from exchange account ${user} to the depository account ${depository}, tagged with the request id`,
          items: [
            {
              data: {
                format: LIGHTER_TRANSFER_FORMAT,
                chainId: label.id,
                action: {
                  type: 'transfer',
                  parameters: {
                    toAccountIndex: Number(depository),
                    assetIndex: asset.assetIndex,
                    fromRouteType: asset.routeType,
                    toRouteType: asset.routeType,
                    amount,
                    usdcFee: Number(usdcFee),
                    memo,
                  },
                },
              },
            },
          ],
        },
      ]
    },

    async supportsPermit(): Promise<boolean> {
      return false
    },
  }
}
