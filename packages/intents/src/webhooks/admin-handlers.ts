import { type IntentsApi, PontisError } from '@pontis/core'
import type { OperationHandler, RequestOf, ResponseOf } from '@pontis/http'
import { adminAuthorizer } from '../keys/index.js'
import type { WebhookDispatcher } from './dispatcher.js'

/** The admin API's dead-letter operations: list them, put one back in line. */
export function createWebhookAdminHandlers(options: {
  dispatcher: WebhookDispatcher
  adminToken: string | undefined
}): {
  listWebhookDeadLetters: OperationHandler<
    RequestOf<IntentsApi.ListWebhookDeadLettersData>,
    ResponseOf<IntentsApi.ListWebhookDeadLettersResponses>
  >
  redeliverWebhookEvent: OperationHandler<
    RequestOf<IntentsApi.RedeliverWebhookEventData>,
    ResponseOf<IntentsApi.RedeliverWebhookEventResponses>
  >
} {
  const authorize = adminAuthorizer(options.adminToken)
  return {
    listWebhookDeadLetters: async ({ headers }) => {
      authorize(headers)
      return { status: 200, body: { events: await options.dispatcher.deadLetters() } }
    },
    redeliverWebhookEvent: async ({ headers, path }) => {
      authorize(headers)
      if (!(await options.dispatcher.redeliver(path.eventId))) {
        throw new PontisError('ROUTE_NOT_FOUND', `No dead-lettered webhook event ${path.eventId}`)
      }
      const event = await options.dispatcher.event(path.eventId)
      return { status: 200, body: event as IntentsApi.WebhookEventState }
    },
  }
}
