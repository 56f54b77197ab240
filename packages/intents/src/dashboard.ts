/**
 * `GET /dashboard` and its assets (issue 25): the page of @pontis/dashboard, bundled in memory the
 * first time it is asked for (so `npm start` builds it, and no step of its own is needed).
 */
import type { IntentsApi } from '@pontis/core'
import { DASHBOARD_ASSETS, DASHBOARD_HEADERS, dashboardBundle, dashboardPage } from '@pontis/dashboard'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'

type Handler<Data, Responses> = OperationHandler<RequestOf<Data>, ResponseOf<Responses>>

export function createDashboardHandlers(): {
  getDashboard: Handler<IntentsApi.GetDashboardData, IntentsApi.GetDashboardResponses>
  // The generated type of a text/javascript or text/css answer is a Blob; the answer is the text.
  getDashboardAsset: OperationHandler<RequestOf<IntentsApi.GetDashboardAssetData>>
} {
  const page = dashboardPage()
  return {
    getDashboard: () => {
      // Start bundling now, so the assets the page asks for next are (nearly) ready.
      void dashboardBundle().catch(() => {})
      return { status: 200, type: 'text/html; charset=utf-8', headers: DASHBOARD_HEADERS, body: page }
    },
    getDashboardAsset: async ({ path }) => {
      const bundle = await dashboardBundle()
      return {
        status: 200,
        type: DASHBOARD_ASSETS[path.file],
        headers: { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
        body: bundle[path.file],
      }
    },
  }
}
