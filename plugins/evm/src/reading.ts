import type { DepositFact, FinalityPolicy, ReadingCapability, TransactionFacts } from '@pontis/core'
import {
  type Address,
  decodeEventLog,
  type Hex,
  isAddressEqual,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from 'viem'
import { depositoryAbi, erc20Abi } from './abi.js'
import { type EvmChainContext, readAllowance } from './quoting.js'
import { rpc } from './rpc.js'

const isNative = (context: EvmChainContext, currency: string) => currency === context.nativeCurrencyId

async function confirmationsOf(context: EvmChainContext, blockNumber: bigint, finality: FinalityPolicy) {
  const [latest, finalized] = await rpc(context.label, () =>
    Promise.all([
      context.client.getBlockNumber({ cacheTime: 1000 }),
      finality.slowRequiresFinalized
        ? context.client.getBlock({ blockTag: 'finalized' }).then((block) => block.number)
        : Promise.resolve(undefined),
    ]),
  )
  const confirmations = Number(latest - blockNumber + 1n)
  const final =
    confirmations >= finality.slowConfirmations &&
    (finalized === undefined || (finalized !== null && finalized >= blockNumber))
  return { confirmations, final }
}

export function createEvmReading(context: EvmChainContext, finality: FinalityPolicy): ReadingCapability {
  return {
    async readDeposits(transactionId: string): Promise<TransactionFacts<DepositFact>> {
      const hash = transactionId as Hex
      const receipt = await rpc(context.label, () => context.client.getTransactionReceipt({ hash })).catch(
        (error: unknown) => {
          if (error instanceof TransactionReceiptNotFoundError) return undefined
          throw error
        },
      )
      if (!receipt) {
        const pending = await rpc(context.label, () => context.client.getTransaction({ hash })).catch(
          (error: unknown) => {
            if (error instanceof TransactionNotFoundError) return undefined
            throw error
          },
        )
        return { transactionId, state: pending ? 'pending' : 'not_found', final: false, facts: [] }
      }
      const { confirmations, final } = await confirmationsOf(context, receipt.blockNumber, finality)
      const facts: DepositFact[] = []
      for (const log of receipt.logs) {
        if (!context.depository || !isAddressEqual(log.address, context.depository)) continue
        try {
          const event = decodeEventLog({ abi: depositoryAbi, data: log.data, topics: log.topics })
          if (event.eventName === 'RelayNativeDeposit') {
            facts.push({
              index: log.logIndex,
              depository: context.depository,
              depositId: event.args.id,
              depositor: event.args.from,
              currencyId: context.nativeCurrencyId,
              amount: event.args.amount,
            })
          } else if (event.eventName === 'RelayErc20Deposit') {
            facts.push({
              index: log.logIndex,
              depository: context.depository,
              depositId: event.args.id,
              depositor: event.args.from,
              currencyId: event.args.token,
              amount: event.args.amount,
            })
          }
        } catch {
          // Another event of the depository: not a deposit.
        }
      }
      return {
        transactionId,
        state: receipt.status === 'success' ? 'success' : 'reverted',
        final,
        confirmations,
        blockNumber: receipt.blockNumber,
        facts,
      }
    },

    readBalance(owner: string, currencyId: string): Promise<bigint> {
      return context.cache.read(`balance:${currencyId}:${owner}`, () =>
        rpc(context.label, () =>
          isNative(context, currencyId)
            ? context.client.getBalance({ address: owner as Address })
            : context.client.readContract({
                address: currencyId as Address,
                abi: erc20Abi,
                functionName: 'balanceOf',
                args: [owner as Address],
              }),
        ),
      )
    },

    readAllowance: (owner, spender, currencyId) =>
      isNative(context, currencyId)
        ? Promise.resolve((1n << 256n) - 1n)
        : readAllowance(context, owner, spender, currencyId),
  }
}
