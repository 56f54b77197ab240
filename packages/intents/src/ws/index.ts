/** The websocket status stream (`x-websocket` of openapi/intents.yaml). */
export { attachStatusStream, type StatusStream, type StatusStreamOptions } from './status-stream.js'
