import type { IntentsApi } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { adminAuthorizer } from '../keys/index.js'
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
