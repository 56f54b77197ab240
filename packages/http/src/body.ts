import type { IncomingMessage } from 'node:http'
import { PontisError } from '@pontis/core'
import getRawBody from 'raw-body'

export interface ReadBodyOptions {
  readonly limitBytes: number
}

function isRawBodyError(error: unknown): error is Error & { type: string; limit?: number } {
  return error instanceof Error && typeof (error as { type?: unknown }).type === 'string'
}

/** Reads the whole body as UTF-8 text, refusing more than the limit with 413 before buffering it all. */
export async function readTextBody(req: IncomingMessage, options: ReadBodyOptions): Promise<string> {
  try {
    return await getRawBody(req, {
      limit: options.limitBytes,
      length: req.headers['content-length'],
      encoding: 'utf8',
    })
  } catch (error) {
    if (isRawBodyError(error) && error.type === 'entity.too.large') {
      throw new PontisError(
        'PAYLOAD_TOO_LARGE',
        `Request body is larger than the ${options.limitBytes} byte limit.`,
        { limitBytes: options.limitBytes },
      )
    }
    if (isRawBodyError(error) && error.type === 'encoding.unsupported') {
      throw new PontisError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be UTF-8 encoded JSON.')
    }
    if (isRawBodyError(error) && error.type === 'request.size.invalid') {
      throw new PontisError(
        'INVALID_REQUEST',
        'Request body length does not match its Content-Length header.',
      )
    }
    throw error
  }
}

/** Parses JSON text, answering 400 MALFORMED_JSON with the parser's position on failure. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new PontisError('MALFORMED_JSON', `Request body is not valid JSON: ${reason}`)
  }
}

/** True when the Content-Type header names JSON (application/json or a +json type), any parameters aside. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false
  const mediaType = header.split(';', 1)[0]!.trim().toLowerCase()
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType)
}
