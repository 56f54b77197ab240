/** __TITLE__ reading: the deposits of a transaction, and balances, from the node. */
import type {
  DepositFact,
  IdentityCapability,
  ReadingCapability,
  TransactionFacts,
} from '@pontis/core/plugin'
import type { __PASCAL__ChainContext } from './context.js'

/** Reads one chain's transactions and balances. */
export function create__PASCAL__Reading(
  context: __PASCAL__ChainContext,
  identity: IdentityCapability,
): ReadingCapability {
  return {
    async readDeposits(transactionId: string): Promise<TransactionFacts<DepositFact>> {
      const id = identity.encodeTransactionId(transactionId)
      const found = await context.api.transaction(id)
      if (found === undefined) return { transactionId, state: 'not_found', final: false, facts: [] }
      return {
        transactionId,
        state: found.state,
        final: found.confirmations >= context.options.confirmations,
        confirmations: found.confirmations,
        blockNumber: BigInt(found.blockNumber),
        facts: found.deposits.map((deposit) => ({ ...deposit, amount: BigInt(deposit.amount) })),
      }
    },
    readBalance: (owner: string, currencyId: string) =>
      context.api.balance(identity.normalizeAddress(owner, 'user'), identity.normalizeCurrency(currencyId)),
  }
}
