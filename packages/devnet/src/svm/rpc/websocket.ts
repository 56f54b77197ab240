/**
 * A minimal server-side WebSocket (RFC 6455) for the RPC's subscriptions: the upgrade handshake,
 * masked client frames (text, fragmented or not), ping/pong and close. No extensions, no binary
 * messages. Enough for @solana/web3.js, whose `confirmTransaction` waits on `signatureSubscribe`.
 */
import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'
const MAX_MESSAGE_BYTES = 1 << 20
const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const

/** An open WebSocket connection. */
export interface WebSocketConnection {
  /** Sends a text message (dropped once the connection is closing). */
  send(text: string): void
  /** Closes the connection (close frame, then end of the socket). */
  close(code?: number): void
}

/**
 * Completes the upgrade of `request` and returns the connection, or undefined (the socket is then
 * answered with 400 and destroyed) when the request is no WebSocket upgrade.
 */
export function acceptWebSocket(
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  handlers: { onMessage(text: string): void; onClose(): void },
): WebSocketConnection | undefined {
  const key = request.headers['sec-websocket-key']
  if (typeof key !== 'string' || request.headers.upgrade?.toLowerCase() !== 'websocket') {
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
    return undefined
  }
  const accept = createHash('sha1').update(`${key}${HANDSHAKE_GUID}`).digest('base64')
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  )

  let buffered: Buffer = head.length > 0 ? Buffer.from(head) : Buffer.alloc(0)
  let fragments: Buffer[] | undefined
  let closing = false
  let closed = false

  const writeFrame = (opcode: number, payload: Buffer): void => {
    if (socket.destroyed || !socket.writable) return
    let header: Buffer
    if (payload.length < 126) header = Buffer.from([0x80 | opcode, payload.length])
    else if (payload.length < 65536) {
      header = Buffer.alloc(4)
      header[0] = 0x80 | opcode
      header[1] = 126
      header.writeUInt16BE(payload.length, 2)
    } else {
      header = Buffer.alloc(10)
      header[0] = 0x80 | opcode
      header[1] = 127
      header.writeBigUInt64BE(BigInt(payload.length), 2)
    }
    socket.write(Buffer.concat([header, payload]))
  }

  const close = (code = 1000): void => {
    if (closing) return
    closing = true
    const payload = Buffer.alloc(2)
    payload.writeUInt16BE(code, 0)
    writeFrame(OPCODE.close, payload)
    socket.end()
  }

  const finish = (): void => {
    if (closed) return
    closed = true
    closing = true
    handlers.onClose()
  }

  /** Consumes complete frames from `buffered`; false when the connection must stop reading. */
  const drain = (): boolean => {
    for (;;) {
      if (buffered.length < 2) return true
      const first = buffered[0] as number
      const second = buffered[1] as number
      const fin = (first & 0x80) !== 0
      const opcode = first & 0x0f
      let length = second & 0x7f
      let offset = 2
      if (length === 126) {
        if (buffered.length < 4) return true
        length = buffered.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (buffered.length < 10) return true
        const wide = buffered.readBigUInt64BE(2)
        if (wide > BigInt(MAX_MESSAGE_BYTES)) {
          close(1009)
          return false
        }
        length = Number(wide)
        offset = 10
      }
      // Clients must mask every frame (RFC 6455 5.1).
      if ((second & 0x80) === 0) {
        close(1002)
        return false
      }
      if (length > MAX_MESSAGE_BYTES) {
        close(1009)
        return false
      }
      if (buffered.length < offset + 4 + length) return true
      const mask = buffered.subarray(offset, offset + 4)
      const payload = Buffer.from(buffered.subarray(offset + 4, offset + 4 + length))
      for (let index = 0; index < payload.length; index++) {
        payload[index] = (payload[index] as number) ^ (mask[index % 4] as number)
      }
      buffered = buffered.subarray(offset + 4 + length)

      if (opcode === OPCODE.close) {
        close(1000)
        return false
      }
      if (opcode === OPCODE.ping) {
        writeFrame(OPCODE.pong, payload)
        continue
      }
      if (opcode === OPCODE.pong) continue
      if (opcode === OPCODE.text || opcode === OPCODE.binary) fragments = [payload]
      else if (opcode === OPCODE.continuation && fragments) fragments.push(payload)
      else {
        close(1002)
        return false
      }
      const total = fragments.reduce((sum, part) => sum + part.length, 0)
      if (total > MAX_MESSAGE_BYTES) {
        close(1009)
        return false
      }
      if (fin) {
        const message = Buffer.concat(fragments).toString('utf8')
        fragments = undefined
        if (!closing) handlers.onMessage(message)
      }
    }
  }

  socket.on('data', (chunk: Buffer) => {
    if (closing) return
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
    drain()
  })
  socket.on('close', finish)
  socket.on('error', () => {
    socket.destroy()
    finish()
  })
  if (buffered.length > 0) queueMicrotask(drain)

  return {
    send: (text) => {
      if (!closing) writeFrame(OPCODE.text, Buffer.from(text, 'utf8'))
    },
    close,
  }
}
