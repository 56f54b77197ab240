/**
 * Tron quoting: the deposit is one transaction the user signs (a tagged TRX or TRC20 transfer to
 * the vault, built through the node API), and costs are bandwidth × `getTransactionFee` plus, for
 * TRC20, energy (estimated with `triggerconstantcontract`) × `getEnergyFee`, in sun. No free
 * bandwidth or staked energy is assumed: the estimate is what is burnt without them.
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
import { tronAddressBytes, tronBytes, tronEncodeRaw } from './codec.js'
import { TRON_NATIVE_CURRENCY_ID } from './config.js'
import { bandwidthBytes, feePrices, type TronChainContext, vaultOf } from './context.js'
import { buildTaggedTransfer, type TaggedTransfer, tagHex, trc20TransferData } from './transactions.js'

/** Raw data of the same shape and size as the transfer the node would build (for fee estimates). */
function representativeRawLength(context: TronChainContext, transfer: TaggedTransfer): number {
  const now = Date.now()
  const owner = tronAddressBytes(transfer.from) as Uint8Array
  const tag = tagHex('tag', transfer.tag)
  const native = transfer.currencyId === TRON_NATIVE_CURRENCY_ID
  return tronEncodeRaw({
    refBlockBytes: new Uint8Array(2).fill(0xff),
    refBlockHash: new Uint8Array(8).fill(0xff),
    expiration: now + context.options.expirationSeconds * 1000,
    data: native ? tronBytes(tag) : new Uint8Array(),
    contract: native
      ? {
          type: 'TransferContract',
          owner,
          to: tronAddressBytes(transfer.to) as Uint8Array,
          amount: transfer.amount,
        }
      : {
          type: 'TriggerSmartContract',
          owner,
          contractAddress: tronAddressBytes(transfer.currencyId) as Uint8Array,
          callValue: 0n,
          data: tronBytes(trc20TransferData(transfer.to, transfer.amount, tag)),
        },
    timestamp: now,
    feeLimit: native ? 0n : BigInt(context.options.feeLimitSun),
  }).length
}

/** Energy a TRC20 transfer takes, from the node's dry run; the configured default when it cannot tell. */
async function transferEnergy(context: TronChainContext, transfer: TaggedTransfer): Promise<bigint> {
  const data = trc20TransferData(transfer.to, transfer.amount, tagHex('tag', transfer.tag))
  const answer = await context.api.call<{ energy_used?: number; result?: { result?: boolean } }>(
    'triggerconstantcontract',
    {
      owner_address: transfer.from,
      contract_address: transfer.currencyId,
      function_selector: 'transfer(address,uint256)',
      parameter: data.slice(8),
      visible: true,
    },
  )
  return answer.result?.result === true && typeof answer.energy_used === 'number' && answer.energy_used > 0
    ? BigInt(answer.energy_used)
    : BigInt(context.options.defaultTransferEnergy)
}

/** What a tagged transfer burns: bandwidth and, for TRC20, energy, in sun. */
export async function estimateTransferCost(
  context: TronChainContext,
  transfer: TaggedTransfer,
): Promise<CostEstimate> {
  const prices = await feePrices(context)
  const bytes = bandwidthBytes(representativeRawLength(context, transfer))
  const energy =
    transfer.currencyId === TRON_NATIVE_CURRENCY_ID ? 0n : await transferEnergy(context, transfer)
  return {
    currencyId: TRON_NATIVE_CURRENCY_ID,
    amount: bytes * prices.transactionFee + energy * prices.energyFee,
  }
}

/** Refuses what a Tron fill cannot carry: destination calls and gas top-ups. */
export function refuseFillExtras(
  context: TronChainContext,
  request: Pick<FillCostRequest, 'calls' | 'topupNativeAmount'>,
): void {
  if (request.calls.length > 0) {
    throw new PontisError(
      'EXTRA_TXS_NOT_SUPPORTED',
      `${context.label.displayName} fills run no destination calls.`,
    )
  }
  if (request.topupNativeAmount > 0n) {
    throw new PontisError('UNSUPPORTED_ROUTE', `${context.label.displayName} fills carry no gas top-up.`)
  }
}

/** Quoting on a Tron chain. */
export function createTronQuoting(context: TronChainContext): QuotingCapability {
  const deposit = (request: {
    requestId: string
    depositor: string
    currencyId: string
    amount: bigint
  }) => ({
    from: request.depositor,
    to: vaultOf(context),
    currencyId: request.currencyId,
    amount: request.amount,
    tag: `0x${tagHex('request id', request.requestId)}` as const,
  })
  return {
    supportsDestinationCalls: false,
    supportsGasTopup: false,
    estimateOriginCost: (request: OriginCostRequest) => estimateTransferCost(context, deposit(request)),
    async estimateFillCost(request: FillCostRequest): Promise<CostEstimate> {
      refuseFillExtras(context, request)
      return estimateTransferCost(context, {
        from: request.payer,
        to: request.recipient,
        currencyId: request.currencyId,
        amount: request.amount > 0n ? request.amount : 1n,
        tag: `0x${tagHex('order id', request.orderId)}`,
      })
    },
    async buildDepositSteps(request: DepositStepsRequest): Promise<readonly PreparedStep[]> {
      if (request.usePermit) {
        throw new PontisError(
          'UNSUPPORTED_EXECUTION_TYPE',
          `${context.label.displayName} deposits take no signed authorization (usePermit).`,
        )
      }
      if (request.depositAddress !== undefined || request.originSwap !== undefined) {
        throw new PontisError(
          'UNSUPPORTED_ROUTE',
          `${context.label.displayName} deposits are direct transfers to the vault.`,
        )
      }
      const transaction = await buildTaggedTransfer(context, deposit(request))
      return [
        {
          id: 'deposit',
          kind: 'transaction',
          action: 'Confirm transaction in your wallet',
          description:
            request.currencyId === TRON_NATIVE_CURRENCY_ID
              ? 'Send TRX to the depository, tagged with the request id'
              : 'Transfer the token to the depository, tagged with the request id',
          items: [{ data: { format: 'tron-transaction', chainId: context.label.id, transaction } }],
        },
      ]
    },
    supportsPermit: async () => false,
  }
}
