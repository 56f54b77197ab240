/** Request status change notifications, across processes through PostgreSQL LISTEN/NOTIFY. */
export {
  notifyStatus,
  STATUS_CHANNEL,
  type StatusCallback,
  StatusEvents,
  type StatusEventsOptions,
} from './status-events.js'
