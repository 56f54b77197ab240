/** The admin API's view of the solver's liquidity (`getSolverInventory`). */
import type { IntentsApi } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { adminAuthorizer } from '../keys/index.js'
import type { LiquidityBook } from './inventory.js'

export function createInventoryHandlers(options: {
  readonly liquidity: LiquidityBook
  readonly adminToken: string | undefined
}): {
  getSolverInventory: OperationHandler<
    RequestOf<IntentsApi.GetSolverInventoryData>,
    ResponseOf<IntentsApi.GetSolverInventoryResponses>
  >
} {
  const authorize = adminAuthorizer(options.adminToken)
  return {
    getSolverInventory: async ({ headers }) => {
      authorize(headers)
      const positions = await options.liquidity.positions()
      return {
        status: 200,
        body: {
          positions: positions.map((position) => ({
            chainId: position.chainId,
            currency: position.currency,
            balance: position.balance.toString(),
            committed: position.committed.toString(),
            available: position.available.toString(),
            readAt: position.readAt,
          })),
        },
      }
    },
  }
}
