import type { IntentsApi } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { adminAuthorizer } from '../keys/index.js'
import type { Rebalancer } from './rebalance.js'
import type { BooksLine, Repayments } from './repayment.js'

type SummaryHandler = OperationHandler<
  RequestOf<IntentsApi.GetSolverRepaymentsData>,
  ResponseOf<IntentsApi.GetSolverRepaymentsResponses>
>

/** A line of the operator's view with its amounts as decimal strings. */
function lineBody(line: BooksLine<string>): IntentsApi.SolverBooksLine {
  return {
    chainId: line.chainId,
    currency: line.currency,
    state: line.state as IntentsApi.SolverBooksLine['state'],
    count: line.count,
    amount: line.amount.toString(),
    ...(line.fee !== undefined ? { fee: line.fee.toString() } : {}),
  }
}

/** `GET /admin/repayments`: where the solver's repayments and deposit-address sweeps stand. */
export function createRepaymentAdminHandlers(options: {
  repayments: Repayments
  adminToken: string | undefined
}): { getSolverRepayments: SummaryHandler } {
  const authorize = adminAuthorizer(options.adminToken)
  return {
    getSolverRepayments: async ({ headers }) => {
      authorize(headers)
      const summary = await options.repayments.summary()
      return {
        status: 200,
        body: { repayments: summary.repayments.map(lineBody), sweeps: summary.sweeps.map(lineBody) },
      }
    },
  }
}

type RebalancesHandler = OperationHandler<
  RequestOf<IntentsApi.GetSolverRebalancesData>,
  ResponseOf<IntentsApi.GetSolverRebalancesResponses>
>

/** `GET /admin/rebalances`: the rebalancing bands as the last pass found them, and the moves. */
export function createRebalanceAdminHandlers(options: {
  rebalancer: Rebalancer
  adminToken: string | undefined
}): { getSolverRebalances: RebalancesHandler } {
  const authorize = adminAuthorizer(options.adminToken)
  return {
    getSolverRebalances: async ({ headers }) => {
      authorize(headers)
      const moves = await options.rebalancer.moves()
      return {
        status: 200,
        body: {
          bands: options.rebalancer.bands().map((band) => ({
            chainId: band.chainId,
            currency: band.currency,
            symbol: band.symbol,
            balance: band.balance === null ? null : band.balance.toString(),
            minAmount: band.minAmount.toString(),
            targetAmount: band.targetAmount.toString(),
            maxAmount: band.maxAmount.toString(),
            budget: band.budget.toString(),
            budgetUsed: band.budgetUsed.toString(),
            periodSeconds: band.periodSeconds,
            status: band.status,
            checkedAt: band.checkedAt,
          })),
          moves: moves.map((move) => ({
            id: move.id,
            fromChainId: move.fromChainId,
            fromCurrency: move.fromCurrency,
            toChainId: move.toChainId,
            toCurrency: move.toCurrency,
            amount: move.amount.toString(),
            fromBalance: move.fromBalance.toString(),
            toBalance: move.toBalance.toString(),
            state: move.state,
            requestId: move.requestId,
            reason: move.reason,
            received: move.received === null ? null : move.received.toString(),
            inTxHashes: [...move.inTxHashes],
            outTxHashes: [...move.outTxHashes],
            createdAt: move.createdAt,
          })),
          execution: options.rebalancer.execution,
        },
      }
    },
  }
}
