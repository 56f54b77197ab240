/**
 * The status stream (`/intents/ws` on the page's host, the document's `x-websocket`): one socket,
 * one subscription per request the page follows, reconnecting with backoff when the socket drops.
 */
import type { StatusRecordV3 } from '@pontis/generated/intents/types'

export type StatusUpdate = Pick<StatusRecordV3, 'status' | 'updatedAt'> & { readonly requestId: string }

export interface StatusStream {
  /** Follows exactly these requests from now on (subscribes the new ones, unsubscribes the rest). */
  follow(requestIds: readonly string[]): void
  close(): void
}

const FINAL = new Set(['success', 'failure', 'refund', 'fallback'])

/** True when a request's status will not change any more. */
export function isFinalStatus(status: string): boolean {
  return FINAL.has(status)
}

/** Opens the stream; `onUpdate` gets every status update, `onState` whether the socket is open. */
export function openStatusStream(
  onUpdate: (update: StatusUpdate) => void,
  onState: (connected: boolean) => void,
): StatusStream {
  const wanted = new Set<string>()
  const subscribed = new Set<string>()
  let socket: WebSocket | undefined
  let closed = false
  let retryMs = 500
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/intents/ws`

  const sendMessage = (type: 'subscribe' | 'unsubscribe', id: string) =>
    socket?.send(JSON.stringify({ type, event: 'request.status.updated', filters: { id } }))

  const sync = () => {
    if (socket?.readyState !== WebSocket.OPEN) return
    for (const id of wanted)
      if (!subscribed.has(id)) {
        sendMessage('subscribe', id)
        subscribed.add(id)
      }
    for (const id of subscribed)
      if (!wanted.has(id)) {
        sendMessage('unsubscribe', id)
        subscribed.delete(id)
      }
  }

  const connect = () => {
    socket = new WebSocket(url)
    socket.addEventListener('open', () => {
      retryMs = 500
      onState(true)
      sync()
    })
    socket.addEventListener('message', (message) => {
      let data: unknown
      try {
        data = JSON.parse(String(message.data))
      } catch {
        return
      }
      const update = data as {
        event?: string
        data?: { requestId?: string; status?: string; updatedAt?: number }
      }
      if (update.event !== 'request.status.updated' || !update.data?.requestId || !update.data.status) return
      onUpdate({
        requestId: update.data.requestId,
        status: update.data.status as StatusUpdate['status'],
        updatedAt: update.data.updatedAt ?? Date.now(),
      })
    })
    socket.addEventListener('close', () => {
      subscribed.clear()
      onState(false)
      if (closed) return
      setTimeout(connect, retryMs)
      retryMs = Math.min(retryMs * 2, 10_000)
    })
  }
  connect()

  return {
    follow(requestIds) {
      wanted.clear()
      for (const id of requestIds) wanted.add(id.toLowerCase())
      sync()
    },
    close() {
      closed = true
      socket?.close()
    },
  }
}
